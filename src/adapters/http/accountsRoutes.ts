// The accounts host's organization and panel routes (semantics T10–T29): 2.0 `/api/organizations…`,
// 1.0 `/api/ous…` and the registration of 1.0 panels `/api/ous/{id}/panels`, `/api/panels/{id}…`,
// over the tenant registry. Every route checks, in this order: the token (401), that the
// organization or panel is within the token's reach (404, the same answer as an unknown id), the
// role (403: writes are admin and integrator only), the method (405 with `Allow`), the query keys
// (400), the body (415, 413, 400 at `body.<field>`), then the state (409).
import type { Context, Env, Hono } from "hono";
import { type Grant, grantAt, reaches } from "../../service/auth/grant.js";
import { HttpError, jsonResponse } from "../../service/httpError.js";
import type { OrganizationRow, TenantRow } from "../../service/store/registryStore.js";
import type { Caller, Generation } from "../../service/tenants/organization.js";
import {
  type Viewer,
  byNameThenId,
  createdShape,
  mine,
  organizationShape,
  panelAccount,
  panelsOf,
  searchEntities,
} from "../../service/tenants/orgShapes.js";
import type { TenantRegistry } from "../../service/tenants/registry.js";
import { authenticate } from "./authenticate.js";
import { nodeBodyOf } from "./nodeRequests.js";
import { refuseOtherQuery } from "./parseQuery.js";
import { readJsonBody } from "./readJsonBody.js";
import { allow } from "./dataPipeline.js";

/** What the routes need. */
export interface AccountsRouteDeps {
  readonly registry: TenantRegistry;
  /** The caller of a request: its token's grant (HttpError 401 without a valid token) and client info. */
  readonly identify?: (c: Context) => Promise<Caller>;
  /** Without `identify`: the grant of a token (identifyByToken makes the caller from it). */
  readonly grantOf?: (token: string) => Grant | null;
  /** The tokens file's grants, in file order: the `permissions` organizations list (T11). */
  readonly permissions?: readonly Grant[];
  readonly indent: number;
  readonly maxBodyBytes: number;
  /** The service's public address (`--public-url`); default the request's origin (T21). */
  readonly publicUrl?: string | ((c: Context) => string);
}

/** The media type 1.0 `/mine` and `/mine/search` answer with, and require in `Accept` (T24). */
export const V2_MEDIA_TYPE = "application/vnd.service.v2+json";

/** An identify for a grant lookup: the bearer token (401 as on every route), the socket's address and `User-Agent`. */
export function identifyByToken(grantOf: (token: string) => Grant | null): (c: Context) => Promise<Caller> {
  return async (c) => {
    const request = c.req.raw;
    let grant: Grant | null = null;
    await authenticate(
      request,
      (token) => {
        grant = grantOf(token);
        return grant !== null;
      },
      "",
    );
    // The IncomingMessage listenOn registered (nodeRequests.ts) knows the socket; another request has no address.
    const incoming = nodeBodyOf(request) as { socket?: { remoteAddress?: string } } | undefined;
    return {
      grant: grant!,
      clientInfo: { ipAddress: incoming?.socket?.remoteAddress ?? null, userAgent: request.headers.get("user-agent") },
    };
  };
}

const WRITERS = new Set(["admin", "integrator"]);

/** 403 for a write by a role that may only read. */
function refuseReader(grant: Grant, method: string): void {
  if (method !== "GET" && !WRITERS.has(grant.role))
    throw new HttpError(403, `A ${grant.role} may read organizations and panels, not change them.`);
}

