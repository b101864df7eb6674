// The SQLite store (better-sqlite3, loaded only when a store is opened): one database holds many
// tenants (a service's systems and panels, each its own change log, snapshots, reports and kv under
// its number, T1), the registry that names them (sqliteRegistry.ts) and the webhooks. WAL journal,
// and locking_mode=EXCLUSIVE with an exclusive transaction at open, so the process holds the
// database's lock until it closes or dies and a second process (or a second connection in this one)
// is refused at once (T3). Commits run with synchronous=OFF and are made durable by walSync.ts (fsync
// of the WAL off the event loop, shared by the commits made while one runs, whichever tenants made
// them); every method that writes resolves only once its commit is durable, as with
// synchronous=FULL. The change log's format is recorded in `meta` and a format-1 log is upgraded at
// open (changeLogFormat.ts), as is a database of schema 1 (one system, no tenants: T2).
import type { Database as SqliteDatabase } from "better-sqlite3";
import { JsonChunkCache, jsonPartsInTurns } from "./jsonSlices.js";
import { WalSync } from "./walSync.js";
import {
  type StoredChange,
  type StoredKind,
  type StoredState,
  type StoredWrite,
  type Store,
  type StoreSpace,
  StoreError,
  StoreUnavailableError,
} from "../../service/store/store.js";
import {
  CHANGE_LOG_FORMAT,
  LOG_FORMAT_KEY,
  logFormatAction,
  replayFormat1,
} from "../../service/store/changeLogFormat.js";
import { type SqliteLike, sqliteWebhooks } from "./sqliteWebhooks.js";
import { sqliteRegistry } from "./sqliteRegistry.js";
import type { OutboxEntry, WebhookStore } from "../../service/store/webhookStore.js";

/** The schema version written to `meta`; a database of another version is refused (1 is upgraded). */
const SCHEMA_VERSION = "2";

