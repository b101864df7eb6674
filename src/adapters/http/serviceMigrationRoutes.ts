// The migration routes of the service (semantics T70–T77), on the accounts host: the single-system
// server's routes and answers (M8–M12, migrationFront.ts) for any registered panel the caller's
// token reaches (404 otherwise, the same answer as an unknown panel); initiate, complete and
// rollback are for admin and integrator tokens (403). `GET /{system_id}/id-mapping/{cloud_node_id}`
// belongs to the systems host: serviceIdMapping answers it before the request reaches the
// system's own app.
import type { Context, Env, Hono } from "hono";
import { type Grant, reaches } from "../../service/auth/grant.js";
import { HttpError, errorResponse, jsonResponse } from "../../service/httpError.js";
import { MigrationRefusal, initiateAnswer, statusAnswer } from "../../service/migrationJob.js";
import { preflightResponse } from "../../legacy1/migration/preflightPanel.js";
import type { Caller } from "../../service/tenants/organization.js";
import type { TenantRegistry } from "../../service/tenants/registry.js";
import type { TenantMigrations } from "../../service/tenants/tenantMigration.js";
import { authenticate } from "./authenticate.js";
import { idMappingsOf, initiateArgs, refusalAsHttp } from "./migrationFront.js";
import { refuseOtherQuery } from "./parseQuery.js";
import { readJsonBody } from "./readJsonBody.js";

/** What the routes need. */
export interface ServiceMigrationDeps {
  readonly registry: TenantRegistry;
  readonly migrations: TenantMigrations;
  /** The caller of a request (HttpError 401 without a valid token): accountsRoutes.ts identifyByToken. */
  readonly identify: (c: Context) => Promise<Caller>;
  readonly maxBodyBytes: number;
  readonly indent: number;
  readonly log?: (line: string) => void;
}

const WRITERS = new Set(["admin", "integrator"]);

const unknownPanel = (serial: string) =>
  new HttpError(404, "Unknown panel.", [{ path: "panel_id", message: `Unknown panel "${serial}".` }]);

/** The registered panel `serial` when the grant reaches its legacy organization; else 404 (T70). */
function reachedPanel(registry: TenantRegistry, grant: Grant, serial: string): void {
  const t = registry.tenantByKey(serial);
  if (t === undefined || t.kind !== "panel" || !reaches(grant, t.organization, (id) => registry.ancestors(id)))
    throw unknownPanel(serial);
}

/** Token (401), then the panel's reach (404), then the role of a change (403), then the query keys (400). */
async function admit(deps: ServiceMigrationDeps, c: Context, serial: string | null, change: boolean): Promise<Caller> {
  const caller = await deps.identify(c);
  await deps.registry.refresh();
  if (serial !== null) reachedPanel(deps.registry, caller.grant, serial);
  if (change && !WRITERS.has(caller.grant.role))
    throw new HttpError(403, `A ${caller.grant.role} may read migrations, not start or end them.`);
  refuseOtherQuery(new URL(c.req.url), []);
  return caller;
}

/** The one error shape for the job's refusals (a refused initiate lists the preflight's findings). */
async function answered(run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof MigrationRefusal) throw refusalAsHttp(e);
    throw e;
  }
}

const panelOf = (c: Context) => decodeURIComponent(c.req.param("panelId") ?? "");

/** Preflight, initiate, status, backup (M8). */
function startRoutes<E extends Env>(app: Hono<E>, deps: ServiceMigrationDeps): void {
  const { migrations, indent } = deps;
  app.get("/api/migration/:panelId/preflight-check", (c) =>
    answered(async () => {
      const serial = panelOf(c);
      await admit(deps, c, serial, false);
      return jsonResponse(200, preflightResponse(await migrations.preflight(serial)), indent);
    }),
  );
  app.post("/api/migration/initiate", (c) =>
    answered(async () => {
      const caller = await admit(deps, c, null, false);
      const { panelId, acceptWarnings } = initiateArgs(await readJsonBody(c.req.raw, deps.maxBodyBytes));
      reachedPanel(deps.registry, caller.grant, panelId);
      if (!WRITERS.has(caller.grant.role))
        throw new HttpError(403, `A ${caller.grant.role} may read migrations, not start or end them.`);
      const record = await migrations.initiate(panelId, acceptWarnings, caller);
      deps.log?.(`migration of panel ${record.id} initiated`);
      return jsonResponse(200, initiateAnswer(record), indent);
    }),
  );
  app.get("/api/migration/:panelId/backup", (c) =>
    answered(async () => {
      const serial = panelOf(c);
      await admit(deps, c, serial, false);
      const backup = await migrations.backup(serial);
      if (backup === null) throw new HttpError(404, "The panel has not been exported yet (EXPORT_LEGACY_DATA).");
      return jsonResponse(200, backup, indent);
    }),
  );
  app.get("/api/migration/:panelId", (c) =>
    answered(async () => {
      const serial = panelOf(c);
      await admit(deps, c, serial, false);
      return jsonResponse(200, statusAnswer(await migrations.status(serial)), indent);
    }),
  );
}

