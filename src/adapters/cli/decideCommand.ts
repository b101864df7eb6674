import { createReadStream } from "node:fs";
import { access } from "node:fs/promises";
import { type Engine, newDecision } from "../../evaluate/index.js";
import type { PanelEngine } from "../../legacy1/panelEngine.js";
import { type Issue, formatPath, requestIssues } from "../../model/index.js";
import { jsonErrorText, parseJson } from "../jsonSyntax.js";
import { AnswerBuffer, decisionHead } from "./answerBuffer.js";
import { CliError, type CliIo, UsageError } from "./io.js";
import { DecidePool, defaultDecideWorker } from "./decidePool.js";
import { READ_CHUNK_BYTES, readLines } from "./lineReader.js";
import { loadPanelFile, loadSystemFile, systemOrPanel } from "./loadSystem.js";

export type DecideFormat = "auto" | "jsonl" | "json";

export interface DecideOptions {
  readonly system?: string;
  /** An architecture 1.0 panel instead of a system: 1.0 ids and `door.request.*` topics. */
  readonly panel?: string;
  /** A file, or `-` (the default) for stdin. */
  readonly request?: string;
  readonly format?: DecideFormat;
  /** Worker threads answering JSON Lines (order kept); default 1: this thread answers. */
  readonly workers?: string;
  /** The built worker script (dist/decide-worker.js); default: the one next to this module. */
  readonly workerFile?: string;
}

/** The `--help` text of `rsop decide` on input and output: the contract the code below keeps. */
export const DECIDE_HELP = `
Input (--format):
  auto   (default) JSON Lines, unless the first non-blank line is not JSON on its own and the
         whole input parses as one JSON document (a pretty-printed request). A line that is JSON
         alone, or 1 MiB of look-ahead, settles it as JSON Lines at once, so a broken first line
         costs one error line, never the rest of the input. Answers stream as lines arrive.
  jsonl  one request per line.
  json   the whole input is one request.

Output: one JSON line per non-blank input line, in input order, each starting with "line" (the
  input line number, from 1; a document's first non-blank line):
    {"line":N,"outcome":…}                                      a decision
    {"line":N,"error":{"message":…,"issues":[{"path","message"}]}}  a line that is not a valid request
  Blank lines are skipped (no output line): match answers to requests by "line". A JSON syntax error
  gives the column (and line, in a document), never the input's text.

--workers N: JSON Lines answered on N worker threads (each loads the snapshot); the output is the
  same, in input order.

Exit codes: 0 every request answered; 1 some line refused (its error line is on stdout, and the first
  100 on stderr) or the snapshot refused; 2 usage error; 70 internal error. A closed stdout ends the
  command quietly with exit 0; a closed stderr ends it quietly with 1 if a line was refused.
`;

/** How much a line that is not JSON on its own may hold back JSON Lines while looking for a document. */
const LOOKAHEAD_CHARS = 1 << 20;
/** Per-line problems echoed to stderr; stdout has them all. */
const STDERR_LINES = 100;

/**
 * `rsop decide`: requests from a file or stdin, answered one JSON line each in input order, in one
 * process, streaming: memory does not grow with the input (lines are answered as they arrive, and
 * reading pauses while stdout is full).
 */
export async function decideCommand(opts: DecideOptions, io: CliIo): Promise<number> {
  const target = systemOrPanel(opts);
  const format = opts.format ?? "auto";
  const requestPath = opts.request ?? "-";
  if ((opts.system === "-" || opts.panel === "-") && requestPath === "-")
    throw new UsageError(
      "stdin can hold the snapshot or the requests, not both: give the requests with --request FILE",
    );
  const workers = parseWorkers(opts.workers);
  if (workers > 1 && (opts.system === "-" || opts.panel === "-"))
    throw new UsageError("--workers needs the snapshot in a file (each worker reads it)");
  const workerFile = workers > 1 ? (opts.workerFile ?? defaultDecideWorker()) : null;
  if (workers > 1 && workerFile === null)
    throw new CliError("--workers needs the built CLI (npm run build): its decide-worker.js was not found next to it");
  // With workers, they load the snapshot (each reports its problems, said once here) and this thread
  // does not, unless the input turns out to be one JSON document, which it answers itself.
  const pool =
    workerFile !== null
      ? DecidePool.start(
          workers,
          workerFile,
          "system" in target ? { kind: "system", path: target.system } : { kind: "panel", path: target.panel },
        )
      : null;
  let loaded: Answerer | null = null;
  const load = async (): Promise<Answerer> =>
    (loaded ??=
      "system" in target
        ? lineAnswerer({ kind: "system", engine: await loadSystemFile(target.system, io) })
        : lineAnswerer({ kind: "panel", panel: await loadPanelFile(target.panel, io) }));
  try {
    if (pool === null) await load();
    else await pool.ready();
  } catch (e) {
    await pool?.close();
    throw e;
  }
  try {
    return await answerLines(loaded, load, pool, format, requestPath, io);
  } finally {
    await pool?.close();
  }
}

