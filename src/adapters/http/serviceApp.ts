// The front of the service (`rsop serve --data FILE.db` holding many tenants): one request handler
// for the three hosts (semantics T50). A panel's per-node host (hostRouting.ts) and a system's
// `/{system_id}/…` go to that tenant's own app (createDataApp over its live system, loaded by the
// tenant host on first use); everything else (`/api/…`, `/healthz`, `/openapi.json`, `/docs`) to the
// accounts app. The token is resolved here first: no token or an unknown one is 401 on every host;
// a tenant outside the token's reach answers exactly as an unknown one, 404 (T51).
import { bearerToken } from "../../service/auth/bearerToken.js";
import type { Grant } from "../../service/auth/grant.js";
import { HttpError, errorResponse } from "../../service/httpError.js";
import type { TenantRow } from "../../service/store/registryStore.js";
import { authenticate } from "./authenticate.js";
import { panelTarget } from "./hostRouting.js";
import { requestAt } from "./nodeRequests.js";

/** Something that answers requests (a Hono app). */
export interface Fetcher {
  fetch(request: Request): Response | Promise<Response>;
}

/** A tenant's app while a request uses it: `release` once the answer is made. */
export interface TenantLease {
  readonly app: Fetcher;
  release(): void;
}

/** What the front needs of the service. */
export interface ServiceFront {
  /** The tenant of a system id or a panel serial number, or undefined. */
  tenantByKey(key: string): TenantRow | undefined;
  /** The serial number of the panel a Host label names, compared without case (DNS names have none), or undefined. */
  panelSerialOf(label: string): string | undefined;
  /** The grant of a token anywhere in the service (tokens file, `--token`), or null. */
  grantOf(token: string): Grant | null;
  /** Verifies a request's signed token before the synchronous lookups read it (I6); absent: nothing to verify. */
  prepare?(token: string | null): Promise<void>;
  /** The grant of a token on one tenant only (a panel token), or null. */
  tenantGrantOf(token: string, tenant: TenantRow): Grant | null;
  /** Whether a token is a tenant's own (a panel token of any panel): valid, though maybe not here. */
  isTenantToken(token: string): boolean;
  /** Whether a grant reaches an organization (its own or an ancestor's permission). */
  reaches(grant: Grant, organizationId: string): boolean;
  /** Re-reads the registry when another process changed it (replicas, T56); absent: never needed. */
  refresh?(): Promise<void>;
  /** The tenant's app, loaded if needed; the tenant stays loaded until the lease is released. */
  lease(tenant: TenantRow): Promise<TenantLease>;
  /** Answers the accounts host. */
  readonly accounts: Fetcher;
  /** JSON indentation of errors. */
  readonly indent: number;
}

/** First path segments that are never a system id (the accounts host's). */
const ACCOUNTS_SEGMENTS = new Set(["api", "oauth2", "panels", "healthz", "openapi.json", "docs", ""]);

/** The grant a tenant's app gives a token: a service-wide one that reaches its organization, or one of its own. */
export function tenantGrant(front: ServiceFront, token: string, tenant: TenantRow): Grant | null {
  const grant = front.grantOf(token);
  if (grant !== null) return front.reaches(grant, tenant.organization) ? grant : null;
  return front.tenantGrantOf(token, tenant);
}

/** The 404 of a tenant that does not exist or is out of the caller's reach (the same answer for both). */
function unknownTenant(kind: "system" | "panel", key: string): HttpError {
  return kind === "system"
    ? new HttpError(404, "Unknown system id.", [{ path: "system_id", message: `Unknown system id "${key}".` }])
    : new HttpError(404, "Unknown panel.", [{ path: "panel_id", message: `Unknown panel "${key}".` }]);
}

/** Checks the token (401) and the tenant's reach (404), then answers with the tenant's app. */
async function answerTenant(
  front: ServiceFront,
  request: Request,
  kind: "system" | "panel",
  key: string,
  forward: Request,
): Promise<Response> {
  // A key this replica does not know may have been created on another one a moment ago (T56): one re-read.
  let found = front.tenantByKey(key);
  if (found === undefined && front.refresh !== undefined) {
    await front.refresh();
    found = front.tenantByKey(key);
  }
  const tenant = found?.kind === kind ? found : undefined;
  let reached = false;
  await authenticate(
    request,
    (token) => {
      const own = tenant === undefined ? null : tenantGrant(front, token, tenant);
      reached = own !== null;
      return own !== null || front.grantOf(token) !== null || front.isTenantToken(token);
    },
    key,
  );
  if (tenant === undefined || !reached) throw unknownTenant(kind, key);
  const lease = await front.lease(tenant);
  try {
    return await lease.app.fetch(forward);
  } finally {
    lease.release();
  }
}

/** The system id a path starts with, or null for the accounts host (malformed percent-encoding: 400). */
function systemIdOf(pathname: string): string | null {
  const slash = pathname.indexOf("/", 1);
  const first = slash < 0 ? pathname.slice(1) : pathname.slice(1, slash);
  if (ACCOUNTS_SEGMENTS.has(first)) return null;
  try {
    return decodeURIComponent(first);
  } catch {
    throw new HttpError(400, "The URL path has malformed percent-encoding.");
  }
}

/** The request handler of the service's three hosts. */
export function serviceFetch(front: ServiceFront): (request: Request) => Promise<Response> {
  const isSerial = (label: string) => front.panelSerialOf(label) !== undefined;
  return async (request) => {
    try {
      await front.prepare?.(tokenOf(request));
      const url = new URL(request.url);
      const target = panelTarget(request.headers.get("host"), url.pathname, isSerial);
      const panel =
        target === null || url.pathname.startsWith("/panels/")
          ? target
          : { ...target, serial: front.panelSerialOf(target.serial)! };
      if (panel !== null) {
        const forward = requestAt(request, `${url.origin}${panel.path}${url.search}`);
        return await answerTenant(front, request, "panel", panel.serial, forward);
      }
      const systemId = systemIdOf(url.pathname);
      if (systemId !== null) return await answerTenant(front, request, "system", systemId, request);
      return await front.accounts.fetch(request);
    } catch (e) {
      if (e instanceof HttpError) return errorResponse(e, front.indent);
      throw e;
    }
  };
}

/** The bearer token of a request, or null (for callers that resolve a grant themselves). */
export function tokenOf(request: Request): string | null {
  return bearerToken(request.headers.get("authorization"));
}
