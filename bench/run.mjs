#!/usr/bin/env node
// Entry of `npm run bench`: builds dist/ when it is missing or older than src/ (the CLI scenario runs
// the built `dist/cli.js`), bundles bench/main.ts with tsup (esbuild, target node20 like the package
// build) into node_modules/.cache/rsop-bench/, and runs it with the given arguments.
//
//   npm run bench [-- --quick] [-- --only decide,rsop] [-- --sizes S,M] [-- --profile] [-- --markdown] [-- --out FILE]
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);

function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const cli = join(root, "dist", "cli.js");
if (!existsSync(cli) || statSync(cli).mtimeMs < newest(join(root, "src"))) {
  process.stderr.write("bench: building dist/ (npm run build)\n");
  const b = spawnSync("npm", ["run", "-s", "build"], { stdio: "inherit", shell: process.platform === "win32" });
  if (b.status !== 0) process.exit(b.status ?? 1);
}

const outDir = join(root, "node_modules", ".cache", "rsop-bench");
const { build } = await import("tsup");
await build({
  entry: { main: "bench/main.ts" },
  outDir,
  format: ["esm"],
  platform: "node",
  target: "node20",
  // Packages stay in node_modules (the cedar-wasm package loads its .wasm next to itself).
  skipNodeModulesBundle: true,
  sourcemap: true,
  clean: true,
  dts: false,
  config: false,
  silent: true,
});

const r = spawnSync(process.execPath, [join(outDir, "main.js"), ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(r.status ?? 1);
