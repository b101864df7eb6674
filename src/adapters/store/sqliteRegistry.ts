// The registry of a SQLite service database (registryStore.ts): organizations, tenants and panel
// tokens, in the tables sqliteStore.ts creates, over the store's one connection. A commit is one
// transaction with the webhook events it causes and, for a tenant it deletes, every row kept under
// its number (T4); it is durable through the store's group commit. `meta.registry_rev` counts commits.
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
import type { StoredKind } from "../../service/store/store.js";
import type { OutboxEntry } from "../../service/store/webhookStore.js";
import type { SqliteLike } from "./sqliteWebhooks.js";

/** The key of the commit counter in `meta`. */
const REV_KEY = "registry_rev";

/** What the registry needs of the store it shares a database with. */
export interface RegistryDeps {
  /** The database's file, for messages. */
  readonly file: string;
  /** Throws once the database is closed. */
  readonly live: () => void;
  /** Waits until everything committed so far is durable (after a write of about `bytes`). */
  readonly durable: (bytes?: number) => Promise<void>;
  /** Adds outbox rows inside the caller's transaction (sqliteWebhooks.ts `insert`). */
  readonly insertOutbox: (entries: readonly OutboxEntry[]) => void;
  /** Store.init of tenant `n`, inside the caller's transaction; answers the snapshot's length in characters. */
  readonly initTenant: (n: number, kind: StoredKind, snapshot: unknown, time: string) => number;
  /** Told after a commit that deleted tenant `n` (its Store view must refuse use). */
  readonly deleted: (n: number) => void;
}

interface OrgRecord {
  id: string;
  parent: string | null;
  name: string;
  type: OrganizationRow["type"];
  fields: string;
  created: string;
}
interface TenantRecord {
  n: number;
  kind: StoredKind;
  key: string;
  organization: string;
  state: TenantRow["state"];
  info: string;
  created: string;
}

/** The RegistryStore of an open SQLite database whose schema holds the registry tables (sqliteStore.ts). */
export function sqliteRegistry(db: SqliteLike, deps: RegistryDeps): RegistryStore {
  const st = registryStatements(db);
  const revOf = () => Number((st.getRev.get() as { value: string } | undefined)?.value ?? 0);
  const run = db.transaction((changes: readonly RegistryChange[], outbox: readonly OutboxEntry[]) => {
    const rev = revOf() + 1;
    let bytes = 0;
    for (const c of changes) bytes += apply(st, deps, c, rev);
    deps.insertOutbox(outbox);
    st.setRev.run(String(rev));
    return { rev, bytes };
  });
  return {
    async load(): Promise<RegistryState> {
      deps.live();
      return {
        organizations: (st.orgs.all() as OrgRecord[]).map((r) => ({ ...r, fields: JSON.parse(r.fields) as unknown })),
        tenants: (st.tenants.all() as TenantRecord[]).map((r) => ({ ...r, info: JSON.parse(r.info) as unknown })),
        panelTokens: st.tokens.all() as PanelTokenRow[],
        records: (st.records.all() as { kind: string; id: string; value: string; version: number }[]).map(
          (r): RecordRow => ({ ...r, value: JSON.parse(r.value) as unknown }),
        ),
        rev: revOf(),
      };
    },
    async commit(changes, outbox = []) {
      deps.live();
      let done: { rev: number; bytes: number };
      try {
        done = run(changes, outbox);
      } catch (e) {
        throw conflictOf(e, deps.file) ?? e;
      }
      for (const c of changes) if (c.op === "deleteTenant") deps.deleted(c.n);
      await deps.durable(done.bytes);
      return done.rev;
    },
  };
}

/** One change of a commit, inside its transaction; answers about how many bytes it wrote. */
function apply(st: RegistryStatements, deps: RegistryDeps, c: RegistryChange, rev: number): number {
  switch (c.op) {
    case "putOrg": {
      const r = c.row;
      const fields = JSON.stringify(r.fields ?? {});
      st.putOrg.run(r.id, r.parent, r.name, r.type, fields, r.created, rev);
      return fields.length;
    }
    case "deleteOrg":
      st.deleteOrg.run(c.id);
      return 0;
    case "putTenant": {
      const r = c.row;
      const info = JSON.stringify(r.info ?? {});
      st.putTenant.run(r.n, r.kind, r.key, r.organization, r.state, info, r.created, rev);
      return info.length;
    }
    case "deleteTenant":
      for (const remove of st.deleteTenant) remove.run(c.n);
      return 0;
    case "initTenant": {
      if (st.hasSnapshot.get(c.n) !== undefined)
        throw new RegistryConflict("tenant", `tenant ${c.n} already holds a system`);
      return deps.initTenant(c.n, c.kind, c.snapshot, c.time);
    }
    case "putPanelToken":
      st.putToken.run(c.row.digest, c.row.tenant, c.row.role, c.row.created);
      return 0;
    case "deletePanelTokens":
      st.deleteTokens.run(c.tenant);
      return 0;
    case "putRecord": {
      const version = recordVersion(st, c.kind, c.id, c.ifVersion);
      const value = JSON.stringify(c.value ?? null);
      st.putRecord.run(c.kind, c.id, value, version + 1, rev);
      return value.length;
    }
    case "deleteRecord":
      recordVersion(st, c.kind, c.id, c.ifVersion);
      st.deleteRecord.run(c.kind, c.id);
      return 0;
  }
}

