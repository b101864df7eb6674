// A live system (2.0) or live panel (1.0) kept in a Store: started from the store's latest snapshot
// plus the changes after it, and every accepted write stored before it is answered.
//
// Group commit: a write is applied in memory and handed to the store at once (`appendAt` at its
// sequence number), without waiting for the writes before it to be durable. The SQLite store commits
// it in that call, before anything else runs (so a read that shows it shows a change the log holds),
// and the writes committed while one fsync runs share the next; nothing waits on the disk but the
// answers. Writes are answered in log order, each once it is durable. When one cannot be stored, it
// and every write applied after it are undone in memory in reverse order with their inverse patches
// and answered with the error (the store refuses the later ones itself: their numbers no longer
// follow its log), so memory never holds a change the store does not. A refusal is answered once the
// writes before it are durable, so that it never rests on a write that was not.
import type { Patch } from "immer";
import {
  type BatchResult,
  LiveSystem,
  type LiveTarget,
  type Operation,
  type OperationResult,
  createLiveSystem,
  randomIds,
} from "../../live/index.js";
import {
  type PanelBatchResult,
  type PanelLiveSystem,
  type PanelOperationResult,
  createPanelLiveSystem,
} from "../../legacy1/index.js";
import { type Issue, SnapshotError, parseSnapshot } from "../../model/index.js";
import { type Store, type StoredChange, type StoredKind, StoreError, StoreUnavailableError } from "./store.js";
import type { OutboxEntry } from "./webhookStore.js";

/** One accepted write, as the outbox hook sees it (before it is stored). */
export interface AcceptedWrite {
  readonly operation: Operation;
  /** The snapshot before and after the write. */
  readonly before: unknown;
  readonly after: unknown;
  readonly patches: readonly Patch[];
  /** Its inverse patches: with keyed patches (L21), they and `patches` say what changed, and `before`/`after` may be the live state itself. */
  readonly inversePatches?: readonly Patch[];
  /** When it was accepted (ISO 8601, UTC): the time stored with it. */
  readonly time: string;
}

/** What `openDurableSystem` did at start-up. */
export type StartedFrom =
  | { readonly how: "imported" }
  | { readonly how: "loaded"; readonly seq: number; readonly snapshotSeq: number; readonly replayed: number };

/** The live system of either architecture, seen through what the server needs. */
export type DurableLive =
  | { readonly kind: "system"; readonly live: LiveSystem }
  | { readonly kind: "panel"; readonly live: PanelLiveSystem };

/** Either architecture's live system through the one interface both implement: applied to without asking which. */
export type AnyLiveSystem = LiveTarget<
  LiveSystem["snapshot"] | PanelLiveSystem["snapshot"],
  LiveSystem["engine"] | PanelLiveSystem["engine"],
  OperationResult | PanelOperationResult,
  BatchResult | PanelBatchResult
>;

/** Options of openDurableSystem. */
export interface DurableSystemOptions {
  /** The snapshot (JSON) to import when the store is empty, and its kind. */
  readonly initial?: { readonly kind: StoredKind; readonly json: unknown };
  /** Take a snapshot after this many changes since the last one; default 1000. */
  readonly snapshotEvery?: number;
  /** Clock of the stored times and of the live system; default Date.now. */
  readonly now?: () => number;
  /** Told about a snapshot that could not be stored (the log still has every change); default: ignored. */
  readonly onSnapshotError?: (e: unknown) => void;
  /**
   * The webhook events of an accepted write, stored in the same transaction as the write (the
   * store's `append`); `stored` is told once they are durable. Default: none.
   */
  readonly outbox?: {
    readonly forWrite: (write: AcceptedWrite) => readonly OutboxEntry[];
    readonly stored: (entries: readonly OutboxEntry[]) => void;
  };
}

