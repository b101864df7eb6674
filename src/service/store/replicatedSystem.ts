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
import type { Operation, OperationResult } from "../../live/index.js";
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
import { type SharedStore, type StoredKind, type StoredState, StoreError, StoreUnavailableError } from "./store.js";
import type { OutboxEntry } from "./webhookStore.js";

/** Options of openReplicatedSystem. */
export interface ReplicatedSystemOptions {
  /** The snapshot (JSON) to import when the store is empty, and its kind. */
  readonly initial?: { readonly kind: StoredKind; readonly json: unknown };
  /** The snapshot writer stores a snapshot once this many changes came after the last; default 1000. */
  readonly snapshotEvery?: number;
  /**
   * Catch up by sequence number this often (milliseconds) even without notifications; default 1000.
   * 0: never by itself (a store space that polls every tenant it follows in one query tells it, T6).
   */
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
  const { stored, imported } = await loadOrImport(store, options, now);
  // The store's JSON.parse made the snapshot for this call alone: it is validated as it is.
  const made = createTarget(stored.kind, stored.snapshot, now, true);
  if (!("kind" in made))
    throw new StoreError(
      `the stored snapshot (change ${stored.snapshotSeq}) is not valid: ${made.map((i) => i.message).join(" ")}`,
    );
  const target: DurableLive = made;
  const unreplayable = applyChanges(target, stored.changes);
  if (unreplayable !== null)
    throw new StoreError(
      `change ${unreplayable.seq} of the log does not replay: ${unreplayable.issues.map((i) => i.message).join(" ")}`,
    );
  const startedFrom: StartedFrom = imported
    ? { how: "imported" }
    : { how: "loaded", seq: stored.seq, snapshotSeq: stored.snapshotSeq, replayed: stored.changes.length };
  const replica = new Replica(store, target, stored, options, every, now);
  await replica.follow(options.pollMs ?? 1000);
  return replica.system(startedFrom);
}

/** The stored state; an empty store first gets `options.initial` (unless another replica imports first, PG4). */
async function loadOrImport(
  store: SharedStore,
  options: ReplicatedSystemOptions,
  now: () => number,
): Promise<{ stored: StoredState; imported: boolean }> {
  let stored = await store.load();
  let imported = false;
  if (stored === null) {
    if (options.initial === undefined)
      throw new StoreError("the database is empty: give a snapshot to import (--system FILE or --panel FILE)");
    const made = createTarget(options.initial.kind, options.initial.json, now);
    if (!("kind" in made)) throw new SnapshotError(made);
    try {
      await store.init(made.kind, made.live.snapshot, new Date(now()).toISOString());
      imported = true;
    } catch (e) {
      // Another replica imported first (PG4): serve what it imported.
      if (!(e instanceof StoreError) || !/already holds/.test(e.message)) throw e;
    }
    stored = await store.load();
    if (stored === null) throw new StoreError("the database is empty after the import");
  }
  return { stored, imported };
}

interface Pending {
  readonly asked: Operation;
  readonly prepare: ((op: Operation) => Operation) | undefined;
  readonly resolve: (r: OperationResult | PanelOperationResult) => void;
  readonly reject: (e: unknown) => void;
}
type Outcome = { readonly result: OperationResult | PanelOperationResult } | { readonly error: unknown };
/** A write the live system accepted, with the state around it as the outbox hook reads it. */
interface Accepted {
  readonly op: Operation;
  readonly result: object;
  readonly patches: readonly unknown[];
  /** 2.0: what the outbox hook finds the change in (the snapshots are then the state itself). */
  readonly inversePatches?: readonly unknown[];
  readonly before: () => unknown;
  readonly after: () => unknown;
}

