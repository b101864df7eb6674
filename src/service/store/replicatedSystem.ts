// One replica of a system kept in a shared store (PostgreSQL): N processes on one database, each
// holding the whole live system in memory and answering reads and decisions from it, never from the
// database. Each follows the change log: a notification for promptness, a poll and a catch-up after
// every reconnect by sequence number for safety (a missed notification, a reconnect or a restart
// loses nothing).
//
// A write is checked against the live system without changing it (LiveSystem.check; a 1.0 panel:
// applied and undone at once) and appended at the next sequence number; only once the log has it is
// it applied and answered. The writes that queue
// while one append is on its way are checked in order and stored together in the next (group commit). So reads and decisions
// never see a write the log does not hold. If another replica appended that sequence number first
// (optimistic concurrency), the replica catches up and applies the write again, so it is validated
// against every change before it: two replicas never both accept conflicting writes (PG2). Writes and
// catch-ups of one replica run one at a time, in one queue.
import type { Patch } from "immer";
import { type Operation, type OperationResult, applySnapshotPatches } from "../../live/index.js";
import type { PanelOperationResult } from "../../legacy1/index.js";
import { SnapshotError } from "../../model/index.js";
import {
  type DurableLive,
  type DurableSystem,
  type DurableSystemOptions,
  type StartedFrom,
  applyChanges,
  createTarget,
  type AnyLiveSystem,
} from "./durableSystem.js";
import { type SharedStore, type StoredKind, StoreError, StoreUnavailableError } from "./store.js";
import type { OutboxEntry } from "./webhookStore.js";

/** Options of openReplicatedSystem. */
export interface ReplicatedSystemOptions {
  /** The snapshot (JSON) to import when the store is empty, and its kind. */
  readonly initial?: { readonly kind: StoredKind; readonly json: unknown };
  /** The snapshot writer stores a snapshot once this many changes came after the last; default 1000. */
  readonly snapshotEvery?: number;
  /** Catch up by sequence number this often (milliseconds) even without notifications; default 1000. */
  readonly pollMs?: number;
  /** Attempts of one write when other replicas keep appending first; default 50 (then 503). */
  readonly maxAttempts?: number;
  readonly now?: () => number;
  /** Told about a snapshot that could not be stored, a lost connection, a failed catch-up. */
  readonly onEvent?: (message: string) => void;
  /** The webhook events of accepted writes, stored in the transaction of their append (as openDurableSystem's). */
  readonly outbox?: DurableSystemOptions["outbox"];
}

/** What a replica reports about its freshness (`GET /healthz`). */
export interface ReplicaHealth {
  /** "ok", or "failed" when the replica cannot follow the log any more (it must be restarted; PG5). */
  readonly status: "ok" | "failed";
  /** The last change of the log this replica has applied: what its answers reflect. */
  readonly revision: number;
  /** The last change this replica knows the log holds (from notifications and polls). */
  readonly latest: number;
  /** `latest − revision`: changes known but not yet applied. */
  readonly lag: number;
  /** While `lag` > 0, milliseconds since this replica last read the log successfully; 0 when caught up. */
  readonly lagMs: number;
  /** Writes of this replica that found their sequence number taken by another replica, and were checked again. */
  readonly racesLost: number;
  /** Whether this replica is the one storing snapshots (it holds the election lock). */
  readonly snapshotWriter: boolean;
  /** Why the replica failed, when it did. */
  readonly error?: string;
}

/** A replica: a DurableSystem whose writes go to a shared log, plus freshness. */
export interface ReplicatedSystem extends DurableSystem {
  /** The log sequence number this replica's state reflects (the revision of its answers). */
  revision(): number;
  /**
   * Resolves true once this replica has applied change `seq` (at once if it has), false after `timeoutMs`.
   * Asking triggers a catch-up, so it does not wait for the next poll.
   */
  waitFor(seq: number, timeoutMs: number): Promise<boolean>;
  health(): ReplicaHealth;
  /** The sequence number an accepted write (a result `write` resolved to) got in the log. */
  seqOf(result: OperationResult | PanelOperationResult): number | undefined;
}

/** How many changes one catch-up query reads. */
const BATCH = 500;
/** The most writes stored in one append (group commit: the writes that queued while the last was stored). */
const MAX_BATCH = 64;

