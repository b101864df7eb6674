import { defineConfig } from "tsup";

// @noble/hashes (SHA-1 of UUID v5 migration ids) is ESM-only and pure: it is bundled into dist, so
// the CJS entries need no require(esm) and users install nothing for it. Its MIT notice is in
// LICENSE (shipped) and named at the top of every output file.
const noExternal = ["@noble/hashes"];
const notice = "/*! rsop-engine (MIT); includes @noble/hashes (MIT, (c) 2022 Paul Miller), see LICENSE */";

export default defineConfig([
  {
    // The library entries (reports is for Node: csv-stringify uses Buffer; webhooks loads node:crypto; the other two no Node built-in). Splitting (both formats) puts the code they share in one chunk, so an
    // engine from `rsop-engine` and a handler from `rsop-engine/http` use the same classes.
    entry: { index: "src/index.ts", http: "src/http.ts", reports: "src/reports.ts", webhooks: "src/webhooks.ts" },
    format: ["esm", "cjs"],
    splitting: true,
    dts: true,
    sourcemap: true,
    target: "node20",
    noExternal,
    banner: { js: notice },
  },
  {
    entry: { cli: "src/adapters/cli/bin.ts" },
    format: ["esm"],
    sourcemap: true,
    target: "node20",
    noExternal,
    banner: { js: `#!/usr/bin/env node\n${notice}` },
  },
  {
    // The worker thread that reads and validates a changed snapshot for `rsop serve`, off the
    // server's event loop; startServer looks for it next to cli.js.
    // and the worker threads of `rsop decide --workers N` (decidePool.ts looks for it next to cli.js).
    entry: {
      "snapshot-worker": "src/adapters/http/snapshotWorker.ts",
      "decide-worker": "src/adapters/cli/decideWorker.ts",
    },
    format: ["esm"],
    sourcemap: true,
    target: "node20",
    noExternal,
    banner: { js: notice },
  },
]);
