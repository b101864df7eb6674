// `rsop decide --workers N`: worker threads (decideWorker.ts, built as dist/decide-worker.js) each
// load the snapshot and answer chunks of JSON Lines; this thread reads, hands chunks out in turn and
// writes the answers back in input order. At most two chunks per worker are out at a time (the
// reader pauses beyond that), so memory does not grow with the input.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Issue } from "../../model/index.js";
import { CliError, UsageError } from "./io.js";

/** Lines per chunk: large enough that a message costs little per line, small enough to keep order cheap. */
const CHUNK = 2048;

/** What a worker is given to load. */
export interface DecideWorkerData {
  readonly kind: "system" | "panel";
  readonly path: string;
}

/** A chunk of requests: their line numbers and texts. */
export interface DecideChunk {
  readonly seq: number;
  readonly lines: readonly number[];
  readonly texts: readonly string[];
}

/** The answers of a chunk: the output lines (UTF-8, each ended by "\n"), how many, and the refused ones for stderr. */
export interface ChunkAnswers {
  readonly seq: number;
  readonly bytes: Uint8Array;
  readonly count: number;
  readonly refused: readonly {
    readonly line: number;
    readonly message: string;
    readonly issues: readonly { readonly path: string; readonly message: string }[];
  }[];
}

/**
 * What a worker posts: that it loaded the snapshot, a chunk's answers, or why it cannot answer
 * (`usage`: the snapshot option is wrong, exit 2; `issues`: the snapshot's problems).
 */
export type DecideWorkerMessage =
  | ChunkAnswers
  | { readonly ready: true }
  | { readonly error: string; readonly issues?: readonly Issue[]; readonly usage?: boolean };

/** The worker script next to this module once built (dist/decide-worker.js), or null (running from source). */
export function defaultDecideWorker(): string | null {
  const file = fileURLToPath(new URL("./decide-worker.js", import.meta.url));
  return existsSync(file) ? file : null;
}

/** The longest close() waits for a worker still loading before it terminates it anyway. */
const CLOSE_WAIT_MS = 10_000;

/** Worker threads answering chunks of lines, and the answers put back in order. */
export class DecidePool {
  readonly #workers: Worker[];
  #lines: number[] = [];
  #texts: string[] = [];
  #nextSeq = 0;
  /** The next chunk whose answers go out. */
  #nextOut = 0;
  readonly #early = new Map<number, ChunkAnswers>();
  #onAnswers: (a: ChunkAnswers) => void = () => undefined;
  #failure: Error | null = null;
  #waiting: { resolve: () => void; reject: (e: Error) => void } | null = null;
  #onFailure: () => void = () => undefined;
  /** Workers that have loaded the snapshot, and who waits for all of them. */
  #ready = 0;
  #waitingReady: { resolve: () => void; reject: (e: Error) => void } | null = null;

  /** Per worker: settles once it has said something (ready, or its failure) or stopped. */
  readonly #started: Promise<void>[];

  private constructor(workers: Worker[]) {
    this.#workers = workers;
    this.#started = workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          w.once("message", () => resolve());
          w.once("exit", () => resolve());
          w.once("error", () => resolve());
        }),
    );
    for (const w of workers) {
      w.on("message", (m: DecideWorkerMessage) => {
        if ("ready" in m) this.#loaded();
        else if ("error" in m)
          this.#fail(m.usage === true ? new UsageError(m.error) : new CliError(m.error, m.issues ?? []));
        else this.#answered(m);
      });
      w.on("error", (e) => this.#fail(new CliError(`a decide worker failed: ${e.message}`)));
      w.on("exit", (code) => {
        if (code !== 0) this.#fail(new CliError(`a decide worker stopped (exit code ${code})`));
      });
    }
  }

  /** Starts `n` workers, each loading the snapshot. */
  static start(n: number, workerFile: string, data: DecideWorkerData): DecidePool {
    return new DecidePool(Array.from({ length: n }, () => new Worker(workerFile, { workerData: data })));
  }

  /** Where the answers go, chunk by chunk, in input order. */
  onAnswers(f: (a: ChunkAnswers) => void): void {
    this.#onAnswers = f;
  }

  /** Told once when a worker fails (the reader then stops: drained() says why). */
  onFailure(f: () => void): void {
    this.#onFailure = f;
  }

  /** Adds a request line (its number and text); a full chunk is handed out. */
  add(line: number, text: string): void {
    this.#lines.push(line);
    this.#texts.push(text);
    if (this.#lines.length >= CHUNK) this.#send();
  }

  /** Hands out the last, partial chunk. */
  end(): void {
    if (this.#lines.length > 0) this.#send();
  }

  /** Whether enough chunks are out for the reader to wait. */
  busy(): boolean {
    return this.#nextSeq - this.#nextOut >= 2 * this.#workers.length;
  }

  /** Resolves once every worker has loaded the snapshot; rejects with the first one's failure (its problems, or a usage error). */
  ready(): Promise<void> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (this.#ready === this.#workers.length) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#waitingReady = { resolve, reject };
    });
  }

  /** Resolves once every chunk handed out is answered (and passed on); rejects when a worker failed. */
  drained(): Promise<void> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (this.#nextOut === this.#nextSeq) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  /**
   * Stops the workers, each once it has finished loading (or after CLOSE_WAIT_MS): Node 20 aborts the
   * whole process (a V8 check, "location_ != nullptr") when a worker is terminated while its ES
   * modules are still being evaluated, which a worker loading the shared chunks can be when another
   * one has already reported a snapshot that does not load (decideWorkers.test.ts, seen once in ten
   * full runs).
   */
  async close(): Promise<void> {
    const late = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref());
    await Promise.all(
      this.#workers.map(async (w, i) => {
        await Promise.race([this.#started[i], late]);
        await w.terminate();
      }),
    );
  }

  #send(): void {
    const chunk: DecideChunk = { seq: this.#nextSeq++, lines: this.#lines, texts: this.#texts };
    this.#lines = [];
    this.#texts = [];
    this.#workers[chunk.seq % this.#workers.length]!.postMessage(chunk);
  }

  #answered(a: ChunkAnswers): void {
    this.#early.set(a.seq, a);
    for (let next = this.#early.get(this.#nextOut); next !== undefined; next = this.#early.get(this.#nextOut)) {
      this.#early.delete(this.#nextOut);
      this.#nextOut++;
      this.#onAnswers(next);
    }
    if (this.#nextOut === this.#nextSeq && this.#waiting !== null) {
      const w = this.#waiting;
      this.#waiting = null;
      w.resolve();
    }
  }

  #loaded(): void {
    this.#ready++;
    if (this.#ready === this.#workers.length && this.#waitingReady !== null) {
      const w = this.#waitingReady;
      this.#waitingReady = null;
      w.resolve();
    }
  }

  #fail(e: Error): void {
    if (this.#failure !== null) return;
    this.#failure = e;
    for (const w of [this.#waiting, this.#waitingReady]) w?.reject(e);
    this.#waiting = null;
    this.#waitingReady = null;
    this.#onFailure();
  }
}
