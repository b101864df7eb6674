// The paths of `rsop serve --data`, made from the route declarations: for each kind of route, the
// checks in their order (authentication, system id, method, scope) and what answers it.
//
// Order of checks on a system's route: authorization (401/403) → system id (404) → route (404) and
// method (405, with `Allow`) → body (415, 413, 400) → the live system (its status and issues). The
// engine's routes keep the read-only handler's order: method (405) before the token unless tokens
// have grants.
import { createHash } from "node:crypto";
import { previewPersonImport } from "../../legacy1/live/importPreview.js";
import { checkQueryKeys } from "../../live/queryKeys.js";
import type { Engine } from "../../evaluate/index.js";
import type { Decision } from "../../model/index.js";
import { engineRouteRefusal } from "../../service/auth/scope.js";
import { HttpError, jsonResponse, jsonText, textResponse } from "../../service/httpError.js";
import type { ReportService } from "../../service/reportService.js";
import type { Webhooks } from "../../service/webhooks/webhookService.js";
import { type EngineRouteConfig, answerEngineRoute } from "./createHttpHandler.js";
import { answerLive, type LiveRouteContext } from "./answerLive.js";
import { answerPreview } from "./answerPreview.js";
import {
  type DataContext,
  type Served,
  type ServedPath,
  type TokenCheck,
  authenticateRequest,
  methodRefusal,
  pathsOf,
} from "./dataPipeline.js";
import { type ReportRoutes, reportAnswer, reportNotFound } from "./dataReports.js";
import type { RouteName } from "./matchEngineRoute.js";
import { DEFAULT_PREVIEW_CHANGES, DEFAULT_PREVIEW_COST, type RequestBounds } from "./requestBounds.js";
import { readJsonBody } from "./readJsonBody.js";
import type { DeclaredRoute } from "./routes/declaredRoute.js";
import { panelLiveRoutes, systemLiveRoutes } from "./routes/liveRoutes.js";
import { engineRoutes, panelServiceRoutes, systemServiceRoutes } from "./routes/serviceRoutes.js";

/** What the paths need of the app. */
export interface DataRouteContext extends LiveRouteContext {
  readonly check: TokenCheck;
  readonly basePath: string;
  readonly systemId: string;
  readonly bounds: RequestBounds;
  readonly reports: ReportService;
  readonly webhooks?: Pick<Webhooks, "recordDecisions"> | undefined;
  /** The bounds of the engine's routes (as the read-only handler takes them). */
  readonly engineConfig: EngineRouteConfig;
}

/** The 404 of a path no route has. */
export function noRoute(method: string, url: URL, path: string): HttpError {
  return new HttpError(404, `No route for ${method} ${url.pathname}.`, [
    { path: "path", message: `No route ${method} ${path}.` },
  ]);
}

/** The system id of a 2.0 path and the path below it (400 for a malformed id, 404 for none). */
function systemPath(ctx: DataRouteContext, url: URL, method: string): { id: string; path: string } {
  const rest = url.pathname.slice(ctx.basePath.length);
  const slash = rest.indexOf("/", 1);
  if (slash < 0) throw new HttpError(404, `No route for ${method} ${url.pathname}.`);
  try {
    return { id: decodeURIComponent(rest.slice(1, slash)), path: rest.slice(slash) };
  } catch {
    throw new HttpError(400, "The URL path has malformed percent-encoding.");
  }
}

function checkSystemId(ctx: DataRouteContext, id: string): void {
  if (id !== ctx.systemId)
    throw new HttpError(404, "Unknown system id.", [{ path: "system_id", message: `Unknown system id "${id}".` }]);
}

/** The decoded params of `pattern` in `path` (null: malformed percent-encoding, answered as no route). */
function paramsIn(pattern: string, path: string): Record<string, string> | null {
  const parts = pattern.split("/");
  const segments = path.split("/");
  const params: Record<string, string> = {};
  try {
    for (let i = 1; i < segments.length; i++) {
      const value = decodeURIComponent(segments[i]!);
      const p = parts[i] ?? "";
      if (p.startsWith(":")) params[p.slice(1)] = value;
    }
  } catch {
    return null;
  }
  return params;
}

