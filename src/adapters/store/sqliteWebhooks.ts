// The webhook tables of the SQLite store (webhookStore.ts): subscriptions and the outbox. They live
// in the store's database, so an outbox row and the change that caused it commit in one transaction.
import {
  type OutboxEntry,
  type OutboxRecord as Row,
  type StoredSubscription,
  type WebhookStore,
  eventIdOf,
  toOutboxRow as toRow,
} from "../../service/store/webhookStore.js";

/** What this file needs of a better-sqlite3 database (the driver itself is loaded by sqliteStore.ts). */
interface Statement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
export interface SqliteLike {
  exec(sql: string): unknown;
  prepare(sql: string): Statement;
  transaction<F extends (...args: never[]) => unknown>(fn: F): F;
}

export const WEBHOOK_SCHEMA = `
CREATE TABLE IF NOT EXISTS webhook_subscriptions (id TEXT PRIMARY KEY, fields TEXT NOT NULL, odometer INTEGER NOT NULL DEFAULT 0, last_sequence INTEGER NOT NULL DEFAULT 0,
  organization TEXT NOT NULL DEFAULT '', generation TEXT NOT NULL DEFAULT '') STRICT;
CREATE TABLE IF NOT EXISTS webhook_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, subscription TEXT NOT NULL, kind TEXT NOT NULL, event_id TEXT NOT NULL, event TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, parked_at TEXT, reason TEXT,
  sequence INTEGER NOT NULL DEFAULT 0) STRICT;
CREATE INDEX IF NOT EXISTS webhook_outbox_queue ON webhook_outbox (subscription, state, kind, seq);
CREATE INDEX IF NOT EXISTS webhook_subscriptions_organization ON webhook_subscriptions (organization);
`;

/**
 * A database made before events had a per-subscription `sequence` (HW4) gets the columns, and its
 * waiting rows their numbers from 1 in outbox order, once.
 */
function addSequences(db: SqliteLike): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('webhook_outbox')").all() as { name: string }[];
  if (columns.some((c) => c.name === "sequence")) return;
  db.transaction(() => {
    db.exec("ALTER TABLE webhook_subscriptions ADD COLUMN last_sequence INTEGER NOT NULL DEFAULT 0");
    db.exec("ALTER TABLE webhook_outbox ADD COLUMN sequence INTEGER NOT NULL DEFAULT 0");
    db.exec(
      `UPDATE webhook_outbox SET sequence = (SELECT count(*) FROM webhook_outbox o WHERE o.subscription = webhook_outbox.subscription AND o.seq <= webhook_outbox.seq)`,
    );
    db.exec(
      `UPDATE webhook_subscriptions SET last_sequence = (SELECT coalesce(max(sequence), 0) FROM webhook_outbox o WHERE o.subscription = webhook_subscriptions.id)`,
    );
  })();
}

/**
 * A database made before subscriptions had an owner gets the columns, "" for each: its subscriptions
 * are the embedded organization's (T40).
 */
function addOwners(db: SqliteLike): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('webhook_subscriptions')").all() as { name: string }[];
  if (columns.length === 0 || columns.some((c) => c.name === "organization")) return;
  db.transaction(() => {
    db.exec("ALTER TABLE webhook_subscriptions ADD COLUMN organization TEXT NOT NULL DEFAULT ''");
    db.exec("ALTER TABLE webhook_subscriptions ADD COLUMN generation TEXT NOT NULL DEFAULT ''");
  })();
}

/**
 * The webhook tables of an open database (created if missing): the WebhookStore, and `insert`, which
 * adds outbox rows inside the caller's transaction (the store's `append`).
 */
