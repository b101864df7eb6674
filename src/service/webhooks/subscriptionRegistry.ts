// The webhook subscriptions of a running service: kept in the store, held in memory (one entry per
// subscription, with the state of its delivery loop), changed one at a time. On a store shared by
// several replicas the registry is re-read when any replica changes it (W15–W18). The loops
// themselves are the dispatcher's (dispatcher.ts): the registry tells it when one starts or stops.
import type { WebhookStore } from "../store/webhookStore.js";
import type { Generation } from "../../events/topics.js";
import type { Subscription, SubscriptionFields } from "./subscription.js";

/** What the service serves webhooks for. */
export interface WebhookContext {
  readonly generation: Generation;
  readonly organizationId: string;
  /** The node ids a scope may name (2.0: the system's cloud-node ids; 1.0: the panel's serial number). */
  readonly nodeIds: () => ReadonlySet<string>;
}

/** A subscription as the service holds it: its fields and the state of its delivery loop. */
export interface SubscriptionEntry {
  sub: Subscription;
  /** Rows delivered whose removal from the outbox is not yet committed. */
  readonly done: Set<number>;
  /** Pending access events (for the backlog cap). */
  pendingAccess: number;
  wake: () => void;
  /** Waits `ms`, or less when woken. */
  readonly pause: (ms: number) => Promise<void>;
  stopped: boolean;
  loop: Promise<void>;
}

/** The delivery loops, as the registry starts and stops them. */
export interface SubscriptionLoops {
  /** A new entry for `sub`, its loop not yet running. */
  create(sub: Subscription, pendingAccess: number): SubscriptionEntry;
  /** Starts the loop of an entry the registry holds. */
  run(entry: SubscriptionEntry): void;
  /** Stops the loop of an entry the registry no longer holds. */
  stop(id: string, entry: SubscriptionEntry): void;
}

/** The fields stored for a subscription (its odometer is kept by the store). */
export function storedFields(sub: Subscription): Omit<Subscription, "odometer"> {
  const { odometer: _odometer, ...fields } = sub;
  return fields;
}

/** Whether `expiresAt` is reached (an active subscription then becomes inactive). */
export function isExpired(sub: Subscription, now: () => number): boolean {
  return sub.active && sub.expiresAt !== null && Date.parse(sub.expiresAt) <= now();
}

/** Active and not expired: it gets events. */
export function isLive(sub: Subscription, now: () => number): boolean {
  return sub.active && !isExpired(sub, now);
}

/** Whether the subscription wants an event of `topic` from node `nodeId`. */
export function matchesTopic(sub: Subscription, topic: string, nodeId: string | null): boolean {
  if (!sub.events.includes(topic)) return false;
  return typeof sub.scope === "string" || (nodeId !== null && sub.scope.includes(nodeId));
}

/** The subscriptions: in the store and in memory, changed and re-read one at a time. */
export class SubscriptionRegistry {
  readonly #store: WebhookStore;
  readonly #ctx: WebhookContext;
  readonly #now: () => number;
  readonly #closing: AbortSignal;
  readonly #loops: SubscriptionLoops;
  readonly #subs = new Map<string, SubscriptionEntry>();
  /** Subscription changes and re-reads, one at a time (a re-read never undoes a change made meanwhile). */
  #serial: Promise<unknown> = Promise.resolve();

  constructor(
    store: WebhookStore,
    ctx: WebhookContext,
    now: () => number,
    closing: AbortSignal,
    loops: SubscriptionLoops,
  ) {
    this.#store = store;
    this.#ctx = ctx;
    this.#now = now;
    this.#closing = closing;
    this.#loops = loops;
  }

  get context(): WebhookContext {
    return this.#ctx;
  }

  /** Every entry, in creation order. */
  entries(): IterableIterator<SubscriptionEntry> {
    return this.#subs.values();
  }

  entry(id: string): SubscriptionEntry | undefined {
    return this.#subs.get(id);
  }

  /** Resolves once the changes and re-reads queued so far are done. */
  idle(): Promise<unknown> {
    return this.#serial;
  }

  /** Runs subscription changes and re-reads one at a time. */
  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#serial.then(task);
    this.#serial = run.catch(() => undefined);
    return run;
  }

  /** Makes the loops match the stored subscriptions (and, with `counts`, the waiting access events). */
  sync(counts: boolean): Promise<void> {
    return this.#exclusive(async () => {
      if (this.#closing.aborted) return;
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

  #start(sub: Subscription, pendingAccess: number): void {
    const entry = this.#loops.create(sub, pendingAccess);
    this.#subs.set(sub.id, entry);
    this.#loops.run(entry);
  }

  #stop(id: string, e: SubscriptionEntry): void {
    this.#subs.delete(id);
    this.#loops.stop(id, e);
  }

  /** Every subscription, by id. */
  list(): Subscription[] {
    return [...this.#subs.values()]
      .map((e) => this.current(e))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** One subscription, or undefined. */
  get(id: string): Subscription | undefined {
    const e = this.#subs.get(id);
    return e === undefined ? undefined : this.current(e);
  }

  /** Creates a subscription; resolves to its id once it is stored. */
  create(fields: SubscriptionFields): Promise<string> {
    return this.#exclusive(async () => {
      const id = crypto.randomUUID();
      const sub: Subscription = { id, ...fields, userId: null, odometer: 0 };
      await this.#store.putSubscription(id, storedFields(sub));
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
      await this.#store.putSubscription(id, storedFields(sub));
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

  /** The subscription as served: `active` false once `expiresAt` is reached. */
  current(e: SubscriptionEntry): Subscription {
    return this.expired(e.sub) ? { ...e.sub, active: false } : e.sub;
  }

  expired(sub: Subscription): boolean {
    return isExpired(sub, this.#now);
  }

  live(sub: Subscription): boolean {
    return isLive(sub, this.#now);
  }
}
