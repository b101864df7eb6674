// `npm start`'s prestart: builds dist/ only when it is missing or older than what it is built from
// (src/, package.json, tsup.config.ts, tsconfig.json), so a second `npm start` starts at once and a
// fresh clone (`npm install && npm start`) still builds first.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const built = join(root, "dist", "cli.js");
const inputs = ["src", "package.json", "tsup.config.ts", "tsconfig.json"];

/** The newest modification time under `path` (a file or a folder, walked recursively). */
function newest(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return readdirSync(path).reduce((m, name) => Math.max(m, newest(join(path, name))), s.mtimeMs);
}

const sourceTime = Math.max(
  ...inputs
    .map((p) => join(root, p))
    .filter(existsSync)
    .map(newest),
);
if (!existsSync(built) || statSync(built).mtimeMs < sourceTime) {
  const r = spawnSync("npm", ["run", "-s", "build"], {
    cwd: root,
    stdio: "inherit",
    shell: process.platform === "win32",
  });
  process.exitCode = r.status ?? 1;
}