export function sqliteWebhooks(
  db: SqliteLike,
  open: () => void,
): { store: WebhookStore; insert: (entries: readonly OutboxEntry[]) => void; clear: () => void } {
  const before = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'webhook_outbox'").get() as {
    n: number;
  };
  if (before.n > 0) addSequences(db);
  addOwners(db);
  db.exec(WEBHOOK_SCHEMA);
  const insert = outboxInserter(db);
  const enqueue = db.transaction((entries: readonly OutboxEntry[]) => insert(entries));
  const all = db.prepare(
    "SELECT id, fields, odometer, organization, generation FROM webhook_subscriptions ORDER BY id",
  );
  const ofOrganization = db.prepare(
    "SELECT id, fields, odometer, organization, generation FROM webhook_subscriptions WHERE organization = ? ORDER BY id",
  );
  // The owner is set once, at the creation; a replacement changes the fields only.
  const put = db.prepare(
    "INSERT INTO webhook_subscriptions (id, fields, organization, generation) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET fields = excluded.fields",
  );
  const delSub = db.prepare("DELETE FROM webhook_subscriptions WHERE id = ?");
  const delRows = db.prepare("DELETE FROM webhook_outbox WHERE subscription = ?");
  const remove = db.transaction((id: string) => {
    delRows.run(id);
    delSub.run(id);
  });
  const pending = db.prepare(
    "SELECT * FROM webhook_outbox WHERE subscription = ? AND state = 'pending' ORDER BY seq LIMIT ?",
  );
  const counts = db.prepare(
    "SELECT subscription, kind, count(*) AS n FROM webhook_outbox WHERE state = 'pending' GROUP BY subscription, kind",
  );
  const { delivered, park, parkOldest, parkedPage, parkedCount, redeliver } = deliveryStatements(db);

  const store: WebhookStore = {
    async subscriptions(organization) {
      open();
      const rows = (organization === undefined ? all.all() : ofOrganization.all(organization)) as (Omit<
        StoredSubscription,
        "fields"
      > & { fields: string })[];
      return rows.map((r) => ({ ...r, fields: JSON.parse(r.fields) as unknown }));
    },
    async putSubscription(id, fields, owner) {
      open();
      put.run(id, JSON.stringify(fields), owner?.organization ?? "", owner?.generation ?? "");
    },
    async deleteSubscription(id) {
      open();
      remove(id);
    },
    async enqueue(entries) {
      open();
      if (entries.length > 0) enqueue(entries);
    },
    async pending(id, limit) {
      open();
      return (pending.all(id, limit) as Row[]).map(toRow);
    },
    async pendingCounts() {
      open();
      const out = new Map<string, { access: number; change: number }>();
      for (const r of counts.all() as { subscription: string; kind: "access" | "change"; n: number }[]) {
        const c = out.get(r.subscription) ?? { access: 0, change: 0 };
        c[r.kind] = r.n;
        out.set(r.subscription, c);
      }
      return out;
    },
    async delivered(rows) {
      open();
      if (rows.length > 0) delivered(rows);
    },
    async park(id, seq, attempts, lastError, time) {
      open();
      park.run(attempts, lastError, time, id, seq);
    },
    async parkOldest(id, kind, keep, time) {
      open();
      return parkOldest.run(time, id, kind, keep).changes;
    },
    async parked(id, offset, limit) {
      open();
      const rows = (parkedPage.all(id, limit, offset) as Row[]).map(toRow);
      return { rows, total: (parkedCount.get(id) as { n: number }).n };
    },
    async redeliver(id, ids) {
      open();
      return redeliver(id, ids);
    },
  };
  const clearRows = db.prepare("DELETE FROM webhook_outbox");
  const clearSubs = db.prepare("DELETE FROM webhook_subscriptions");
  /** Every subscription and outbox row goes (inside the caller's transaction). */
  const clear = () => {
    clearRows.run();
    clearSubs.run();
  };
  return { store, insert, clear };
}

