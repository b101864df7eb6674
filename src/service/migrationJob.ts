// A staged, reversible migration of a 1.0 panel to a 2.0 system, as the accounts API runs it: initiate
// (refused unless the preflight passes) → six tasks, each Pending → Processing → Completed, in order
// → staged (both systems read-only) → complete (the 2.0 system becomes the one served) or roll back
// (the staged system is deleted, the panel writable again). Every step is persisted before the next
// one starts, so a restart resumes the task that was running (tasks are deterministic: running one
// again gives the same result). Semantics: docs/semantics.md M8–M12.
import { randomUUID } from "node:crypto";
import { type LiveSystem, createLiveSystem } from "../live/index.js";
import { formatIssues } from "../model/index.js";
import { type Migration, migratePanel } from "../legacy1/migration/migratePanel.js";
import {
  type Preflight,
  preflightBlocks,
  preflightPanel,
  preflightWarns,
} from "../legacy1/migration/preflightPanel.js";

/** The six tasks of the accounts API, in the order they run. */
export const MIGRATION_TASKS = [
  "EXPORT_LEGACY_DATA",
  "CREATE_CUSTOMER",
  "CREATE_SYSTEM",
  "TRANSFORM_SCHEMA",
  "IMPORT_SYSTEM_DATA",
  "ACTIVATE_SYSTEM",
] as const;
export type MigrationTaskId = (typeof MIGRATION_TASKS)[number];

/** The accounts API shows Pending and Processing; the others are ours (M8). */
export type MigrationStatus = "Pending" | "Processing" | "Staged" | "Completed" | "RolledBack" | "Failed";
export type TaskStatus = "Pending" | "Processing" | "Completed" | "Failed";

export interface MigrationTask {
  taskId: MigrationTaskId;
  status: TaskStatus;
  /** Null until the task starts (the answer omits it then: statusAnswer). */
  startedAt: string | null;
  updatedAt: string | null;
}

/**
 * A migration as it is stored: the accounts API's Migration fields (null where the answer omits a
 * field not known yet: statusAnswer), plus `runId` and `error`, which are kept and never answered.
 */
export interface MigrationRecord {
  /** The panel's serial number: the accounts API's migration id (M8). */
  id: string;
  /**
   * Tells this run from an earlier one of the same panel (rolled back or failed), whose `id` is the
   * same serial number: what a run made is kept under it (tenantMigration.ts). Never answered.
   */
  runId: string;
  name: string;
  /** The 1.0 organization the panel belongs to (MigrationJobOptions.legacyOuId). */
  legacyOuId: string;
  status: MigrationStatus;
  createdAt: string;
  tasks: MigrationTask[];
  /** Where the exported panel can be read back (set by EXPORT_LEGACY_DATA). */
  backupUrl: string | null;
  /** The 2.0 customer the system belongs to (set by CREATE_CUSTOMER). */
  ouId: string | null;
  /** The staged system's id: only once IMPORT_SYSTEM_DATA is Completed (the accounts API). */
  systemId: string | null;
  cloudNodeId: string | null;
  /**
   * Why the migration failed (status Failed): the API's migration has no such field, so it is never
   * answered; it stays in the stored record and the failure is logged (MigrationJobOptions.onFailure).
   */
  error: string | null;
}

/** A task as the status read answers it: the timestamps only once it started (the accounts API). */
export interface MigrationTaskAnswer {
  taskId: MigrationTaskId;
  status: TaskStatus;
  startedAt?: string;
  updatedAt?: string;
}

/** What initiate answers: the accounts API's id, name, legacyOuId, status, createdAt and tasks with status. */
export interface MigrationInitiated {
  id: string;
  name: string;
  legacyOuId: string;
  status: MigrationStatus;
  createdAt: string;
  tasks: { taskId: MigrationTaskId; status: TaskStatus }[];
}

/**
 * What the status read answers: the accounts API's Migration, field for field, in its order; a
 * field whose value does not exist yet is omitted (never null): backupUrl until EXPORT_LEGACY_DATA,
 * ouId until CREATE_CUSTOMER, systemId and cloudNodeId until IMPORT_SYSTEM_DATA has Completed.
 */
