// The migration routes of `rsop serve --data` (the accounts API's migration from 1.0 to 2.0), served at the
// root of the same server in front of the data app: preflight, initiate, status, complete, rollback,
// the exported panel (backupUrl), and the id mappings under the 2.0 system. While a migration runs
// or is staged the panel is read-only (writes 409) and the staged system answers reads under
// `/{system_id}` (writes 409); `complete` makes the 2.0 system the one this server serves and
// stores (the 1.0 routes are gone), `rollback` deletes the staged system. Semantics M8–M12.
import type { Hono } from "hono";
import type { LiveSystem } from "../../live/index.js";
import {
  MigrationJob,
  MigrationRefusal,
  type MigrationStore,
  type StagedSystem,
  type StoredMigration,
  initiateAnswer,
  statusAnswer,
} from "../../service/migrationJob.js";
import { type Preflight, preflightPanel, preflightResponse } from "../../legacy1/migration/preflightPanel.js";
import { type DurableSystem, openDurableSystem } from "../../service/store/durableSystem.js";
import type { Store } from "../../service/store/store.js";
import { type Authorize, authenticate } from "./authenticate.js";
import { HttpError, errorResponse, jsonResponse } from "../../service/httpError.js";
import { readJsonBody } from "./readJsonBody.js";
import { refuseOtherQuery } from "./parseQuery.js";

const KEY_MIGRATION = "migration";
const KEY_BACKUP = "migration.backup";
const KEY_STAGED = "migration.staged";
/** The id mappings of a completed migration, kept for `GET /{system_id}/id-mapping/{cloud_node_id}`. */
const KEY_MAPPINGS = "migration.mappings";

/** The types of mapping records a `type` filter may name (the accounts API's id mapping). */
const MAPPING_TYPES = [
  "cardFormat",
  "connection",
  "credential",
  "device",
  "floorGroup",
  "group",
  "holder",
  "map",
  "partition",
  "report",
  "rule",
];

/** Options of createMigrationFront. */
export interface MigrationFrontOptions {
  /** The store the served system is kept in; it must support getValue, setValue and replaceSystem. */
  readonly store: Store;
  /** The durable system served now. */
  readonly durable: DurableSystem;
  /** Makes the data app of a durable system (the same options as the server's). */
  readonly makeApp: (durable: DurableSystem) => Promise<Hono>;
  /** Whether a bearer token may use the migration routes (admin and integrator tokens); undefined with insecureNoAuth. */
  readonly authorize?: Authorize;
  readonly basePath: string;
  readonly maxBodyBytes: number;
  readonly indent: number;
  readonly now?: () => number;
  /** See MigrationJobOptions.pace. */
  readonly pace?: (task: string) => Promise<void>;
  readonly log: (line: string) => void;
  /** Options of the durable system opened when a migration completes. */
  readonly reopen?: Parameters<typeof openDurableSystem>[1];
  /** The panel's integrations a migration does not carry over (its webhook subscriptions): preflight warnings. */
  readonly integrations?: () => readonly string[];
  /** The 1.0 organization the panel belongs to (the migration's legacyOuId); default its serial number. */
  readonly legacyOuId?: string;
  /** Told of the system a completed migration serves, before its app is made (the server opens its webhooks). */
  readonly onCompleted?: (next: DurableSystem) => Promise<void>;
}

/** The front of a `--data` server: migration routes, then the served system's app. */
export interface MigrationFront {
  fetch(request: Request): Promise<Response>;
  /** The durable system served now (the 2.0 system once a migration completed). */
  current(): DurableSystem;
  readonly job: MigrationJob;
}

async function jsonValue<T>(store: Store, key: string): Promise<T | null> {
  const text = await store.getValue!(key);
  return text === null ? null : (JSON.parse(text) as T);
}

function migrationStore(store: Store): MigrationStore {
  const put = (key: string, value: unknown) => store.setValue!(key, value === null ? null : JSON.stringify(value));
  return {
    saveMigration: (m) => put(KEY_MIGRATION, m),
    saveBackup: (panel) => put(KEY_BACKUP, panel),
    loadBackup: () => jsonValue(store, KEY_BACKUP),
    saveStaged: (staged) => put(KEY_STAGED, staged),
    loadStaged: () => jsonValue<StagedSystem>(store, KEY_STAGED),
  };
}

