// The webhook subscription routes of `rsop serve --data`, at the root of the server: 2.0
// `/api/organizations/{organization_id}/subscriptions[/{subscription_id}]`, 1.0 (`--panel`)
// `/api/ous/{organization_id}/hooks[/{webhook_id}]`, plus `…/{id}/parked` (the parked events, paged)
// and `…/{id}/parked/redeliver` (queue them again). Admin and integrator tokens only: events name
// holders of every partition (docs/semantics.md W10).
import type { Hono } from "hono";
import type { DataContext, DataEnv, PipelineObserver } from "./dataPipeline.js";
import { subscriptionRoutes } from "./routes/serviceRoutes.js";
import type { Webhooks } from "../../service/webhooks/webhookService.js";
import { parseSubscriptionBody } from "../../service/webhooks/subscription.js";
import { pageHeaders } from "./answerDeviceAccess.js";
import type { Grant } from "../../service/auth/grant.js";
import { HttpError, jsonResponse } from "../../service/httpError.js";
import { refuseOtherQuery } from "./parseQuery.js";
import { readJsonBody } from "./readJsonBody.js";

/** What the routes need of the app. */
export interface SubscriptionRouteContext {
  readonly webhooks: Webhooks;
  /** The grant of a request (401 without a valid token): the app's authentication step. */
  readonly identify: (c: DataContext, id: string) => Promise<Grant>;
  readonly observe?: PipelineObserver | undefined;
  readonly maxBodyBytes: number;
  readonly indent: number;
  readonly now: () => number;
}

const MAX_PER_PAGE = 100;

function allow(method: string, allowed: readonly string[]): void {
  if (!allowed.includes(method))
    throw new HttpError(405, `${method} is not allowed here; use ${allowed.join(", ")}.`, [], {
      allow: allowed.join(", "),
    });
}

/** A whole number query parameter in [min, max], or the default; 400 naming it otherwise. */
function intParam(url: URL, key: string, dflt: number, min: number, max: number): number {
  const raw = url.searchParams.get(key);
  if (raw === null) return dflt;
  const n = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max))
    throw new HttpError(400, "Invalid query parameters.", [
      { path: key, message: `Must be a whole number from ${min} to ${max}, not "${raw}".` },
    ]);
  return n;
}

/** The parked event ids a redeliver names (null: no body, every parked event); 400 for another body. */
async function redeliverIds(request: Request, maxBodyBytes: number): Promise<string[] | null> {
  const length = request.headers.get("content-length");
  if (length === "0" || (length === null && request.headers.get("transfer-encoding") === null)) return null;
  const body = await readJsonBody(request, maxBodyBytes);
  const list =
    typeof body === "object" && body !== null && !Array.isArray(body) ? (body as { ids?: unknown }).ids : undefined;
  const bad = !Array.isArray(list)
    ? [
        {
          path: "body.ids",
          message: "Must be an array of parked event ids (or send no body to redeliver every parked event).",
        },
      ]
    : list.flatMap((x, i) =>
        typeof x === "string" ? [] : [{ path: `body.ids[${i}]`, message: "Must be an event id (a string)." }],
      );
  if (bad.length > 0) throw new HttpError(400, "The request is invalid.", bad);
  return list as string[];
}

