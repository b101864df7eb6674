// Every option of every command given a bad value (CE1–CE3): the exit code follows the one rule of
// EXIT_CODES_HELP (2 when the command line alone is wrong, 1 when what it names is refused), and
// the error is one `rsop: ` line (with the problems' paths indented under it for refused data, the
// "(run with --help for usage)" hint after a usage error), never a stack nor a bare errno code.
// The commands and their options come from the CLI itself (cliProgram, built by commander): a new
// command or option is walked too, and fails here until BAD (or BASE) says what is bad for it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Command, Option } from "commander";
import { describe, expect, test } from "vitest";
import { cliProgram } from "../../src/adapters/cli/main.js";
import { run, tempFiles } from "./cliHarness.js";

const { dir, file } = tempFiles("rsop-cli-options-");
const SYSTEM = fileURLToPath(new URL("../../examples/building.json", import.meta.url));
const PANEL = fileURLToPath(new URL("../../examples/panel.json", import.meta.url));
const REQUEST = readFileSync(fileURLToPath(new URL("../../examples/requests.jsonl", import.meta.url)), "utf8").split(
  "\n",
)[0]!;
const TOKEN = "a-token-of-24-characters";
const PASSWORD = "a password of some length";
/** A regular file: a path under it can be neither read nor written (ENOTDIR). */
const REGULAR = file("regular.txt", "x");
const MISSING = join(dir, "missing.json");
const UNWRITABLE = join(REGULAR, "out");
const OPS = file("ops.jsonl", '{"method":"POST","path":"/groups","body":{"name":"Night porters"}}\n');

/** What a bad value of an option is, and the exit code the rule gives it. */
interface Bad {
  readonly value: string;
  /** 2: the command line alone is wrong (usage); 1: what it names is refused. */
  readonly code: 1 | 2;
  /** Why the value is bad, for the test's name. */
  readonly why: string;
}

const fileIn: Bad = { value: MISSING, code: 1, why: "a file that does not exist" };
const fileOut: Bad = { value: UNWRITABLE, code: 1, why: "a file under a regular file" };
const unknownId: Bad = { value: "no-such-id", code: 1, why: "an id the snapshot lacks" };
const instant: Bad = { value: "yesterday", code: 2, why: "not an instant" };
const count: Bad = { value: "0", code: 2, why: "out of range" };

/**
 * The bad value of each option, by its long flag, or by "command flag" where a command reads the
 * flag otherwise. An option without an entry (and without commander choices) fails the walk. `null`:
 * free text with no malformed value (a name, a secret, a database URL tried only when it connects).
 */
const BAD: Readonly<Record<string, Bad | null>> = {
  "--system": fileIn,
  "--panel": fileIn,
  "--request": fileIn,
  "--requests": fileIn,
  "--ops": fileIn,
  "--before": fileIn,
  "--after": fileIn,
  "--tokens": fileIn,
  "--out": fileOut,
  "--data": { value: UNWRITABLE, code: 1, why: "a database under a regular file" },
  "--at": instant,
  "--from": instant,
  "--to": instant,
  "--week-of": { value: "2026-13-45", code: 2, why: "no such date" },
  "--workers": { value: "65", code: 2, why: "out of range" },
  "--seed-ids": { value: "-1", code: 2, why: "not a whole number" },
  "--step-hours": { value: "25", code: 2, why: "out of range" },
  "--ids": { value: " , ", code: 2, why: "no id" },
  "--holder": unknownId,
  "--device": unknownId,
  "--floor-group": unknownId,
  "--cloud-node": unknownId,
  "--filter": { value: "{", code: 2, why: "not JSON" },
  "--output": { value: "nope", code: 2, why: "an unknown property" },
  "report --partition": unknownId,
  "report --at": { value: "2026-04-15T14:15:00Z", code: 2, why: "belongs to --rsop reports" },
  "report --device": { value: "door-ward-3", code: 2, why: "belongs to --rsop reports" },
  "--system-id": null,
  "bench --requests": count,
  "--seconds": { value: "3601", code: 2, why: "out of range" },
  "--seed": { value: "x", code: 2, why: "not a number" },
  "--format": { value: "NOPE", code: 2, why: "an unknown card format" },
  "--facility-code": { value: "256", code: 2, why: "too large for the format" },
  "--card-number": { value: "-3", code: 2, why: "not a whole number" },
  "--bits": { value: "0101", code: 2, why: "not a frame of the format" },
  // The signature is the data under test (W14): anything but the matching value is "does not match".
  "--signature": { value: "not-hex", code: 1, why: "does not match" },
  "--secret": null,
  "--email": { value: "not an email", code: 2, why: "not an email address" },
  "--first-name": null,
  "--last-name": null,
  "--name": null,
  "--organization": unknownId,
  "--redirect-uri": { value: "ftp://x", code: 2, why: "neither https nor loopback http" },
  "--store": { value: "mysql://x", code: 2, why: "not a PostgreSQL URL" },
  "serve --system": fileIn,
  "serve --panel": { value: PANEL, code: 2, why: "needs --data" },
  "serve --token": { value: "two words", code: 2, why: "not a bearer token" },
  "--port": { value: "65536", code: 2, why: "out of range" },
  "--host": null,
  "--base-path": null,
  "--max-body": { value: "lots", code: 2, why: "not a size" },
  "--memory-budget": { value: "lots", code: 2, why: "not a size" },
  "--public-url": { value: "example.com", code: 2, why: "not an origin" },
  "--smtp": { value: "http://x", code: 2, why: "not an SMTP URL" },
  "--organization-id": { value: "", code: 2, why: "empty" },
  "--webhook-allow": { value: "not-a-cidr", code: 2, why: "not a CIDR" },
};
// The serve limits: positive integers (HC5) or sizes.
for (const flag of [
  "--snapshot-every",
  "--max-report-entries",
  "--max-preview-cost",
  "--max-preview-changes",
  "--max-batch",
  "--max-reports",
  "--max-report-generations",
  "--request-timeout",
  "--headers-timeout",
  "--keep-alive-timeout",
  "--max-connections",
  "--max-connections-per-address",
  "--webhook-attempts",
  "--webhook-backoff",
  "--webhook-timeout",
  "--webhook-backlog",
])
  (BAD as Record<string, Bad>)[`serve ${flag}`] = count;