/** A live system whose accepted writes are durable. */
export interface DurableSystem {
  readonly kind: StoredKind;
  /** The live system (reads go straight to its `apply`; writes must go through `write`). */
  readonly target: DurableLive;
  readonly startedFrom: StartedFrom;
  /** The store itself, for what is kept beside the system (reports); writes of the system go through `write`. */
  readonly store: Store;
  /** The sequence number of the last stored change. */
  seq(): number;
  /**
   * Applies a write at once and resolves once it is stored (refusals store nothing, and are answered
   * once the writes before them are stored). Writes apply in the order of the calls, and the log
   * holds them in that order.
   * @param prepare - run just before the write is applied (the snapshot is then the one it applies
   *   to): answers the operation to apply, or throws to refuse it (nothing is applied or stored).
   */
  write(op: Operation, prepare?: (op: Operation) => Operation): Promise<OperationResult | PanelOperationResult>;
  /** Waits for writes in progress, stores a snapshot if changes came since the last, closes the store. */
  close(): Promise<void>;
  /**
   * Tells `listener` the last stored change (`seq()`) each time it advances, and when writes applied
   * in memory were undone; answers a function that stops telling. Optional: a wrapper may lack it.
   */
  watch?(listener: (seq: number) => void): () => void;
  /** The change whose state memory holds: `seq()` and the writes applied but not yet stored. Optional as `watch`. */
  applied?(): number;
}

/**
 * The live system (2.0 or 1.0) of a snapshot, or the problems that keep it from loading.
 * @param plainJson - `json` is what `JSON.parse` just made and nothing else holds it (a store's
 *   StoredState.snapshot): validated without parseSnapshot's defensive copy of it.
 */
export function createTarget(
  kind: StoredKind,
  json: unknown,
  now: () => number,
  plainJson = false,
): DurableLive | readonly Issue[] {
  if (kind === "system") {
    // Stored JSON: createLiveSystem without the defensive copy (about a fifth of the validation at 100,000 holders).
    let live: LiveSystem;
    if (plainJson) {
      const parsed = parseSnapshot(json, { plainJson: true });
      if (!parsed.ok) return parsed.issues;
      live = new LiveSystem(parsed.value, randomIds, now);
    } else {
      const r = createLiveSystem(json, { now });
      if (!r.ok) return r.issues;
      live = r.value;
    }
    // Before the server listens: no request waits for the write indexes.
    live.prepareWrites();
    return { kind, live };
  }
  const r = createPanelLiveSystem(json, { now });
  return r.ok ? { kind, live: r.value } : r.issues;
}

/** Changes replayed by one applyPatches: one copy of each list and one validation per batch. */
const REPLAY_BATCH = 100;

/**
 * Applies stored changes to `target` in order, a batch of changes' patches at a time (one copy of
 * each list and one validation per batch, where one change at a time pays them for each); a batch
 * that does not apply is applied change by change, to find the change that does not. `applied` is
 * told the last change applied after each step.
 * @returns the first change that does not apply and why (every change before it is applied), or null.
 */
export function applyChanges(
  target: DurableLive,
  changes: readonly StoredChange[],
  applied: (seq: number) => void = () => undefined,
): { readonly seq: number; readonly issues: readonly Issue[] } | null {
  const live: AnyLiveSystem = target.live;
  const apply = (patches: Patch[]) => live.applyPatches(patches);
  for (let i = 0; i < changes.length; i += REPLAY_BATCH) {
    const batch = changes.slice(i, i + REPLAY_BATCH);
    if (batch.length > 1 && apply(batch.flatMap((c) => c.patches as Patch[])).ok) {
      applied(batch.at(-1)!.seq);
      continue;
    }
    for (const c of batch) {
      const r = apply(c.patches as Patch[]);
      if (!r.ok) return { seq: c.seq, issues: r.issues };
      applied(c.seq);
    }
  }
  return null;
}

/**
 * Replays stored changes on `target` (applyChanges).
 * @throws StoreError naming the first change that does not replay.
 */
function replay(target: DurableLive, changes: readonly StoredChange[]): void {
  const bad = applyChanges(target, changes);
  if (bad !== null)
    throw new StoreError(`change ${bad.seq} of the log does not replay: ${bad.issues.map((x) => x.message).join(" ")}`);
}

