// The migration of a registered 1.0 panel to a 2.0 system inside the service (semantics T70–T77):
// the single-system MigrationJob (M8–M12), with CREATE_CUSTOMER and CREATE_SYSTEM made real through
// the registry. The customer is a multi-site child of the legacy organization's dealer, its id
// derived from the serial number so that a restart or a re-initiate finds it again; the system is a
// tenant in state `staged` (read-only) until `complete` makes it active and deletes the panel. The
// job's state is kept in the panel tenant's kv under the keys the single-system server uses, so a
// restart resumes it (`open` reads every panel's).
import { HttpError } from "../httpError.js";
import {
  type MigrationRecord,
  MigrationJob,
  MigrationRefusal,
  type MigrationStore,
  type StagedSystem,
  type StoredMigration,
} from "../migrationJob.js";
import type { Grant } from "../auth/grant.js";
import { type Preflight, preflightPanel } from "../../legacy1/migration/preflightPanel.js";
import { systemNamespace, uuidV5 } from "../../legacy1/migration/uuidV5.js";
import type { DurableSystem } from "../store/durableSystem.js";
import type { TenantRow } from "../store/registryStore.js";
import type { Store, StoreSpace } from "../store/store.js";
import type { Caller } from "./organization.js";
import type { TenantRegistry } from "./registry.js";
import type { TenantHost } from "./tenantHost.js";
import { randomUUID } from "node:crypto";

// The panel tenant's kv, as the single-system server keeps a migration (migrationFront.ts).
const KEY_MIGRATION = "migration";
const KEY_BACKUP = "migration.backup";
/** What this migration made: the customer (and whether it made it), the staged tenant; and who started it. */
const KEY_MADE = "migration.made";
/** The id mappings, in the 2.0 system's kv (staged, then kept once completed). */
export const KEY_MAPPINGS = "migration.mappings";

const PANEL_READ_ONLY = "The panel is read-only while it is being migrated: complete or roll back the migration first.";
const STAGED_READ_ONLY = "The staged 2.0 system is read-only until its migration is completed.";

/** The caller that started a migration, as kept (events of tasks run after a restart name it). */
interface KeptCaller {
  readonly user: Grant["user"] | null;
  readonly clientInfo: Caller["clientInfo"];
}

interface Made {
  /** The run's runId (the record's id is the serial number, the same for every run of the panel). */
  readonly migrationId: string;
  readonly by: KeptCaller;
  customerId?: string;
  createdCustomer?: boolean;
  systemN?: number;
}

/** The id mappings of a migrated system (without its snapshot). */
export type MappingsOf = Omit<StagedSystem, "snapshot">;

/** Options of TenantMigrations.open. */
export interface TenantMigrationsOptions {
  readonly registry: TenantRegistry;
  readonly space: StoreSpace;
  readonly host: TenantHost;
  readonly now?: () => number;
  /** See MigrationJobOptions.pace. */
  readonly pace?: (task: string) => Promise<void>;
  /** The address a backup is read from, given the serial number; default the accounts host's route. */
  readonly backupPath?: (serial: string) => string;
  readonly log: (line: string) => void;
}

/** One panel's migration job and what it knows of its panel. */
interface Entry {
  readonly serial: string;
  readonly n: number;
  readonly job: MigrationJob;
  readonly store: Store;
  /** The panel's snapshot when the migration started (the panel is read-only from then on). */
  snapshot: unknown;
  made: Made | null;
  /** Whoever asked for the step running now (rollback's events); else the initiator. */
  by: Caller | null;
  /** Completed: the panel tenant is gone, nothing is saved under it any more. */
  retired: boolean;
}

const toCaller = (k: KeptCaller): Caller => ({
  grant: { role: "admin", partitions: null, ...(k.user != null ? { user: k.user } : {}) },
  clientInfo: k.clientInfo,
});

async function jsonValue<T>(store: Store, key: string): Promise<T | null> {
  const text = await store.getValue!(key);
  return text === null ? null : (JSON.parse(text) as T);
}

