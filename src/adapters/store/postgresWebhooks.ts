// The webhook tables of the PostgreSQL store (webhookStore.ts): subscriptions and the outbox, shared
// by every replica of the database. An outbox row commits in the transaction of the change that
// caused it (postgresStore.ts `appendAt`); every change to the subscriptions or the outbox notifies
// `rsop_webhooks` in its own transaction, so the other replicas re-read the subscriptions and the
// dispatcher wakes. One replica dispatches at a time: the one holding a session advisory lock on its
// listening connection (the lock goes with the session when the replica dies or loses it).
import { type ListeningClient, type Listening, type Queryable, listen } from "./pgListen.js";
import {
  type OutboxEntry,
  type OutboxRecord as Row,
  type SharedWebhooks,
  type WebhookStore,
  eventIdOf,
  toOutboxRow as toRow,
} from "../../service/store/webhookStore.js";

/** The channel of webhook notifications (payload: `subscriptions` or `outbox`). */
const CHANNEL = "rsop_webhooks";
/** The advisory lock of the dispatcher election (per database). */
const DISPATCH_LOCK = 0x7273_6f70_03;

export const PG_WEBHOOK_SCHEMA = `
CREATE TABLE IF NOT EXISTS rsop_webhook_subscriptions (id text PRIMARY KEY, fields text NOT NULL, odometer bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS rsop_webhook_outbox (
  seq bigserial PRIMARY KEY, subscription text NOT NULL, kind text NOT NULL, event_id text NOT NULL, event text NOT NULL,
  state text NOT NULL DEFAULT 'pending', attempts integer NOT NULL DEFAULT 0, last_error text, parked_at text, reason text);
CREATE INDEX IF NOT EXISTS rsop_webhook_outbox_queue ON rsop_webhook_outbox (subscription, state, kind, seq);
ALTER TABLE rsop_webhook_subscriptions ADD COLUMN IF NOT EXISTS last_sequence bigint NOT NULL DEFAULT 0;
ALTER TABLE rsop_webhook_outbox ADD COLUMN IF NOT EXISTS sequence bigint NOT NULL DEFAULT 0;
ALTER TABLE rsop_webhook_subscriptions ADD COLUMN IF NOT EXISTS organization text NOT NULL DEFAULT '';
ALTER TABLE rsop_webhook_subscriptions ADD COLUMN IF NOT EXISTS generation text NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS rsop_webhook_subscriptions_organization ON rsop_webhook_subscriptions (organization);
WITH n AS (SELECT seq, row_number() OVER (PARTITION BY subscription ORDER BY seq) AS r FROM rsop_webhook_outbox WHERE sequence = 0),
  numbered AS (UPDATE rsop_webhook_outbox o SET sequence = n.r FROM n WHERE o.seq = n.seq RETURNING o.subscription, o.sequence)
UPDATE rsop_webhook_subscriptions s SET last_sequence = greatest(s.last_sequence, m.top)
  FROM (SELECT subscription, max(sequence) AS top FROM numbered GROUP BY subscription) m WHERE s.id = m.subscription;
`;

/** The insert of outbox rows (in order: `seq` follows the array) and the notification, as one statement. */
const INSERT = `WITH added AS (
  INSERT INTO rsop_webhook_outbox (subscription, kind, event_id, event, sequence)
  SELECT s, k, i, e, q FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS x(s, k, i, e, q, n) ORDER BY n
  RETURNING 1)
SELECT pg_notify('${CHANNEL}', 'outbox') FROM (SELECT 1 FROM added LIMIT 1) AS any_added`;

/**
 * Takes the next `sequence` numbers of the subscriptions (HW4): locks their rows in id order (no
 * deadlock between two inserting transactions) and moves each one's counter by its count; the lock
 * is held to the commit, so a later transaction's rows take both later numbers and later `seq`s.
 * Resolves to the first number taken per subscription.
 */
const TAKE = `WITH locked AS (SELECT id FROM rsop_webhook_subscriptions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE)
UPDATE rsop_webhook_subscriptions s SET last_sequence = s.last_sequence + d.n
  FROM unnest($1::text[], $2::bigint[]) AS d(id, n) JOIN locked ON locked.id = d.id WHERE s.id = d.id
  RETURNING s.id, s.last_sequence - d.n + 1 AS first`;