/**
 * Opens the system a store holds (importing `initial` into an empty store).
 * @throws SnapshotError when the snapshot to import is invalid; StoreError when the store is empty
 *   and nothing is given to import, or its content does not replay.
 */
export async function openDurableSystem(store: Store, options: DurableSystemOptions = {}): Promise<DurableSystem> {
  const now = options.now ?? Date.now;
  const every = options.snapshotEvery ?? 1000;
  if (!Number.isSafeInteger(every) || every < 1)
    throw new RangeError(`snapshotEvery must be a positive integer, got ${String(every)}`);
  const stored = await store.load();
  let target: DurableLive;
  let startedFrom: StartedFrom;
  if (stored === null) {
    if (options.initial === undefined)
      throw new StoreError("the database is empty: give a snapshot to import (--system FILE or --panel FILE)");
    const made = createTarget(options.initial.kind, options.initial.json, now);
    if (!("kind" in made)) throw new SnapshotError(made);
    target = made;
    await store.init(made.kind, made.live.snapshot, new Date(now()).toISOString());
    startedFrom = { how: "imported" };
  } else {
    // The store's JSON.parse made the snapshot for this call alone: it is validated as it is.
    const made = createTarget(stored.kind, stored.snapshot, now, true);
    if (!("kind" in made))
      throw new StoreError(
        `the stored snapshot (change ${stored.snapshotSeq}) is not valid: ${made.map((i) => i.message).join(" ")}`,
      );
    target = made;
    replay(target, stored.changes);
    startedFrom = { how: "loaded", seq: stored.seq, snapshotSeq: stored.snapshotSeq, replayed: stored.changes.length };
  }
  const durable = new Durable(store, target, stored?.seq ?? 0, stored?.snapshotSeq ?? 0, every, options, now);
  return {
    kind: target.kind,
    target,
    startedFrom,
    store,
    seq: () => durable.committed,
    write(op, prepare) {
      try {
        return durable.write(op, prepare);
      } catch (e) {
        // A live system that throws (a bug, not a refusal): the caller gets a rejection, as from any write.
        return Promise.reject(e);
      }
    },
    close: () => durable.close(),
    watch: (listener) => {
      durable.listeners.add(listener);
      return () => durable.listeners.delete(listener);
    },
    applied: () => durable.applied,
  };
}

type AnyResult = OperationResult | PanelOperationResult;

/**
 * A write applied in memory whose append is not answered yet, or a refusal (or a throwing `prepare`)
 * that came after such a write: answered in turn, once the writes before it are.
 */
interface InFlight {
  /** Its change; for a refusal, the change before it. */
  readonly seq: number;
  /** What it is answered: its result, or the error a refusal's `prepare` threw. */
  readonly outcome: { readonly result: AnyResult } | { readonly thrown: unknown };
  readonly inverse: readonly Patch[];
  readonly outbox: readonly OutboxEntry[];
  /** Its answer: resolved once it is durable (after the writes before it), rejected if it is undone. */
  readonly answer: Promise<AnyResult>;
  readonly resolve: (r: AnyResult) => void;
  readonly reject: (e: unknown) => void;
  /** Stored durably (a refusal: from the start, it waits only for the writes before it). */
  durable: boolean;
  /** The store did not take it at its number: it fails once the writes before it are answered (notNext). */
  notTaken?: StoreUnavailableError;
}

/** The state of an open durable system: its writes in flight and its snapshots. */
class Durable {
  /** The last change stored durably (and answered). */
  committed: number;
  /** The last change applied in memory: the state `target.live` holds is the state after it. */
  applied: number;
  /** Writes applied and handed to the store, not yet answered, in log order. */
  readonly inFlight: InFlight[] = [];
  /** Set when a failed write could not be undone: memory and log disagree, so nothing more is written. */
  broken: StoreError | undefined;
  closing: Promise<void> | undefined;
  /** The last stored snapshot's change. */
  snapshotSeq: number;
  /** The snapshot being stored. */
  storing: { readonly seq: number; readonly done: Promise<void> } | undefined;
  /** The next snapshot to store, read when memory held the state of its change; stored once that is durable. */
  candidate: { readonly seq: number; readonly snapshot: unknown } | undefined;
  readonly live: AnyLiveSystem;
  /** Told when `committed` advanced or writes were undone (DurableSystem.watch). */
  readonly listeners = new Set<(seq: number) => void>();

