// The webhook dispatcher: one loop per subscription that sends its events in outbox order, retrying
// with exponential backoff and jitter, and parks an event after its last attempt. Decisions never
// wait for it: the outbox is on disk, so a slow subscriber costs no memory (a loop holds one page of
// rows). Notifications go only where the transport's destination policy allows (HW1), each with its
// subscription's `sequence` (HW4). On a store shared by several replicas only the replica elected
// dispatcher sends (W15–W18).
import { type OutboxRow, type SharedWebhooks, type WebhookStore, eventIdOf } from "../store/webhookStore.js";
import { filterEvent } from "../../events/filterEvent.js";
import type { SecrecyLevel, WebhookEvent } from "../../events/types.js";
import type { Subscription } from "./subscription.js";
import {
  type Owner,
  type SubscriptionEntry,
  type SubscriptionLoops,
  type SubscriptionRegistry,
  storedFields,
} from "./subscriptionRegistry.js";
import type { WebhookTransport } from "./transport.js";

const PAGE = 50;
/** How often a replica of a shared store tries to become the dispatcher, and re-reads the waiting counts (ms). */
export const CLAIM_MS = 1000;

/** The dispatcher's settings, defaults applied (see WebhookOptions). */
export interface DispatchSettings {
  readonly attempts: number;
  readonly backoff: number;
  readonly maxBackoff: number;
  readonly timeout: number;
  readonly random: () => number;
  readonly now: () => number;
  readonly log: (line: string) => void;
}

/** The delivery loops of every subscription, and this process's part in the dispatcher election. */
export class WebhookDispatcher implements SubscriptionLoops {
  readonly #store: WebhookStore;
  readonly #transport: WebhookTransport;
  readonly #settings: DispatchSettings;
  readonly #closing: AbortSignal;
  /** Set once, right after construction (the registry starts the loops, the loops read the registry). */
  registry!: SubscriptionRegistry;
  /** Whether this process sends: always with a store of its own; on a shared store, while elected. */
  dispatching: boolean;
  /** Delivered rows waiting for one batched commit (see flushDelivered). */
  #delivered: { subscriptionId: string; seq: number }[] = [];
  #deliveredFlush: Promise<void> | null = null;
  #claimTimer: NodeJS.Timeout | undefined;
  /** Bodies of recent events by id and level: the loops of several subscriptions send the same event. */
  readonly #bodies = new Map<string, string>();

  constructor(store: WebhookStore, transport: WebhookTransport, settings: DispatchSettings, closing: AbortSignal) {
    this.#store = store;
    this.#transport = transport;
    this.#settings = settings;
    this.#closing = closing;
    this.dispatching = store.shared === undefined;
  }

  /** Wakes every loop (new events, or this replica just elected). */
  wakeAll(): void {
    for (const e of this.registry.entries()) e.wake();
  }

