// The registry of a service database: the organization tree, the tenants (each a 2.0 system or a 1.0
// panel kept in the same database under its own number) and the panel tokens. The whole registry is
// small (thousands of rows), so it is read whole and held in memory by the service (tenants/); every
// change is committed here first, in one transaction with the webhook events it causes, and only
// then applied in memory. Implemented for SQLite (sqliteRegistry.ts) and PostgreSQL
// (postgresRegistry.ts).
import type { OutboxEntry } from "./webhookStore.js";

/** What a tenant holds (store.ts StoredKind, written out here: store.ts imports this file). */
type StoredKind = "system" | "panel";

/** The kinds of organization: the one root (the service operator), dealers, and customers of either architecture. */
export type OrganizationType = "root" | "dealer" | "multi-site" | "legacy";

/** One organization as the registry keeps it. */
export interface OrganizationRow {
  readonly id: string;
  /** Its parent's id; null for the root only. */
  readonly parent: string | null;
  readonly name: string;
  readonly type: OrganizationType;
  /** The rest of its fields (flags), JSON the store does not look into. */
  readonly fields: unknown;
  /** When it was created (ISO 8601, UTC). */
  readonly created: string;
}

/** One tenant: a 2.0 system or a 1.0 panel, stored under number `n` (its change log, snapshots, reports, kv). */
export interface TenantRow {
  /** Its number in the store (`Store` of `StoreSpace.tenant(n)`); 1 is the tenant of a database made before tenants. */
  readonly n: number;
  readonly kind: StoredKind;
  /** The system id (2.0) or the panel's serial number (1.0); unique among tenants. */
  readonly key: string;
  /** The id of the organization that owns it. */
  readonly organization: string;
  /** `staged`: a migration's 2.0 system not yet completed (read-only). */
  readonly state: "active" | "staged";
  /** Its other fields (a panel's registration; a system's cloud-node summary), JSON the store does not look into. */
  readonly info: unknown;
  readonly created: string;
}

/** A panel token (kept as the SHA-256 digest of the token, hex): valid on its tenant's per-node host only. */
export interface PanelTokenRow {
  readonly digest: string;
  readonly tenant: number;
  readonly role: string;
  readonly created: string;
}

/**
 * One record of the identity part of the registry (users, applications, permissions, signing keys,
 * refresh-token chains, authorization codes, self-help counts: identity/records.ts): a JSON value the
 * store does not look into, under (`kind`, `id`). `version` counts its writes (1 when first put), so
 * that a write can require the version it read (single use across processes, I4).
 */
export interface RecordRow {
  readonly kind: string;
  readonly id: string;
  readonly value: unknown;
  readonly version: number;
}

/** One change of a registry commit. */
export type RegistryChange =
  | { readonly op: "putOrg"; readonly row: OrganizationRow }
  | { readonly op: "deleteOrg"; readonly id: string }
  | { readonly op: "putTenant"; readonly row: TenantRow }
  /** Removes the tenant row and everything stored under its number: changes, snapshots, reports, kv, panel tokens. */
  | { readonly op: "deleteTenant"; readonly n: number }
  /** Stores a tenant's first snapshot (sequence 0), as `Store.init` does, in the same transaction as the rest. */
  | {
      readonly op: "initTenant";
      readonly n: number;
      readonly kind: StoredKind;
      readonly snapshot: unknown;
      readonly time: string;
    }
  | { readonly op: "putPanelToken"; readonly row: PanelTokenRow }
  | { readonly op: "deletePanelTokens"; readonly tenant: number }
  /**
   * Puts a record at version (its current version, 0 when absent) + 1. With `ifVersion`, the
   * commit is refused (RegistryConflict `stale`) unless the current version is exactly that (0: absent).
   */
  | {
      readonly op: "putRecord";
      readonly kind: string;
      readonly id: string;
      readonly value: unknown;
      readonly ifVersion?: number;
    }
  /** Removes a record (absent: nothing); with `ifVersion`, refused (`stale`) unless it has that version. */
  | { readonly op: "deleteRecord"; readonly kind: string; readonly id: string; readonly ifVersion?: number };

/** The whole registry as stored. */
export interface RegistryState {
  readonly organizations: readonly OrganizationRow[];
  readonly tenants: readonly TenantRow[];
  readonly panelTokens: readonly PanelTokenRow[];
  /** Every record (identity), in (kind, id) order. */
  readonly records: readonly RecordRow[];
  /** Counts commits: 0 for a registry never changed, one more after each commit. */
  readonly rev: number;
}

/** Durable registry. Each method has committed when its promise resolves; commits run one at a time. */
export interface RegistryStore {
  load(): Promise<RegistryState>;
  /**
   * Applies `changes` in order and stores `outbox` (webhook events, as `Store.append` does) in one
   * transaction; resolves to the new `rev` once durable. A change that breaks a unique key (an
   * organization name among its siblings, a tenant key) rejects with RegistryConflict and commits
   * nothing.
   */
  commit(changes: readonly RegistryChange[], outbox?: readonly OutboxEntry[]): Promise<number>;
  /** The registry when its `rev` is no longer `rev` (another process committed), else null (shared stores). */
  changedSince?(rev: number): Promise<RegistryState | null>;
}

/** A commit refused by a unique key: `what` names it for the 409 (`name`, `key`). */
export class RegistryConflict extends Error {
  override readonly name = "RegistryConflict";
  constructor(
    /** `stale`: a record's version was not the one a change required (putRecord/deleteRecord `ifVersion`). */
    readonly what: "name" | "key" | "tenant" | "stale",
    message: string,
  ) {
    super(message);
  }
}