  constructor(
    readonly store: Store,
    readonly target: DurableLive,
    seq: number,
    snapshotSeq: number,
    readonly every: number,
    readonly options: DurableSystemOptions,
    readonly now: () => number,
  ) {
    this.committed = this.applied = seq;
    this.snapshotSeq = snapshotSeq;
    this.live = target.live;
  }

  iso(): string {
    return new Date(this.now()).toISOString();
  }

  write(asked: Operation, prepare?: (op: Operation) => Operation): Promise<AnyResult> {
    if (this.closing !== undefined) return Promise.reject(new StoreError("the store is closing"));
    if (this.broken !== undefined) return Promise.reject(this.broken);
    let op: Operation;
    try {
      op = prepare === undefined ? asked : prepare(asked);
    } catch (e) {
      return this.afterWritesBefore({ thrown: e });
    }
    const target = this.target;
    // A 2.0 system's events come from the patches and their inverse (L21): its state is read
    // without a copy. A 1.0 panel's snapshot is a new object after each change anyway.
    const before = target.live.current;
    const result = this.live.apply(op);
    if (!result.ok || !("patches" in result)) return this.afterWritesBefore({ result });
    const time = this.iso();
    let outbox: readonly OutboxEntry[];
    try {
      outbox =
        this.options.outbox?.forWrite({
          operation: op,
          before,
          after: target.live.current,
          patches: result.patches as Patch[],
          inversePatches: result.inversePatches as Patch[],
          time,
        }) ?? [];
    } catch (e) {
      this.undo([result.inversePatches as Patch[]], e);
      return Promise.reject(e);
    }
    const w = this.track(++this.applied, { result }, result.inversePatches as Patch[], outbox);
    this.capture(w.seq);
    // Handed over now, not once the writes before it are durable: the log's order is the order of
    // the calls, which is the order they were applied in.
    this.store
      .appendAt(w.seq, [{ operation: op, patches: result.patches, time }], ...(outbox.length > 0 ? [outbox] : []))
      .then(
        (ok) => (ok ? this.stored(w) : this.notNext(w)),
        (e: unknown) => this.failed(w, e),
      );
    return w.answer;
  }

  /**
   * The store did not take `w` at its number: a write before it failed (its failure then undoes `w`
   * too, with its error) or the log holds changes this system did not write.
   */
  notNext(w: InFlight): void {
    w.notTaken = new StoreUnavailableError(`change ${w.seq} could not be stored: the log did not end at ${w.seq - 1}`);
    if (this.inFlight[0] === w) this.failed(w, w.notTaken);
  }

  /** A write applied in memory (or a refusal after one), now in flight. */
  track(
    seq: number,
    outcome: InFlight["outcome"],
    inverse: readonly Patch[],
    outbox: readonly OutboxEntry[],
  ): InFlight {
    let resolve!: (r: AnyResult) => void;
    let reject!: (e: unknown) => void;
    const answer = new Promise<AnyResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const w: InFlight = { seq, outcome, inverse, outbox, answer, resolve, reject, durable: false };
    this.inFlight.push(w);
    return w;
  }

  /** A refusal: answered now, or in turn after the writes in flight (with their error if one fails). */
  afterWritesBefore(outcome: InFlight["outcome"]): Promise<AnyResult> {
    if (this.inFlight.length === 0)
      return "result" in outcome ? Promise.resolve(outcome.result) : Promise.reject(outcome.thrown);
    const w = this.track(this.applied, outcome, [], []);
    w.durable = true;
    return w.answer;
  }

