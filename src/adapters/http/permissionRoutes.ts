// The accounts host's routes of permissions and invitations (semantics I40–I59), as
// permissionDeclarations.ts declares them. Checks, in this order (as the organization routes'): the
// token (401); the organization and the permission within the caller's reach (404, the same answer as
// an unknown id); the role on that organization (403: only its admins change permissions, I47); the
// method (405 with `Allow`); the query keys (400); the body (415, 413, 400 at `body.<field>`); the
// state (409). Accepting an invitation is for the user it names (I46).
import type { Context, Env, Hono } from "hono";
import { type Grant, grantAt } from "../../service/auth/grant.js";
import { HttpError, jsonResponse } from "../../service/httpError.js";
import { userById } from "../../service/identity/accounts.js";
import {
  acceptPermission,
  createPermission,
  deletePermission,
  permissionAnswer,
  permissionById,
  permissionsOn,
  updatePermission,
} from "../../service/identity/permissions.js";
import type { PermissionRecord, UserRecord } from "../../service/identity/records.js";
import { pageHeaders } from "../../service/pageHeaders.js";
import type { Caller } from "../../service/tenants/organization.js";
import type { IdentityRouteDeps } from "./identityDeps.js";
import { refuseOtherQuery } from "./parseQuery.js";
import { readJsonBody } from "./readJsonBody.js";
import { allow } from "./dataPipeline.js";

const MAX_PER_PAGE = 100;

/** A whole-number query parameter in [min, max], or the default; 400 naming it otherwise. */
function intParam(url: URL, key: string, dflt: number, min: number, max: number): number {
  const given = url.searchParams.getAll(key);
  if (given.length === 0) return dflt;
  const raw = given[0]!;
  const n = given.length === 1 && /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max))
    throw new HttpError(400, "Invalid query parameters.", [
      { path: key, message: `Must be given once, a whole number from ${min} to ${max}.` },
    ]);
  return n;
}

const noContent = () => new Response(null, { status: 204, headers: { "cache-control": "no-store" } });

/** 403 for a change by a caller that is not an admin of the organization (I47). */
function refuseNonAdmin(at: Grant, method: string): void {
  if (method !== "GET" && at.role !== "admin")
    throw new HttpError(403, `A ${at.role} may read this organization's permissions, not change them.`);
}

/** The user an ID token stands for (I46); undefined for an application's or a tokens-file token. */
function userOf(deps: IdentityRouteDeps, grant: Grant): UserRecord | undefined {
  if (grant.permissions === undefined || grant.user === undefined) return undefined;
  return userById(deps.registry, grant.user.id);
}

/** What an admitted request found: the caller, and its grant on the organization. */
interface Admitted {
  readonly caller: Caller;
  readonly at: Grant;
}

/**
 * Token (401), then the organization within reach (404), then the permission on it when the route
 * names one (404), the role (403), the method (405) and the query keys (400).
 */
async function admit(
  deps: IdentityRouteDeps,
  c: Context,
  methods: readonly string[],
  query: readonly string[],
  permissionId?: string,
): Promise<Admitted & { permission: PermissionRecord | undefined }> {
  const { registry } = deps;
  const caller = await deps.identify(c);
  // A shared store: what another process committed is read before answering.
  await registry.refresh();
  const orgId = c.req.param("organizationId")!;
  const at =
    registry.organization(orgId) === undefined ? null : grantAt(caller.grant, orgId, (id) => registry.ancestors(id));
  if (at === null)
    throw new HttpError(404, "Unknown organization id.", [
      { path: "organization_id", message: `Unknown organization id "${orgId}".` },
    ]);
  const permission = permissionId === undefined ? undefined : permissionById(registry, permissionId);
  if (permissionId !== undefined && (permission === undefined || permission.organization !== orgId))
    throw new HttpError(404, "Unknown permission id.", [
      { path: "permission_id", message: `Unknown permission id "${permissionId}".` },
    ]);
  refuseNonAdmin(at, c.req.method);
  allow(c.req.method, methods);
  refuseOtherQuery(new URL(c.req.url), c.req.method === "GET" ? query : []);
  return { caller, at, permission };
}

/** The list and one permission of an organization. */
function organizationPermissionRoutes<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  const { registry, indent } = deps;
  app.all("/api/organizations/:organizationId/permissions", async (c) => {
    const orgId = c.req.param("organizationId");
    const { caller } = await admit(deps, c, ["GET", "POST"], ["page", "per_page"]);
    if (c.req.method === "GET") {
      const url = new URL(c.req.url);
      const page = intParam(url, "page", 0, 0, 1e9);
      const perPage = intParam(url, "per_page", 10, 1, MAX_PER_PAGE);
      const all = permissionsOn(registry, orgId);
      const rows = all.slice(page * perPage, (page + 1) * perPage).map(permissionAnswer);
      return jsonResponse(200, rows, indent, pageHeaders(url, { page, perPage, total: all.length }));
    }
    const body = await readJsonBody(c.req.raw, deps.maxBodyBytes);
    const made = await createPermission(registry, orgId, body, caller, deps.now);
    return jsonResponse(201, permissionAnswer(made), indent);
  });
  app.all("/api/organizations/:organizationId/permissions/:permissionId", async (c) => {
    const orgId = c.req.param("organizationId");
    const id = c.req.param("permissionId");
    const { caller, permission } = await admit(deps, c, ["GET", "PUT", "DELETE"], [], id);
    if (c.req.method === "GET") return jsonResponse(200, permissionAnswer(permission!), indent);
    if (c.req.method === "DELETE") {
      await deletePermission(registry, orgId, id, caller);
      return noContent();
    }
    const body = await readJsonBody(c.req.raw, deps.maxBodyBytes);
    const changed = await updatePermission(registry, orgId, id, body, caller);
    return jsonResponse(200, permissionAnswer(changed), indent);
  });
}

/**
 * `POST /api/permissions/{permission_id}/accept` (I46): a permission is visible to the user its email
 * names and to callers reaching its organization (404 for anyone else, as an unknown id); only that
 * user, by an ID token, may accept it (403); it must be an invitation not accepted yet (409).
 */
function acceptRoute<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  const { registry, indent } = deps;
  app.all("/api/permissions/:permissionId/accept", async (c) => {
    const id = c.req.param("permissionId");
    const caller = await deps.identify(c);
    await registry.refresh();
    const p = permissionById(registry, id);
    const user = userOf(deps, caller.grant);
    const visible =
      p !== undefined &&
      ((user !== undefined && user.email === p.email) ||
        grantAt(caller.grant, p.organization, (o) => registry.ancestors(o)) !== null);
    if (!visible)
      throw new HttpError(404, "Unknown permission id.", [
        { path: "permission_id", message: `Unknown permission id "${id}".` },
      ]);
    if (user === undefined || user.email !== p.email)
      throw new HttpError(403, "Only the user this invitation names may accept it.", [
        { path: "permission_id", message: "Sign in as the user with the invited email (an ID token)." },
      ]);
    allow(c.req.method, ["POST"]);
    refuseOtherQuery(new URL(c.req.url), []);
    const accepted = await acceptPermission(registry, id, user, caller, deps.now);
    return jsonResponse(200, permissionAnswer(accepted), indent);
  });
}

/** Registers the routes of permissions and invitations. */
export function registerPermissionRoutes<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  organizationPermissionRoutes(app, deps);
  acceptRoute(app, deps);
}