/** A 2.0 live route: the table's pattern is the declared path below `/:systemId`. */
function systemLive(ctx: DataRouteContext): ServedPath[] {
  return pathsOf(systemLiveRoutes(), async (c, s, allowed, declared) => {
    const request = c.req.raw;
    const url = new URL(request.url);
    const { id, path } = systemPath(ctx, url, request.method);
    const grant = await authenticateRequest(c, ctx.check, id);
    checkSystemId(ctx, id);
    const pattern = declared.slice("/:systemId".length);
    const params = paramsIn(pattern, path);
    if (params === null) throw noRoute(request.method, url, path);
    if (s === undefined) throw methodRefusal(request.method, allowed);
    const r = { method: request.method, pattern, handler: s.route.handler, params, path };
    return answerLive(ctx, r, request, url, grant);
  });
}

const ENGINE_NAMES: Readonly<Record<string, RouteName>> = {
  "/:systemId/decisions": "decisions",
  "/:systemId/decisions/explain": "explain",
  "/:systemId/devices/:deviceId/access": "deviceAccess",
};

/** Decisions, explain and who-can-access, answered on the live engine (admin and integrator only, H21). */
function systemEngine(ctx: DataRouteContext, live: { readonly engine: Engine }): ServedPath[] {
  const webhooks = ctx.webhooks;
  const onDecided =
    webhooks === undefined
      ? undefined
      : (requests: readonly unknown[], decisions: readonly Decision[], engine: Engine) =>
          webhooks.recordDecisions(requests, decisions, engine.snapshot);
  const config = { ...ctx.engineConfig, onDecided };
  return pathsOf(engineRoutes(false), async (c, s, allowed, declared) => {
    const request = c.req.raw;
    const url = new URL(request.url);
    const rel = url.pathname.slice(ctx.basePath.length);
    if (ctx.check.grants !== undefined) {
      const grant = await authenticateRequest(c, ctx.check, rel.split("/")[1] ?? "");
      if (grant.partitions !== null) throw engineRouteRefusal(grant);
    }
    const params = paramsIn(declared, rel);
    if (params === null) throw new HttpError(400, "The URL path has malformed percent-encoding.");
    if (s === undefined) throw methodRefusal(request.method, allowed);
    const grant = await authenticateRequest(c, ctx.check, params.systemId!);
    checkSystemId(ctx, params.systemId!);
    const route = { name: ENGINE_NAMES[s.route.path]!, id: params.deviceId ?? null };
    return answerEngineRoute(route, request, url, live.engine, grant, config);
  });
}

/** Preview (X8): names the access of holders of every partition, so admin and integrator only. */
async function answerSystemPreview(ctx: DataRouteContext, c: DataContext, s: Served | undefined): Promise<Response> {
  const request = c.req.raw;
  const url = new URL(request.url);
  const { id, path } = systemPath(ctx, url, request.method);
  const grant = await authenticateRequest(c, ctx.check, id);
  // Only POST is declared: another method is a path no route has, as before preview had a route.
  if (s === undefined) {
    checkSystemId(ctx, id);
    throw noRoute(request.method, url, path);
  }
  if (grant.partitions !== null) throw engineRouteRefusal(grant);
  checkSystemId(ctx, id);
  checkQueryKeys(url.searchParams, []);
  const target = ctx.durable.target;
  if (target.kind !== "system") throw noRoute(request.method, url, path);
  const limits = {
    maxCost: ctx.bounds.maxPreviewCost ?? DEFAULT_PREVIEW_COST,
    maxChanges: ctx.bounds.maxPreviewChanges ?? DEFAULT_PREVIEW_CHANGES,
  };
  return jsonResponse(
    200,
    answerPreview(target.live, await readJsonBody(request, ctx.maxBodyBytes), limits),
    ctx.indent,
  );
}

/** The report routes of a 2.0 system (RP10: every role; a report holds the holders of its partitions). */
function systemReports(ctx: DataRouteContext, reports: ReportRoutes): ServedPath[] {
  return pathsOf(
    systemServiceRoutes().filter((r) => r.by === "report"),
    async (c, s, allowed) => {
      const request = c.req.raw;
      const url = new URL(request.url);
      const { id, path } = systemPath(ctx, url, request.method);
      const grant = await authenticateRequest(c, ctx.check, id);
      checkSystemId(ctx, id);
      return reportAnswer(reports, request, url, path.slice(reports.prefix.length), grant, s?.route, allowed);
    },
  );
}

