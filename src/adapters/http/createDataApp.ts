// The HTTP face of `rsop serve --data`: a Hono app that passes every route of the live system
// straight to it (the operation is the route). 2.0: every systems-interface route under
// `/{system_id}`, plus decisions and who-can-access (answered by createHttpHandler on the live
// engine). 1.0 (`--panel`): every per-node route under `/api`.
//
// Order of checks: authorization (401/403) → system id (404) → route (404) and method (405, with
// `Allow`) → body (415, 413, 400) → the live system (its status and issues). Reads answer from
// memory at once; writes wait their turn and are answered once the store has them. Live hardware
// readings (hardware lists, wireless diagnostics) answer 501: no stored system holds them.
import { createHash } from "node:crypto";
import type { Hono } from "hono";
import { matchRoute } from "../../live/routes.js";
import { reads } from "../../live/operations/reads.js";
import { matchPanelRoute } from "../../legacy1/live/panelRoutes.js";
import { panelReads } from "../../legacy1/live/panelReads.js";
import { previewPersonImport } from "../../legacy1/live/importPreview.js";
import { Refusal } from "../../live/operation.js";
import { PAGING, checkQueryKeys } from "../../live/queryKeys.js";
import type { Operation, OperationResult } from "../../live/index.js";
import type { PanelOperationResult } from "../../legacy1/index.js";
import type { Engine } from "../../evaluate/index.js";
import type { Decision, SystemSnapshot } from "../../model/index.js";
import { type Authorize, authenticate } from "./authenticate.js";
import {
  LiveRefusal,
  checkRsopIds,
  checkWrite,
  engineRouteRefusal,
  readInScope,
  rsopResultInScope,
  scopeOf,
} from "../../service/auth/scope.js";
import { ADMIN, type Grant } from "../../service/auth/grant.js";
import { pageHeaders } from "./answerDeviceAccess.js";
import { createHttpHandler } from "./createHttpHandler.js";
import { answerPreview } from "./answerPreview.js";
import { DEFAULT_PREVIEW_CHANGES, DEFAULT_PREVIEW_COST, type RequestBounds, boundsOf } from "./requestBounds.js";
import {
  HttpError,
  errorResponse,
  jsonResponse,
  jsonText,
  jsonTextBytes,
  textResponse,
  toHttpIssues,
} from "../../service/httpError.js";
import { normalizeBasePath } from "./matchRoute.js";
import { readJsonBody } from "./readJsonBody.js";
import type { AnyLiveSystem, DurableSystem } from "../../service/store/durableSystem.js";
import { type ReportStoreLimits, ReportService } from "../../service/reportService.js";
import { StoreError, StoreUnavailableError } from "../../service/store/store.js";
import type { Webhooks } from "../../service/webhooks/webhookService.js";
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
}

const MIB = 1024 * 1024;

/** The message of a refusal, by status; its issues say what exactly. */
const REFUSAL: Readonly<Record<number, string>> = {
  400: "The request is invalid.",
  404: "Not found.",
  405: "Method not allowed.",
  409: "The request conflicts with the current state.",
};

/**
 * Reads whose answer is a live reading of the hardware (seed 001 "List hardware", "Wireless
 * diagnostics"; seed 002 "Hardware", "Wireless diagnostics"), by the live system's handler. No stored
 * snapshot holds them and this server talks to no hardware, so it answers 501 instead of the live
 * system's empty list, which would claim the node has no hardware (docs/semantics.md H30).
 */
const LIVE_READINGS: ReadonlyMap<unknown, string> = new Map<unknown, string>([
  [reads.hardware, "The hardware list of a cloud node"],
  [reads.wirelessDiagnostics, "The wireless diagnostics of a cloud node"],
  [panelReads.hardware, "The hardware list of this cloud node"],
  [panelReads.wirelessDiagnostics, "The wireless diagnostics of this cloud node"],
]);

/** A whole number query parameter as the live system accepted it, or the default. */
function intParam(url: URL, key: string, dflt: number): number {
  const raw = url.searchParams.get(key);
  return raw === null || raw === "" || !/^\d+$/.test(raw) ? dflt : Number(raw);
}

/** The body of a write: none when the request has none, else JSON (415, 413, 400 otherwise). */
async function writeBody(request: Request, maxBytes: number): Promise<unknown> {
  const length = request.headers.get("content-length")?.trim();
  const chunked = request.headers.get("transfer-encoding") !== null;
  if (length === "0" || (length === undefined && !chunked)) return undefined;
  return readJsonBody(request, maxBytes);
}

/**
 * Creates the Hono app of `rsop serve --data` over a durable live system. Hono is loaded here, on
 * first use, so that the CLI's other commands never load it.
 * @throws Error when neither `authorize` nor `insecureNoAuth` is given.
 */