(BAD as Record<string, Bad>)["serve --max-report-bytes"] = { value: "lots", code: 2, why: "not a size" };

/** A valid command line of each command, the bad option put into it; `drop`: what the option replaces. */
interface Base {
  readonly argv: readonly string[];
  readonly stdin?: string;
  /** Options that exclude the one under test: removed from argv first (--panel replaces --system). */
  readonly drop?: Readonly<Record<string, string>>;
  /** Options the one under test needs changed (1.0 person ids with --panel). */
  readonly also?: Readonly<Record<string, readonly string[]>>;
}

const DB = join(dir, "service.db");
const PICTURE = join(dir, "picture.html");
const BASE: Readonly<Record<string, Base>> = {
  validate: { argv: ["--system", SYSTEM] },
  decide: { argv: ["--system", SYSTEM], stdin: `${REQUEST}\n` },
  apply: { argv: ["--system", SYSTEM, "--ops", OPS] },
  demo: { argv: [] },
  explain: { argv: ["--system", SYSTEM, "--request", REQUEST] },
  diff: { argv: ["--before", SYSTEM, "--after", SYSTEM, "--from", "2026-04-13T05:00:00Z"] },
  picture: {
    argv: ["--system", SYSTEM, "--holder", "holder-0001", "--out", PICTURE],
    drop: { "--device": "--holder" },
  },
  rsop: {
    argv: ["--system", SYSTEM, "--ids", "holder-0001", "--at", "2026-04-15T14:15:00Z"],
    also: { "--panel": ["--ids", "1"] },
  },
  who: { argv: ["--system", SYSTEM, "--device", "door-ward-3"], drop: { "--floor-group": "--device" } },
  windows: {
    argv: [
      "--system",
      SYSTEM,
      "--holder",
      "holder-0001",
      "--device",
      "door-ward-3",
      "--from",
      "2026-04-13T05:00:00Z",
      "--to",
      "2026-04-14T05:00:00Z",
    ],
  },
  report: { argv: ["--system", SYSTEM] },
  preflight: { argv: ["--panel", PANEL] },
  migrate: { argv: ["--panel", PANEL, "--system-id", "system-1"] },
  "card encode": { argv: ["--format", "H10301", "--facility-code", "17", "--card-number", "10234"] },
  "card decode": { argv: ["--format", "H10301", "--bits", "0".repeat(26)] },
  "card formats": { argv: [] },
  bench: { argv: ["--system", SYSTEM, "--seconds", "0.01", "--requests", "10"] },
  // A bad value stops serve before it listens; a value that passed would leave it serving (the test times out).
  serve: { argv: ["--system", SYSTEM, "--token", TOKEN, "--port", "0"], drop: { "--store": "--data" } },
  "webhook verify": { argv: ["--secret", "s3cret", "--signature", "0".repeat(40)], stdin: "{}" },
  "users add": { argv: ["--data", DB, "--email", "ada@example.test"], stdin: PASSWORD, drop: { "--store": "--data" } },
  "apps add": {
    argv: ["--data", DB, "--name", "App", "--email", "app@example.test"],
    drop: { "--store": "--data" },
  },
  "keys rotate": { argv: ["--data", DB], drop: { "--store": "--data" } },
};
/** Commands whose options another test owns: `rsop node` talks to a running service (test/node/nodeCommand.test.ts). */
const ELSEWHERE = new Set(["node"]);
// Alternatives of one input: --panel replaces --system wherever both are options.
const SWAPS: Readonly<Record<string, string>> = { "--panel": "--system", "--system": "--panel" };

