// A cloud node's local state in one SQLite file (N54–N56): which node it is, the snapshot it holds
// and its revision, its contact record, the queue of access events not yet uploaded, and the state of
// its areas and doors with the resets it applied (AB6, AB7), a row per holder inside, per door and per
// reset, so a scan writes what it changed, not the whole state. A restart reads it all back, so a
// node decides again without the service.
//
// A change is stored as its patches beside the last whole snapshot, not by rewriting the snapshot:
// a change at 100,000 holders then costs what it changes. The whole snapshot is written again after
// REBASE_CHANGES changes, so a restart replays at most that many.
import type { Database as SqliteDatabase, Statement } from "better-sqlite3";
import type { ContactRecord } from "./contact.js";
import { type AccessChange, NodeAccessState } from "./nodeAccess.js";

/** After this many stored changes, the next one rewrites the whole snapshot (N55). */
export const REBASE_CHANGES = 1000;

/** Which node a data file belongs to: a file of another node (or system, or service) is refused. */
export interface NodeIdentity {
  readonly service: string;
  readonly systemId: string;
  readonly nodeId: string;
}

/** An access event waiting in the queue (N53). */
export interface QueuedEvent {
  /** The queue's order: increasing, never reused. */
  readonly seq: number;
  readonly eventId: string;
  readonly occurredAt: string;
  /** The revision of the node's system when it decided. */
  readonly revision: number;
  /** The request as decided, JSON. */
  readonly request: string;
  /** The decision, JSON. */
  readonly decision: string;
}

/** What a node reads back at its start. */
export interface StoredNode {
  /** The snapshot's JSON at its base revision, and the changes stored since, in order. */
  readonly base: { readonly revision: number; readonly snapshot: unknown } | null;
  readonly changes: readonly { readonly revision: number; readonly patches: unknown[] }[];
  readonly contact: ContactRecord | null;
  /** The areas' and doors' state with the resets applied (docs/semantics.md AB7); empty in a new file. */
  readonly access: NodeAccessState;
}

/** A data file that can't be used: named in the node's error. */
export class NodeStoreError extends Error {
  override name = "NodeStoreError";
}

type BetterSqlite = typeof import("better-sqlite3");

