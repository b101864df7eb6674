// The SQLite store (better-sqlite3, loaded only when a store is opened): WAL journal,
// synchronous=FULL (a commit is on disk before it returns), and locking_mode=EXCLUSIVE with an
// exclusive transaction at open, so the process holds the database's lock until it closes or dies
// and a second process (or a second connection in this one) is refused at once.
import type { Database as SqliteDatabase } from "better-sqlite3";
import { jsonSlices } from "./jsonSlices.js";
import {
  type StoredChange,
  type StoredKind,
  type StoredState,
  type Store,
  StoreError,
} from "../../service/store/store.js";
import { type SqliteLike, sqliteWebhooks } from "./sqliteWebhooks.js";
import type { OutboxEntry } from "../../service/store/webhookStore.js";

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
  /** Characters of a snapshot's JSON written per transaction; default 4 MiB. */
  readonly snapshotPartChars?: number;
}

/** Lets the event loop run (requests, writes) between two steps of a long job. */
const turn = () => new Promise<void>((resolveTurn) => setImmediate(resolveTurn));

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

/**
 * Opens (creating it if needed) a SQLite store and takes its lock.
 * @throws StoreError when better-sqlite3 is missing, the file is in use by another process, is not
 *   an rsop database, or cannot be opened.
 */
export async function openSqliteStore(file: string, options: SqliteStoreOptions = {}): Promise<Store> {
  const Database = await loadDriver();
  const keep = Math.max(1, options.keepSnapshots ?? 2);
  const partChars = Math.max(1024, options.snapshotPartChars ?? 4 << 20);
  const db = openDatabase(Database, file);
  const statements = prepareStatements(db);
  const {
    getMeta,
    setMeta,
    insertChange,
    lastSeq,
    insertSnapshot,
    pruneSnapshots,
    latestSnapshot,
    hasSnapshot,
    partsOf,
    getValue,
    setValue,
    deleteValue,
    dropOlderSnapshots,
    pruneParts,
    changesAfter,
  } = statements;
  // Parts of a snapshot a crash interrupted (no row): never read, removed now.
  pruneParts.run();

  let seq = lastSeq.get()?.seq ?? 0;
  let closed = false;
  const open = () => {
    if (closed) throw new StoreError(`the database ${file} is closed`);
  };

  const init = db.transaction((kind: StoredKind, snapshot: string, time: string) => {
    if (getMeta.get("kind") !== undefined) throw new StoreError(`${file} already holds a system`);
    setMeta.run("kind", kind);
    insertSnapshot.run(0, time, snapshot);
  });
  // The webhook tables (sqliteWebhooks.ts): an outbox row commits with the change that caused it.
  const webhooks = sqliteWebhooks(db as unknown as SqliteLike, open);
  const append = db.transaction((operation: string, patches: string, time: string, outbox: readonly OutboxEntry[]) => {
    insertChange.run(seq + 1, time, operation, patches);
    webhooks.insert(outbox);
  });
  const finishSnapshot = db.transaction((at: number, text: string, time: string) => {
    insertSnapshot.run(at, time, text);
    pruneSnapshots.run(keep);
    pruneParts.run();
  });

  const replaceSystem = db.transaction((kind: StoredKind, text: string, operation: string, time: string) => {
    const at = seq + 1;
    insertChange.run(at, time, operation, "[]");
    insertSnapshot.run(at, time, text);
    setMeta.run("kind", kind);
    dropOlderSnapshots.run(at);
    pruneParts.run();
    // The old system's webhook subscriptions and their events go with it (W19).
    webhooks.clear();
    return at;
  });

  return {
    async getValue(key) {
      open();
      return getValue.get(key)?.value ?? null;
    },
    async setValue(key, value) {
      open();
      if (value === null) deleteValue.run(key);
      else setValue.run(key, value);
    },
    async replaceSystem(kind, snap, operation, time) {
      open();
      seq = replaceSystem(kind, JSON.stringify(snap), JSON.stringify(operation), time);
      return seq;
    },
    async load(): Promise<StoredState | null> {
      open();
      return loadState(file, { getMeta, latestSnapshot, changesAfter, partsOf });
    },
    async init(kind, snap, time) {
      open();
      init(kind, JSON.stringify(snap), time);
    },
    async append(operation, patches, time, outbox = []) {
      open();
      append(JSON.stringify(operation), JSON.stringify(patches), time, outbox);
      seq += 1;
      return seq;
    },
    async snapshot(at, snap, time) {
      open();
      if (hasSnapshot.get(at) !== undefined) return;
      await writeSnapshot(statements, open, at, snap, partChars, (head) => finishSnapshot(at, head, time));
    },
    ...sqliteReports(statements, open),
    webhooks: webhooks.store,
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
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
  const latestSnapshot = db.prepare<[], { seq: number; snapshot: string }>(
    "SELECT seq, snapshot FROM snapshots ORDER BY seq DESC LIMIT 1",
  );
  const hasSnapshot = db.prepare<[number], { seq: number }>("SELECT seq FROM snapshots WHERE seq = ?");
  const insertPart = db.prepare("INSERT OR REPLACE INTO snapshot_parts (seq, part, text) VALUES (?, ?, ?)");
  const partsOf = db.prepare<[number], { text: string }>("SELECT text FROM snapshot_parts WHERE seq = ? ORDER BY part");
  const getValue = db.prepare<[string], { value: string }>("SELECT value FROM kv WHERE key = ?");
  const setValue = db.prepare("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)");
  const deleteValue = db.prepare("DELETE FROM kv WHERE key = ?");
  const dropOlderSnapshots = db.prepare("DELETE FROM snapshots WHERE seq < ?");
  const dropParts = db.prepare("DELETE FROM snapshot_parts WHERE seq = ?");
  const pruneParts = db.prepare("DELETE FROM snapshot_parts WHERE seq NOT IN (SELECT seq FROM snapshots)");
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
    hasSnapshot,
    insertPart,
    partsOf,
    getValue,
    setValue,
    deleteValue,
    dropOlderSnapshots,
    dropParts,
    pruneParts,
    changesAfter,
    insertReport,
    allReports,
    recordsOf,
    removeReport,
  };
}

