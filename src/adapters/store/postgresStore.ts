// The PostgreSQL store of `rsop serve --store postgres://…` (the driver `pg`, loaded only when a
// store is opened). Several processes share one database, which holds any number of tenants (2.0
// systems and 1.0 panels, each under its number: a space, openPostgresSpace) and the registry that
// names them (postgresRegistry.ts). A tenant's change log is keyed by (tenant, sequence number), so an
// append at a number another process took first fails as a whole (unique violation → false) and
// nothing is written; every append notifies `rsop_log` with `tenant:seq` in the same transaction
// (NOTIFY is delivered at commit). A process follows every tenant it serves through one listening
// session and one catch-up query per poll period (T6); a tenant's snapshots are written by the one
// process holding that tenant's advisory lock on its session (T7). Tables are prefixed `rsop_`, so
// the database may hold other things too. A database of schema 1 (one system, before tenants) is
// upgraded when a process opens it (T8); the change log's format is recorded in `rsop_meta`, and a
// format-1 log is upgraded too (changeLogFormat.ts), both under the schema lock.
import type { Pool, PoolClient } from "pg";
import { JsonChunkCache, jsonTextInTurns } from "./jsonSlices.js";
import { type Listening, type ListeningClient, type Queryable, listen } from "./pgListen.js";
import { PG_REGISTRY_SCHEMA, type PostgresRegistry, SCHEMA_LOCK, postgresRegistry } from "./postgresRegistry.js";
import { PG_WEBHOOK_SCHEMA, type PgWebhookDeps, postgresWebhooks } from "./postgresWebhooks.js";
import {
  type SharedStore,
  type SharedStoreSpace,
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

/** The schema version written to `rsop_meta`; version 1 is upgraded, another is refused. */
const SCHEMA_VERSION = "2";
/** The channel of append notifications (payload: `tenant:seq`; a bare `seq` is tenant 1's). */
const CHANNEL = "rsop_log";
/** The channel of registry commits (payload: the new rev). */
export const REGISTRY_CHANNEL = "rsop_registry";
/** Two-key advisory lock classes, the second key a tenant's number: its snapshot writer, its first import. */
const WRITER_CLASS = 0x7273_0002;
const INIT_CLASS = 0x7273_0004;
/** The `application_name` of a space's listening session (one per process: T6). */
export const FOLLOWER_APPLICATION = "rsop follower";

/**
 * The tenants: each one's kind and key (the registry's row: postgresRegistry.ts). Organization '':
 * stored by Store.init (an embedded database) or an upgrade, not yet named by a registry commit.
 */
const TENANTS_TABLE = `CREATE TABLE IF NOT EXISTS rsop_tenants (n bigint PRIMARY KEY, kind text NOT NULL CHECK (kind IN ('system', 'panel')),
  key text NOT NULL UNIQUE, organization text NOT NULL DEFAULT '', state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'staged')),
  info text NOT NULL DEFAULT '{}', created text NOT NULL, rev bigint NOT NULL DEFAULT 0);`;

/** The tables of schema 2 (created when missing). */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS rsop_changes (tenant bigint NOT NULL DEFAULT 1, seq bigint NOT NULL, time text NOT NULL, operation text NOT NULL, patches text NOT NULL, stored_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant, seq));
CREATE TABLE IF NOT EXISTS rsop_snapshots (tenant bigint NOT NULL DEFAULT 1, seq bigint NOT NULL, time text NOT NULL, snapshot text NOT NULL, stored_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant, seq));
CREATE TABLE IF NOT EXISTS rsop_reports (n bigserial PRIMARY KEY, tenant bigint NOT NULL DEFAULT 1, id text NOT NULL, info text NOT NULL, records text, UNIQUE (tenant, id));
CREATE TABLE IF NOT EXISTS rsop_kv (tenant bigint NOT NULL DEFAULT 1, key text NOT NULL, value text NOT NULL, PRIMARY KEY (tenant, key));
${TENANTS_TABLE}
${PG_REGISTRY_SCHEMA}
${PG_WEBHOOK_SCHEMA}`;

/**
 * Schema 1 → 2 in place (T8): every row goes to tenant 1 (the column's default) and the keys take the
 * tenant first; then (upgradeSchema1) the kind of the one system moves to its tenant row.
 */
const UPGRADE_1_TO_2 = `
ALTER TABLE rsop_changes ADD COLUMN tenant bigint NOT NULL DEFAULT 1;
ALTER TABLE rsop_changes DROP CONSTRAINT rsop_changes_pkey, ADD PRIMARY KEY (tenant, seq);
ALTER TABLE rsop_snapshots ADD COLUMN tenant bigint NOT NULL DEFAULT 1;
ALTER TABLE rsop_snapshots DROP CONSTRAINT rsop_snapshots_pkey, ADD PRIMARY KEY (tenant, seq);
ALTER TABLE rsop_reports ADD COLUMN tenant bigint NOT NULL DEFAULT 1;
ALTER TABLE rsop_reports DROP CONSTRAINT rsop_reports_id_key, ADD CONSTRAINT rsop_reports_tenant_id_key UNIQUE (tenant, id);
${TENANTS_TABLE}
`;

/** Options of openPostgresStore and openPostgresSpace. */
export interface PostgresStoreOptions {
  /** How many snapshots to keep per tenant (the newest); default 2. */
  readonly keepSnapshots?: number;
  /**
   * Changes stay in the log at least this long (milliseconds), so that a replica that was down that
   * long catches up from the log; older ones go once a kept snapshot covers them. Default one day (PG6).
   */
  readonly retainMs?: number;
  /** Connections of the query pool; default 4 (the listening session is one more). */
  readonly poolSize?: number;
}

/** Options of openPostgresSpace. */
export interface PostgresSpaceOptions extends PostgresStoreOptions {
  /**
   * Every this many milliseconds, one query reads the last sequence number of every followed tenant
   * and tells their followers (a missed notification, T6); 0: never (each follower polls itself, as
   * openPostgresStore's does). Default 1000.
   */
  readonly pollMs?: number;
}

/** A PostgreSQL space: its registry also watches the other processes' commits. */
export interface PostgresSpace extends SharedStoreSpace {
  readonly registry: PostgresRegistry;
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

/** What the tenant views of a space share. */
interface SpaceShared {
  readonly where: string;
  readonly keep: number;
  readonly retainMs: number;
  readonly access: ReturnType<typeof pgAccess>;
  readonly insertOutbox: (c: PoolClient, entries: readonly OutboxEntry[]) => Promise<void>;
  readonly webhooks: SharedStore["webhooks"];
  readonly following: ReturnType<typeof pgFollowing>;
}

/**
 * Opens a PostgreSQL space (creating its tables, or upgrading a schema-1 database: T8): one pool, the
 * registry, the webhooks, and `tenant(n)`, a SharedStore view of tenant n whose `close` releases
 * nothing. Every followed tenant is followed through one listening session (T6). Any number of
 * processes may open the same database at once.
 * @throws StoreError when pg is missing, the database cannot be reached, or it holds another schema version.
 */
export async function openPostgresSpace(url: string, options: PostgresSpaceOptions = {}): Promise<PostgresSpace> {
  const pg = await loadDriver();
  const where = redactUrl(url);
  const keep = Math.max(1, options.keepSnapshots ?? 2);
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 4,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection the server closed (a restart) is dropped by the pool; the next query opens another.
  pool.on("error", () => undefined);
  await createSchema(pool, where, keep);

  const access = pgAccess(pool, where);
  /** A session of its own (the webhooks' watcher's). */
  const newClient = () => new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  const webhooks = postgresWebhooks({ newClient, ...access });
  const following = pgFollowing(
    () =>
      new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, application_name: FOLLOWER_APPLICATION }),
    access,
    where,
    options.pollMs ?? 1000,
  );
  const shared: SpaceShared = {
    where,
    keep,
    retainMs: options.retainMs ?? 24 * 3600 * 1000,
    access,
    insertOutbox: webhooks.insert,
    webhooks: webhooks.store,
    following,
  };
  const registry = postgresRegistry({
    ...access,
    insertOutbox: webhooks.insert,
    initTenant: initTenantIn,
    watch: following.watchRegistry,
  });
  return {
    tenant: (n) => tenantView(shared, n),
    registry,
    webhooks: webhooks.store,
    async close() {
      if (!access.closing()) return;
      await following.stop();
      await webhooks.close();
      await pool.end().catch(() => undefined);
    },
  };
}

/**
 * Opens the PostgreSQL store of one system: tenant 1 of a space (creating its tables if needed), whose
 * `close` closes the space. Its follower polls by itself (the space does not: `pollMs` 0).
 * @throws StoreError as openPostgresSpace.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<SharedStore> {
  const space = await openPostgresSpace(url, { ...options, pollMs: 0 });
  return { ...space.tenant(1), close: () => space.close() };
}

/** Tenant `n` of a space: a SharedStore over its rows (close releases nothing; the space's close does). */
function tenantView(s: SpaceShared, n: number): SharedStore {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`a tenant's number is a positive integer, got ${n}`);
  const { query, transaction } = s.access;
  const appendAt = pgAppender(n, query, transaction, s.insertOutbox);
  /** The texts of the last snapshot's runs of entities (jsonSlices.ts). */
  const chunks = new JsonChunkCache();
  return {
    load: () => loadPgState(query, n, s.where),
    // Reports (the Store's report methods): one row each, as in SQLite; shared by every replica.
    ...pgReports(query, n),
    async init(kind: StoredKind, snapshot: unknown, time: string) {
      const done = await transaction((c) => initTenantIn(c, n, kind, snapshot, time)).catch((e: unknown) => {
        if ((e as { code?: unknown }).code !== "23505") throw e;
        throw new StoreError(
          `${s.where}: tenant ${n} cannot import this ${kind}: another tenant has its id (${keyOf(kind, snapshot, n)})`,
        );
      });
      if (!done) throw new StoreError(`${s.where} already holds a system${n === 1 ? "" : ` as tenant ${n}`}`);
    },
    append: (operation, patches, time, outbox) => appendNext(query, n, appendAt, { operation, patches, time }, outbox),
    appendAt,
    async changesAfter(seq, limit) {
      const rows = await query<ChangeRow>(
        "SELECT seq, time, operation, patches FROM rsop_changes WHERE tenant = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        [n, seq, limit],
      );
      if (rows.length > 0 && Number(rows[0]!.seq) !== seq + 1) return null;
      return rows.map(toChange);
    },
    async snapshot(at, snapshot, time, pace = "background") {
      // Serialized a couple of milliseconds at a time: no request waits behind it (jsonSlices.ts).
      const text = await jsonTextInTurns(snapshot, pace === "background", chunks);
      await transaction(async (c) => {
        await c.query(
          "INSERT INTO rsop_snapshots (tenant, seq, time, snapshot) VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, seq) DO NOTHING",
          [n, at, time, text],
        );
        await c.query(
          "DELETE FROM rsop_snapshots WHERE tenant = $1 AND seq NOT IN (SELECT seq FROM rsop_snapshots WHERE tenant = $1 ORDER BY seq DESC LIMIT $2)",
          [n, s.keep],
        );
        // Compaction (PG6), per tenant: a change goes once the tenant's oldest kept snapshot covers it
        // and it is older than retainMs.
        await c.query(
          "DELETE FROM rsop_changes WHERE tenant = $1 AND seq <= (SELECT min(seq) FROM rsop_snapshots WHERE tenant = $1) AND stored_at < now() - make_interval(secs => $2)",
          [n, s.retainMs / 1000],
        );
      });
    },
    // Named values kept beside the tenant (a migration's record): one row each.
    async getValue(key) {
      return (
        (await query<{ value: string }>("SELECT value FROM rsop_kv WHERE tenant = $1 AND key = $2", [n, key]))[0]
          ?.value ?? null
      );
    },
    async setValue(key, value) {
      if (value === null) await query("DELETE FROM rsop_kv WHERE tenant = $1 AND key = $2", [n, key]);
      else
        await query(
          "INSERT INTO rsop_kv (tenant, key, value) VALUES ($1, $2, $3) ON CONFLICT (tenant, key) DO UPDATE SET value = excluded.value",
          [n, key, value],
        );
    },
    follow: (listener) => s.following.follow(n, listener),
    // The tenant's snapshot writer (T7): the process whose session holds the tenant's advisory lock.
    isSnapshotWriter: () => s.following.isWriter(n),
    ...(s.webhooks !== undefined ? { webhooks: s.webhooks } : {}),
    close: async () => undefined,
  };
}

