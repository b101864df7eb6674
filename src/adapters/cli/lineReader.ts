// The lines of a text stream, read in large chunks: what `readline` gives (lines cut at "\n",
// "\r\n" or a lone "\r"; a last line without an end of line; none after a final end of line) without
// its event per line and its per-chunk bookkeeping, about half of its cost per line here.
import { StringDecoder } from "node:string_decoder";
import type { Readable } from "node:stream";

/** Bytes a file is read in at a time by `rsop decide` (node's default is 64 KiB). */
export const READ_CHUNK_BYTES = 1 << 20;

/** A running LineReader: pause and resume the input, or stop reading (the line being read ends it). */
export interface LineReader {
  /** Settles when the input ended or close() was called; rejects on the input's error. */
  readonly done: Promise<void>;
  /** Stops reading more input; the lines of a chunk already read are still given, as readline does. */
  pause(): void;
  resume(): void;
  /** Stops for good: no more lines, done settles. */
  close(): void;
}

/**
 * Calls `onLine` with each line of `input` in order (UTF-8 bytes or strings), the end of line left
 * out. A multi-byte character split across chunks is joined first.
 * @param input - a readable stream of bytes or strings; it is read until its end or close().
 * @param onLine - called once per line, blank lines included.
 * @returns the reader, to pause, resume or close it.
 * @example
 * const lines: string[] = [];
 * await readLines(Readable.from(["a\r\nb", "\n\nc"]), (l) => lines.push(l)).done;
 * lines; //=> ["a", "b", "", "c"]
 */
export function readLines(input: Readable, onLine: (text: string) => void): LineReader {
  const decoder = new StringDecoder("utf8");
  let tail = "";
  let closed = false;
  let settle: (() => void) | null = null;
  let fail: ((e: Error) => void) | null = null;
  const done = new Promise<void>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const finish = () => {
    if (closed) return;
    closed = true;
    input.off("data", onData);
    settle!();
  };
  /** The lines of `text` up to its last "\n"; the rest waits for the next chunk. */
  const cut = (text: string) => {
    let from = 0;
    // Where the next "\r" is (-1: none left): looked up again only once passed, so a chunk is
    // scanned for it once however many lines it holds.
    let cr = text.indexOf("\r");
    for (let nl = text.indexOf("\n"); nl >= 0 && !closed; nl = text.indexOf("\n", from)) {
      if (cr < 0 || cr > nl) onLine(text.slice(from, nl));
      else {
        // "\r\n" ends a line; a lone "\r" before it ends one too.
        while (cr >= 0 && cr < nl - 1 && !closed) {
          onLine(text.slice(from, cr));
          from = cr + 1;
          cr = text.indexOf("\r", from);
        }
        if (!closed) onLine(text.slice(from, cr === nl - 1 ? cr : nl));
        cr = text.indexOf("\r", nl + 1);
      }
      from = nl + 1;
    }
    tail = closed ? "" : text.slice(from);
  };
  /** The input's last line (no "\n" after it): lone "\r"s cut it, a last "\r" only ends it. */
  const last = (text: string) => {
    const parts = text.split("\r");
    if (parts[parts.length - 1] === "") parts.pop();
    for (const part of parts) if (!closed) onLine(part);
  };
  const onData = (chunk: Buffer | string) => {
    if (closed) return;
    const text = typeof chunk === "string" ? chunk : decoder.write(chunk);
    cut(tail === "" ? text : tail + text);
  };
  input.on("data", onData);
  input.once("end", () => {
    if (closed) return;
    const rest = tail + decoder.end();
    tail = "";
    if (rest !== "") last(rest);
    finish();
  });
  input.on("error", (e) => {
    if (closed) return;
    closed = true;
    input.off("data", onData);
    fail!(e);
  });
  return {
    done,
    pause: () => {
      input.pause();
    },
    resume: () => {
      if (!closed) input.resume();
    },
    close: () => {
      if (closed) return;
      finish();
      input.pause();
    },
  };
}
