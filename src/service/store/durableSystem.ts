// A live system (2.0) or live panel (1.0) kept in a Store: started from the store's latest snapshot
// plus the changes after it, and every accepted write appended to the store before it is answered.
// Writes run one at a time (apply → append → resolve); a write whose append fails is undone in memory
// with its inverse patches, so memory never holds a change the store does not.
import type { Patch } from "immer";
import {
  type BatchResult,
  type LiveSystem,
  type LiveTarget,
  type Operation,
  type OperationResult,
  createLiveSystem,
} from "../../live/index.js";
import {
  type PanelBatchResult,
  type PanelLiveSystem,
  type PanelOperationResult,
  createPanelLiveSystem,
} from "../../legacy1/index.js";
import { type Issue, SnapshotError } from "../../model/index.js";
import { type Store, type StoredChange, type StoredKind, StoreError } from "./store.js";
import type { OutboxEntry } from "./webhookStore.js";

/** One accepted write, as the outbox hook sees it (before it is stored). */
export interface AcceptedWrite {
  readonly operation: Operation;
  /** The snapshot before and after the write. */
  readonly before: unknown;
  readonly after: unknown;
  readonly patches: readonly Patch[];
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
   * Applies a write and resolves once it is stored (refusals store nothing). Writes run one at a time.
   * @param prepare - run on its turn, just before the write is applied (the snapshot is then the one it
   *   applies to): answers the operation to apply, or throws to refuse it (nothing is applied or stored).
   */
  write(op: Operation, prepare?: (op: Operation) => Operation): Promise<OperationResult | PanelOperationResult>;
  /** Waits for writes in progress, stores a snapshot if changes came since the last, closes the store. */
  close(): Promise<void>;
}

/** The live system (2.0 or 1.0) of a snapshot, or the problems that keep it from loading. */
export function createTarget(kind: StoredKind, json: unknown, now: () => number): DurableLive | readonly Issue[] {
  if (kind === "system") {
    const r = createLiveSystem(json, { now });
    return r.ok ? { kind, live: r.value } : r.issues;
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
  const iso = () => new Date(now()).toISOString();
  const stored = await store.load();
  let target: DurableLive;
  let startedFrom: StartedFrom;
  let seq: number;
  if (stored === null) {
    if (options.initial === undefined)
      throw new StoreError("the database is empty: give a snapshot to import (--system FILE or --panel FILE)");
    const made = createTarget(options.initial.kind, options.initial.json, now);
    if (!("kind" in made)) throw new SnapshotError(made);
    target = made;
    await store.init(made.kind, made.live.snapshot, iso());
    startedFrom = { how: "imported" };
    seq = 0;
  } else {
    const made = createTarget(stored.kind, stored.snapshot, now);
    if (!("kind" in made))
      throw new StoreError(
        `the stored snapshot (change ${stored.snapshotSeq}) is not valid: ${made.map((i) => i.message).join(" ")}`,
      );
    target = made;
    replay(target, stored.changes);
    seq = stored.seq;
    startedFrom = { how: "loaded", seq, snapshotSeq: stored.snapshotSeq, replayed: stored.changes.length };
  }
  let snapshotSeq = stored?.snapshotSeq ?? 0;
  let queue: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;

  let snapshotting: Promise<void> | undefined;
  /** The last stored change's number and the state after it (what a snapshot stores). */
  let committed: { seq: number; snapshot: unknown } = { seq, snapshot: target.live.snapshot };

  /** Stores a snapshot of the current state unless one is being stored (or this one already is). */
  function takeSnapshot(): Promise<void> {
    if (snapshotting !== undefined || committed.seq === snapshotSeq) return snapshotting ?? Promise.resolve();
    // The last stored change and the state after it, as recorded when it was stored; not the live state read now:
    // this may run while a write is applied but not yet stored, and the two would not belong together.
    const { seq: at, snapshot: snap } = committed;
    snapshotting = (async () => {
      try {
        await store.snapshot(at, snap, iso());
        snapshotSeq = at;
      } catch (e) {
        options.onSnapshotError?.(e);
      } finally {
        snapshotting = undefined;
      }
      // Writes that came while it was being stored may already call for the next one (after a
      // failure, the next write tries again: a failing disk is not retried in a loop).
      if (closing === undefined && snapshotSeq === at && committed.seq - snapshotSeq >= every) void takeSnapshot();
    })();
    return snapshotting;
  }

  async function writeNow(
    asked: Operation,
    prepare?: (op: Operation) => Operation,
  ): Promise<OperationResult | PanelOperationResult> {
    const op = prepare === undefined ? asked : prepare(asked);
    const before = target.live.snapshot;
    const live: AnyLiveSystem = target.live;
    const result = live.apply(op);
    if (!result.ok || !("patches" in result)) return result;
    const time = iso();
    let outbox: readonly OutboxEntry[] = [];
    try {
      outbox =
        options.outbox?.forWrite({
          operation: op,
          before,
          after: target.live.snapshot,
          patches: result.patches as Patch[],
          time,
        }) ?? [];
      committed = {
        seq: await store.append(op, result.patches, time, ...(outbox.length > 0 ? [outbox] : [])),
        snapshot: target.live.snapshot,
      };
    } catch (e) {
      const undone = target.live.applyPatches(result.inversePatches as Patch[]);
      if (!undone.ok) throw new StoreError(`a write could not be stored nor undone: ${(e as Error).message}`);
      throw e;
    }
    if (outbox.length > 0) options.outbox!.stored(outbox);
    // In the background: the next writes do not wait for it (a snapshot of L takes about a second).
    if (committed.seq - snapshotSeq >= every) void takeSnapshot();
    return result;
  }

  return {
    kind: target.kind,
    target,
    startedFrom,
    store,
    seq: () => committed.seq,
    write(op, prepare) {
      if (closing !== undefined) return Promise.reject(new StoreError("the store is closing"));
      const run = queue.then(() => writeNow(op, prepare));
      queue = run.catch(() => undefined);
      return run;
    },
    close() {
      closing ??= (async () => {
        await queue;
        await snapshotting;
        await takeSnapshot();
        await store.close();
      })();
      return closing;
    },
  };
}