/**
 * In a transaction: stores tenant `n`'s first snapshot (sequence 0) and its kind, unless it has a
 * snapshot already (false; another process imported first, PG4). Records the change log's format.
 */
async function initTenantIn(
  c: Queryable,
  n: number,
  kind: StoredKind,
  snapshot: unknown,
  time: string,
): Promise<boolean> {
  // Two processes importing the same tenant: the second waits here, then sees the first's snapshot.
  await c.query("SELECT pg_advisory_xact_lock($1::int, $2::int)", [INIT_CLASS, n]);
  const had = await c.query("SELECT 1 FROM rsop_snapshots WHERE tenant = $1 LIMIT 1", [n]);
  if (had.rows.length > 0) return false;
  // The registry may have written the tenant's row first (putTenant, then initTenant in one commit): its key stays.
  await c.query(
    "INSERT INTO rsop_tenants (n, kind, key, created) VALUES ($1, $2, $3, $4) ON CONFLICT (n) DO UPDATE SET kind = excluded.kind",
    [n, kind, keyOf(kind, snapshot, n), time],
  );
  await c.query(
    "INSERT INTO rsop_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    [LOG_FORMAT_KEY, String(CHANGE_LOG_FORMAT)],
  );
  await c.query("INSERT INTO rsop_snapshots (tenant, seq, time, snapshot) VALUES ($1, 0, $2, $3)", [
    n,
    time,
    JSON.stringify(snapshot),
  ]);
  return true;
}

