import { type Command, Option } from "commander";
import { type Engine, newDecision } from "../../evaluate/index.js";
import type { PanelEngine } from "../../legacy1/panelEngine.js";
import { type Issue, formatPath, requestIssues } from "../../model/index.js";
import { jsonErrorText, parseJson } from "../jsonSyntax.js";
import { AnswerBuffer, decisionHead } from "./answerBuffer.js";
import { CliError, type CliIo, UsageError, fileError, openInputStream } from "./io.js";
import { DecidePool, defaultDecideWorker } from "./decidePool.js";
import { type LineReader, READ_CHUNK_BYTES, readLines } from "./lineReader.js";
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

/** Registers `rsop decide`. */
export function registerDecideCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("decide")
    .description(
      "Answer access requests: one JSON request, or JSON Lines from --request or stdin; one decision JSON per line, in order.",
    )
    .option("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option(
      "--panel <file>",
      "rsop-panel/1 architecture 1.0 panel (JSON), instead of --system: 1.0 ids and door.request.* topics",
    )
    .option("--request <file>", "request file (JSON Lines, or one JSON request); - or absent: stdin")
    .addOption(
      new Option("--format <format>", "input format (see below)").choices(["auto", "jsonl", "json"]).default("auto"),
    )
    .option("--workers <n>", "answer JSON Lines on n worker threads (1 to 64; answers stay in input order); default 1")
    .addHelpText("after", DECIDE_HELP)
    .action(
      async (opts: { system?: string; panel?: string; request?: string; format: DecideFormat; workers?: string }) => {
        setCode(await decideCommand(opts, io));
      },
    );
}

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
export interface InputRefusal {
  readonly message: string;
  readonly issues: readonly { readonly path: string; readonly message: string }[];
}

/** Answers requests into an AnswerBuffer: as a parsed value, or as JSON text (a line, or a whole document). */
export interface Answerer {
  /** Writes the answer line of a parsed request; returns why it was refused, or null. */
  value(req: unknown, line: number, out: AnswerBuffer): InputRefusal | null;
  /** Writes the answer line of a request's JSON text; returns why it was refused, or null. */
  text(text: string, line: number, document: boolean, out: AnswerBuffer): InputRefusal | null;
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
  const refuse = (line: number, message: string, issues: readonly Issue[], out: AnswerBuffer): InputRefusal => {
    const list = issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
    out.line(JSON.stringify({ line, error: { message, issues: list } }));
    return { message, issues: list };
  };
  const value = (req: unknown, line: number, out: AnswerBuffer): InputRefusal | null =>
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
 * The output side of `answerLines`: lines gathered while input lines arrive in one burst, written
 * once per turn of the event loop; reading pauses while stdout is full or the workers have enough
 * to do. Also counts the answers and echoes the refusals to stderr.
 */
class AnswerOutput {
  readonly out = new AnswerBuffer(READ_CHUNK_BYTES);
  /** The reader it paces; set once the reading starts. */
  lines: LineReader | null = null;
  bad = 0;
  answered = 0;
  full = false;
  #scheduled = false;
  #paused = false;

  constructor(
    readonly answerer: Answerer | null,
    readonly pool: DecidePool | null,
    readonly io: CliIo,
  ) {
    pool?.onFailure(() => this.lines!.close());
    pool?.onAnswers((chunk) => {
      this.answered += chunk.count;
      if (chunk.bytes.length > 0) {
        this.out.bytes(chunk.bytes);
        this.wrote();
      }
      for (const r of chunk.refused) this.refused(r.line, r);
      this.pace();
    });
  }

  pace = (): void => {
    const wait = this.full || (this.pool?.busy() ?? false);
    if (wait && !this.#paused) this.lines!.pause();
    else if (!wait && this.#paused) this.lines!.resume();
    this.#paused = wait;
  };

  flush = (): void => {
    this.#scheduled = false;
    if (this.out.length === 0 || this.io.stdout.destroyed) return;
    if (!this.io.stdout.write(this.out.take()) && !this.full) {
      this.full = true;
      this.pace();
      this.io.stdout.once("drain", () => {
        this.full = false;
        this.pace();
      });
    }
  };

  /** Something was written to `out`: it goes out at the end of this turn of the event loop. */
  wrote(): void {
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.flush);
    }
  }

  refused(line: number, why: InputRefusal): void {
    this.bad++;
    if (this.bad <= STDERR_LINES) {
      if (why.issues.length === 0) this.io.stderr.write(`line ${line}: ${why.message}\n`);
      for (const i of why.issues) this.io.stderr.write(`line ${line}: ${i.path}: ${i.message}\n`);
    }
  }

  /** One input answered (its line is in `out`): counted, and a refusal echoed. */
  answer(why: InputRefusal | null, line: number): void {
    this.answered++;
    this.wrote();
    if (why !== null) this.refused(line, why);
  }

