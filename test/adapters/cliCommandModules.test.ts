// The CLI imports a command's module only when that command runs (main.ts, COMMANDS): help and an
// unknown command still see every command, in the order they were always listed, and a command
// named first runs exactly as before.
import { describe, expect, test } from "vitest";
import { run } from "./cliHarness.js";

const ORDER = [
  "validate",
  "decide",
  "apply",
  "demo",
  "explain",
  "diff",
  "picture",
  "rsop",
  "who",
  "windows",
  "report",
  "preflight",
  "migrate",
  "card",
  "bench",
  "serve",
  "node",
  "webhook",
  "users",
  "apps",
  "keys",
  "help",
];

/** The command names of a --help text, in order. */
function commandsOf(help: string): string[] {
  const section = help.slice(help.indexOf("Commands:"));
  return [...section.matchAll(/^ {2}([a-z]+)[ [<]/gm)].map((m) => m[1]!);
}

describe("commands loaded on demand", () => {
  test("--help, help and no command list every command in the same order", async () => {
    for (const argv of [["--help"], ["help"], []]) {
      const r = await run(argv);
      expect(commandsOf(argv.length === 0 ? r.stderr || r.stdout : r.stdout)).toEqual(ORDER);
    }
  });

  test("--version prints the version alone", async () => {
    const r = await run(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  test("a misspelt command is answered with the command it resembles", async () => {
    const r = await run(["decid"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("(Did you mean decide?)");
  });

  test("a command named first sees only its own options; another command's is unknown to it", async () => {
    const r = await run(["decide", "--ops", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--ops'");
  });
});