export interface MigrationAnswer {
  id: string;
  name: string;
  legacyOuId: string;
  status: MigrationStatus;
  createdAt: string;
  backupUrl?: string;
  ouId?: string;
  systemId?: string;
  cloudNodeId?: string;
  tasks: MigrationTaskAnswer[];
}

/** The answer of initiate (M8). */
export function initiateAnswer(r: MigrationRecord): MigrationInitiated {
  return {
    id: r.id,
    name: r.name,
    legacyOuId: r.legacyOuId,
    status: r.status,
    createdAt: r.createdAt,
    tasks: r.tasks.map((t) => ({ taskId: t.taskId, status: t.status })),
  };
}

/** The answer of the status read (M8): no `runId`, no `error`, no nulls. */
export function statusAnswer(r: MigrationRecord): MigrationAnswer {
  const known = <K extends string>(key: K, value: string | null) =>
    (value === null ? {} : { [key]: value }) as Partial<Record<K, string>>;
  return {
    id: r.id,
    name: r.name,
    legacyOuId: r.legacyOuId,
    status: r.status,
    createdAt: r.createdAt,
    ...known("backupUrl", r.backupUrl),
    ...known("ouId", r.ouId),
    ...known("systemId", r.systemId),
    ...known("cloudNodeId", r.cloudNodeId),
    tasks: r.tasks.map((t) => ({
      taskId: t.taskId,
      status: t.status,
      ...known("startedAt", t.startedAt),
      ...known("updatedAt", t.updatedAt),
    })),
  };
}

/** A task as an earlier version stored it (`type` for taskId). */
type StoredTask = Omit<MigrationTask, "taskId"> & { taskId?: MigrationTaskId; type?: MigrationTaskId };

/** A record as an earlier version stored it (random `id`, the serial in `legacyOuId`, tasks' `type`): today's. */
function fromStored(stored: StoredMigration): StoredMigration {
  const r = structuredClone(stored.record) as Omit<MigrationRecord, "tasks"> & { tasks: StoredTask[] };
  const old = typeof r.runId !== "string";
  const record: MigrationRecord = {
    ...r,
    id: old ? r.legacyOuId : r.id,
    runId: old ? r.id : r.runId,
    tasks: r.tasks.map(({ type, taskId, ...t }) => ({ ...t, taskId: (taskId ?? type)! })),
  };
  return { record, plannedSystemId: stored.plannedSystemId };
}

/** A migration as it is stored: the record, and the system id CREATE_SYSTEM chose (answered only later). */
export interface StoredMigration {
  readonly record: MigrationRecord;
  readonly plannedSystemId: string | null;
}

/** The staged 2.0 system: its snapshot and the id-mapping records. */
export interface StagedSystem {
  readonly systemId: string;
  readonly cloudNodeId: string;
  readonly snapshot: unknown;
  readonly mappings: Migration["mappings"];
}

/** Where a migration keeps its state; every method has stored durably when it resolves. */
export interface MigrationStore {
  saveMigration(migration: StoredMigration): Promise<void>;
  /** The panel as exported (null: remove it). */
  saveBackup(panel: unknown | null): Promise<void>;
  loadBackup(): Promise<unknown | null>;
  /** The staged system (null: remove it). */
  saveStaged(staged: StagedSystem | null): Promise<void>;
  loadStaged(): Promise<StagedSystem | null>;
}

/** A refusal of a migration route: its status, a sentence, and for 409s of initiate the preflight. */
export class MigrationRefusal extends Error {
  override readonly name = "MigrationRefusal";
  constructor(
    readonly status: 404 | 409 | 400,
    message: string,
    readonly preflight?: Preflight,
  ) {
    super(message);
  }
}

