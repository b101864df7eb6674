// The scan protocol of a cloud node (N45–N52): JSON Lines in, one scan per line, in the request shape
// of `rsop decide` without `node`; one answer line per non-blank input line, in order, exactly as
// `rsop decide` answers the same request with `node` filled in from the node's contact state.
// The answer lines are written here rather than by the CLI's line answerer, which sits in the
// adapters, above this layer (N52); test/node/scanProtocol.test.ts pins them byte for byte to it.
import { type AccessState, Engine, newDecision } from "../evaluate/index.js";
import { type Decision, type Issue, formatPath, isObject, parseInstant, requestIssues } from "../model/index.js";
import type { ContactState } from "./contact.js";

/** The longest scan line, in bytes of UTF-8 without its end of line (N50). */
export const MAX_SCAN_LINE_BYTES = 64 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/** Only white space: no answer (N49). */
const isBlank = (s: string) => s.charCodeAt(0) !== 0x7b && /^\s*$/.test(s);

/** The error line of a refused input, in `rsop decide`'s shape (N49). */
function errorLine(line: number, message: string, issues: readonly Issue[]): string {
  const list = issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
  return JSON.stringify({ line, error: { message, issues: list } });
}

/**
 * The request a scan stands for (N46–N47): the scan with `at` defaulted to the node's clock and
 * `node` its state at that instant; a scan that is not an object is passed on as it is (decide
 * refuses it). When `at` is not an instant, `node` is left out: the request is refused for its `at`.
 */
function requestOf(scan: unknown, contact: ContactState): unknown {
  if (!isObject(scan)) return scan;
  const req: Record<string, unknown> = { ...scan };
  if (req.at === undefined) req.at = contact.now();
  const atMs = parseInstant(req.at);
  if (!Number.isNaN(atMs)) req.node = contact.nodeStateAt(atMs);
  return req;
}

/**
 * Where a running node's engine is read for each line: null until it has a system (N57); and the
 * state its areas and doors keep (docs/semantics.md AB7), when it keeps one: each scan is then decided with it and
 * recorded in it (docs/semantics.md AB7, UF3).
 */
export interface EngineSource {
  readonly engine: Engine | null;
  readonly state?: AccessState | null;
}

/**
 * Told of every decision a scan line got (N53): the request as decided (with `node` and `at` filled
 * in), the decision's JSON, and the scan's instant (epoch ms; the clock when `at` was not an instant).
 */
export type ScanRecorder = (request: unknown, decisionJson: string, atMs: number) => void;

/**
 * Answers scans one line at a time over an engine and a contact state (N45–N49). The engine may be
 * updated in place between lines (Engine.update), or the source may hand out another one: each line
 * is decided by the engine as it is then.
 * @example
 * const scans = new ScanAnswerer(engine, new ContactState());
 * scans.answer('{"deviceId":"door-1","pin":"1234"}', 1); //=> '{"line":1,"outcome":…}'
 */
export class ScanAnswerer {
  /** Reused: each decision is written out before the next one is made. */
  readonly #decision: Decision = newDecision();

  readonly #source: EngineSource;

  constructor(
    engine: Engine | EngineSource,
    readonly contact: ContactState,
    readonly record?: ScanRecorder,
  ) {
    this.#source = engine instanceof Engine ? { engine } : engine;
  }

  /** The engine the next line is decided by; null while the node has no system yet. */
  get engine(): Engine | null {
    return this.#source.engine;
  }