/** Inserts outbox rows in the caller's transaction, each with its subscription's next sequence number. */
async function insertRows(c: Queryable, entries: readonly OutboxEntry[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e.subscriptionId, (counts.get(e.subscriptionId) ?? 0) + 1);
  const ids = [...counts.keys()].sort();
  const taken = await c.query<{ id: string; first: string }>(TAKE, [ids, ids.map((id) => counts.get(id)!)]);
  const next = new Map<string, number>();
  for (const r of taken.rows) next.set(r.id, Number(r.first));
  // One event usually goes to several subscriptions: its JSON is made once.
  let last: unknown = null;
  let text = "";
  const events: string[] = [];
  const sequences: number[] = [];
  for (const e of entries) {
    if (e.event !== last) [last, text] = [e.event, JSON.stringify(e.event)];
    events.push(text);
    const n = next.get(e.subscriptionId);
    sequences.push(n ?? 0);
    if (n !== undefined) next.set(e.subscriptionId, n + 1);
  }
  await c.query(INSERT, [
    entries.map((e) => e.subscriptionId),
    entries.map((e) => e.kind),
    entries.map((e) => eventIdOf(e.event)),
    events,
    sequences,
  ]);
}

/** What postgresWebhooks needs of the store that opens it. */
export interface PgWebhookDeps {
  /** A new, unconnected client of the database. */
  readonly newClient: () => ListeningClient;
  /** A query on the pool; a lost database becomes StoreUnavailableError. */
  readonly query: <R extends object>(sql: string, params?: unknown[]) => Promise<R[]>;
  /** A transaction on a pool connection. */
  readonly transaction: <T>(body: (c: Queryable) => Promise<T>) => Promise<T>;
  /** Throws when the store is closed. */
  readonly open: () => void;
}

/**
 * The webhook store of a PostgreSQL database (its tables are created by the store's schema), and
 * `insert`, which adds outbox rows inside the caller's transaction (the store's `appendAt`).
 */
export function postgresWebhooks(deps: PgWebhookDeps): {
  store: WebhookStore;
  insert: (c: Queryable, entries: readonly OutboxEntry[]) => Promise<void>;
  close: () => Promise<void>;
} {
  const { query, transaction } = deps;
  const notify = (c: Queryable, what: "subscriptions" | "outbox") =>
    c.query(`SELECT pg_notify('${CHANNEL}', $1)`, [what]);

  // The listening session of this process, and whether it holds the dispatcher lock.
  let session: Listening | undefined;

  const shared: SharedWebhooks = {
    claimDispatcher: async () => (await session?.lock(DISPATCH_LOCK)) ?? false,
    async watch(onChange) {
      deps.open();
      const watching = await listen(deps.newClient, CHANNEL, {
        notification(payload) {
          if (payload === "subscriptions" || payload === "outbox") onChange(payload);
        },
        lost: () => undefined, // the lock went with the session
        reconnected() {
          // A notification may have been missed while the session was down.
          onChange("subscriptions");
          onChange("outbox");
        },
        reconnectFailed: () => undefined,
      });
      session = watching;
      return () => watching.stop();
    },
  };

  const store: WebhookStore = {
    shared,
    async subscriptions(organization) {
      const rows = await query<{
        id: string;
        fields: string;
        odometer: string;
        organization: string;
        generation: string;
      }>(
        `SELECT id, fields, odometer, organization, generation FROM rsop_webhook_subscriptions
         WHERE $1::text IS NULL OR organization = $1 ORDER BY id`,
        [organization ?? null],
      );
      return rows.map((r) => ({ ...r, fields: JSON.parse(r.fields) as unknown, odometer: Number(r.odometer) }));
    },
    async putSubscription(id, fields, owner) {
      await transaction(async (c) => {
        // The owner is set once, at the creation; a replacement changes the fields only.
        await c.query(
          "INSERT INTO rsop_webhook_subscriptions (id, fields, organization, generation) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET fields = excluded.fields",
          [id, JSON.stringify(fields), owner?.organization ?? "", owner?.generation ?? ""],
        );
        await notify(c, "subscriptions");
      });
    },
    async deleteSubscription(id) {
      await transaction(async (c) => {
        await c.query("DELETE FROM rsop_webhook_outbox WHERE subscription = $1", [id]);
        await c.query("DELETE FROM rsop_webhook_subscriptions WHERE id = $1", [id]);
        await notify(c, "subscriptions");
      });
    },
    async enqueue(entries) {
      if (entries.length > 0) await transaction((c) => insertRows(c, entries));
    },
    ...outboxQueue(query),
  };

  return {
    store,
    async insert(c, entries) {
      if (entries.length > 0) await insertRows(c, entries);
    },
    async close() {
      await session?.stop();
    },
  };
}