/** Options of a migration job. */
export interface MigrationJobOptions {
  readonly store: MigrationStore;
  /** The panel's current snapshot (read when the migration starts; read-only from then on). */
  readonly panel: () => unknown;
  /** The panel's integrations the migration does not carry over (preflight warnings); default none. */
  readonly integrations?: () => readonly string[];
  /** Clock of the stored times; default Date.now. */
  readonly now?: () => number;
  /** Awaited once a task is Processing, before its work (to watch a migration one task at a time); a rejection fails the task. */
  readonly pace?: (task: MigrationTaskId) => Promise<void>;
  /** The path the backup is read from (backupUrl), given the panel id. */
  readonly backupPath?: (panelId: string) => string;
  /**
   * The 1.0 organization the panel belongs to (the record's legacyOuId), given its serial number;
   * default the serial number (a lone panel is its own organization, as its webhook routes say).
   */
  readonly legacyOuId?: (panelId: string) => string;
  /**
   * Told about a failed task: the only place an operator reads why, with the stored record's
   * `error` (the answers have no field for it). Log it.
   */
  readonly onFailure?: (e: unknown, task: MigrationTaskId) => void;
  /**
   * CREATE_CUSTOMER's work: makes (or finds) the 2.0 customer and answers its id (ouId). Run again
   * after a restart, so it must be idempotent. Default: a new id, nothing made.
   */
  readonly createCustomer?: (record: MigrationRecord) => Promise<string>;
  /**
   * CREATE_SYSTEM's work: makes (or finds) the staged system and answers its id. Idempotent, as
   * createCustomer. Default: a new id, nothing made.
   */
  readonly createSystem?: (record: MigrationRecord) => Promise<string>;
}

const turn = () => new Promise<void>((resolveTurn) => setImmediate(resolveTurn));

/**
 * The migration of one panel: at most one at a time (a new one may start after a rollback or a
 * failure). `resume` continues a stored one after a restart.
 */
export class MigrationJob {
  #record: MigrationRecord | null;
  #plannedSystemId: string | null;
  #staged: StagedSystem | null = null;
  #stagedLive: LiveSystem | null = null;
  #running: Promise<void> | null = null;
  readonly #o: MigrationJobOptions;
  readonly #now: () => number;

