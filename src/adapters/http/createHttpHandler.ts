// The HTTP adapter: the 2.0 systems API's RSOP routes plus decisions and who-can-access, as one web-standard
// `(Request) => Promise<Response>` function. It runs under Node's http server (through
// @hono/node-server, see startServer.ts), Hono, Deno, Bun or an edge runtime: nothing here imports
// a Node module.
//
// Order of checks, each answered before the next is looked at:
//   base path and route shape (404) → method (405) → Authorization header (401) → authorize (401
//   invalid_token, 403 insufficient_scope) → system id (404) → query or body (400, 413, 415)
//   → engine query (404 naming unknown ids).
// The system id is compared only after `authorize` accepted the token for it, so a caller learns
// nothing about which systems exist here unless allowed to ask about them.
import type { Engine, RsopResult } from "../../evaluate/index.js";
import type { Decision } from "../../model/index.js";
import { answerDecisions, answerExplain } from "./answerDecisions.js";
import { answerDeviceAccess, pageHeaders } from "./answerDeviceAccess.js";
import { answerRsop } from "./answerRsop.js";
import { type AuthorizeAnswer, authenticate } from "./authenticate.js";
import { HttpError, errorResponse, jsonResponse, queryHttpError } from "../../service/httpError.js";
import { type RouteName, matchEngineRoute, normalizeBasePath, pathSegments } from "./matchEngineRoute.js";
import { jsonAnswer } from "./nodeRequests.js";
import { readJsonBody } from "./readJsonBody.js";
import { parseQuery } from "./parseQuery.js";
import { engineRouteRefusal, hiddenRsopIds, rsopInScope, scopeOf } from "../../service/auth/scope.js";
import { ADMIN, type Grant } from "../../service/auth/grant.js";

/** A web-standard request handler: what `createHttpHandler` returns. */
export type HttpHandler = (request: Request) => Promise<Response>;

export type { AuthorizeAnswer };

/** Options of createHttpHandler. */
export interface HttpHandlerOptions {
  /**
   * The engine to answer with. Called once at the start of every request, and that engine answers
   * the whole request, so a server can swap engines atomically by changing what this returns.
   */
  readonly getEngine: () => Engine;
  /** The system id served (the `{system_id}` of every route); default: the engine snapshot's `systemId`. */
  readonly systemId?: string;
  /**
   * Whether a bearer token may query a system: `true` lets the request through; `false` means the
   * token is not valid (401 with `WWW-Authenticate: Bearer error="invalid_token"`, RFC 6750 §3.1);
   * `"forbidden"` means a valid token that may not query this system (403, `insufficient_scope`).
   * Default: deny everything (401), so forgetting this option never opens a server.
   */
  readonly authorize?: (token: string, systemId: string) => AuthorizeAnswer | Promise<AuthorizeAnswer>;
  /**
   * Instead of `authorize`: the grant of a bearer token (null: invalid, 401). A manager or reporter
   * gets RSOP of the holders of its partitions only and no decisions or who-can-access (403);
   * semantics H19, H21.
   */
  readonly grants?: (token: string) => Grant | null;
  /**
   * Serve without any authentication: no Authorization header is needed and `authorize` is never
   * called. Only for local experiments; default false.
   */
  readonly insecureNoAuth?: boolean;
  /** Prefix of every route, e.g. `/v2`; default `""`. */
  readonly basePath?: string;
  /** Largest accepted request body in bytes; default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Most holder ids one RSOP request may name (after removing repeats); default 100. */
  readonly maxIds?: number;
  /**
   * Most access requests one `POST /decisions` batch may hold (HP3); a longer one is answered 413.
   * Default: 10,000 per started MiB of maxBodyBytes (10,000 at the default 1 MiB).
   */
  readonly maxBatch?: number;
  /** JSON indentation of answers; default 2 (as `rsop rsop` prints), 0 for compact. */
  readonly indent?: number;
  /** The instant used when a request gives no `at`; default `Date.now`. */
  readonly now?: () => number;
  /** Told about every unexpected error (answered 500 with a generic message); default: ignored. */
  readonly onError?: (error: unknown, request: Request) => void;
  /**
   * Told the requests and decisions of every answered `POST /decisions`, before the answer is sent
   * (the answer waits for its promise; a rejection answers 500). The service stores access events here.
   */
  readonly onDecided?: (
    requests: readonly unknown[],
    decisions: readonly Decision[],
    engine: Engine,
  ) => void | Promise<void>;
}

