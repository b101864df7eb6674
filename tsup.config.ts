import { defineConfig } from "tsup";

// @noble/hashes (SHA-1 of UUID v5 migration ids) is ESM-only and pure: it is bundled into dist, so
// the CJS entries need no require(esm) and users install nothing for it. Its MIT notice is in
// LICENSE (shipped) and named at the top of every output file.
const noExternal = ["@noble/hashes"];
const notice = "/*! rsop-engine (MIT); includes @noble/hashes (MIT, (c) 2022 Paul Miller), see LICENSE */";

// Internal fields end in `_` so the build shortens them (about 1% of dist); public and serialized
// shapes never use the suffix, and the .d.ts files leave them out (`@internal` + stripInternal). One
// build names them alike in every entry, chunk and worker; the ESM and CJS builds name them apart,
// which is safe because an object of one format reaches the other only through public members
// (package.test.ts runs the HTTP handler of one format on the other's engine).
const esbuildOptions = (options: { mangleProps?: RegExp }) => {
  options.mangleProps = /_$/;
};

// The library entries. reports is for Node (csv-stringify uses Buffer), webhooks loads node:crypto,
// node (the cloud node runtime) node:crypto, node:net and node:fs; index and http load no Node built-in.
const library = {
  index: "src/index.ts",
  http: "src/http.ts",
  reports: "src/reports.ts",
  webhooks: "src/webhooks.ts",
  node: "src/node.ts",
};

// No source maps: they would double the tarball (4.9 MB of maps for 2.0 MB of code) for stack
// traces of bundled code that users do not debug; a bug report names the function, not the line.
export default defineConfig([
  {
    // ESM: the library, the `rsop` binary and its two worker threads in one build. Splitting puts
    // the code several entries share in chunks, so cli.js and the workers import the library's
    // chunks instead of carrying copies of it, and an engine from `rsop-engine` and a handler from
    // `rsop-engine/http` use the same classes. A chunk holds only modules that every entry importing
    // it reaches, so the chunks of index and http stay free of the CLI's Node built-ins. cli.js keeps
    // its entry's `#!` line above the banner. The workers: `rsop serve` reads and validates a
    // changed snapshot in snapshot-worker.js (startServer looks for it next to cli.js), and
    // `rsop decide --workers N` runs decide-worker.js (decidePool.ts looks for it there too).
    entry: {
      ...library,
      cli: "src/adapters/cli/bin.ts",
      "snapshot-worker": "src/adapters/http/snapshotWorker.ts",
      "decide-worker": "src/adapters/cli/decideWorker.ts",
    },
    format: ["esm"],
    splitting: true,
    dts: { entry: library },
    sourcemap: false,
    target: "node20",
    noExternal,
    esbuildOptions,
    banner: { js: notice },
  },
  {
    // CJS: the library entries only (the binary and the workers are ESM); splitting shares their
    // code here too.
    entry: library,
    format: ["cjs"],
    splitting: true,
    dts: { entry: library },
    sourcemap: false,
    target: "node20",
    noExternal,
    esbuildOptions,
    banner: { js: notice },
  },
]);