  constructor(options: MigrationJobOptions, stored: StoredMigration | null) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    const current = stored === null ? null : fromStored(stored);
    this.#record = current?.record ?? null;
    this.#plannedSystemId = current?.plannedSystemId ?? null;
  }

  /** The current (or last) migration, as stored. */
  get record(): MigrationRecord | null {
    return this.#record === null ? null : structuredClone(this.#record);
  }

  /** Whether the panel is read-only now: a migration is running or staged (M9). */
  get panelReadOnly(): boolean {
    const s = this.#record?.status;
    return s === "Pending" || s === "Processing" || s === "Staged";
  }

  /** The staged system's live system (read-only), once IMPORT_SYSTEM_DATA is done and until complete or rollback. */
  get staged(): { readonly system: StagedSystem; readonly live: LiveSystem } | null {
    return this.#staged === null || this.#stagedLive === null ? null : { system: this.#staged, live: this.#stagedLive };
  }

  /** The migration's tasks are running (a promise that settles when they stop). */
  get running(): Promise<void> | null {
    return this.#running;
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }

  async #save(): Promise<void> {
    await this.#o.store.saveMigration({ record: this.#record!, plannedSystemId: this.#plannedSystemId });
  }

  /**
   * Starts a migration of the panel `panelId` names (its serial number).
   * @throws MigrationRefusal 404 (another panel), 409 (one is already running or staged, or completed;
   *   the preflight has errors; it has warnings and `acceptWarnings` is not true).
   */
  async initiate(panelId: string, acceptWarnings: boolean): Promise<MigrationRecord> {
    const panel = this.#o.panel() as { serialNumber?: unknown; name?: unknown };
    if (panelId !== panel.serialNumber)
      throw new MigrationRefusal(
        404,
        `No panel has serial number "${panelId}" here; this server holds panel "${String(panel.serialNumber)}".`,
      );
    const status = this.#record?.status;
    if (status === "Completed")
      throw new MigrationRefusal(409, "This panel has been migrated already (the migration is Completed).");
    if (this.panelReadOnly)
      throw new MigrationRefusal(409, `A migration of this panel is ${status}: complete or roll it back first.`);
    const preflight = preflightPanel(panel, this.#o.integrations?.() ?? []);
    if (preflightBlocks(preflight))
      throw new MigrationRefusal(409, "The preflight check has errors: the migration cannot start.", preflight);
    if (preflightWarns(preflight) && !acceptWarnings)
      throw new MigrationRefusal(
        409,
        "The preflight check has warnings: start the migration with acceptWarnings: true to accept them.",
        preflight,
      );
    const now = this.#iso();
    this.#plannedSystemId = null;
    this.#record = {
      id: panelId,
      runId: randomUUID(),
      name: `Migration of ${typeof panel.name === "string" ? panel.name : panelId}`,
      legacyOuId: this.#o.legacyOuId?.(panelId) ?? panelId,
      status: "Pending",
      createdAt: now,
      tasks: MIGRATION_TASKS.map((taskId) => ({ taskId, status: "Pending", startedAt: null, updatedAt: null })),
      backupUrl: null,
      ouId: null,
      systemId: null,
      cloudNodeId: null,
      error: null,
    };
    await this.#save();
    this.#start();
    return this.record!;
  }

  /** After a restart: loads what is staged, and runs the tasks that had not completed. */
  async resume(): Promise<void> {
    const r = this.#record;
    if (r === null) return;
    if (r.status === "Staged") await this.#loadStaged();
    if (r.status === "Pending" || r.status === "Processing") {
      // A task cut off in the middle runs again from its start.
      for (const t of r.tasks) if (t.status === "Processing") t.status = "Pending";
      if (r.tasks.find((t) => t.taskId === "IMPORT_SYSTEM_DATA")?.status === "Completed") await this.#loadStaged();
      await this.#save();
      this.#start();
    }
  }

  async #loadStaged(): Promise<void> {
    const staged = await this.#o.store.loadStaged();
    if (staged === null) throw new Error("the migration is staged but its staged system is missing from the store");
    this.#stage(staged);
  }

  #stage(staged: StagedSystem): void {
    const r = createLiveSystem(staged.snapshot, { now: this.#now });
    if (!r.ok) throw new Error(`the staged system does not load:\n${formatIssues(r.issues)}`);
    this.#staged = staged;
    this.#stagedLive = r.value;
  }

  #start(): void {
    this.#running = this.#runTasks().finally(() => {
      this.#running = null;
    });
  }

  async #runTasks(): Promise<void> {
    const r = this.#record!;
    let transformed: Migration | null = null;
    for (const task of r.tasks) {
      if (task.status === "Completed") continue;
      await turn();
      if (r.status !== "Pending" && r.status !== "Processing") return; // rolled back meanwhile
      r.status = "Processing";
      task.status = "Processing";
      task.startedAt = this.#iso();
      task.updatedAt = task.startedAt;
      await this.#save();
      try {
        await this.#o.pace?.(task.taskId);
        if (r.status !== "Processing") return; // rolled back while it waited
        transformed = await this.#runTask(task.taskId, transformed);
      } catch (e) {
        task.status = "Failed";
        task.updatedAt = this.#iso();
        await this.#fail(e, task.taskId);
        return;
      }
      task.status = "Completed";
      task.updatedAt = this.#iso();
      await this.#save();
    }
    if (r.status !== "Processing" && r.status !== "Pending") return; // rolled back during the last task
    r.status = "Staged";
    await this.#save();
  }

  /** One task; TRANSFORM_SCHEMA's result is passed on to IMPORT_SYSTEM_DATA (recomputed after a restart). */
  async #runTask(type: MigrationTaskId, transformed: Migration | null): Promise<Migration | null> {
    const r = this.#record!;
    switch (type) {
      case "EXPORT_LEGACY_DATA":
        await this.#o.store.saveBackup(this.#o.panel());
        r.backupUrl = this.#o.backupPath?.(r.id) ?? null;
        return transformed;
      case "CREATE_CUSTOMER":
        r.ouId = this.#o.createCustomer === undefined ? randomUUID() : await this.#o.createCustomer(this.record!);
        return transformed;
      case "CREATE_SYSTEM":
        // Stored with the task's completion; answered as systemId once IMPORT_SYSTEM_DATA is done.
        this.#plannedSystemId =
          this.#o.createSystem === undefined ? randomUUID() : await this.#o.createSystem(this.record!);
        return transformed;
      case "TRANSFORM_SCHEMA":
        return this.#transform();
      case "IMPORT_SYSTEM_DATA": {
        const m = transformed ?? this.#transform();
        const staged: StagedSystem = {
          systemId: this.#systemId(),
          cloudNodeId: m.cloudNodeId,
          snapshot: m.snapshot,
          mappings: m.mappings,
        };
        this.#stage(staged);
        await this.#o.store.saveStaged(staged);
        r.systemId = staged.systemId;
        r.cloudNodeId = staged.cloudNodeId;
        return m;
      }
      case "ACTIVATE_SYSTEM":
        // The staged system is loaded and compiled (IMPORT_SYSTEM_DATA): it answers reads, read-only.
        if (this.#stagedLive === null) await this.#loadStaged();
        return transformed;
    }
  }

  #systemId(): string {
    if (this.#plannedSystemId === null) throw new Error("CREATE_SYSTEM has not run");
    return this.#plannedSystemId;
  }

  #transform(): Migration {
    const m = migratePanel(this.#o.panel(), { systemId: this.#systemId() });
    if (!m.ok) throw new Error(`the panel does not migrate:\n${formatIssues(m.issues)}`);
    return m.value;
  }

  async #fail(e: unknown, task: MigrationTaskId): Promise<void> {
    const r = this.#record!;
    r.status = "Failed";
    r.error = e instanceof Error ? e.message : String(e);
    r.systemId = null;
    this.#staged = null;
    this.#stagedLive = null;
    // Told at once: before a read can answer Failed, and even when storing the failure fails too.
    this.#o.onFailure?.(e, task);
    await this.#o.store.saveStaged(null);
    await this.#save();
  }

  #check(panelId: string): MigrationRecord {
    const r = this.#record;
    if (r === null || r.id !== panelId) throw new MigrationRefusal(404, `No migration of panel "${panelId}".`);
    return r;
  }

  /** The migration of `panelId`. @throws MigrationRefusal 404 */
  status(panelId: string): MigrationRecord {
    this.#check(panelId);
    return this.record!;
  }

  /**
   * Completes a staged migration: the caller makes the staged system the one served (and stores it)
   * through `activate`, then the record says Completed.
   * @throws MigrationRefusal 404, 409 (not staged)
   */
  async complete(panelId: string, activate: (staged: StagedSystem, live: LiveSystem) => Promise<void>): Promise<void> {
    const r = this.#check(panelId);
    if (r.status !== "Staged" || this.#staged === null || this.#stagedLive === null)
      throw new MigrationRefusal(
        409,
        `Only a staged migration can be completed; this one is ${r.status}${r.status === "Pending" || r.status === "Processing" ? ": wait until every task is Completed" : ""}.`,
      );
    await activate(this.#staged, this.#stagedLive);
    // The staged system is now the one served: no longer staged.
    this.#staged = null;
    this.#stagedLive = null;
    r.status = "Completed";
    await this.#save();
  }

  /**
   * Rolls back a migration that is running or staged: the staged system is deleted, the panel is
   * writable again.
   * @throws MigrationRefusal 404, 409 (completed, rolled back or failed already)
   */
  async rollback(panelId: string): Promise<void> {
    const r = this.#check(panelId);
    if (!this.panelReadOnly)
      throw new MigrationRefusal(
        409,
        `A ${r.status} migration cannot be rolled back${r.error === null ? "" : ` (it failed: ${r.error})`}.`,
      );
    r.status = "RolledBack";
    await this.#running; // a task in progress finishes (then the tasks stop)
    r.status = "RolledBack";
    r.systemId = null;
    this.#staged = null;
    this.#stagedLive = null;
    await this.#o.store.saveStaged(null);
    await this.#save();
  }
}
