// The webhooks of `rsop serve --data`: subscriptions kept in the store, events put in the store's
// outbox (a write's in the write's own transaction, a decision's before the decision is answered),
// and one dispatcher loop per subscription that sends its events in outbox order, retrying with
// exponential backoff and jitter, and parks an event after its last attempt.
//
// Decisions never wait for a subscriber: recording an access event is one store transaction per
// request; delivery happens in the loops. The outbox is on disk, so a slow subscriber costs no
// memory (a loop holds one page of rows); its backlog of access events is capped, the oldest beyond
// the cap parked with reason `backlog` (docs/semantics.md W8).
//
// Notifications go only to addresses the destination policy allows (the transport's, HW1), and each
// carries its subscription's `sequence`, so a receiver can put an event that was parked and
// re-delivered back in its place (HW4).
//
// On a store shared by several replicas (PostgreSQL) every replica keeps the subscriptions in memory,
// re-read when any replica changes them (a notification) and before each subscription route, and
// stores the events of its own writes and decisions; only the replica elected dispatcher runs the
// loops' deliveries (W15–W18).
import type { Decision, SystemSnapshot } from "../../model/index.js";
import type { AcceptedWrite } from "../store/durableSystem.js";
import type { OutboxEntry, OutboxRow, WebhookStore } from "../store/webhookStore.js";
import { accessEvent } from "../../events/accessEvent.js";
import { changeEvents } from "../../events/changeEvents.js";
import { filterEvent } from "../../events/filterEvent.js";
import type { DestinationPolicy, Subscription, SubscriptionFields } from "./subscription.js";
import type { WebhookTransport } from "./transport.js";
import type { Generation } from "../../events/topics.js";
import type { SecrecyLevel, WebhookEvent } from "../../events/types.js";

/** Delivery settings. */
export interface WebhookOptions {
  /** Attempts per event before it is parked; default 8. */
  readonly attempts?: number;
  /** The delay after the first failed attempt (ms), doubled after each further one; default 1000. */
  readonly backoffMs?: number;
  /** The longest delay between two attempts (ms); default 300000 (5 minutes). */
  readonly maxBackoffMs?: number;
  /** Time limit of one attempt (ms); default 10000. */
  readonly timeoutMs?: number;
  /** Most access events waiting per subscription; the oldest beyond it are parked (reason `backlog`); default 10000. */
  readonly maxPendingAccess?: number;
  /** Clock (epoch ms); default Date.now. */
  readonly now?: () => number;
  /** Random numbers in [0, 1) for the jitter; default Math.random. */
  readonly random?: () => number;
  /** Told about parked events and store failures. */
  readonly log?: (line: string) => void;
  /**
   * Addresses (CIDRs, or single addresses) notifications may go to although they are refused by
   * default: loopback, link-local, private, shared, unique-local, unspecified, multicast (HW1).
   * Default none. A malformed entry throws a RangeError when the service opens. Read by whoever
   * builds the transport (`httpsTransport(allow)`), not by Webhooks itself.
   */
  readonly allow?: readonly string[];
}

/** What the service serves webhooks for. */
export interface WebhookContext {
  readonly generation: Generation;
  readonly organizationId: string;
  /** The node ids a scope may name (2.0: the system's cloud-node ids; 1.0: the panel's serial number). */
  readonly nodeIds: () => ReadonlySet<string>;
}

const PAGE = 50;
/** How often a replica of a shared store tries to become the dispatcher, and re-reads the waiting counts (ms). */
const CLAIM_MS = 1000;

interface Entry {
  sub: Subscription;
  /** Rows delivered whose removal from the outbox is not yet committed. */
  readonly done: Set<number>;
  /** Pending access events (for the backlog cap). */
  pendingAccess: number;
  wake: () => void;
  stopped: boolean;
  loop: Promise<void>;
}

