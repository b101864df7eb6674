// What a cloud node downloads and follows on the service's systems host (semantics N13–N19), under
// the node's own token (admitNode, as its heartbeat): `GET /{system_id}/cloud-nodes/{cloud_node_id}/node/snapshot`
// answers the system's snapshot and the revision it is at, serialized a step at a time as the
// connection takes it; `GET …/node/changes?from=REV` answers the change log after REV as JSON lines
// on one long-lived stream (service/nodes/nodeFeed.ts).
import { bearerToken } from "../../service/auth/bearerToken.js";
import { HttpError, baseHeaders } from "../../service/httpError.js";
import {
  FEED_LIMITS,
  type FeedLimits,
  type NodeFeeds,
  feedSource,
  firstChanges,
  openFeed,
  snapshotAtRevision,
} from "../../service/nodes/nodeFeed.js";
import type { DurableSystem } from "../../service/store/durableSystem.js";
import type { TenantRow } from "../../service/store/registryStore.js";
import { jsonPartsInTurns } from "../store/jsonSlices.js";
import { type NodeRouteDeps, type Target, admitNode, nodeRoute, unknownNode } from "./nodeRoutes.js";
import { refuseOtherQuery } from "./parseQuery.js";

/** What the feed routes need besides the node routes' deps. */
export interface NodeFeedDeps extends Omit<NodeRouteDeps, "readSystem" | "maxBodyBytes"> {
  /** The tenant's loaded system, held until `release` (TenantHost.acquire). */
  readonly acquire: (tenant: TenantRow) => Promise<{ readonly durable: DurableSystem; release(): void }>;
  readonly feeds: NodeFeeds;
  readonly limits?: Partial<FeedLimits>;
}

const FEED_ROUTE = /^\/([^/]+)\/cloud-nodes\/([^/]+)\/node\/(snapshot|changes)\/?$/;

/** Characters of the snapshot's JSON made per read of its answer. */
const PART_CHARS = 1 << 20;

/** The feed routes (N13): a handler answering them, and null for any other request. */
export function serviceNodeFeedRoutes(deps: NodeFeedDeps): (request: Request) => Promise<Response> | null {
  const limits: FeedLimits = { ...FEED_LIMITS, ...deps.limits };
  return nodeRoute(deps, "GET", FEED_ROUTE, (request, target, match) =>
    match[3] === "snapshot"
      ? answerSnapshot(deps, limits, request, target)
      : answerChanges(deps, limits, request, target),
  );
}

/** Whether the loaded system holds the node (a token outlives its node: a deleted node is unknown). */
function checkNode(durable: DurableSystem, t: Target): void {
  const target = durable.target;
  if (target.kind !== "system" || !target.live.current.cloudNodes.some((n) => n.id === t.cloudNodeId))
    throw unknownNode(t.cloudNodeId);
}

/** The snapshot at its revision (N13), its JSON made a step at a time as the connection takes it. */
async function answerSnapshot(deps: NodeFeedDeps, limits: FeedLimits, request: Request, t: Target): Promise<Response> {
  await admitNode(deps, request, t, "download its system");
  refuseOtherQuery(new URL(request.url), []);
  const lease = await deps.acquire(t.tenant);
  let at: { revision: number; snapshot: unknown };
  try {
    checkNode(lease.durable, t);
    at = await snapshotAtRevision(lease.durable, limits.settleMs);
  } finally {
    lease.release();
  }
  const encoder = new TextEncoder();
  // The snapshot never changes (a write makes a new one): it is serialized while writes go on.
  const parts = jsonPartsInTurns(at.snapshot, PART_CHARS);
  let head: string | undefined = `{"revision":${at.revision},"snapshot":`;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await parts.next();
        if (next.done) {
          controller.enqueue(encoder.encode("}"));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(head === undefined ? next.value : head + next.value));
        head = undefined;
      },
      async cancel() {
        await parts.return(undefined);
      },
    },
    { highWaterMark: 1 },
  );
  return new Response(body, { status: 200, headers: baseHeaders({}) });
}

/** `from`: a whole number (N15). */
function fromOf(url: URL): number {
  refuseOtherQuery(url, ["from"]);
  const given = url.searchParams.getAll("from");
  const n = given.length === 1 && /^[0-9]{1,15}$/.test(given[0]!) ? Number(given[0]) : Number.NaN;
  if (Number.isNaN(n))
    throw new HttpError(400, "Invalid query parameters.", [
      { path: "from", message: "Give once the revision the node holds, a whole number." },
    ]);
  return n;
}

/** The change feed after `from` (N14–N18): refused before it starts (409, 410), else a stream of JSON lines. */
async function answerChanges(deps: NodeFeedDeps, limits: FeedLimits, request: Request, t: Target): Promise<Response> {
  await admitNode(deps, request, t, "follow its system's changes");
  const from = fromOf(new URL(request.url));
  const token = bearerToken(request.headers.get("authorization"))!;
  const lease = await deps.acquire(t.tenant);
  let feed: ReturnType<typeof openFeed>;
  try {
    checkNode(lease.durable, t);
    const source = feedSource(lease.durable);
    if (source === null) throw new HttpError(503, "This system's store cannot feed cloud nodes.");
    const first = await firstChanges(source, from, limits.batch);
    // Valid while the node's token is, and its system is the one the feed was opened on (N18).
    const valid = () => {
      const node = deps.nodes.tokenNode(token);
      return (
        node?.systemId === t.systemId &&
        node.cloudNodeId === t.cloudNodeId &&
        deps.registry.tenantByKey(t.systemId)?.n === t.tenant.n
      );
    };
    let forget = () => {};
    feed = openFeed(source, from, first, { limits, valid, ended: () => forget() });
    forget = deps.feeds.add(t.systemId, t.cloudNodeId, t.tenant.n, feed);
  } finally {
    // The feed holds no lease: the system may be evicted, which ends the feed (the node reconnects).
    lease.release();
  }
  return new Response(feed.stream, {
    status: 200,
    headers: {
      "content-type": "application/x-ndjson; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      // Proxies pass each line on as it comes.
      "x-accel-buffering": "no",
    },
  });
}
