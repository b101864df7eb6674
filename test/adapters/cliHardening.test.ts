// Issue 12, "Streams and the CLI" (in-process part): how `rsop decide` reads its input and shapes its
// answers, the exit codes of hand-checked usage errors, `-` for stdin, the wrong kind of snapshot,
// JSON syntax errors without input text, and `migrate --verbose`. The real-process part (closed
// pipes) is in cliPipes.test.ts.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Writable } from "node:stream";
import { Readable } from "node:stream";
import { describe, expect, test } from "vitest";
import { runCli } from "../../src/adapters/cli/main.js";
import { run, start, tempFiles } from "./cliHarness.js";

const { file } = tempFiles("rsop-cli-hardening-");
const SYSTEM = fileURLToPath(new URL("../../examples/building.json", import.meta.url));
const PANEL = fileURLToPath(new URL("../../examples/panel.json", import.meta.url));
const REQUEST = readFileSync(fileURLToPath(new URL("../../examples/requests.jsonl", import.meta.url)), "utf8").split(
  "\n",
)[0]!;
const PIN = "824613";
const BROKEN = `{"deviceId": "door-ward-3", "pin": "${PIN}", oops`;
const lines = (stdout: string) =>
  stdout
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("rsop decide: input mode", () => {
  test("a broken first line gets one error line and every later line its decision", async () => {
    const n = 5000;
    const r = await run(["decide", "--system", SYSTEM], `${BROKEN}\n${`${REQUEST}\n`.repeat(n - 1)}`);
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out).toHaveLength(n);
    expect(out[0]).toEqual({
      line: 1,
      error: { message: "invalid JSON at column 46: expected a double-quoted property name", issues: [] },
    });
    expect(out.slice(1).every((o, i) => o.line === i + 2 && o.reason === "allowed")).toBe(true);
  });

  test("a broken first line does not hold back the answers: each comes out while stdin is still open", async () => {
    const cli = start(["decide", "--system", SYSTEM]);
    cli.stdin.write(`${BROKEN}\n`);
    cli.stdin.write(`${REQUEST}\n`);
    expect(JSON.parse(await cli.nextLine())).toMatchObject({
      line: 1,
      error: { message: expect.stringMatching(/^invalid JSON/) },
    });
    expect(JSON.parse(await cli.nextLine())).toMatchObject({ line: 2, reason: "allowed" });
    cli.stdin.write(`${REQUEST}\n`);
    expect(JSON.parse(await cli.nextLine())).toMatchObject({ line: 3, reason: "allowed" });
    cli.stdin.end();
    expect((await cli.done).code).toBe(1);
  });

  test("the look-ahead for a document is bounded: past 1 MiB of lines that are not objects, the lines are answered", async () => {
    const cli = start(["decide", "--system", SYSTEM]);
    cli.stdin.write(`{\n${"12345678\n".repeat(120_000)}`); // 1,080,002 characters, stdin left open
    expect(JSON.parse(await cli.nextLine())).toEqual({
      line: 1,
      error: { message: "invalid JSON at column 2: unexpected end of input", issues: [] },
    });
    expect(JSON.parse(await cli.nextLine())).toEqual({
      line: 2,
      error: { message: "invalid request", issues: [{ path: "(root)", message: expect.any(String) }] },
    });
    cli.stdin.end();
    expect((await cli.done).code).toBe(1);
  });

  test("a byte order mark before the first line or a snapshot is no content", async () => {
    const r = await run(["decide", "--system", SYSTEM], `\ufeff${REQUEST}\n`);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([expect.objectContaining({ line: 1, reason: "allowed" })]);
    expect((await run(["validate", "--system", file("bom.json", `\ufeff${readFileSync(SYSTEM, "utf8")}`)])).code).toBe(
      0,
    );
  });

  test("a request file that cannot be read is a clear error, exit 1", async () => {
    const { dir } = tempFiles("rsop-cli-dir-");
    expect(await run(["decide", "--system", SYSTEM, "--request", dir])).toMatchObject({
      code: 1,
      stderr: `rsop: ${dir}: is a directory\n`, // CE4: the reason in words, never EISDIR
    });
  });

  test("JSON Lines stream: the first answer comes out before stdin is closed", async () => {
    const cli = start(["decide", "--system", SYSTEM]);
    cli.stdin.write(`${REQUEST}\n`);
    expect(JSON.parse(await cli.nextLine())).toMatchObject({ line: 1, outcome: "allowed" });
    cli.stdin.end(`${REQUEST}\n`);
    expect(await cli.done).toMatchObject({ code: 0, stderr: "" });
  });

  test("a pretty-printed request is one document (auto), as with --format json", async () => {
    const pretty = JSON.stringify(JSON.parse(REQUEST), null, 2);
    for (const args of [[], ["--format", "json"]]) {
      const r = await run(["decide", "--system", SYSTEM, ...args], `\n${pretty}\n`);
      expect(r.code).toBe(0);
      expect(lines(r.stdout)).toEqual([expect.objectContaining({ line: 2, outcome: "allowed" })]);
    }
    // --format jsonl reads it as lines: none of them is a request on its own.
    const jsonl = await run(["decide", "--system", SYSTEM, "--format", "jsonl"], pretty);
    expect(jsonl.code).toBe(1);
    expect(lines(jsonl.stdout)).toHaveLength(pretty.split("\n").length);
  });

  test("--format json: a syntax error gives its line and column in the document", async () => {
    const r = await run(
      ["decide", "--system", SYSTEM, "--format", "json"],
      `{\n  "deviceId": "d1",\n  "pin": "${PIN}",\n  "at": tru\n}\n`,
    );
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual([
      { line: 1, error: { message: "invalid JSON at line 4, column 12: expected a value", issues: [] } },
    ]);
    expect(`${r.stdout}${r.stderr}`).not.toContain(PIN);
    expect((await run(["decide", "--system", SYSTEM, "--format", "yaml"], "")).code).toBe(2);
  });

  test("blank lines get no answer and every answer carries its input line number", async () => {
    const input = ["", REQUEST, "   ", "", '{"deviceId": "door-ward-3"}', REQUEST, "\t"].join("\n");
    const r = await run(["decide", "--system", SYSTEM], `${input}\n`);
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out.map((o) => o.line)).toEqual([2, 5, 6]);
    expect(out[0]).toMatchObject({ line: 2, reason: "allowed" });
    expect(out[1]).toEqual({
      line: 5,
      error: {
        message: "invalid request",
        issues: [
          { path: "at", message: expect.any(String) },
          { path: "(root)", message: expect.any(String) },
        ],
      },
    });
    expect(Object.keys(out[2]!)[0]).toBe("line");
  });

  test("a syntax error in a line never echoes its text (a PIN stays out of stdout and stderr)", async () => {
    const r = await run(
      ["decide", "--system", SYSTEM],
      `${REQUEST}\n{"deviceId": "door-ward-3", "at": 0, "pin": "${PIN}" "x"}\n`,
    );
    expect(r.code).toBe(1);
    expect(lines(r.stdout)[1]).toEqual({
      line: 2,
      error: { message: "invalid JSON at column 54: expected ',' or '}' after a property value", issues: [] },
    });
    expect(r.stderr).toContain("line 2: invalid JSON at column 54");
    expect(`${r.stdout}${r.stderr}`).not.toContain(PIN);
  });

  test("--help says how input is read, that blank lines are skipped, and the exit codes", async () => {
    const r = await run(["decide", "--help"]);
    expect(r.stdout).toContain("--format <format>");
    expect(r.stdout).toContain("Blank lines are skipped");
    expect(r.stdout).toContain('each starting with "line"');
    expect(r.stdout).toMatch(/Exit codes: 0 .*; 1 .*; 2 usage error; 70 internal error/s);
    expect((await run(["--help"])).stdout).toMatch(
      /Exit codes:\n +0 +ok[\s\S]*\n +1 +invalid data[\s\S]*\n +2 +usage error[\s\S]*\n +70 +internal error/,
    );
  });
});

