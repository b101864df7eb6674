// Matching an operation's method and path against a route table, shared by the 2.0 and 1.0 live
// systems: `:name` segments become params, and the most literal pattern wins whatever the method
// (`GET …/attributes/all` is a 405, not an attribute named "all").
import { type Method, type Operation, type RefusedResult, refused } from "./operation.js";

/** A route table: method, path pattern, handler. */
export type RouteTable<W, R> = readonly (readonly [Method, string, W | R])[];

export type RouteMatch<W, R> =
  | { readonly kind: "write"; readonly handler: W; readonly params: Record<string, string> }
  | { readonly kind: "read"; readonly handler: R; readonly params: Record<string, string> }
  | { readonly kind: "method"; readonly allowed: readonly Method[] }
  | { readonly kind: "none" };

/**
 * The route an HTTP router already matched for an operation (its handler and decoded params), keyed
 * on the operation by this symbol: `routeOperation` then takes it instead of matching the path again.
 * A symbol key is left out of the operation's JSON (the change log) and kept by a spread (`{...op}`).
 */
export const MATCHED_ROUTE: unique symbol = Symbol("rsop.matchedRoute");

/** A route as a router matched it: what `MATCHED_ROUTE` holds. */
export interface MatchedRoute<W = unknown, R = unknown> {
  readonly kind: "read" | "write";
  readonly handler: W | R;
  readonly params: Record<string, string>;
}

/** `op` with the route a router matched for it, so that the live system does not match it again. */
export function withMatchedRoute<O extends object>(op: O, route: MatchedRoute): O {
  return Object.assign({ ...op }, { [MATCHED_ROUTE]: route });
}

/** The route a router matched for `op`, if one did. */
export function matchedRouteOf(op: object): MatchedRoute | undefined {
  return (op as { [MATCHED_ROUTE]?: MatchedRoute })[MATCHED_ROUTE];
}

/** Methods in the order a 405 names them. */
const ORDER: readonly Method[] = ["GET", "POST", "PUT", "DELETE"];

function matchPattern(parts: readonly string[], segments: readonly string[]): Record<string, string> | null {
  if (parts.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.startsWith(":")) params[p.slice(1)] = segments[i]!;
    else if (p !== segments[i]) return null;
  }
  return params;
}

interface CompiledRoute<W, R> {
  readonly method: Method;
  readonly parts: readonly string[];
  /** How many literal segments: the most literal match wins. */
  readonly literal: number;
  readonly handler: W | R;
}

/** Each table's patterns split once (a batch of 10,000 operations matches 10,000 paths). */
const COMPILED = new WeakMap<object, readonly CompiledRoute<unknown, unknown>[]>();
function compiled<W, R>(table: RouteTable<W, R>): readonly CompiledRoute<W, R>[] {
  let c = COMPILED.get(table);
  if (c === undefined) {
    c = table.map(([method, pattern, handler]) => {
      const parts = pattern.split("/").slice(1);
      return { method, parts, literal: parts.filter((p) => p !== "" && !p.startsWith(":")).length, handler };
    });
    COMPILED.set(table, c);
  }
  return c as readonly CompiledRoute<W, R>[];
}

/** The route of `table` for `method` and `pathname` (GET routes read, the others write). */
export function matchTable<W, R>(table: RouteTable<W, R>, method: string, pathname: string): RouteMatch<W, R> {
  let segments: string[];
  try {
    segments = pathname.split("/").slice(1).map(decodeURIComponent);
  } catch {
    return { kind: "none" };
  }
  if (segments.some((s) => s === "")) return { kind: "none" };
  const matches: { method: Method; params: Record<string, string>; handler: W | R; literal: number }[] = [];
  for (const route of compiled(table)) {
    const params = matchPattern(route.parts, segments);
    if (params !== null) matches.push({ method: route.method, params, handler: route.handler, literal: route.literal });
  }
  const top = Math.max(-1, ...matches.map((x) => x.literal));
  const best = matches.filter((x) => x.literal === top);
  const hit = best.find((x) => x.method === method);
  if (hit !== undefined)
    return method === "GET"
      ? { kind: "read", handler: hit.handler as R, params: hit.params }
      : { kind: "write", handler: hit.handler as W, params: hit.params };
  const allowed = ORDER.filter((m) => best.some((x) => x.method === m));
  return allowed.length > 0 ? { kind: "method", allowed } : { kind: "none" };
}

function whole(
  query: URLSearchParams,
  key: string,
  dflt: number,
  min: number,
  max: number,
  refuse: (key: string, min: number, max: number) => never,
): number {
  const raw = query.get(key);
  if (raw === null || raw === "") return dflt;
  const n = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= min && n <= max)) refuse(key, min, max);
  return n;
}

/**
 * One page of `items` in id order, with the total before paging: `page` 0-based (default 0),
 * `per_page` 1…100 (default 10); `refuse` answers a malformed one.
 */
export function pageOf<T extends { id: number | string }>(
  items: readonly T[],
  query: URLSearchParams,
  map: (x: T) => unknown,
  refuse: (key: string, min: number, max: number) => never,
): { body: unknown[]; total: number } {
  const page = whole(query, "page", 0, 0, 1_000_000_000, refuse);
  const perPage = whole(query, "per_page", 10, 1, 100, refuse);
  const sorted = [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { body: sorted.slice(page * perPage, page * perPage + perPage).map(map), total: sorted.length };
}

/**
 * The route an operation names, with its query; or the refusal of an operation that is not one
 * (400), names no route (404, "No `what` …"), or takes another method (405).
 */
export function routeOperation<W, R>(
  op: Operation,
  match: (method: string, pathname: string) => RouteMatch<W, R>,
  what: string,
):
  | { readonly refused: RefusedResult }
  | { readonly route: Extract<RouteMatch<W, R>, { kind: "read" | "write" }>; readonly query: URLSearchParams } {
  if (op === null || typeof op !== "object" || typeof op.method !== "string" || typeof op.path !== "string")
    return {
      refused: refused(400, [{ code: "invalid", path: [], message: 'An operation is {"method", "path", "body"?}.' }]),
    };
  const q = op.path.indexOf("?");
  const pathname = q < 0 ? op.path : op.path.slice(0, q);
  const query = new URLSearchParams(q < 0 ? "" : op.path.slice(q + 1));
  const route = (matchedRouteOf(op) as RouteMatch<W, R> | undefined) ?? match(op.method, pathname);
  if (route.kind === "none")
    return {
      refused: refused(404, [
        { code: "unknownRoute", path: ["path"], message: `No ${what} ${op.method} ${pathname}.` },
      ]),
    };
  if (route.kind === "method")
    return {
      refused: refused(405, [
        {
          code: "methodNotAllowed",
          path: ["method"],
          message: `${pathname} takes ${route.allowed.join(", ")}, not ${op.method}.`,
        },
      ]),
    };
  return { route, query };
}