/** Schema 1 (one system per database), as it was written: what an upgrade starts from (T2). */
const SCHEMA_1 = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, operation TEXT NOT NULL, patches TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS snapshots (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, snapshot TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS snapshot_parts (seq INTEGER NOT NULL, part INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (seq, part)) STRICT;
CREATE TABLE IF NOT EXISTS reports (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, info TEXT NOT NULL, records TEXT) STRICT;
`;

// Every row of a tenant's data carries its number; `DEFAULT 1` is the tenant of a database made
// before tenants (an INSERT that names no tenant, as older tools and tests write, lands there).
// `tenants.kind` replaced schema 1's `meta.kind`.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS changes (tenant INTEGER NOT NULL DEFAULT 1, seq INTEGER NOT NULL, time TEXT NOT NULL, operation TEXT NOT NULL, patches TEXT NOT NULL, PRIMARY KEY (tenant, seq)) STRICT;
CREATE TABLE IF NOT EXISTS snapshots (tenant INTEGER NOT NULL DEFAULT 1, seq INTEGER NOT NULL, time TEXT NOT NULL, snapshot TEXT NOT NULL, PRIMARY KEY (tenant, seq)) STRICT;
CREATE TABLE IF NOT EXISTS kv (tenant INTEGER NOT NULL DEFAULT 1, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (tenant, key)) STRICT;
CREATE TABLE IF NOT EXISTS snapshot_parts (tenant INTEGER NOT NULL DEFAULT 1, seq INTEGER NOT NULL, part INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (tenant, seq, part)) STRICT;
CREATE TABLE IF NOT EXISTS reports (n INTEGER PRIMARY KEY AUTOINCREMENT, tenant INTEGER NOT NULL DEFAULT 1, id TEXT NOT NULL, info TEXT NOT NULL, records TEXT, UNIQUE (tenant, id)) STRICT;
CREATE TABLE IF NOT EXISTS tenants (n INTEGER PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('system', 'panel')), key TEXT NOT NULL UNIQUE,
  organization TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('active', 'staged')), info TEXT NOT NULL, created TEXT NOT NULL, rev INTEGER NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS organizations (id TEXT PRIMARY KEY, parent TEXT REFERENCES organizations (id), name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('root', 'dealer', 'multi-site', 'legacy')), fields TEXT NOT NULL, created TEXT NOT NULL, rev INTEGER NOT NULL) STRICT;
CREATE UNIQUE INDEX IF NOT EXISTS organizations_name ON organizations (parent, lower(name));
CREATE TABLE IF NOT EXISTS panel_tokens (digest TEXT PRIMARY KEY, tenant INTEGER NOT NULL, role TEXT NOT NULL, created TEXT) STRICT;
CREATE TABLE IF NOT EXISTS records (kind TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, version INTEGER NOT NULL, rev INTEGER NOT NULL, PRIMARY KEY (kind, id)) STRICT;
`;
// A snapshot's JSON text is its \`snapshots.snapshot\` followed by its \`snapshot_parts\` in order. The
// parts are written first, each in a transaction of its own with the event loop free in between, and
// the \`snapshots\` row last: a snapshot exists once its row does, so parts left by a crash are ignored
// (and removed at the next open). A database written before parts existed simply has none.

/** The tables schema 2 keys by tenant, rebuilt when a schema-1 database is upgraded: their columns after `tenant`. */
const TENANT_TABLES: readonly (readonly [string, string])[] = [
  ["changes", "seq, time, operation, patches"],
  ["snapshots", "seq, time, snapshot"],
  ["snapshot_parts", "seq, part, text"],
  ["kv", "key, value"],
  ["reports", "id, info, records"],
];

/** Options of openSqliteStore and openSqliteSpace. */
export interface SqliteStoreOptions {
  /** How many snapshots to keep (the newest) per tenant; default 2. The change log is never pruned. */
  readonly keepSnapshots?: number;
  /** Characters of a snapshot's JSON written per transaction; default 1 MiB. */
  readonly snapshotPartChars?: number;
}

type BetterSqlite = typeof import("better-sqlite3");

async function loadDriver(): Promise<BetterSqlite> {
  try {
    const m = (await import("better-sqlite3")) as unknown as { default?: BetterSqlite };
    return (m.default ?? m) as BetterSqlite;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
      throw new StoreError(
        "--data needs the package better-sqlite3 (an optional peer dependency of rsop-engine): npm install better-sqlite3",
      );
    throw new StoreError(`better-sqlite3 could not be loaded: ${(e as Error).message}`);
  }
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED";
}

type Statements = ReturnType<typeof prepareStatements>;

/** What every tenant view of one open database shares: one connection, one group commit, one lock. */
interface Shared {
  readonly db: SqliteDatabase;
  readonly file: string;
  readonly st: Statements;
  readonly sync: WalSync;
  readonly partChars: number;
  readonly tx: ReturnType<typeof transactions>;
  readonly appendAt: ReturnType<typeof appender>;
  readonly webhooks: WebhookStore;
  /** Waits until everything committed so far is durable (after a write of about `bytes`). */
  readonly durable: (bytes?: number) => Promise<void>;
  /** Throws once the database is closed. */
  readonly live: () => void;
}

/**
 * Opens (creating it if needed) a SQLite store of one system: tenant 1 of the database
 * (openSqliteSpace), whose `close` closes the database.
 * @throws StoreError as openSqliteSpace.
 */
export async function openSqliteStore(file: string, options: SqliteStoreOptions = {}): Promise<Store> {
  const space = await openSqliteSpace(file, options);
  return { ...space.tenant(1), close: () => space.close() };
}

/**
 * Opens (creating it if needed) a SQLite database of many tenants and takes its lock; a database of
 * schema 1 and a change log of format 1 are upgraded first, in one transaction (T2).
 * @throws StoreError when better-sqlite3 is missing, the file is in use by another process, is not
 *   an rsop database, holds a change log of a newer format or one that does not upgrade, or cannot
 *   be opened.
 */
export async function openSqliteSpace(file: string, options: SqliteStoreOptions = {}): Promise<StoreSpace> {
  const Database = await loadDriver();
  const keep = Math.max(1, options.keepSnapshots ?? 2);
  const partChars = Math.max(1024, options.snapshotPartChars ?? 1 << 20);
  const db = openDatabase(Database, file);
  let closed = false;
  const live = () => {
    if (closed) throw new StoreError(`the database ${file} is closed`);
  };
  const { st, webhooks, sync } = setUp(db, file, keep, live);
  const durable = (bytes = 0) => sync.sync(bytes);
  const tx = transactions(db, st, webhooks.clear, file, keep);
  const shared: Shared = {
    db,
    file,
    st,
    sync,
    partChars,
    tx,
    appendAt: appender(db, st, webhooks.insert),
    webhooks: durableWebhooks(webhooks.store, durable),
    durable,
    live,
  };
  // One view per tenant number at a time: a closed view is forgotten, and the next `tenant(n)` makes
  // a fresh one (a tenant host reloads an evicted tenant).
  const views = new Map<number, { store: Store; retire: () => void }>();
  const registry = sqliteRegistry(db as unknown as SqliteLike, {
    file,
    live,
    durable,
    insertOutbox: webhooks.insert,
    initTenant: (n, kind, snapshot, time) => {
      const text = JSON.stringify(snapshot);
      tx.init(n, kind, keyOf(kind, snapshot, n), text, time);
      return text.length;
    },
    // A deleted tenant's view refuses use: nothing it still holds may write rows under its number again.
    deleted: (n) => views.get(n)?.retire(),
  });
  return {
    tenant(n) {
      live();
      if (!Number.isSafeInteger(n) || n < 1) throw new StoreError(`${file}: no tenant number ${n}`);
      let view = views.get(n);
      if (view === undefined) {
        const made = tenantView(shared, n, () => {
          if (views.get(n) === made) views.delete(n);
        });
        view = made;
        views.set(n, view);
      }
      return view.store;
    },
    registry,
    webhooks: shared.webhooks,
    async close() {
      if (closed) return;
      await sync.close();
      closed = true;
      views.clear();
      // SQLite checkpoints and removes the WAL as it closes: with synchronous=FULL it syncs the
      // database before removing it.
      db.pragma("synchronous = FULL");
      db.close();
    },
  };
}

/** How a tenant is named in messages: the file alone for tenant 1 (the one system of an embedded database). */
function whereOf(file: string, n: number): string {
  return n === 1 ? file : `${file} (tenant ${n})`;
}

/** A tenant's key (T1): its system id (2.0) or serial number (1.0), as its snapshot holds it. */
function keyOf(kind: StoredKind, snapshot: unknown, n: number): string {
  const s = snapshot as { systemId?: unknown; serialNumber?: unknown } | null;
  const key = kind === "system" ? s?.systemId : s?.serialNumber;
  return typeof key === "string" && key.length > 0 ? key : `#${n}`;
}

/** The Store of tenant `n`: every row it reads and writes is keyed by `n`. `forget` runs once it is closed. */
function tenantView(sh: Shared, n: number, forget: () => void): { store: Store; retire: () => void } {
  const { st, tx, durable, file } = sh;
  const where = whereOf(file, n);
  let closed = false;
  const open = () => {
    sh.live();
    if (closed) throw new StoreError(`${where}: this view of tenant ${n} is closed`);
  };
  let seq = st.lastSeq.get(n)?.seq ?? 0;
  /** The texts of the last snapshot's runs of entities (jsonSlices.ts). */
  const chunks = new JsonChunkCache();

  const store: Store = {
    async getValue(key) {
      open();
      return st.getValue.get(n, key)?.value ?? null;
    },
    async setValue(key, value) {
      open();
      if (value === null) st.deleteValue.run(n, key);
      else st.setValue.run(n, key, value);
      await durable(value?.length ?? 0);
    },
    async replaceSystem(kind, snap, operation, time) {
      open();
      const text = JSON.stringify(snap);
      seq = tx.replaceSystem(n, seq + 1, kind, keyOf(kind, snap, n), text, JSON.stringify(operation), time);
      await durable(text.length);
      return seq;
    },
    async load(): Promise<StoredState | null> {
      open();
      return loadState(where, st, n, open);
    },
    async init(kind, snap, time) {
      open();
      const text = JSON.stringify(snap);
      tx.init(n, kind, keyOf(kind, snap, n), text, time);
      await durable(text.length);
    },
    async append(operation, patches, time, outbox = []) {
      const at = seq + 1;
      if (!(await store.appendAt(at, [{ operation, patches, time }], outbox)))
        throw new StoreError(`${where}: change ${at} could not be appended`);
      return at;
    },
    async appendAt(at, writes, outbox = []) {
      open();
      if (sh.sync.failed !== undefined) throw sh.sync.failed;
      if (at !== seq + 1) return false;
      // Committed in this call, before anything else runs: a read that shows the write shows one the
      // log holds. Only its sync is awaited.
      const bytes = sh.appendAt(n, at, writes, outbox, where);
      seq += writes.length;
      await durable(bytes);
      return true;
    },
    async changesAfter(after, limit) {
      open();
      const rows = st.changesPage.all(n, after, limit);
      // The log does not reach back to `after + 1` (rows removed before a kept snapshot): only a snapshot catches up.
      const lastKnown = () => Math.max(st.lastSeq.get(n)?.seq ?? 0, st.latestSnapshot.get(n)?.seq ?? 0);
      if (rows.length > 0 ? rows[0]!.seq !== after + 1 : after < lastKnown()) return null;
      return rows.map((r) => ({
        seq: r.seq,
        time: r.time,
        operation: JSON.parse(r.operation) as unknown,
        patches: JSON.parse(r.patches) as unknown[],
      }));
    },
    snapshot: (at, snap, time, pace = "background") =>
      storeSnapshot(sh, { n, chunks, open, closed: () => closed }, at, snap, time, pace),
    ...sqliteReports(st, n, open, durable),
    webhooks: sh.webhooks,
    async close() {
      // Releases nothing: the database stays open for the other tenants (StoreSpace).
      closed = true;
      forget();
    },
  };
  return {
    store,
    retire: () => {
      closed = true;
      forget();
    },
  };
}

/** A tenant's view as storeSnapshot needs it. */
interface SnapshotTenant {
  readonly n: number;
  readonly chunks: JsonChunkCache;
  readonly open: () => void;
  readonly closed: () => boolean;
}

/** Store.snapshot of tenant `t.n`: parts first, in turns, then the row (see the note after SCHEMA). */
async function storeSnapshot(
  sh: Shared,
  t: SnapshotTenant,
  at: number,
  snap: unknown,
  time: string,
  pace: "background" | "now",
): Promise<void> {
  const { st, durable } = sh;
  const { n, open } = t;
  open();
  if (st.hasSnapshot.get(n, at) !== undefined) return;
  // Parts of an earlier attempt at this snapshot that did not finish.
  st.dropParts.run(n, at);
  // The first part goes in the snapshots row, written last; the others are parts 1, 2, …
  let head: string | undefined;
  let part = 0;
  let unsynced = 0;
  for await (const text of jsonPartsInTurns(snap, sh.partChars, pace === "background", t.chunks)) {
    open();
    if (head === undefined) head = text;
    else {
      st.insertPart.run(n, at, ++part, text);
      unsynced += text.length;
      // Synced every MiB or so before more is made: the disk never has much to write at once (an
      // append's sync waits for what is not yet written before it). A part need not be durable on
      // its own: the row's sync, at the end, covers every part before it.
      if (unsynced >= 1 << 20) {
        await durable(unsynced);
        unsynced = 0;
      }
    }
  }
  open();
  sh.tx.finishSnapshot(n, at, head!, time);
  await durable(head!.length + unsynced);
  // The parts of the snapshots that went, one transaction each: they are never read once their
  // row is gone, and freeing tens of megabytes at once would hold the event loop.
  while (!t.closed() && st.prunePartsSome.run(n, n, 1).changes > 0) await durable();
}

/**
 * The store's statements, webhook tables and syncs on an open database (inside the exclusive
 * transaction openDatabase began, so that a schema upgrade, the webhook tables and a log format
 * upgrade commit together or not at all): parts a crash left removed, the log's format checked (or
 * upgraded) while SQLite still syncs itself, then synchronous=OFF with walSync.ts making commits
 * durable. Closes the database when any of it fails.
 */
function setUp(db: SqliteDatabase, file: string, keep: number, open: () => void) {
  try {
    const st = prepareStatements(db);
    // Parts of a snapshot a crash interrupted (no row): never read, removed now.
    st.pruneParts.run();
    // The webhook tables (sqliteWebhooks.ts): an outbox row commits with the change that caused it.
    const webhooks = sqliteWebhooks(db as unknown as SqliteLike, open);
    checkLogFormat(db, st, file, keep);
    db.exec("COMMIT");
    // Everything above ran with synchronous=FULL; from here on, commits are synced by walSync.ts.
    const sync = new WalSync(file, file, () => checkpoint(db));
    db.pragma("wal_autocheckpoint = 0");
    db.pragma("synchronous = OFF");
    return { st, webhooks, sync };
  } catch (e) {
    if (db.inTransaction) db.exec("ROLLBACK");
    db.close();
    if (e instanceof StoreError) throw e;
    throw new StoreError(`cannot use the database ${file}: ${(e as Error).message}`);
  }
}

/** The store's transactions other than appends: a tenant's import, a snapshot's row, a migration's replacement. */
function transactions(db: SqliteDatabase, st: Statements, clearWebhooks: () => void, file: string, keep: number) {
  const init = db.transaction((n: number, kind: StoredKind, key: string, snapshot: string, time: string) => {
    if (st.latestSnapshot.get(n) !== undefined) throw new StoreError(`${whereOf(file, n)} already holds a system`);
    // The registry may have written the tenant's row first (putTenant, then initTenant in one commit).
    const row = st.kindOf.get(n);
    if (row === undefined) st.insertTenant.run(n, kind, key, time);
    else if (row.kind !== kind) st.setKind.run(kind, row.key, n);
    st.setMeta.run(LOG_FORMAT_KEY, String(CHANGE_LOG_FORMAT));
    st.insertSnapshot.run(n, 0, time, snapshot);
  });
  const finishSnapshot = db.transaction((n: number, at: number, text: string, time: string) => {
    st.insertSnapshot.run(n, at, time, text);
    st.pruneSnapshots.run(n, n, keep);
  });
  const replaceSystem = db.transaction(
    (n: number, at: number, kind: StoredKind, key: string, text: string, operation: string, time: string) => {
      st.insertChange.run(n, at, time, operation, "[]");
      st.insertSnapshot.run(n, at, time, text);
      st.setKind.run(kind, key, n);
      st.dropOlderSnapshots.run(n, at);
      st.prunePartsOf.run(n, n);
      // The old system's webhook subscriptions and their events go with it (W19): an embedded
      // database's one system owns them all.
      clearWebhooks();
      return at;
    },
  );
  return { init, finishSnapshot, replaceSystem };
}

/** A checkpoint that syncs the WAL before copying it and the database after (walSync.ts). */
function checkpoint(db: SqliteDatabase): void {
  db.pragma("synchronous = FULL");
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } finally {
    db.pragma("synchronous = OFF");
  }
}