/** Subscriptions, their outbox, and their dispatcher loops. */
export class Webhooks {
  readonly #store: WebhookStore;
  readonly #ctx: WebhookContext;
  readonly #attempts: number;
  readonly #backoff: number;
  readonly #maxBackoff: number;
  readonly #timeout: number;
  readonly #cap: number;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #log: (line: string) => void;
  readonly #subs = new Map<string, Entry>();
  readonly #transport: WebhookTransport;
  readonly #closing = new AbortController();
  /** Delivered rows waiting for one batched commit (see #flushDelivered). */
  #delivered: { subscriptionId: string; seq: number }[] = [];
  #deliveredFlush: Promise<void> | null = null;
  /** Access events of decisions waiting for one batched commit (see recordDecisions). */
  #decided: OutboxEntry[] = [];
  #decidedFlush: Promise<void> | null = null;
  /** Whether this process sends: always with a store of its own; on a shared store, while elected. */
  #dispatching: boolean;
  /** Subscription changes and re-reads, one at a time (a re-read never undoes a change made meanwhile). */
  #serial: Promise<unknown> = Promise.resolve();
  #claimTimer: NodeJS.Timeout | undefined;
  #stopWatching: (() => Promise<void>) | undefined;

  private constructor(store: WebhookStore, ctx: WebhookContext, o: WebhookOptions, transport: WebhookTransport) {
    this.#store = store;
    this.#ctx = ctx;
    this.#attempts = o.attempts ?? 8;
    this.#backoff = o.backoffMs ?? 1000;
    this.#maxBackoff = o.maxBackoffMs ?? 300_000;
    this.#timeout = o.timeoutMs ?? 10_000;
    this.#cap = o.maxPendingAccess ?? 10_000;
    this.#now = o.now ?? Date.now;
    this.#random = o.random ?? Math.random;
    this.#log = o.log ?? (() => undefined);
    this.#dispatching = store.shared === undefined;
    this.#transport = transport;
  }

  /** Where notifications may go (the subscription routes check a URL against it). */
  get destinations(): DestinationPolicy {
    return this.#transport.destinations;
  }

  /**
   * Loads the subscriptions of a store and starts their dispatcher loops.
   * @param transport - sends the notifications (adapters/delivery's `httpsTransport(options.allow)`).
   */
  static async open(
    store: WebhookStore,
    ctx: WebhookContext,
    options: WebhookOptions,
    transport: WebhookTransport,
  ): Promise<Webhooks> {
    const w = new Webhooks(store, ctx, options, transport);
    const shared = store.shared;
    if (shared !== undefined) {
      w.#stopWatching = await shared.watch((what) => {
        if (what === "subscriptions")
          void w
            .refresh()
            .catch((e: unknown) =>
              w.#log(`webhooks: re-reading the subscriptions failed: ${(e as Error)?.message ?? String(e)}`),
            );
        else if (w.#dispatching) for (const e of w.#subs.values()) e.wake();
      });
    }
    await w.#sync(true);
    if (shared !== undefined) {
      const claim = async () => {
        const was = w.#dispatching;
        w.#dispatching = await shared.claimDispatcher();
        if (w.#dispatching && !was) {
          w.#log("webhooks: this replica dispatches the events now");
          await w.#sync(true);
          for (const e of w.#subs.values()) e.wake();
        } else if (!w.#dispatching && was)
          w.#log("webhooks: this replica no longer dispatches (the connection holding the election was lost)");
        else if (!w.#dispatching) await w.#sync(true);
      };
      await claim();
      const tick = () => {
        w.#claimTimer = setTimeout(() => {
          claim()
            .catch((e: unknown) =>
              w.#log(`webhooks: the dispatcher election failed: ${(e as Error)?.message ?? String(e)}`),
            )
            .finally(() => {
              if (!w.#closing.signal.aborted) tick();
            });
        }, CLAIM_MS);
        w.#claimTimer.unref();
      };
      tick();
    }
    return w;
  }

  /** Whether this process delivers the events (on a shared store, only the elected replica does). */
  get dispatching(): boolean {
    return this.#dispatching;
  }

  /**
   * Re-reads the subscriptions from a shared store, so that one created, changed or deleted through
   * another replica is served here too (the subscription routes call it first); nothing otherwise.
   */
  refresh(): Promise<void> {
    return this.#store.shared === undefined ? Promise.resolve() : this.#sync(false);
  }

  /** Runs subscription changes and re-reads one at a time. */
  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#serial.then(task);
    this.#serial = run.catch(() => undefined);
    return run;
  }

