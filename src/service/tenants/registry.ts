// The registry of a service, in memory (semantics T10–T17): the organization tree, the tenants (2.0
// systems and 1.0 panels) and the panel tokens, read whole at open (thousands of rows is small). Each
// change runs alone (a serial queue), is checked against the tree, and is committed through the
// RegistryStore with its events' outbox rows before memory changes: what the routes answer is
// always what is stored. On a shared store, `refresh` re-reads what another process committed.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import {
  type EventContext,
  type OrgEvent,
  type OrgSubject,
  type PermissionSubject,
  organizationEvents,
  panelEvent,
  permissionEvents,
} from "../../events/orgEvents.js";
import { toHttpIssues, HttpError } from "../httpError.js";
import { createTarget } from "../store/durableSystem.js";
import {
  type OrganizationRow,
  type PanelTokenRow,
  type RecordRow,
  type RegistryChange,
  RegistryConflict,
  type RegistryState,
  type RegistryStore,
  type TenantRow,
} from "../store/registryStore.js";
import type { StoredKind } from "../store/store.js";
import type { OutboxEntry } from "../store/webhookStore.js";
import {
  type Caller,
  DEFAULT_FLAGS,
  type Generation,
  type PanelInfo,
  RESERVED_SYSTEM_IDS,
  childType,
  deleteConflicts,
  flagsOf,
  nameTaken,
  newFlags,
  panelInfoOf,
  parseBody,
  updatedFlags,
} from "./organization.js";

export type { Caller } from "./organization.js";

/** What a records update commits (TenantRegistry.updateRecords), and what it answers. */
export interface RecordsUpdate<T> {
  readonly changes: readonly RegistryChange[];
  readonly events?: readonly OrgEvent[];
  /** Outbox rows made elsewhere (a node's access events, N23), committed as they are with the changes. */
  readonly outbox?: readonly OutboxEntry[];
  readonly result: T;
}

/**
 * A records commit refused because a record was no longer at the version it was read at: another
 * request (or process) used it first (a code or refresh token presented twice, I4).
 */
export class StaleRecord extends Error {
  override readonly name = "StaleRecord";
}

/** Options of TenantRegistry.open. */
export interface RegistryOptions {
  readonly now?: () => number;
  /** The outbox rows of organization events (the webhooks' subscriptions that want them), committed with the change. */
  readonly outbox?: (events: OrgEvent[]) => OutboxEntry[];
  /** Told the outbox rows once committed (the webhooks wake their senders). */
  readonly stored?: (entries: readonly OutboxEntry[]) => void;
  /** Whether tenant n (a 2.0 system) has holders: deleting its customer is refused then (T16). */
  readonly hasHolders?: (n: number) => Promise<boolean>;
  /** Whether tenant n (a panel) is being migrated: deleting it is refused then (T17). */
  readonly migrating?: (n: number) => Promise<boolean>;
  /** The root organization's name when it is created (first open). */
  readonly rootName?: string;
  /** Organization and system ids; default random UUIDs. */
  readonly newId?: () => string;
  /**
   * Records kept about a tenant elsewhere (a system's cloud-node tokens, status and event ids, N2),
   * deleted in the same commit as the tenant: a system id imported again later by another customer
   * must find none of them.
   */
  readonly recordsOfTenant?: (tenant: TenantRow, registry: TenantRegistry) => readonly RegistryChange[];
}

/** The record kind of permissions (identity/records.ts KIND.permission: identity builds on this file). */
const PERMISSION_KIND = "permission";

/** A stored permission (identity/records.ts PermissionRecord) as its events describe it, on `org`. */
function permissionSubject(value: unknown, org: OrgSubject): PermissionSubject {
  const p = value as { id: string; email: string; name: string; role: string; userId: string | null };
  return {
    id: p.id,
    email: p.email,
    name: p.name,
    role: p.role,
    userId: p.userId,
    ou: org.id,
    ancestors: org.ancestors,
    systemId: org.systemId,
  };
}

