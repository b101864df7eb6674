// The cloud-node routes of the service's systems host (semantics N1–N19), answered before the
// system's own app as the id mappings are: `POST /{system_id}/cloud-nodes/{cloud_node_id}/token`
// gives a node its token (admin and integrator), and `POST …/node/heartbeat` takes the node's
// heartbeat, acknowledgement, failure and hardware report under that token. The status the service
// answers from them is added to the system's own cloud-node reads (createDataApp `cloudNodes`).
import { z } from "zod";
import { bearerToken } from "../../service/auth/bearerToken.js";
import type { Grant } from "../../service/auth/grant.js";
import { formatPath } from "../../model/index.js";
import { HttpError, errorResponse, jsonResponse } from "../../service/httpError.js";
import { HEARTBEAT_BODY, type NodeStatus } from "../../service/nodes/nodeStatus.js";
import { FEED_LINE, SNAPSHOT_ANSWER } from "../../service/nodes/nodeFeed.js";
import type { TenantRow } from "../../service/store/registryStore.js";
import type { TenantRegistry } from "../../service/tenants/registry.js";
import { authenticate } from "./authenticate.js";
import { refuseOtherQuery } from "./parseQuery.js";
import { readJsonBody } from "./readJsonBody.js";
import {
  AUTH_ERRORS,
  COMMON_ERRORS,
  type DeclaredRoute,
  type HttpMethod,
  type RouteAccess,
  answersOf,
  paramsOf,
} from "./routes/declaredRoute.js";

/** What a system holds that the routes check: its revision and whether a cloud node is one of its own. */
export interface SystemView {
  readonly revision: number;
  hasNode(cloudNodeId: string): boolean;
}

/** What the routes need of the service. */
export interface NodeRouteDeps {
  readonly registry: TenantRegistry;
  readonly nodes: NodeStatus;
  /** The grant of a token on system `systemId` (serviceApp.ts tenantGrant), or null. */
  readonly grantOn: (token: string, systemId: string) => Grant | null;
  /** Whether a token is valid anywhere in the service. */
  readonly known: (token: string) => boolean;
  /** Verifies a signed token before the synchronous lookups read it (TokenResolver.prepare). */
  readonly prepare?: (token: string | null) => Promise<void>;
  /** The system's revision and cloud nodes, read from its loaded live system. */
  readonly readSystem: (tenant: TenantRow) => Promise<SystemView>;
  readonly maxBodyBytes: number;
  readonly indent: number;
}

const NODE_ROUTE = /^\/([^/]+)\/cloud-nodes\/([^/]+)\/(token|node\/heartbeat)\/?$/;
const WRITERS = new Set(["admin", "integrator"]);

export const unknownSystem = (id: string) =>
  new HttpError(404, "Unknown system id.", [{ path: "system_id", message: `Unknown system id "${id}".` }]);
export const unknownNode = (id: string) =>
  new HttpError(404, "Unknown cloud node.", [{ path: "cloud_node_id", message: `Unknown cloud node "${id}".` }]);

/** The system and node a node route names. */
export interface Target {
  readonly tenant: TenantRow;
  readonly systemId: string;
  readonly cloudNodeId: string;
}

/**
 * The node routes (N1): a handler answering them, and null for any other request (the system's own
 * app answers it), including a path naming no system of the service.
 */
export function serviceNodeRoutes(deps: NodeRouteDeps): (request: Request) => Promise<Response> | null {
  return nodeRoute(deps, "POST", NODE_ROUTE, (request, target, match) =>
    match[3] === "token" ? answerToken(deps, request, target) : answerHeartbeat(deps, request, target),
  );
}

/**
 * The handler of one group of node routes (N1, N13, N20): `route` (its groups 1 and 2 the system and
 * node ids) matched for `method`, then `answer` for the system and node it names, its HttpError
 * answered in the error shape. null for any other request, a path naming no 2.0 system of the
 * service included (the system's own app answers those).
 */
export function nodeRoute(
  deps: { readonly registry: TenantRegistry; readonly indent: number },
  method: string,
  route: RegExp,
  answer: (request: Request, target: Target, match: RegExpExecArray) => Promise<Response>,
): (request: Request) => Promise<Response> | null {
  return (request) => {
    if (request.method !== method) return null;
    const match = route.exec(new URL(request.url).pathname);
    if (match === null) return null;
    let target: Target;
    try {
      const systemId = decodeURIComponent(match[1]!);
      const tenant = deps.registry.tenantByKey(systemId);
      if (tenant === undefined || tenant.kind !== "system") return null;
      target = { tenant, systemId, cloudNodeId: decodeURIComponent(match[2]!) };
    } catch {
      return null;
    }
    return answer(request, target, match).catch((e: unknown) => {
      if (e instanceof HttpError) return errorResponse(e, deps.indent);
      throw e;
    });
  };
}

/** Token (401), the system's reach (404), the role (403), the query, the node (404): a new node token (N2). */
async function answerToken(deps: NodeRouteDeps, request: Request, t: Target): Promise<Response> {
  await deps.prepare?.(bearerToken(request.headers.get("authorization")));
  let grant: Grant | null = null;
  await authenticate(
    request,
    (token) => {
      grant = deps.grantOn(token, t.systemId);
      return grant !== null || deps.known(token) || deps.nodes.tokenNode(token) !== undefined;
    },
    t.systemId,
  );
  const role = (grant as Grant | null)?.role;
  if (role === undefined) throw unknownSystem(t.systemId);
  if (!WRITERS.has(role)) throw new HttpError(403, `A ${role} may not give a cloud node its token.`);
  refuseOtherQuery(new URL(request.url), []);
  const system = await deps.readSystem(t.tenant);
  if (!system.hasNode(t.cloudNodeId)) throw unknownNode(t.cloudNodeId);
  return jsonResponse(200, { token: await deps.nodes.createToken(t.systemId, t.cloudNodeId) }, deps.indent);
}