/**
 * The transaction of appendAt: tenant `n`'s changes at `at`, `at + 1`, … and their outbox rows.
 * Answers about how many bytes it wrote.
 * @throws StoreUnavailableError when SQLite refuses it (disk full, I/O error): nothing of it is stored.
 */
function appender(db: SqliteDatabase, st: Statements, insertOutbox: (entries: readonly OutboxEntry[]) => void) {
  const run = db.transaction(
    (n: number, at: number, writes: readonly StoredWrite[], outbox: readonly OutboxEntry[]) => {
      let bytes = 0;
      writes.forEach((w, i) => {
        const operation = JSON.stringify(w.operation);
        const patches = JSON.stringify(w.patches);
        bytes += operation.length + patches.length;
        st.insertChange.run(n, at + i, w.time, operation, patches);
      });
      insertOutbox(outbox);
      return bytes;
    },
  );
  return (
    n: number,
    at: number,
    writes: readonly StoredWrite[],
    outbox: readonly OutboxEntry[],
    where: string,
  ): number => {
    try {
      return run(n, at, writes, outbox);
    } catch (e) {
      if (e instanceof StoreError || !(typeof (e as { code?: unknown }).code === "string")) throw e;
      throw new StoreUnavailableError(`the database ${where} could not store the write: ${(e as Error).message}`);
    }
  };
}

