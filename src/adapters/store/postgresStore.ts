// The PostgreSQL store of `rsop serve --store postgres://…` (the driver `pg`, loaded only when a
// store is opened). Several processes share one database: the change log's primary key is its
// sequence number, so an append at a sequence number another process took first fails as a whole
// (unique violation → false) and nothing is written; every append notifies `rsop_log` in the same
// transaction (NOTIFY is delivered at commit); snapshots are written by the one process holding a
// session advisory lock. Tables are prefixed `rsop_`, so the database may hold other things too.
import type { Pool, PoolClient } from "pg";
import { type Listening, listen } from "./pgListen.js";
import { PG_WEBHOOK_SCHEMA, type PgWebhookDeps, postgresWebhooks } from "./postgresWebhooks.js";
import {
  type SharedStore,
  type StoredChange,
  type StoredKind,
  type StoredState,
  StoreError,
  StoreUnavailableError,
} from "../../service/store/store.js";
import type { OutboxEntry } from "../../service/store/webhookStore.js";

/** The schema version written to `rsop_meta`; a database of another version is refused. */
const SCHEMA_VERSION = "1";
/** The channel of append notifications (payload: the sequence number). */
const CHANNEL = "rsop_log";
/** Advisory lock keys (per database): schema creation, and the election of the snapshot writer. */
const SCHEMA_LOCK = 0x7273_6f70_01; // "rsop" 1
const WRITER_LOCK = 0x7273_6f70_02;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rsop_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS rsop_changes (seq bigint PRIMARY KEY, time text NOT NULL, operation text NOT NULL, patches text NOT NULL, stored_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS rsop_snapshots (seq bigint PRIMARY KEY, time text NOT NULL, snapshot text NOT NULL, stored_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS rsop_reports (n bigserial PRIMARY KEY, id text NOT NULL UNIQUE, info text NOT NULL, records text);
${PG_WEBHOOK_SCHEMA}`;

/** Options of openPostgresStore. */
export interface PostgresStoreOptions {
  /** How many snapshots to keep (the newest); default 2. */
  readonly keepSnapshots?: number;
  /**
   * Changes stay in the log at least this long (milliseconds), so that a replica that was down that
   * long catches up from the log; older ones go once a kept snapshot covers them. Default one day (PG6).
   */
  readonly retainMs?: number;
  /** Connections of the query pool; default 4 (the follower holds one more). */
  readonly poolSize?: number;
}

type PgModule = typeof import("pg");

async function loadDriver(): Promise<PgModule> {
  try {
    const m = (await import("pg")) as unknown as { default?: PgModule };
    return (m.default ?? m) as PgModule;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
      throw new StoreError(
        "--store postgres://… needs the package pg (an optional peer dependency of rsop-engine): npm install pg",
      );
    throw new StoreError(`pg could not be loaded: ${(e as Error).message}`);
  }
}

/** The URL with its password hidden, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "the database";
  }
}

/** Whether an error means the database (or the connection to it) is unavailable, not that the request is wrong. */
function isUnavailable(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  if (typeof code !== "string") return true; // socket errors, timeouts, "Connection terminated"
  // 08: connection exception; 57P: operator intervention (shutdown, cannot connect now); 53: insufficient resources.
  return code.startsWith("08") || code.startsWith("57P") || code.startsWith("53") || code.startsWith("E");
}

interface ChangeRow {
  seq: string;
  time: string;
  operation: string;
  patches: string;
}

function toChange(r: ChangeRow): StoredChange {
  return {
    seq: Number(r.seq),
    time: r.time,
    operation: JSON.parse(r.operation) as unknown,
    patches: JSON.parse(r.patches) as unknown[],
  };
}

/**
 * Opens a PostgreSQL store (creating its tables if needed). Any number of processes may open the same
 * database at once.
 * @throws StoreError when pg is missing, the database cannot be reached, or it holds another schema version.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<SharedStore> {
  const pg = await loadDriver();
  const where = redactUrl(url);
  const keep = Math.max(1, options.keepSnapshots ?? 2);
  const retainMs = options.retainMs ?? 24 * 3600 * 1000;
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 4,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection the server closed (a restart) is dropped by the pool; the next query opens another.
  pool.on("error", () => undefined);
  await createSchema(pool, where);

  const { open, query, transaction, closing } = pgAccess(pool, where);

  /** A session of its own (the follower's, the webhooks' watcher's). */
  const newClient = () => new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  const webhooks = postgresWebhooks({ newClient, query, transaction, open });

  const appendAt = pgAppender(query, transaction, webhooks.insert);

  // The follower's own session: LISTEN, and the snapshot writer's advisory lock (held while it lives).
  let follower: Listening | undefined;

  return {
    load: () => loadPgState(query, where),
    // Reports (the Store's report methods): one row each, as in SQLite; shared by every replica.
    ...pgReports(query),
    async init(kind: StoredKind, snapshot: unknown, time: string) {
      await transaction(async (c) => {
        const r = await c.query(
          "INSERT INTO rsop_meta (key, value) VALUES ('kind', $1) ON CONFLICT (key) DO NOTHING RETURNING key",
          [kind],
        );
        if (r.rowCount === 0) throw new StoreError(`${where} already holds a system`);
        await c.query("INSERT INTO rsop_snapshots (seq, time, snapshot) VALUES (0, $1, $2)", [
          time,
          JSON.stringify(snapshot),
        ]);
      });
    },
    async append(operation, patches, time, outbox) {
      // One process's append (the Store interface): at the next free sequence number.
      for (;;) {
        const next = Number(
          (await query<{ seq: string }>("SELECT coalesce(max(seq), 0) + 1 AS seq FROM rsop_changes"))[0]!.seq,
        );
        if (await appendAt(next, [{ operation, patches, time }], outbox)) return next;
      }
    },
    appendAt,
    async changesAfter(seq, limit) {
      const rows = await query<ChangeRow>(
        "SELECT seq, time, operation, patches FROM rsop_changes WHERE seq > $1 ORDER BY seq LIMIT $2",
        [seq, limit],
      );
      if (rows.length > 0 && Number(rows[0]!.seq) !== seq + 1) return null;
      return rows.map(toChange);
    },
    async snapshot(at, snapshot, time) {
      await transaction(async (c) => {
        await c.query(
          "INSERT INTO rsop_snapshots (seq, time, snapshot) VALUES ($1, $2, $3) ON CONFLICT (seq) DO NOTHING",
          [at, time, JSON.stringify(snapshot)],
        );
        await c.query(
          "DELETE FROM rsop_snapshots WHERE seq NOT IN (SELECT seq FROM rsop_snapshots ORDER BY seq DESC LIMIT $1)",
          [keep],
        );
        // Compaction (PG6): a change goes once the oldest kept snapshot covers it and it is older than retainMs.
        await c.query(
          "DELETE FROM rsop_changes WHERE seq <= (SELECT min(seq) FROM rsop_snapshots) AND stored_at < now() - make_interval(secs => $1)",
          [retainMs / 1000],
        );
      });
    },
    async follow(listener) {
      open();
      let following: Listening;
      try {
        following = await listen(newClient, CHANNEL, {
          notification(payload) {
            if (payload !== undefined) listener.onAppend(Number(payload));
          },
          lost(e) {
            if (e !== undefined) listener.onError(e);
          },
          reconnected: () => listener.onReconnect(),
          reconnectFailed: (e) => listener.onError(e),
        });
      } catch (e) {
        throw new StoreError(`cannot follow the change log of ${where}: ${(e as Error).message}`);
      }
      follower = following;
      return () => following.stop();
    },
    // The snapshot writer's election: an advisory lock held by the follower's session.
    isSnapshotWriter: async () => (await follower?.lock(WRITER_LOCK)) ?? false,
    webhooks: webhooks.store,
    async close() {
      if (!closing()) return;
      await webhooks.close();
      await pool.end().catch(() => undefined);
    },
  };
}

/** Creates the tables (under a lock: several processes may start at once) and checks the schema version. */
async function createSchema(pool: Pool, where: string): Promise<void> {
  try {
    const c = await pool.connect();
    try {
      await c.query("BEGIN");
      await c.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
      await c.query(SCHEMA);
      const v = await c.query<{ value: string }>("SELECT value FROM rsop_meta WHERE key = 'schema'");
      if (v.rows.length === 0)
        await c.query("INSERT INTO rsop_meta (key, value) VALUES ('schema', $1)", [SCHEMA_VERSION]);
      else if (v.rows[0]!.value !== SCHEMA_VERSION)
        throw new StoreError(
          `${where} has rsop schema version ${v.rows[0]!.value}; this rsop reads version ${SCHEMA_VERSION}`,
        );
      await c.query("COMMIT");
    } catch (e) {
      await c.query("ROLLBACK").catch(() => undefined);
      throw e;
    } finally {
      c.release();
    }
  } catch (e) {
    await pool.end().catch(() => undefined);
    if (e instanceof StoreError) throw e;
    throw new StoreError(`cannot use the database ${where}: ${(e as Error).message}`);
  }
}

/**
 * The pool's queries and transactions, refused once the store is closed; a lost database becomes
 * StoreUnavailableError. `closing()` closes it and says whether it was open.
 */
function pgAccess(pool: Pool, where: string) {
  let closed = false;
  const open = () => {
    if (closed) throw new StoreError(`the database ${where} is closed`);
  };
  /** Runs a query; a lost database becomes StoreUnavailableError. */
  async function query<R extends object>(sql: string, params: unknown[] = []): Promise<R[]> {
    open();
    try {
      return (await pool.query<R>(sql, params)).rows;
    } catch (e) {
      if (isUnavailable(e))
        throw new StoreUnavailableError(`the database ${where} is unavailable: ${(e as Error).message}`);
      throw e;
    }
  }
  async function transaction<T>(body: (c: PoolClient) => Promise<T>): Promise<T> {
    open();
    let c: PoolClient;
    try {
      c = await pool.connect();
    } catch (e) {
      throw new StoreUnavailableError(`the database ${where} is unavailable: ${(e as Error).message}`);
    }
    // A connection the server ends while it is checked out (a restart) says so by an error event,
    // which nobody else listens to then: noted here, and the connection is not given back to the pool.
    let broken: Error | undefined;
    const onError = (e: Error) => {
      broken = e;
    };
    c.on("error", onError);
    try {
      await c.query("BEGIN");
      const r = await body(c);
      await c.query("COMMIT");
      return r;
    } catch (e) {
      await c.query("ROLLBACK").catch(() => undefined);
      if (!(e instanceof StoreError) && isUnavailable(e))
        throw new StoreUnavailableError(`the database ${where} is unavailable: ${(e as Error).message}`);
      throw e;
    } finally {
      c.off("error", onError);
      c.release(broken);
    }
  }
  const closing = () => {
    if (closed) return false;
    closed = true;
    return true;
  };
  return { open, query, transaction, closing };
}

/** The latest snapshot and the changes after it; null for an empty database. */
async function loadPgState(query: PgWebhookDeps["query"], where: string): Promise<StoredState | null> {
  const kind = (await query<{ value: string }>("SELECT value FROM rsop_meta WHERE key = 'kind'"))[0]?.value;
  const latest = (
    await query<{ seq: string; snapshot: string }>("SELECT seq, snapshot FROM rsop_snapshots ORDER BY seq DESC LIMIT 1")
  )[0];
  if (kind === undefined || latest === undefined) return null;
  if (kind !== "system" && kind !== "panel") throw new StoreError(`${where} holds an unknown kind of data ("${kind}")`);
  const snapshotSeq = Number(latest.seq);
  const changes = (
    await query<ChangeRow>("SELECT seq, time, operation, patches FROM rsop_changes WHERE seq > $1 ORDER BY seq", [
      snapshotSeq,
    ])
  ).map(toChange);
  changes.forEach((c, i) => {
    if (c.seq !== snapshotSeq + i + 1)
      throw new StoreError(`${where}: the change log jumps from ${snapshotSeq + i} to ${c.seq}`);
  });
  return {
    kind,
    snapshotSeq,
    snapshot: JSON.parse(latest.snapshot) as unknown,
    changes,
    seq: changes.at(-1)?.seq ?? snapshotSeq,
  };
}

/** The report methods: one row each, as in SQLite; shared by every replica. */
function pgReports(
  query: PgWebhookDeps["query"],
): Pick<SharedStore, "putReport" | "listReports" | "reportRecords" | "reportRecordsText" | "deleteReport"> {
  return {
    async putReport(id, info, records) {
      await query(
        "INSERT INTO rsop_reports (id, info, records) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET info = excluded.info, records = coalesce(excluded.records, rsop_reports.records)",
        [
          id,
          JSON.stringify(info),
          records === undefined ? null : typeof records === "string" ? records : JSON.stringify(records),
        ],
      );
    },
    async listReports() {
      return (await query<{ id: string; info: string }>("SELECT id, info FROM rsop_reports ORDER BY n")).map((r) => ({
        id: r.id,
        info: JSON.parse(r.info) as unknown,
      }));
    },
    async reportRecords(id) {
      const text = (await query<{ records: string | null }>("SELECT records FROM rsop_reports WHERE id = $1", [id]))[0]
        ?.records;
      return text === undefined || text === null ? null : (JSON.parse(text) as unknown[]);
    },
    async reportRecordsText(id) {
      return (
        (await query<{ records: string | null }>("SELECT records FROM rsop_reports WHERE id = $1", [id]))[0]?.records ??
        null
      );
    },
    async deleteReport(id) {
      return (await query<{ id: string }>("DELETE FROM rsop_reports WHERE id = $1 RETURNING id", [id])).length > 0;
    },
  };
}

/**
 * `appendAt(seq, writes, outbox)`: the changes at seq, seq + 1, …, with their outbox rows; false when
 * another process appended seq first.
 */
function pgAppender(
  query: PgWebhookDeps["query"],
  transaction: <T>(body: (c: PoolClient) => Promise<T>) => Promise<T>,
  insertOutbox: (c: PoolClient, entries: readonly OutboxEntry[]) => Promise<void>,
) {
  return async function appendAt(
    seq: number,
    writes: readonly { readonly operation: unknown; readonly patches: readonly unknown[]; readonly time: string }[],
    outbox: readonly OutboxEntry[] = [],
  ): Promise<boolean> {
    if (writes.length === 0) return true;
    // One statement: the rows and the notification (of the last) commit together; with outbox rows,
    // they join the same transaction.
    const text = `WITH added AS (
       INSERT INTO rsop_changes (seq, time, operation, patches)
       SELECT $1::bigint + n - 1, time, operation, patches FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS w(time, operation, patches, n)
       RETURNING seq)
     SELECT pg_notify('${CHANNEL}', max(seq)::text) FROM added`;
    const params = [
      seq,
      writes.map((w) => w.time),
      writes.map((w) => JSON.stringify(w.operation)),
      writes.map((w) => JSON.stringify(w.patches)),
    ];
    try {
      if (outbox.length === 0) await query(text, params);
      else
        await transaction(async (c) => {
          await c.query(text, params);
          await insertOutbox(c, outbox);
        });
      return true;
    } catch (e) {
      if ((e as { code?: unknown }).code === "23505") return false; // another process appended seq first
      throw e;
    }
  };
}
