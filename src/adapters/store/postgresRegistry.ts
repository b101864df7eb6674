// The registry of a PostgreSQL service database (registryStore.ts): organizations, tenants and panel
// tokens, shared by every process of the database. A commit is one transaction: it takes the next
// `rev` (the counter row in `rsop_meta`, locked to the commit, so commits of all processes run one at
// a time), applies its changes, stores its webhook events in the outbox, and notifies
// `rsop_registry` with the rev; the others re-read the registry (`changedSince`) when told, or when
// they poll (T9). Races between processes are settled by the unique keys: an organization's name
// among its siblings (case-insensitive) and a tenant's key (RegistryConflict, nothing committed).
import type { Queryable } from "./pgListen.js";
import type {
  OrganizationRow,
  PanelTokenRow,
  RecordRow,
  RegistryChange,
  RegistryState,
  RegistryStore,
  TenantRow,
} from "../../service/store/registryStore.js";
import { RegistryConflict } from "../../service/store/registryStore.js";
import { type StoredKind, StoreError } from "../../service/store/store.js";
import type { OutboxEntry } from "../../service/store/webhookStore.js";

/**
 * The advisory lock of the schema: created or checked by each process as it opens the database
 * (exclusively), and held shared by each registry commit. `CREATE INDEX IF NOT EXISTS` takes a
 * share lock on its table even when the index exists, and the schema's `registry_rev` insert waits
 * for a commit updating that row: without this lock a process opening the database while another
 * commits could deadlock with it (seen as "deadlock detected" when two processes start at once).
 */
export const SCHEMA_LOCK = 0x7273_6f70_01; // "rsop" 1

/** The registry's tables (rsop_tenants is the store's: it also holds each tenant's kind). */
export const PG_REGISTRY_SCHEMA = `
CREATE TABLE IF NOT EXISTS rsop_organizations (id text PRIMARY KEY, parent text REFERENCES rsop_organizations (id), name text NOT NULL, type text NOT NULL CHECK (type IN ('root', 'dealer', 'multi-site', 'legacy')), fields text NOT NULL, created text NOT NULL, rev bigint NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS rsop_organizations_name ON rsop_organizations (parent, lower(name));
CREATE UNIQUE INDEX IF NOT EXISTS rsop_organizations_root ON rsop_organizations ((true)) WHERE parent IS NULL;
CREATE TABLE IF NOT EXISTS rsop_panel_tokens (digest text PRIMARY KEY, tenant bigint NOT NULL, role text NOT NULL, created text NOT NULL);
CREATE INDEX IF NOT EXISTS rsop_panel_tokens_tenant ON rsop_panel_tokens (tenant);
CREATE TABLE IF NOT EXISTS rsop_records (kind text NOT NULL, id text NOT NULL, value text NOT NULL, version bigint NOT NULL, rev bigint NOT NULL, PRIMARY KEY (kind, id));
INSERT INTO rsop_meta (key, value) VALUES ('registry_rev', '0') ON CONFLICT (key) DO NOTHING;
`;

/** What the registry needs of the store that opens it (postgresStore.ts). */
export interface PgRegistryDeps {
  readonly query: <R extends object>(sql: string, params?: unknown[]) => Promise<R[]>;
  readonly transaction: <T>(body: (c: Queryable) => Promise<T>) => Promise<T>;
  /** Adds outbox rows in the caller's transaction (postgresWebhooks.ts). */
  readonly insertOutbox: (c: Queryable, entries: readonly OutboxEntry[]) => Promise<void>;
  /** Stores a tenant's first snapshot in the caller's transaction; false when it has one already. */
  readonly initTenant: (c: Queryable, n: number, kind: StoredKind, snapshot: unknown, time: string) => Promise<boolean>;
  /** Calls `onChange` when another process may have committed (the space's listening session). */
  readonly watch: (onChange: () => void) => Promise<() => Promise<void>>;
}

/** The PostgreSQL registry: a RegistryStore that also tells of the other processes' commits. */
export interface PostgresRegistry extends RegistryStore {
  changedSince(rev: number): Promise<RegistryState | null>;
  /**
   * Calls `onChange` after a commit of any process (this one's too) and after the listening session
   * was regained (one may have been missed), until the returned function is called; the caller then
   * reads `changedSince` (T9).
   */
  watch(onChange: () => void): Promise<() => Promise<void>>;
}