  /**
   * The answer line (no end of line) of the scan line `text`, numbered `line`; null for a blank
   * line. Never throws on any text.
   */
  answer(text: string, line: number): string | null {
    if (isBlank(text)) return null;
    let scan: unknown;
    try {
      scan = JSON.parse(text);
    } catch {
      // The parser's message can quote the input; a scan may hold a PIN, so it is left out (N49).
      return errorLine(line, "invalid JSON", []);
    }
    if (isObject(scan) && Object.hasOwn(scan, "node"))
      return errorLine(line, "invalid request", [
        { code: "invalid", path: ["node"], message: "Must be absent: the node fills in its own state." },
      ]);
    const engine = this.#source.engine;
    if (engine === null) return errorLine(line, "the node has no system yet: it has not reached the service", []);
    const req = requestOf(scan, this.contact);
    const state = this.#source.state ?? undefined;
    const d = engine.decide(req, this.#decision, state);
    // Recorded at once: the next line is decided with what this one changed (AB7).
    if (state !== undefined) engine.record(req, d, state);
    const json = JSON.stringify(d);
    // A scan that is not an object is no access attempt at a door: it gets its error line, no event.
    if (this.record !== undefined && isObject(req)) {
      const atMs = parseInstant(req.at);
      this.record(req, json, Number.isNaN(atMs) ? this.contact.now() : atMs);
    }
    if (d.reason === "badRequest") return errorLine(line, "invalid request", requestIssues(req));
    // The decision is an object: its JSON starts with "{" and has at least one key.
    return `{"line":${line},${json.slice(1)}`;
  }
}

/** The parts of a line as one array of bytes. */
function joined(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  n = 0;
  for (const p of parts) {
    out.set(p, n);
    n += p.length;
  }
  return out;
}

/**
 * The scan protocol over a byte stream (N48–N50): bytes in, in chunks of any size; each answer line
 * (no end of line) handed to `onAnswer` as soon as its input line has ended, in input order. Lines
 * end at "\n", "\r\n" or a lone "\r"; a last line needs no end of line. A line longer than
 * MAX_SCAN_LINE_BYTES is refused with one error line as soon as it is known to be too long, and the
 * rest of it is skipped, never held.
 * @example
 * const out: string[] = [];
 * const lines = new ScanLines(new ScanAnswerer(engine, contact), (a) => out.push(a));
 * lines.push(new TextEncoder().encode('{"deviceId":"door-1","pin":"1234"}\n'));
 * lines.end();
 */
export class ScanLines {
  #parts: Uint8Array[] = [];
  #bytes = 0;
  /** The line being read is too long: its error line is out, the rest of it is skipped. */
  #over = false;
  /** The last chunk ended with "\r": a "\n" starting the next one ends no line. */
  #afterCR = false;
  /** Lines ended so far. */
  #line = 0;
  readonly #decoder = new TextDecoder("utf-8", { ignoreBOM: true });

  constructor(
    readonly answerer: ScanAnswerer,
    readonly onAnswer: (answer: string) => void,
  ) {}

  /** Reads a chunk of input bytes. */
  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let from = this.#afterCR && n > 0 && chunk[0] === LF ? 1 : 0;
    if (n > 0) this.#afterCR = false;
    for (let i = from; i < n; i++) {
      const b = chunk[i];
      if (b !== LF && b !== CR) continue;
      this.#keep(chunk.subarray(from, i));
      this.#endLine();
      if (b === CR) {
        if (i + 1 === n) this.#afterCR = true;
        else if (chunk[i + 1] === LF) i++;
      }
      from = i + 1;
    }
    this.#keep(chunk.subarray(from, n));
  }

  /** The end of the input: a last line without an end of line is answered. */
  end(): void {
    if (this.#bytes > 0 || this.#over) this.#endLine();
    this.#afterCR = false;
  }

  /** Keeps part of the line being read, or refuses the line once it is too long (N50). */
  #keep(part: Uint8Array): void {
    if (part.length === 0 || this.#over) return;
    if (this.#bytes + part.length > MAX_SCAN_LINE_BYTES) {
      this.#over = true;
      this.#parts = [];
      this.#bytes = 0;
      this.onAnswer(errorLine(this.#line + 1, `line longer than ${MAX_SCAN_LINE_BYTES} bytes`, []));
      return;
    }
    // A copy: the caller may reuse its chunk, and a short rest must not hold a large chunk alive.
    this.#parts.push(part.slice());
    this.#bytes += part.length;
  }

  #endLine(): void {
    const line = ++this.#line;
    const over = this.#over;
    const parts = this.#parts;
    this.#parts = [];
    this.#bytes = 0;
    this.#over = false;
    if (over) return;
    let text = "";
    if (parts.length === 1) text = this.#decoder.decode(parts[0]);
    else if (parts.length > 1) text = this.#decoder.decode(joined(parts));
    // A byte order mark is no content, at the start of the input only (as `rsop decide` reads it).
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const answer = this.answerer.answer(text, line);
    if (answer !== null) this.onAnswer(answer);
  }
}
