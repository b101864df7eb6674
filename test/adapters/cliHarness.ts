import { PassThrough, Readable } from "node:stream";
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