/** What a follower of one tenant is told (SharedStore.follow). */
type Follower = Parameters<SharedStore["follow"]>[0];

/** `tenant:seq` (a bare `seq`: tenant 1, as processes of schema 1 sent it); undefined when it is neither. */
function parseAppend(payload: string | undefined): { tenant: number; seq: number } | undefined {
  if (payload === undefined) return undefined;
  const colon = payload.indexOf(":");
  const tenant = colon < 0 ? 1 : Number(payload.slice(0, colon));
  const seq = Number(payload.slice(colon + 1));
  return Number.isSafeInteger(tenant) && Number.isSafeInteger(seq) ? { tenant, seq } : undefined;
}

/**
 * The following of a space (T6): one listening session (made at the first follow, on `rsop_log` and
 * `rsop_registry`) for every tenant and the registry, and one poll query per `pollMs` for every
 * followed tenant. The session also holds the tenants' snapshot-writer locks (T7).
 */
function pgFollowing(
  newClient: () => ListeningClient,
  access: ReturnType<typeof pgAccess>,
  where: string,
  pollMs: number,
) {
  const followers = new Map<number, Set<Follower>>();
  const registryWatchers = new Set<() => void>();
  let session: Promise<Listening> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;
  const everyone = (tell: (f: Follower) => void) => {
    for (const set of followers.values()) for (const f of set) tell(f);
  };
  const start = (): Promise<Listening> => {
    access.open();
    session ??= listen(newClient, [CHANNEL, REGISTRY_CHANNEL], {
      notification(payload, channel) {
        if (channel === REGISTRY_CHANNEL) for (const w of registryWatchers) w();
        const append = channel === CHANNEL ? parseAppend(payload) : undefined;
        if (append !== undefined) for (const f of followers.get(append.tenant) ?? []) f.onAppend(append.seq);
      },
      lost: (e) => e !== undefined && everyone((f) => f.onError(e)),
      reconnected() {
        everyone((f) => f.onReconnect());
        for (const w of registryWatchers) w();
      },
      reconnectFailed: (e) => everyone((f) => f.onError(e)),
    }).catch((e: unknown) => {
      session = undefined;
      throw new StoreError(`cannot follow the change log of ${where}: ${(e as Error).message}`);
    });
    return session;
  };
  /** One query for every followed tenant: its last sequence number, told to its followers. */
  const poll = async () => {
    if (polling || followers.size === 0) return;
    polling = true;
    try {
      const rows = await access.query<{ n: string; seq: string | null }>(
        "SELECT t.n, (SELECT max(seq) FROM rsop_changes c WHERE c.tenant = t.n) AS seq FROM unnest($1::bigint[]) AS t(n)",
        [[...followers.keys()]],
      );
      for (const r of rows)
        if (r.seq !== null) for (const f of followers.get(Number(r.n)) ?? []) f.onAppend(Number(r.seq));
    } catch {
      // The database is unavailable or the space closed: the next poll tries again.
    } finally {
      polling = false;
    }
  };
  const unfollow = async (n: number, set: Set<Follower>, follower: Follower) => {
    set.delete(follower);
    if (set.size > 0 || followers.get(n) !== set) return;
    followers.delete(n);
    if (followers.size === 0 && timer !== undefined) [timer] = [undefined, clearInterval(timer)];
    // Another process may now store this tenant's snapshots.
    await (await session?.catch(() => undefined))?.unlock([WRITER_CLASS, n]);
  };
  return {
    async follow(n: number, follower: Follower): Promise<() => Promise<void>> {
      await start();
      let set = followers.get(n);
      if (set === undefined) followers.set(n, (set = new Set()));
      set.add(follower);
      if (timer === undefined && pollMs > 0) {
        timer = setInterval(() => void poll(), pollMs);
        timer.unref();
      }
      const mine = set;
      return () => unfollow(n, mine, follower);
    },
    /** Whether this process holds (or now takes) tenant n's snapshot-writer lock; only while it follows n. */
    async isWriter(n: number): Promise<boolean> {
      const s = followers.has(n) ? await session?.catch(() => undefined) : undefined;
      if (s === undefined || !(await s.lock([WRITER_CLASS, n]))) return false;
      if (followers.has(n)) return true;
      await s.unlock([WRITER_CLASS, n]); // unfollowed meanwhile
      return false;
    },
    /** Calls `onChange` after another process's registry commit (and after a reconnect: one may have been missed). */
    async watchRegistry(onChange: () => void): Promise<() => Promise<void>> {
      await start();
      registryWatchers.add(onChange);
      return async () => void registryWatchers.delete(onChange);
    },
    async stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      followers.clear();
      registryWatchers.clear();
      await (await session?.catch(() => undefined))?.stop();
    },
  };
}

