// The report routes of `rsop serve --data` (2.0 `/reports/holders/…`, 1.0 `/reports/cloudpeople/…`),
// already routed: `sub` is the path after the prefix. Every role may ask reports; a manager's or
// reporter's report holds only the holders of its partitions and is seen only by tokens that see
// all of them (RP10).
import { PAGING, checkQueryKeys } from "../../live/queryKeys.js";
import type { SystemSnapshot } from "../../model/index.js";
import type { Grant } from "../../service/auth/grant.js";
import { scopeOf } from "../../service/auth/scope.js";
import { HttpError } from "../../service/httpError.js";
import type { ReportService } from "../../service/reportService.js";
import type { DurableSystem } from "../../service/store/durableSystem.js";
import { writeBody } from "./answerLive.js";
import { methodRefusal } from "./dataPipeline.js";
import type { DeclaredRoute } from "./routes/declaredRoute.js";

/** What the report routes need. */
export interface ReportRoutes {
  readonly reports: ReportService;
  readonly durable: DurableSystem;
  readonly maxBodyBytes: number;
  /** `/reports/holders` (below the system) or `/api/reports/cloudpeople`. */
  readonly prefix: string;
}

/** The decoded segments of `sub` (400 for malformed percent-encoding), after the query and refresh checks. */
async function segmentsOf(ctx: ReportRoutes, url: URL, sub: string): Promise<string[]> {
  let seg: string[];
  try {
    seg = sub.split("/").slice(1).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, "The URL path has malformed percent-encoding.");
  }
  // The metadata list pages; no other report route takes a query parameter (HS4).
  checkQueryKeys(url.searchParams, seg[0] === "requests" && seg.length === 1 ? PAGING : []);
  // The store is the truth: replicas on one database share their reports (RP14).
  if (seg[0] !== "preview") await ctx.reports.refresh();
  return seg;
}

/** The snapshot a token's report reads: its view of a 2.0 system, or the panel's system. */
function viewOf(ctx: ReportRoutes, grant: Grant): SystemSnapshot {
  const target = ctx.durable.target;
  return target.kind === "system" ? scopeOf(target.live.snapshot, grant).view : target.live.engine.loaded.system;
}

/** Answers a report route (`route` undefined: the path takes other methods, 405). */
export async function reportAnswer(
  ctx: ReportRoutes,
  request: Request,
  url: URL,
  sub: string,
  grant: Grant,
  route: DeclaredRoute | undefined,
  allowed: readonly string[],
): Promise<Response> {
  const seg = await segmentsOf(ctx, url, sub);
  if (route === undefined) throw methodRefusal(request.method, allowed);
  const { reports } = ctx;
  const id = seg[1] ?? "";
  if (seg[0] === "preview" || seg[0] === "generate") {
    const body = await writeBody(request, ctx.maxBodyBytes);
    const snapshot = viewOf(ctx, grant);
    return seg[0] === "preview"
      ? reports.preview(snapshot, body, grant)
      : reports.generate(snapshot, body, grant, snapshot.timezone);
  }
  if (seg[0] === "file") return reports.file(id, grant);
  if (seg.length === 1) return reports.list(url, grant);
  if (seg.length === 3) return reports.view(id, grant);
  return request.method === "GET" ? reports.metadata(id, grant) : reports.delete(id, grant);
}

/** The 404 of a path below the report prefix that no report route has. */
export async function reportNotFound(
  ctx: ReportRoutes,
  request: Request,
  url: URL,
  sub: string,
  _grant: Grant,
): Promise<never> {
  await segmentsOf(ctx, url, sub);
  throw new HttpError(404, `No route for ${request.method} ${url.pathname}.`, [
    { path: "path", message: `No report route ${request.method} ${sub}.` },
  ]);
}