/** `--workers N`: 1 to 64 (default 1). */
function parseWorkers(raw: string | undefined): number {
  if (raw === undefined) return 1;
  const n = /^\d{1,2}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!(n >= 1 && n <= 64)) throw new UsageError(`--workers must be a whole number from 1 to 64, got "${raw}"`);
  return n;
}

/** Why an input was refused (its error line is in the output; this is echoed to stderr). */
export interface Refusal {
  readonly message: string;
  readonly issues: readonly { readonly path: string; readonly message: string }[];
}

/** Answers requests into an AnswerBuffer: as a parsed value, or as JSON text (a line, or a whole document). */
export interface Answerer {
  /** Writes the answer line of a parsed request; returns why it was refused, or null. */
  value(req: unknown, line: number, out: AnswerBuffer): Refusal | null;
  /** Writes the answer line of a request's JSON text; returns why it was refused, or null. */
  text(text: string, line: number, document: boolean, out: AnswerBuffer): Refusal | null;
}

/** The answerer of a loaded snapshot (this thread's, and each worker's). */
export function lineAnswerer(
  target:
    | { readonly kind: "system"; readonly engine: Engine }
    | { readonly kind: "panel"; readonly panel: PanelEngine },
): Answerer {
  /** Writes the answer line of a request and returns true, or returns false when the request is not well formed. */
  let answerLine: (req: unknown, line: number, out: AnswerBuffer) => boolean;
  let check: (req: unknown) => Issue[];
  if (target.kind === "system") {
    const { engine } = target;
    const decision = newDecision(); // reused: each decision is written out before the next one
    const head = decisionHead();
    // decide checks the request itself (a malformed one is denied/badRequest, by the same check as
    // requestIssues), so the issues are listed only for the requests it refuses.
    answerLine = (req, line, out) => {
      const d = engine.decide(req, decision);
      if (d.reason === "badRequest") return false;
      out.decision(line, d, head(d));
      return true;
    };
    check = requestIssues;
  } else {
    const { panel } = target;
    check = (req) => panel.requestIssues(req);
    // The decision is an object: its JSON starts with "{" and has at least one key.
    answerLine = (req, line, out) => {
      if (check(req).length > 0) return false;
      out.line(`{"line":${line},${JSON.stringify(panel.decide(req)).slice(1)}`);
      return true;
    };
  }
  const refuse = (line: number, message: string, issues: readonly Issue[], out: AnswerBuffer): Refusal => {
    const list = issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
    out.line(JSON.stringify({ line, error: { message, issues: list } }));
    return { message, issues: list };
  };
  const value = (req: unknown, line: number, out: AnswerBuffer): Refusal | null =>
    answerLine(req, line, out) ? null : refuse(line, "invalid request", check(req), out);
  return {
    value,
    text(text, line, document, out) {
      const r = parseJson(text);
      if (r.ok) return value(r.value, line, out);
      return refuse(
        line,
        `invalid JSON at ${document ? jsonErrorText(r) : `column ${r.column}: ${r.message}`}`,
        [],
        out,
      );
    },
  };
}

/**
 * Reads the requests and writes the answers (see DECIDE_HELP). Without a pool, `answerer` answers
 * every line; with one, its workers answer the JSON Lines and `load` gives an answerer for a
 * document.
 */
