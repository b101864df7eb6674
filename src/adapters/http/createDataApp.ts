// The HTTP face of `rsop serve --data`: a Hono app whose routes are declared once (routes/): each
// route of the live system's table, the engine's, preview, reports and webhook subscriptions is
// registered on hono from its declaration, and /openapi.json documents them. 2.0: every
// systems-interface route under `/{system_id}`; 1.0 (`--panel`): every per-node route under `/api`.
//
// One request: hono routes it once; the authentication step resolves its token once and keeps the
// grant on the context; a write's partition scope is checked from its route (answerLive.ts); the
// live system gets the matched route with the operation and does not match it again; one onError
// answers every refusal in the one error shape. Reads answer from memory at once; writes wait their
// turn and are answered once the store has them. Live hardware readings answer 501 (H30).
import type { Hono } from "hono";
import { Refusal } from "../../live/operation.js";
import { LiveRefusal } from "../../service/auth/scope.js";
import type { Grant } from "../../service/auth/grant.js";
import { HttpError, errorResponse, jsonResponse, toHttpIssues } from "../../service/httpError.js";
import type { DurableSystem } from "../../service/store/durableSystem.js";
import { type ReportStoreLimits, ReportService } from "../../service/reportService.js";
import { StoreError, StoreUnavailableError } from "../../service/store/store.js";
import type { Webhooks } from "../../service/webhooks/webhookService.js";
import type { CloudNodeAnswers } from "../../service/nodes/nodeStatus.js";
import type { Authorize } from "./authenticate.js";
import { REFUSAL } from "./answerLive.js";
import { engineRouteConfig } from "./createHttpHandler.js";
import {
  type DataEnv,
  type PipelineObserver,
  type TokenCheck,
  authenticateRequest,
  registerPaths,
} from "./dataPipeline.js";
import { type DataRouteContext, panelPaths, systemPaths } from "./dataRoutes.js";
import type { ReportRoutes } from "./dataReports.js";
import { normalizeBasePath } from "./matchEngineRoute.js";
import { type RequestBounds, boundsOf } from "./requestBounds.js";
import { docsRoutes } from "./routes/docsRoutes.js";
import { buildOpenApiDocument } from "./routes/openApiDocument.js";
import { dataRouteDeclarations } from "./routes/servedRoutes.js";
import { registerSubscriptionRoutes } from "./subscriptionRoutes.js";

/** Options of createDataApp. */
export interface DataAppOptions extends RequestBounds {
  readonly durable: DurableSystem;
  /** Whether a bearer token may use the system; required unless insecureNoAuth. */
  readonly authorize?: Authorize;
  /**
   * The grant of a bearer token (role and partitions; null: an invalid token), instead of `authorize`.
   * A token that `authorize` accepts is an admin's.
   */
  readonly grants?: (token: string) => Grant | null;
  readonly insecureNoAuth?: boolean;
  /** Prefix of every route, e.g. `/v2`; default `""`. */
  readonly basePath?: string;
  /** Largest accepted request body in bytes; default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** JSON indentation of answers; default 2. */
  readonly indent?: number;
  /** The instant decisions use when a request gives none; default Date.now. */
  readonly now?: () => number;
  /** `GET /healthz` (no authentication) answers this. */
  readonly health?: () => unknown;
  /** A generated report keeps at most this many records, then ends `finishedTruncated`; default 1,000,000. */
  readonly maxReportEntries?: number;
  /** The stored report caps and the generation bound (RP16, RP17); defaults REPORT_STORE_DEFAULTS. */
  readonly reportStore?: ReportStoreLimits;
  /** Told about a report whose generation failed or could not be stored (it ends `finishedTruncated`). */
  readonly onReportError?: (error: unknown) => void;
  /** Called with the report service once it is open (to wait for reports being generated). */
  readonly onReports?: (reports: ReportService) => void;
  /** Told about every unexpected error (answered 500 with a generic message). */
  readonly onError?: (error: unknown, request: Request) => void;
  /** Webhook subscriptions: served at `/api/organizations/{id}/subscriptions` (1.0: `/api/ous/{id}/hooks`), and told every decision. */
  readonly webhooks?: Webhooks;
  /** Told each time a request is routed and a token resolved (tests count them: once each per request). */
  readonly observe?: PipelineObserver;
  /** The report service to use (a tenant host opens it); default one opened here over the system's store. */
  readonly reports?: ReportService;
  /** Where the access events of answered decisions go, when `webhooks` is not given (a tenant of the service: its subscriptions are the organizations', served by the accounts host). */
  readonly decisionEvents?: Pick<Webhooks, "recordDecisions">;
  /** The invite id of a digital credential created (I81): a tenant of the service has one; an embedded system none. */
  readonly inviteIdOf?: (credentialId: string, holderId: string) => Promise<string>;
  /** false: no /openapi.json and /docs (a tenant of the service, whose document the service serves once); default true. */
  readonly document?: boolean;
  /** The cloud nodes' status and hardware as their nodes reported them (a tenant of the service, N10, N11); absent: none. */
  readonly cloudNodes?: CloudNodeAnswers;
}