/**
 * Creates the tables (under a lock: several processes may start at once), upgrades a schema-1
 * database (T8), refuses another version, and records the change log's format or upgrades a format-1
 * log (upgradeLog), all in one transaction.
 */
async function createSchema(pool: Pool, where: string, keep: number): Promise<void> {
  try {
    const c = await pool.connect();
    try {
      await c.query("BEGIN");
      await c.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
      await c.query("CREATE TABLE IF NOT EXISTS rsop_meta (key text PRIMARY KEY, value text NOT NULL)");
      const v = (await c.query<{ value: string }>("SELECT value FROM rsop_meta WHERE key = 'schema'")).rows[0]?.value;
      if (v === "1") await upgradeSchema1(c);
      else if (v !== undefined && v !== SCHEMA_VERSION)
        throw new StoreError(
          `${where} has rsop schema version ${v}; this rsop reads version ${SCHEMA_VERSION} (and upgrades version 1 when it opens it)`,
        );
      await c.query(SCHEMA);
      await c.query(
        "INSERT INTO rsop_meta (key, value) VALUES ('schema', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [SCHEMA_VERSION],
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
    throw new StoreError(`cannot use the database ${where}: ${connectWords(e)}`);
  }
}

/**
 * In the schema transaction, a database of schema 1 (T8): its tables keyed by tenant, its rows tenant
 * 1's, and its kind (`rsop_meta.kind`) moved to tenant 1's row, named by its snapshot (keyOf).
 */
async function upgradeSchema1(c: PoolClient): Promise<void> {
  await c.query(UPGRADE_1_TO_2);
  const kind = (await c.query<{ value: string }>("SELECT value FROM rsop_meta WHERE key = 'kind'")).rows[0]?.value;
  const first = (
    await c.query<{ snapshot: string; time: string }>(
      "SELECT snapshot, time FROM rsop_snapshots WHERE tenant = 1 ORDER BY seq DESC LIMIT 1",
    )
  ).rows[0];
  if ((kind === "system" || kind === "panel") && first !== undefined)
    await c.query("INSERT INTO rsop_tenants (n, kind, key, created) VALUES (1, $1, $2, $3)", [
      kind,
      keyOf(kind, JSON.parse(first.snapshot), 1),
      first.time,
    ]);
  await c.query("DELETE FROM rsop_meta WHERE key = 'kind'");
}

/** A tenant's key until the registry names it: its system id (2.0) or serial number (1.0), as its snapshot holds it; `#n` without one. */
function keyOf(kind: StoredKind, snapshot: unknown, n: number): string {
  const s = snapshot as { systemId?: unknown; serialNumber?: unknown } | null;
  const key = kind === "system" ? s?.systemId : s?.serialNumber;
  return typeof key === "string" && key.length > 0 ? key : `#${n}`;
}

/**
 * In the schema transaction: records the change log's format in a database that has none (an empty
 * one), and upgrades a format-1 log: for each tenant, its latest snapshot with the changes after it
 * applied is stored as the snapshot of the last change (older snapshots beyond `keep` go), then the
 * format.
 * @throws StoreError for a newer format, or a format-1 log that does not upgrade (the transaction is
 *   rolled back: nothing is changed).
 */
async function upgradeLog(c: PoolClient, where: string, keep: number): Promise<void> {
  const format = (await c.query<{ value: string }>("SELECT value FROM rsop_meta WHERE key = $1", [LOG_FORMAT_KEY]))
    .rows[0]?.value;
  if (logFormatAction(format, where) === "current") return;
  const tenants = (await c.query<{ n: string; kind: string }>("SELECT n, kind FROM rsop_tenants ORDER BY n")).rows;
  for (const t of tenants) {
    const n = Number(t.n);
    const latest = (
      await c.query<{ seq: string; snapshot: string }>(
        "SELECT seq, snapshot FROM rsop_snapshots WHERE tenant = $1 ORDER BY seq DESC LIMIT 1",
        [n],
      )
    ).rows[0];
    if (latest === undefined) continue;
    const changes = (
      await c.query<ChangeRow>(
        "SELECT seq, time, operation, patches FROM rsop_changes WHERE tenant = $1 AND seq > $2 ORDER BY seq",
        [n, latest.seq],
      )
    ).rows.map(toChange);
    if (changes.length === 0) continue;
    const next = replayFormat1(t.kind as StoredKind, JSON.parse(latest.snapshot), changes, where);
    await c.query(
      "INSERT INTO rsop_snapshots (tenant, seq, time, snapshot) VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, seq) DO NOTHING",
      [n, changes.at(-1)!.seq, new Date().toISOString(), JSON.stringify(next)],
    );
    await c.query(
      "DELETE FROM rsop_snapshots WHERE tenant = $1 AND seq NOT IN (SELECT seq FROM rsop_snapshots WHERE tenant = $1 ORDER BY seq DESC LIMIT $2)",
      [n, keep],
    );
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

/** Tenant n's latest snapshot and the changes after it; null for a tenant with none (empty). */
async function loadPgState(query: PgWebhookDeps["query"], n: number, where: string): Promise<StoredState | null> {
  const kind = (await query<{ kind: string }>("SELECT kind FROM rsop_tenants WHERE n = $1", [n]))[0]?.kind;
  const latest = (
    await query<{ seq: string; snapshot: string }>(
      "SELECT seq, snapshot FROM rsop_snapshots WHERE tenant = $1 ORDER BY seq DESC LIMIT 1",
      [n],
    )
  )[0];
  if (kind === undefined || latest === undefined) return null;
  if (kind !== "system" && kind !== "panel") throw new StoreError(`${where} holds an unknown kind of data ("${kind}")`);
  const snapshotSeq = Number(latest.seq);
  const changes = (
    await query<ChangeRow>(
      "SELECT seq, time, operation, patches FROM rsop_changes WHERE tenant = $1 AND seq > $2 ORDER BY seq",
      [n, snapshotSeq],
    )
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

/** Tenant n's report methods: one row each, as in SQLite; shared by every replica. */
function pgReports(
  query: PgWebhookDeps["query"],
  n: number,
): Pick<SharedStore, "putReport" | "listReports" | "reportRecords" | "reportRecordsText" | "deleteReport"> {
  return {
    async putReport(id, info, records) {
      await query(
        "INSERT INTO rsop_reports (tenant, id, info, records) VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, id) DO UPDATE SET info = excluded.info, records = coalesce(excluded.records, rsop_reports.records)",
        [
          n,
          id,
          JSON.stringify(info),
          records === undefined ? null : typeof records === "string" ? records : JSON.stringify(records),
        ],
      );
    },
    async listReports() {
      return (
        await query<{ id: string; info: string }>("SELECT id, info FROM rsop_reports WHERE tenant = $1 ORDER BY n", [n])
      ).map((r) => ({
        id: r.id,
        info: JSON.parse(r.info) as unknown,
      }));
    },
    async reportRecords(id) {
      const text = (
        await query<{ records: string | null }>("SELECT records FROM rsop_reports WHERE tenant = $1 AND id = $2", [
          n,
          id,
        ])
      )[0]?.records;
      return text === undefined || text === null ? null : (JSON.parse(text) as unknown[]);
    },
    async reportRecordsText(id) {
      return (
        (
          await query<{ records: string | null }>("SELECT records FROM rsop_reports WHERE tenant = $1 AND id = $2", [
            n,
            id,
          ])
        )[0]?.records ?? null
      );
    },
    async deleteReport(id) {
      return (
        (await query<{ id: string }>("DELETE FROM rsop_reports WHERE tenant = $1 AND id = $2 RETURNING id", [n, id]))
          .length > 0
      );
    },
  };
}

/** One process's append (Store.append): at the next free sequence number, which a compaction may have left only in a snapshot. */
async function appendNext(
  query: PgWebhookDeps["query"],
  n: number,
  appendAt: (seq: number, writes: readonly StoredWrite[], outbox?: readonly OutboxEntry[]) => Promise<boolean>,
  write: StoredWrite,
  outbox: readonly OutboxEntry[] | undefined,
): Promise<number> {
  for (;;) {
    const next = Number(
      (
        await query<{ seq: string }>(
          "SELECT greatest((SELECT max(seq) FROM rsop_changes WHERE tenant = $1), (SELECT max(seq) FROM rsop_snapshots WHERE tenant = $1), 0) + 1 AS seq",
          [n],
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
  tenant: number,
  query: PgWebhookDeps["query"],
  transaction: <T>(body: (c: PoolClient) => Promise<T>) => Promise<T>,
  insertOutbox: (c: PoolClient, entries: readonly OutboxEntry[]) => Promise<void>,
) {
  // One statement: the rows and the notification (of the last, only when rows were added) commit
  // together; with outbox rows, they join the same transaction.
  const text = `WITH added AS (
     INSERT INTO rsop_changes (tenant, seq, time, operation, patches)
     SELECT $5::bigint, $1::bigint + n - 1, time, operation, patches FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS w(time, operation, patches, n)
     WHERE EXISTS (SELECT 1 FROM rsop_changes WHERE tenant = $5::bigint AND seq = $1::bigint - 1)
        OR EXISTS (SELECT 1 FROM rsop_snapshots WHERE tenant = $5::bigint AND seq = $1::bigint - 1)
     RETURNING seq)
   SELECT count(*)::int AS n, (SELECT pg_notify('${CHANNEL}', $5::text || ':' || max(seq)::text) FROM added HAVING count(*) > 0) AS told FROM added`;
  async function appendNow(seq: number, writes: readonly StoredWrite[], outbox: readonly OutboxEntry[]) {
    if (writes.length === 0) return true;
    const params = [
      seq,
      writes.map((w) => w.time),
      writes.map((w) => JSON.stringify(w.operation)),
      writes.map((w) => JSON.stringify(w.patches)),
      tenant,
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

/** The log does not end at the change before an append's first (a StoreError, so that `transaction` passes it on as it is). */
class NotNext extends StoreError {}

/**
 * Why PostgreSQL could not be used, in words: the network's and the server's usual refusals by
 * their codes (SQLSTATE for the server's), anything else by the driver's message.
 */
function connectWords(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  switch (code) {
    case "ECONNREFUSED":
      return "nothing answers at that host and port (is PostgreSQL running there?)";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host name does not resolve";
    case "ETIMEDOUT":
      return "the server did not answer in time";
    case "28P01":
    case "28000":
      return "the server refused the user name or password";
    case "3D000":
      return "the database does not exist (create it first: createdb)";
    case "42501":
      return "the user may not create or change the tables (permission denied)";
    default:
      return (e as Error).message;
  }
}
