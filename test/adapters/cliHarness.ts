import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { afterAll } from "vitest";
import { runCli } from "../../src/adapters/cli/main.js";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with captured output and an optional stdin text. */
export async function run(argv: string[], stdin = ""): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on("data", (b: Buffer) => out.push(b));
  stderr.on("data", (b: Buffer) => err.push(b));
  const code = await runCli(argv, { stdin: Readable.from([stdin]), stdout, stderr });
  return { code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") };
}

/**
 * A temp folder for one test file, removed after its tests: `file(name, content)` writes a file
 * there (JSON-encoding anything that is not a string) and returns its path.
 */
export function tempFiles(prefix: string): { dir: string; file: (name: string, content: unknown) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: unknown): string => {
    const p = join(dir, name);
    writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
    return p;
  };
  return { dir, file };
}

/**
 * Starts the CLI in-process with a stdin the test writes to while it runs: `nextLine()` resolves with
 * the next stdout line as soon as the CLI writes it; `done` resolves when the command returns.
 */
export function start(argv: string[]): { stdin: PassThrough; nextLine: () => Promise<string>; done: Promise<CliRun> } {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let buffered = "";
  const waiting: ((line: string) => void)[] = [];
  const ready: string[] = [];
  stdout.on("data", (b: Buffer) => {
    out.push(b);
    buffered += b.toString("utf8");
    for (let i = buffered.indexOf("\n"); i !== -1; i = buffered.indexOf("\n")) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      const w = waiting.shift();
      if (w) w(line);
      else ready.push(line);
    }
  });
  stderr.on("data", (b: Buffer) => err.push(b));
  const nextLine = () =>
    new Promise<string>((resolve) => (ready.length > 0 ? resolve(ready.shift()!) : waiting.push(resolve)));
  const done = runCli(argv, { stdin, stdout, stderr }).then((code) => ({
    code,
    stdout: Buffer.concat(out).toString("utf8"),
    stderr: Buffer.concat(err).toString("utf8"),
  }));
  return { stdin, nextLine, done };
}
