// The query parameters of the GET routes: `ids` (comma-separated, repeatable), `at`, and the paging
// parameters `page` and `per_page` of the API's paging (zero-based page; per_page default 10, at most 100).
// Unknown parameters are refused: a misspelt `?time=` silently answering "now" would be a wrong
// access answer that looks right.
import { MAX_INSTANT, MIN_INSTANT, parseInstant } from "../../model/index.js";
import { checkQueryKeys } from "../../live/queryKeys.js";
import { Refusal } from "../../live/operation.js";
import { HttpError, type HttpIssue, toHttpIssues } from "../../service/httpError.js";

/** What a GET route was asked. */
export interface ParsedQuery {
  /** Holder ids in request order, each once (RSOP routes only; empty otherwise). */
  readonly ids: string[];
  /** Zero-based page (paged routes only; 0 otherwise). */
  readonly page: number;
  /** Items per page (paged routes only). */
  readonly perPage: number;
  /** Epoch ms when `at` was all digits, else the ISO text as given, or now when absent. */
  readonly at: string | number;
}

/** Seed 000 §4: "on all endpoints that state them the default is 10 and the maximum 100". */
export const DEFAULT_PER_PAGE = 10;
export const MAX_PER_PAGE = 100;

/** One non-negative integer parameter (decimal digits only), or its default; pushes an issue when malformed. */
function integerParam(
  params: URLSearchParams,
  name: string,
  fallback: number,
  min: number,
  max: number,
  issues: HttpIssue[],
): number {
  const given = params.getAll(name);
  if (given.length === 0) return fallback;
  if (given.length > 1) {
    issues.push({ path: name, message: "Give it at most once." });
    return fallback;
  }
  const v = given[0]!;
  const n = /^[0-9]{1,15}$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) {
    issues.push({ path: name, message: `Must be an integer from ${min} to ${max}.` });
    return fallback;
  }
  return n;
}

/**
 * Reads and checks the query of a GET route, collecting every problem.
 * @param params - the URL's search parameters.
 * @param wantIds - the route takes `ids` (required, 1…maxIds distinct entries; a repeated id counts once).
 * @param paged - the route takes `page` and `per_page`.
 * @throws HttpError 400 listing every problem with its parameter.
 */
export function parseQuery(
  params: URLSearchParams,
  wantIds: boolean,
  maxIds: number,
  now: () => number,
  paged = false,
): ParsedQuery {
  const issues: HttpIssue[] = [];
  const allowed = wantIds ? ["ids", "at"] : paged ? ["at", "page", "per_page"] : ["at"];
  const listed = allowed.length === 1 ? allowed[0]! : `${allowed.slice(0, -1).join(", ")} and ${allowed.at(-1)!}`;
  for (const key of new Set(params.keys()))
    if (!allowed.includes(key))
      issues.push({ path: key, message: `Unknown query parameter; this route takes ${listed}.` });

  let ids: string[] = [];
  if (wantIds) {
    // Same reading as `rsop rsop --ids`: split on commas, trim, drop empty entries.
    // A repeated id is answered once, in the place of its first mention.
    ids = [
      ...new Set(
        params
          .getAll("ids")
          .flatMap((v) => v.split(","))
          .map((s) => s.trim())
          .filter((s) => s !== ""),
      ),
    ];
    if (ids.length === 0) issues.push({ path: "ids", message: "Give at least one holder id (ids=a,b,…)." });
    else if (ids.length > maxIds)
      issues.push({ path: "ids", message: `At most ${maxIds} holder ids per request; got ${ids.length}.` });
  }

  let at: string | number = 0;
  const given = params.getAll("at");
  if (given.length === 0) at = now();
  else if (given.length > 1) issues.push({ path: "at", message: "Give at most one instant." });
  else {
    const v = given[0]!;
    at = /^[0-9]+$/.test(v) ? Number(v) : v;
    const t = parseInstant(at);
    if (Number.isNaN(t)) {
      // A literal "+" in a query string reads as a space, so "+05:00" arrives as " 05:00".
      const hint = v.includes(" ") ? ' (send the "+" of an offset as %2B)' : "";
      issues.push({
        path: "at",
        message: `Must be an ISO 8601 instant with Z or an offset, or epoch milliseconds${hint}.`,
      });
    } else if (t < MIN_INSTANT || t >= MAX_INSTANT)
      issues.push({ path: "at", message: "Must lie between 1970-01-01T00:00:00Z and 2100-01-01T00:00:00Z." });
  }

  const page = paged ? integerParam(params, "page", 0, 0, Number.MAX_SAFE_INTEGER, issues) : 0;
  const perPage = paged
    ? integerParam(params, "per_page", DEFAULT_PER_PAGE, 1, MAX_PER_PAGE, issues)
    : DEFAULT_PER_PAGE;

  if (issues.length > 0) throw new HttpError(400, "Invalid query parameters.", issues);
  return { ids, at, page, perPage };
}

/**
 * Refuses a query parameter a route of the adapters' own (subscriptions, migration, preview) does not
 * take, or one given twice: 400 with one issue per parameter at `query.<name>` (HS4).
 * @throws HttpError 400.
 */
export function refuseOtherQuery(url: URL, allowed: readonly string[]): void {
  try {
    checkQueryKeys(url.searchParams, allowed);
  } catch (e) {
    if (e instanceof Refusal) throw new HttpError(400, "Invalid query parameters.", toHttpIssues(e.issues));
    throw e;
  }
}