/** The preflight's findings as issues of the one error shape (a refused initiate). */
function preflightIssues(p: Preflight): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  const list = (prefix: string, section: Record<string, unknown>, what: string) => {
    for (const [member, value] of Object.entries(section)) {
      const path = `preflight.${prefix}.${member}`;
      if (value === true) out.push({ path, message: `${what}: ${member}.` });
      else if (Array.isArray(value))
        value
          .slice(0, 20)
          .forEach((v, i) =>
            out.push({ path: `${path}[${i}]`, message: `${what}: ${JSON.stringify(v).slice(0, 300)}` }),
          );
      else if (typeof value === "string") out.push({ path, message: `${what}: ${value}` });
    }
  };
  list("errors", p.errors, "Blocks the migration");
  list("extensions.errors", p.extensions.errors, "Blocks the migration");
  list("warnings", p.warnings, "Warning");
  list("extensions.warnings", p.extensions.warnings, "Warning");
  return out;
}

/**
 * The stored migration; one that says Staged while the store already serves the 2.0 system was
 * completed by a process that stopped before it could say so (M11): it is Completed.
 */
async function completedIfServed(store: Store, served: DurableSystem): Promise<StoredMigration | null> {
  const stored = await jsonValue<StoredMigration>(store, KEY_MIGRATION);
  if (stored === null || stored.record.status !== "Staged" || served.kind !== "system") return stored;
  const fixed: StoredMigration = { ...stored, record: { ...stored.record, status: "Completed" } };
  await store.setValue!(KEY_MIGRATION, JSON.stringify(fixed));
  return fixed;
}

/** The panel a completed migration moved out of a store, or null: the serial number and the system it became. */
export interface MigratedPanel {
  readonly serialNumber: string;
  readonly systemId: string | null;
}

/**
 * Whether `store` holds the 2.0 system a migration of its 1.0 panel made: its record says Completed
 * (or Staged, completed by a process that stopped before saying so: completedIfServed). A restart
 * with the `--panel` that seeded the store serves that system (M11).
 */
export async function migratedPanel(store: Store): Promise<MigratedPanel | null> {
  if (store.getValue === undefined) return null;
  const stored = await jsonValue<StoredMigration>(store, KEY_MIGRATION);
  const r = stored?.record as (StoredMigration["record"] & { legacyOuId?: string }) | undefined;
  if (r === undefined || (r.status !== "Completed" && r.status !== "Staged")) return null;
  // An earlier version kept the serial number in legacyOuId, and a random id in id (migrationJob.ts fromStored).
  const serialNumber = typeof r.runId === "string" ? r.id : (r.legacyOuId ?? r.id);
  return { serialNumber, systemId: r.systemId ?? stored?.plannedSystemId ?? null };
}

const STAGED_READ_ONLY = "The staged 2.0 system is read-only until its migration is completed.";

/**
 * A read-only durable system over a staged live system: reads answer, writes are 409, and so is
 * generating or deleting a report (a preview, which stores nothing, answers); it has no reports yet.
 */
function stagedDurable(live: LiveSystem, store: Store): DurableSystem {
  const readOnly = () => Promise.reject(new HttpError(409, STAGED_READ_ONLY));
  const reports: Store = {
    ...store,
    listReports: async () => [],
    reportRecords: async () => null,
    putReport: readOnly,
    deleteReport: readOnly,
  };
  return {
    kind: "system",
    target: { kind: "system", live },
    store: reports,
    startedFrom: { how: "imported" },
    seq: () => 0,
    write: () => Promise.reject(new HttpError(409, STAGED_READ_ONLY)),
    close: async () => undefined,
  };
}

/** The routes the migration front declares on (the front itself, or under the base path). */
type MigrationApi = ReturnType<Hono["basePath"]>;

/** What the migration routes share; `complete` replaces the served system and its app. */
interface FrontState {
  readonly options: MigrationFrontOptions;
  readonly job: MigrationJob;
  readonly kept: MigrationStore;
  /** The durable system served now (a box the job reads too). */
  readonly served: { current: DurableSystem };
  /** The served system's app. */
  mainApp: Hono;
  /** The app of the staged system, made on its first read (null: none yet, or no longer). */
  stagedApp: { live: LiveSystem; app: Hono } | null;
}

/** The served panel's snapshot (null once the 2.0 system is served). */
function panelOf(served: { readonly current: DurableSystem }) {
  return served.current.target.kind === "panel" ? served.current.target.live.snapshot : null;
}

const panelIdOf = (raw: string) => decodeURIComponent(raw);

