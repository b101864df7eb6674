// What a cloud node downloads and follows (semantics N13–N19): its system's snapshot at a revision,
// and the system's change log from the revision it holds, as JSON lines over one long-lived stream.
// The stream reads the log only when the connection takes what it was given (a pull stream: at most
// one batch waits in it, never more), follows the stored writes through the durable system's
// `watch`, says the system's revision in a keep-alive line, and ends when the node opens another
// feed, its token stops being valid, or its system is evicted or deleted (the node reconnects).
import { z } from "zod";
import { HttpError } from "../httpError.js";
import type { DurableSystem } from "../store/durableSystem.js";
import type { StoredChange } from "../store/store.js";

/** Bounds and pace of the feeds; every one can be set for tests. */
export interface FeedLimits {
  /** A keep-alive line this often (ms) (N16); default 15 s. */
  readonly keepAliveMs: number;
  /** The feed's token and system are checked this often (ms) (N18); default 1 s. */
  readonly checkMs: number;
  /** Changes read from the log and written at once; default 100. */
  readonly batch: number;
  /** How long a snapshot waits for the writes applied before it to be stored (ms) before 503; default 10 s. */
  readonly settleMs: number;
}

export const FEED_LIMITS: FeedLimits = { keepAliveMs: 15_000, checkMs: 1000, batch: 100, settleMs: 10_000 };

/** A line of the change feed: one stored change (N14), a keep-alive (N16), or why the feed ended early (N17). */
export const FEED_LINE = z.union([
  z.object({
    revision: z.number().int().min(1),
    time: z.string(),
    operation: z.unknown(),
    patches: z.array(z.unknown()),
  }),
  z.object({ keepAlive: z.literal(true), revision: z.number().int().min(0) }),
  z.object({ error: z.object({ status: z.number().int(), message: z.string() }) }),
]);

/** The snapshot answer (N13). */
export const SNAPSHOT_ANSWER = z.object({
  revision: z.number().int().min(0).describe("The change the snapshot is the state after"),
  snapshot: z.looseObject({}).describe("The system's whole snapshot"),
});

/** The message of a feed that cannot start, or go on, from a compacted revision (N17). */
export const goneMessage = (from: number) =>
  `The change log no longer holds the changes after revision ${from}: download the snapshot again and follow from its revision.`;

/**
 * The system's snapshot and the revision it is exactly the state after (N13). Memory may hold writes
 * applied but not yet stored: the snapshot then waits for them to be stored (its revision is the last
 * of them), and is taken again if one of them was undone.
 * @throws HttpError 503 when the writes before it are not stored within `settleMs`.
 */
export async function snapshotAtRevision(
  system: DurableSystem,
  settleMs = FEED_LIMITS.settleMs,
): Promise<{ revision: number; snapshot: unknown }> {
  const until = Date.now() + settleMs;
  for (;;) {
    const target = system.target;
    const at = system.applied?.() ?? system.seq();
    const snapshot = target.live.snapshot;
    if (system.seq() >= at) return { revision: at, snapshot };
    if (system.watch === undefined) throw new HttpError(503, "The system cannot tell when its writes are stored.");
    const left = until - Date.now();
    const stored =
      left > 0 &&
      (await new Promise<boolean>((resolve) => {
        const done = (ok: boolean) => {
          stop();
          clearTimeout(timer);
          resolve(ok);
        };
        const stop = system.watch!((seq) => {
          if ((system.applied?.() ?? seq) < at) done(false);
          else if (seq >= at) done(true);
        });
        const timer = setTimeout(() => done(false), left);
      }));
    if (stored) return { revision: at, snapshot };
    if (Date.now() >= until)
      throw new HttpError(503, "The system is storing writes: download the snapshot again in a moment.");
  }
}

/** What a feed follows: the system's stored revision, its log, and its stored writes. */
export interface FeedSource {
  /** The last stored change. */
  seq(): number;
  /** Up to `limit` stored changes after `seq`; null when the log no longer reaches back to `seq + 1`. */
  changesAfter(seq: number, limit: number): Promise<StoredChange[] | null>;
  /** Calls `listener` when changes were stored; answers a function that stops it. */
  watch(listener: () => void): () => void;
}

/** The feed source of a loaded system, or null when it cannot feed (a store without `changesAfter`, a wrapper without `watch`). */
export function feedSource(system: DurableSystem): FeedSource | null {
  const store = system.store;
  if (store.changesAfter === undefined || system.watch === undefined) return null;
  return {
    seq: () => system.seq(),
    changesAfter: (seq, limit) => store.changesAfter!(seq, limit),
    watch: (listener) => system.watch!(() => listener()),
  };
}

/**
 * Checks where a feed may start (N15): a revision beyond the system's is refused 409, one the log no
 * longer reaches back to 410; answers the first batch of changes after it.
 * @throws HttpError 409, 410.
 */
export async function firstChanges(source: FeedSource, from: number, batch: number): Promise<StoredChange[]> {
  const revision = source.seq();
  if (from > revision)
    throw new HttpError(409, "The node asked for changes after a revision the system has not reached.", [
      { path: "from", message: `The system is at revision ${revision}, not ${from}.` },
    ]);
  const changes = await source.changesAfter(from, batch);
  if (changes === null) throw new HttpError(410, goneMessage(from), [{ path: "from", message: goneMessage(from) }]);
  return changes;
}