  /** Takes part in the election of a shared store: now, then every CLAIM_MS until closing. */
  async elect(shared: SharedWebhooks): Promise<void> {
    const { log } = this.#settings;
    const claim = async () => {
      const was = this.dispatching;
      this.dispatching = await shared.claimDispatcher();
      if (this.dispatching && !was) {
        log("webhooks: this replica dispatches the events now");
        await this.registry.sync(true);
        this.wakeAll();
      } else if (!this.dispatching && was)
        log("webhooks: this replica no longer dispatches (the connection holding the election was lost)");
      else if (!this.dispatching) await this.registry.sync(true);
    };
    await claim();
    const tick = () => {
      this.#claimTimer = setTimeout(() => {
        claim()
          .catch((e: unknown) => log(`webhooks: the dispatcher election failed: ${(e as Error)?.message ?? String(e)}`))
          .finally(() => {
            if (!this.#closing.aborted) tick();
          });
      }, CLAIM_MS);
      this.#claimTimer.unref();
    };
    tick();
  }

  /** Stops the election timer (closing). */
  stopElection(): void {
    if (this.#claimTimer !== undefined) clearTimeout(this.#claimTimer);
  }

  create(sub: Subscription, owner: Owner, pendingAccess: number): SubscriptionEntry {
    let wakeUp: (() => void) | null = null;
    return {
      sub,
      organization: owner.organization,
      generation: owner.generation,
      done: new Set(),
      pendingAccess,
      stopped: false,
      wake: () => {
        const w = wakeUp;
        wakeUp = null;
        w?.();
      },
      pause: (ms: number) =>
        new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            wakeUp = null;
            resolve();
          }, ms);
          wakeUp = () => {
            clearTimeout(t);
            resolve();
          };
        }),
      loop: Promise.resolve(),
    };
  }

  run(entry: SubscriptionEntry): void {
    entry.loop = this.#run(entry).catch((e: unknown) =>
      this.#settings.log(`webhook ${entry.sub.id}: the dispatcher stopped: ${(e as Error)?.message ?? String(e)}`),
    );
  }

  stop(id: string, e: SubscriptionEntry): void {
    e.stopped = true;
    e.wake();
    this.#transport.drop(id);
  }

  /** Stops every loop and waits for them (an attempt in flight is cut off and stays pending). */
  async stopLoops(): Promise<void> {
    const loops = [...this.registry.entries()].map((e) => {
      e.stopped = true;
      e.wake();
      return e.loop;
    });
    await Promise.all(loops);
  }

  /** Commits the deliveries made so far (before the store closes). */
  async flushPending(): Promise<void> {
    if (this.#delivered.length > 0 || this.#deliveredFlush !== null) await this.flushDelivered().catch(() => undefined);
  }

  /**
   * Commits the removal of delivered rows in batches: one transaction for every row delivered since
   * the last, instead of one fsync per notification. A delivery whose removal a crash forgets is
   * sent again (at least once).
   */
  flushDelivered(): Promise<void> {
    this.#deliveredFlush ??= new Promise<void>((resolve) => setTimeout(resolve, 10)).then(async () => {
      const rows = this.#delivered;
      this.#delivered = [];
      this.#deliveredFlush = null;
      try {
        await this.#store.delivered(rows);
      } finally {
        for (const r of rows) this.registry.entry(r.subscriptionId)?.done.delete(r.seq);
      }
    });
    return this.#deliveredFlush;
  }

  /** The notification body: the filtered event, with the subscription's `sequence` of it last (HW4). */
  #body(event: WebhookEvent, level: SecrecyLevel, sequence: number): string {
    // By event id: an organization event's `id` names the organization, shared by its events (T41).
    const key = `${level}:${eventIdOf(event as unknown as OutboxRow["event"])}`;
    let body = this.#bodies.get(key);
    if (body === undefined) {
      body = JSON.stringify(filterEvent(event, level));
      if (this.#bodies.size >= 4096) this.#bodies.delete(this.#bodies.keys().next().value!);
      this.#bodies.set(key, body);
    }
    // The cached text is per event and level, the sequence per subscription: it is appended.
    return `${body.slice(0, -1)},"sequence":${sequence}}`;
  }

  async #run(e: SubscriptionEntry): Promise<void> {
    const { pause } = e;
    while (!e.stopped) {
      if (!this.dispatching) {
        // Another replica dispatches (shared store); the election wakes this loop when it is this one.
        await pause(CLAIM_MS);
        continue;
      }
      if (this.registry.expired(e.sub)) {
        // expiresAt reached: the subscription becomes inactive, for good (until an update reactivates it).
        const sub = { ...e.sub, active: false };
        await this.#store.putSubscription(sub.id, storedFields(sub));
        e.sub = sub;
        this.#settings.log(`webhook ${sub.id}: expired at ${sub.expiresAt}; now inactive`);
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
        await this.flushDelivered().catch(() => pause(100));
        continue;
      }
      for (const row of todo) {
        if (e.stopped || !this.registry.live(e.sub) || !this.dispatching) break;
        await this.#send(e, row);
      }
    }
  }

  /** Sends one row until it is delivered, parked, or the loop stops. */
  async #send(e: SubscriptionEntry, row: OutboxRow): Promise<void> {
    const s = this.#settings;
    for (let attempt = 1; ; attempt++) {
      const sub = e.sub;
      const body = this.#body(row.event as unknown as WebhookEvent, sub.secrecyLevel, row.sequence);
      const result = await this.#transport.send(sub, body, s.timeout, this.#closing);
      if (e.stopped) return;
      // Elected no longer (shared store): the row stays as it is for the next dispatcher.
      if (!result.ok && !this.dispatching) return;
      if (result.ok) {
        e.done.add(row.seq);
        this.#delivered.push({ subscriptionId: sub.id, seq: row.seq });
        void this.flushDelivered().catch((err: unknown) =>
          s.log(
            `webhook: storing deliveries failed (they will be sent again): ${(err as Error)?.message ?? String(err)}`,
          ),
        );
        e.sub = { ...e.sub, odometer: e.sub.odometer + 1 };
        if (row.kind === "access") e.pendingAccess = Math.max(0, e.pendingAccess - 1);
        return;
      }
      if (attempt >= s.attempts) {
        await this.#store.park(sub.id, row.seq, attempt, result.error, new Date(s.now()).toISOString());
        if (row.kind === "access") e.pendingAccess = Math.max(0, e.pendingAccess - 1);
        // The operator's log has the detail; lastError only the category (HW2).
        s.log(`webhook ${sub.id}: event ${eventIdOf(row.event)} parked after ${attempt} attempts: ${result.detail}`);
        return;
      }
      const delay = Math.min(s.maxBackoff, s.backoff * 2 ** (attempt - 1));
      // Equal jitter: half the delay, plus up to the other half at random, so that receivers that
      // failed together are not retried together.
      const until = performance.now() + delay / 2 + s.random() * (delay / 2);
      // New events wake the loop; only the time (or a stop) ends a backoff.
      while (!e.stopped && this.dispatching && performance.now() < until) await e.pause(until - performance.now());
      if (e.stopped || !this.dispatching) return;
    }
  }
}
