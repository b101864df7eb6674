// The storage interface of `rsop serve --data`: an append-only change log plus periodic snapshots.
// A system is stored as its snapshot at some sequence number and the changes after it; start-up
// replays those changes' patches. SQLite implements it (sqliteStore.ts); nothing below the adapters
// layer knows it exists. The log's patches have a format (changeLogFormat.ts): a store records it
// and upgrades an older one when it opens.

import type { RegistryStore } from "./registryStore.js";
import type { OutboxEntry, WebhookStore } from "./webhookStore.js";

/** What a store holds: an architecture 2.0 system or a 1.0 panel. */
export type StoredKind = "system" | "panel";

/** One accepted write as the log keeps it. */
export interface StoredChange {
  /** Its position in the log: 1, 2, 3, … without gaps. */
  readonly seq: number;
  /** The operation as received (`{method, path, body?}`). */
  readonly operation: unknown;
  /** The immer patches the write made (JSON). */
  readonly patches: readonly unknown[];
  /** When it was accepted (ISO 8601, UTC). */
  readonly time: string;
}

/** One accepted write as a store is given it. */
export interface StoredWrite {
  readonly operation: unknown;
  readonly patches: readonly unknown[];
  readonly time: string;
}

/** What `load` finds: the latest snapshot and every change after it. */
export interface StoredState {
  readonly kind: StoredKind;
  /** The sequence number the snapshot was taken at (0: the imported snapshot). */
  readonly snapshotSeq: number;
  /**
   * The snapshot (JSON) as of `snapshotSeq`: what `JSON.parse` made of the stored text (plain, shared
   * with nothing). A store may read and parse it only when this is first read, so that a caller
   * asking only for `kind` pays nothing for it.
   */
  readonly snapshot: unknown;
  /** The changes after `snapshotSeq`, in order. */
  readonly changes: readonly StoredChange[];
  /** The last sequence number in the log (`snapshotSeq` when `changes` is empty). */
  readonly seq: number;
}

/**
 * One stored report (holder or people report of `rsop serve --data`): what the report service keeps
 * about it (`info`: its metadata and how it was asked, JSON the store does not look into) and, once
 * generated, its records. A store keeps reports in the order they were first put.
 */
export interface StoredReport {
  readonly id: string;
  readonly info: unknown;
}

/**
 * Durable storage of one system. Every method that writes has committed durably when its promise
 * resolves. Methods are called one at a time (the caller serializes writes), except `appendAt`, which
 * may be called again before earlier calls resolved (group commit), and `snapshot`: a snapshot may
 * take a while and runs beside appends (never two snapshots at once), so that storing one never holds
 * up the writes after it.
 */