async function answerLines(
  answerer: Answerer | null,
  load: () => Promise<Answerer>,
  pool: DecidePool | null,
  format: DecideFormat,
  requestPath: string,
  io: CliIo,
): Promise<number> {
  if (requestPath !== "-") {
    try {
      await access(requestPath);
    } catch {
      throw new CliError(`cannot read request file "${requestPath}"`);
    }
  }
  const input = requestPath === "-" ? io.stdin : createReadStream(requestPath, { highWaterMark: READ_CHUNK_BYTES });

  // Output: lines gathered while input lines arrive in one burst, written once per turn of the
  // event loop; reading pauses while stdout is full or the workers have enough to do.
  const out = new AnswerBuffer(READ_CHUNK_BYTES);
  let scheduled = false;
  let full = false;
  let paused = false;
  const pace = () => {
    const wait = full || (pool?.busy() ?? false);
    if (wait && !paused) lines.pause();
    else if (!wait && paused) lines.resume();
    paused = wait;
  };
  const flush = () => {
    scheduled = false;
    if (out.length === 0 || io.stdout.destroyed) return;
    if (!io.stdout.write(out.take()) && !full) {
      full = true;
      pace();
      io.stdout.once("drain", () => {
        full = false;
        pace();
      });
    }
  };
  /** Something was written to `out`: it goes out at the end of this turn of the event loop. */
  const wrote = () => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  let bad = 0;
  let answered = 0;
  const refused = (line: number, why: Refusal) => {
    bad++;
    if (bad <= STDERR_LINES) {
      if (why.issues.length === 0) io.stderr.write(`line ${line}: ${why.message}\n`);
      for (const i of why.issues) io.stderr.write(`line ${line}: ${i.path}: ${i.message}\n`);
    }
  };
  /** One input answered (its line is in `out`): counted, and a refusal echoed. */
  const answer = (why: Refusal | null, line: number) => {
    answered++;
    wrote();
    if (why !== null) refused(line, why);
  };
  /** A request line: answered here, or by a worker (in order: the pool hands answers back in input order). */
  const answerLine = (text: string, line: number) => {
    if (pool !== null) {
      pool.add(line, text);
      pace();
    } else answer(answerer!.text(text, line, false, out), line);
  };
  pool?.onFailure(() => lines.close());
  pool?.onAnswers((chunk) => {
    answered += chunk.count;
    if (chunk.bytes.length > 0) {
      out.bytes(chunk.bytes);
      wrote();
    }
    for (const r of chunk.refused) refused(r.line, r);
    pace();
  });
  const isBlank = (s: string) => /^\s*$/.test(s);

  // Input: the mode (see DECIDE_HELP), and in auto mode the lines held back while undecided.
  let mode = format;
  let lineNo = 0;
  let held: string[] | null = null;
  let heldFrom = 0;
  let heldChars = 0;
  const doc: string[] = [];
  const replay = () => {
    const h = held ?? [];
    held = null;
    mode = "jsonl";
    h.forEach((l, k) => {
      if (!isBlank(l)) answerLine(l, heldFrom + k);
    });
  };
  const onLine = (text: string) => {
    lineNo++;
    const line = lineNo === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // a byte order mark is no content
    if (io.closed?.aborted) return;
    if (mode === "jsonl") {
      if (!isBlank(line)) answerLine(line, lineNo);
    } else if (mode === "json") {
      doc.push(line);
    } else if (held === null) {
      if (isBlank(line)) return;
      const r = parseJson(line);
      if (r.ok) {
        mode = "jsonl";
        if (pool !== null) answerLine(line, lineNo);
        else answer(answerer!.value(r.value, lineNo, out), lineNo);
      } else {
        held = [line];
        heldFrom = lineNo;
        heldChars = line.length;
      }
    } else {
      held.push(line);
      heldChars += line.length + 1;
      // A line that is a JSON object on its own is a request line, never part of a pretty-printed one.
      if (heldChars > LOOKAHEAD_CHARS || (/^\s*\{/.test(line) && parseJson(line).ok)) replay();
    }
  };
  const lines = readLines(input, onLine);

  const stop = () => lines.close();
  io.closed?.addEventListener("abort", stop, { once: true });
  try {
    await lines.done;
  } catch (e) {
    throw requestPath === "-"
      ? e
      : new CliError(
          `cannot read request file "${requestPath}": ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        );
  } finally {
    io.closed?.removeEventListener("abort", stop);
    if (input !== io.stdin) input.destroy();
  }
  if (io.closed?.aborted) {
    flush(); // the answers so far, if it was stderr that closed
    return bad === 0 ? 0 : 1; // runCli makes it 0 if stdout was closed
  }
  if (mode === "json") {
    const first = doc.findIndex((l) => !isBlank(l));
    const line = first === -1 ? 1 : first + 1;
    answer((answerer ?? (await load())).text(doc.join("\n"), line, true, out), line);
  } else if (held !== null) {
    const text = (held as string[]).join("\n");
    const r = parseJson(text);
    if (r.ok) answer((answerer ?? (await load())).value(r.value, heldFrom, out), heldFrom);
    else replay();
  }
  if (pool !== null) {
    // The last chunk goes out; the answers of every chunk are in before the end.
    pool.end();
    await pool.drained();
  }
  flush();
  if (full && !io.closed?.aborted)
    await new Promise<void>((resolve) => {
      io.stdout.once("drain", resolve);
      io.closed?.addEventListener("abort", () => resolve(), { once: true });
    });
  if (io.closed?.aborted) return bad === 0 ? 0 : 1; // runCli makes it 0 if stdout was closed
  if (bad > STDERR_LINES)
    io.stderr.write(`… ${bad - STDERR_LINES} more refused lines (every one has its error line on stdout)\n`);
  if (bad > 0) io.stderr.write(`rsop: ${bad} of ${answered} requests refused\n`);
  return bad === 0 ? 0 : 1;
}