/** The outbox rows once written: the queue of a subscription, its delivered and parked rows. */
function outboxQueue(
  query: PgWebhookDeps["query"],
): Pick<WebhookStore, "pending" | "pendingCounts" | "delivered" | "park" | "parkOldest" | "parked" | "redeliver"> {
  return {
    async pending(id, limit) {
      return (
        await query<Row>(
          "SELECT * FROM rsop_webhook_outbox WHERE subscription = $1 AND state = 'pending' ORDER BY seq LIMIT $2",
          [id, limit],
        )
      ).map(toRow);
    },
    async pendingCounts() {
      const out = new Map<string, { access: number; change: number }>();
      for (const r of await query<{ subscription: string; kind: "access" | "change"; n: string }>(
        "SELECT subscription, kind, count(*) AS n FROM rsop_webhook_outbox WHERE state = 'pending' GROUP BY subscription, kind",
      )) {
        const c = out.get(r.subscription) ?? { access: 0, change: 0 };
        c[r.kind] = Number(r.n);
        out.set(r.subscription, c);
      }
      return out;
    },
    async delivered(rows) {
      if (rows.length === 0) return;
      // One statement: the rows go and their subscriptions' odometers count them, together.
      await query(
        `WITH gone AS (
           DELETE FROM rsop_webhook_outbox o USING unnest($1::text[], $2::bigint[]) AS d(sub, seq)
           WHERE o.subscription = d.sub AND o.seq = d.seq RETURNING o.subscription),
         n AS (SELECT subscription, count(*) AS c FROM gone GROUP BY subscription)
         UPDATE rsop_webhook_subscriptions s SET odometer = s.odometer + n.c FROM n WHERE s.id = n.subscription`,
        [rows.map((r) => r.subscriptionId), rows.map((r) => r.seq)],
      );
    },
    async park(id, seq, attempts, lastError, time) {
      await query(
        "UPDATE rsop_webhook_outbox SET state = 'parked', attempts = $1, last_error = $2, parked_at = $3, reason = 'failed' WHERE subscription = $4 AND seq = $5 AND state = 'pending'",
        [attempts, lastError, time, id, seq],
      );
    },
    async parkOldest(id, kind, keep, time) {
      const rows = await query(
        `UPDATE rsop_webhook_outbox SET state = 'parked', last_error = 'the backlog of this subscription was full', parked_at = $1, reason = 'backlog'
         WHERE seq IN (SELECT seq FROM rsop_webhook_outbox WHERE subscription = $2 AND state = 'pending' AND kind = $3 ORDER BY seq DESC OFFSET $4)
         RETURNING 1`,
        [time, id, kind, keep],
      );
      return rows.length;
    },
    async parked(id, offset, limit) {
      const rows = (
        await query<Row>(
          "SELECT * FROM rsop_webhook_outbox WHERE subscription = $1 AND state = 'parked' ORDER BY seq LIMIT $2 OFFSET $3",
          [id, limit, offset],
        )
      ).map(toRow);
      const total = Number(
        (
          await query<{ n: string }>(
            "SELECT count(*) AS n FROM rsop_webhook_outbox WHERE subscription = $1 AND state = 'parked'",
            [id],
          )
        )[0]!.n,
      );
      return { rows, total };
    },
    async redeliver(id, ids) {
      // The dispatcher may run in another process: the notification wakes it.
      const r = await query<{ n: string }>(
        `WITH again AS (
           UPDATE rsop_webhook_outbox SET state = 'pending', attempts = 0, parked_at = NULL, reason = NULL
           WHERE subscription = $1 AND state = 'parked' AND ($2::text[] IS NULL OR event_id = ANY($2::text[])) RETURNING 1)
         SELECT (SELECT count(*) FROM again) AS n, pg_notify('${CHANNEL}', 'outbox')`,
        [id, ids === null ? null : [...new Set(ids)]],
      );
      return Number(r[0]!.n);
    },
  };
}
