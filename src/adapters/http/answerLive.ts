// A route of a live system's table, already routed: the live system gets the route the router
// matched (its handler and params) with the operation, so it does not match the path again.
import { createCredential } from "../../live/operations/credentials.js";
import { reads } from "../../live/operations/reads.js";
import type { Operation, OperationResult } from "../../live/index.js";
import { type MatchedRoute, withMatchedRoute } from "../../live/routeTable.js";
import type { PanelOperationResult } from "../../legacy1/index.js";
import {
  checkRsopIds,
  checkWriteBody,
  checkWritePath,
  readInScope,
  rsopResultInScope,
  scopeOf,
} from "../../service/auth/scope.js";
import type { Grant } from "../../service/auth/grant.js";
import { HttpError, jsonResponse, jsonTextBytes, textResponse, toHttpIssues } from "../../service/httpError.js";
import type { AnyLiveSystem, DurableSystem } from "../../service/store/durableSystem.js";
import { pageHeaders } from "./answerDeviceAccess.js";
import { readJsonBody } from "./readJsonBody.js";
import { LIVE_READINGS } from "./routes/liveRoutes.js";
import type { CloudNodeAnswers } from "../../service/nodes/nodeStatus.js";

/** The message of a refusal, by status; its issues say what exactly. */
export const REFUSAL: Readonly<Record<number, string>> = {
  400: "The request is invalid.",
  404: "Not found.",
  405: "Method not allowed.",
  409: "The request conflicts with the current state.",
};

/** What answering a live route needs. */
export interface LiveRouteContext {
  readonly durable: DurableSystem;
  readonly maxBodyBytes: number;
  readonly indent: number;
  readonly now: () => number;
  /**
   * The invite id of a digital credential (I81), answered beside the id of a credential created; a
   * server without the service's secret (one embedded system) has none.
   */
  readonly inviteIdOf?: ((credentialId: string, holderId: string) => Promise<string>) | undefined;
  /** The cloud nodes' reported status and hardware (the service, N10, N11); absent: hardware readings answer 501. */
  readonly cloudNodes?: CloudNodeAnswers | undefined;
}

/** A live route as the router matched it: its table pattern, handler, decoded params and raw path. */
export interface RoutedLive {
  readonly method: string;
  /** The route's pattern in the live table (`/holders/:holderId`). */
  readonly pattern: string;
  readonly handler: unknown;
  readonly params: Record<string, string>;
  /** The request's path relative to the system (or the panel host), as sent. */
  readonly path: string;
}

/** A whole number query parameter as the live system accepted it, or the default. */
function intParam(url: URL, key: string, dflt: number): number {
  const raw = url.searchParams.get(key);
  return raw === null || raw === "" || !/^\d+$/.test(raw) ? dflt : Number(raw);
}

/** The body of a write: none when the request has none, else JSON (415, 413, 400 otherwise). */
export async function writeBody(request: Request, maxBytes: number): Promise<unknown> {
  const length = request.headers.get("content-length")?.trim();
  const chunked = request.headers.get("transfer-encoding") !== null;
  if (length === "0" || (length === undefined && !chunked)) return undefined;
  return readJsonBody(request, maxBytes);
}

/** A read: on the whole system for admin and integrator, on the token's view for a manager or reporter (H19). */
function read(
  ctx: LiveRouteContext,
  r: RoutedLive,
  op: Operation,
  url: URL,
  grant: Grant,
): OperationResult | PanelOperationResult {
  const target = ctx.durable.target;
  const matched: MatchedRoute = { kind: "read", handler: r.handler, params: r.params };
  const system: AnyLiveSystem = target.live;
  if (target.kind === "panel" || grant.partitions === null) return system.apply(withMatchedRoute(op, matched));
  const live = target.live;
  const scope = scopeOf(live.snapshot, grant);
  if (r.handler === reads.rsop) {
    checkRsopIds(scope, live.snapshot, url.searchParams.get("ids"));
    // Its answer names only groups and rules of the view (HS3): read as an object, then filtered.
    return rsopResultInScope(scope, live.apply(withMatchedRoute({ method: "GET", path: op.path }, matched)));
  }
  return {
    ok: true,
    status: 200,
    ...readInScope(r.handler as Parameters<typeof readInScope>[0], scope, {
      engine: live.engine,
      params: r.params,
      query: url.searchParams,
      now: ctx.now,
    }),
  };
}

/**
 * A write: a manager's path is checked against its scope before the body is read (H14's order), and
 * its body on the write's turn, against the snapshot the write applies to; the path again only if
 * another write changed that snapshot meanwhile.
 */