/**
 * Who may send a heartbeat (N3), download its system or follow its changes (N13): the token of
 * exactly this node. Another node's token of this system: 404 at the node; of another system, or any
 * other token valid elsewhere: 404 at the system; a person's or application's token on this system:
 * 403 (only the node reports).
 * @param what - what only the node may do, for the 403's message.
 */
export async function admitNode(
  deps: Pick<NodeRouteDeps, "registry" | "nodes" | "grantOn" | "known" | "prepare">,
  request: Request,
  t: Target,
  what = "report its heartbeat",
): Promise<void> {
  await deps.prepare?.(bearerToken(request.headers.get("authorization")));
  const seen: { answer: "node" | "otherNode" | "user" | "elsewhere" } = { answer: "elsewhere" };
  await authenticate(
    request,
    async (token) => {
      let node = deps.nodes.tokenNode(token);
      // A token made by another process a moment ago (shared stores): one re-read.
      if (node === undefined && deps.grantOn(token, t.systemId) === null && !deps.known(token)) {
        await deps.registry.refresh();
        node = deps.nodes.tokenNode(token);
      }
      if (node !== undefined && node.systemId === t.systemId)
        seen.answer = node.cloudNodeId === t.cloudNodeId ? "node" : "otherNode";
      else if (node === undefined && deps.grantOn(token, t.systemId) !== null) seen.answer = "user";
      return node !== undefined || seen.answer === "user" || deps.known(token);
    },
    t.systemId,
  );
  if (seen.answer === "otherNode") throw unknownNode(t.cloudNodeId);
  if (seen.answer === "user") throw new HttpError(403, `Only the cloud node's own token may ${what}.`);
  if (seen.answer === "elsewhere") throw unknownSystem(t.systemId);
}

/** A heartbeat: the node's token, the query, the node, the body (every issue at `body.…`), its revision (N3–N6, N9). */
async function answerHeartbeat(deps: NodeRouteDeps, request: Request, t: Target): Promise<Response> {
  await admitNode(deps, request, t);
  refuseOtherQuery(new URL(request.url), []);
  const system = await deps.readSystem(t.tenant);
  // A token outlives its node: a deleted node is unknown.
  if (!system.hasNode(t.cloudNodeId)) throw unknownNode(t.cloudNodeId);
  const parsed = HEARTBEAT_BODY.safeParse(await readJsonBody(request, deps.maxBodyBytes));
  if (!parsed.success)
    throw new HttpError(
      400,
      "The heartbeat is invalid.",
      parsed.error.issues.map((i) => ({
        path: formatPath(["body", ...(i.path as (string | number)[])]),
        message: i.message,
      })),
    );
  const beat = parsed.data;
  if (beat.revision > system.revision)
    throw new HttpError(409, "The node acknowledged a revision the system has not reached.", [
      { path: "body.revision", message: `The system is at revision ${system.revision}, not ${beat.revision}.` },
    ]);
  await deps.nodes.heartbeat(t.systemId, t.cloudNodeId, beat);
  return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
}

const ADMINS: RouteAccess = { roles: ["admin", "integrator"], scope: "all" };
/** No role: only the node's own token (N3). */
const NODE_ONLY: RouteAccess = { roles: [], scope: "all" };

function declared(
  method: HttpMethod,
  path: string,
  summary: string,
  access: RouteAccess,
  ok: Record<number, z.ZodType | null>,
  body?: z.ZodType,
  errors: readonly number[] = [409],
): DeclaredRoute {
  return {
    id: `systems.${method.toLowerCase()}${path.replace(/[/:{}_-]+(\w)/g, (_, c: string) => c.toUpperCase())}`,
    method,
    path,
    host: "systems",
    summary,
    tags: ["cloud-nodes"],
    params: paramsOf(path),
    ...(body !== undefined ? { body } : {}),
    answers: answersOf(ok, [...AUTH_ERRORS, ...COMMON_ERRORS, ...errors]),
    access,
    by: "node",
  };
}

/** The declarations of the node routes (systems host, served by the service only). */
export function nodeRouteDeclarations(): DeclaredRoute[] {
  return [
    declared("POST", "/:systemId/cloud-nodes/:cloudNodeId/token", "Give a cloud node its token", ADMINS, {
      200: z.object({
        token: z.string().describe("The node token, shown once; the node's earlier tokens stop working"),
      }),
    }),
    declared(
      "POST",
      "/:systemId/cloud-nodes/:cloudNodeId/node/heartbeat",
      "A cloud node's heartbeat (its own token)",
      NODE_ONLY,
      { 204: null },
      HEARTBEAT_BODY,
    ),
    declared(
      "GET",
      "/:systemId/cloud-nodes/:cloudNodeId/node/snapshot",
      "A cloud node downloads its system's snapshot and the revision it is at (its own token)",
      NODE_ONLY,
      { 200: SNAPSHOT_ANSWER },
      undefined,
      [],
    ),
    {
      ...declared(
        "GET",
        "/:systemId/cloud-nodes/:cloudNodeId/node/changes",
        "A cloud node follows its system's changes after a revision (its own token): application/x-ndjson, one line each",
        NODE_ONLY,
        { 200: FEED_LINE.describe("One line of the stream (application/x-ndjson)") },
        undefined,
        [409, 410],
      ),
      query: z.object({ from: z.string().describe("The revision the node holds: changes after it are sent") }),
    },
  ];
}
