// The webhook subscription routes of `rsop serve --data`, at the root of the server: 2.0
// `/api/organizations/{organization_id}/subscriptions[/{subscription_id}]`, 1.0 (`--panel`)
// `/api/ous/{organization_id}/hooks[/{webhook_id}]`, plus `…/{id}/parked` (the parked events, paged)
// and `…/{id}/parked/redeliver` (queue them again). Admin and integrator tokens only: events name
// holders of every partition (docs/semantics.md W10). The service serves both generations' routes
// for every organization in a caller's reach (T45); a server of one system or panel, its own.
import type { Hono } from "hono";
import type { Generation } from "../../events/topics.js";
import type { DataContext, DataEnv, PipelineObserver } from "./dataPipeline.js";
import { subscriptionRoutes } from "./routes/serviceRoutes.js";
import type { OrganizationSubscriptions, Webhooks } from "../../service/webhooks/webhookService.js";
import { parseSubscriptionBody } from "../../service/webhooks/subscription.js";
import { pageHeaders } from "./answerDeviceAccess.js";
import type { Grant } from "../../service/auth/grant.js";
import { HttpError, jsonResponse } from "../../service/httpError.js";
import { refuseOtherQuery } from "./parseQuery.js";
import { readJsonBody } from "./readJsonBody.js";
import { allow } from "./dataPipeline.js";

/** What the routes need of the app. */
export interface SubscriptionRouteContext {
  readonly webhooks: Webhooks;
  /**
   * The service's: the grant of a request on organization `id`, refusing (HttpError) 401 without a
   * valid token and 404 for an unknown organization or one out of the caller's reach (T45).
   */
  readonly organization?: (c: DataContext, id: string) => Promise<Grant>;
  /**
   * A server of one system or panel's (when `organization` is not given): the grant of a request (401
   * without a valid token); any organization but its own is unknown.
   */
  readonly identify?: (c: DataContext, id: string) => Promise<Grant>;
  /** The generations whose routes are served; default the one of a server of one system or panel. */
  readonly generations?: readonly Generation[];
  readonly observe?: PipelineObserver | undefined;
  readonly maxBodyBytes: number;
  readonly indent: number;
  readonly now: () => number;
}

const MAX_PER_PAGE = 100;

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
  if (ctx.organization === undefined && ctx.identify === undefined)
    throw new Error("registerSubscriptionRoutes: give organization or identify");
  for (const generation of ctx.generations ?? [ctx.webhooks.generation]) registerGeneration(app, ctx, generation);
}

/** The grant of a request on organization `org` (401, 404), then the role (403): an organization's subscriptions. */
async function admitted(
  ctx: SubscriptionRouteContext,
  c: DataContext,
  org: string,
  generation: Generation,
): Promise<OrganizationSubscriptions> {
  const { webhooks } = ctx;
  const unknownOrganization = () =>
    new HttpError(404, "Unknown organization id.", [
      { path: "organization_id", message: `Unknown organization id "${org}".` },
    ]);
  const grant = ctx.organization !== undefined ? await ctx.organization(c, org) : await ctx.identify!(c, org);
  if (grant.partitions !== null)
    throw new HttpError(
      403,
      `A ${grant.role} may not manage webhook subscriptions: their events name holders of every partition.`,
    );
  if (webhooks.scope(org) === undefined) throw unknownOrganization();
  return webhooks.subscriptionsOf(org, generation);
}

function registerGeneration(app: Hono<DataEnv>, ctx: SubscriptionRouteContext, generation: Generation): void {
  const { webhooks, indent } = ctx;
  // The paths are the declared ones (routes/serviceRoutes.ts); each is routed once and tells the observer.
  const declared = subscriptionRoutes(generation);
  const base = declared[0]!.path;
  const routed = (c: DataContext, path: string) => {
    const route = declared.find((r) => r.path === path && r.method === c.req.method);
    if (route !== undefined) ctx.observe?.routed?.(route);
  };
  const idName = generation === "2.0" ? "subscription_id" : "webhook_id";

  async function admit(c: DataContext, query: readonly string[] = []): Promise<OrganizationSubscriptions> {
    const subs = await admitted(ctx, c, c.req.param("organizationId")!, generation);
    refuseOtherQuery(new URL(c.req.raw.url), query);
    // Shared by several replicas (PostgreSQL): what another replica changed is read first (W15).
    await webhooks.refresh();
    return subs;
  }

  function unknown(id: string): HttpError {
    return new HttpError(404, "Unknown subscription id.", [
      { path: idName, message: `No subscription has the id "${id}".` },
    ]);
  }

  function context(subs: OrganizationSubscriptions) {
    return { generation, nodeIds: subs.nodeIds(), now: ctx.now(), destinations: webhooks.destinations };
  }

  app.all(base, async (c) => {
    const request = c.req.raw;
    routed(c, base);
    const subs = await admit(c);
    allow(request.method, ["GET", "POST"]);
    if (request.method === "GET") return jsonResponse(200, subs.list(), indent);
    const parsed = parseSubscriptionBody(await readJsonBody(request, ctx.maxBodyBytes), "create", context(subs));
    if (!parsed.ok) throw new HttpError(400, "The subscription is invalid.", parsed.issues);
    return jsonResponse(201, { id: await subs.create(parsed.value) }, indent);
  });

  app.all(`${base}/:subscriptionId`, async (c) => {
    const request = c.req.raw;
    routed(c, `${base}/:subscriptionId`);
    const subs = await admit(c);
    allow(request.method, ["GET", "PUT", "DELETE"]);
    const id = c.req.param("subscriptionId")!;
    const current = subs.get(id);
    if (current === undefined) throw unknown(id);
    if (request.method === "GET") return jsonResponse(200, current, indent);
    if (request.method === "DELETE") {
      if (!(await subs.remove(id))) throw unknown(id);
      return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
    }
    const body = await readJsonBody(request, ctx.maxBodyBytes);
    const parsed = parseSubscriptionBody(body, "update", context(subs), current);
    if (!parsed.ok) throw new HttpError(400, "The subscription is invalid.", parsed.issues);
    if (!(await subs.update(id, parsed.value))) throw unknown(id);
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  });

  app.all(`${base}/:subscriptionId/parked`, async (c) => {
    const request = c.req.raw;
    routed(c, `${base}/:subscriptionId/parked`);
    const subs = await admit(c, ["page", "per_page"]);
    allow(request.method, ["GET"]);
    const url = new URL(request.url);
    const page = intParam(url, "page", 0, 0, 1e9);
    const perPage = intParam(url, "per_page", 10, 1, MAX_PER_PAGE);
    const id = c.req.param("subscriptionId")!;
    const found = await subs.parked(id, page * perPage, perPage);
    if (found === undefined) throw unknown(id);
    return jsonResponse(200, found.rows, indent, pageHeaders(url, { page, perPage, total: found.total }));
  });

  app.all(`${base}/:subscriptionId/parked/redeliver`, async (c) => {
    const request = c.req.raw;
    routed(c, `${base}/:subscriptionId/parked/redeliver`);
    const subs = await admit(c);
    allow(request.method, ["POST"]);
    const id = c.req.param("subscriptionId")!;
    if (subs.get(id) === undefined) throw unknown(id);
    const ids = await redeliverIds(request, ctx.maxBodyBytes);
    const n = await subs.redeliver(id, ids);
    if (n === undefined) throw unknown(id);
    return jsonResponse(200, { redelivered: n }, indent);
  });
}