async function write(
  ctx: LiveRouteContext,
  r: RoutedLive,
  op: Operation,
  request: Request,
  grant: Grant,
): Promise<{ result: OperationResult | PanelOperationResult; body: unknown }> {
  const target = ctx.durable.target;
  const matched: MatchedRoute = { kind: "write", handler: r.handler, params: r.params };
  const scoped = target.kind === "system" && grant.partitions !== null;
  // Only a scoped write reads the state (the snapshot is made on first read after a change: an
  // unscoped write must not pay for it, L21).
  const checkedAt = scoped && target.kind === "system" ? target.live.snapshot : null;
  if (checkedAt !== null) checkWritePath(grant, checkedAt, r.method, r.pattern, r.params);
  const body = await writeBody(request, ctx.maxBodyBytes);
  const prepare =
    scoped && target.kind === "system"
      ? (o: Operation): Operation => {
          const now = target.live.snapshot;
          if (now !== checkedAt) checkWritePath(grant, now, r.method, r.pattern, r.params);
          return { ...o, body: checkWriteBody(grant, now, r.method, r.pattern, r.params, o.body) };
        }
      : undefined;
  const asked = withMatchedRoute({ ...op, method: r.method as "POST" | "PUT" | "DELETE", body }, matched);
  return { result: await ctx.durable.write(asked, prepare), body };
}

/**
 * `{inviteId}` for a digital credential just created (I81): the field belongs to that answer's shape, so a
 * server that sends no invitations (no service secret: one embedded system) answers it null (L16); nothing
 * for any other answer.
 */
async function inviteOf(
  ctx: LiveRouteContext,
  r: RoutedLive,
  result: OperationResult | PanelOperationResult,
  body: unknown,
): Promise<{ inviteId?: string | null }> {
  if (r.handler !== createCredential || !result.ok || result.status !== 201) return {};
  if (!("id" in result) || typeof result.id !== "string" || r.params.holderId === undefined) return {};
  // Answered 201: the live system accepted the body, so its `types` is an array; a card's has "card".
  const types = (body as { types?: unknown } | undefined)?.types;
  if (!Array.isArray(types) || types.includes("card")) return {};
  return { inviteId: ctx.inviteIdOf === undefined ? null : await ctx.inviteIdOf(result.id, r.params.holderId) };
}

/** Answers a live route: the read or write, then the answer as the systems interface shapes it. */
export async function answerLive(
  ctx: LiveRouteContext,
  r: RoutedLive,
  request: Request,
  url: URL,
  grant: Grant,
): Promise<Response> {
  const target = ctx.durable.target;
  if (target.kind === "panel" && grant.partitions !== null)
    throw new HttpError(403, "A 1.0 panel is served to admin and integrator tokens only.");
  // A read's JSON is taken as bytes where the live system makes them so (RSOP).
  const op = { method: r.method as "GET", path: `${r.path}${url.search}`, jsonBytes: { indent: ctx.indent } };
  const isRead = r.method === "GET";
  const written = isRead ? undefined : await write(ctx, r, op, request, grant);
  const result = written?.result ?? read(ctx, r, op, url, grant);
  if (!result.ok) throw new HttpError(result.status, REFUSAL[result.status] ?? "Refused.", toHttpIssues(result.issues));
  // After the live system's own checks (an unknown cloud node stays 404).
  if (isRead && ctx.cloudNodes !== undefined) {
    const nodes = ctx.cloudNodes;
    if (r.handler === reads.hardware) return jsonResponse(200, nodes.hardware(r.params.cloudNodeId!), ctx.indent);
    if (r.handler === reads.wirelessDiagnostics)
      return jsonResponse(200, nodes.wireless(r.params.cloudNodeId!), ctx.indent);
    if (r.handler === reads.cloudNodes || r.handler === reads.cloudNode)
      return answerOf(withStatus(result, nodes), url, ctx.indent);
  }
  const reading = isRead ? LIVE_READINGS.get(r.handler) : undefined;
  if (reading !== undefined)
    throw new HttpError(
      501,
      `${reading} is read live from the hardware; this server is not connected to any hardware and the stored system does not hold it.`,
    );
  const extra = written === undefined ? {} : await inviteOf(ctx, r, result, written.body);
  return answerOf(result, url, ctx.indent, extra);
}

/** A cloud node read with each node's `connectionStatus` and `syncStatus` (N10). */
function withStatus(
  result: OperationResult | PanelOperationResult,
  nodes: CloudNodeAnswers,
): OperationResult | PanelOperationResult {
  if (!result.ok || "patches" in result || !("body" in result)) return result;
  const add = (n: unknown) => {
    const node = n as { id: string };
    return { ...node, ...nodes.status(node.id) };
  };
  const body = Array.isArray(result.body) ? result.body.map(add) : add(result.body);
  return { ...result, body } as OperationResult;
}

function answerOf(
  result: OperationResult | PanelOperationResult,
  url: URL,
  indent: number,
  extra: { inviteId?: string | null } = {},
): Response {
  if (!result.ok) throw new Error("unreachable");
  if ("patches" in result) {
    if (result.status === 204) return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
    return jsonResponse(result.status, result.id !== undefined ? { id: result.id, ...extra } : {}, indent);
  }
  const headers =
    result.total === undefined
      ? {}
      : pageHeaders(url, {
          page: intParam(url, "page", 0),
          perPage: Math.max(1, intParam(url, "per_page", 10)),
          total: result.total,
        });
  if ("json" in result && result.json !== undefined)
    return textResponse(200, jsonTextBytes(result.json, indent), headers);
  return jsonResponse(200, result.body, indent, headers);
}