/**
 * Creates the database file if needed, takes its lock, and checks (or writes, or upgrades from 1) the
 * schema version. Leaves the exclusive transaction open: setUp commits it.
 */
function openDatabase(Database: BetterSqlite, file: string): SqliteDatabase {
  let db: SqliteDatabase;
  try {
    db = new Database(file, { timeout: 0 });
  } catch (e) {
    throw new StoreError(`cannot open the database ${file}: ${(e as Error).message}`);
  }
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    // The exclusive transaction takes the lock now; locking_mode=EXCLUSIVE keeps it until close.
    db.exec("BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;");
    const version = (db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | undefined)
      ?.value;
    if (version === "1" || (version === undefined && isSchema1(db))) upgradeSchema1(db, file);
    else if (version === undefined || version === SCHEMA_VERSION) {
      db.exec(SCHEMA);
      db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)").run(SCHEMA_VERSION);
    } else throw new StoreError(`${file} has schema version ${version}; this rsop reads version ${SCHEMA_VERSION}`);
  } catch (e) {
    if (db.inTransaction) db.exec("ROLLBACK");
    db.close();
    if (e instanceof StoreError) throw e;
    if (isBusy(e))
      throw new StoreError(
        `${file} is in use by another process (another rsop serve?); only one process may serve a database at a time`,
      );
    if ((e as { code?: unknown }).code === "SQLITE_NOTADB") throw new StoreError(`${file} is not a SQLite database`);
    throw new StoreError(`cannot use the database ${file}: ${(e as Error).message}`);
  }
  return db;
}

