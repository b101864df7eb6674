// Files the CLI cannot read or write (CE4): one line `rsop: <file>: <reason in words>`, exit 1 —
// never a bare ENOENT/EACCES/EISDIR, never "internal error" with a stack and exit 70.
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { run, tempFiles } from "./cliHarness.js";

const { dir, file } = tempFiles("rsop-cli-files-");
const SYSTEM = fileURLToPath(new URL("../../examples/building.json", import.meta.url));
const PANEL = fileURLToPath(new URL("../../examples/panel.json", import.meta.url));
const REQUEST = readFileSync(fileURLToPath(new URL("../../examples/requests.jsonl", import.meta.url)), "utf8").split(
  "\n",
)[0]!;
const OPS = file("ops.jsonl", '{"method":"POST","path":"/groups","body":{"name":"Night porters"}}\n');
const REGULAR = file("regular.txt", "x");
const FOLDER = join(dir, "folder");
mkdirSync(FOLDER);

/**
 * A file this process may not read: mode 000, unless it runs as root, which reads any file; then a
 * directory stands in for it (a file that cannot be read either way).
 */
const root = process.getuid?.() === 0;
const UNREADABLE = root ? FOLDER : file("unreadable.json", "{}");
if (!root) chmodSync(UNREADABLE, 0o000);
const UNREADABLE_WHY = root ? "is a directory" : "permission denied";

/** Each command with one input file option in it, as `FILE` (its other inputs valid). */
const INPUTS: readonly (readonly string[])[] = [
  ["validate", "--system", "FILE"],
  ["validate", "--panel", "FILE"],
  ["decide", "--system", SYSTEM, "--request", "FILE"],
  ["decide", "--system", "FILE"],
  ["apply", "--system", SYSTEM, "--ops", "FILE"],
  ["demo", "--system", SYSTEM, "--requests", "FILE"],
  ["explain", "--system", SYSTEM, "--request", "FILE"],
  ["diff", "--before", SYSTEM, "--after", "FILE"],
  ["picture", "--system", "FILE", "--holder", "holder-0001", "--out", "-"],
  ["rsop", "--system", "FILE", "--ids", "holder-0001"],
  ["report", "--system", "FILE"],
  ["preflight", "--panel", "FILE"],
  ["migrate", "--panel", "FILE", "--system-id", "s"],
  ["bench", "--system", "FILE"],
  ["serve", "--system", "FILE", "--token", "a-token-of-24-characters", "--port", "0"],
  ["serve", "--system", SYSTEM, "--tokens", "FILE", "--port", "0"],
];

const withFile = (argv: readonly string[], path: string) => argv.map((a) => (a === "FILE" ? path : a));

describe("an input file that cannot be read: `rsop: FILE: why`, exit 1 (CE4)", () => {
  test.each(INPUTS.map((argv) => [argv.join(" "), argv] as const))("%s", async (_, argv) => {
    for (const [path, why] of [
      [join(dir, "missing.json"), "no such file"],
      [FOLDER, "is a directory"],
      [UNREADABLE, UNREADABLE_WHY],
      [join(REGULAR, "x.json"), "a part of the path is not a directory"],
    ] as const) {
      const r = await run(withFile(argv, path), `${REQUEST}\n`);
      expect([r.code, r.stderr]).toEqual([1, `rsop: ${path}: ${why}\n`]);
    }
  });

  test("rsop decide --request missing.jsonl says why", async () => {
    const missing = join(dir, "missing.jsonl");
    const r = await run(["decide", "--system", SYSTEM, "--request", missing]);
    expect(r).toEqual({ code: 1, stdout: "", stderr: `rsop: ${missing}: no such file\n` });
  });
});

/** Each command with an --out, as `OUT`; the output is a file (migrate's a folder). */
const OUTPUTS: readonly (readonly string[])[] = [
  ["picture", "--system", SYSTEM, "--holder", "holder-0001", "--out", "OUT"],
  ["diff", "--before", SYSTEM, "--after", SYSTEM, "--out", "OUT"],
  ["diff", "--before", SYSTEM, "--after", SYSTEM, "--format", "html", "--out", "OUT"],
  ["apply", "--system", SYSTEM, "--ops", OPS, "--out", "OUT"],
  ["report", "--system", SYSTEM, "--format", "csv", "--out", "OUT"],
  ["report", "--system", SYSTEM, "--rsop", "--at", "2026-04-15T14:15:00Z", "--format", "html", "--out", "OUT"],
  ["migrate", "--panel", PANEL, "--system-id", "s", "--out", "OUT"],
];

describe("an --out that cannot be written: `rsop: FILE: why`, exit 1, never exit 70 (CE4)", () => {
  test.each(OUTPUTS.map((argv) => [argv.join(" "), argv] as const))("%s", async (_, argv) => {
    const migrate = argv[0] === "migrate";
    const cases: (readonly [string, string, string])[] = [
      // migrate makes its folder, missing parents too: a regular file in the way stops it.
      migrate
        ? [REGULAR, REGULAR, "is a file, not a directory"]
        : [join(dir, "no-such-dir", "out"), join(dir, "no-such-dir", "out"), "no such directory"],
      [join(REGULAR, "out"), join(REGULAR, "out"), "a part of the path is not a directory"],
      [FOLDER, migrate ? join(FOLDER, "system.json") : FOLDER, migrate ? "" : "is a directory"],
    ];
    for (const [out, named, why] of cases) {
      if (why === "") continue; // migrate writes into an existing folder: no error
      const r = await run(withFile(argv, "FILE").map((a) => (a === "OUT" ? out : a)));
      expect(r.code, r.stderr).toBe(1);
      // apply answers its operations on stdout before it writes --out; the error is the last line.
      expect(r.stderr.split("\n").filter((l) => l.startsWith("rsop: ") && !l.includes("refused"))).toEqual([
        `rsop: ${named}: ${why}`,
      ]);
      expect(r.stderr).not.toMatch(/internal error|\n\s+at |\bE[A-Z]{2,}\b/);
    }
    if (!migrate) expect(existsSync(join(dir, "no-such-dir"))).toBe(false);
  });
});
