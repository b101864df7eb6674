// Group commit for the SQLite store, off the event loop. The database runs in WAL mode with
// synchronous=OFF: a commit only writes its frames to the WAL file (the OS then holds them, so a crash
// of the process loses nothing, and takes tens of microseconds), and this makes commits durable with
// fsync(2) of the WAL in libuv's thread pool. A commit waits for the first fsync that starts after it:
// every commit made while one fsync runs shares the next one, and the event loop never waits on the
// disk (with synchronous=FULL each commit held it for one fsync, ~0.2 ms here, so commits could not
// be grouped without making reads wait). An fsync covers every frame written before it, the WAL's
// header included, so what it returns for is what recovery finds after a power cut.
//
// SQLite syncs nothing itself in this mode, so the store checkpoints itself (wal_autocheckpoint=0):
// now and then, after an fsync, with synchronous=FULL for that one call, so SQLite syncs the WAL
// before copying it into the database and the database before the WAL may be written over (a
// checkpoint of 2 MiB holds the event loop a few milliseconds; SQLite's own default is 4 MiB).
import { closeSync, fsync, fsyncSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { StoreUnavailableError } from "../../service/store/store.js";

/** WAL bytes written since the last checkpoint after which the store checkpoints. */
export const CHECKPOINT_BYTES = 2 << 20;

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/** The syncs of one database's WAL (see above). */
export class WalSync {
  readonly #fd: number;
  readonly #where: string;
  readonly #checkpoint: () => void;
  #busy = false;
  /** Commits made since the running fsync started: the next one covers them. */
  #waiting: Waiter[] = [];
  #failed: StoreUnavailableError | undefined;
  #written = 0;
  #checkpointQueued = false;
  #closed = false;
  #fsyncs = 0;

  /**
   * @param file - the database file; its WAL (`file-wal`) must exist (the database is open in WAL mode).
   * @param checkpoint - checkpoints the database (with synchronous=FULL), synchronously.
   */
  constructor(file: string, where: string, checkpoint: () => void) {
    this.#fd = openSync(`${file}-wal`, "r+");
    this.#where = where;
    this.#checkpoint = checkpoint;
    // The WAL may just have been created: its name in the folder must be durable too (SQLite syncs the
    // folder after creating a journal when it syncs itself; here it does not).
    const folder = openSync(dirname(file), "r");
    try {
      fsyncSync(folder);
    } finally {
      closeSync(folder);
    }
  }

  /**
   * Resolves once everything committed before the call is durable. `bytes`: about how much the commit
   * wrote to the WAL (for the checkpoints).
   * @throws StoreUnavailableError (rejected) once an fsync has failed: what the WAL holds since is
   *   unknown, so nothing more is made durable (the server must be restarted; the log then decides).
   */
  sync(bytes = 0): Promise<void> {
    this.#written += bytes + 4096;
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      if (!this.#busy) this.#start();
    });
  }

  /** How many fsyncs were run (the group commit's groups). */
  get fsyncs(): number {
    return this.#fsyncs;
  }

  /** Whether an fsync failed (the store then refuses every write). */
  get failed(): StoreUnavailableError | undefined {
    return this.#failed;
  }

  #start(): void {
    const covered = this.#waiting;
    this.#waiting = [];
    this.#busy = true;
    this.#fsyncs++;
    fsync(this.#fd, (e) => {
      this.#busy = false;
      if (e !== null) {
        this.#failed ??= new StoreUnavailableError(
          `the database ${this.#where} could not be synced to disk (${e.message}); writes since the last sync may or may not be stored: restart the server`,
        );
        for (const w of [...covered, ...this.#waiting]) w.reject(this.#failed);
        this.#waiting = [];
        return;
      }
      for (const w of covered) w.resolve();
      if (this.#waiting.length > 0) this.#start();
      if (this.#written >= CHECKPOINT_BYTES) this.#queueCheckpoint();
    });
  }

  /** A checkpoint once the acknowledgements just resolved have been answered (their microtasks run first). */
  #queueCheckpoint(): void {
    if (this.#checkpointQueued) return;
    this.#checkpointQueued = true;
    setImmediate(() => {
      this.#checkpointQueued = false;
      if (this.#closed || this.#failed !== undefined || this.#written < CHECKPOINT_BYTES) return;
      this.#written = 0;
      try {
        this.#checkpoint();
      } catch {
        // Not done now: the WAL only grows; the next sync tries again.
        this.#written = CHECKPOINT_BYTES;
      }
    });
  }

  /** Waits for the fsync in progress, then releases the WAL's descriptor (the database closes after). */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.sync().catch(() => undefined);
    this.#closed = true;
    closeSync(this.#fd);
  }
}