/** Whether the database has schema 1's tables without its version row (schema 1 wrote the row after them). */
function isSchema1(db: SqliteDatabase): boolean {
  const columns = db.prepare("SELECT name FROM pragma_table_info('changes')").all() as { name: string }[];
  return columns.length > 0 && !columns.some((c) => c.name === "tenant");
}

/**
 * Schema 1 → 2, inside the open transaction (T2): each table rebuilt with every row under tenant 1,
 * and `meta.kind` moved to the tenants row 1 (its key the latest snapshot's system id or serial
 * number; its organization '' until the registry names it). A crash or a failure before the
 * transaction commits leaves the schema-1 database as it was.
 */
function upgradeSchema1(db: SqliteDatabase, file: string): void {
  db.exec(SCHEMA_1);
  for (const [table] of TENANT_TABLES) db.exec(`ALTER TABLE ${table} RENAME TO ${table}_v1`);
  db.exec(SCHEMA);
  for (const [table, columns] of TENANT_TABLES)
    db.exec(`INSERT INTO ${table} (tenant, ${columns}) SELECT 1, ${columns} FROM ${table}_v1 ORDER BY rowid`);
  for (const [table] of TENANT_TABLES) db.exec(`DROP TABLE ${table}_v1`);
  const kind = (db.prepare("SELECT value FROM meta WHERE key = 'kind'").get() as { value: string } | undefined)?.value;
  const st = prepareStatements(db);
  const latest = st.latestSnapshot.get(1);
  if (kind !== undefined && latest !== undefined) {
    if (kind !== "system" && kind !== "panel")
      throw new StoreError(`${file} holds an unknown kind of data ("${kind}")`);
    const snapshot = JSON.parse(snapshotText(st, 1, latest)) as unknown;
    const first = db
      .prepare(
        "SELECT min(time) AS time FROM (SELECT time FROM snapshots WHERE tenant = 1 UNION ALL SELECT time FROM (SELECT time FROM changes WHERE tenant = 1 ORDER BY seq LIMIT 1))",
      )
      .get() as { time: string };
    st.insertTenant.run(1, kind, keyOf(kind, snapshot, 1), first.time);
  }
  db.prepare("DELETE FROM meta WHERE key = 'kind'").run();
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)").run(SCHEMA_VERSION);
}