const MIB = 1024 * 1024;
/**
 * Default of maxBatch per started MiB of the body bound: 10,000 decisions take about 20–60 ms, while
 * a MiB holds up to ~28,000 of the smallest requests (HP3). Scaled, so a larger --max-body still
 * takes the batches it was raised for.
 */
const BATCH_PER_MIB = 10_000;

function positiveInteger(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v < 1)
    throw new RangeError(`createHttpHandler: ${name} must be a positive integer, got ${String(v)}`);
  return v;
}

function denyAll(): boolean {
  return false;
}

/**
 * Creates the HTTP adapter: a web-standard `(Request) => Promise<Response>` serving, below
 * `basePath`, `GET /{system_id}/rsop/holders?ids=a,b[&at=…]`,
 * `GET /{system_id}/cloud-nodes/{cloud_node_id}/rsop/holders?ids=…[&at=…]` (the RSOP
 * result, exactly as `engine.rsop` returns it), `POST /{system_id}/decisions` (one access request or
 * an array → one decision or an array), `POST /{system_id}/decisions/explain` (one access request →
 * `{ decision, trace }`, as `engine.explain` returns it) and `GET /{system_id}/devices/{device_id}/access[?at=…]`
 * (`engine.whoCanAccess`, paged by `page` from 0 and `per_page` up to 100, default 10, with
 * `X-Total-Count` and `Link` headers). Every request needs `Authorization: Bearer <token>` accepted by
 * `authorize` (401 without one or when refused, 403 when `authorize` answers "forbidden"). Errors are JSON
 * `{ "error": { "status", "message", "issues": [{ "path", "message" }] } }` with status 400, 401,
 * 403, 404, 405 (with `Allow`), 413, 415 or 500; never a stack trace.
 * @param options - `getEngine` (called once per request), `authorize`, and optional `systemId`,
 *   `basePath`, `maxBodyBytes`, `maxIds`, `maxBatch`, `indent`, `now`, `onError`.
 * @returns the handler; it never throws or rejects.
 * @throws RangeError when a numeric option is not a positive integer.
 * @example
 * const engine = loadEngineOrThrow(JSON.parse(readFileSync("examples/building.json", "utf8")));
 * const handle = createHttpHandler({ getEngine: () => engine, authorize: (token) => token === process.env.RSOP_TOKEN });
 * const res = await handle(new Request(`http://localhost/${engine.snapshot.systemId}/rsop/holders?ids=holder-0001&at=2026-04-15T14:15:00Z`, {
 *   headers: { authorization: `Bearer ${process.env.RSOP_TOKEN}` },
 * }));
 * res.status; //=> 200
 * (await res.json()).holders[0].id; //=> "holder-0001"
 */
export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  const { getEngine } = options;
  if (typeof getEngine !== "function") throw new TypeError("createHttpHandler: getEngine must be a function");
  const basePath = normalizeBasePath(options.basePath ?? "");
  const grants = options.grants;
  const authorize = grants !== undefined ? (token: string) => grants(token) !== null : (options.authorize ?? denyAll);
  const insecure = options.insecureNoAuth === true;
  const { maxBodyBytes, maxIds, maxBatch, indent, now } = engineRouteConfig(options);
  const onError = options.onError;

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const segments = pathSegments(url.pathname, basePath);
    if (segments === "malformed") throw new HttpError(400, "The URL path has malformed percent-encoding.");
    const route = segments === null ? null : matchEngineRoute(segments);
    if (route === null) throw new HttpError(404, `No route for ${request.method} ${url.pathname}.`);
    if (request.method !== route.method)
      throw new HttpError(405, `${request.method} is not allowed here; use ${route.method}.`, [], {
        allow: route.method,
      });

    let grant: Grant = ADMIN;
    if (!insecure && grants !== undefined)
      await authenticate(
        request,
        (token) => {
          const found = grants(token);
          if (found !== null) grant = found;
          return found !== null;
        },
        route.systemId,
      );
    else if (!insecure) await authenticate(request, authorize, route.systemId);

    // One engine for the rest of the request, even if the server swaps in another meanwhile.
    const engine = getEngine();
    const systemId = options.systemId ?? engine.snapshot.systemId;
    if (route.systemId !== systemId)
      throw new HttpError(404, "Unknown system id.", [
        { path: "system_id", message: `Unknown system id "${route.systemId}".` },
      ]);

    return answerEngineRoute({ name: route.name, id: route.id }, request, url, engine, grant, {
      maxIds,
      maxBatch,
      maxBodyBytes,
      indent,
      now,
      onDecided: options.onDecided,
    });
  }

  return async (request) => {
    try {
      return await handle(request);
    } catch (e) {
      if (e instanceof HttpError) return errorResponse(e, indent);
      try {
        onError?.(e, request);
      } catch {
        // A failing logger must not turn a 500 into a crash.
      }
      return errorResponse(new HttpError(500, "Internal server error."), indent);
    }
  };
}

