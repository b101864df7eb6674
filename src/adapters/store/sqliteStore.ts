// The SQLite store (better-sqlite3, loaded only when a store is opened): WAL journal, and
// locking_mode=EXCLUSIVE with an exclusive transaction at open, so the process holds the database's
// lock until it closes or dies and a second process (or a second connection in this one) is refused
// at once. Commits run with synchronous=OFF and are made durable by walSync.ts (fsync of the WAL off
// the event loop, shared by the commits made while one runs); every method that writes resolves only
// once its commit is durable, as with synchronous=FULL. The change log's format is recorded in `meta`
// and a format-1 log is upgraded at open (changeLogFormat.ts).
import type { Database as SqliteDatabase } from "better-sqlite3";
import { JsonChunkCache, jsonPartsInTurns } from "./jsonSlices.js";
import { WalSync } from "./walSync.js";
import {
  type StoredChange,
  type StoredKind,
  type StoredState,
  type StoredWrite,
  type Store,
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
import type { OutboxEntry, WebhookStore } from "../../service/store/webhookStore.js";

/** The schema version written to `meta`; a database of another version is refused. */
const SCHEMA_VERSION = "1";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, operation TEXT NOT NULL, patches TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS snapshots (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, snapshot TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS snapshot_parts (seq INTEGER NOT NULL, part INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (seq, part)) STRICT;
CREATE TABLE IF NOT EXISTS reports (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, info TEXT NOT NULL, records TEXT) STRICT;
`;
// A snapshot's JSON text is its \`snapshots.snapshot\` followed by its \`snapshot_parts\` in order. The
// parts are written first, each in a transaction of its own with the event loop free in between, and
// the \`snapshots\` row last: a snapshot exists once its row does, so parts left by a crash are ignored
// (and removed at the next open). A database written before parts existed simply has none.
// The reports table came after schema version 1 was first written; CREATE TABLE IF NOT EXISTS adds it
// to an older database of the same version at its next open (its other tables are unchanged).

/** Options of openSqliteStore. */
export interface SqliteStoreOptions {
  /** How many snapshots to keep (the newest); default 2. The change log is never pruned. */
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

/**
 * Opens (creating it if needed) a SQLite store and takes its lock; a change log of format 1 is
 * upgraded first (changeLogFormat.ts).
 * @throws StoreError when better-sqlite3 is missing, the file is in use by another process, is not
 *   an rsop database, holds a change log of a newer format or one that does not upgrade, or cannot
 *   be opened.
 */
export async function openSqliteStore(file: string, options: SqliteStoreOptions = {}): Promise<Store> {
  const Database = await loadDriver();
  const keep = Math.max(1, options.keepSnapshots ?? 2);
  const partChars = Math.max(1024, options.snapshotPartChars ?? 1 << 20);
  const db = openDatabase(Database, file);
  let closed = false;
  const open = () => {
    if (closed) throw new StoreError(`the database ${file} is closed`);
  };
  const { st, webhooks, sync } = setUp(db, file, keep, open);
  let seq = st.lastSeq.get()?.seq ?? 0;
  /** Waits until everything committed so far is durable (after a write of about `bytes`). */
  const durable = (bytes = 0) => sync.sync(bytes);
  /** The texts of the last snapshot's runs of entities (jsonSlices.ts). */
  const chunks = new JsonChunkCache();
  const { init, finishSnapshot, replaceSystem } = transactions(db, st, webhooks.clear, file, keep);
  const appendAt = appender(db, st, webhooks.insert);

  const store: Store = {
    async getValue(key) {
      open();
      return st.getValue.get(key)?.value ?? null;
    },
    async setValue(key, value) {
      open();
      if (value === null) st.deleteValue.run(key);
      else st.setValue.run(key, value);
      await durable(value?.length ?? 0);
    },
    async replaceSystem(kind, snap, operation, time) {
      open();
      const text = JSON.stringify(snap);
      seq = replaceSystem(seq + 1, kind, text, JSON.stringify(operation), time);
      await durable(text.length);
      return seq;
    },
    async load(): Promise<StoredState | null> {
      open();
      return loadState(file, st, open);
    },
    async init(kind, snap, time) {
      open();
      const text = JSON.stringify(snap);
      init(kind, text, time);
      await durable(text.length);
    },
    async append(operation, patches, time, outbox = []) {
      const at = seq + 1;
      if (!(await store.appendAt(at, [{ operation, patches, time }], outbox)))
        throw new StoreError(`${file}: change ${at} could not be appended`);
      return at;
    },
    async appendAt(at, writes, outbox = []) {
      open();
      if (sync.failed !== undefined) throw sync.failed;
      if (at !== seq + 1) return false;
      // Committed in this call, before anything else runs: a read that shows the write shows one the
      // log holds. Only its sync is awaited.
      const bytes = appendAt(at, writes, outbox, file);
      seq += writes.length;
      await durable(bytes);
      return true;
    },
    async snapshot(at, snap, time, pace = "background") {
      open();
      if (st.hasSnapshot.get(at) !== undefined) return;
      // Parts of an earlier attempt at this snapshot that did not finish.
      st.dropParts.run(at);
      // The first part goes in the snapshots row, written last; the others are parts 1, 2, …
      let head: string | undefined;
      let part = 0;
      let unsynced = 0;
      for await (const text of jsonPartsInTurns(snap, partChars, pace === "background", chunks)) {
        open();
        if (head === undefined) head = text;
        else {
          st.insertPart.run(at, ++part, text);
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
      finishSnapshot(at, head!, time);
      await durable(head!.length + unsynced);
      // The parts of the snapshots that went, one transaction each: they are never read once their
      // row is gone, and freeing tens of megabytes at once would hold the event loop.
      while (!closed && st.prunePartsSome.run(1).changes > 0) await durable();
    },
    ...sqliteReports(st, open, durable),
    webhooks: durableWebhooks(webhooks.store, durable),
    async close() {
      if (closed) return;
      await sync.close();
      closed = true;
      // SQLite checkpoints and removes the WAL as it closes: with synchronous=FULL it syncs the
      // database before removing it.
      db.pragma("synchronous = FULL");
      db.close();
    },
  };
  return store;
}

/**
 * The store's statements, webhook tables and syncs on an open database: parts a crash left removed,
 * the log's format checked (or upgraded) while SQLite still syncs itself, then synchronous=OFF with
 * walSync.ts making commits durable. Closes the database when any of it fails.
 */
function setUp(db: SqliteDatabase, file: string, keep: number, open: () => void) {
  try {
    const st = prepareStatements(db);
    // Parts of a snapshot a crash interrupted (no row): never read, removed now.
    st.pruneParts.run();
    // The webhook tables (sqliteWebhooks.ts): an outbox row commits with the change that caused it.
    const webhooks = sqliteWebhooks(db as unknown as SqliteLike, open);
    checkLogFormat(db, st, file, keep);
    // Everything above ran with synchronous=FULL; from here on, commits are synced by walSync.ts.
    const sync = new WalSync(file, file, () => checkpoint(db));
    db.pragma("wal_autocheckpoint = 0");
    db.pragma("synchronous = OFF");
    return { st, webhooks, sync };
  } catch (e) {
    db.close();
    if (e instanceof StoreError) throw e;
    throw new StoreError(`cannot use the database ${file}: ${(e as Error).message}`);
  }
}

/** The store's transactions other than appends: the import, a snapshot's row, a migration's replacement. */
function transactions(db: SqliteDatabase, st: Statements, clearWebhooks: () => void, file: string, keep: number) {
  const init = db.transaction((kind: StoredKind, snapshot: string, time: string) => {
    if (st.getMeta.get("kind") !== undefined) throw new StoreError(`${file} already holds a system`);
    st.setMeta.run("kind", kind);
    st.setMeta.run(LOG_FORMAT_KEY, String(CHANGE_LOG_FORMAT));
    st.insertSnapshot.run(0, time, snapshot);
  });
  const finishSnapshot = db.transaction((at: number, text: string, time: string) => {
    st.insertSnapshot.run(at, time, text);
    st.pruneSnapshots.run(keep);
  });
  const replaceSystem = db.transaction(
    (at: number, kind: StoredKind, text: string, operation: string, time: string) => {
      st.insertChange.run(at, time, operation, "[]");
      st.insertSnapshot.run(at, time, text);
      st.setMeta.run("kind", kind);
      st.dropOlderSnapshots.run(at);
      st.pruneParts.run();
      // The old system's webhook subscriptions and their events go with it (W19).
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
 * The transaction of appendAt: the changes at `at`, `at + 1`, … and their outbox rows. Answers about
 * how many bytes it wrote.
 * @throws StoreUnavailableError when SQLite refuses it (disk full, I/O error): nothing of it is stored.
 */
function appender(db: SqliteDatabase, st: Statements, insertOutbox: (entries: readonly OutboxEntry[]) => void) {
  const run = db.transaction((at: number, writes: readonly StoredWrite[], outbox: readonly OutboxEntry[]) => {
    let bytes = 0;
    writes.forEach((w, i) => {
      const operation = JSON.stringify(w.operation);
      const patches = JSON.stringify(w.patches);
      bytes += operation.length + patches.length;
      st.insertChange.run(at + i, w.time, operation, patches);
    });
    insertOutbox(outbox);
    return bytes;
  });
  return (at: number, writes: readonly StoredWrite[], outbox: readonly OutboxEntry[], file: string): number => {
    try {
      return run(at, writes, outbox);
    } catch (e) {
      if (e instanceof StoreError || !(typeof (e as { code?: unknown }).code === "string")) throw e;
      throw new StoreUnavailableError(`the database ${file} could not store the write: ${(e as Error).message}`);
    }
  };
}

/** Creates the database file if needed, takes its lock, and checks (or writes) the schema version. */
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
    db.exec(`BEGIN EXCLUSIVE; ${SCHEMA} COMMIT;`);
    const version = (db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | undefined)
      ?.value;
    if (version === undefined) db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?)").run(SCHEMA_VERSION);
    else if (version !== SCHEMA_VERSION)
      throw new StoreError(`${file} has schema version ${version}; this rsop reads version ${SCHEMA_VERSION}`);
  } catch (e) {
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

/**
 * Records the change log's format in a database that has none (an empty one) and upgrades a format-1
 * log in one transaction: its latest snapshot with the changes after it applied is stored as the
 * snapshot of the last change (older snapshots beyond `keep` go), then the format.
 * @throws StoreError for a newer format, or a format-1 log that does not upgrade (nothing is changed).
 */
function checkLogFormat(db: SqliteDatabase, st: Statements, file: string, keep: number): void {
  if (logFormatAction(st.getMeta.get(LOG_FORMAT_KEY)?.value, file) === "current") return;
  db.transaction(() => {
    const kind = st.getMeta.get("kind")?.value;
    const latest = st.latestSnapshot.get();
    if (kind !== undefined && latest !== undefined) {
      const changes = st.changesAfter.all(latest.seq).map((r) => ({
        seq: r.seq,
        patches: JSON.parse(r.patches) as unknown[],
      }));
      if (changes.length > 0) {
        const snapshot = JSON.parse(snapshotText(st, latest)) as unknown;
        const next = replayFormat1(kind as StoredKind, snapshot, changes, file);
        st.insertSnapshot.run(changes.at(-1)!.seq, new Date().toISOString(), JSON.stringify(next));
        st.pruneSnapshots.run(keep);
        st.pruneParts.run();
      }
    }
    st.setMeta.run(LOG_FORMAT_KEY, String(CHANGE_LOG_FORMAT));
  })();
}

/** Every statement the store runs, prepared once. */
function prepareStatements(db: SqliteDatabase) {
  const getMeta = db.prepare<[string], { value: string }>("SELECT value FROM meta WHERE key = ?");
  const setMeta = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
  const insertChange = db.prepare("INSERT INTO changes (seq, time, operation, patches) VALUES (?, ?, ?, ?)");
  const lastSeq = db.prepare<[], { seq: number | null }>("SELECT max(seq) AS seq FROM changes");
  const insertSnapshot = db.prepare("INSERT OR REPLACE INTO snapshots (seq, time, snapshot) VALUES (?, ?, ?)");
  const pruneSnapshots = db.prepare(
    "DELETE FROM snapshots WHERE seq NOT IN (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?)",
  );
  const latestSnapshot = db.prepare<[], { seq: number }>("SELECT seq FROM snapshots ORDER BY seq DESC LIMIT 1");
  const snapshotRow = db.prepare<[number], { snapshot: string }>("SELECT snapshot FROM snapshots WHERE seq = ?");
  const hasSnapshot = db.prepare<[number], { seq: number }>("SELECT seq FROM snapshots WHERE seq = ?");
  const insertPart = db.prepare("INSERT OR REPLACE INTO snapshot_parts (seq, part, text) VALUES (?, ?, ?)");
  const partsOf = db.prepare<[number], { text: string }>("SELECT text FROM snapshot_parts WHERE seq = ? ORDER BY part");
  const getValue = db.prepare<[string], { value: string }>("SELECT value FROM kv WHERE key = ?");
  const setValue = db.prepare("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)");
  const deleteValue = db.prepare("DELETE FROM kv WHERE key = ?");
  const dropOlderSnapshots = db.prepare("DELETE FROM snapshots WHERE seq < ?");
  const dropParts = db.prepare("DELETE FROM snapshot_parts WHERE seq = ?");
  const pruneParts = db.prepare("DELETE FROM snapshot_parts WHERE seq NOT IN (SELECT seq FROM snapshots)");
  const prunePartsSome = db.prepare(
    "DELETE FROM snapshot_parts WHERE rowid IN (SELECT rowid FROM snapshot_parts WHERE seq NOT IN (SELECT seq FROM snapshots) LIMIT ?)",
  );
  const changesAfter = db.prepare<[number], { seq: number; time: string; operation: string; patches: string }>(
    "SELECT seq, time, operation, patches FROM changes WHERE seq > ? ORDER BY seq",
  );

  const insertReport = db.prepare(
    "INSERT INTO reports (id, info, records) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET info = excluded.info, records = coalesce(excluded.records, records)",
  );
  const allReports = db.prepare<[], { id: string; info: string }>("SELECT id, info FROM reports ORDER BY n");
  const recordsOf = db.prepare<[string], { records: string | null }>("SELECT records FROM reports WHERE id = ?");
  const removeReport = db.prepare("DELETE FROM reports WHERE id = ?");

  return {
    getMeta,
    setMeta,
    insertChange,
    lastSeq,
    insertSnapshot,
    pruneSnapshots,
    latestSnapshot,
    snapshotRow,
    hasSnapshot,
    insertPart,
    partsOf,
    getValue,
    setValue,
    deleteValue,
    dropOlderSnapshots,
    dropParts,
    pruneParts,
    prunePartsSome,
    changesAfter,
    insertReport,
    allReports,
    recordsOf,
    removeReport,
  };
}

/** The JSON text of the snapshot stored at `latest.seq`: its row, then its parts. */
function snapshotText(st: Statements, latest: { seq: number }): string {
  const parts = st.partsOf.all(latest.seq);
  const head = st.snapshotRow.get(latest.seq)!.snapshot;
  return parts.length === 0 ? head : head + parts.map((p) => p.text).join("");
}

/**
 * The latest snapshot and the changes after it; null for an empty database. The snapshot's text is
 * read and parsed when `snapshot` is first read (a caller that only asks for `kind` pays nothing for it).
 */
function loadState(file: string, st: Statements, open: () => void): StoredState | null {
  const kind = st.getMeta.get("kind")?.value;
  const latest = st.latestSnapshot.get();
  if (kind === undefined || latest === undefined) return null;
  if (kind !== "system" && kind !== "panel") throw new StoreError(`${file} holds an unknown kind of data ("${kind}")`);
  const changes: StoredChange[] = st.changesAfter.all(latest.seq).map((r) => ({
    seq: r.seq,
    time: r.time,
    operation: JSON.parse(r.operation) as unknown,
    patches: JSON.parse(r.patches) as unknown[],
  }));
  // The log has no gaps: change k+1 follows change k.
  changes.forEach((c, i) => {
    if (c.seq !== latest.seq + i + 1)
      throw new StoreError(`${file}: the change log jumps from ${latest.seq + i} to ${c.seq}`);
  });
  let snapshot: { readonly value: unknown } | undefined;
  return {
    kind,
    snapshotSeq: latest.seq,
    get snapshot() {
      if (snapshot === undefined) {
        open();
        snapshot = { value: JSON.parse(snapshotText(st, latest)) as unknown };
      }
      return snapshot.value;
    },
    changes,
    seq: changes.at(-1)?.seq ?? latest.seq,
  };
}

/** The report methods of the store: a report is one row, its info and records as JSON text. */
function sqliteReports(
  { insertReport, allReports, recordsOf, removeReport }: Statements,
  open: () => void,
  durable: (bytes?: number) => Promise<void>,
): Pick<Store, "putReport" | "listReports" | "reportRecords" | "reportRecordsText" | "deleteReport"> {
  return {
    async putReport(id, info, records) {
      open();
      const text = records === undefined ? null : typeof records === "string" ? records : JSON.stringify(records);
      insertReport.run(id, JSON.stringify(info), text);
      await durable(text?.length ?? 0);
    },
    async listReports() {
      open();
      return allReports.all().map((r) => ({ id: r.id, info: JSON.parse(r.info) as unknown }));
    },
    async reportRecords(id) {
      open();
      const text = recordsOf.get(id)?.records;
      return text === undefined || text === null ? null : (JSON.parse(text) as unknown[]);
    },
    async reportRecordsText(id) {
      open();
      return recordsOf.get(id)?.records ?? null;
    },
    async deleteReport(id) {
      open();
      const removed = removeReport.run(id).changes > 0;
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
    subscriptions: () => w.subscriptions(),
    putSubscription: synced((id: string, fields: unknown) => w.putSubscription(id, fields)),
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