/** A commit refused inside the transaction (a StoreError, so that the transaction passes it on as it is). */
class Refused extends StoreError {
  constructor(readonly conflict: RegistryConflict) {
    super(conflict.message);
  }
}

/** A unique violation of the registry's keys as the RegistryConflict it means; undefined for any other error. */
function conflictOf(e: unknown): RegistryConflict | undefined {
  if (e instanceof Refused) return e.conflict;
  const { code, constraint, detail } = e as { code?: unknown; constraint?: unknown; detail?: unknown };
  if (code !== "23505") return undefined;
  const what =
    constraint === "rsop_organizations_name" ? "name" : constraint === "rsop_tenants_pkey" ? "tenant" : "key";
  return new RegistryConflict(what, typeof detail === "string" ? detail : String((e as Error).message));
}

/** The registry of a PostgreSQL space. */
export function postgresRegistry(deps: PgRegistryDeps): PostgresRegistry {
  const { query, transaction } = deps;
  const load = () => transaction((c) => readRegistry(c));
  return {
    load,
    async commit(changes, outbox = []) {
      try {
        return await transaction(async (c) => {
          await c.query("SELECT pg_advisory_xact_lock_shared($1)", [SCHEMA_LOCK]);
          // The counter row stays locked to the commit: one registry commit at a time, across processes.
          const rev = Number(
            (
              await c.query<{ value: string }>(
                "UPDATE rsop_meta SET value = (value::bigint + 1)::text WHERE key = 'registry_rev' RETURNING value",
              )
            ).rows[0]!.value,
          );
          for (const change of changes) await applyChange(c, deps, change, rev);
          if (outbox.length > 0) await deps.insertOutbox(c, outbox);
          await c.query("SELECT pg_notify('rsop_registry', $1)", [String(rev)]);
          return rev;
        });
      } catch (e) {
        throw conflictOf(e) ?? e;
      }
    },
    async changedSince(rev) {
      const now = (await query<{ value: string }>("SELECT value FROM rsop_meta WHERE key = 'registry_rev'"))[0]?.value;
      return Number(now) === rev ? null : load();
    },
    watch: deps.watch,
  };
}

/** The whole registry as of one moment (one repeatable-read transaction). */
async function readRegistry(c: Queryable): Promise<RegistryState> {
  await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
  const rev = Number(
    (await c.query<{ value: string }>("SELECT value FROM rsop_meta WHERE key = 'registry_rev'")).rows[0]!.value,
  );
  const organizations = (
    await c.query<{ id: string; parent: string | null; name: string; type: string; fields: string; created: string }>(
      "SELECT id, parent, name, type, fields, created FROM rsop_organizations ORDER BY created, id",
    )
  ).rows.map(
    (r): OrganizationRow => ({
      id: r.id,
      parent: r.parent,
      name: r.name,
      type: r.type as OrganizationRow["type"],
      fields: JSON.parse(r.fields) as unknown,
      created: r.created,
    }),
  );
  // A tenant of organization '' holds data no registry commit named yet (Store.init of an embedded
  // database, or a schema-1 database upgraded: T8), keyed by its snapshot's id.
  const tenants = (
    await c.query<{
      n: string;
      kind: string;
      key: string;
      organization: string;
      state: string;
      info: string;
      created: string;
    }>("SELECT n, kind, key, organization, state, info, created FROM rsop_tenants ORDER BY n")
  ).rows.map(
    (r): TenantRow => ({
      n: Number(r.n),
      kind: r.kind as StoredKind,
      key: r.key,
      organization: r.organization,
      state: r.state as TenantRow["state"],
      info: JSON.parse(r.info) as unknown,
      created: r.created,
    }),
  );
  const panelTokens = (
    await c.query<{ digest: string; tenant: string; role: string; created: string }>(
      "SELECT digest, tenant, role, created FROM rsop_panel_tokens ORDER BY digest",
    )
  ).rows.map((r): PanelTokenRow => ({ digest: r.digest, tenant: Number(r.tenant), role: r.role, created: r.created }));
  const records = (
    await c.query<{ kind: string; id: string; value: string; version: string }>(
      "SELECT kind, id, value, version FROM rsop_records ORDER BY kind, id",
    )
  ).rows.map(
    (r): RecordRow => ({ kind: r.kind, id: r.id, value: JSON.parse(r.value) as unknown, version: Number(r.version) }),
  );
  return { organizations, tenants, panelTokens, records, rev };
}