describe("exit codes: usage errors found by hand are 2, like commander's", () => {
  test.each([
    ["validate with no file", ["validate"]],
    ["validate with both", ["validate", "--system", SYSTEM, "--panel", PANEL]],
    ["decide with no file", ["decide"]],
    ["rsop with no file", ["rsop", "--ids", "a"]],
    ["who without --device or --floor-group", ["who", "--system", SYSTEM]],
    ["who with both", ["who", "--system", SYSTEM, "--device", "a", "--floor-group", "b"]],
    ["a malformed --at", ["rsop", "--system", SYSTEM, "--ids", "holder-0001", "--at", "yesterday"]],
    [
      "a malformed --from",
      [
        "windows",
        "--system",
        SYSTEM,
        "--holder",
        "h",
        "--device",
        "d",
        "--from",
        "2026-04-15",
        "--to",
        "2026-04-16T00:00:00Z",
      ],
    ],
    ["no ids", ["rsop", "--system", SYSTEM, "--ids", " , "]],
    ["1.0 person ids that are not integers", ["rsop", "--panel", PANEL, "--ids", "x1"]],
    ["stdin for both the snapshot and the requests", ["decide", "--system", "-"]],
    ["a missing required option (commander)", ["windows", "--system", SYSTEM]],
    ["an unknown option (commander)", ["validate", "--sistem", SYSTEM]],
  ])("%s", async (_, argv) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^rsop: /); // CE2: commander's errors too
    expect(r.stderr).not.toMatch(/\n +at /); // no stack trace
  });

  test("invalid data is 1: unknown ids, a refused snapshot", async () => {
    expect((await run(["rsop", "--system", SYSTEM, "--ids", "nobody", "--at", "2026-04-15T14:15:00Z"])).code).toBe(1);
    expect((await run(["validate", "--system", file("bad.json", { format: "rsop-system/1" })])).code).toBe(1);
  });
});