export async function createDataApp(options: DataAppOptions): Promise<Hono> {
  const { durable } = options;
  const chosen = [
    options.authorize !== undefined,
    options.grants !== undefined,
    options.insecureNoAuth === true,
  ].filter(Boolean).length;
  if (chosen !== 1) throw new Error("createDataApp: give exactly one of authorize, grants and insecureNoAuth");
  const grants = options.grants;
  const authorize: Authorize | undefined = grants !== undefined ? (token) => grants(token) !== null : options.authorize;
  const insecure = options.insecureNoAuth === true;
  const basePath = normalizeBasePath(options.basePath ?? "");
  const maxBodyBytes = options.maxBodyBytes ?? MIB;
  const bounds = boundsOf(options);
  const indent = options.indent ?? 2;
  const target = durable.target;
  const systemId = target.kind === "system" ? target.live.snapshot.systemId : "api";

  const reports = await ReportService.open({
    store: durable.store,
    flavour: target.kind === "system" ? "holders" : "people",
    now: options.now ?? Date.now,
    indent,
    ...(options.maxReportEntries !== undefined ? { maxEntries: options.maxReportEntries } : {}),
    ...options.reportStore,
    ...(options.onReportError !== undefined ? { onError: options.onReportError } : {}),
  });
  options.onReports?.(reports);

  /**
   * The report routes (seed 001 `/reports/holders/…`, seed 002 `/reports/cloudpeople/…`), `sub` being
   * the path after that prefix. Every role may ask reports; a manager's or reporter's report holds
   * only the holders of its partitions and is seen only by tokens that see all of them (RP10).
   */
  async function reportRoute(request: Request, url: URL, sub: string, grant: Grant): Promise<Response> {
    const method = request.method;
    let seg: string[];
    try {
      seg = sub.split("/").slice(1).map(decodeURIComponent);
    } catch {
      throw new HttpError(400, "The URL path has malformed percent-encoding.");
    }
    const allow = (...methods: string[]) => {
      if (!methods.includes(method))
        throw new HttpError(405, `${method} is not allowed here; use ${methods.join(", ")}.`, [], {
          allow: methods.join(", "),
        });
    };
    const view = (): SystemSnapshot =>
      target.kind === "system" ? scopeOf(target.live.snapshot, grant).view : target.live.engine.loaded.system;
    // The metadata list pages; no other report route takes a query parameter (HS4).
    checkQueryKeys(url.searchParams, seg[0] === "requests" && seg.length === 1 ? PAGING : []);
    // The store is the truth: replicas on one database share their reports (RP14).
    if (seg[0] !== "preview") await reports.refresh();
    if (seg.length === 1 && (seg[0] === "preview" || seg[0] === "generate")) {
      allow("POST");
      const body = await writeBody(request, maxBodyBytes);
      const snapshot = view();
      return seg[0] === "preview"
        ? reports.preview(snapshot, body, grant)
        : reports.generate(snapshot, body, grant, snapshot.timezone);
    }
    if (seg[0] === "requests" && seg.length === 1) {
      allow("GET");
      return reports.list(url, grant);
    }
    if (seg[0] === "requests" && seg.length === 2 && seg[1] !== "") {
      allow("GET", "DELETE");
      return method === "GET" ? reports.metadata(seg[1]!, grant) : reports.delete(seg[1]!, grant);
    }
    if (seg[0] === "requests" && seg.length === 3 && seg[2] === "view") {
      allow("GET");
      return reports.view(seg[1]!, grant);
    }
    if (target.kind === "panel" && seg[0] === "file" && seg.length === 2) {
      allow("GET");
      return reports.file(seg[1]!, grant);
    }
    throw new HttpError(404, `No route for ${method} ${url.pathname}.`, [
      { path: "path", message: `No report route ${method} ${sub}.` },
    ]);
  }
  const HOLDER_REPORTS = "/reports/holders";
  const PEOPLE_REPORTS = "/api/reports/cloudpeople";
  const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

  const { Hono } = await import("hono");
  const app = new Hono();
  app.onError((e, c) => {
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
      options.onError?.(e, c.req.raw);
    } catch {
      // A failing logger must not turn a 500 into a crash.
    }
    return errorResponse(new HttpError(500, "Internal server error."), indent);
  });
  app.notFound((c) =>
    errorResponse(new HttpError(404, `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`), indent),
  );
  const api = basePath === "" ? app : app.basePath(basePath);

  if (options.health !== undefined) {
    const health = options.health;
    api.on(["GET", "HEAD"], "/healthz", () => jsonResponse(200, health(), indent));
  }

  /**
   * The grant of the request's bearer token (401 as H1 when there is none or it is invalid); every
   * request is an admin's without authentication or with a single token.
   */
  async function identify(request: Request, id: string): Promise<Grant> {
    if (insecure) return ADMIN;
    if (grants === undefined) {
      await authenticate(request, authorize!, id);
      return ADMIN;
    }
    let grant: Grant | null = null;
    await authenticate(
      request,
      (token) => {
        grant = grants(token);
        return grant !== null;
      },
      id,
    );
    return grant!;
  }

  /** Passes one request to the live system: `path` relative to the system (or the panel host). */
  async function pass(request: Request, url: URL, path: string, grant: Grant): Promise<Response> {
    const method = request.method;
    const match = target.kind === "system" ? matchRoute(method, path) : matchPanelRoute(method, path);
    if (match.kind === "none")
      throw new HttpError(404, `No route for ${method} ${url.pathname}.`, [
        { path: "path", message: `No route ${method} ${path}.` },
      ]);
    if (match.kind === "method")
      throw new HttpError(405, `${method} is not allowed here; use ${match.allowed.join(", ")}.`, [], {
        allow: match.allowed.join(", "),
      });
    // A read's JSON is taken as bytes where the live system makes them so (RSOP).
    const op = { method: method as "GET", path: `${path}${url.search}`, jsonBytes: { indent } };
    let result: OperationResult | PanelOperationResult;
    const system: AnyLiveSystem = target.live;
    if (target.kind === "panel" && grant.partitions !== null)
      throw new HttpError(403, "A 1.0 panel is served to admin and integrator tokens only.");
    if (match.kind === "read") {
      if (target.kind === "panel" || grant.partitions === null) result = system.apply(op);
      else {
        // A manager or reporter reads its view of the snapshot (H19); RSOP is the engine's, for its holders only.
        const live = target.live;
        const scope = scopeOf(live.snapshot, grant);
        if (match.handler === reads.rsop) {
          checkRsopIds(scope, live.snapshot, url.searchParams.get("ids"));
          // Its answer names only groups and rules of the view (HS3): read as an object, then filtered.
          result = rsopResultInScope(scope, live.apply({ method: "GET", path: op.path }));
        } else
          result = {
            ok: true,
            status: 200,
            ...readInScope(match.handler as Parameters<typeof readInScope>[0], scope, {
              engine: live.engine,
              params: match.params,
              query: url.searchParams,
              now: options.now ?? Date.now,
            }),
          };
      }
    } else {
      // Refusals of the role and of path ids come before the body is read (H14's order), and are checked
      // again on the write's turn, against the snapshot it applies to (prepare).
      if (target.kind === "system" && grant.partitions !== null)
        checkWrite(grant, target.live.snapshot, method, path, match.params, undefined);
      const body = await writeBody(request, maxBodyBytes);
      const prepare =
        target.kind === "system" && grant.partitions !== null
          ? (o: Operation): Operation => ({
              ...o,
              body: checkWrite(grant, target.live.snapshot, method, path, match.params, o.body),
            })
          : undefined;
      result = await durable.write({ ...op, method: method as "POST" | "PUT" | "DELETE", body }, prepare);
    }
    if (!result.ok)
      throw new HttpError(result.status, REFUSAL[result.status] ?? "Refused.", toHttpIssues(result.issues));
    // After the live system's own checks (an unknown cloud node stays 404).
    const reading = match.kind === "read" ? LIVE_READINGS.get(match.handler) : undefined;
    if (reading !== undefined)
      throw new HttpError(
        501,
        `${reading} is read live from the hardware; this server is not connected to any hardware and the stored system does not hold it.`,
      );
    if ("patches" in result) {
      if (result.status === 204) return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
      return jsonResponse(result.status, result.id !== undefined ? { id: result.id } : {}, indent);
    }
    const headers =
      result.total === undefined
        ? {}
        : pageHeaders(url, {
            page: intParam(url, "page", 0),
            perPage: Math.max(1, intParam(url, "per_page", 10)),
            total: result.total,
          });
    if ("json" in result && result.json !== undefined)
      return textResponse(200, jsonTextBytes(result.json, indent), headers);
    return jsonResponse(200, result.body, indent, headers);
  }

  const webhooks = options.webhooks;
  // Registered first: the catch-all routes below would take /api/… for a system id or a panel route.
  if (webhooks !== undefined)
    registerSubscriptionRoutes(api, { webhooks, identify, maxBodyBytes, indent, now: options.now ?? Date.now });

  if (target.kind === "system") {
    const live = target.live;
    // Decisions and who-can-access are answered by the read-only handler, on the live engine.
    const engineRoutes = createHttpHandler({
      getEngine: () => live.engine,
      systemId,
      ...(authorize !== undefined ? { authorize } : {}),
      insecureNoAuth: options.insecureNoAuth === true,
      basePath,
      maxBodyBytes,
      ...(bounds.maxBatch !== undefined ? { maxBatch: bounds.maxBatch } : {}),
      indent,
      ...(options.now !== undefined ? { now: options.now } : {}),
      ...(options.onError !== undefined ? { onError: options.onError } : {}),
      ...(webhooks !== undefined
        ? {
            onDecided: (requests: readonly unknown[], decisions: readonly Decision[], engine: Engine) =>
              webhooks.recordDecisions(requests, decisions, engine.snapshot),
          }
        : {}),
    });
    // Decisions and who-can-access name holders of every partition: admin and integrator tokens only (H21).
    const engineRoute = async (request: Request, id: string): Promise<Response> => {
      if (grants !== undefined) {
        const grant = await identify(request, id);
        if (grant.partitions !== null) throw engineRouteRefusal(grant);
      }
      return engineRoutes(request);
    };
    api.all("/:systemId/decisions", (c) => engineRoute(c.req.raw, c.req.param("systemId")));
    api.all("/:systemId/decisions/explain", (c) => engineRoute(c.req.raw, c.req.param("systemId")));
    // Preview names the access of holders of every partition: admin and integrator tokens only, as decisions (X8).
    api.post("/:systemId/preview", async (c) => {
      const request = c.req.raw;
      const id = c.req.param("systemId");
      const grant = await identify(request, id);
      if (grant.partitions !== null) throw engineRouteRefusal(grant);
      if (id !== systemId)
        throw new HttpError(404, "Unknown system id.", [{ path: "system_id", message: `Unknown system id "${id}".` }]);
      checkQueryKeys(new URL(request.url).searchParams, []);
      const limits = {
        maxCost: bounds.maxPreviewCost ?? DEFAULT_PREVIEW_COST,
        maxChanges: bounds.maxPreviewChanges ?? DEFAULT_PREVIEW_CHANGES,
      };
      return jsonResponse(200, answerPreview(live, await readJsonBody(request, maxBodyBytes), limits), indent);
    });
    api.all("/:systemId/devices/:deviceId/access", (c) => engineRoute(c.req.raw, c.req.param("systemId")));
    api.all("/:systemId/*", async (c) => {
      const request = c.req.raw;
      const url = new URL(request.url);
      const rest = url.pathname.slice(basePath.length);
      const slash = rest.indexOf("/", 1);
      if (slash < 0) throw new HttpError(404, `No route for ${request.method} ${url.pathname}.`);
      let id: string;
      try {
        id = decodeURIComponent(rest.slice(1, slash));
      } catch {
        throw new HttpError(400, "The URL path has malformed percent-encoding.");
      }
      const grant = await identify(request, id);
      if (id !== systemId)
        throw new HttpError(404, "Unknown system id.", [{ path: "system_id", message: `Unknown system id "${id}".` }]);
      const path = rest.slice(slash);
      if (under(path, HOLDER_REPORTS)) return reportRoute(request, url, path.slice(HOLDER_REPORTS.length), grant);
      return pass(request, url, path, grant);
    });
  } else {
    const live = target.live;
    // seed 002 "Preview import": changes nothing, so it is not an operation of the live system (LP12).
    api.all("/api/persons/import/preview", async (c) => {
      const request = c.req.raw;
      const grant = await identify(request, systemId);
      if (grant.partitions !== null)
        throw new HttpError(403, "A 1.0 panel is served to admin and integrator tokens only.");
      if (request.method !== "POST")
        throw new HttpError(
          405,
          `${request.method} is not allowed here; use POST.`,
          [{ path: "method", message: "Use POST." }],
          { allow: "POST" },
        );
      const body = await readJsonBody(request, maxBodyBytes);
      const text = jsonText(previewPersonImport(live.snapshot, body), indent);
      // Want-Digest (RFC 3230) of any algorithm is answered with the SHA-256 of the body sent.
      const digest: Record<string, string> =
        request.headers.get("want-digest") === null
          ? {}
          : { digest: `sha-256=${createHash("sha256").update(text).digest("base64")}` };
      return textResponse(200, text, digest);
    });
    api.all("/api/*", async (c) => {
      const request = c.req.raw;
      const url = new URL(request.url);
      const path = url.pathname.slice(basePath.length);
      const grant = await identify(request, systemId);
      if (under(path, PEOPLE_REPORTS)) {
        if (grant.partitions !== null)
          throw new HttpError(403, "A 1.0 panel is served to admin and integrator tokens only.");
        return reportRoute(request, url, path.slice(PEOPLE_REPORTS.length), grant);
      }
      return pass(request, url, path, grant);
    });
  }
  return app;
}