// The service's SQLite store has a twin of this loader: the node layer imports no service code
// (test/node/nodeLayer.test.ts), so the two cannot share one.
async function loadDriver(): Promise<BetterSqlite> {
  try {
    const m = (await import("better-sqlite3")) as unknown as { default?: BetterSqlite };
    return (m.default ?? m) as BetterSqlite;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
      throw new NodeStoreError(
        "rsop node needs the package better-sqlite3 (an optional peer dependency of rsop-engine): npm install better-sqlite3",
      );
    throw new NodeStoreError(`better-sqlite3 could not be loaded: ${(e as Error).message}`);
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS node_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS node_changes (revision INTEGER PRIMARY KEY, patches TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS node_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  revision INTEGER NOT NULL,
  request TEXT NOT NULL,
  decision TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS node_rejected_events (
  seq INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  revision INTEGER NOT NULL,
  request TEXT NOT NULL,
  decision TEXT NOT NULL,
  status INTEGER NOT NULL,
  reason TEXT NOT NULL,
  rejected_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS node_area_inside (
  area_id TEXT NOT NULL,
  holder_id TEXT NOT NULL,
  entered_at INTEGER NOT NULL,
  PRIMARY KEY (area_id, holder_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS node_first_allow (device_id TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS node_area_reset (area_id TEXT PRIMARY KEY, last_reset TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS node_area_forgiven (
  area_id TEXT NOT NULL,
  holder_id TEXT NOT NULL,
  at TEXT NOT NULL,
  PRIMARY KEY (area_id, holder_id)
) WITHOUT ROWID;`;

/** The statements that store an access change (docs/semantics.md AB7), prepared once. */
interface AccessStatements {
  readonly enter: Statement<unknown[]>;
  readonly exit: Statement<unknown[]>;
  readonly empty: Statement<unknown[]>;
  readonly firstAllow: Statement<unknown[]>;
  readonly noFirstAllow: Statement<unknown[]>;
  readonly setReset: Statement<unknown[]>;
  readonly clearReset: Statement<unknown[]>;
  readonly setForgiven: Statement<unknown[]>;
  readonly clearForgiven: Statement<unknown[]>;
  readonly dropForgiven: Statement<unknown[]>;
}

function accessStatements(db: SqliteDatabase): AccessStatements {
  return {
    enter: db.prepare("INSERT OR REPLACE INTO node_area_inside (area_id, holder_id, entered_at) VALUES (?, ?, ?)"),
    exit: db.prepare("DELETE FROM node_area_inside WHERE area_id = ? AND holder_id = ?"),
    empty: db.prepare("DELETE FROM node_area_inside WHERE area_id = ?"),
    firstAllow: db.prepare("INSERT OR REPLACE INTO node_first_allow (device_id, at) VALUES (?, ?)"),
    noFirstAllow: db.prepare("DELETE FROM node_first_allow WHERE device_id = ?"),
    setReset: db.prepare("INSERT OR REPLACE INTO node_area_reset (area_id, last_reset) VALUES (?, ?)"),
    clearReset: db.prepare("DELETE FROM node_area_reset WHERE area_id = ?"),
    setForgiven: db.prepare("INSERT OR REPLACE INTO node_area_forgiven (area_id, holder_id, at) VALUES (?, ?, ?)"),
    clearForgiven: db.prepare("DELETE FROM node_area_forgiven WHERE area_id = ? AND holder_id = ?"),
    dropForgiven: db.prepare("DELETE FROM node_area_forgiven WHERE area_id = ?"),
  };
}

/** Stores one access change (inside the caller's transaction). */
function storeChange(q: AccessStatements, c: AccessChange): void {
  switch (c.kind) {
    case "enter":
      q.enter.run(c.areaId, c.holderId, c.at);
      return;
    case "exit":
      q.exit.run(c.areaId, c.holderId);
      return;
    case "empty":
      q.empty.run(c.areaId);
      return;
    case "firstAllow":
      q.firstAllow.run(c.deviceId, c.at);
      return;
    case "noFirstAllow":
      q.noFirstAllow.run(c.deviceId);
      return;
    case "reset":
      if (c.value === null) q.clearReset.run(c.areaId);
      else q.setReset.run(c.areaId, c.value);
      return;
    case "forgiven":
      if (c.value === null) q.clearForgiven.run(c.areaId, c.holderId);
      else q.setForgiven.run(c.areaId, c.holderId, c.value);
      return;
    case "dropArea":
      q.clearReset.run(c.areaId);
      q.dropForgiven.run(c.areaId);
      // An area deleted and made again under its id starts empty.
      q.empty.run(c.areaId);
      return;
  }
}

/**
 * A node's data file. Every method is one transaction: a node killed at any point finds, at its next
 * start, each of them whole or not at all (N56).
 */
export class NodeStore {
  readonly #db: SqliteDatabase;
  #changes: number;
  // Prepared once: a busy door queues an event per scan, and preparing is most of a small insert.
  readonly #insert: Statement<unknown[]>;
  readonly #peek: Statement<unknown[]>;
  readonly #remove: Statement<unknown[]>;
  readonly #count: Statement<unknown[]>;
  readonly #countRejected: Statement<unknown[]>;
  readonly #reject: (seq: number, status: number, reason: string, at: string) => void;
  readonly #enqueueAll: (events: readonly Omit<QueuedEvent, "seq">[], changes: readonly AccessChange[]) => void;
  readonly #saveAccess: (changes: readonly AccessChange[]) => void;

  private constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#changes = (db.prepare("SELECT count(*) AS n FROM node_changes").get() as { n: number }).n;
    this.#insert = db.prepare(
      "INSERT INTO node_events (event_id, occurred_at, revision, request, decision) VALUES (?, ?, ?, ?, ?)",
    );
    this.#peek = db.prepare(
      "SELECT seq, event_id AS eventId, occurred_at AS occurredAt, revision, request, decision FROM node_events ORDER BY seq LIMIT ?",
    );
    this.#remove = db.prepare("DELETE FROM node_events WHERE seq <= ?");
    this.#count = db.prepare("SELECT count(*) AS n FROM node_events");
    this.#countRejected = db.prepare("SELECT count(*) AS n FROM node_rejected_events");
    const keepRejected = db.prepare(
      "INSERT INTO node_rejected_events SELECT seq, event_id, occurred_at, revision, request, decision, ?, ?, ? FROM node_events WHERE seq = ?",
    );
    const dropQueued = db.prepare("DELETE FROM node_events WHERE seq = ?");
    // Moved aside whole: kept in the file with the service's answer, never lost (N66).
    this.#reject = db.transaction((seq: number, status: number, reason: string, at: string) => {
      keepRejected.run(status, reason, at, seq);
      dropQueued.run(seq);
    });
    const access = accessStatements(db);
    // A scan's state change goes with its event: both are stored before its answer is written, or
    // neither (N56, docs/semantics.md AB7).
    this.#enqueueAll = db.transaction(
      (events: readonly Omit<QueuedEvent, "seq">[], changes: readonly AccessChange[]) => {
        for (const e of events) this.#insert.run(e.eventId, e.occurredAt, e.revision, e.request, e.decision);
        for (const c of changes) storeChange(access, c);
      },
    );
    this.#saveAccess = db.transaction((changes: readonly AccessChange[]) => {
      for (const c of changes) storeChange(access, c);
    });
  }

  /**
   * Opens (or creates) the data file of `identity`. A file made by another node, system or service
   * is refused, naming the one it belongs to: a gateway must never decide with another door's rules.
   */
  static async open(file: string, identity: NodeIdentity): Promise<NodeStore> {
    const Database = await loadDriver();
    let db: SqliteDatabase;
    try {
      db = new Database(file);
      // WAL with synchronous NORMAL: a committed transaction survives the process being killed (it
      // is in the operating system's hands); only a power cut can lose the last ones.
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.exec(SCHEMA);
    } catch (e) {
      throw new NodeStoreError(`${file}: cannot be opened as a node data file: ${(e as Error).message}`);
    }
    const row = db.prepare("SELECT value FROM node_state WHERE key = 'identity'").get() as
      | { value: string }
      | undefined;
    const wanted = JSON.stringify(identity);
    if (row === undefined) db.prepare("INSERT INTO node_state (key, value) VALUES ('identity', ?)").run(wanted);
    else if (row.value !== wanted) {
      db.close();
      const had = JSON.parse(row.value) as NodeIdentity;
      throw new NodeStoreError(
        `${file} belongs to cloud node ${had.nodeId} of system ${had.systemId} at ${had.service}, not to this node: give each node its own --data file`,
      );
    }
    return new NodeStore(db);
  }

  /** Everything stored: the base snapshot, the changes after it, the contact record, the access state. */
  load(): StoredNode {
    const get = (key: string) =>
      (this.#db.prepare("SELECT value FROM node_state WHERE key = ?").get(key) as { value: string } | undefined)?.value;
    const snapshot = get("snapshot");
    const revision = get("revision");
    const contact = get("contact");
    const changes = (
      this.#db.prepare("SELECT revision, patches FROM node_changes ORDER BY revision").all() as {
        revision: number;
        patches: string;
      }[]
    ).map((r) => ({ revision: r.revision, patches: JSON.parse(r.patches) as unknown[] }));
    return {
      base: snapshot === undefined ? null : { revision: Number(revision), snapshot: JSON.parse(snapshot) },
      changes,
      contact: contact === undefined ? null : (JSON.parse(contact) as ContactRecord),
      access: this.#loadAccess(),
    };
  }

  #loadAccess(): NodeAccessState {
    const state = new NodeAccessState();
    const rows = <T>(sql: string) => this.#db.prepare(sql).iterate() as IterableIterator<T>;
    for (const r of rows<{ a: string; h: string; at: number }>(
      "SELECT area_id AS a, holder_id AS h, entered_at AS at FROM node_area_inside ORDER BY entered_at, area_id, holder_id",
    ))
      state.enter(r.a, r.h, r.at);
    for (const r of rows<{ d: string; at: number }>("SELECT device_id AS d, at FROM node_first_allow"))
      state.setFirstAllow(r.d, r.at);
    for (const r of rows<{ a: string; v: string }>("SELECT area_id AS a, last_reset AS v FROM node_area_reset"))
      state.note({ kind: "reset", areaId: r.a, value: r.v });
    for (const r of rows<{ a: string; h: string; v: string }>(
      "SELECT area_id AS a, holder_id AS h, at AS v FROM node_area_forgiven",
    ))
      state.note({ kind: "forgiven", areaId: r.a, holderId: r.h, value: r.v });
    // What was read is stored already.
    state.takeChanges();
    return state;
  }

  /** Replaces the stored snapshot with `snapshot` at `revision`, dropping the changes before it. */
  saveSnapshot(revision: number, snapshot: unknown): void {
    const json = JSON.stringify(snapshot);
    this.#db.transaction(() => {
      this.#put("snapshot", json);
      this.#put("revision", String(revision));
      this.#db.prepare("DELETE FROM node_changes").run();
    })();
    this.#changes = 0;
  }

  /**
   * Stores one applied change. Returns true when the caller should store the whole snapshot instead
   * (REBASE_CHANGES changes are stored): it has it at hand, this store does not.
   */
  appendChange(revision: number, patches: readonly unknown[]): boolean {
    this.#db
      .prepare("INSERT OR REPLACE INTO node_changes (revision, patches) VALUES (?, ?)")
      .run(revision, JSON.stringify(patches));
    this.#changes++;
    return this.#changes >= REBASE_CHANGES;
  }

  saveContact(record: ContactRecord): void {
    this.#put("contact", JSON.stringify(record));
  }

  /**
   * Appends events to the queue and stores the access state's changes their scans made, all in one
   * transaction.
   */
  enqueue(events: readonly Omit<QueuedEvent, "seq">[], changes: readonly AccessChange[] = []): void {
    if (events.length > 0 || changes.length > 0) this.#enqueueAll(events, changes);
  }

  /** Stores changes of the access state made outside scans (resets applied), in one transaction. */
  saveAccess(changes: readonly AccessChange[]): void {
    if (changes.length > 0) this.#saveAccess(changes);
  }

  /** The oldest queued events: at most `count`, and no more than `bytes` of JSON (at least one). */
  peek(count: number, bytes: number): QueuedEvent[] {
    const rows = this.#peek.all(count) as QueuedEvent[];
    let total = 0;
    let n = 0;
    for (const r of rows) {
      total += r.request.length + r.decision.length + 120;
      if (n > 0 && total > bytes) break;
      n++;
    }
    return rows.slice(0, n);
  }

  /** Removes the queued events up to `seq`, once the service has them. */
  remove(seq: number): void {
    this.#remove.run(seq);
  }

  /** How many events wait in the queue. */
  pending(): number {
    return (this.#count.get() as { n: number }).n;
  }

  /**
   * Moves queued event `seq`, which the service refused on its own, out of the queue into the
   * rejected events, with the answer's status and message and when (N66): the events after it go on.
   */
  reject(seq: number, status: number, reason: string, at: string): void {
    this.#reject(seq, status, reason, at);
  }

  /** How many events the service refused and the file keeps aside (N66). */
  rejected(): number {
    return (this.#countRejected.get() as { n: number }).n;
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  #put(key: string, value: string): void {
    this.#db.prepare("INSERT OR REPLACE INTO node_state (key, value) VALUES (?, ?)").run(key, value);
  }
}