describe("snapshots: - is stdin, the wrong kind is named, syntax errors have a position", () => {
  const building = readFileSync(SYSTEM, "utf8");

  test("--system - and --panel - read stdin", async () => {
    expect(await run(["validate", "--system", "-"], building)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^valid: system 3b6f2c1a-/),
    });
    expect(await run(["validate", "--panel", "-"], readFileSync(PANEL, "utf8"))).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^valid: system panel:/),
    });
    const r = await run(["decide", "--system", "-", "--request", file("one.jsonl", `${REQUEST}\n`)], building);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([expect.objectContaining({ line: 1, reason: "allowed" })]);
  });

  test("a 1.0 panel given to --system (and a system to --panel) says which option to use", async () => {
    for (const argv of [
      ["validate", "--system", PANEL],
      ["decide", "--system", PANEL],
      ["rsop", "--system", PANEL, "--ids", "1"],
      ["who", "--system", PANEL, "--device", "1"],
    ]) {
      const r = await run(argv, "");
      expect(r).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("this is a 1.0 panel snapshot: use --panel"),
      });
    }
    for (const argv of [
      ["validate", "--panel", SYSTEM],
      ["preflight", "--panel", SYSTEM],
      ["migrate", "--panel", SYSTEM, "--system-id", "s"],
    ]) {
      const r = await run(argv);
      expect(r).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("this is a 2.0 system snapshot: use --system"),
      });
    }
  });

  test("a JSON syntax error gives line and column and never the file's text", async () => {
    const text = `{\n  "format": "rsop-system/1",\n  "holders": [{ "pin": "${PIN}" "id": "h" }]\n}\n`;
    const r = await run(["validate", "--system", file("broken.json", text)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `rsop: system file "${file("broken.json", text)}" is not valid JSON: line 3, column 33: expected ',' or '}' after a property value\n`,
    );
    const stdin = await run(["validate", "--system", "-"], text);
    expect(stdin).toMatchObject({
      code: 1,
      stderr:
        "rsop: system on stdin is not valid JSON: line 3, column 33: expected ',' or '}' after a property value\n",
    });
  });
});