/** Complete (M10, T74) and rollback (T75). */
function endRoutes<E extends Env>(app: Hono<E>, deps: ServiceMigrationDeps): void {
  const { migrations } = deps;
  app.post("/api/migration/:panelId/complete", (c) =>
    answered(async () => {
      const serial = panelOf(c);
      const caller = await admit(deps, c, serial, true);
      await migrations.complete(serial, caller);
      return new Response(null, { status: 204 });
    }),
  );
  app.post("/api/migration/:panelId/rollback", (c) =>
    answered(async () => {
      const serial = panelOf(c);
      const caller = await admit(deps, c, serial, true);
      await migrations.rollback(serial, caller);
      return new Response(null, { status: 204 });
    }),
  );
}

/** Registers the migration routes on the accounts host's app (whose onError answers HttpError). */
export function registerServiceMigrationRoutes<E extends Env>(app: Hono<E>, deps: ServiceMigrationDeps): void {
  startRoutes(app, deps);
  endRoutes(app, deps);
}

/** What serviceIdMapping needs: the grants of the front (serviceApp.ts ServiceFront). */
export interface IdMappingDeps {
  readonly registry: TenantRegistry;
  readonly migrations: TenantMigrations;
  /** The grant of a token on system tenant `systemId` (serviceApp.ts tenantGrant), or null. */
  readonly grantOn: (token: string, systemId: string) => Grant | null;
  /** Whether a token is valid anywhere in the service (401 otherwise). */
  readonly known: (token: string) => boolean;
  readonly indent: number;
}

const ID_MAPPING = /^\/([^/]+)\/id-mapping\/([^/]+)\/?$/;

/**
 * `GET /{system_id}/id-mapping/{cloud_node_id}` on the systems host (T77): the mappings a migration
 * kept in the system's kv, staged or completed. Answers null for any other request (the system's
 * own app answers it), and for a system no migration made.
 */
export function serviceIdMapping(deps: IdMappingDeps): (request: Request) => Promise<Response> | null {
  return (request) => {
    if (request.method !== "GET" && request.method !== "HEAD") return null;
    const match = ID_MAPPING.exec(new URL(request.url).pathname);
    if (match === null) return null;
    let systemId: string;
    let nodeId: string;
    try {
      systemId = decodeURIComponent(match[1]!);
      nodeId = decodeURIComponent(match[2]!);
    } catch {
      return null;
    }
    const t = deps.registry.tenantByKey(systemId);
    if (t === undefined || t.kind !== "system") return null;
    return answerIdMapping(deps, request, systemId, nodeId).catch((e: unknown) => {
      if (e instanceof HttpError) return errorResponse(e, deps.indent);
      throw e;
    });
  };
}

async function answerIdMapping(
  deps: IdMappingDeps,
  request: Request,
  systemId: string,
  nodeId: string,
): Promise<Response> {
  let reached = false;
  await authenticate(
    request,
    (token) => {
      reached = deps.grantOn(token, systemId) !== null;
      return reached || deps.known(token);
    },
    systemId,
  );
  if (!reached)
    throw new HttpError(404, "Unknown system id.", [
      { path: "system_id", message: `Unknown system id "${systemId}".` },
    ]);
  const source = await deps.migrations.mappings(systemId);
  if (source === null)
    throw new HttpError(404, "This system was not migrated from a panel: it has no id mappings.", [
      { path: "system_id", message: `System "${systemId}" has no id mappings.` },
    ]);
  const url = new URL(request.url);
  refuseOtherQuery(url, ["type"]);
  return jsonResponse(200, idMappingsOf(source, nodeId, url.searchParams.get("type") ?? undefined), deps.indent);
}