/**
 * Records the change log's format in a database that has none (an empty one) and upgrades a format-1
 * log, tenant by tenant, in one transaction: each tenant's latest snapshot with the changes after it
 * applied is stored as the snapshot of its last change (older snapshots beyond `keep` go), then the
 * format.
 * @throws StoreError for a newer format, or a format-1 log that does not upgrade (nothing is changed).
 */
function checkLogFormat(db: SqliteDatabase, st: Statements, file: string, keep: number): void {
  if (logFormatAction(st.getMeta.get(LOG_FORMAT_KEY)?.value, file) === "current") return;
  db.transaction(() => {
    for (const { n, kind } of st.allKinds.all()) {
      const latest = st.latestSnapshot.get(n);
      if (latest === undefined) continue;
      const changes = st.changesAfter.all(n, latest.seq).map((r) => ({
        seq: r.seq,
        patches: JSON.parse(r.patches) as unknown[],
      }));
      if (changes.length === 0) continue;
      const snapshot = JSON.parse(snapshotText(st, n, latest)) as unknown;
      const next = replayFormat1(kind, snapshot, changes, whereOf(file, n));
      st.insertSnapshot.run(n, changes.at(-1)!.seq, new Date().toISOString(), JSON.stringify(next));
      st.pruneSnapshots.run(n, n, keep);
      st.prunePartsOf.run(n, n);
    }
    st.setMeta.run(LOG_FORMAT_KEY, String(CHANGE_LOG_FORMAT));
  })();
}