const put = (store: Store, key: string, value: unknown) =>
  store.setValue!(key, value === null ? null : JSON.stringify(value));

/** A durable system whose writes are 409 while `readOnly()` says so. */
function refusingWrites(d: DurableSystem, readOnly: () => boolean, message: string): DurableSystem {
  return {
    ...d,
    seq: () => d.seq(),
    write: (op, prepare) => (readOnly() ? Promise.reject(new HttpError(409, message)) : d.write(op, prepare)),
  };
}

/** The migrations of every registered panel of one service. */
export class TenantMigrations {
  readonly #o: TenantMigrationsOptions;
  readonly #entries = new Map<string, Entry>();

  private constructor(options: TenantMigrationsOptions) {
    this.#o = options;
  }

  /** Reads the migration every panel keeps, and resumes those that were running or staged (T73). */
  static async open(options: TenantMigrationsOptions): Promise<TenantMigrations> {
    const m = new TenantMigrations(options);
    for (const t of options.registry.tenants()) {
      if (t.kind !== "panel") continue;
      const stored = await jsonValue<StoredMigration>(options.space.tenant(t.n), KEY_MIGRATION);
      if (stored === null) continue;
      const e = await m.#entry(t, stored);
      if (stored.record.status === "Pending" || stored.record.status === "Processing") e.snapshot = await m.#read(t.n);
      await e.job.resume();
    }
    return m;
  }

  /** Whether panel tenant n is being migrated (running or staged): it may not be deleted (T76). */
  migrating(n: number): boolean {
    const t = this.#o.registry.tenant(n);
    return t !== undefined && this.#entries.get(t.key)?.job.panelReadOnly === true;
  }

  /**
   * A tenant's durable system as its app must serve it (T72, M9): a panel being migrated and a
   * staged system answer reads and refuse writes (409).
   */
  guard(tenant: TenantRow, durable: DurableSystem): DurableSystem {
    const { registry } = this.#o;
    return tenant.kind === "panel"
      ? refusingWrites(durable, () => this.#entries.get(tenant.key)?.job.panelReadOnly === true, PANEL_READ_ONLY)
      : refusingWrites(durable, () => registry.tenant(tenant.n)?.state === "staged", STAGED_READ_ONLY);
  }

  /** The preflight of registered panel `serial` (its current snapshot). */
  async preflight(serial: string): Promise<Preflight> {
    return preflightPanel(await this.#read(this.#panel(serial).n));
  }

  /** Starts a migration of panel `serial` (M8, T70). @throws MigrationRefusal, HttpError 404 */
  async initiate(serial: string, acceptWarnings: boolean, by: Caller): Promise<MigrationRecord> {
    const e = await this.#entryOf(serial);
    if (!e.job.panelReadOnly) e.snapshot = await this.#read(e.n);
    const before = e.by;
    e.by = by;
    try {
      return await e.job.initiate(serial, acceptWarnings);
    } catch (err) {
      e.by = before;
      throw err;
    }
  }

  /** The migration of panel `serial`. @throws MigrationRefusal 404 */
  async status(serial: string): Promise<MigrationRecord> {
    return (await this.#entryOf(serial)).job.status(serial);
  }

  /** The panel as exported by EXPORT_LEGACY_DATA, or null. */
  async backup(serial: string): Promise<unknown | null> {
    const e = await this.#entryOf(serial);
    return e.job.status(serial).backupUrl === null ? null : jsonValue(e.store, KEY_BACKUP);
  }

  /**
   * Completes a staged migration (T74): the staged system becomes active and the panel is deleted
   * from its legacy organization (`panel.deleted`), in one registry commit.
   * @throws MigrationRefusal 404, 409
   */
  async complete(serial: string, by: Caller): Promise<void> {
    const e = await this.#entryOf(serial);
    const { registry, host, space } = this.#o;
    await e.job.complete(serial, async (staged) => {
      const system = registry.tenantByKey(staged.systemId);
      if (system === undefined) throw new Error(`the staged system ${staged.systemId} is not registered`);
      // Closed before its rows go (read-only since initiate: closing stores nothing).
      await host.unload(e.n);
      await registry.completeMigration(serial, system.n, by);
      e.retired = true;
      // A request may have loaded it again meanwhile.
      await host.unload(e.n);
      // The completed record is kept with the system (the panel's kv went with it).
      const record = { ...e.job.record!, status: "Completed" as const };
      await put(space.tenant(system.n), KEY_MIGRATION, { record, plannedSystemId: staged.systemId });
    });
    this.#entries.delete(serial);
    this.#o.log(`migration of panel ${serial} completed: system ${e.job.record?.systemId ?? ""} is active`);
  }

  /** Rolls back (T75): the staged system and the customer this migration made are deleted. @throws MigrationRefusal */
  async rollback(serial: string, by: Caller): Promise<void> {
    const e = await this.#entryOf(serial);
    e.by = by;
    await e.job.rollback(serial);
    this.#o.log(`migration of panel ${serial} rolled back`);
  }

  /** The id mappings of system `systemId`, staged or migrated, or null (T77). */
  async mappings(systemId: string): Promise<MappingsOf | null> {
    const t = this.#o.registry.tenantByKey(systemId);
    if (t === undefined || t.kind !== "system") return null;
    return jsonValue<MappingsOf>(this.#o.space.tenant(t.n), KEY_MAPPINGS);
  }

  /** Waits for the tasks under way (before the service closes its store). */
  async settled(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((e) => e.job.running?.catch(() => undefined)));
  }

  #panel(serial: string): TenantRow {
    const t = this.#o.registry.tenantByKey(serial);
    if (t === undefined || t.kind !== "panel")
      throw new HttpError(404, "Unknown panel.", [{ path: "panel_id", message: `Unknown panel "${serial}".` }]);
    return t;
  }

  /** The panel's current snapshot (loaded by the tenant host for the moment). */
  async #read(n: number): Promise<unknown> {
    const lease = await this.#o.host.acquire(n);
    try {
      return lease.durable.target.live.snapshot;
    } finally {
      lease.release();
    }
  }

  async #entryOf(serial: string): Promise<Entry> {
    const t = this.#panel(serial);
    const had = this.#entries.get(serial);
    if (had !== undefined && had.n === t.n) return had;
    return this.#entry(t, null);
  }

