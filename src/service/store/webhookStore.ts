// What a store keeps for webhooks: the subscriptions, and the outbox of events waiting for delivery
// (one row per event and subscription, in the order they were stored), some of them parked after
// their last attempt. A store that keeps them offers `Store.webhooks` and stores the outbox rows an
// `append` is given in the same transaction as the change itself, so an acknowledged write always
// has its events. Implemented for SQLite (sqliteWebhooks.ts) and PostgreSQL (postgresWebhooks.ts,
// shared by every replica of the database: `shared` elects the one dispatcher and tells of the other
// replicas' changes).

/** An event to deliver to one subscription. */
export interface OutboxEntry {
  readonly subscriptionId: string;
  /** `access` events (from decisions) may be parked when a subscription's backlog is too long; `change` events never are. */
  readonly kind: "access" | "change";
  /**
   * The event (JSON, unfiltered: the secrecy filter is applied when it is sent). Its id is `eventId`
   * when it has one: an organization or panel event's own `id` names the organization or panel (T41).
   */
  readonly event: {
    readonly id: string;
    readonly topic: string;
    readonly occurredAt: string;
    readonly eventId?: string;
  };
}

/** The id an outbox row keeps for its event (redelivery by id, the dispatcher's cache): `eventId`, else `id` (T41). */
export function eventIdOf(event: OutboxEntry["event"]): string {
  return event.eventId ?? event.id;
}

/** An outbox row: its entry, its place in the order, and where it stands. */
export interface OutboxRow extends OutboxEntry {
  /** Its position in the outbox: rows of one subscription are sent in this order. */
  readonly seq: number;
  /**
   * Its number among its subscription's events: 1, 2, 3, … in `seq` order with no gap, taken when
   * the row is stored and kept when it is parked and re-delivered; sent as the body's `sequence` (HW4).
   */
  readonly sequence: number;
  readonly state: "pending" | "parked";
  /** Attempts made before it was parked (0 while pending). */
  readonly attempts: number;
  /** Why the last attempt failed, or why it was parked. */
  readonly lastError: string | null;
  readonly parkedAt: string | null;
  /** `failed`: every attempt failed; `backlog`: parked unsent because the backlog was too long. */
  readonly reason: "failed" | "backlog" | null;
}

/** An outbox row as both stores' tables hold it (PostgreSQL answers a bigint as a string). */
export interface OutboxRecord {
  seq: number | string;
  sequence: number | string;
  subscription: string;
  kind: string;
  event: string;
  state: string;
  attempts: number;
  last_error: string | null;
  parked_at: string | null;
  reason: string | null;
}

/** The OutboxRow of a table row. */
export function toOutboxRow(r: OutboxRecord): OutboxRow {
  return {
    seq: Number(r.seq),
    sequence: Number(r.sequence),
    subscriptionId: r.subscription,
    kind: r.kind as OutboxRow["kind"],
    event: JSON.parse(r.event) as OutboxRow["event"],
    state: r.state as OutboxRow["state"],
    attempts: r.attempts,
    lastError: r.last_error,
    parkedAt: r.parked_at,
    reason: r.reason as OutboxRow["reason"],
  };
}

/**
 * Whose a subscription is: an organization's id and the generation of the routes it was made through
 * (2.0 subscriptions, 1.0 hooks). Both are "" for a subscription of the embedded organization, the
 * one a server of one system or panel serves (and every subscription stored before organizations, T40).
 */
export interface SubscriptionOwner {
  readonly organization: string;
  readonly generation: string;
}

/** A stored subscription: its owner, its fields (JSON) and how many notifications it delivered. Its table also keeps the last `sequence` given to its events. */
export interface StoredSubscription extends SubscriptionOwner {
  readonly id: string;
  readonly fields: unknown;
  readonly odometer: number;
}

/** What a webhook store shared by several processes adds (PostgreSQL). */
export interface SharedWebhooks {
  /**
   * Tries to become the one process that dispatches, or checks that this one still is (a lock held by
   * the watching session of `watch`, released when it ends); false while another process is, or
   * before `watch` has connected.
   */
  claimDispatcher(): Promise<boolean>;
  /**
   * Calls `onChange` when any process changed the subscriptions (`subscriptions`) or stored events or
   * made parked ones pending (`outbox`), and after a lost connection came back (both: a notification
   * may have been missed), until the returned function is called.
   */
  watch(onChange: (what: "subscriptions" | "outbox") => void): Promise<() => Promise<void>>;
}

/**
 * Durable webhook state. Every method has committed when its promise resolves; the caller runs
 * them one at a time, like the Store's own methods.
 */
export interface WebhookStore {
  /** Present when other processes share this state: then one of them dispatches at a time. */
  readonly shared?: SharedWebhooks;
  /** Every subscription, or those of one organization ("" for the embedded one's), by id. */
  subscriptions(organization?: string): Promise<StoredSubscription[]>;
  /**
   * Creates a subscription of `owner` (default the embedded organization's), or replaces an existing
   * one's fields (its owner and odometer are kept).
   */
  putSubscription(id: string, fields: unknown, owner?: SubscriptionOwner): Promise<void>;
  /** Deletes a subscription and every outbox row of it. */
  deleteSubscription(id: string): Promise<void>;
  /**
   * Stores events that no change caused (access events of decisions), in one transaction. Like the
   * rows of an append, each takes its subscription's next `sequence` in that transaction.
   */
  enqueue(entries: readonly OutboxEntry[]): Promise<void>;
  /** The oldest pending rows of a subscription, at most `limit`. */
  pending(subscriptionId: string, limit: number): Promise<OutboxRow[]>;
  /** How many rows of each kind wait per subscription (pending only). */
  pendingCounts(): Promise<Map<string, { access: number; change: number }>>;
  /**
   * Rows were delivered: removes them and adds one per row to their subscription's odometer, in one
   * transaction (the dispatcher batches them: a delivery forgotten by a crash is sent again).
   */
  delivered(rows: readonly { readonly subscriptionId: string; readonly seq: number }[]): Promise<void>;
  /** Parks a pending row after its last attempt. */
  park(subscriptionId: string, seq: number, attempts: number, lastError: string, time: string): Promise<void>;
  /** Parks the oldest pending rows of `kind` beyond the newest `keep` (reason `backlog`); resolves to how many. */
  parkOldest(subscriptionId: string, kind: OutboxEntry["kind"], keep: number, time: string): Promise<number>;
  /** A page of a subscription's parked rows, oldest first, and their total. */
  parked(subscriptionId: string, offset: number, limit: number): Promise<{ rows: OutboxRow[]; total: number }>;
  /** Makes parked rows pending again (all of the subscription's, or those with these event ids); resolves to how many. */
  redeliver(subscriptionId: string, eventIds: readonly string[] | null): Promise<number>;
}