export interface Store {
  /** The stored state, or null for an empty store. */
  load(): Promise<StoredState | null>;
  /** Imports the first snapshot into an empty store (sequence number 0), and records the log's format (CHANGE_LOG_FORMAT). */
  init(kind: StoredKind, snapshot: unknown, time: string): Promise<void>;
  /**
   * Appends one accepted write at the next sequence number; resolves to that number once it is
   * durable. `outbox`: the webhook events the write caused, stored in the same transaction (stores
   * with `webhooks` only). Not to be called while an `appendAt` is unresolved.
   */
  append(
    operation: unknown,
    patches: readonly unknown[],
    time: string,
    outbox?: readonly OutboxEntry[],
  ): Promise<number>;
  /**
   * Appends accepted writes as changes `seq`, `seq + 1`, … in one transaction, with the webhook events
   * they caused (`outbox`, stores with `webhooks` only). Resolves true once they are durable; false,
   * nothing written, when `seq` is not the number after the last change the log holds.
   *
   * Calls may overlap: they are stored in the order they are made, and one made after a call that
   * fails or answers false (and before its caller knew) answers false too, since its `seq` is no
   * longer the next. The calls made while the disk syncs one are made durable together by the next
   * sync (group commit). A store that commits in the call itself (SQLite) holds the writes in its log
   * when the call returns (a crash of the process loses nothing; only the sync is awaited).
   */
  appendAt(seq: number, writes: readonly StoredWrite[], outbox?: readonly OutboxEntry[]): Promise<boolean>;
  /**
   * Stores the snapshot as of sequence number `seq` (start-up then replays only the log after it).
   * The snapshot is immutable, so it may be serialized in steps while appends go on; until the
   * promise resolves, `load` does not see it. A snapshot already stored at `seq` is kept as it is.
   * `pace`: "background" (default) leaves most of the event loop to requests, taking longer;
   * "now" (a closing server, with nothing else to serve) as fast as it can.
   */
  snapshot(seq: number, snapshot: unknown, time: string, pace?: "background" | "now"): Promise<void>;
  /**
   * Stores a report: inserts it, or replaces the `info` (and the records, when `records` is given) of
   * the report with this id. Records are written once, when the report is generated: an array, or
   * its JSON text (stored as it is, so that it can be answered as it is: reportRecordsText).
   */
  putReport(id: string, info: unknown, records?: readonly unknown[] | string): Promise<void>;
  /** Every stored report (without records), in the order they were first put. */
  listReports(): Promise<StoredReport[]>;
  /** The records of a report: null when it has none stored (pending, or unknown id). */
  reportRecords(id: string): Promise<unknown[] | null>;
  /** The records of a report as the JSON text stored, not parsed (a view answers it as it is); null as reportRecords. */
  reportRecordsText?(id: string): Promise<string | null>;
  /** Removes a report and its records; false when no report has this id. */
  deleteReport(id: string): Promise<boolean>;
  /** Webhook subscriptions and their outbox (webhookStore.ts); absent when this store does not keep them (SQLite and PostgreSQL do). */
  readonly webhooks?: WebhookStore;
  /** Releases the database (and its lock). */
  close(): Promise<void>;
  /**
   * A named value kept beside the system (a migration's record, its backup, its staged system), or
   * null. Optional: a store without it serves no migration.
   */
  getValue?(key: string): Promise<string | null>;
  /** Stores (null: removes) a named value; durable when it resolves. */
  setValue?(key: string, value: string | null): Promise<void>;
  /**
   * Replaces the stored system with one of another kind (a completed migration: the panel becomes
   * the 2.0 system) in one transaction: the change `operation` is logged at the next sequence number
   * with no patches, the snapshot is stored at that number, older snapshots are removed, and so are
   * the webhook subscriptions and their outbox (they belonged to the old system). Resolves to that
   * number. Optional, as getValue.
   */
  replaceSystem?(kind: StoredKind, snapshot: unknown, operation: unknown, time: string): Promise<number>;
  /**
   * Up to `limit` changes after `seq`, in order; null when the log no longer holds change `seq + 1`
   * though the system is past `seq` (compacted: only a snapshot can catch up); empty at the log's
   * end. As SharedStore.changesAfter; optional: a store without it feeds no cloud node.
   */
  changesAfter?(seq: number, limit: number): Promise<StoredChange[] | null>;
}

/**
 * What a store shared by several processes adds (PostgreSQL; SQLite does not have it): appending that
 * tells the others, reading the log after a sequence number, and being told of appends. A
 * replica (replicatedSystem.ts) keeps its live system in step with the log through it. Optional: the
 * plain Store above is all one process needs.
 */
export interface SharedStore extends Store {
  /**
   * Store.appendAt, telling the other processes; false also when another process appended one of
   * those numbers first.
   */
  appendAt(seq: number, writes: readonly StoredWrite[], outbox?: readonly OutboxEntry[]): Promise<boolean>;
  /**
   * Up to `limit` changes after `seq`, in order; null when the log no longer holds change `seq + 1`
   * (compacted: only a load from the latest snapshot can catch up).
   */
  changesAfter(seq: number, limit: number): Promise<StoredChange[] | null>;
  /**
   * Follows appends until the returned function is called: `onAppend(seq)` when a process appended
   * `seq` (prompt, but may be missed), `onReconnect()` after the connection was lost and regained (a
   * notification may have been missed meanwhile: catch up by sequence number).
   */
  follow(listener: {
    onAppend(seq: number): void;
    onReconnect(): void;
    onError(e: unknown): void;
  }): Promise<() => Promise<void>>;
  /** Whether this process is (or has just become) the one that stores snapshots; one process at a time. */
  isSnapshotWriter(): Promise<boolean>;
}

/** A store that cannot be opened or read: the message says why, for the operator. */
export class StoreError extends Error {
  override readonly name = "StoreError";
}

/** The database could not be reached for a write (answered 503): the write's outcome is unknown until the log is read again. */
export class StoreUnavailableError extends StoreError {}

/**
 * A service database: many tenants (systems and panels), each a Store of its own number, with the
 * registry that names them and the webhooks of every organization, in one database (one connection
 * and one group commit on SQLite). A tenant's Store is a view: its `close` releases nothing; the
 * space's `close` closes the database. `tenant(1)` is the one system of a database made before
 * tenants existed.
 */
export interface StoreSpace {
  tenant(n: number): Store;
  readonly registry: RegistryStore;
  /** The webhook subscriptions of every organization and their outbox (the same object as each tenant's `webhooks`). */
  readonly webhooks?: WebhookStore;
  close(): Promise<void>;
}

/**
 * A service database shared by several processes (PostgreSQL): each tenant a SharedStore, every
 * tenant followed through one session (`follow` of a tenant adds a listener to it, never a
 * connection per tenant).
 */
export interface SharedStoreSpace extends StoreSpace {
  tenant(n: number): SharedStore;
}