/** Authenticates, then refuses a query parameter the route does not take (HS4). */
async function allowed(state: FrontState, request: Request, query: readonly string[] = []): Promise<void> {
  if (state.options.authorize !== undefined) await authenticate(request, state.options.authorize, "migration");
  refuseOtherQuery(new URL(request.url), query);
}

/** The panel's app answers writes 409 while a migration runs or is staged (M9). */
function guardedPanel(d: DurableSystem, job: MigrationJob): DurableSystem {
  return d.kind !== "panel"
    ? d
    : {
        ...d,
        seq: () => d.seq(),
        write: (op, prepare) =>
          job.panelReadOnly
            ? Promise.reject(
                new HttpError(
                  409,
                  "The panel is read-only while it is being migrated: complete or roll back the migration first.",
                ),
              )
            : d.write(op, prepare),
      };
}

/** The staged system's app, made once per staged live system. */
async function stagedAppOf(state: FrontState, live: LiveSystem): Promise<Hono> {
  if (state.stagedApp?.live !== live)
    state.stagedApp = { live, app: await state.options.makeApp(stagedDurable(live, state.options.store)) };
  return state.stagedApp.app;
}

/** The panel to migrate named by an initiate body, and whether its warnings are accepted; 400 otherwise. */
export function initiateArgs(body: unknown): { panelId: string; acceptWarnings: boolean } {
  const issues: { path: string; message: string }[] = [];
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new HttpError(400, "The request is invalid.", [{ path: "body", message: "Must be a JSON object." }]);
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b))
    if (!["cloudNodeSN", "panel_id", "acceptWarnings"].includes(k))
      issues.push({
        path: `body.${k}`,
        message: "Is not a field of initiate (cloudNodeSN or panel_id, acceptWarnings).",
      });
  for (const k of ["cloudNodeSN", "panel_id"])
    if (k in b && (typeof b[k] !== "string" || b[k] === ""))
      issues.push({ path: `body.${k}`, message: "Must be the panel's serial number (a non-empty string)." });
  if (!("cloudNodeSN" in b) && !("panel_id" in b))
    issues.push({
      path: "body.cloudNodeSN",
      message: "Is required: the serial number of the panel to migrate (cloudNodeSN, or panel_id).",
    });
  if (typeof b.cloudNodeSN === "string" && typeof b.panel_id === "string" && b.cloudNodeSN !== b.panel_id)
    issues.push({ path: "body.panel_id", message: "Names another panel than cloudNodeSN." });
  if ("acceptWarnings" in b && typeof b.acceptWarnings !== "boolean")
    issues.push({ path: "body.acceptWarnings", message: "Must be a boolean." });
  if (issues.length > 0) throw new HttpError(400, "The request is invalid.", issues);
  return { panelId: String(b.cloudNodeSN ?? b.panel_id), acceptWarnings: b.acceptWarnings === true };
}

/** Before a migration: `GET …/preflight-check` and `POST /api/migration/initiate` (M8). */
function declareStartRoutes(api: MigrationApi, state: FrontState): void {
  const { options, job } = state;
  api.get("/api/migration/:panelId/preflight-check", async (c) => {
    await allowed(state, c.req.raw);
    const panel = panelOf(state.served) as { serialNumber?: string } | null;
    const id = panelIdOf(c.req.param("panelId"));
    if (panel === null || panel.serialNumber !== id)
      throw new HttpError(404, `No panel has serial number "${id}" here.`, [
        { path: "panel_id", message: `Unknown panel "${id}".` },
      ]);
    return jsonResponse(200, preflightResponse(preflightPanel(panel, options.integrations?.() ?? [])), options.indent);
  });
  api.post("/api/migration/initiate", async (c) => {
    await allowed(state, c.req.raw);
    const body = await readJsonBody(c.req.raw, options.maxBodyBytes);
    const { panelId, acceptWarnings } = initiateArgs(body);
    const record = await job.initiate(panelId, acceptWarnings);
    options.log(`migration of panel ${record.id} initiated`);
    return jsonResponse(200, initiateAnswer(record), options.indent);
  });
}

/** During a migration: the exported panel (backupUrl) and the migration's status. */
function declareStatusRoutes(api: MigrationApi, state: FrontState): void {
  const { options, job, kept } = state;
  api.get("/api/migration/:panelId/backup", async (c) => {
    await allowed(state, c.req.raw);
    const r = job.status(panelIdOf(c.req.param("panelId")));
    const backup = r.backupUrl === null ? null : await kept.loadBackup();
    if (backup === null) throw new HttpError(404, "The panel has not been exported yet (EXPORT_LEGACY_DATA).");
    return jsonResponse(200, backup, options.indent);
  });
  api.get("/api/migration/:panelId", async (c) => {
    await allowed(state, c.req.raw);
    return jsonResponse(200, statusAnswer(job.status(panelIdOf(c.req.param("panelId")))), options.indent);
  });
}