/** A record's version (0: absent); throws RegistryConflict `stale` when `ifVersion` is given and differs. */
function recordVersion(st: RegistryStatements, kind: string, id: string, ifVersion: number | undefined): number {
  const version = (st.recordVersion.get(kind, id) as { version: number } | undefined)?.version ?? 0;
  if (ifVersion !== undefined && ifVersion !== version)
    throw new RegistryConflict("stale", `record ${kind} ${id} is at version ${version}, not ${ifVersion}`);
  return version;
}

/** A unique key a commit broke, as the RegistryConflict the service answers 409 for; undefined for any other error. */
function conflictOf(e: unknown, file: string): RegistryConflict | undefined {
  if (e instanceof RegistryConflict) return e;
  const code = (e as { code?: unknown }).code;
  if (code !== "SQLITE_CONSTRAINT_UNIQUE" && code !== "SQLITE_CONSTRAINT_PRIMARYKEY") return undefined;
  const message = (e as Error).message;
  if (message.includes("organizations_name"))
    return new RegistryConflict("name", "an organization of this name (case ignored) already has this parent");
  if (message.includes("tenants.key")) return new RegistryConflict("key", "a tenant already has this key");
  if (message.includes("panel_tokens")) return new RegistryConflict("key", "this panel token is already stored");
  return new RegistryConflict("key", `${file}: ${message}`);
}

type RegistryStatements = ReturnType<typeof registryStatements>;

/** Every statement of the registry, prepared once. */
function registryStatements(db: SqliteLike) {
  return {
    getRev: db.prepare(`SELECT value FROM meta WHERE key = '${REV_KEY}'`),
    setRev: db.prepare(`INSERT OR REPLACE INTO meta (key, value) VALUES ('${REV_KEY}', ?)`),
    orgs: db.prepare("SELECT id, parent, name, type, fields, created FROM organizations ORDER BY created, id"),
    tenants: db.prepare("SELECT n, kind, key, organization, state, info, created FROM tenants ORDER BY n"),
    tokens: db.prepare("SELECT digest, tenant, role, created FROM panel_tokens ORDER BY digest"),
    putOrg: db.prepare(
      `INSERT INTO organizations (id, parent, name, type, fields, created, rev) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET parent = excluded.parent, name = excluded.name, type = excluded.type, fields = excluded.fields, rev = excluded.rev`,
    ),
    deleteOrg: db.prepare("DELETE FROM organizations WHERE id = ?"),
    putTenant: db.prepare(
      `INSERT INTO tenants (n, kind, key, organization, state, info, created, rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (n) DO UPDATE SET kind = excluded.kind, key = excluded.key, organization = excluded.organization,
       state = excluded.state, info = excluded.info, rev = excluded.rev`,
    ),
    hasSnapshot: db.prepare("SELECT 1 FROM snapshots WHERE tenant = ? LIMIT 1"),
    // Everything kept under a tenant's number, its row last.
    deleteTenant: [
      "DELETE FROM changes WHERE tenant = ?",
      "DELETE FROM snapshot_parts WHERE tenant = ?",
      "DELETE FROM snapshots WHERE tenant = ?",
      "DELETE FROM reports WHERE tenant = ?",
      "DELETE FROM kv WHERE tenant = ?",
      "DELETE FROM panel_tokens WHERE tenant = ?",
      "DELETE FROM tenants WHERE n = ?",
    ].map((sql) => db.prepare(sql)),
    putToken: db.prepare("INSERT INTO panel_tokens (digest, tenant, role, created) VALUES (?, ?, ?, ?)"),
    deleteTokens: db.prepare("DELETE FROM panel_tokens WHERE tenant = ?"),
    records: db.prepare("SELECT kind, id, value, version FROM records ORDER BY kind, id"),
    recordVersion: db.prepare("SELECT version FROM records WHERE kind = ? AND id = ?"),
    putRecord: db.prepare(
      `INSERT INTO records (kind, id, value, version, rev) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (kind, id) DO UPDATE SET value = excluded.value, version = excluded.version, rev = excluded.rev`,
    ),
    deleteRecord: db.prepare("DELETE FROM records WHERE kind = ? AND id = ?"),
  };
}