/** `insert`: adds outbox rows, each with the next `sequence` of its subscription, in the caller's transaction. */
function outboxInserter(db: SqliteLike): (entries: readonly OutboxEntry[]) => void {
  const insertRow = db.prepare(
    "INSERT INTO webhook_outbox (subscription, kind, event_id, event, sequence) VALUES (?, ?, ?, ?, ?)",
  );
  const takeSequences = db.prepare(
    "UPDATE webhook_subscriptions SET last_sequence = last_sequence + ? WHERE id = ? RETURNING last_sequence",
  );
  return (entries: readonly OutboxEntry[]) => {
    // Each subscription's numbers are taken at once, in the transaction of the rows: they follow
    // `seq` with no gap (HW4).
    const counts = new Map<string, number>();
    for (const e of entries) counts.set(e.subscriptionId, (counts.get(e.subscriptionId) ?? 0) + 1);
    const next = new Map<string, number>();
    for (const [id, n] of counts) {
      const taken = takeSequences.get(n, id) as { last_sequence: number } | undefined;
      if (taken !== undefined) next.set(id, taken.last_sequence - n + 1);
    }
    // One event usually goes to several subscriptions: its JSON is written once per row but made once.
    let last: unknown = null;
    let text = "";
    for (const e of entries) {
      if (e.event !== last) [last, text] = [e.event, JSON.stringify(e.event)];
      const n = next.get(e.subscriptionId);
      if (n !== undefined) next.set(e.subscriptionId, n + 1);
      insertRow.run(e.subscriptionId, e.kind, eventIdOf(e.event), text, n ?? 0);
    }
  };
}

/** The statements of the delivery side: delivered, parked, redelivered rows. */
function deliveryStatements(db: SqliteLike) {
  const delRow = db.prepare("DELETE FROM webhook_outbox WHERE subscription = ? AND seq = ?");
  const bump = db.prepare("UPDATE webhook_subscriptions SET odometer = odometer + ? WHERE id = ?");
  const delivered = db.transaction((rows: readonly { subscriptionId: string; seq: number }[]) => {
    const counts = new Map<string, number>();
    for (const r of rows)
      if (delRow.run(r.subscriptionId, r.seq).changes > 0)
        counts.set(r.subscriptionId, (counts.get(r.subscriptionId) ?? 0) + 1);
    for (const [id, n] of counts) bump.run(n, id);
  });
  const park = db.prepare(
    "UPDATE webhook_outbox SET state = 'parked', attempts = ?, last_error = ?, parked_at = ?, reason = 'failed' WHERE subscription = ? AND seq = ? AND state = 'pending'",
  );
  const parkOldest = db.prepare(
    `UPDATE webhook_outbox SET state = 'parked', last_error = 'the backlog of this subscription was full', parked_at = ?, reason = 'backlog'
     WHERE seq IN (SELECT seq FROM webhook_outbox WHERE subscription = ? AND state = 'pending' AND kind = ? ORDER BY seq DESC LIMIT -1 OFFSET ?)`,
  );
  const parkedPage = db.prepare(
    "SELECT * FROM webhook_outbox WHERE subscription = ? AND state = 'parked' ORDER BY seq LIMIT ? OFFSET ?",
  );
  const parkedCount = db.prepare(
    "SELECT count(*) AS n FROM webhook_outbox WHERE subscription = ? AND state = 'parked'",
  );
  const redeliverAll = db.prepare(
    "UPDATE webhook_outbox SET state = 'pending', attempts = 0, parked_at = NULL, reason = NULL WHERE subscription = ? AND state = 'parked'",
  );
  const redeliverOne = db.prepare(
    "UPDATE webhook_outbox SET state = 'pending', attempts = 0, parked_at = NULL, reason = NULL WHERE subscription = ? AND state = 'parked' AND event_id = ?",
  );
  const redeliver = db.transaction((id: string, ids: readonly string[] | null) => {
    if (ids === null) return redeliverAll.run(id).changes;
    let n = 0;
    for (const e of new Set(ids)) n += redeliverOne.run(id, e).changes;
    return n;
  });
  return { delivered, park, parkOldest, parkedPage, parkedCount, redeliver };
}