/** Every path of a 2.0 system, and the answer of a path no route has (after the token and system id). */
export function systemPaths(
  ctx: DataRouteContext,
  reports: ReportRoutes,
): {
  paths: ServedPath[];
  fallback: (c: DataContext) => Promise<Response>;
} {
  const target = ctx.durable.target;
  if (target.kind !== "system") throw new Error("systemPaths: not a 2.0 system");
  const preview = systemServiceRoutes().filter((r) => r.by === "preview");
  const paths = [
    ...systemLive(ctx),
    ...systemEngine(ctx, target.live),
    ...pathsOf(preview, (c, s) => answerSystemPreview(ctx, c, s)),
    ...systemReports(ctx, reports),
  ];
  const fallback = async (c: DataContext): Promise<Response> => {
    const request = c.req.raw;
    const url = new URL(request.url);
    const { id, path } = systemPath(ctx, url, request.method);
    const grant = await authenticateRequest(c, ctx.check, id);
    checkSystemId(ctx, id);
    if (path === reports.prefix || path.startsWith(`${reports.prefix}/`))
      return reportNotFound(reports, request, url, path.slice(reports.prefix.length), grant);
    throw noRoute(request.method, url, path);
  };
  return { paths, fallback };
}

/** The 1.0 import preview (LP12): changes nothing, so it is not an operation of the live system. */
async function answerImportPreview(ctx: DataRouteContext, c: DataContext, s: Served | undefined): Promise<Response> {
  const request = c.req.raw;
  const grant = await authenticateRequest(c, ctx.check, ctx.systemId);
  if (grant.partitions !== null) throw new HttpError(403, "A 1.0 panel is served to admin and integrator tokens only.");
  if (s === undefined)
    throw new HttpError(
      405,
      `${request.method} is not allowed here; use POST.`,
      [{ path: "method", message: "Use POST." }],
      {
        allow: "POST",
      },
    );
  const target = ctx.durable.target;
  if (target.kind !== "panel") throw new Error("not a panel");
  const body = await readJsonBody(request, ctx.maxBodyBytes);
  const text = jsonText(previewPersonImport(target.live.snapshot, body), ctx.indent);
  // Want-Digest (RFC 3230) of any algorithm is answered with the SHA-256 of the body sent.
  const digest: Record<string, string> =
    request.headers.get("want-digest") === null
      ? {}
      : { digest: `sha-256=${createHash("sha256").update(text).digest("base64")}` };
  return textResponse(200, text, digest);
}

/** Every path of a 1.0 panel (`/api/…`), and the answer of a path no route has. */
export function panelPaths(
  ctx: DataRouteContext,
  reports: ReportRoutes,
): {
  paths: ServedPath[];
  fallback: (c: DataContext) => Promise<Response>;
} {
  const service = panelServiceRoutes();
  const served = (by: DeclaredRoute["by"]) => service.filter((r) => r.by === by);
  const livePaths = pathsOf(panelLiveRoutes(), async (c, s, allowed, pattern) => {
    const request = c.req.raw;
    const url = new URL(request.url);
    const path = url.pathname.slice(ctx.basePath.length);
    const grant = await authenticateRequest(c, ctx.check, ctx.systemId);
    const params = paramsIn(pattern, path);
    if (params === null) throw noRoute(request.method, url, path);
    if (s === undefined) throw methodRefusal(request.method, allowed);
    return answerLive(
      ctx,
      { method: request.method, pattern, handler: s.route.handler, params, path },
      request,
      url,
      grant,
    );
  });
  const reportPaths = pathsOf(served("report"), async (c, s, allowed) => {
    const request = c.req.raw;
    const url = new URL(request.url);
    const path = url.pathname.slice(ctx.basePath.length);
    const grant = await authenticateRequest(c, ctx.check, ctx.systemId);
    if (grant.partitions !== null)
      throw new HttpError(403, "A 1.0 panel is served to admin and integrator tokens only.");
    return reportAnswer(reports, request, url, path.slice(reports.prefix.length), grant, s?.route, allowed);
  });
  const fallback = async (c: DataContext): Promise<Response> => {
    const request = c.req.raw;
    const url = new URL(request.url);
    const path = url.pathname.slice(ctx.basePath.length);
    const grant = await authenticateRequest(c, ctx.check, ctx.systemId);
    if (path === reports.prefix || path.startsWith(`${reports.prefix}/`)) {
      if (grant.partitions !== null)
        throw new HttpError(403, "A 1.0 panel is served to admin and integrator tokens only.");
      return reportNotFound(reports, request, url, path.slice(reports.prefix.length), grant);
    }
    throw noRoute(request.method, url, path);
  };
  const paths = [
    ...livePaths,
    ...pathsOf(served("importPreview"), (c, s) => answerImportPreview(ctx, c, s)),
    ...reportPaths,
  ];
  return { paths, fallback };
}
