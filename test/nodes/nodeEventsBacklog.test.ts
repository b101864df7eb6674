// A node's uploaded access events count against a subscription's backlog cap (semantics W8, N25), as
// the service's own decision events do: over a real service server on 127.0.0.1 over a SQLite file
// and a real HTTPS receiver that holds its first notification, an upload of 10 events to a
// subscription capped at 3 parks the 7 oldest.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { loadEngineOrThrow } from "../../src/index.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { RECEIVER_ALLOW, Receiver, eventually, selfSignedCertificate } from "../webhooks/receiver.js";

const ROOT = "root-admin-token-0123456789";
const NODE = "node-chicago-main";
let server: RunningServiceServer | undefined;
let receiver: Receiver | undefined;

afterAll(async () => {
  await server?.close();
  await receiver?.stop();
  removeTempDirs();
});

async function call(method: string, path: string, body?: unknown, token = ROOT) {
  const r = await fetch(`${server!.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text === "" ? undefined : JSON.parse(text) };
}

test("an upload over the backlog cap parks the oldest of its events (W8, N25)", async () => {
  receiver = await Receiver.start(selfSignedCertificate());
  server = await startServiceServer({
    dataFile: join(tempDir(), "service.db"),
    token: ROOT,
    port: 0,
    log: () => {},
    webhooks: { allow: RECEIVER_ALLOW, backoffMs: 50, maxPendingAccess: 3, timeoutMs: 60_000 },
  });
  const root = (await call("GET", "/api/organizations/mine")).body[0].id as string;
  const dealer = (await call("POST", `/api/organizations/${root}/children`, { name: "Dealer" })).body.id as string;
  const systemId = randomUUID();
  const customer = (
    await call("POST", `/api/organizations/${dealer}/children`, {
      name: "Clinic",
      import: { ...(BUILDING_JSON as object), systemId },
    })
  ).body.id as string;
  const sub = await call("POST", `/api/organizations/${customer}/subscriptions`, {
    name: "capped",
    url: receiver.url,
    scope: "this",
    authentication: { type: "None" },
    events: ["device.request.allowed", "device.request.denied", "device.request.unknown"],
    sslVerification: false,
  });
  expect(sub.status).toBe(201);
  const token = (await call("POST", `/${systemId}/cloud-nodes/${NODE}/token`)).body.token as string;
  receiver.hang = true;
  const engine = loadEngineOrThrow({ ...(BUILDING_JSON as object), systemId });
  const events = Array.from({ length: 10 }, (_, i) => {
    const at = `2026-04-15T09:${String(i).padStart(2, "0")}:00.000Z`;
    const request = { deviceId: "door-main-entrance", at, credential: { credentialNumber: 100 + i, facilityCode: 17 } };
    return { eventId: randomUUID(), occurredAt: at, request, decision: engine.decide(request) };
  });
  const uploaded = await call("POST", `/${systemId}/cloud-nodes/${NODE}/node/events`, { events }, token);
  expect(uploaded.status).toBe(200);
  expect(uploaded.body).toEqual({ accepted: 10, duplicates: 0 });
  const parkedCount = async () =>
    Number(
      (await call("GET", `/api/organizations/${customer}/subscriptions/${sub.body.id}/parked`)).headers.get(
        "x-total-count",
      ),
    );
  await eventually(async () => (await parkedCount()) === 7, 10_000, "7 parked");
});
