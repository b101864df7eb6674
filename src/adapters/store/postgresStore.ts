// The PostgreSQL store of `rsop serve --store postgres://…` (the driver `pg`, loaded only when a
// store is opened). Several processes share one database: the change log's primary key is its
// sequence number, so an append at a sequence number another process took first fails as a whole
// (unique violation → false) and nothing is written; every append notifies `rsop_log` in the same
// transaction (NOTIFY is delivered at commit); snapshots are written by the one process holding a
// session advisory lock. Tables are prefixed `rsop_`, so the database may hold other things too.
// The change log's format is recorded in `rsop_meta`; a format-1 log is upgraded when a process opens
// the database (changeLogFormat.ts), under the schema lock.
import type { Pool, PoolClient } from "pg";
import { JsonChunkCache, jsonTextInTurns } from "./jsonSlices.js";
import { type Listening, listen } from "./pgListen.js";
import { PG_WEBHOOK_SCHEMA, type PgWebhookDeps, postgresWebhooks } from "./postgresWebhooks.js";
import {
  type SharedStore,
  type StoredChange,
  type StoredKind,
  type StoredState,
  type StoredWrite,
  StoreError,
  StoreUnavailableError,
} from "../../service/store/store.js";
import {
  CHANGE_LOG_FORMAT,
  LOG_FORMAT_KEY,
  logFormatAction,
  replayFormat1,
} from "../../service/store/changeLogFormat.js";
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
  await createSchema(pool, where, keep);

  const { open, query, transaction, closing } = pgAccess(pool, where);

  /** A session of its own (the follower's, the webhooks' watcher's). */
  const newClient = () => new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  const webhooks = postgresWebhooks({ newClient, query, transaction, open });

  const appendAt = pgAppender(query, transaction, webhooks.insert);

  // The follower's own session: LISTEN, and the snapshot writer's advisory lock (held while it lives).
  let follower: Listening | undefined;
  /** The texts of the last snapshot's runs of entities (jsonSlices.ts). */
  const chunks = new JsonChunkCache();

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
        await c.query(
          "INSERT INTO rsop_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
          [LOG_FORMAT_KEY, String(CHANGE_LOG_FORMAT)],
        );
        await c.query("INSERT INTO rsop_snapshots (seq, time, snapshot) VALUES (0, $1, $2)", [
          time,
          JSON.stringify(snapshot),
        ]);
      });
    },
    append: (operation, patches, time, outbox) => appendNext(query, appendAt, { operation, patches, time }, outbox),
    appendAt,
    async changesAfter(seq, limit) {
      const rows = await query<ChangeRow>(
        "SELECT seq, time, operation, patches FROM rsop_changes WHERE seq > $1 ORDER BY seq LIMIT $2",
        [seq, limit],
      );
      if (rows.length > 0 && Number(rows[0]!.seq) !== seq + 1) return null;
      return rows.map(toChange);
    },
    async snapshot(at, snapshot, time, pace = "background") {
      // Serialized a couple of milliseconds at a time: no request waits behind it (jsonSlices.ts).
      const text = await jsonTextInTurns(snapshot, pace === "background", chunks);
      await transaction(async (c) => {
        await c.query(
          "INSERT INTO rsop_snapshots (seq, time, snapshot) VALUES ($1, $2, $3) ON CONFLICT (seq) DO NOTHING",
          [at, time, text],
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

/**
 * Creates the tables (under a lock: several processes may start at once), checks the schema version,
 * and records the change log's format or upgrades a format-1 log (upgradeLog).
 */
async function createSchema(pool: Pool, where: string, keep: number): Promise<void> {
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
      await upgradeLog(c, where, keep);
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
 * In the schema transaction: records the change log's format in a database that has none (an empty
 * one), and upgrades a format-1 log: its latest snapshot with the changes after it applied is stored
 * as the snapshot of the last change (older snapshots beyond `keep` go), then the format.
 * @throws StoreError for a newer format, or a format-1 log that does not upgrade (the transaction is
 *   rolled back: nothing is changed).
 */
async function upgradeLog(c: PoolClient, where: string, keep: number): Promise<void> {
  const meta = async (key: string) =>
    (await c.query<{ value: string }>("SELECT value FROM rsop_meta WHERE key = $1", [key])).rows[0]?.value;
  if (logFormatAction(await meta(LOG_FORMAT_KEY), where) === "current") return;
  const kind = await meta("kind");
  const latest = (
    await c.query<{ seq: string; snapshot: string }>(
      "SELECT seq, snapshot FROM rsop_snapshots ORDER BY seq DESC LIMIT 1",
    )
  ).rows[0];
  if (kind !== undefined && latest !== undefined) {
    const changes = (
      await c.query<ChangeRow>("SELECT seq, time, operation, patches FROM rsop_changes WHERE seq > $1 ORDER BY seq", [
        latest.seq,
      ])
    ).rows.map(toChange);
    if (changes.length > 0) {
      const next = replayFormat1(kind as StoredKind, JSON.parse(latest.snapshot), changes, where);
      await c.query(
        "INSERT INTO rsop_snapshots (seq, time, snapshot) VALUES ($1, $2, $3) ON CONFLICT (seq) DO NOTHING",
        [changes.at(-1)!.seq, new Date().toISOString(), JSON.stringify(next)],
      );
      await c.query(
        "DELETE FROM rsop_snapshots WHERE seq NOT IN (SELECT seq FROM rsop_snapshots ORDER BY seq DESC LIMIT $1)",
        [keep],
      );
    }
  }
  await c.query(
    "INSERT INTO rsop_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    [LOG_FORMAT_KEY, String(CHANGE_LOG_FORMAT)],
  );
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
  // Parsed when first read (a caller that only asks for `kind` pays nothing for it).
  let snapshot: { readonly value: unknown } | undefined;
  return {
    kind,
    snapshotSeq,
    get snapshot() {
      snapshot ??= { value: JSON.parse(latest.snapshot) as unknown };
      return snapshot.value;
    },
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

/** One process's append (Store.append): at the next free sequence number, which a compaction may have left only in a snapshot. */
async function appendNext(
  query: PgWebhookDeps["query"],
  appendAt: (seq: number, writes: readonly StoredWrite[], outbox?: readonly OutboxEntry[]) => Promise<boolean>,
  write: StoredWrite,
  outbox: readonly OutboxEntry[] | undefined,
): Promise<number> {
  for (;;) {
    const next = Number(
      (
        await query<{ seq: string }>(
          "SELECT greatest((SELECT max(seq) FROM rsop_changes), (SELECT max(seq) FROM rsop_snapshots), 0) + 1 AS seq",
        )
      )[0]!.seq,
    );
    if (await appendAt(next, [write], outbox)) return next;
  }
}

/**
 * `appendAt(seq, writes, outbox)`: the changes at seq, seq + 1, …, with their outbox rows; false when
 * another process appended seq first, or when the log does not hold change seq - 1 (nor a snapshot of
 * it): the calls of this process run one after the other in the order they were made, and one made
 * after a call that failed (Store.appendAt) must not leave a gap in the log.
 */
function pgAppender(
  query: PgWebhookDeps["query"],
  transaction: <T>(body: (c: PoolClient) => Promise<T>) => Promise<T>,
  insertOutbox: (c: PoolClient, entries: readonly OutboxEntry[]) => Promise<void>,
) {
  // One statement: the rows and the notification (of the last, only when rows were added) commit
  // together; with outbox rows, they join the same transaction.
  const text = `WITH added AS (
     INSERT INTO rsop_changes (seq, time, operation, patches)
     SELECT $1::bigint + n - 1, time, operation, patches FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS w(time, operation, patches, n)
     WHERE EXISTS (SELECT 1 FROM rsop_changes WHERE seq = $1::bigint - 1) OR EXISTS (SELECT 1 FROM rsop_snapshots WHERE seq = $1::bigint - 1)
     RETURNING seq)
   SELECT count(*)::int AS n, (SELECT pg_notify('${CHANNEL}', max(seq)::text) FROM added HAVING count(*) > 0) AS told FROM added`;
  async function appendNow(seq: number, writes: readonly StoredWrite[], outbox: readonly OutboxEntry[]) {
    if (writes.length === 0) return true;
    const params = [
      seq,
      writes.map((w) => w.time),
      writes.map((w) => JSON.stringify(w.operation)),
      writes.map((w) => JSON.stringify(w.patches)),
    ];
    try {
      const [added] =
        outbox.length === 0
          ? await query<{ n: number }>(text, params)
          : await transaction(async (c) => {
              const r = (await c.query<{ n: number }>(text, params)).rows;
              // Nothing added: the transaction is rolled back, outbox rows and all.
              if (r[0]!.n === 0) throw new NotNext();
              await insertOutbox(c, outbox);
              return r;
            });
      return added!.n > 0;
    } catch (e) {
      if (e instanceof NotNext) return false;
      if ((e as { code?: unknown }).code === "23505") return false; // another process appended seq first
      throw e;
    }
  }
  let last: Promise<unknown> = Promise.resolve();
  return function appendAt(seq: number, writes: readonly StoredWrite[], outbox: readonly OutboxEntry[] = []) {
    const run = last.then(() => appendNow(seq, writes, outbox));
    last = run.catch(() => undefined);
    return run;
  };
}

/** The log does not end at the change before an append's first. */
class NotNext extends Error {}