function leaves(command: Command, path: readonly string[] = []): { path: string[]; command: Command }[] {
  return command.commands.flatMap((c) => {
    const here = [...path, c.name()];
    return c.commands.length === 0 ? [{ path: here, command: c }] : leaves(c, here);
  });
}

/** The bad value of an option of a command: commander's choices, else BAD; undefined when none is known. */
function badValue(command: string, option: Option): Bad | null | undefined {
  const flag = option.long!;
  if (option.argChoices !== undefined) return { value: "no-such-choice", code: 2, why: "not one of the choices" };
  const specific = BAD[`${command} ${flag}`];
  return specific !== undefined ? specific : BAD[flag];
}

/** The base command line with `flag value` in place of what it replaces. */
function argvWith(path: readonly string[], base: Base, flag: string, value: string): string[] {
  const argv = [...base.argv];
  const also = base.also?.[flag] ?? [];
  const drop = [flag, base.drop?.[flag], SWAPS[flag], also[0]].filter((f): f is string => f !== undefined);
  for (const f of drop) {
    const i = argv.indexOf(f);
    if (i !== -1) argv.splice(i, 2);
  }
  return [...path, ...argv, ...also, flag, value];
}

const sink = new PassThrough();
const program = await cliProgram({ stdin: Readable.from([]), stdout: sink, stderr: sink });
const commands = leaves(program).filter((c) => !ELSEWHERE.has(c.path[0]!));
const cases = commands.flatMap(({ path, command }) =>
  command.options
    .filter((o) => o.required || o.optional)
    .map((option) => ({ name: path.join(" "), path, flag: option.long!, bad: badValue(path.join(" "), option) })),
);

/** One error line `rsop: …`, the problems' paths indented under it, the usage hint after a usage error. */
function expectOneError(stderr: string, code: number): void {
  const lines = stderr.trimEnd().split("\n");
  expect(lines[0]).toMatch(/^rsop: \S/);
  if (code === 2) expect(lines.at(-1)).toBe("(run with --help for usage)");
  const middle = lines.slice(1, code === 2 ? -1 : undefined);
  for (const l of middle) expect(l).toMatch(/^ {2}\S/);
  expect(stderr).not.toMatch(/\n\s+at /); // no stack
  expect(stderr).not.toMatch(/\bE[A-Z]{2,}\b(?!\w)/); // no bare errno code (ENOENT, EACCES, EISDIR…)
  expect(stderr).not.toMatch(/internal error|^error:/m);
}

describe("every command and option from the CLI itself (CE1–CE3)", () => {
  test("the walk finds the commands --help lists, each with a valid base command line", () => {
    const names = commands.map((c) => c.path.join(" "));
    expect(names).toEqual(expect.arrayContaining(["validate", "decide", "picture", "diff", "migrate", "apply"]));
    const missing = names.filter((n) => BASE[n] === undefined);
    expect(missing, "add a valid command line for each to BASE").toEqual([]);
  });

  test("every option taking a value has a bad value (or is free text)", () => {
    const unknown = cases.filter((c) => c.bad === undefined).map((c) => `${c.name} ${c.flag}`);
    expect(unknown, "add a bad value of each to BAD, or null for free text").toEqual([]);
  });

  test.each(cases.filter((c) => c.bad !== null && c.bad !== undefined))(
    "$name $flag",
    async ({ name, path, flag, bad }) => {
      const base = BASE[name]!;
      const r = await run(argvWith(path, base, flag, bad!.value), base.stdin ?? "");
      expect({ code: r.code, why: bad!.why }, r.stderr).toEqual({ code: bad!.code, why: bad!.why });
      expectOneError(r.stderr, r.code);
    },
    30_000,
  );

  test("commander's own errors say rsop: too (an unknown option, a missing value, a bad choice)", async () => {
    for (const argv of [
      ["validate", "--sistem", SYSTEM],
      ["validate", "--system"],
      ["diff", "--before", SYSTEM, "--after", SYSTEM, "--format", "pdf"],
      ["nope"],
    ]) {
      const r = await run(argv);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^rsop: [^\n]+\n(\(Did you mean [^\n]+\?\)\n)?\(run with --help for usage\)\n$/);
    }
  });
});