  async #entry(t: TenantRow, stored: StoredMigration | null): Promise<Entry> {
    const store = this.#o.space.tenant(t.n);
    const made = stored === null ? null : await jsonValue<Made>(store, KEY_MADE);
    const entry = { serial: t.key, n: t.n, store, snapshot: null, made, by: null, retired: false } as Entry;
    const job = new MigrationJob(
      {
        store: this.#store(entry),
        panel: () => entry.snapshot,
        ...(this.#o.now !== undefined ? { now: this.#o.now } : {}),
        ...(this.#o.pace !== undefined ? { pace: this.#o.pace } : {}),
        backupPath: this.#o.backupPath ?? ((s) => `/api/migration/${encodeURIComponent(s)}/backup`),
        // The one place an operator reads why (the status answer has no field for it; the stored record keeps it).
        onFailure: (err, task) =>
          this.#o.log(`migration of panel ${t.key} failed in ${task}: ${(err as Error)?.message ?? String(err)}`),
        // The legacy organization the panel is registered in (it moves to a customer of that organization's dealer).
        legacyOuId: () => this.#panel(t.key).organization,
        createCustomer: (r) => this.#createCustomer(entry, r),
        createSystem: () => this.#createSystem(entry),
      },
      stored,
    );
    (entry as { job: MigrationJob }).job = job;
    this.#entries.set(t.key, entry);
    return entry;
  }

  /** The job's store: the panel's kv; IMPORT_SYSTEM_DATA's staged system goes to the staged tenant (T72). */
  #store(e: Entry): MigrationStore {
    const kept = (key: string, value: unknown) => (e.retired ? Promise.resolve() : put(e.store, key, value));
    return {
      saveMigration: (m) => kept(KEY_MIGRATION, m),
      saveBackup: (panel) => kept(KEY_BACKUP, panel),
      loadBackup: () => jsonValue(e.store, KEY_BACKUP),
      saveStaged: (staged) => (staged === null ? this.#removeMade(e) : this.#import(staged)),
      loadStaged: () => this.#loadStaged(e),
    };
  }

  /** What this migration made, kept before the registry commit that makes it (a restart knows it made it). */
  async #keepMade(e: Entry, record: MigrationRecord, change: Partial<Made>): Promise<Made> {
    const base: Made = e.made?.migrationId === record.runId ? e.made : { migrationId: record.runId, by: this.#kept(e) };
    e.made = { ...base, ...change };
    await put(e.store, KEY_MADE, e.made);
    return e.made;
  }

  #kept(e: Entry): KeptCaller {
    const by = e.by;
    return { user: by?.grant.user ?? null, clientInfo: by?.clientInfo ?? { ipAddress: null, userAgent: null } };
  }