/** Ending a migration: `complete` serves the staged 2.0 system (M10, M11), `rollback` drops it (M12). */
function declareEndRoutes(api: MigrationApi, state: FrontState): void {
  const { options, job } = state;
  const { store } = options;
  api.post("/api/migration/:panelId/complete", async (c) => {
    await allowed(state, c.req.raw);
    const panelId = panelIdOf(c.req.param("panelId"));
    await job.complete(panelId, async (staged) => {
      const time = new Date((options.now ?? Date.now)()).toISOString();
      await store.replaceSystem!(
        "system",
        staged.snapshot,
        { method: "POST", path: `/api/migration/${panelId}/complete` },
        time,
      );
      // The panel's people reports go with the panel (M10).
      for (const r of await store.listReports()) await store.deleteReport(r.id);
      await store.setValue!(
        KEY_MAPPINGS,
        JSON.stringify({ systemId: staged.systemId, cloudNodeId: staged.cloudNodeId, mappings: staged.mappings }),
      );
      await store.setValue!(KEY_STAGED, null);
      const next = await openDurableSystem(store, options.reopen);
      await options.onCompleted?.(next);
      state.mainApp = await options.makeApp(next);
      state.served.current = next;
      state.stagedApp = null;
    });
    options.log(`migration of panel ${panelId} completed: serving system ${job.record?.systemId ?? ""}`);
    return new Response(null, { status: 204 });
  });
  api.post("/api/migration/:panelId/rollback", async (c) => {
    await allowed(state, c.req.raw);
    const panelId = panelIdOf(c.req.param("panelId"));
    await job.rollback(panelId);
    options.log(`migration of panel ${panelId} rolled back`);
    return new Response(null, { status: 204 });
  });
}

/**
 * `GET /{system_id}/id-mapping/{cloud_node_id}` of the staged or migrated system; any other system
 * id falls through to the served app.
 */
function declareIdMappingRoute(api: MigrationApi, state: FrontState): void {
  const { options, job } = state;
  api.get("/:systemId/id-mapping/:cloudNodeId", async (c, next) => {
    const staged = job.staged;
    const done = staged === null ? await jsonValue<Omit<StagedSystem, "snapshot">>(options.store, KEY_MAPPINGS) : null;
    const source = staged?.system ?? done;
    if (source === null || c.req.param("systemId") !== source.systemId) return next();
    await allowed(state, c.req.raw, ["type"]);
    return jsonResponse(200, idMappingsOf(source, c.req.param("cloudNodeId"), c.req.query("type")), options.indent);
  });
}

/**
 * The id mappings of a migrated cloud node, filtered by the `type` query (comma-separated types).
 * @throws HttpError 404 (another cloud node), 400 (an unknown type)
 */
export function idMappingsOf(
  source: Omit<StagedSystem, "snapshot">,
  nodeId: string,
  type: string | undefined,
): StagedSystem["mappings"] {
  if (nodeId !== source.cloudNodeId)
    throw new HttpError(
      404,
      `No migrated cloud node has id "${nodeId}" (the id assigned during migration, not the serial number).`,
      [{ path: "cloud_node_id", message: `Unknown cloud node "${nodeId}".` }],
    );
  const types = type === undefined || type === "" ? null : type.split(",").map((t) => t.trim());
  const unknown = (types ?? []).filter((t) => !MAPPING_TYPES.includes(t));
  if (unknown.length > 0)
    throw new HttpError(
      400,
      "The request is invalid.",
      unknown.map((t) => ({
        path: "query.type",
        message: `Unknown type "${t.slice(0, 40)}"; the types are ${MAPPING_TYPES.join(", ")}.`,
      })),
    );
  return types === null ? source.mappings : source.mappings.filter((m) => types.includes(m.type));
}

/** A refusal of the migration job as the one error shape; a refused initiate lists the preflight's findings. */
export function refusalAsHttp(e: MigrationRefusal): HttpError {
  return new HttpError(e.status, e.message, e.preflight === undefined ? [] : preflightIssues(e.preflight));
}