const MIB = 1024 * 1024;

/** The one answer of every error: refusals in the error shape, anything unexpected a 500 told to `onError`. */
function answerError(e: unknown, request: Request, indent: number, onError: DataAppOptions["onError"]): Response {
  if (e instanceof HttpError) return errorResponse(e, indent);
  // A refusal of the live system's own checks, raised directly (Refusal) or on the token's view (LiveRefusal).
  if (e instanceof LiveRefusal || e instanceof Refusal)
    return errorResponse(new HttpError(e.status, REFUSAL[e.status] ?? "Refused.", toHttpIssues(e.issues)), indent);
  if (e instanceof StoreError && /closing/.test(e.message))
    return errorResponse(new HttpError(503, "The server is shutting down; try again."), indent);
  // A shared store (PostgreSQL) out of reach: whether the write was stored is unknown until the log is read again (PG7).
  if (e instanceof StoreUnavailableError)
    return errorResponse(
      new HttpError(
        503,
        "The write could not be completed now (the database is unavailable or busy); it may or may not have been stored: read it back before retrying.",
        [],
        { "retry-after": "1" },
      ),
      indent,
    );
  try {
    onError?.(e, request);
  } catch {
    // A failing logger must not turn a 500 into a crash.
  }
  return errorResponse(new HttpError(500, "Internal server error."), indent);
}

/** How the app resolves tokens (exactly one of authorize, grants and insecureNoAuth). */
function tokenCheckOf(options: DataAppOptions): TokenCheck {
  const chosen = [
    options.authorize !== undefined,
    options.grants !== undefined,
    options.insecureNoAuth === true,
  ].filter(Boolean).length;
  if (chosen !== 1) throw new Error("createDataApp: give exactly one of authorize, grants and insecureNoAuth");
  const grants = options.grants;
  return {
    insecure: options.insecureNoAuth === true,
    authorize: grants !== undefined ? (token) => grants(token) !== null : options.authorize,
    grants,
    observer: options.observe,
  };
}

async function openReports(options: DataAppOptions, indent: number): Promise<ReportService> {
  if (options.reports !== undefined) return options.reports;
  const { durable } = options;
  const reports = await ReportService.open({
    store: durable.store,
    flavour: durable.target.kind === "system" ? "holders" : "people",
    now: options.now ?? Date.now,
    indent,
    ...(options.maxReportEntries !== undefined ? { maxEntries: options.maxReportEntries } : {}),
    ...options.reportStore,
    ...(options.onReportError !== undefined ? { onError: options.onReportError } : {}),
  });
  options.onReports?.(reports);
  return reports;
}

