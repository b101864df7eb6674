// The webhook outbox, as the service fills and reads it: a write's events are stored in the write's
// own transaction (the store's `append` takes `forWrite`'s entries), a decision's access events
// before the decision is answered (group commit: one transaction per turn of the event loop). A
// subscription's backlog of access events is capped, the oldest beyond the cap parked with reason
// `backlog` (docs/semantics.md W8). Parked events are listed and queued again here too.
import type { Decision, SystemSnapshot } from "../../model/index.js";
import type { AcceptedWrite } from "../store/durableSystem.js";
import type { OutboxEntry, WebhookStore } from "../store/webhookStore.js";
import { accessEvent } from "../../events/accessEvent.js";
import { changeEvents } from "../../events/changeEvents.js";
import { filterEvent } from "../../events/filterEvent.js";
import type { WebhookEvent } from "../../events/types.js";
import { type SubscriptionRegistry, matchesTopic } from "./subscriptionRegistry.js";

/** The events of writes and decisions, stored for the subscriptions that want them. */
export class WebhookOutbox {
  readonly #store: WebhookStore;
  readonly #registry: SubscriptionRegistry;
  readonly #now: () => number;
  readonly #cap: number;
  readonly #log: (line: string) => void;
  /** Access events of decisions waiting for one batched commit (see recordDecisions). */
  #decided: OutboxEntry[] = [];
  #decidedFlush: Promise<void> | null = null;

  constructor(
    store: WebhookStore,
    registry: SubscriptionRegistry,
    now: () => number,
    cap: number,
    log: (line: string) => void,
  ) {
    this.#store = store;
    this.#registry = registry;
    this.#now = now;
    this.#cap = cap;
    this.#log = log;
  }

  /** A page of a subscription's parked events (each as the subscription may see it), or undefined for an unknown id. */
  async parked(id: string, offset: number, limit: number): Promise<{ rows: unknown[]; total: number } | undefined> {
    const e = this.#registry.entry(id);
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
    const e = this.#registry.entry(id);
    if (e === undefined) return undefined;
    const n = await this.#store.redeliver(id, eventIds);
    // Re-delivered access events wait again and count toward the backlog cap.
    if (n > 0) e.pendingAccess = (await this.#store.pendingCounts()).get(id)?.access ?? 0;
    e.wake();
    return n;
  }

  /** The outbox entries of an accepted write (for the store's `append`, in the write's transaction). */
  forWrite(write: AcceptedWrite): OutboxEntry[] {
    const registry = this.#registry;
    const wanting = [...registry.entries()].filter(
      (e) => registry.live(e.sub) && e.sub.events.some((t) => t.startsWith("entity.")),
    );
    if (wanting.length === 0) return [];
    const ctx = registry.context;
    const node = ctx.generation === "1.0" ? ([...ctx.nodeIds()][0] ?? null) : null;
    const out: OutboxEntry[] = [];
    for (const event of changeEvents({
      before: write.before,
      after: write.after,
      patches: write.patches,
      inversePatches: write.inversePatches,
      occurredAt: write.time,
    }))
      for (const e of wanting)
        if (matchesTopic(e.sub, event.topic, node)) out.push({ subscriptionId: e.sub.id, kind: "change", event });
    return out;
  }

  /** Wakes the loops of subscriptions that just got events. */
  stored(entries: readonly OutboxEntry[]): void {
    for (const id of new Set(entries.map((x) => x.subscriptionId))) this.#registry.entry(id)?.wake();
  }

  /** Whether any active subscription wants an access event of this topic. */
  wantsAccess(): boolean {
    for (const e of this.#registry.entries())
      if (
        this.#registry.live(e.sub) &&
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
    const registry = this.#registry;
    const wanting = [...registry.entries()].filter(
      (e) => registry.live(e.sub) && e.sub.events.some((t) => t.startsWith("device.request.")),
    );
    if (wanting.length === 0) return;
    const now = this.#now();
    let added = 0;
    decisions.forEach((d, i) => {
      const subs = wanting.filter((e) => e.sub.events.includes(d.topic));
      if (subs.length === 0) return;
      const event = accessEvent(d, requests[i], snapshot, { now });
      for (const e of subs)
        if (matchesTopic(e.sub, event.topic, event.cloudNode?.id ?? null)) {
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
      const e = this.#registry.entry(id);
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

  /** Resolves once the decisions' events being stored are (failures are the decisions' to report). */
  async settled(): Promise<void> {
    if (this.#decidedFlush !== null) await this.#decidedFlush.catch(() => undefined);
  }
}
