// Where the CLI reads and writes, injectable so tests run commands in-process.
import { readFile } from "node:fs/promises";
import type { Readable, Writable } from "node:stream";
import { type Issue, formatPath } from "../../model/index.js";

export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** Raised by command code for an expected failure: the CLI prints the message and exits 1. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly issues: readonly Issue[] = [],
  ) {
    super(message);
  }
}

/** Raised for a usage error found by hand (a missing or malformed option): the CLI exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Reads and parses a JSON file, with a clear error for a missing file or bad JSON. */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw new CliError(`cannot read ${what} file "${path}": ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new CliError(`${what} file "${path}" is not valid JSON: ${(e as Error).message}`);
  }
}

/** `path: message` per issue, one per line. */
export function issueLines(issues: readonly Issue[]): string {
  return issues.map((i) => `  ${formatPath(i.path)}: ${i.message}`).join("\n");
}