/**
 * Opens (importing `initial` into an empty store) and starts following the shared log.
 * @throws SnapshotError when the snapshot to import is invalid; StoreError when the store is empty and
 *   nothing is given, its content does not replay, or the log cannot be followed.
 */
export async function openReplicatedSystem(
  store: SharedStore,
  options: ReplicatedSystemOptions = {},
): Promise<ReplicatedSystem> {
  const now = options.now ?? Date.now;
  const every = options.snapshotEvery ?? 1000;
  if (!Number.isSafeInteger(every) || every < 1)
    throw new RangeError(`snapshotEvery must be a positive integer, got ${String(every)}`);
  const pollMs = options.pollMs ?? 1000;
  const maxAttempts = options.maxAttempts ?? 50;
  const tell = options.onEvent ?? (() => undefined);
  const iso = () => new Date(now()).toISOString();

  let stored = await store.load();
  let imported = false;
  if (stored === null) {
    if (options.initial === undefined)
      throw new StoreError("the database is empty: give a snapshot to import (--system FILE or --panel FILE)");
    const made = createTarget(options.initial.kind, options.initial.json, now);
    if (!("kind" in made)) throw new SnapshotError(made);
    try {
      await store.init(made.kind, made.live.snapshot, iso());
      imported = true;
    } catch (e) {
      // Another replica imported first (PG4): serve what it imported.
      if (!(e instanceof StoreError) || !/already holds/.test(e.message)) throw e;
    }
    stored = await store.load();
    if (stored === null) throw new StoreError("the database is empty after the import");
  }
  const made = createTarget(stored.kind, stored.snapshot, now);
  if (!("kind" in made))
    throw new StoreError(
      `the stored snapshot (change ${stored.snapshotSeq}) is not valid: ${made.map((i) => i.message).join(" ")}`,
    );
  const target: DurableLive = made;
  const live: AnyLiveSystem = target.live;
  const applyPatches = (patches: readonly unknown[]) => live.applyPatches(patches as Patch[]);
  const unreplayable = applyChanges(target, stored.changes);
  if (unreplayable !== null)
    throw new StoreError(
      `change ${unreplayable.seq} of the log does not replay: ${unreplayable.issues.map((i) => i.message).join(" ")}`,
    );
  const startedFrom: StartedFrom = imported
    ? { how: "imported" }
    : { how: "loaded", seq: stored.seq, snapshotSeq: stored.snapshotSeq, replayed: stored.changes.length };

  let applied = stored.seq;
  let latest = applied;
  let lastRead = now();
  let snapshotSeq = stored.snapshotSeq;
  let failed: string | undefined;
  let writer = false;
  let racesLost = 0;
  let queue: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;
  const waiters = new Set<{ seq: number; done: (ok: boolean) => void }>();
  const seqs = new WeakMap<object, number>();

  function enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = queue.then(task);
    queue = run.catch(() => undefined);
    return run;
  }

  function advance(seq: number): void {
    applied = seq;
    if (latest < seq) latest = seq;
    for (const w of waiters) if (w.seq <= applied) w.done(true);
  }

  function fail(why: string): void {
    if (failed !== undefined) return;
    failed = why;
    tell(`this replica stopped following the log and must be restarted: ${why}`);
  }

  /** Applies every change after `applied` the log holds (runs in the queue). */
  async function catchUpNow(): Promise<void> {
    if (failed !== undefined) return;
    for (;;) {
      const changes = await store.changesAfter(applied, BATCH);
      lastRead = now();
      if (changes === null)
        return fail(`the log no longer holds change ${applied + 1} (compacted while this replica was behind)`);
      // The changes that came since the last catch-up, applied together (other replicas' writes
      // under load come several at a time): one copy of each list and one validation for them all.
      const bad = applyChanges(target, changes, advance);
      if (bad !== null)
        return fail(`change ${bad.seq} of the log does not apply: ${bad.issues.map((i) => i.message).join(" ")}`);
      if (changes.length < BATCH) break;
    }
    maybeSnapshot();
  }

  let catchUpQueued = false;
  function requestCatchUp(): void {
    if (catchUpQueued || closing !== undefined) return;
    catchUpQueued = true;
    void enqueue(async () => {
      catchUpQueued = false;
      await catchUpNow();
    }).catch((e) =>
      tell(`catching up with the log failed (retried at the next poll): ${(e as Error)?.message ?? String(e)}`),
    );
  }

  let snapshotting = false;
  /** The snapshot writer (the election lock's holder) stores a snapshot every `every` changes, off the queue. */
  function maybeSnapshot(): void {
    if (snapshotting || closing !== undefined || applied - snapshotSeq < every) return;
    snapshotting = true;
    const at = applied;
    // The snapshot is immutable (immer): the one of change `at` can be stored while later changes apply.
    const snap = target.live.snapshot;
    void (async () => {
      try {
        writer = await store.isSnapshotWriter();
        if (writer) await store.snapshot(at, snap, iso());
        snapshotSeq = at; // not the writer: another replica stores it; try again `every` changes later
      } catch (e) {
        tell(
          `storing a snapshot failed (the change log still has every change): ${(e as Error)?.message ?? String(e)}`,
        );
      } finally {
        snapshotting = false;
      }
    })();
  }

  interface Pending {
    readonly asked: Operation;
    readonly prepare: ((op: Operation) => Operation) | undefined;
    readonly resolve: (r: OperationResult | PanelOperationResult) => void;
    readonly reject: (e: unknown) => void;
  }
  type Outcome = { readonly result: OperationResult | PanelOperationResult } | { readonly error: unknown };
  const pending: Pending[] = [];
  let flushQueued = false;

  /** Takes the writes waiting (up to MAX_BATCH) and stores them in one append: group commit. */
  async function flush(): Promise<void> {
    flushQueued = false;
    // A write with role checks (prepare) reads the stored snapshot: it never joins writes before it.
    let n = 1;
    while (n < Math.min(pending.length, MAX_BATCH) && pending[n]!.prepare === undefined) n++;
    const batch = pending.splice(0, n);
    if (pending.length > 0) queueFlush();
    try {
      const outcomes = await writeBatch(batch);
      batch.forEach((p, i) => {
        const o = outcomes[i]!;
        if ("result" in o) p.resolve(o.result);
        else p.reject(o.error);
      });
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
  }
  function queueFlush(): void {
    if (flushQueued) return;
    flushQueued = true;
    void enqueue(flush);
  }

  /**
   * Checks the writes in order (each sees the ones before it), stores the accepted ones at the next
   * sequence numbers in one transaction, and answers each; on a lost race, all over again after
   * catching up. Refusals are answered only once the accepted writes before them are stored, so that
   * a refusal never rests on a write that was not.
   */
  async function writeBatch(batch: readonly Pending[]): Promise<Outcome[]> {
    for (let attempt = 1; ; attempt++) {
      if (failed !== undefined) throw new StoreUnavailableError(`this replica cannot write: ${failed}`);
      // Known to be behind: catch up first rather than lose the race for sure.
      if (latest > applied) await catchUpNow();
      const outcomes: Outcome[] = [];
      const accepted: {
        readonly op: Operation;
        readonly result: object;
        readonly patches: readonly unknown[];
        readonly before: () => unknown;
        readonly after: () => unknown;
      }[] = [];
      if (target.kind === "system") {
        // Checked without changing the live system (preview): reads and decisions never see a write the log does not hold.
        const ops: Operation[] = [];
        const prepared = batch.map((p): Operation | { readonly error: unknown } => {
          try {
            const op = p.prepare === undefined ? p.asked : p.prepare(p.asked);
            ops.push(op);
            return op;
          } catch (error) {
            return { error };
          }
        });
        const results = target.live.check(ops);
        // The snapshots before and after each accepted write, made only when the outbox hook reads them
        // (the live system is not changed by check: each after is the one before with its patches).
        let previous: () => unknown = (
          (s) => () =>
            s
        )(target.live.snapshot);
        const chain = (patches: readonly unknown[]) => {
          const before = previous;
          let made: { readonly value: unknown } | undefined;
          const after = () => (made ??= { value: applySnapshotPatches(before() as object, patches as Patch[]) }).value;
          previous = after;
          return { before, after };
        };
        let k = 0;
        for (const x of prepared) {
          if ("error" in x) {
            outcomes.push(x);
            continue;
          }
          const result = results[k++]!;
          outcomes.push({ result });
          if (result.ok && "patches" in result)
            accepted.push({ op: x, result, patches: result.patches, ...chain(result.patches) });
        }
      } else {
        // A 1.0 panel has no preview: applied and undone in one synchronous stretch (no read runs in between).
        const inverses: (readonly unknown[])[] = [];
        for (const p of batch) {
          try {
            const op = p.prepare === undefined ? p.asked : p.prepare(p.asked);
            const before = target.live.snapshot;
            const result = target.live.apply(op);
            outcomes.push({ result });
            if (result.ok && "patches" in result) {
              const after = target.live.snapshot;
              accepted.push({ op, result, patches: result.patches, before: () => before, after: () => after });
              inverses.push(result.inversePatches);
            }
          } catch (error) {
            outcomes.push({ error });
          }
        }
        for (let i = inverses.length - 1; i >= 0; i--) {
          const undone = applyPatches(inverses[i]!);
          if (!undone.ok) {
            fail(`a write could not be undone before storing it: ${undone.issues.map((x) => x.message).join(" ")}`);
            throw new StoreError("a write could not be undone before storing it");
          }
        }
      }
      if (accepted.length === 0) return outcomes;
      const seq = applied + 1;
      const time = iso();
      const outbox: OutboxEntry[] = [];
      if (options.outbox !== undefined)
        for (const a of accepted)
          outbox.push(
            ...options.outbox.forWrite({
              operation: a.op,
              get before() {
                return a.before();
              },
              get after() {
                return a.after();
              },
              patches: a.patches as Patch[],
              time,
            }),
          );
      let appended: boolean;
      try {
        appended = await store.appendAt(
          seq,
          accepted.map((a) => ({ operation: a.op, patches: a.patches, time })),
          ...(outbox.length > 0 ? [outbox] : []),
        );
      } catch (e) {
        // The outcome is unknown (the commit may have happened): the log decides, read at the next catch-up.
        requestCatchUp();
        throw e;
      }
      if (appended) {
        for (const [i, a] of accepted.entries()) {
          const redone = applyPatches(a.patches);
          if (!redone.ok) {
            fail(`change ${seq + i}, just stored, does not apply: ${redone.issues.map((x) => x.message).join(" ")}`);
            break;
          }
          advance(seq + i);
          seqs.set(a.result, seq + i);
        }
        if (outbox.length > 0) options.outbox!.stored(outbox);
        maybeSnapshot();
        return outcomes;
      }
      // Another replica appended `seq` first: catch up, and the next attempt checks the writes again.
      racesLost++;
      if (attempt >= maxAttempts)
        throw new StoreUnavailableError(
          `the write lost ${attempt} races for the next change to other replicas; try again`,
        );
      await catchUpNow();
    }
  }

  const stopFollowing = await store.follow({
    onAppend(seq) {
      if (seq > latest) latest = seq;
      if (seq > applied) requestCatchUp();
    },
    onReconnect() {
      tell("following the change log again (reconnected); catching up");
      requestCatchUp();
    },
    onError(e) {
      tell(`the connection following the change log failed (reconnecting): ${(e as Error)?.message ?? String(e)}`);
    },
  });
  const poll = setInterval(requestCatchUp, pollMs);
  poll.unref();
  // A change may have come between the load and LISTEN.
  requestCatchUp();
  void store.isSnapshotWriter().then(
    (w) => (writer = w),
    () => undefined,
  );

  return {
    kind: target.kind,
    target,
    store,
    startedFrom,
    seq: () => applied,
    revision: () => applied,
    write(op, prepare) {
      if (closing !== undefined) return Promise.reject(new StoreError("the store is closing"));
      return new Promise((resolve, reject) => {
        pending.push({ asked: op, prepare, resolve, reject });
        queueFlush();
      });
    },
    waitFor(seq, timeoutMs) {
      if (applied >= seq) return Promise.resolve(true);
      requestCatchUp();
      return new Promise((resolveWait) => {
        const w = {
          seq,
          done: (ok: boolean) => {
            waiters.delete(w);
            clearTimeout(timer);
            resolveWait(ok);
          },
        };
        const timer = setTimeout(() => w.done(false), timeoutMs);
        waiters.add(w);
      });
    },
    seqOf: (result) => seqs.get(result),
    health() {
      return {
        status: failed === undefined ? "ok" : "failed",
        revision: applied,
        latest,
        lag: Math.max(0, latest - applied),
        lagMs: latest > applied ? now() - lastRead : 0,
        racesLost,
        snapshotWriter: writer,
        ...(failed !== undefined ? { error: failed } : {}),
      };
    },
    close() {
      closing ??= (async () => {
        clearInterval(poll);
        await queue;
        for (const w of waiters) w.done(false);
        await stopFollowing();
        await store.close();
      })();
      return closing;
    },
  };
}
