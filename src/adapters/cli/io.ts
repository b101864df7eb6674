// Where the CLI reads and writes, injectable so tests run commands in-process.
import { type FileHandle, open, readFile, writeFile } from "node:fs/promises";
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

/**
 * Raised for a usage error found by hand: what the command line alone shows is wrong (a missing,
 * malformed or out-of-range option value, options that contradict). The CLI exits 2.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    message: string,
    readonly issues: readonly Issue[] = [],
  ) {
    super(message);
  }
}

/** The codes of a query's issues that name something the snapshot lacks: the data decides, not the command line. */
const DATA_ISSUE_CODES: ReadonlySet<string> = new Set(["unknownId", "unknownReference"]);

/**
 * The error of a query or report refused for `issues` built from the command's options: exit 1
 * when every issue names something the snapshot lacks (an unknown id), exit 2 (usage) when any
 * value is malformed or out of range, which the command line alone shows. `options` names the
 * option each issue's first path segment comes from (`to` → `--to`); one usage issue is one line.
 */
export function queryRefusal(
  what: string,
  issues: readonly Issue[],
  options: Readonly<Record<string, string>> = {},
): Error {
  if (issues.every((i) => DATA_ISSUE_CODES.has(i.code))) return new CliError(what, issues);
  const named = issues.map((i) => {
    const first = i.path[0];
    const option = typeof first === "string" ? options[first] : undefined;
    return option === undefined ? i : { ...i, path: [option, ...i.path.slice(1)] };
  });
  if (named.length === 1) return new UsageError(`${formatPath(named[0]!.path)}: ${named[0]!.message}`);
  return new UsageError(what, named);
}

/** What a failed file operation's code means, in words (an errno code alone says little to most readers). */
const ERRNO_WORDS: Readonly<Record<string, string>> = {
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "is a directory",
  ENOTDIR: "a part of the path is not a directory",
  EEXIST: "already exists",
  EROFS: "read-only file system",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EFBIG: "the file is too large",
  EMFILE: "too many open files",
  ENFILE: "too many open files in the system",
  ENAMETOOLONG: "the name is too long",
  ELOOP: "too many levels of symbolic links",
  EBUSY: "the file is busy",
  ETXTBSY: "the file is busy",
  EIO: "input/output error",
  ENXIO: "no such device",
  ENODEV: "no such device",
  EAGAIN: "temporarily unavailable, try again",
  EINVAL: "not a valid argument for this file",
};

/**
 * Why a file operation failed, in words, never a bare errno code: "no such file" when reading,
 * "no such directory" when writing (the folder to write in is missing), "no such file or
 * directory" when not known which; other codes by the table above, or the system's own
 * description of it.
 */
export function errnoWords(e: unknown, writing?: boolean): string {
  const err = e as NodeJS.ErrnoException | null;
  const code = err?.code;
  if (code === "ENOENT")
    return writing === undefined ? "no such file or directory" : writing ? "no such directory" : "no such file";
  const words = code !== undefined ? ERRNO_WORDS[code] : undefined;
  if (words !== undefined) return words;
  // Node's message is "CODE: description, syscall 'path'": the description is the words.
  const message = err?.message ?? String(e);
  return /^[A-Z0-9_]+: (.*?)(, \w+ '.*')?$/s.exec(message)?.[1] ?? message;
}

/** A file that cannot be read or written: `<file>: <reason in words>` (exit 1). */
export function fileError(path: string, e: unknown, writing = false): CliError {
  return new CliError(`${path}: ${errnoWords(e, writing)}`);
}

/** A file's text; a file that cannot be read is a CliError naming it and the reason in words. */
export async function readTextFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    throw fileError(path, e);
  }
}

/** Writes a file; one that cannot be written is a CliError naming it and the reason in words. */
export async function writeTextFile(path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text);
  } catch (e) {
    throw fileError(path, e, true);
  }
}

/**
 * Opens a file to stream it: a missing file, a directory or one that cannot be read is a CliError
 * here, before the first line (opening a directory succeeds: only reading it fails).
 */
export async function openInputStream(path: string, highWaterMark: number): Promise<Readable> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, "r");
    if ((await handle.stat()).isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    return handle.createReadStream({ highWaterMark });
  } catch (e) {
    await handle?.close();
    throw fileError(path, e);
  }
}

/** Fails as openInputStream does when a file cannot be read, without reading it (its reader comes later). */
export async function checkReadable(path: string): Promise<void> {
  (await openInputStream(path, 1)).destroy();
}

/** Opens a file to stream output into (created or truncated); one that cannot be written is a CliError. */
export async function openOutputStream(path: string): Promise<Writable> {
  try {
    return (await open(path, "w")).createWriteStream();
  } catch (e) {
    throw fileError(path, e, true);
  }
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
    text = await readTextFile(path);
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
