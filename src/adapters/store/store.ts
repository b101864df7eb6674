// The storage interface of `rsop serve --data`: an append-only change log plus periodic snapshots.
// A system is stored as its snapshot at some sequence number and the changes after it; start-up
// replays those changes' patches. SQLite implements it (sqliteStore.ts); nothing below the adapters
// layer knows it exists.

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

/** What `load` finds: the latest snapshot and every change after it. */
export interface StoredState {
  readonly kind: StoredKind;
  /** The sequence number the snapshot was taken at (0: the imported snapshot). */
  readonly snapshotSeq: number;
  /** The snapshot (JSON) as of `snapshotSeq`. */
  readonly snapshot: unknown;
  /** The changes after `snapshotSeq`, in order. */
  readonly changes: readonly StoredChange[];
  /** The last sequence number in the log (`snapshotSeq` when `changes` is empty). */
  readonly seq: number;
}

/**
 * Durable storage of one system. Every method that writes has committed durably when its promise
 * resolves. Methods are called one at a time (the caller serializes writes), except `snapshot`: a
 * snapshot may take a while and runs beside appends (never two snapshots at once), so that storing
 * one never holds up the writes after it.
 */
export interface Store {
  /** The stored state, or null for an empty store. */
  load(): Promise<StoredState | null>;
  /** Imports the first snapshot into an empty store (sequence number 0). */
  init(kind: StoredKind, snapshot: unknown, time: string): Promise<void>;
  /**
   * Appends one accepted write; resolves to its sequence number once it is durable. `outbox`: the
   * webhook events the write caused, stored in the same transaction (stores with `webhooks` only).
   */
  append(operation: unknown, patches: readonly unknown[], time: string, outbox?: readonly OutboxEntry[]): Promise<number>;
  /**
   * Stores the snapshot as of sequence number `seq` (start-up then replays only the log after it).
   * The snapshot is immutable, so it may be serialized in steps while appends go on; until the
   * promise resolves, `load` does not see it. A snapshot already stored at `seq` is kept as it is.
   */
  snapshot(seq: number, snapshot: unknown, time: string): Promise<void>;
  /** Webhook subscriptions and their outbox (webhookStore.ts); absent when this store does not keep them (SQLite does). */
  readonly webhooks?: WebhookStore;
  /** Releases the database (and its lock). */
  close(): Promise<void>;
}

/** A store that cannot be opened or read: the message says why, for the operator. */
export class StoreError extends Error {
  override readonly name = "StoreError";
}