  #caller(e: Entry): Caller {
    return e.by ?? toCaller(e.made?.by ?? this.#kept(e));
  }

  /** CREATE_CUSTOMER (T71): the multi-site customer under the legacy organization's dealer. */
  async #createCustomer(e: Entry, record: MigrationRecord): Promise<string> {
    const { registry } = this.#o;
    const legacy = registry.organization(this.#panel(e.serial).organization);
    if (legacy?.parent == null) throw new Error(`panel ${e.serial} has no legacy organization with a dealer`);
    const id = uuidV5(systemNamespace(e.serial), "customer");
    const kept = e.made?.migrationId === record.runId ? e.made : null;
    const createdCustomer = kept?.createdCustomer ?? registry.organization(id) === undefined;
    await this.#keepMade(e, record, { customerId: id, createdCustomer });
    await registry.migrationCustomer(legacy.parent, id, legacy.name, e.serial, this.#caller(e));
    return id;
  }

  /** CREATE_SYSTEM (T72): the customer's staged system tenant (the one it has already after a restart). */
  async #createSystem(e: Entry): Promise<string> {
    const record = e.job.record!;
    if (record.ouId === null) throw new Error("CREATE_CUSTOMER has not run");
    const row = await this.#o.registry.stageSystem(record.ouId, randomUUID());
    await this.#keepMade(e, record, { systemN: row.n });
    return row.key;
  }

  /** IMPORT_SYSTEM_DATA (T72): the migrated snapshot as the staged tenant's first, the mappings in its kv. */
  async #import(staged: StagedSystem): Promise<void> {
    const { registry, space } = this.#o;
    const t = registry.tenantByKey(staged.systemId);
    if (t === undefined || t.state !== "staged") throw new Error(`no staged system ${staged.systemId}`);
    const store = space.tenant(t.n);
    // After a restart the snapshot may be stored already: the same one (tasks are deterministic).
    if ((await store.load()) === null) await registry.importStaged(t.n, staged.snapshot);
    const mappings: MappingsOf = {
      systemId: staged.systemId,
      cloudNodeId: staged.cloudNodeId,
      mappings: staged.mappings,
    };
    await put(store, KEY_MAPPINGS, mappings);
  }

  async #loadStaged(e: Entry): Promise<StagedSystem | null> {
    const n = e.made?.systemN;
    if (n === undefined || this.#o.registry.tenant(n) === undefined) return null;
    const store = this.#o.space.tenant(n);
    const [state, mappings] = await Promise.all([store.load(), jsonValue<MappingsOf>(store, KEY_MAPPINGS)]);
    if (state === null || mappings === null) return null;
    return { ...mappings, snapshot: state.snapshot };
  }

  /** A rollback or a failure (T75): the staged system and the customer this migration made go. */
  async #removeMade(e: Entry): Promise<void> {
    const made = e.made;
    if (made === null) return;
    const { registry, host } = this.#o;
    const n = made.systemN ?? null;
    if (n !== null) await host.unload(n);
    await registry.removeMigrated(n, made.createdCustomer === true ? (made.customerId ?? null) : null, this.#caller(e));
    if (n !== null) await host.unload(n);
  }
}

export { MigrationRefusal };