/** Applies one change of a commit in its transaction. */
async function applyChange(c: Queryable, deps: PgRegistryDeps, change: RegistryChange, rev: number): Promise<void> {
  switch (change.op) {
    case "putOrg": {
      const o = change.row;
      await c.query(
        `INSERT INTO rsop_organizations (id, parent, name, type, fields, created, rev) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (id) DO UPDATE SET parent = excluded.parent, name = excluded.name, type = excluded.type, fields = excluded.fields, rev = excluded.rev`,
        [o.id, o.parent, o.name, o.type, JSON.stringify(o.fields ?? null), o.created, rev],
      );
      return;
    }
    case "deleteOrg":
      await c.query("DELETE FROM rsop_organizations WHERE id = $1", [change.id]);
      return;
    case "putTenant": {
      const t = change.row;
      await c.query(
        `INSERT INTO rsop_tenants (n, kind, key, organization, state, info, created, rev) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (n) DO UPDATE SET kind = excluded.kind, key = excluded.key, organization = excluded.organization,
           state = excluded.state, info = excluded.info, created = excluded.created, rev = excluded.rev`,
        [t.n, t.kind, t.key, t.organization, t.state, JSON.stringify(t.info ?? null), t.created, rev],
      );
      return;
    }
    case "deleteTenant":
      // Everything stored under its number goes with it.
      for (const table of ["rsop_changes", "rsop_snapshots", "rsop_reports", "rsop_kv", "rsop_panel_tokens"])
        await c.query(`DELETE FROM ${table} WHERE tenant = $1`, [change.n]);
      await c.query("DELETE FROM rsop_tenants WHERE n = $1", [change.n]);
      return;
    case "initTenant":
      if (!(await deps.initTenant(c, change.n, change.kind, change.snapshot, change.time)))
        throw new Refused(new RegistryConflict("tenant", `tenant ${change.n} already holds a system`));
      return;
    case "putPanelToken": {
      const p = change.row;
      await c.query(
        "INSERT INTO rsop_panel_tokens (digest, tenant, role, created) VALUES ($1, $2, $3, $4) ON CONFLICT (digest) DO UPDATE SET tenant = excluded.tenant, role = excluded.role, created = excluded.created",
        [p.digest, p.tenant, p.role, p.created],
      );
      return;
    }
    case "deletePanelTokens":
      await c.query("DELETE FROM rsop_panel_tokens WHERE tenant = $1", [change.tenant]);
      return;
    case "putRecord": {
      const version = await recordVersion(c, change.kind, change.id, change.ifVersion);
      await c.query(
        `INSERT INTO rsop_records (kind, id, value, version, rev) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (kind, id) DO UPDATE SET value = excluded.value, version = excluded.version, rev = excluded.rev`,
        [change.kind, change.id, JSON.stringify(change.value ?? null), version + 1, rev],
      );
      return;
    }
    case "deleteRecord":
      await recordVersion(c, change.kind, change.id, change.ifVersion);
      await c.query("DELETE FROM rsop_records WHERE kind = $1 AND id = $2", [change.kind, change.id]);
      return;
  }
}

/**
 * A record's version (0: absent), read in the commit's transaction; refused (`stale`) when
 * `ifVersion` differs. Commits run one at a time (the counter row's lock), so what is read here
 * holds until the commit ends.
 */
async function recordVersion(c: Queryable, kind: string, id: string, ifVersion: number | undefined): Promise<number> {
  const found = (
    await c.query<{ version: string }>("SELECT version FROM rsop_records WHERE kind = $1 AND id = $2", [kind, id])
  ).rows[0];
  const version = found === undefined ? 0 : Number(found.version);
  if (ifVersion !== undefined && ifVersion !== version)
    throw new Refused(new RegistryConflict("stale", `record ${kind} ${id} is at version ${version}, not ${ifVersion}`));
  return version;
}