  /** Makes the loops match the stored subscriptions (and, with `counts`, the waiting access events). */
  #sync(counts: boolean): Promise<void> {
    return this.#exclusive(async () => {
      if (this.#closing.signal.aborted) return;
      const waiting = counts ? await this.#store.pendingCounts() : undefined;
      const stored = await this.#store.subscriptions();
      const seen = new Set<string>();
      for (const s of stored) {
        seen.add(s.id);
        const fields = s.fields as Omit<Subscription, "odometer">;
        const e = this.#subs.get(s.id);
        if (e === undefined) this.#start({ ...fields, odometer: s.odometer }, waiting?.get(s.id)?.access ?? 0);
        else {
          // The odometer only grows: the dispatcher's own count may be ahead of its batched commit.
          e.sub = { ...fields, odometer: Math.max(e.sub.odometer, s.odometer) };
          if (waiting !== undefined) e.pendingAccess = waiting.get(s.id)?.access ?? 0;
          e.wake();
        }
      }
      for (const [id, e] of this.#subs) if (!seen.has(id)) this.#stop(id, e);
    });
  }

  #stop(id: string, e: Entry): void {
    this.#subs.delete(id);
    e.stopped = true;
    e.wake();
    this.#transport.drop(id);
  }

  get generation(): Generation {
    return this.#ctx.generation;
  }
  get organizationId(): string {
    return this.#ctx.organizationId;
  }
  /** The node ids a scope may name now. */
  nodeIds(): ReadonlySet<string> {
    return this.#ctx.nodeIds();
  }

  /** Every subscription, by id. */
  list(): Subscription[] {
    return [...this.#subs.values()]
      .map((e) => this.#current(e))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** One subscription, or undefined. */
  get(id: string): Subscription | undefined {
    const e = this.#subs.get(id);
    return e === undefined ? undefined : this.#current(e);
  }

  /** Creates a subscription; resolves to its id once it is stored. */
  create(fields: SubscriptionFields): Promise<string> {
    return this.#exclusive(async () => {
      const id = crypto.randomUUID();
      const sub: Subscription = { id, ...fields, userId: null, odometer: 0 };
      await this.#store.putSubscription(id, this.#stored(sub));
      this.#start(sub, 0);
      return id;
    });
  }

  /** Replaces a subscription's fields; false when there is none with this id. */
  update(id: string, fields: SubscriptionFields): Promise<boolean> {
    return this.#exclusive(async () => {
      const e = this.#subs.get(id);
      if (e === undefined) return false;
      const sub: Subscription = { ...e.sub, ...fields };
      await this.#store.putSubscription(id, this.#stored(sub));
      e.sub = sub;
      e.wake();
      return true;
    });
  }

  /** Deletes a subscription and its undelivered events; false when there is none with this id. */
  remove(id: string): Promise<boolean> {
    return this.#exclusive(async () => {
      const e = this.#subs.get(id);
      if (e === undefined) return false;
      await this.#store.deleteSubscription(id);
      this.#stop(id, e);
      return true;
    });
  }

  /** A page of a subscription's parked events (each as the subscription may see it), or undefined for an unknown id. */
  async parked(id: string, offset: number, limit: number): Promise<{ rows: unknown[]; total: number } | undefined> {
    const e = this.#subs.get(id);
    if (e === undefined) return undefined;
    const { rows, total } = await this.#store.parked(id, offset, limit);
    return {
      total,
      rows: rows.map((r) => ({
        id: r.event.id,
        topic: r.event.topic,
        occurredAt: r.event.occurredAt,
        sequence: r.sequence,
        reason: r.reason,
        attempts: r.attempts,
        lastError: r.lastError,
        parkedAt: r.parkedAt,
        event: filterEvent(r.event as unknown as WebhookEvent, e.sub.secrecyLevel),
      })),
    };
  }

  /** Queues parked events again (all, or those with these event ids); undefined for an unknown subscription. */
  async redeliver(id: string, eventIds: readonly string[] | null): Promise<number | undefined> {
    const e = this.#subs.get(id);
    if (e === undefined) return undefined;
    const n = await this.#store.redeliver(id, eventIds);
    // Re-delivered access events wait again and count toward the backlog cap.
    if (n > 0) e.pendingAccess = (await this.#store.pendingCounts()).get(id)?.access ?? 0;
    e.wake();
    return n;
  }

  /** The outbox entries of an accepted write (for the store's `append`, in the write's transaction). */
  forWrite(write: AcceptedWrite): OutboxEntry[] {
    const wanting = [...this.#subs.values()].filter(
      (e) => this.#live(e.sub) && e.sub.events.some((t) => t.startsWith("entity.")),
    );
    if (wanting.length === 0) return [];
    const node = this.#ctx.generation === "1.0" ? ([...this.#ctx.nodeIds()][0] ?? null) : null;
    const out: OutboxEntry[] = [];
    for (const event of changeEvents({
      before: write.before,
      after: write.after,
      patches: write.patches,
      occurredAt: write.time,
    }))
      for (const e of wanting)
        if (this.#matches(e.sub, event.topic, node)) out.push({ subscriptionId: e.sub.id, kind: "change", event });
    return out;
  }

  /** Wakes the loops of subscriptions that just got events. */
  stored(entries: readonly OutboxEntry[]): void {
    for (const id of new Set(entries.map((x) => x.subscriptionId))) this.#subs.get(id)?.wake();
  }

  /** Whether any active subscription wants an access event of this topic. */
  wantsAccess(): boolean {
    for (const e of this.#subs.values())
      if (
        this.#live(e.sub) &&
        e.sub.events.some((t) => t.startsWith("device.request.") || t.startsWith("door.request."))
      )
        return true;
    return false;
  }

  /**
   * Stores the access events of answered decisions for the subscriptions that want them, before the
   * answer is sent (one transaction); the loops send them later.
   */
  async recordDecisions(
    requests: readonly unknown[],
    decisions: readonly Decision[],
    snapshot: SystemSnapshot,
  ): Promise<void> {
    const wanting = [...this.#subs.values()].filter(
      (e) => this.#live(e.sub) && e.sub.events.some((t) => t.startsWith("device.request.")),
    );
    if (wanting.length === 0) return;
    const now = this.#now();
    let added = 0;
    decisions.forEach((d, i) => {
      const subs = wanting.filter((e) => e.sub.events.includes(d.topic));
      if (subs.length === 0) return;
      const event = accessEvent(d, requests[i], snapshot, { now });
      for (const e of subs)
        if (this.#matches(e.sub, event.topic, event.cloudNode?.id ?? null)) {
          this.#decided.push({ subscriptionId: e.sub.id, kind: "access", event });
          added++;
        }
    });
    if (added === 0) return;
    // Group commit: the decisions answered in the same turn of the event loop share one transaction
    // (one fsync), and each answer waits for it.
    this.#decidedFlush ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#flushDecided());
    await this.#decidedFlush;
  }

  async #flushDecided(): Promise<void> {
    const out = this.#decided;
    this.#decided = [];
    this.#decidedFlush = null;
    await this.#store.enqueue(out);
    const time = new Date(this.#now()).toISOString();
    const counts = new Map<string, number>();
    for (const x of out) counts.set(x.subscriptionId, (counts.get(x.subscriptionId) ?? 0) + 1);
    for (const [id, n] of counts) {
      const e = this.#subs.get(id);
      if (e === undefined) continue;
      e.pendingAccess += n;
      if (e.pendingAccess > this.#cap) {
        try {
          const parked = await this.#store.parkOldest(id, "access", this.#cap, time);
          e.pendingAccess -= parked;
          if (parked > 0)
            this.#log(
              `webhook ${id}: ${parked} access event${parked === 1 ? "" : "s"} parked: more than ${this.#cap} were waiting`,
            );
        } catch (err) {
          // The events are stored; only the cap waits for the next decisions.
          this.#log(`webhook ${id}: parking the oldest access events failed: ${(err as Error).message}`);
        }
      }
      e.wake();
    }
  }

  /**
   * Commits the removal of delivered rows in batches: one transaction for every row delivered since
   * the last, instead of one fsync per notification. A delivery whose removal a crash forgets is
   * sent again (at least once).
   */
  #flushDelivered(): Promise<void> {
    this.#deliveredFlush ??= new Promise<void>((resolve) => setTimeout(resolve, 10)).then(async () => {
      const rows = this.#delivered;
      this.#delivered = [];
      this.#deliveredFlush = null;
      try {
        await this.#store.delivered(rows);
      } finally {
        for (const r of rows) this.#subs.get(r.subscriptionId)?.done.delete(r.seq);
      }
    });
    return this.#deliveredFlush;
  }

  /** Stops every loop (an attempt in flight is cut off and stays pending). */
  async close(): Promise<void> {
    this.#closing.abort();
    if (this.#claimTimer !== undefined) clearTimeout(this.#claimTimer);
    await this.#serial;
    const loops = [...this.#subs.values()].map((e) => {
      e.stopped = true;
      e.wake();
      return e.loop;
    });
    await Promise.all(loops);
    // Deliveries made so far are committed before the store closes.
    if (this.#delivered.length > 0 || this.#deliveredFlush !== null)
      await this.#flushDelivered().catch(() => undefined);
    if (this.#decidedFlush !== null) await this.#decidedFlush.catch(() => undefined);
    // Ends the watching session, and with it this replica's claim to dispatch.
    await this.#stopWatching?.();
    this.#transport.drop();
  }

  /** Bodies of recent events by id and level: the loops of several subscriptions send the same event. */
  readonly #bodies = new Map<string, string>();

  /** The notification body: the filtered event, with the subscription's `sequence` of it last (HW4). */
  #body(event: WebhookEvent, level: SecrecyLevel, sequence: number): string {
    const key = `${level}:${event.id}`;
    let body = this.#bodies.get(key);
    if (body === undefined) {
      body = JSON.stringify(filterEvent(event, level));
      if (this.#bodies.size >= 4096) this.#bodies.delete(this.#bodies.keys().next().value!);
      this.#bodies.set(key, body);
    }
    // The cached text is per event and level, the sequence per subscription: it is appended.
    return `${body.slice(0, -1)},"sequence":${sequence}}`;
  }

  #stored(sub: Subscription): Omit<Subscription, "odometer"> {
    const { odometer: _odometer, ...fields } = sub;
    return fields;
  }

  /** The subscription as served: `active` false once `expiresAt` is reached. */
  #current(e: Entry): Subscription {
    return this.#expired(e.sub) ? { ...e.sub, active: false } : e.sub;
  }

  #expired(sub: Subscription): boolean {
    return sub.active && sub.expiresAt !== null && Date.parse(sub.expiresAt) <= this.#now();
  }

  #live(sub: Subscription): boolean {
    return sub.active && !this.#expired(sub);
  }

  #matches(sub: Subscription, topic: string, nodeId: string | null): boolean {
    if (!sub.events.includes(topic)) return false;
    return typeof sub.scope === "string" || (nodeId !== null && sub.scope.includes(nodeId));
  }

  #start(sub: Subscription, pendingAccess: number): void {
    let wakeUp: (() => void) | null = null;
    const entry: Entry = {
      sub,
      done: new Set(),
      pendingAccess,
      stopped: false,
      wake: () => {
        const w = wakeUp;
        wakeUp = null;
        w?.();
      },
      loop: Promise.resolve(),
    };
    /** Waits `ms`, or less when woken. */
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          wakeUp = null;
          resolve();
        }, ms);
        wakeUp = () => {
          clearTimeout(t);
          resolve();
        };
      });
    this.#subs.set(sub.id, entry);
    entry.loop = this.#run(entry, pause).catch((e: unknown) =>
      this.#log(`webhook ${sub.id}: the dispatcher stopped: ${(e as Error)?.message ?? String(e)}`),
    );
  }

  async #run(e: Entry, pause: (ms: number) => Promise<void>): Promise<void> {
    while (!e.stopped) {
      if (!this.#dispatching) {
        // Another replica dispatches (shared store); the election wakes this loop when it is this one.
        await pause(CLAIM_MS);
        continue;
      }
      if (this.#expired(e.sub)) {
        // expiresAt reached: the subscription becomes inactive, for good (until an update reactivates it).
        const sub = { ...e.sub, active: false };
        await this.#store.putSubscription(sub.id, this.#stored(sub));
        e.sub = sub;
        this.#log(`webhook ${sub.id}: expired at ${sub.expiresAt}; now inactive`);
      }
      if (!e.sub.active) {
        await pause(1000);
        continue;
      }
      let rows: OutboxRow[];
      try {
        rows = await this.#store.pending(e.sub.id, PAGE);
      } catch (err) {
        if (e.stopped) return;
        throw err;
      }
      if (rows.length === 0) {
        // Woken by new events; the timeout notices an expiry even when nothing happens.
        await pause(1000);
        continue;
      }
      const todo = rows.filter((r) => !e.done.has(r.seq));
      if (todo.length === 0) {
        // Every row of the page is delivered, its removal not yet committed.
        await this.#flushDelivered().catch(() => pause(100));
        continue;
      }
      for (const row of todo) {
        if (e.stopped || !this.#live(e.sub) || !this.#dispatching) break;
        await this.#send(e, row, pause);
      }
    }
  }

  /** Sends one row until it is delivered, parked, or the loop stops. */
  async #send(e: Entry, row: OutboxRow, pause: (ms: number) => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const sub = e.sub;
      const body = this.#body(row.event as unknown as WebhookEvent, sub.secrecyLevel, row.sequence);
      const result = await this.#transport.send(sub, body, this.#timeout, this.#closing.signal);
      if (e.stopped) return;
      // Elected no longer (shared store): the row stays as it is for the next dispatcher.
      if (!result.ok && !this.#dispatching) return;
      if (result.ok) {
        e.done.add(row.seq);
        this.#delivered.push({ subscriptionId: sub.id, seq: row.seq });
        void this.#flushDelivered().catch((err: unknown) =>
          this.#log(
            `webhook: storing deliveries failed (they will be sent again): ${(err as Error)?.message ?? String(err)}`,
          ),
        );
        e.sub = { ...e.sub, odometer: e.sub.odometer + 1 };
        if (row.kind === "access") e.pendingAccess = Math.max(0, e.pendingAccess - 1);
        return;
      }
      if (attempt >= this.#attempts) {
        await this.#store.park(sub.id, row.seq, attempt, result.error, new Date(this.#now()).toISOString());
        if (row.kind === "access") e.pendingAccess = Math.max(0, e.pendingAccess - 1);
        // The operator's log has the detail; lastError only the category (HW2).
        this.#log(`webhook ${sub.id}: event ${row.event.id} parked after ${attempt} attempts: ${result.detail}`);
        return;
      }
      const delay = Math.min(this.#maxBackoff, this.#backoff * 2 ** (attempt - 1));
      // Equal jitter: half the delay, plus up to the other half at random, so that receivers that
      // failed together are not retried together.
      const until = performance.now() + delay / 2 + this.#random() * (delay / 2);
      // New events wake the loop; only the time (or a stop) ends a backoff.
      while (!e.stopped && this.#dispatching && performance.now() < until) await pause(until - performance.now());
      if (e.stopped || !this.#dispatching) return;
    }
  }
}
