// The route table of the HTTP adapter (2.0 systems API paths, relative to the base path) and its matcher.
// Matching looks at the shape of the path only, so unknown routes and wrong methods are answered
// before any credential is looked at, and without revealing anything about the system's data.

/** The routes the handler serves. */
export type RouteName = "rsopHolders" | "nodeRsopHolders" | "decisions" | "explain" | "deviceAccess";

/** A matched route with its decoded path parameters. */
export interface EngineRouteMatch {
  readonly name: RouteName;
  /** The one method the route answers. */
  readonly method: "GET" | "POST";
  readonly systemId: string;
  /** `cloud_node_id` or `device_id` when the route has one. */
  readonly id: string | null;
}

interface RouteSpec {
  readonly name: RouteName;
  readonly method: "GET" | "POST";
  /** Segments after `{system_id}`; `*` is the route's one id parameter. */
  readonly segments: readonly string[];
}

const ROUTES: readonly RouteSpec[] = [
  { name: "rsopHolders", method: "GET", segments: ["rsop", "holders"] },
  { name: "nodeRsopHolders", method: "GET", segments: ["cloud-nodes", "*", "rsop", "holders"] },
  { name: "decisions", method: "POST", segments: ["decisions"] },
  { name: "explain", method: "POST", segments: ["decisions", "explain"] },
  { name: "deviceAccess", method: "GET", segments: ["devices", "*", "access"] },
];

/** `""`, `"/"` → `""`; `"api/v2/"` → `"/api/v2"`. */
export function normalizeBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, "");
  if (trimmed === "") return "";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/**
 * Splits a URL path below the base path into decoded segments.
 * @returns the segments, null when the path is not below the base path, or "malformed" for bad
 *   percent-encoding.
 */
export function pathSegments(pathname: string, basePath: string): string[] | null | "malformed" {
  if (basePath !== "") {
    if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) return null;
    pathname = pathname.slice(basePath.length);
  }
  if (!pathname.startsWith("/")) return null;
  const raw = pathname.slice(1).split("/");
  const out: string[] = [];
  for (const s of raw) {
    try {
      out.push(decodeURIComponent(s));
    } catch {
      return "malformed";
    }
  }
  return out;
}

/** The route a path has the shape of, or null. Empty segments never match an id. */
export function matchEngineRoute(segments: readonly string[]): EngineRouteMatch | null {
  const [systemId, ...rest] = segments;
  if (systemId === undefined || systemId === "") return null;
  for (const r of ROUTES) {
    if (r.segments.length !== rest.length) continue;
    let id: string | null = null;
    let ok = true;
    for (let i = 0; i < rest.length && ok; i++) {
      const want = r.segments[i]!;
      const got = rest[i]!;
      if (want === "*") {
        id = got;
        ok = got !== "";
      } else ok = want === got;
    }
    if (ok) return { name: r.name, method: r.method, systemId, id };
  }
  return null;
}