/** The latest snapshot (its row and parts) and the changes after it; null for an empty database. */
function loadState(
  file: string,
  {
    getMeta,
    latestSnapshot,
    changesAfter,
    partsOf,
  }: Pick<ReturnType<typeof prepareStatements>, "getMeta" | "latestSnapshot" | "changesAfter" | "partsOf">,
): StoredState | null {
  const kind = getMeta.get("kind")?.value;
  const latest = latestSnapshot.get();
  if (kind === undefined || latest === undefined) return null;
  if (kind !== "system" && kind !== "panel") throw new StoreError(`${file} holds an unknown kind of data ("${kind}")`);
  const changes: StoredChange[] = changesAfter.all(latest.seq).map((r) => ({
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
  const text =
    latest.snapshot +
    partsOf
      .all(latest.seq)
      .map((p) => p.text)
      .join("");
  return {
    kind,
    snapshotSeq: latest.seq,
    snapshot: JSON.parse(text) as unknown,
    changes,
    seq: changes.at(-1)?.seq ?? latest.seq,
  };
}

/** The report methods of the store: a report is one row, its info and records as JSON text. */
function sqliteReports(
  { insertReport, allReports, recordsOf, removeReport }: ReturnType<typeof prepareStatements>,
  open: () => void,
): Pick<Store, "putReport" | "listReports" | "reportRecords" | "reportRecordsText" | "deleteReport"> {
  return {
    async putReport(id, info, records) {
      open();
      insertReport.run(
        id,
        JSON.stringify(info),
        records === undefined ? null : typeof records === "string" ? records : JSON.stringify(records),
      );
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
      return removeReport.run(id).changes > 0;
    },
  };
}

/** Writes a snapshot's parts 1, 2, … one transaction each with the event loop free in between, then `finish(head)` its row. */
async function writeSnapshot(
  { dropParts, insertPart }: ReturnType<typeof prepareStatements>,
  open: () => void,
  at: number,
  snap: unknown,
  partChars: number,
  finish: (head: string) => void,
): Promise<void> {
  // Parts of an earlier attempt at this snapshot that did not finish.
  dropParts.run(at);
  // The first slice goes in the snapshots row, written last; the others are parts 1, 2, …
  let head: string | undefined;
  let part = 0;
  for (const slice of jsonSlices(snap, partChars)) {
    if (head === undefined) head = slice;
    else {
      open();
      insertPart.run(at, ++part, slice);
    }
    await turn();
  }
  open();
  finish(head!);
}