/**
 * The bounds of the engine routes from the handler's options, with their defaults.
 * @throws RangeError when a numeric option is not a positive integer.
 */
export function engineRouteConfig(
  options: Pick<HttpHandlerOptions, "maxBodyBytes" | "maxIds" | "maxBatch" | "indent" | "now" | "onDecided">,
): EngineRouteConfig {
  const maxBodyBytes = positiveInteger("maxBodyBytes", options.maxBodyBytes, MIB);
  return {
    maxBodyBytes,
    maxIds: positiveInteger("maxIds", options.maxIds, 100),
    maxBatch: positiveInteger("maxBatch", options.maxBatch, BATCH_PER_MIB * Math.ceil(maxBodyBytes / MIB)),
    indent: options.indent ?? 2,
    now: options.now ?? Date.now,
    onDecided: options.onDecided,
  };
}

/** What answering an engine route needs besides the request. */
export interface EngineRouteConfig {
  readonly maxIds: number;
  readonly maxBatch: number;
  readonly maxBodyBytes: number;
  readonly indent: number;
  readonly now: () => number;
  readonly onDecided?: HttpHandlerOptions["onDecided"] | undefined;
}

/** Decisions and explain take no query parameter: each one given is a 400 naming it. */
function refuseAnyQuery(url: URL): void {
  if (url.search === "") return;
  const keys = [...new Set(url.searchParams.keys())];
  if (keys.length > 0)
    throw new HttpError(
      400,
      "Invalid query parameters.",
      keys.map((k) => ({ path: k, message: "Unknown query parameter; this route takes none." })),
    );
}

/**
 * Answers one engine route, already routed and authenticated (the grant is the token's): RSOP on the
 * token's view, or decisions, explain and who-can-access for admin and integrator tokens (H21).
 */
export async function answerEngineRoute(
  route: { readonly name: RouteName; readonly id: string | null },
  request: Request,
  url: URL,
  engine: Engine,
  grant: Grant,
  cfg: EngineRouteConfig,
): Promise<Response> {
  const { maxIds, maxBatch, maxBodyBytes, indent, now } = cfg;
  const options = { onDecided: cfg.onDecided };
  if (grant.partitions !== null) {
    if (route.name === "deviceAccess" || route.name === "decisions" || route.name === "explain")
      throw engineRouteRefusal(grant);
    const issues = hiddenRsopIds(
      scopeOf(engine.snapshot, grant),
      engine.snapshot,
      parseQuery(url.searchParams, true, maxIds, now).ids,
    );
    if (issues !== null) throw queryHttpError(issues, { cloudNodeId: "cloud_node_id" });
  }
  // A manager's or reporter's RSOP names only groups and rules of its partitions (HS3).
  const shape =
    grant.partitions === null ? undefined : (r: RsopResult) => rsopInScope(scopeOf(engine.snapshot, grant), r);
  switch (route.name) {
    case "rsopHolders":
      return answerRsop(engine, url.searchParams, null, maxIds, now, indent, shape);
    case "nodeRsopHolders":
      return answerRsop(engine, url.searchParams, route.id, maxIds, now, indent, shape);
    case "deviceAccess": {
      const page = answerDeviceAccess(engine, url.searchParams, route.id!, now);
      return jsonResponse(200, page.result, indent, pageHeaders(url, page));
    }
    case "decisions": {
      refuseAnyQuery(url);
      const body = await readJsonBody(request, maxBodyBytes);
      const answer = await answerDecisions(engine, body, maxBatch);
      if (options.onDecided !== undefined)
        await options.onDecided(Array.isArray(body) ? body : [body], Array.isArray(answer) ? answer : [answer], engine);
      return jsonAnswer(request, 200, answer, indent);
    }
    case "explain": {
      refuseAnyQuery(url);
      const body = await readJsonBody(request, maxBodyBytes);
      return jsonAnswer(request, 200, answerExplain(engine, body), indent);
    }
  }
}