  /** A request line: answered here, or by a worker (in order: the pool hands answers back in input order). */
  answerLine(text: string, line: number): void {
    if (this.pool !== null) {
      this.pool.add(line, text);
      this.pace();
    } else this.answer(this.answerer!.text(text, line, false, this.out), line);
  }

  /** The input is read and answered: the last answers go out, then the summary; the exit code. */
  async finish(): Promise<number> {
    const { pool, io } = this;
    if (pool !== null) {
      // The last chunk goes out; the answers of every chunk are in before the end.
      pool.end();
      await pool.drained();
    }
    this.flush();
    if (this.full && !io.closed?.aborted)
      await new Promise<void>((resolve) => {
        io.stdout.once("drain", resolve);
        io.closed?.addEventListener("abort", () => resolve(), { once: true });
      });
    const bad = this.bad;
    if (io.closed?.aborted) return bad === 0 ? 0 : 1; // runCli makes it 0 if stdout was closed
    if (bad > STDERR_LINES)
      io.stderr.write(`… ${bad - STDERR_LINES} more refused lines (every one has its error line on stdout)\n`);
    if (bad > 0) io.stderr.write(`rsop: ${bad} of ${this.answered} requests refused\n`);
    return bad === 0 ? 0 : 1;
  }
}

/** Only white space (a request line starts with "{": no regular expression for it). */
const isBlank = (s: string) => s.charCodeAt(0) !== 0x7b && /^\s*$/.test(s);

/** The input side of `answerLines`: the mode (see DECIDE_HELP), and in auto mode the lines held back while undecided. */
class RequestInput {
  mode: DecideFormat;
  lineNo = 0;
  held: string[] | null = null;
  heldFrom = 0;
  heldChars = 0;
  readonly doc: string[] = [];

  constructor(
    format: DecideFormat,
    readonly output: AnswerOutput,
    readonly io: CliIo,
  ) {
    this.mode = format;
  }

  replay(): void {
    const h = this.held ?? [];
    this.held = null;
    this.mode = "jsonl";
    h.forEach((l, k) => {
      if (!isBlank(l)) this.output.answerLine(l, this.heldFrom + k);
    });
  }

  onLine = (text: string): void => {
    const output = this.output;
    this.lineNo++;
    const lineNo = this.lineNo;
    const line = lineNo === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // a byte order mark is no content
    if (this.io.closed?.aborted) return;
    if (this.mode === "jsonl") {
      if (!isBlank(line)) output.answerLine(line, lineNo);
    } else if (this.mode === "json") {
      this.doc.push(line);
    } else if (this.held === null) {
      if (isBlank(line)) return;
      const r = parseJson(line);
      if (r.ok) {
        this.mode = "jsonl";
        if (output.pool !== null) output.answerLine(line, lineNo);
        else output.answer(output.answerer!.value(r.value, lineNo, output.out), lineNo);
      } else {
        this.held = [line];
        this.heldFrom = lineNo;
        this.heldChars = line.length;
      }
    } else {
      this.held.push(line);
      this.heldChars += line.length + 1;
      // A line that is a JSON object on its own is a request line, never part of a pretty-printed one.
      if (this.heldChars > LOOKAHEAD_CHARS || (/^\s*\{/.test(line) && parseJson(line).ok)) this.replay();
    }
  };

  /** The end of the input: a JSON document (or the held lines, if they are one) is answered now. */
  async finish(load: () => Promise<Answerer>): Promise<void> {
    const { output } = this;
    if (this.mode === "json") {
      const first = this.doc.findIndex((l) => !isBlank(l));
      const line = first === -1 ? 1 : first + 1;
      output.answer((output.answerer ?? (await load())).text(this.doc.join("\n"), line, true, output.out), line);
    } else if (this.held !== null) {
      const text = this.held.join("\n");
      const r = parseJson(text);
      if (r.ok)
        output.answer((output.answerer ?? (await load())).value(r.value, this.heldFrom, output.out), this.heldFrom);
      else this.replay();
    }
  }
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
  // A request file that cannot be read is said before any answer (`rsop: FILE: no such file`).
  const input = requestPath === "-" ? io.stdin : await openInputStream(requestPath, READ_CHUNK_BYTES);
  const output = new AnswerOutput(answerer, pool, io);
  const requests = new RequestInput(format, output, io);
  const lines = readLines(input, requests.onLine);
  output.lines = lines;

  const stop = () => lines.close();
  io.closed?.addEventListener("abort", stop, { once: true });
  try {
    await lines.done;
  } catch (e) {
    throw requestPath === "-" ? e : fileError(requestPath, e);
  } finally {
    io.closed?.removeEventListener("abort", stop);
    if (input !== io.stdin) input.destroy();
  }
  if (io.closed?.aborted) {
    output.flush(); // the answers so far, if it was stderr that closed
    return output.bad === 0 ? 0 : 1; // runCli makes it 0 if stdout was closed
  }
  await requests.finish(load);
  return await output.finish();
}
