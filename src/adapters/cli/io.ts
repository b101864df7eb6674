// Where the CLI reads and writes, injectable so tests run commands in-process.
import { readFile } from "node:fs/promises";
import type { Readable, Writable } from "node:stream";
import { type Issue, formatPath } from "../../model/index.js";
import { jsonErrorText, parseJson } from "../jsonSyntax.js";

export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /**
   * Set by runCli: aborted when stdout or stderr is closed by its reader (EPIPE), so a command that
   * streams stops reading and writing.
   */
  readonly closed?: AbortSignal;
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

/**
 * True for the error a write gets when the reader of stdout or stderr went away (`rsop … | head`):
 * EPIPE, and the "write after destroy" that can follow it. The CLI then stops quietly with exit 0.
 */
export function isClosedStreamError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED" || code === "ERR_STREAM_WRITE_AFTER_END";
}

/**
 * Writes `text` and waits until it is handed to the system: false when the reader closed the stream,
 * so that a command can stop before writing anything more (to stdout or stderr).
 */
export function written(stream: Writable, text: string): Promise<boolean> {
  return new Promise((resolve) => {
    stream.write(text, (e) => resolve(e === undefined || e === null));
  });
}

/** The whole of a readable stream as UTF-8 text. */
export async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Reads and parses a JSON file (`-` is stdin), with a clear error for a missing file or bad JSON:
 * a syntax error gives its line and column, never the file's text; so does a document nested deeper
 * than JSON_MAX_DEPTH, with the path of the first value too deep (HJ1).
 */
export async function readJsonFile(path: string, what: string, io?: CliIo): Promise<unknown> {
  let text: string;
  if (path === "-") {
    if (io === undefined) throw new UsageError(`the ${what} cannot be read from stdin here`);
    text = await readAll(io.stdin);
  } else {
    try {
      text = await readFile(path, "utf8");
    } catch (e) {
      throw new CliError(`cannot read ${what} file "${path}": ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
  }
  const r = parseJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text); // a byte order mark is no content
  if (!r.ok) {
    // Deeper than JSON_MAX_DEPTH (HJ1) is named by its path as well; neither quotes the text.
    const why = r.path === undefined ? "is not valid JSON" : `is nested too deeply at ${formatPath(r.path)}`;
    throw new CliError(`${what} ${path === "-" ? "on stdin" : `file "${path}"`} ${why}: ${jsonErrorText(r)}`);
  }
  return r.value;
}

/** `path: message` per issue, one per line. */
export function issueLines(issues: readonly Issue[]): string {
  return issues.map((i) => `  ${formatPath(i.path)}: ${i.message}`).join("\n");
}