/** Every statement the store runs, prepared once; each takes the tenant's number first. */
function prepareStatements(db: SqliteDatabase) {
  const q = <P extends unknown[], R = unknown>(sql: string) => db.prepare<P, R>(sql);
  return {
    getMeta: q<[string], { value: string }>("SELECT value FROM meta WHERE key = ?"),
    setMeta: q<[string, string]>("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"),
    kindOf: q<[number], { kind: StoredKind; key: string }>("SELECT kind, key FROM tenants WHERE n = ?"),
    allKinds: q<[], { n: number; kind: StoredKind }>("SELECT n, kind FROM tenants ORDER BY n"),
    insertTenant: q<[number, StoredKind, string, string]>(
      "INSERT INTO tenants (n, kind, key, organization, state, info, created, rev) VALUES (?, ?, ?, '', 'active', '{}', ?, 0)",
    ),
    setKind: q<[StoredKind, string, number]>("UPDATE tenants SET kind = ?, key = ? WHERE n = ?"),
    insertChange: q<[number, number, string, string, string]>(
      "INSERT INTO changes (tenant, seq, time, operation, patches) VALUES (?, ?, ?, ?, ?)",
    ),
    lastSeq: q<[number], { seq: number | null }>("SELECT max(seq) AS seq FROM changes WHERE tenant = ?"),
    insertSnapshot: q<[number, number, string, string]>(
      "INSERT OR REPLACE INTO snapshots (tenant, seq, time, snapshot) VALUES (?, ?, ?, ?)",
    ),
    pruneSnapshots: q<[number, number, number]>(
      "DELETE FROM snapshots WHERE tenant = ? AND seq NOT IN (SELECT seq FROM snapshots WHERE tenant = ? ORDER BY seq DESC LIMIT ?)",
    ),
    latestSnapshot: q<[number], { seq: number }>(
      "SELECT seq FROM snapshots WHERE tenant = ? ORDER BY seq DESC LIMIT 1",
    ),
    snapshotRow: q<[number, number], { snapshot: string }>(
      "SELECT snapshot FROM snapshots WHERE tenant = ? AND seq = ?",
    ),
    hasSnapshot: q<[number, number], { seq: number }>("SELECT seq FROM snapshots WHERE tenant = ? AND seq = ?"),
    insertPart: q<[number, number, number, string]>(
      "INSERT OR REPLACE INTO snapshot_parts (tenant, seq, part, text) VALUES (?, ?, ?, ?)",
    ),
    partsOf: q<[number, number], { text: string }>(
      "SELECT text FROM snapshot_parts WHERE tenant = ? AND seq = ? ORDER BY part",
    ),
    getValue: q<[number, string], { value: string }>("SELECT value FROM kv WHERE tenant = ? AND key = ?"),
    setValue: q<[number, string, string]>("INSERT OR REPLACE INTO kv (tenant, key, value) VALUES (?, ?, ?)"),
    deleteValue: q<[number, string]>("DELETE FROM kv WHERE tenant = ? AND key = ?"),
    dropOlderSnapshots: q<[number, number]>("DELETE FROM snapshots WHERE tenant = ? AND seq < ?"),
    dropParts: q<[number, number]>("DELETE FROM snapshot_parts WHERE tenant = ? AND seq = ?"),
    pruneParts: q<[]>(
      "DELETE FROM snapshot_parts WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.tenant = snapshot_parts.tenant AND s.seq = snapshot_parts.seq)",
    ),
    prunePartsOf: q<[number, number]>(
      "DELETE FROM snapshot_parts WHERE tenant = ? AND seq NOT IN (SELECT seq FROM snapshots WHERE tenant = ?)",
    ),
    prunePartsSome: q<[number, number, number]>(
      "DELETE FROM snapshot_parts WHERE rowid IN (SELECT rowid FROM snapshot_parts WHERE tenant = ? AND seq NOT IN (SELECT seq FROM snapshots WHERE tenant = ?) LIMIT ?)",
    ),
    changesAfter: q<[number, number], { seq: number; time: string; operation: string; patches: string }>(
      "SELECT seq, time, operation, patches FROM changes WHERE tenant = ? AND seq > ? ORDER BY seq",
    ),
    changesPage: q<[number, number, number], { seq: number; time: string; operation: string; patches: string }>(
      "SELECT seq, time, operation, patches FROM changes WHERE tenant = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    insertReport: q<[number, string, string, string | null]>(
      "INSERT INTO reports (tenant, id, info, records) VALUES (?, ?, ?, ?) ON CONFLICT (tenant, id) DO UPDATE SET info = excluded.info, records = coalesce(excluded.records, records)",
    ),
    allReports: q<[number], { id: string; info: string }>("SELECT id, info FROM reports WHERE tenant = ? ORDER BY n"),
    recordsOf: q<[number, string], { records: string | null }>(
      "SELECT records FROM reports WHERE tenant = ? AND id = ?",
    ),
    removeReport: q<[number, string]>("DELETE FROM reports WHERE tenant = ? AND id = ?"),
  };
}