const encoder = new TextEncoder();
const lineOf = (value: unknown) => `${JSON.stringify(value)}\n`;
const changeLine = (c: StoredChange) =>
  lineOf({ revision: c.seq, time: c.time, operation: c.operation, patches: c.patches });

/** One open feed. */
export interface Feed {
  readonly stream: ReadableStream<Uint8Array>;
  /**
   * Ends the feed (another feed of the node, a revoked token, an evicted system, a closing server).
   * `cut`: the connection is cut rather than closed after the last line (a closing server waits for none).
   */
  end(cut?: boolean): void;
}

/** What openFeed needs besides its source. */
export interface FeedOptions {
  readonly limits: FeedLimits;
  /** Whether the feed may go on (the node's token, its system loaded and not deleted), checked every `checkMs`. */
  readonly valid: () => boolean;
  /** Told once the feed ended, whatever ended it. */
  readonly ended: () => void;
}

/** State of one open feed, shared by its pull and its timers. */
interface FeedState {
  sent: number;
  first: StoredChange[] | null;
  keepAliveDue: boolean;
  over: boolean;
  wake: (() => void) | undefined;
}

/**
 * The change feed after `from` (N14–N18), starting with `first` (firstChanges), as a pull stream: the
 * log is read only when the connection took the last batch, a change only once it is stored.
 */
export function openFeed(source: FeedSource, from: number, first: StoredChange[], options: FeedOptions): Feed {
  const { limits } = options;
  const s: FeedState = { sent: from, first, keepAliveDue: false, over: false, wake: undefined };
  const rouse = () => {
    const wake = s.wake;
    s.wake = undefined;
    wake?.();
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const finish = () => {
    if (s.over) return;
    s.over = true;
    unwatch();
    clearInterval(keepAlive);
    clearInterval(check);
    rouse();
    options.ended();
  };
  const unwatch = source.watch(rouse);
  const keepAlive = setInterval(() => {
    s.keepAliveDue = true;
    rouse();
  }, limits.keepAliveMs);
  const check = setInterval(() => {
    if (!options.valid()) end();
  }, limits.checkMs);
  keepAlive.unref();
  check.unref();
  const end = (cut = false) => {
    if (s.over) return;
    // A connection that does not take what it was given is cut; any other is closed after its last line.
    const stalled = cut || (controller.desiredSize ?? 0) <= 0;
    finish();
    try {
      if (stalled) controller.error(new Error("the feed ended"));
      else controller.close();
    } catch {
      // Closed already by the pull.
    }
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => {
        controller = c;
      },
      pull: (c) => pullFeed(source, s, limits, c, finish),
      cancel: () => finish(),
    },
    { highWaterMark: 1 },
  );
  return { stream, end };
}

/** Gives the stream its next lines: stored changes after the last sent, else a due keep-alive, else waits for either. */
async function pullFeed(
  source: FeedSource,
  s: FeedState,
  limits: FeedLimits,
  c: ReadableStreamDefaultController<Uint8Array>,
  finish: () => void,
): Promise<void> {
  for (;;) {
    if (s.over) return;
    const stored = source.seq();
    if (s.sent < stored) {
      let changes: StoredChange[] | null;
      try {
        changes = s.first ?? (await source.changesAfter(s.sent, limits.batch));
      } catch {
        // The system's store went away (evicted, deleted): the node reconnects.
        if (s.over) return;
        finish();
        return c.close();
      }
      s.first = null;
      // Ended while the log was read (end() closed the stream).
      if (s.over) return;
      if (changes === null) {
        c.enqueue(encoder.encode(lineOf({ error: { status: 410, message: goneMessage(s.sent) } })));
        finish();
        return c.close();
      }
      // Only stored changes: a store may hold a write whose storing is not finished (N14).
      const lines = changes.filter((x) => x.seq <= stored && x.seq > s.sent).map(changeLine);
      if (lines.length > 0) {
        s.sent = Math.min(stored, changes.at(-1)!.seq);
        c.enqueue(encoder.encode(lines.join("")));
        return;
      }
    }
    s.first = null;
    if (s.keepAliveDue) {
      s.keepAliveDue = false;
      c.enqueue(encoder.encode(lineOf({ keepAlive: true, revision: source.seq() })));
      return;
    }
    await new Promise<void>((resolve) => {
      s.wake = resolve;
    });
  }
}

/** The open feeds of a service: at most one per node (N18). */
export class NodeFeeds {
  readonly #open = new Map<string, { readonly tenant: number; readonly feed: Feed }>();

  /** Keeps a new feed of the node, ending the one it had (N18); answers what forgets it once it ended. */
  add(systemId: string, cloudNodeId: string, tenant: number, feed: Feed): () => void {
    const key = `${systemId}|${cloudNodeId}`;
    this.#open.get(key)?.feed.end();
    const entry = { tenant, feed };
    this.#open.set(key, entry);
    return () => {
      if (this.#open.get(key) === entry) this.#open.delete(key);
    };
  }

  /** Ends the feeds of a tenant (evicted or deleted: its nodes reconnect). */
  endTenant(tenant: number): void {
    for (const { tenant: n, feed } of [...this.#open.values()]) if (n === tenant) feed.end();
  }

  /**
   * Ends every feed (a closing server): each one taking its lines is closed after its last line, and
   * only one that stopped taking them is cut (cutting them all made the HTTP layer log each one as a
   * failed response).
   */
  endAll(): void {
    for (const { feed } of [...this.#open.values()]) feed.end();
  }

  /** How many feeds are open. */
  get size(): number {
    return this.#open.size;
  }
}
