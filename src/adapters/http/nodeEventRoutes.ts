// `POST /{system_id}/cloud-nodes/{cloud_node_id}/node/events` of the service's systems host
// (semantics N20–N29): a cloud node uploads the access events of the decisions it made, in order,
// under its own token (nodeRoutes.ts admitNode). Answered before the system's own app, as the other
// node routes are; the events are checked, deduplicated, stored and routed by service/nodes/nodeEvents.ts.
import type { SystemSnapshot } from "../../model/index.js";
import {
  MAX_NODE_EVENT_BYTES,
  NODE_EVENTS_ANSWER,
  NODE_EVENTS_BODY,
  type NodeEvents,
  parseNodeEvents,
} from "../../service/nodes/nodeEvents.js";
import { jsonResponse } from "../../service/httpError.js";
import type { TenantRow } from "../../service/store/registryStore.js";
import type { Lease } from "../../service/tenants/tenantHost.js";
import { type NodeRouteDeps, type Target, admitNode, nodeRoute, unknownNode } from "./nodeRoutes.js";
import { refuseOtherQuery } from "./parseQuery.js";
import { readJsonBody } from "./readJsonBody.js";
import { AUTH_ERRORS, COMMON_ERRORS, type DeclaredRoute, answersOf, paramsOf } from "./routes/declaredRoute.js";

/** What the route needs of the service. */
export interface NodeEventRouteDeps
  extends Pick<NodeRouteDeps, "registry" | "nodes" | "grantOn" | "known" | "prepare"> {
  /** Leases a system's loaded live system (TenantHost.acquire). */
  readonly acquire: (tenant: TenantRow) => Promise<Lease>;
  readonly events: NodeEvents;
  /** The service's body bound; an upload is held to the smaller of it and 1 MiB (N21). */
  readonly maxBodyBytes: number;
  readonly indent: number;
}

const EVENTS_ROUTE = /^\/([^/]+)\/cloud-nodes\/([^/]+)\/node\/events\/?$/;

/**
 * The upload route (N20): a handler answering it, and null for any other request, including a path
 * naming no system of the service (the system's own app answers those).
 */
export function serviceNodeEventRoutes(deps: NodeEventRouteDeps): (request: Request) => Promise<Response> | null {
  return nodeRoute(deps, "POST", EVENTS_ROUTE, (request, target) => answerUpload(deps, request, target));
}

/**
 * An upload: the node's own token (401/404/403), the query, the node (404), the body (415, 413, 400
 * with every problem at `body.events[i].…`), then the events stored: 200 once durable (N21, N22).
 */
async function answerUpload(deps: NodeEventRouteDeps, request: Request, t: Target): Promise<Response> {
  await admitNode(deps, request, t, "upload its access events");
  refuseOtherQuery(new URL(request.url), []);
  const lease = await deps.acquire(t.tenant);
  let snapshot: SystemSnapshot | undefined;
  try {
    const target = lease.durable.target;
    snapshot = target.kind === "system" ? target.live.current : undefined;
  } finally {
    lease.release();
  }
  // A token outlives its node: a deleted node is unknown.
  if (snapshot === undefined || !snapshot.cloudNodes.some((n) => n.id === t.cloudNodeId))
    throw unknownNode(t.cloudNodeId);
  const events = parseNodeEvents(await readJsonBody(request, Math.min(deps.maxBodyBytes, MAX_NODE_EVENT_BYTES)));
  const result = await deps.events.record(
    { organization: t.tenant.organization, systemId: t.systemId, cloudNodeId: t.cloudNodeId, snapshot },
    events,
  );
  return jsonResponse(200, result, deps.indent);
}

/** The declaration of the upload route (systems host, served by the service only; only the node's own token). */
export function nodeEventRouteDeclarations(): DeclaredRoute[] {
  const path = "/:systemId/cloud-nodes/:cloudNodeId/node/events";
  return [
    {
      id: "systems.postSystemIdCloudNodesCloudNodeIdNodeEvents",
      method: "POST",
      path,
      host: "systems",
      summary: "A cloud node uploads the access events of its decisions, in order (its own token)",
      tags: ["cloud-nodes"],
      params: paramsOf(path),
      body: NODE_EVENTS_BODY,
      answers: answersOf({ 200: NODE_EVENTS_ANSWER }, [...AUTH_ERRORS, ...COMMON_ERRORS]),
      access: { roles: [], scope: "all" },
      by: "node",
    },
  ];
}