/** The JSON text of tenant `n`'s snapshot stored at `latest.seq`: its row, then its parts. */
function snapshotText(st: Statements, n: number, latest: { seq: number }): string {
  const parts = st.partsOf.all(n, latest.seq);
  const head = st.snapshotRow.get(n, latest.seq)!.snapshot;
  return parts.length === 0 ? head : head + parts.map((p) => p.text).join("");
}

/**
 * Tenant `n`'s latest snapshot and the changes after it; null for a tenant with none. The snapshot's
 * text is read and parsed when `snapshot` is first read (a caller that only asks for `kind` pays
 * nothing for it).
 */
function loadState(where: string, st: Statements, n: number, open: () => void): StoredState | null {
  const kind = st.kindOf.get(n)?.kind;
  const latest = st.latestSnapshot.get(n);
  if (kind === undefined || latest === undefined) return null;
  const changes: StoredChange[] = st.changesAfter.all(n, latest.seq).map((r) => ({
    seq: r.seq,
    time: r.time,
    operation: JSON.parse(r.operation) as unknown,
    patches: JSON.parse(r.patches) as unknown[],
  }));
  // The log has no gaps: change k+1 follows change k.
  changes.forEach((c, i) => {
    if (c.seq !== latest.seq + i + 1)
      throw new StoreError(`${where}: the change log jumps from ${latest.seq + i} to ${c.seq}`);
  });
  let snapshot: { readonly value: unknown } | undefined;
  return {
    kind,
    snapshotSeq: latest.seq,
    get snapshot() {
      if (snapshot === undefined) {
        open();
        snapshot = { value: JSON.parse(snapshotText(st, n, latest)) as unknown };
      }
      return snapshot.value;
    },
    changes,
    seq: changes.at(-1)?.seq ?? latest.seq,
  };
}

/** The report methods of tenant `n`: a report is one row, its info and records as JSON text. */
function sqliteReports(
  { insertReport, allReports, recordsOf, removeReport }: Statements,
  n: number,
  open: () => void,
  durable: (bytes?: number) => Promise<void>,
): Pick<Store, "putReport" | "listReports" | "reportRecords" | "reportRecordsText" | "deleteReport"> {
  return {
    async putReport(id, info, records) {
      open();
      const text = records === undefined ? null : typeof records === "string" ? records : JSON.stringify(records);
      insertReport.run(n, id, JSON.stringify(info), text);
      await durable(text?.length ?? 0);
    },
    async listReports() {
      open();
      return allReports.all(n).map((r) => ({ id: r.id, info: JSON.parse(r.info) as unknown }));
    },
    async reportRecords(id) {
      open();
      const text = recordsOf.get(n, id)?.records;
      return text === undefined || text === null ? null : (JSON.parse(text) as unknown[]);
    },
    async reportRecordsText(id) {
      open();
      return recordsOf.get(n, id)?.records ?? null;
    },
    async deleteReport(id) {
      open();
      const removed = removeReport.run(n, id).changes > 0;
      await durable();
      return removed;
    },
  };
}

/** The webhook store with every method that writes resolving once its commit is durable. */
function durableWebhooks(w: WebhookStore, durable: () => Promise<void>): WebhookStore {
  const synced =
    <A extends unknown[], R>(f: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const r = await f(...args);
      await durable();
      return r;
    };
  return {
    subscriptions: (organization) => w.subscriptions(organization),
    putSubscription: synced((...a: Parameters<WebhookStore["putSubscription"]>) => w.putSubscription(...a)),
    deleteSubscription: synced((id: string) => w.deleteSubscription(id)),
    enqueue: synced((entries: readonly OutboxEntry[]) => w.enqueue(entries)),
    pending: (id, limit) => w.pending(id, limit),
    pendingCounts: () => w.pendingCounts(),
    delivered: synced((rows: Parameters<WebhookStore["delivered"]>[0]) => w.delivered(rows)),
    park: synced((id: string, seq: number, attempts: number, lastError: string, time: string) =>
      w.park(id, seq, attempts, lastError, time),
    ),
    parkOldest: synced((id: string, kind: OutboxEntry["kind"], n: number, time: string) =>
      w.parkOldest(id, kind, n, time),
    ),
    parked: (id, offset, limit) => w.parked(id, offset, limit),
    redeliver: synced((id: string, ids: readonly string[] | null) => w.redeliver(id, ids)),
  };
}