/** Errors of the migration routes in the one error shape; a refused initiate lists the preflight's findings. */
function onMigrationError(e: unknown, options: MigrationFrontOptions): Response {
  const { indent } = options;
  if (e instanceof HttpError) return errorResponse(e, indent);
  if (e instanceof MigrationRefusal) return errorResponse(refusalAsHttp(e), indent);
  options.log(`internal error in a migration route: ${(e as Error)?.stack ?? String(e)}`);
  return errorResponse(new HttpError(500, "Internal server error."), indent);
}

/**
 * Creates the front of a `--data` server over `options.durable`, resuming a stored migration.
 * Hono is loaded here, on first use.
 */
export async function createMigrationFront(options: MigrationFrontOptions): Promise<MigrationFront> {
  const { store, basePath } = options;
  if (store.getValue === undefined || store.setValue === undefined || store.replaceSystem === undefined)
    throw new Error("createMigrationFront: the store keeps no migration");
  const kept = migrationStore(store);
  // A box, not a copy: `complete` swaps the served system and the job must see the new one.
  const served = { current: options.durable };
  const job = new MigrationJob(
    {
      store: kept,
      panel: () => panelOf(served),
      ...(options.integrations !== undefined ? { integrations: options.integrations } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
      ...(options.pace !== undefined ? { pace: options.pace } : {}),
      backupPath: (panelId) => `${basePath}/api/migration/${encodeURIComponent(panelId)}/backup`,
      ...(options.legacyOuId !== undefined ? { legacyOuId: () => options.legacyOuId! } : {}),
      // The one place an operator reads why (the status answer has no field for it; the stored record keeps it).
      onFailure: (e, task) =>
        options.log(
          `migration of panel ${job.record?.id ?? ""} failed in ${task}: ${(e as Error)?.message ?? String(e)}`,
        ),
    },
    await completedIfServed(store, options.durable),
  );
  await job.resume();
  const state: FrontState = {
    options,
    job,
    kept,
    served,
    mainApp: await options.makeApp(guardedPanel(options.durable, job)),
    stagedApp: null,
  };

  const { Hono } = await import("hono");
  const front = new Hono();
  front.onError((e) => onMigrationError(e, options));
  const api: MigrationApi = basePath === "" ? front : front.basePath(basePath);
  // Declared in this order: hono tries routes in order, and the catch-all below must come last.
  declareStartRoutes(api, state);
  declareStatusRoutes(api, state);
  declareEndRoutes(api, state);
  declareIdMappingRoute(api, state);
  // The staged system's reads under its id; everything else: the served system's app.
  front.all("*", async (c) => {
    const staged = job.staged;
    if (staged !== null) {
      const path = new URL(c.req.url).pathname.slice(basePath.length);
      const app =
        path === `/${staged.system.systemId}` || path.startsWith(`/${staged.system.systemId}/`)
          ? await stagedAppOf(state, staged.live)
          : null;
      // The staged system's own document, below its id (the root one documents the served panel's routes).
      if (app !== null && path === `/${staged.system.systemId}/openapi.json`) {
        const url = new URL(c.req.url);
        url.pathname = `${basePath}/openapi.json`;
        return app.fetch(new Request(url, c.req.raw));
      }
      if (app !== null) return app.fetch(c.req.raw);
    }
    return state.mainApp.fetch(c.req.raw);
  });

  const frontOwns = frontPaths(basePath);
  // While no migration is staged, a request outside the front's own paths goes to the served app
  // directly: the front would only hand it on, after routing it once more.
  const fetch = (request: Request) =>
    job.staged === null && !frontOwns(request.url) ? state.mainApp.fetch(request) : front.fetch(request);
  return { fetch: (request) => Promise.resolve(fetch(request)), current: () => served.current, job };
}

/**
 * Whether the routes the front declares (declareStartRoutes … declareIdMappingRoute) may match a
 * request URL: those below `/api/migration/` and `/{system_id}/id-mapping/`. A path with a %-escape
 * counts as theirs: hono decodes it before matching.
 */
function frontPaths(basePath: string): (url: string) => boolean {
  const migration = `${basePath}/api/migration/`;
  const idMapping = /^\/[^/]+\/id-mapping\//;
  return (url) => {
    const start = url.indexOf("/", url.indexOf("//") + 2);
    const query = url.indexOf("?", start);
    const path = start < 0 ? "/" : url.slice(start, query < 0 ? undefined : query);
    return (
      path.includes("%") ||
      path.startsWith(migration) ||
      (path.startsWith(basePath) && idMapping.test(path.slice(basePath.length)))
    );
  };
}