/** The state of one replica: how far it has applied the log, its write queue, its snapshot writer. */
class Replica {
  applied: number;
  latest: number;
  lastRead: number;
  snapshotSeq: number;
  failed: string | undefined;
  writer = false;
  racesLost = 0;
  queue: Promise<unknown> = Promise.resolve();
  closing: Promise<void> | undefined;
  readonly waiters = new Set<{ seq: number; done: (ok: boolean) => void }>();
  /** Told each change applied from the log (DurableSystem.watch). */
  readonly listeners = new Set<(seq: number) => void>();
  readonly seqs = new WeakMap<object, number>();
  catchUpQueued = false;
  snapshotting = false;
  readonly pending: Pending[] = [];
  flushQueued = false;
  readonly live: AnyLiveSystem;
  readonly tell: (message: string) => void;
  readonly maxAttempts: number;
  stopFollowing: () => Promise<void> = async () => undefined;
  poll: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly store: SharedStore,
    readonly target: DurableLive,
    stored: StoredState,
    readonly options: ReplicatedSystemOptions,
    readonly every: number,
    readonly now: () => number,
  ) {
    this.live = target.live;
    this.tell = options.onEvent ?? (() => undefined);
    this.maxAttempts = options.maxAttempts ?? 50;
    this.applied = stored.seq;
    this.latest = this.applied;
    this.lastRead = now();
    this.snapshotSeq = stored.snapshotSeq;
  }

  iso(): string {
    return new Date(this.now()).toISOString();
  }

  applyPatches(patches: readonly unknown[]) {
    return this.live.applyPatches(patches as Patch[]);
  }

  enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  advance = (seq: number): void => {
    this.applied = seq;
    if (this.latest < seq) this.latest = seq;
    for (const w of this.waiters) if (w.seq <= this.applied) w.done(true);
    for (const listener of this.listeners)
      try {
        listener(seq);
      } catch {
        // A watcher's failure is its own.
      }
  };

  fail(why: string): void {
    if (this.failed !== undefined) return;
    this.failed = why;
    this.tell(`this replica stopped following the log and must be restarted: ${why}`);
  }

  /** Applies every change after `applied` the log holds (runs in the queue). */
  async catchUpNow(): Promise<void> {
    if (this.failed !== undefined) return;
    for (;;) {
      const changes = await this.store.changesAfter(this.applied, BATCH);
      this.lastRead = this.now();
      if (changes === null)
        return this.fail(
          `the log no longer holds change ${this.applied + 1} (compacted while this replica was behind)`,
        );
      // The changes that came since the last catch-up, applied together (other replicas' writes
      // under load come several at a time): one copy of each list and one validation for them all.
      const bad = applyChanges(this.target, changes, this.advance);
      if (bad !== null)
        return this.fail(`change ${bad.seq} of the log does not apply: ${bad.issues.map((i) => i.message).join(" ")}`);
      if (changes.length < BATCH) break;
    }
    this.maybeSnapshot();
  }

  requestCatchUp = (): void => {
    if (this.catchUpQueued || this.closing !== undefined) return;
    this.catchUpQueued = true;
    void this.enqueue(async () => {
      this.catchUpQueued = false;
      await this.catchUpNow();
    }).catch((e) =>
      this.tell(`catching up with the log failed (retried at the next poll): ${(e as Error)?.message ?? String(e)}`),
    );
  };

  /** The snapshot writer (the election lock's holder) stores a snapshot every `every` changes, off the queue. */
  maybeSnapshot(): void {
    if (this.snapshotting || this.closing !== undefined || this.applied - this.snapshotSeq < this.every) return;
    this.snapshotting = true;
    const at = this.applied;
    // The snapshot is immutable (immer): the one of change `at` can be stored while later changes apply.
    const snap = this.target.live.snapshot;
    void (async () => {
      let stored = false;
      try {
        this.writer = await this.store.isSnapshotWriter();
        if (this.writer) await this.store.snapshot(at, snap, this.iso());
        this.snapshotSeq = at; // not the writer: another replica stores it; try again `every` changes later
        stored = true;
      } catch (e) {
        this.tell(
          `storing a snapshot failed (the change log still has every change): ${(e as Error)?.message ?? String(e)}`,
        );
      } finally {
        this.snapshotting = false;
      }
      // Changes applied while this one was stored may have reached the next snapshot: no later change
      // would ask again for it (a writer storing 2 while 3 and 4 arrive never stored 4). After a
      // failure the next applied change tries again, as before.
      if (stored) this.maybeSnapshot();
    })();
  }

  /** Takes the writes waiting (up to MAX_BATCH) and stores them in one append: group commit. */
  flush = async (): Promise<void> => {
    const pending = this.pending;
    this.flushQueued = false;
    // A write with role checks (prepare) reads the stored snapshot: it never joins writes before it.
    let n = 1;
    while (n < Math.min(pending.length, MAX_BATCH) && pending[n]!.prepare === undefined) n++;
    const batch = pending.splice(0, n);
    if (pending.length > 0) this.queueFlush();
    try {
      const outcomes = await this.writeBatch(batch);
      batch.forEach((p, i) => {
        const o = outcomes[i]!;
        if ("result" in o) p.resolve(o.result);
        else p.reject(o.error);
      });
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
  };

  queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    void this.enqueue(this.flush);
  }

  /**
   * Checks the writes in order (each sees the ones before it), stores the accepted ones at the next
   * sequence numbers in one transaction, and answers each; on a lost race, all over again after
   * catching up. Refusals are answered only once the accepted writes before them are stored, so that
   * a refusal never rests on a write that was not.
   */
  async writeBatch(batch: readonly Pending[]): Promise<Outcome[]> {
    for (let attempt = 1; ; attempt++) {
      if (this.failed !== undefined) throw new StoreUnavailableError(`this replica cannot write: ${this.failed}`);
      // Known to be behind: catch up first rather than lose the race for sure.
      if (this.latest > this.applied) await this.catchUpNow();
      const { outcomes, accepted } = this.target.kind === "system" ? this.checkSystem(batch) : this.checkPanel(batch);
      if (accepted.length === 0) return outcomes;
      if (await this.storeAccepted(accepted)) return outcomes;
      // Another replica appended `seq` first: catch up, and the next attempt checks the writes again.
      this.racesLost++;
      if (attempt >= this.maxAttempts)
        throw new StoreUnavailableError(
          `the write lost ${attempt} races for the next change to other replicas; try again`,
        );
      await this.catchUpNow();
    }
  }

  /** 2.0: checked without changing the live system (preview): reads and decisions never see a write the log does not hold. */
  checkSystem(batch: readonly Pending[]): { outcomes: Outcome[]; accepted: Accepted[] } {
    const outcomes: Outcome[] = [];
    const accepted: Accepted[] = [];
    const live = (this.target as Extract<DurableLive, { kind: "system" }>).live;
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
    const results = live.check(ops);
    // A write's keyed patches and inverse patches say what it changed (L21): the outbox hook reads
    // the state itself only for its system id, so no snapshot is made (the state is the one before
    // the batch until it is appended: check took every write back).
    const state = () => live.current;
    let k = 0;
    for (const x of prepared) {
      if ("error" in x) {
        outcomes.push(x);
        continue;
      }
      const result = results[k++]!;
      outcomes.push({ result });
      if (result.ok && "patches" in result)
        accepted.push({
          op: x,
          result,
          patches: result.patches,
          inversePatches: result.inversePatches,
          before: state,
          after: state,
        });
    }
    return { outcomes, accepted };
  }

  /** 1.0: a panel has no preview: applied and undone in one synchronous stretch (no read runs in between). */
  checkPanel(batch: readonly Pending[]): { outcomes: Outcome[]; accepted: Accepted[] } {
    const outcomes: Outcome[] = [];
    const accepted: Accepted[] = [];
    const live = this.target.live;
    const inverses: (readonly unknown[])[] = [];
    for (const p of batch) {
      try {
        const op = p.prepare === undefined ? p.asked : p.prepare(p.asked);
        const before = live.snapshot;
        const result = live.apply(op);
        outcomes.push({ result });
        if (result.ok && "patches" in result) {
          const after = live.snapshot;
          accepted.push({ op, result, patches: result.patches, before: () => before, after: () => after });
          inverses.push(result.inversePatches);
        }
      } catch (error) {
        outcomes.push({ error });
      }
    }
    for (let i = inverses.length - 1; i >= 0; i--) {
      const undone = this.applyPatches(inverses[i]!);
      if (!undone.ok) {
        this.fail(`a write could not be undone before storing it: ${undone.issues.map((x) => x.message).join(" ")}`);
        throw new StoreError("a write could not be undone before storing it");
      }
    }
    return { outcomes, accepted };
  }

  /** Appends the accepted writes at the next sequence numbers and applies them; false when another replica appended first. */
  async storeAccepted(accepted: readonly Accepted[]): Promise<boolean> {
    const seq = this.applied + 1;
    const time = this.iso();
    const outbox = this.outboxOf(accepted, time);
    let appended: boolean;
    try {
      appended = await this.store.appendAt(
        seq,
        accepted.map((a) => ({ operation: a.op, patches: a.patches, time })),
        ...(outbox.length > 0 ? [outbox] : []),
      );
    } catch (e) {
      // The outcome is unknown (the commit may have happened): the log decides, read at the next catch-up.
      this.requestCatchUp();
      throw e;
    }
    if (!appended) return false;
    // Applied together (one validation and one engine update for the group), as a catch-up would.
    const stored = accepted.map((a, i) => ({ seq: seq + i, operation: a.op, patches: a.patches, time }));
    const bad = applyChanges(this.target, stored, this.advance);
    for (const [i, a] of accepted.entries()) if (seq + i <= this.applied) this.seqs.set(a.result, seq + i);
    if (bad !== null)
      this.fail(`change ${bad.seq}, just stored, does not apply: ${bad.issues.map((x) => x.message).join(" ")}`);
    if (outbox.length > 0) this.options.outbox!.stored(outbox);
    this.maybeSnapshot();
    return true;
  }

  /** The webhook events of the accepted writes, stored in the transaction of their append. */
  outboxOf(accepted: readonly Accepted[], time: string): OutboxEntry[] {
    const outbox: OutboxEntry[] = [];
    if (this.options.outbox !== undefined)
      for (const a of accepted)
        outbox.push(
          ...this.options.outbox.forWrite({
            operation: a.op,
            get before() {
              return a.before();
            },
            get after() {
              return a.after();
            },
            patches: a.patches as Patch[],
            ...(a.inversePatches !== undefined ? { inversePatches: a.inversePatches as Patch[] } : {}),
            time,
          }),
        );
    return outbox;
  }

  /** Follows the log: notifications, a poll every `pollMs` (none for 0), and a first catch-up. */
  async follow(pollMs: number): Promise<void> {
    this.stopFollowing = await this.store.follow({
      onAppend: (seq) => {
        if (seq > this.latest) this.latest = seq;
        if (seq > this.applied) this.requestCatchUp();
      },
      onReconnect: () => {
        this.tell("following the change log again (reconnected); catching up");
        this.requestCatchUp();
      },
      onError: (e) => {
        this.tell(
          `the connection following the change log failed (reconnecting): ${(e as Error)?.message ?? String(e)}`,
        );
      },
    });
    if (pollMs > 0) {
      const poll = setInterval(this.requestCatchUp, pollMs);
      poll.unref();
      this.poll = poll;
    }
    // A change may have come between the load and LISTEN.
    this.requestCatchUp();
    void this.store.isSnapshotWriter().then(
      (w) => (this.writer = w),
      () => undefined,
    );
  }

  waitFor(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.applied >= seq) return Promise.resolve(true);
    this.requestCatchUp();
    return new Promise((resolveWait) => {
      const w = {
        seq,
        done: (ok: boolean) => {
          this.waiters.delete(w);
          clearTimeout(timer);
          resolveWait(ok);
        },
      };
      const timer = setTimeout(() => w.done(false), timeoutMs);
      this.waiters.add(w);
    });
  }

  health(): ReplicaHealth {
    const { failed, applied, latest } = this;
    return {
      status: failed === undefined ? "ok" : "failed",
      revision: applied,
      latest,
      lag: Math.max(0, latest - applied),
      lagMs: latest > applied ? this.now() - this.lastRead : 0,
      racesLost: this.racesLost,
      snapshotWriter: this.writer,
      ...(failed !== undefined ? { error: failed } : {}),
    };
  }

  /** The ReplicatedSystem seen by its callers. */
  system(startedFrom: StartedFrom): ReplicatedSystem {
    return {
      kind: this.target.kind,
      target: this.target,
      store: this.store,
      startedFrom,
      seq: () => this.applied,
      revision: () => this.applied,
      write: (op, prepare) => {
        if (this.closing !== undefined) return Promise.reject(new StoreError("the store is closing"));
        return new Promise((resolve, reject) => {
          this.pending.push({ asked: op, prepare, resolve, reject });
          this.queueFlush();
        });
      },
      waitFor: (seq, timeoutMs) => this.waitFor(seq, timeoutMs),
      seqOf: (result) => this.seqs.get(result),
      health: () => this.health(),
      watch: (listener) => {
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
      },
      applied: () => this.applied,
      close: () => {
        this.closing ??= (async () => {
          clearInterval(this.poll);
          await this.queue;
          for (const w of this.waiters) w.done(false);
          await this.stopFollowing();
          await this.store.close();
        })();
        return this.closing;
      },
    };
  }
}
