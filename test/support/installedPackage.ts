// The package as a user gets it: `npm pack` run on a copy of this working tree (so its `prepack`
// builds `dist/` there, as on a fresh clone, without touching this tree's `dist/`), the tarball
// unpacked into `<app>/node_modules/rsop-engine`, and only its runtime `dependencies` linked next to
// it from this repo's node_modules. Dev dependencies are not reachable from the installed package.
//
// Test files share one build: the result is cached under the OS temp folder by a hash of the inputs,
// and a lock folder keeps parallel test files from building at the same time.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface InstalledPackage {
  /** A folder holding `node_modules/rsop-engine` and its runtime dependencies. */
  readonly app: string;
  /** `<app>/node_modules/rsop-engine`. */
  readonly pkg: string;
  /** The packed tarball. */
  readonly tarball: string;
  /** The paths `npm pack` put in the tarball, relative to the package root. */
  readonly files: readonly string[];
}

const INPUT_FILES = ["package.json", "package-lock.json", "tsup.config.ts", "tsconfig.json", "README.md", "LICENSE"];
const INPUT_DIRS = ["src", "docs", "examples"];

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

function inputsHash(): string {
  const h = createHash("sha1");
  const files = [...INPUT_FILES.map((f) => join(repoRoot, f)), ...INPUT_DIRS.flatMap((d) => walk(join(repoRoot, d)))]
    .filter((f) => existsSync(f))
    .sort();
  for (const f of files) h.update(f).update("\0").update(readFileSync(f)).update("\0");
  return h.digest("hex").slice(0, 16);
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function build(dir: string): InstalledPackage {
  const stage = join(dir, "stage");
  mkdirSync(stage, { recursive: true });
  for (const f of INPUT_FILES) if (existsSync(join(repoRoot, f))) cpSync(join(repoRoot, f), join(stage, f));
  for (const d of INPUT_DIRS) cpSync(join(repoRoot, d), join(stage, d), { recursive: true });
  symlinkSync(join(repoRoot, "node_modules"), join(stage, "node_modules"), "dir");
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", dir], {
    cwd: stage,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const report = JSON.parse(out.slice(out.indexOf("[\n"))) as { filename: string; files: { path: string }[] }[];
  const tarball = join(dir, report[0]!.filename);
  const app = join(dir, "app");
  const pkg = join(app, "node_modules", "rsop-engine");
  mkdirSync(pkg, { recursive: true });
  execFileSync("tar", ["xzf", tarball, "-C", pkg, "--strip-components=1"]);
  const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  for (const dep of Object.keys(manifest.dependencies ?? {})) {
    const link = join(app, "node_modules", dep);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules", dep), link, "dir");
  }
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  const result: InstalledPackage = { app, pkg, tarball, files: report[0]!.files.map((f) => f.path).sort() };
  writeFileSync(join(dir, "installed.json"), JSON.stringify(result));
  return result;
}

let cached: InstalledPackage | undefined;

/** Packs and installs this working tree once per change of its inputs (about 20 s the first time). */
export function installedPackage(): InstalledPackage {
  if (cached !== undefined) return cached;
  const dir = join(tmpdir(), `rsop-engine-pack-${inputsHash()}`);
  const done = join(dir, "installed.json");
  const lock = `${dir}.lock`;
  for (let waited = 0; !existsSync(done); waited += 200) {
    try {
      mkdirSync(lock);
    } catch {
      if (waited > 240_000) throw new Error(`waited 4 minutes for ${lock}; remove it if no test run is building`);
      sleep(200);
      continue;
    }
    try {
      if (!existsSync(done)) {
        rmSync(dir, { recursive: true, force: true });
        build(dir);
      }
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  cached = JSON.parse(readFileSync(done, "utf8")) as InstalledPackage;
  return cached;
}
