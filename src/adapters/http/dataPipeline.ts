// The request pipeline of `rsop serve --data` on hono: every declared route registered once (one
// hono route per path, the methods of that path dispatched by a lookup), one authentication step
// that puts the token's grant on the request context, and an observer that tests use to count how
// often a request is routed and authenticated.
import type { Context, Hono } from "hono";
import { type Grant, ADMIN } from "../../service/auth/grant.js";
import { HttpError } from "../../service/httpError.js";
import { type Authorize, authenticate } from "./authenticate.js";
import { type DeclaredRoute, literalSegments } from "./routes/declaredRoute.js";

/** What the pipeline keeps on a request's context. */
export interface DataEnv {
  Variables: { grant: Grant };
}

export type DataContext = Context<DataEnv>;

/** Told each time a request is routed (once per request) and each time a token is resolved (once). */
export interface PipelineObserver {
  readonly routed?: (route: DeclaredRoute) => void;
  readonly authorized?: (grant: Grant) => void;
}

/** How a server resolves tokens: none needed, one token (`authorize`), or a grant per token. */
export interface TokenCheck {
  readonly insecure: boolean;
  readonly authorize?: Authorize | undefined;
  readonly grants?: ((token: string) => Grant | null) | undefined;
  readonly observer?: PipelineObserver | undefined;
}

/**
 * The authentication step: the grant of the request's bearer token (401 as H1 when there is none or
 * it is invalid), resolved once per request and kept on the context (`c.get("grant")`); every
 * request is an admin's without authentication or with a single token.
 */
export async function authenticateRequest(c: DataContext, check: TokenCheck, id: string): Promise<Grant> {
  const known = c.get("grant");
  if (known !== undefined) return known;
  const grant = check.insecure ? ADMIN : await resolveGrant(c.req.raw, check, id);
  check.observer?.authorized?.(grant);
  c.set("grant", grant);
  return grant;
}

async function resolveGrant(request: Request, check: TokenCheck, id: string): Promise<Grant> {
  const grants = check.grants;
  if (grants === undefined) {
    await authenticate(request, check.authorize ?? (() => false), id);
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
  return grant ?? ADMIN;
}

/** A declared route, as served. */
export interface Served {
  readonly route: DeclaredRoute;
}

/**
 * The routes of one path, answered by one hono route: `handle` runs the checks of its kind in their
 * order, and calls `answer` with the route of the request's method (undefined: another method).
 */
export interface ServedPath {
  readonly path: string;
  readonly routes: readonly Served[];
  readonly handle: (
    c: DataContext,
    served: Served | undefined,
    allowed: readonly string[],
    path: string,
  ) => Promise<Response>;
}

/** Methods in the order a 405 names them. */
const ORDER = ["GET", "POST", "PUT", "DELETE"];

/** The 405 of a path that takes other methods (with `Allow`). */
export function methodRefusal(method: string, allowed: readonly string[]): HttpError {
  return new HttpError(405, `${method} is not allowed here; use ${allowed.join(", ")}.`, [], {
    allow: allowed.join(", "),
  });
}

/** Throws the 405 of `method` on a path that takes only `allowed`. */
export function allow(method: string, allowed: readonly string[]): void {
  if (!allowed.includes(method)) throw methodRefusal(method, allowed);
}

/**
 * Registers every path on `api`: the most literal first, so that of two paths matching a request the
 * one with more literal segments answers it whatever the method (`GET …/custom-fields/all` is a 405,
 * not a custom field named "all"), as the live systems' route tables decide.
 */
export function registerPaths(api: Hono<DataEnv>, paths: readonly ServedPath[], observer?: PipelineObserver): void {
  const sorted = [...paths].sort((a, b) => literalSegments(b.path) - literalSegments(a.path));
  for (const p of sorted) {
    const byMethod = new Map(p.routes.map((s) => [s.route.method as string, s]));
    const allowed = ORDER.filter((m) => byMethod.has(m));
    api.all(p.path, (c) => {
      const served = byMethod.get(c.req.method);
      if (served !== undefined) observer?.routed?.(served.route);
      return p.handle(c, served, allowed, p.path);
    });
  }
}

/** Groups routes by path, each path answered by `handle`. */
export function pathsOf(routes: readonly DeclaredRoute[], handle: ServedPath["handle"]): ServedPath[] {
  const byPath = new Map<string, Served[]>();
  for (const route of routes) {
    const s: Served = { route };
    const list = byPath.get(s.route.path) ?? [];
    list.push(s);
    byPath.set(s.route.path, list);
  }
  return [...byPath].map(([path, list]) => ({ path, routes: list, handle }));
}