/** Whether `Accept` lists the 2.0-versioned media type with a q other than 0 (T24). */
export function acceptsV2(header: string | null): boolean {
  if (header === null) return false;
  return header.split(",").some((range) => {
    const [type, ...params] = range.split(";").map((s) => s.trim().toLowerCase());
    if (type !== V2_MEDIA_TYPE) return false;
    const q = params.find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

const noContent = () => new Response(null, { status: 204, headers: { "cache-control": "no-store" } });

/** What the route handlers share. */
interface Routes {
  readonly deps: AccountsRouteDeps;
  readonly registry: TenantRegistry;
  readonly indent: number;
  viewer(c: Context, grant: Grant): Viewer;
  visibleOrg(grant: Grant, id: string, param: string): OrganizationRow;
  visiblePanel(grant: Grant, serial: string): TenantRow;
  /** Token, then reach (what `reach` checks), then role, method and query keys. */
  admit<T>(
    c: Context,
    reach: (grant: Grant) => T,
    methods: readonly string[],
    query?: readonly string[],
  ): Promise<{ caller: Caller; found: T }>;
  body(c: Context): Promise<unknown>;
}

/** The organization a route's target is (an organization) or belongs to (a panel); undefined for none. */
function organizationOf(found: unknown): string | undefined {
  if (typeof found !== "object" || found === null) return undefined;
  const f = found as { id?: unknown; organization?: unknown; parent?: unknown };
  if (typeof f.organization === "string") return f.organization;
  return typeof f.id === "string" && "parent" in f ? f.id : undefined;
}

function routesOf(deps: AccountsRouteDeps): Routes {
  const { registry, publicUrl } = deps;
  const permissions = deps.permissions ?? [];
  const ancestorsOf = (id: string) => registry.ancestors(id);
  const grantOf = deps.grantOf;
  const identify = deps.identify ?? (grantOf !== undefined ? identifyByToken(grantOf) : undefined);
  if (identify === undefined) throw new Error("registerAccountsRoutes: give identify or grantOf");
  const urlOf = (c: Context) =>
    (typeof publicUrl === "function" ? publicUrl(c) : publicUrl) ?? new URL(c.req.url).origin;
  return {
    deps,
    registry,
    indent: deps.indent,
    viewer: (c, grant) => ({ grant, permissions, publicUrl: urlOf(c) }),
    visibleOrg(grant, id, param) {
      const org = registry.organization(id);
      if (org === undefined || !reaches(grant, id, ancestorsOf))
        throw new HttpError(404, "Unknown organization id.", [
          { path: param, message: `Unknown organization id "${id}".` },
        ]);
      return org;
    },
    visiblePanel(grant, serial) {
      const t = registry.tenantByKey(serial);
      if (t === undefined || t.kind !== "panel" || !reaches(grant, t.organization, ancestorsOf))
        throw new HttpError(404, "Unknown panel.", [{ path: "panel_id", message: `Unknown panel "${serial}".` }]);
      return t;
    },
    async admit(c, reach, methods, query = []) {
      const caller = await identify(c);
      // A shared store: what another process committed is read before answering.
      await registry.refresh();
      const found = reach(caller.grant);
      // The role that counts is the one on the organization the route is about (I3).
      const at = organizationOf(found);
      const grant = at === undefined ? caller.grant : (grantAt(caller.grant, at, ancestorsOf) ?? caller.grant);
      refuseReader(grant, c.req.method);
      allow(c.req.method, methods);
      refuseOtherQuery(new URL(c.req.url), query);
      return { caller, found };
    },
    body: (c) => readJsonBody(c.req.raw, deps.maxBodyBytes),
  };
}

/** The eight organization routes of one generation (the seed's nine: `/{customer_id}` is `/{organization_id}`). */
function organizationRoutes<E extends Env>(app: Hono<E>, r: Routes, generation: Generation): void {
  const { registry, indent } = r;
  const base = generation === "2.0" ? "/api/organizations" : "/api/ous";
  const v1 = generation === "1.0";
  const mineAnswer = (value: unknown) => {
    const answer = jsonResponse(200, value, indent);
    // The 1.0 lists answer in the media type they are versioned by (T24).
    if (v1) answer.headers.set("content-type", `${V2_MEDIA_TYPE}; charset=utf-8`);
    return answer;
  };
  const requireAccept = (c: Context) => {
    if (v1 && !acceptsV2(c.req.header("accept") ?? null))
      throw new HttpError(406, `Send "Accept: ${V2_MEDIA_TYPE}": this list is versioned by it.`, [
        { path: "headers.accept", message: `Must list ${V2_MEDIA_TYPE}.` },
      ]);
  };
  const shape = (c: Context, grant: Grant, org: OrganizationRow) =>
    organizationShape(registry, org, generation, r.viewer(c, grant));

  app.all(`${base}/mine`, async (c) => {
    const { caller } = await r.admit(c, () => undefined, ["GET"]);
    requireAccept(c);
    return mineAnswer(mine(registry, caller.grant, registry.root()).map((o) => shape(c, caller.grant, o)));
  });
  app.all(`${base}/mine/search`, async (c) => {
    const { caller } = await r.admit(c, () => undefined, ["GET"], ["q"]);
    requireAccept(c);
    const roots = mine(registry, caller.grant, registry.root()).map((o) => o.id);
    return mineAnswer(searchEntities(registry, roots, c.req.query("q") ?? "", generation, true));
  });
  app.all(`${base}/:organizationId`, async (c) => {
    const id = c.req.param("organizationId");
    const { caller, found } = await r.admit(c, (g) => r.visibleOrg(g, id, "organization_id"), ["GET"]);
    return jsonResponse(200, shape(c, caller.grant, found), indent);
  });
  app.all(`${base}/:organizationId/search`, async (c) => {
    const id = c.req.param("organizationId");
    await r.admit(c, (g) => r.visibleOrg(g, id, "organization_id"), ["GET"], ["q"]);
    return jsonResponse(200, searchEntities(registry, [id], c.req.query("q") ?? "", generation, false), indent);
  });
  app.all(`${base}/:dealerId/children`, async (c) => {
    const id = c.req.param("dealerId");
    const { caller, found } = await r.admit(c, (g) => r.visibleOrg(g, id, "dealer_id"), ["GET", "POST"]);
    if (c.req.method === "GET") {
      const children = registry.children(found.id).sort(byNameThenId);
      return jsonResponse(
        200,
        children.map((o) => shape(c, caller.grant, o)),
        indent,
      );
    }
    const made = await registry.createOrganization(id, await r.body(c), caller, generation);
    return jsonResponse(201, createdShape(registry, made, generation, r.viewer(c, caller.grant)), indent);
  });
  app.all(`${base}/:dealerId/children/:customerId`, async (c) => {
    const dealer = c.req.param("dealerId");
    const customer = c.req.param("customerId");
    const { caller } = await r.admit(
      c,
      (g) => {
        r.visibleOrg(g, dealer, "dealer_id");
        const org = registry.organization(customer);
        if (org === undefined || org.parent !== dealer)
          throw new HttpError(404, "Unknown customer id.", [
            { path: "customer_id", message: `"${customer}" is not a child of "${dealer}".` },
          ]);
        return org;
      },
      ["PUT", "DELETE"],
    );
    if (c.req.method === "PUT") await registry.updateOrganization(dealer, customer, await r.body(c), caller);
    else await registry.deleteOrganization(dealer, customer, caller);
    return noContent();
  });
}

/** The six panel registration routes (1.0). */
function panelRoutes<E extends Env>(app: Hono<E>, r: Routes): void {
  const { registry, indent } = r;
  app.all("/api/ous/:organizationId/panels", async (c) => {
    const id = c.req.param("organizationId");
    const { caller, found } = await r.admit(c, (g) => r.visibleOrg(g, id, "organization_id"), ["GET", "POST"]);
    const viewer = r.viewer(c, caller.grant);
    if (c.req.method === "GET")
      return jsonResponse(
        200,
        panelsOf(registry, found).map((t) => panelAccount(t, viewer.publicUrl)),
        indent,
      );
    await registry.registerPanel(id, await r.body(c), caller);
    return jsonResponse(201, organizationShape(registry, registry.organization(id)!, "1.0", viewer), indent);
  });
  app.all("/api/panels/:panelId", async (c) => {
    const serial = c.req.param("panelId");
    const { caller, found } = await r.admit(c, (g) => r.visiblePanel(g, serial), ["GET", "PUT", "DELETE"]);
    if (c.req.method === "GET")
      return jsonResponse(200, panelAccount(found, r.viewer(c, caller.grant).publicUrl), indent);
    if (c.req.method === "PUT") await registry.updatePanel(serial, await r.body(c), caller);
    else await registry.deletePanel(serial, caller);
    return noContent();
  });
  app.all("/api/panels/:panelId/token", async (c) => {
    const serial = c.req.param("panelId");
    const { caller } = await r.admit(c, (g) => r.visiblePanel(g, serial), ["POST"]);
    return jsonResponse(200, { token: await registry.createPanelToken(serial, caller) }, indent);
  });
}

/**
 * Registers the routes on `app` (the accounts host's app, whose onError answers HttpError), as
 * accountsDeclarations.ts declares them.
 */
export function registerAccountsRoutes<E extends Env>(app: Hono<E>, deps: AccountsRouteDeps): void {
  const r = routesOf(deps);
  organizationRoutes(app, r, "2.0");
  organizationRoutes(app, r, "1.0");
  panelRoutes(app, r);
}