const notFound = (param: string, what: string, id: string) =>
  new HttpError(404, `Unknown ${what}.`, [{ path: param, message: `Unknown ${what} "${id}".` }]);

/** The system summary kept in a system tenant's `info`: its cloud nodes (tenantSummary.ts keeps it current). */
function nodeSummary(snapshot: unknown): { nodes: unknown[] } {
  const nodes = (snapshot as { cloudNodes?: Record<string, unknown>[] }).cloudNodes ?? [];
  return {
    nodes: nodes.map((n) => ({
      id: n.id,
      name: n.name,
      serialNumber: n.serialNumber ?? null,
      created: n.created ?? null,
    })),
  };
}

/** The whole registry of one service database, held in memory. */
export class TenantRegistry {
  readonly #store: RegistryStore;
  readonly #options: RegistryOptions;
  readonly #now: () => number;
  readonly #newId: () => string;
  #rev = 0;
  #orgs = new Map<string, OrganizationRow>();
  #children = new Map<string, Set<string>>();
  #tenants = new Map<number, TenantRow>();
  #byKey = new Map<string, TenantRow>();
  /** Tenant numbers by organization: shapes ask for each organization's tenants (lists of thousands). */
  #byOrg = new Map<string, Set<number>>();
  #tokens = new Map<string, PanelTokenRow>();
  /** Identity records by kind, then id. */
  #records = new Map<string, Map<string, RecordRow>>();
  #root: OrganizationRow | undefined;
  /** Tenant numbers are never reused while the process runs (a loaded tenant may be evicting). */
  #lastN = 0;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(store: RegistryStore, options: RegistryOptions) {
    this.#store = store;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#newId = options.newId ?? randomUUID;
  }

  /** Reads the registry; creates the root organization when it has none (a new database). */
  static async open(store: RegistryStore, options: RegistryOptions = {}): Promise<TenantRegistry> {
    const r = new TenantRegistry(store, options);
    r.#load(await store.load());
    if (r.#root === undefined) {
      const root: OrganizationRow = {
        id: r.#newId(),
        parent: null,
        name: options.rootName ?? "Root",
        type: "root",
        fields: { ...DEFAULT_FLAGS },
        created: r.#time(),
      };
      try {
        await r.#commit([{ op: "putOrg", row: root }], []);
      } catch (e) {
        // Processes starting at once on a new shared database: one root (a unique index), the first one's (T56).
        if (!(e instanceof HttpError && e.status === 409)) throw e;
        r.#load(await store.load());
        if (r.#root === undefined) throw e;
      }
    }
    return r;
  }

  get rev(): number {
    return this.#rev;
  }
  root(): OrganizationRow {
    return this.#root!;
  }
  organization(id: string): OrganizationRow | undefined {
    return this.#orgs.get(id);
  }
  organizationCount(): number {
    return this.#orgs.size;
  }
  children(id: string): OrganizationRow[] {
    return [...(this.#children.get(id) ?? [])].map((c) => this.#orgs.get(c)!);
  }
  /** An organization's ancestors, root first ([] for the root and an unknown id). */
  ancestors(id: string): string[] {
    const out: string[] = [];
    let at = this.#orgs.get(id)?.parent ?? null;
    while (at !== null) {
      out.unshift(at);
      at = this.#orgs.get(at)?.parent ?? null;
    }
    return out;
  }
  tenant(n: number): TenantRow | undefined {
    return this.#tenants.get(n);
  }
  tenantByKey(key: string): TenantRow | undefined {
    return this.#byKey.get(key);
  }
  tenantsOf(orgId: string): TenantRow[] {
    return [...(this.#byOrg.get(orgId) ?? [])].map((n) => this.#tenants.get(n)!);
  }
  tenants(): TenantRow[] {
    return [...this.#tenants.values()];
  }
  panelToken(digest: string): PanelTokenRow | undefined {
    return this.#tokens.get(digest);
  }

  /** The record (`kind`, `id`), or undefined. */
  record(kind: string, id: string): RecordRow | undefined {
    return this.#records.get(kind)?.get(id);
  }

  /** Every record of a kind (no particular order). */
  records(kind: string): IterableIterator<RecordRow> {
    return (this.#records.get(kind) ?? new Map<string, RecordRow>()).values();
  }

  /**
   * Runs `build` after every change before it (and, on a shared store, after re-reading what other
   * processes committed), then commits its changes with its events' outbox rows and applies them in
   * memory. `build` sees the records as they are; `ifVersion` on a change guards against another
   * process in between. @throws StaleRecord when an `ifVersion` no longer holds (nothing committed).
   */
  updateRecords<T>(build: () => RecordsUpdate<T>): Promise<T> {
    return this.#serial(async () => {
      const { changes, events = [], outbox = [], result } = build();
      if (changes.length > 0) await this.#commit(changes, events, {}, outbox);
      return result;
    });
  }

  /** What the events of a change by `by` share (client info, user, time). */
  eventContext(by: Caller): EventContext {
    return this.#context(by, this.#time());
  }

  /** Re-reads the registry when another process committed since (shared stores; a no-op otherwise). */
  async refresh(): Promise<void> {
    const changed = await this.#store.changedSince?.(this.#rev);
    // Two re-reads may answer out of order: an older state never replaces a newer one.
    if (changed !== null && changed !== undefined && changed.rev > this.#rev) this.#load(changed);
  }

  /**
   * Creates a child of `parentId` (T13): a dealer under the root, a customer under a dealer (a
   * multi-site one with its tenant and an empty or imported 2.0 system, in the same commit).
   * @throws HttpError 400 (body), 404 (`dealer_id`), 409 (a customer's child, name taken, system id taken).
   */
  createOrganization(
    parentId: string,
    body: unknown,
    by: Caller,
    generation: Generation = "2.0",
  ): Promise<OrganizationRow> {
    return this.#serial(async () => {
      const parent = this.#orgs.get(parentId);
      if (parent === undefined) throw notFound("dealer_id", "organization id", parentId);
      const value = parseBody(generation === "2.0" ? "customerCreate20" : "customerCreate10", body);
      const type = childType(parent, generation, "type" in value ? value.type : undefined);
      if (value.import !== undefined && type !== "multi-site")
        throw new HttpError(400, "The request body is invalid.", [
          { path: "body.import", message: "Only a multi-site customer is created with a system to import." },
        ]);
      this.#refuseTakenName(parentId, value.name);
      const time = this.#time();
      const row: OrganizationRow = {
        id: this.#newId(),
        parent: parentId,
        name: value.name,
        type,
        fields: newFlags(value),
        created: time,
      };
      const changes: RegistryChange[] = [{ op: "putOrg", row }];
      let systemId: string | null = null;
      if (type === "multi-site") {
        const made = this.#newSystem(row.id, value.import, time);
        systemId = made.key;
        changes.push(...made.changes);
      }
      const events = organizationEvents("created", this.#subject(row, systemId), this.#context(by, time));
      await this.#commit(changes, events, { key: "body.import.systemId" });
      return row;
    });
  }

  /**
   * Renames a customer (or dealer) of `parentId` and sets the flags the body gives (T12).
   * @throws HttpError 400, 404 (`dealer_id`, `customer_id`), 409 (name taken).
   */
  updateOrganization(parentId: string, id: string, body: unknown, by: Caller): Promise<void> {
    return this.#serial(async () => {
      const org = this.#childOf(parentId, id);
      const value = parseBody("customerUpdate", body);
      this.#refuseTakenName(parentId, value.name, id);
      const row: OrganizationRow = { ...org, name: value.name, fields: updatedFlags(flagsOf(org), value) };
      const given: Record<string, boolean> = {};
      for (const k of ["useBluetoothCredentials", "useTouchMobileApp", "allowCredentialResets"] as const)
        if (value[k] !== undefined) given[k] = value[k];
      const time = this.#time();
      const system = this.tenantsOf(id).find((t) => t.kind === "system");
      const events = organizationEvents(
        "updated",
        this.#subject(row, system?.key ?? null),
        this.#context(by, time),
        given,
      );
      await this.#commit([{ op: "putOrg", row }], events);
    });
  }

  /**
   * Deletes a child of `parentId` and its system (T16).
   * @throws HttpError 404 (`dealer_id`, `customer_id`), 409 (children, holders, panels, a migration).
   */
  deleteOrganization(parentId: string, id: string, by: Caller): Promise<void> {
    return this.#serial(async () => {
      const org = this.#childOf(parentId, id);
      const tenants = this.tenantsOf(id);
      const system = tenants.find((t) => t.kind === "system" && t.state === "active");
      const holders = system !== undefined && (await this.#options.hasHolders?.(system.n)) === true;
      const issues = deleteConflicts({ children: this.children(id), tenants, holders });
      if (issues.length > 0) throw new HttpError(409, "The organization cannot be deleted.", issues);
      const time = this.#time();
      const subject = this.#subject(org, system?.key ?? null);
      const context = this.#context(by, time);
      // Its permissions go with it, each with its permission.deleted (I48).
      const permissions = [...this.records(PERMISSION_KIND)].filter(
        (r) => (r.value as { organization?: unknown }).organization === id,
      );
      const events = [
        ...organizationEvents("deleted", subject, context),
        ...permissions.flatMap((r) => permissionEvents("deleted", permissionSubject(r.value, subject), context)),
      ];
      await this.#commit(
        [
          ...tenants.map((t) => ({ op: "deleteTenant" as const, n: t.n })),
          ...permissions.map((r) => ({ op: "deleteRecord" as const, kind: PERMISSION_KIND, id: r.id })),
          { op: "deleteOrg", id },
        ],
        events,
      );
    });
  }

  /**
   * Registers a panel (a 1.0 tenant with an empty or imported panel) with a legacy customer (T15).
   * @throws HttpError 400, 404 (`organization_id`), 409 (not a legacy customer, serial number taken).
   */
  registerPanel(orgId: string, body: unknown, by: Caller): Promise<TenantRow> {
    return this.#serial(async () => {
      const org = this.#orgs.get(orgId);
      if (org === undefined) throw notFound("organization_id", "organization id", orgId);
      const value = parseBody("panelCreate", body);
      if (org.type !== "legacy")
        throw new HttpError(409, "Panels are registered with a legacy customer only.", [
          {
            path: "organization_id",
            message: `"${orgId}" is a ${org.type === "multi-site" ? "multi-site customer" : org.type}, not a legacy customer.`,
          },
        ]);
      this.#refuseTakenKey(value.id, "body.id");
      if (value.import !== undefined && value.import.serialNumber !== value.id)
        throw new HttpError(400, "The request body is invalid.", [
          { path: "body.import.serialNumber", message: `Must be the panel's serial number "${value.id}".` },
        ]);
      const time = this.#time();
      const snapshot = this.#snapshot(
        "panel",
        value.import ?? { format: "rsop-panel/1", serialNumber: value.id, name: value.name },
      );
      const info: PanelInfo = {
        name: value.name,
        allowCredentialResets: value.allowCredentialResets ?? flagsOf(org).allowCredentialResets,
        credentialResetsPerMonth: value.credentialResetsPerMonth ?? 1,
        reportBillingPolicy: value.reportBillingPolicy ?? "basic",
      };
      const n = this.#nextN();
      const row: TenantRow = {
        n,
        kind: "panel",
        key: value.id,
        organization: orgId,
        state: "active",
        info,
        created: time,
      };
      const subject = { serialNumber: value.id, name: value.name, ou: orgId, ancestors: this.ancestors(orgId) };
      await this.#commit(
        [
          { op: "putTenant", row },
          { op: "initTenant", n, kind: "panel", snapshot, time },
        ],
        [panelEvent("created", subject, this.#context(by, time))],
        { key: "body.id" },
      );
      return row;
    });
  }

  /** Renames a registered panel and sets the fields the body gives. @throws HttpError 400, 404 (`panel_id`). */
  updatePanel(serial: string, body: unknown, by: Caller): Promise<void> {
    return this.#serial(async () => {
      const tenant = this.#panel(serial);
      const value = parseBody("panelUpdate", body);
      const current = panelInfoOf(tenant);
      const info: PanelInfo = {
        name: value.name,
        allowCredentialResets: value.allowCredentialResets ?? current.allowCredentialResets,
        credentialResetsPerMonth: value.credentialResetsPerMonth ?? current.credentialResetsPerMonth,
        reportBillingPolicy: value.reportBillingPolicy ?? current.reportBillingPolicy,
      };
      const time = this.#time();
      const subject = {
        serialNumber: serial,
        name: value.name,
        ou: tenant.organization,
        ancestors: this.ancestors(tenant.organization),
      };
      await this.#commit(
        [{ op: "putTenant", row: { ...tenant, info } }],
        [panelEvent("updated", subject, this.#context(by, time))],
      );
    });
  }

  /** Deletes a registered panel and everything stored under it (T17). @throws HttpError 404, 409 (a migration of it). */
  deletePanel(serial: string, by: Caller): Promise<void> {
    return this.#serial(async () => {
      const tenant = this.#panel(serial);
      if ((await this.#options.migrating?.(tenant.n)) === true)
        throw new HttpError(409, "The panel is being migrated.", [
          { path: "panel_id", message: `A migration of "${serial}" is in progress: complete or roll it back first.` },
        ]);
      const time = this.#time();
      const name = panelInfoOf(tenant).name;
      const subject = {
        serialNumber: serial,
        name,
        ou: tenant.organization,
        ancestors: this.ancestors(tenant.organization),
      };
      await this.#commit(
        [{ op: "deleteTenant", n: tenant.n }],
        [panelEvent("deleted", subject, this.#context(by, time))],
      );
    });
  }

  /** A new panel token for a registered panel (only its digest is stored). @throws HttpError 404. */
  createPanelToken(serial: string, by: Caller): Promise<string> {
    return this.#serial(async () => {
      const tenant = this.#panel(serial);
      const token = randomBytes(24).toString("base64url");
      const digest = createHash("sha256").update(token, "utf8").digest("hex");
      await this.#commit(
        [{ op: "putPanelToken", row: { digest, tenant: tenant.n, role: by.grant.role, created: this.#time() } }],
        [],
      );
      return token;
    });
  }

  /** Replaces a tenant's `info` (a 2.0 system's cloud-node summary). */
  setTenantInfo(n: number, info: unknown): Promise<void> {
    return this.#serial(async () => {
      const tenant = this.#tenants.get(n);
      if (tenant === undefined) throw new Error(`no tenant ${n}`);
      await this.#commit([{ op: "putTenant", row: { ...tenant, info } }], []);
    });
  }

  /**
   * The customer a migration of panel `serial` moves into (T71): a multi-site child of `dealerId`
   * with the id the migration chose, made without a system (CREATE_SYSTEM stages one). When that id
   * exists already (a restart, a re-initiate) it is the one answered, `created` false. Its name is
   * `name`, or "<name> (<serial>)" when a sibling has that name.
   */
  migrationCustomer(
    dealerId: string,
    id: string,
    name: string,
    serial: string,
    by: Caller,
  ): Promise<{ row: OrganizationRow; created: boolean }> {
    return this.#serial(async () => {
      const had = this.#orgs.get(id);
      if (had !== undefined) return { row: had, created: false };
      if (!this.#orgs.has(dealerId)) throw new Error(`no organization ${dealerId}`);
      const free = nameTaken(this.children(dealerId), name) === null;
      const time = this.#time();
      const row: OrganizationRow = {
        id,
        parent: dealerId,
        name: free ? name : `${name} (${serial})`,
        type: "multi-site",
        fields: { ...DEFAULT_FLAGS },
        created: time,
      };
      const events = organizationEvents("created", this.#subject(row, null), this.#context(by, time));
      await this.#commit([{ op: "putOrg", row }], events);
      return { row, created: true };
    });
  }

  /**
   * A migration's staged 2.0 system for customer `orgId` (T72): its tenant row, state `staged`,
   * without a snapshot yet (importStaged stores it). The staged system `orgId` has already, if any.
   */
  stageSystem(orgId: string, key: string): Promise<TenantRow> {
    return this.#serial(async () => {
      const had = this.tenantsOf(orgId).find((t) => t.kind === "system" && t.state === "staged");
      if (had !== undefined) return had;
      this.#refuseTakenKey(key, "systemId");
      const row: TenantRow = {
        n: this.#nextN(),
        kind: "system",
        key,
        organization: orgId,
        state: "staged",
        info: { nodes: [] },
        created: this.#time(),
      };
      await this.#commit([{ op: "putTenant", row }], []);
      return row;
    });
  }

  /** Stores a staged system's first snapshot, the migrated panel (T72). */
  importStaged(n: number, snapshot: unknown): Promise<void> {
    return this.#serial(async () => {
      const tenant = this.#tenants.get(n);
      if (tenant === undefined || tenant.state !== "staged") throw new Error(`no staged tenant ${n}`);
      const live = this.#snapshot("system", snapshot);
      const time = this.#time();
      await this.#commit(
        [
          { op: "putTenant", row: { ...tenant, info: nodeSummary(live) } },
          { op: "initTenant", n, kind: "system", snapshot: live, time },
        ],
        [],
      );
    });
  }

  /**
   * Completes a migration (T74): in one commit the staged system becomes active and the panel, with
   * everything stored under it, is deleted from its legacy organization (`panel.deleted`).
   */
  completeMigration(serial: string, systemN: number, by: Caller): Promise<void> {
    return this.#serial(async () => {
      const panel = this.#panel(serial);
      const system = this.#tenants.get(systemN);
      if (system === undefined || system.state !== "staged") throw new Error(`no staged tenant ${systemN}`);
      const time = this.#time();
      const subject = {
        serialNumber: serial,
        name: panelInfoOf(panel).name,
        ou: panel.organization,
        ancestors: this.ancestors(panel.organization),
      };
      await this.#commit(
        [
          { op: "putTenant", row: { ...system, state: "active" } },
          { op: "deleteTenant", n: panel.n },
        ],
        [panelEvent("deleted", subject, this.#context(by, time))],
      );
    });
  }

  /**
   * Undoes what a migration made (T75): its staged system, and its customer when given
   * (`organization.deleted`); either may be gone already.
   */
  removeMigrated(systemN: number | null, customerId: string | null, by: Caller): Promise<void> {
    return this.#serial(async () => {
      const system = systemN === null ? undefined : this.#tenants.get(systemN);
      const changes: RegistryChange[] = [];
      if (system !== undefined && system.state === "staged") changes.push({ op: "deleteTenant", n: system.n });
      const org = customerId === null ? undefined : this.#orgs.get(customerId);
      let events: OrgEvent[] = [];
      // A customer that gained children or another system since is kept.
      const others = org === undefined ? [] : this.tenantsOf(org.id).filter((t) => t.n !== system?.n);
      if (org !== undefined && this.children(org.id).length === 0 && others.length === 0) {
        changes.push({ op: "deleteOrg", id: org.id });
        events = organizationEvents("deleted", this.#subject(org, null), this.#context(by, this.#time()));
      }
      if (changes.length > 0) await this.#commit(changes, events);
    });
  }

  #time(): string {
    return new Date(this.#now()).toISOString();
  }

  #serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(async () => {
      // Shared stores: what another process committed is read before checking against it.
      await this.refresh();
      return run();
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  #childOf(parentId: string, id: string): OrganizationRow {
    if (!this.#orgs.has(parentId)) throw notFound("dealer_id", "organization id", parentId);
    const org = this.#orgs.get(id);
    if (org === undefined || org.parent !== parentId)
      throw new HttpError(404, "Unknown customer id.", [
        { path: "customer_id", message: `"${id}" is not a child of "${parentId}".` },
      ]);
    return org;
  }

  #panel(serial: string): TenantRow {
    const t = this.#byKey.get(serial);
    if (t === undefined || t.kind !== "panel") throw notFound("panel_id", "panel", serial);
    return t;
  }

  #refuseTakenName(parentId: string, name: string, exceptId?: string): void {
    const taken = nameTaken(this.children(parentId), name, exceptId);
    if (taken !== null) throw new HttpError(409, "The name is taken.", [taken]);
  }

  #refuseTakenKey(key: string, path: string): void {
    if (this.#byKey.has(key))
      throw new HttpError(409, "The id is taken.", [
        { path, message: `A system or panel already has the id "${key}".` },
      ]);
  }

  #nextN(): number {
    for (const n of this.#tenants.keys()) if (n > this.#lastN) this.#lastN = n;
    return ++this.#lastN;
  }

  /** The changes that make a new 2.0 system for a customer: its tenant and first snapshot. */
  #newSystem(orgId: string, imported: Record<string, unknown> | undefined, time: string) {
    const key = imported === undefined ? this.#newId() : imported.systemId;
    if (typeof key === "string" && RESERVED_SYSTEM_IDS.has(key))
      throw new HttpError(400, "The request body is invalid.", [
        { path: "body.import.systemId", message: `"${key}" is a path of the accounts host: use another system id.` },
      ]);
    if (typeof key === "string") this.#refuseTakenKey(key, "body.import.systemId");
    const snapshot = this.#snapshot("system", imported ?? { format: "rsop-system/1", systemId: key });
    const n = this.#nextN();
    const row: TenantRow = {
      n,
      kind: "system",
      key: key as string,
      organization: orgId,
      state: "active",
      info: nodeSummary(snapshot),
      created: time,
    };
    const changes: RegistryChange[] = [
      { op: "putTenant", row },
      { op: "initTenant", n, kind: "system", snapshot, time },
    ];
    return { key: key as string, changes };
  }

  /** A tenant's first snapshot as a live system holds it. @throws HttpError 400 at `body.import…` when invalid. */
  #snapshot(kind: StoredKind, json: unknown): unknown {
    const made = createTarget(kind, json, this.#now);
    if (!("kind" in made))
      throw new HttpError(400, "The snapshot to import is invalid.", toHttpIssues(made, ["body", "import"]));
    return made.live.snapshot;
  }

  #subject(org: OrganizationRow, systemId: string | null) {
    const flags = flagsOf(org);
    return {
      id: org.id,
      name: org.name,
      parent: org.parent,
      ancestors: org.parent === null ? [] : [...this.ancestors(org.parent), org.parent],
      systemId,
      useBluetoothCredentials: flags.useBluetoothCredentials,
      useTouchMobileApp: flags.useTouchMobileApp,
    };
  }

  #context(by: Caller, time: string): EventContext {
    const u = by.grant.user;
    return {
      clientInfo: { ipAddress: by.clientInfo.ipAddress, userAgent: by.clientInfo.userAgent },
      user:
        u === undefined
          ? { firstName: null, id: null, lastName: null }
          : { firstName: u.firstName, id: u.id, lastName: u.lastName },
      occurredAt: time,
      newId: randomUUID,
    };
  }

  /** Commits the changes with their events' outbox rows, then applies them in memory. A unique key broken: 409. */
  async #commit(
    asked: readonly RegistryChange[],
    events: readonly OrgEvent[],
    paths: { readonly name?: string; readonly key?: string } = {},
    extra: readonly OutboxEntry[] = [],
  ): Promise<void> {
    const outbox = [...(events.length > 0 ? (this.#options.outbox?.([...events]) ?? []) : []), ...extra];
    const forget = this.#options.recordsOfTenant;
    const changes =
      forget === undefined
        ? asked
        : asked.flatMap((c) => {
            const t = c.op === "deleteTenant" ? this.#tenants.get(c.n) : undefined;
            return t === undefined ? [c] : [...forget(t, this), c];
          });
    let rev: number;
    try {
      rev = await this.#store.commit(changes, outbox);
    } catch (e) {
      if (!(e instanceof RegistryConflict)) throw e;
      if (e.what === "stale") throw new StaleRecord(e.message);
      // Another process took the name or key between our check and the commit (shared stores).
      const path = e.what === "name" ? (paths.name ?? "body.name") : (paths.key ?? "body.id");
      throw new HttpError(409, "Conflict.", [{ path, message: e.message }]);
    }
    for (const c of changes) this.#apply(c);
    // Another process committed between our re-read and this commit (a gap in revs): one below, so
    // that the next refresh re-reads what it committed (T9).
    this.#rev = rev === this.#rev + 1 ? rev : rev - 1;
    if (outbox.length > 0) this.#options.stored?.(outbox);
  }

  #apply(c: RegistryChange): void {
    switch (c.op) {
      case "putOrg": {
        const old = this.#orgs.get(c.row.id);
        if (old?.parent != null) this.#children.get(old.parent)?.delete(old.id);
        this.#orgs.set(c.row.id, c.row);
        if (c.row.parent === null) this.#root = c.row;
        else {
          let set = this.#children.get(c.row.parent);
          if (set === undefined) this.#children.set(c.row.parent, (set = new Set()));
          set.add(c.row.id);
        }
        return;
      }
      case "deleteOrg": {
        const old = this.#orgs.get(c.id);
        if (old?.parent != null) this.#children.get(old.parent)?.delete(c.id);
        this.#orgs.delete(c.id);
        this.#children.delete(c.id);
        return;
      }
      case "putTenant": {
        this.#forget(c.row.n);
        this.#tenants.set(c.row.n, c.row);
        this.#byKey.set(c.row.key, c.row);
        let set = this.#byOrg.get(c.row.organization);
        if (set === undefined) this.#byOrg.set(c.row.organization, (set = new Set()));
        set.add(c.row.n);
        return;
      }
      case "deleteTenant": {
        this.#forget(c.n);
        this.#tenants.delete(c.n);
        for (const [d, t] of this.#tokens) if (t.tenant === c.n) this.#tokens.delete(d);
        return;
      }
      case "putPanelToken":
        this.#tokens.set(c.row.digest, c.row);
        return;
      case "deletePanelTokens":
        for (const [d, t] of this.#tokens) if (t.tenant === c.tenant) this.#tokens.delete(d);
        return;
      case "initTenant":
        return;
      case "putRecord": {
        let byId = this.#records.get(c.kind);
        if (byId === undefined) this.#records.set(c.kind, (byId = new Map()));
        const version = (byId.get(c.id)?.version ?? 0) + 1;
        byId.set(c.id, { kind: c.kind, id: c.id, value: c.value, version });
        return;
      }
      case "deleteRecord":
        this.#records.get(c.kind)?.delete(c.id);
        return;
    }
  }

  /** Removes tenant n from the indexes (its row stays in #tenants). */
  #forget(n: number): void {
    const old = this.#tenants.get(n);
    if (old === undefined) return;
    this.#byKey.delete(old.key);
    this.#byOrg.get(old.organization)?.delete(n);
  }

  #load(state: RegistryState): void {
    this.#orgs = new Map();
    this.#children = new Map();
    this.#tenants = new Map();
    this.#byKey = new Map();
    this.#byOrg = new Map();
    this.#tokens = new Map();
    this.#records = new Map();
    this.#root = undefined;
    for (const row of state.organizations) this.#apply({ op: "putOrg", row });
    for (const row of state.tenants) this.#apply({ op: "putTenant", row });
    for (const row of state.panelTokens) this.#apply({ op: "putPanelToken", row });
    for (const row of state.records ?? []) {
      let byId = this.#records.get(row.kind);
      if (byId === undefined) this.#records.set(row.kind, (byId = new Map()));
      byId.set(row.id, row);
    }
    this.#rev = state.rev;
  }
}