/** The context of the app's routes. */
function routeContextOf(options: DataAppOptions, reports: ReportService): DataRouteContext {
  const target = options.durable.target;
  const maxBodyBytes = options.maxBodyBytes ?? MIB;
  const bounds = boundsOf(options);
  const indent = options.indent ?? 2;
  return {
    durable: options.durable,
    maxBodyBytes,
    indent,
    now: options.now ?? Date.now,
    inviteIdOf: options.inviteIdOf,
    cloudNodes: options.cloudNodes,
    check: tokenCheckOf(options),
    basePath: normalizeBasePath(options.basePath ?? ""),
    systemId: target.kind === "system" ? target.live.snapshot.systemId : "api",
    bounds,
    reports,
    webhooks: options.webhooks ?? options.decisionEvents,
    // Checked here, as the read-only handler checks them: a bad bound opens nothing.
    engineConfig: engineRouteConfig({
      maxBodyBytes,
      ...(bounds.maxBatch !== undefined ? { maxBatch: bounds.maxBatch } : {}),
      indent,
      ...(options.now !== undefined ? { now: options.now } : {}),
    }),
  };
}

/** /openapi.json and /docs of the app's routes: no token (the document describes routes and holds no data). */
async function serveDocuments(
  api: Hono<DataEnv>,
  kind: DurableSystem["kind"],
  webhooks: Webhooks | undefined,
  basePath: string,
): Promise<void> {
  const document = await buildOpenApiDocument(dataRouteDeclarations(kind, webhooks?.generation), {
    title: kind === "system" ? "rsop-engine: a 2.0 system" : "rsop-engine: a 1.0 panel",
    version: "2.0",
    basePath,
  });
  const docs = docsRoutes(document, basePath);
  // No token: the document describes routes and holds no data. Another path below /docs is a system's.
  api.on(["GET", "HEAD"], ["/openapi.json", "/docs", "/docs/*"], async (c, next) => {
    const answer = docs.answer(c.req.method, new URL(c.req.url).pathname.slice(basePath.length));
    if (answer !== null) return answer;
    await next();
  });
}

/**
 * Creates the Hono app of `rsop serve --data` over a durable live system. Hono is loaded here, on
 * first use, so that the CLI's other commands never load it.
 * @throws Error when not exactly one of `authorize`, `grants` and `insecureNoAuth` is given.
 */
export async function createDataApp(options: DataAppOptions): Promise<Hono> {
  tokenCheckOf(options);
  const indent = options.indent ?? 2;
  const reports = await openReports(options, indent);
  const ctx = routeContextOf(options, reports);
  const { Hono } = await import("hono");
  const app = new Hono<DataEnv>();
  app.onError((e, c) => answerError(e, c.req.raw, indent, options.onError));
  app.notFound((c) =>
    errorResponse(new HttpError(404, `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`), indent),
  );
  const api = ctx.basePath === "" ? app : app.basePath(ctx.basePath);
  const kind = options.durable.target.kind;
  if (options.document !== false) await serveDocuments(api, kind, options.webhooks, ctx.basePath);
  if (options.health !== undefined) {
    const health = options.health;
    api.on(["GET", "HEAD"], "/healthz", () => jsonResponse(200, health(), indent));
  }
  const webhooks = options.webhooks;
  // Registered first: the system routes below would take /api/… for a system id or a panel route.
  if (webhooks !== undefined)
    registerSubscriptionRoutes(api, {
      webhooks,
      identify: (c, id): Promise<Grant> => authenticateRequest(c, ctx.check, id),
      maxBodyBytes: ctx.maxBodyBytes,
      indent,
      now: ctx.now,
      observe: options.observe,
    });
  const reportRoutes: ReportRoutes = {
    reports,
    durable: options.durable,
    maxBodyBytes: ctx.maxBodyBytes,
    prefix: kind === "system" ? "/reports/holders" : "/api/reports/cloudpeople",
  };
  const { paths, fallback } = kind === "system" ? systemPaths(ctx, reportRoutes) : panelPaths(ctx, reportRoutes);
  registerPaths(api, paths, options.observe);
  api.all(kind === "system" ? "/:systemId/*" : "/api/*", fallback);
  return app as unknown as Hono;
}
