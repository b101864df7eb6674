// The query parameters of the GET routes: `ids` (comma-separated, repeatable) and `at`.
// Unknown parameters are refused: a misspelt `?time=` silently answering "now" would be a wrong
// access answer that looks right.
import { MAX_INSTANT, MIN_INSTANT, parseInstant } from "../../model/index.js";
import { HttpError, type HttpIssue } from "./httpError.js";

/** What a GET route was asked. */
export interface ParsedQuery {
  /** Holder ids in request order (RSOP routes only; empty otherwise). */
  readonly ids: string[];
  /** Epoch ms when `at` was all digits, else the ISO text as given, or now when absent. */
  readonly at: string | number;
}

/**
 * Reads and checks the query of a GET route, collecting every problem.
 * @param params - the URL's search parameters.
 * @param wantIds - the route takes `ids` (required, 1…maxIds entries).
 * @throws HttpError 400 listing every problem with its parameter.
 */
export function parseQuery(params: URLSearchParams, wantIds: boolean, maxIds: number, now: () => number): ParsedQuery {
  const issues: HttpIssue[] = [];
  const allowed = wantIds ? ["ids", "at"] : ["at"];
  for (const key of new Set(params.keys())) if (!allowed.includes(key)) issues.push({ path: key, message: `Unknown query parameter; this route takes ${allowed.join(" and ")}.` });

  let ids: string[] = [];
  if (wantIds) {
    // Same reading as `rsop rsop --ids`: split on commas, trim, drop empty entries.
    ids = params.getAll("ids").flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s !== "");
    if (ids.length === 0) issues.push({ path: "ids", message: "Give at least one holder id (ids=a,b,…)." });
    else if (ids.length > maxIds) issues.push({ path: "ids", message: `At most ${maxIds} holder ids per request; got ${ids.length}.` });
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
      issues.push({ path: "at", message: `Must be an ISO 8601 instant with Z or an offset, or epoch milliseconds${hint}.` });
    } else if (t < MIN_INSTANT || t >= MAX_INSTANT) issues.push({ path: "at", message: "Must lie between 1970-01-01T00:00:00Z and 2100-01-01T00:00:00Z." });
  }

  if (issues.length > 0) throw new HttpError(400, "Invalid query parameters.", issues);
  return { ids, at };
}