  /** A write is durable: it and the durable writes after it are answered, in log order. */
  stored(w: InFlight): void {
    w.durable = true;
    const was = this.committed;
    while (this.inFlight[0]?.durable === true) {
      const done = this.inFlight.shift()!;
      this.committed = done.seq;
      try {
        if (done.outbox.length > 0) this.options.outbox!.stored(done.outbox);
        if ("result" in done.outcome) done.resolve(done.outcome.result);
        else done.reject(done.outcome.thrown);
      } catch (e) {
        done.reject(e);
      }
    }
    if (this.committed !== was) this.tell();
    const head = this.inFlight[0];
    if (head?.notTaken !== undefined) this.failed(head, head.notTaken);
    this.trySnapshot();
  }

  /** Tells the watchers the last stored change; one that throws stops no other. */
  tell(): void {
    for (const listener of this.listeners)
      try {
        listener(this.committed);
      } catch {
        // A watcher's failure is its own.
      }
  }

  /** A write could not be stored: it and every write applied after it are undone and answered `e`. */
  failed(w: InFlight, e: unknown): void {
    const at = this.inFlight.indexOf(w);
    if (at < 0) return; // undone already, with an earlier write that failed
    const undone = this.inFlight.splice(at);
    this.applied = w.seq - 1;
    if (this.candidate !== undefined && this.candidate.seq >= w.seq) this.candidate = undefined;
    const error = this.undo(
      undone.map((u) => u.inverse).filter((inverse) => inverse.length > 0),
      e,
    );
    for (const u of undone) u.reject(error);
    this.tell();
  }

  /** Undoes writes (their inverse patches, the last first); answers the error to give their writers. */
  undo(inverses: readonly (readonly Patch[])[], e: unknown): unknown {
    for (let i = inverses.length - 1; i >= 0; i--) {
      const undone = this.live.applyPatches(inverses[i]!);
      if (!undone.ok) {
        this.broken = new StoreError(`a write could not be stored nor undone: ${(e as Error)?.message ?? String(e)}`);
        return this.broken;
      }
    }
    return e;
  }

  /** Memory holds the state of change `seq`: read it as the next snapshot if one is due. */
  capture(seq: number): void {
    if (this.closing !== undefined || this.candidate !== undefined) return;
    if (seq - (this.storing?.seq ?? this.snapshotSeq) < this.every) return;
    this.candidate = { seq, snapshot: this.target.live.snapshot };
    this.trySnapshot();
  }

  /** Stores the candidate snapshot in the background once its change is durable and no other is being stored. */
  trySnapshot(): void {
    const c = this.candidate;
    if (c === undefined || this.storing !== undefined || c.seq > this.committed || this.closing !== undefined) return;
    this.candidate = undefined;
    this.storing = {
      seq: c.seq,
      done: (async () => {
        let stored = false;
        try {
          await this.store.snapshot(c.seq, c.snapshot, this.iso());
          this.snapshotSeq = c.seq;
          stored = true;
        } catch (e) {
          this.options.onSnapshotError?.(e);
        } finally {
          this.storing = undefined;
        }
        // Writes that came while it was being stored may already call for the next one (after a
        // failure, the next write tries again: a failing disk is not retried in a loop).
        if (this.candidate !== undefined) this.trySnapshot();
        else if (stored) this.capture(this.applied);
      })(),
    };
  }

  /** Waits for the writes in flight, stores a snapshot if changes came since the last, closes the store. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.inFlight.length > 0) await this.inFlight.at(-1)!.answer.catch(() => undefined);
      await this.storing?.done;
      this.candidate = undefined;
      // Nothing in flight: memory holds the state of the last stored change.
      if (this.committed !== this.snapshotSeq)
        try {
          await this.store.snapshot(this.committed, this.target.live.snapshot, this.iso(), "now");
        } catch (e) {
          this.options.onSnapshotError?.(e);
        }
      await this.store.close();
    })();
    return this.closing;
  }
}