/** Registers the routes on `app` (before the catch-all routes of the data app). */
export function registerSubscriptionRoutes(app: Hono<DataEnv>, ctx: SubscriptionRouteContext): void {
  const { webhooks, indent } = ctx;
  // The paths are the declared ones (routes/serviceRoutes.ts); each is routed once and tells the observer.
  const declared = subscriptionRoutes(webhooks.generation);
  const base = declared[0]!.path;
  const routed = (c: DataContext, path: string) => {
    const route = declared.find((r) => r.path === path && r.method === c.req.method);
    if (route !== undefined) ctx.observe?.routed?.(route);
  };
  const idName = webhooks.generation === "2.0" ? "subscription_id" : "webhook_id";

  async function admit(c: DataContext, org: string, query: readonly string[] = []): Promise<void> {
    const request = c.req.raw;
    const grant = await ctx.identify(c, org);
    if (grant.partitions !== null)
      throw new HttpError(
        403,
        `A ${grant.role} may not manage webhook subscriptions: their events name holders of every partition.`,
      );
    if (org !== webhooks.organizationId)
      throw new HttpError(404, "Unknown organization id.", [
        { path: "organization_id", message: `Unknown organization id "${org}".` },
      ]);
    refuseOtherQuery(new URL(request.url), query);
    // Shared by several replicas (PostgreSQL): what another replica changed is read first (W15).
    await webhooks.refresh();
  }

  function unknown(id: string): HttpError {
    return new HttpError(404, "Unknown subscription id.", [
      { path: idName, message: `No subscription has the id "${id}".` },
    ]);
  }

  function context() {
    return {
      generation: webhooks.generation,
      nodeIds: webhooks.nodeIds(),
      now: ctx.now(),
      destinations: webhooks.destinations,
    };
  }

  app.all(base, async (c) => {
    const request = c.req.raw;
    routed(c, base);
    await admit(c, c.req.param("organizationId")!);
    allow(request.method, ["GET", "POST"]);
    if (request.method === "GET") return jsonResponse(200, webhooks.list(), indent);
    const parsed = parseSubscriptionBody(await readJsonBody(request, ctx.maxBodyBytes), "create", context());
    if (!parsed.ok) throw new HttpError(400, "The subscription is invalid.", parsed.issues);
    return jsonResponse(201, { id: await webhooks.create(parsed.value) }, indent);
  });

  app.all(`${base}/:subscriptionId`, async (c) => {
    const request = c.req.raw;
    routed(c, `${base}/:subscriptionId`);
    await admit(c, c.req.param("organizationId")!);
    allow(request.method, ["GET", "PUT", "DELETE"]);
    const id = c.req.param("subscriptionId")!;
    const current = webhooks.get(id);
    if (current === undefined) throw unknown(id);
    if (request.method === "GET") return jsonResponse(200, current, indent);
    if (request.method === "DELETE") {
      if (!(await webhooks.remove(id))) throw unknown(id);
      return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
    }
    const parsed = parseSubscriptionBody(await readJsonBody(request, ctx.maxBodyBytes), "update", context(), current);
    if (!parsed.ok) throw new HttpError(400, "The subscription is invalid.", parsed.issues);
    if (!(await webhooks.update(id, parsed.value))) throw unknown(id);
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  });

  app.all(`${base}/:subscriptionId/parked`, async (c) => {
    const request = c.req.raw;
    routed(c, `${base}/:subscriptionId/parked`);
    await admit(c, c.req.param("organizationId")!, ["page", "per_page"]);
    allow(request.method, ["GET"]);
    const url = new URL(request.url);
    const page = intParam(url, "page", 0, 0, 1e9);
    const perPage = intParam(url, "per_page", 10, 1, MAX_PER_PAGE);
    const id = c.req.param("subscriptionId")!;
    const found = await webhooks.parked(id, page * perPage, perPage);
    if (found === undefined) throw unknown(id);
    return jsonResponse(200, found.rows, indent, pageHeaders(url, { page, perPage, total: found.total }));
  });

  app.all(`${base}/:subscriptionId/parked/redeliver`, async (c) => {
    const request = c.req.raw;
    routed(c, `${base}/:subscriptionId/parked/redeliver`);
    await admit(c, c.req.param("organizationId")!);
    allow(request.method, ["POST"]);
    const id = c.req.param("subscriptionId")!;
    if (webhooks.get(id) === undefined) throw unknown(id);
    const ids = await redeliverIds(request, ctx.maxBodyBytes);
    const n = await webhooks.redeliver(id, ids);
    if (n === undefined) throw unknown(id);
    return jsonResponse(200, { redelivered: n }, indent);
  });
}