describe("rsop migrate", () => {
  const args = ["migrate", "--panel", PANEL, "--system-id", "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90"];

  test("lists the dropped fields only with --verbose; the count always", async () => {
    const quiet = await run(args);
    expect(quiet.code).toBe(0);
    expect(JSON.parse(quiet.stdout).dropped).toHaveLength(39);
    expect(quiet.stderr).toBe('39 dropped fields reported (in "dropped"; --verbose lists them here)\n');
    const verbose = await run([...args, "--verbose"]);
    expect(verbose.stdout).toBe(quiet.stdout);
    const err = verbose.stderr.trimEnd().split("\n");
    expect(err.filter((l) => l.startsWith("dropped: "))).toHaveLength(39);
    expect(err.at(-1)).toBe('39 dropped fields reported (in "dropped")');
  });
});

describe("a closed output stream, in-process", () => {
  /** A stdout whose reader has gone: every write fails with EPIPE, as a socket's would. */
  const closedPipe = () =>
    new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error("write EPIPE"), { code: "EPIPE", errno: -32, syscall: "write" }));
      },
    });

  test.each([[["demo"]], [["decide", "--system", SYSTEM]], [["rsop", "--system", SYSTEM, "--ids", "holder-0001"]]])(
    "%j returns 0 quietly",
    async (argv) => {
      const err: string[] = [];
      const stderr = new Writable({ write: (c, _e, cb) => (err.push(String(c)), cb()) });
      const stdin = Readable.from([`${REQUEST}\n`.repeat(10_000)]);
      expect(await runCli(argv, { stdin, stdout: closedPipe(), stderr })).toBe(0);
      expect(err.join("")).toBe("");
    },
  );

  test("a stdout that fails otherwise (not EPIPE) is exit 70 with a sentence", async () => {
    const err: string[] = [];
    const stderr = new Writable({ write: (c, _e, cb) => (err.push(String(c)), cb()) });
    const stdout = new Writable({
      write: (_c, _e, cb) => cb(Object.assign(new Error("no space left on device"), { code: "ENOSPC" })),
    });
    expect(await runCli(["demo"], { stdin: Readable.from([]), stdout, stderr })).toBe(70);
    expect(err.join("")).toBe("rsop: cannot write the output: no space left on the device\n"); // CE4
  });
});

describe("rsop demo --requests", () => {
  test("a broken requests file is a clear error (exit 1): its line and column, not its text, and no stack trace", async () => {
    const r = await run([
      "demo",
      "--requests",
      file("bad-demo.jsonl", `${REQUEST}\n{"deviceId": "door-ward-3", "pin": "${PIN}" x}\n`),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `rsop: requests file "${file("bad-demo.jsonl", `${REQUEST}\n{"deviceId": "door-ward-3", "pin": "${PIN}" x}\n`)}", line 2: invalid JSON at column 45: expected ',' or '}' after a property value\n`,
    );
    const notObject = await run(["demo", "--requests", file("bad-demo2.jsonl", `${REQUEST}\n7\n`)]);
    expect(notObject).toMatchObject({ code: 1, stderr: expect.stringContaining("line 2: a request is a JSON object") });
  });

  test("a first request with a malformed instant is shown as refused, and the RSOP is left out", async () => {
    const r = await run([
      "demo",
      "--requests",
      file("bad-at.jsonl", '{"deviceId": "door-ward-3", "at": "now", "pin": "1"}\n'),
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("→ DENIED (badRequest)");
    expect(r.stdout).not.toContain("RSOP of");
  });
});
