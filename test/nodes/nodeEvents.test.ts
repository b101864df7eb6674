// A cloud node's access events on the service (semantics N20–N29), over a real service server on
// 127.0.0.1 over a SQLite file and a real HTTPS receiver: a node uploads the decisions it made (the
// engine's own, made here by the library), the service answers how many it accepted and skipped,
// and the receiver gets each accepted one once, in order, shaped, scoped, filtered and signed as the
// service's own decision events are: across repeated uploads, a restart, and bad or foreign calls.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { verifySignature } from "../../src/events/signature.js";
import { loadEngineOrThrow } from "../../src/index.js";
import type { Engine } from "../../src/index.js";
import { DEDUPE_WINDOW, nodeEventsKind } from "../../src/service/nodes/nodeEvents.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { PG, SKIP_NOTE, eventually, freshDatabase, useCluster } from "../store/pgSupport.js";
import { RECEIVER_ALLOW, type Received, Receiver, selfSignedCertificate } from "../webhooks/receiver.js";

useCluster();

const ROOT = "root-admin-token-0123456789";
const NODE = "node-chicago-main";
const SECOND = "node-london-annex";
const SECRET = "node-events-secret";
const DAY = 86_400_000;

let server: RunningServiceServer;
let receiver: Receiver;
let engine: Engine;
let file = "";
/** Added to the real clock: the dedupe window's days pass without waiting. */
let shift = 0;
const ids = { dealer: "", a: "", b: "", sysA: "", sysB: "" };
const tokens = { node: "", second: "" };

interface Answer {
  status: number;
  body: any;
}

async function call(token: string | null, method: string, path: string, body?: unknown, type = "application/json") {
  return callAt(server.url, token, method, path, body, type);
}

async function callAt(
  base: string,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
  type = "application/json",
): Promise<Answer> {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": type } : {}),
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text === "" ? undefined : JSON.parse(text) } as Answer;
}

function ok(r: Answer, status: number, what: string): any {
  expect(r.status, `${what}: ${JSON.stringify(r.body)?.slice(0, 600)}`).toBe(status);
  return r.body;
}

const paths = (r: Answer): string[] => (r.body?.error?.issues ?? []).map((i: { path: string }) => i.path);

const start = () =>
  startServiceServer({
    dataFile: file,
    token: ROOT,
    port: 0,
    host: "127.0.0.1",
    webhooks: { allow: RECEIVER_ALLOW, backoffMs: 50 },
    now: () => Date.now() + shift,
    log: () => {},
  });

const upload = (events: unknown[], token = tokens.node, node = NODE, sys = ids.sysA) =>
  call(token, "POST", `/${sys}/cloud-nodes/${node}/node/events`, { events });

/** The subscription a notification went to: its Basic user. */
function labelOf(r: Received): string {
  const auth = String(r.headers.authorization ?? "");
  return Buffer.from(auth.replace(/^Basic /, ""), "base64")
    .toString("utf8")
    .split(":")[0]!;
}
const to = (label: string) => receiver.delivered.filter((r) => labelOf(r) === label);

/** A node event: a scan at a door of NODE decided by the engine, at `minute` past 09:00. */
function scan(credentialNumber: number, minute: number, deviceId = "door-main-entrance") {
  const at = `2026-04-15T09:${String(minute).padStart(2, "0")}:00.000Z`;
  const request = { deviceId, at, credential: { credentialNumber, facilityCode: 17 } };
  return { eventId: randomUUID(), occurredAt: at, request, decision: engine.decide(request) };
}

async function subscribe(org: string, label: string, scope: unknown, secrecyLevel: number): Promise<void> {
  ok(
    await call(ROOT, "POST", `/api/organizations/${org}/subscriptions`, {
      name: label,
      url: receiver.url,
      scope,
      authentication: { type: "Basic", user: label, password: "pw" },
      events: ["device.request.allowed", "device.request.denied", "device.request.unknown"],
      sslVerification: false,
      secrecyLevel,
      secret: SECRET,
    }),
    201,
    label,
  );
}

beforeAll(async () => {
  file = join(tempDir(), "service.db");
  receiver = await Receiver.start(selfSignedCertificate());
  server = await start();
  const rootId = (ok(await call(ROOT, "GET", "/api/organizations/mine"), 200, "mine") as { id: string }[])[0]!.id;
  ids.dealer = ok(await call(ROOT, "POST", `/api/organizations/${rootId}/children`, { name: "Dealer" }), 201, "d").id;
  for (const key of ["a", "b"] as const) {
    const made = ok(
      await call(ROOT, "POST", `/api/organizations/${ids.dealer}/children`, {
        name: `Customer ${key}`,
        import: { ...(BUILDING_JSON as object), systemId: randomUUID() },
      }),
      201,
      key,
    );
    ids[key] = made.id;
    ids[key === "a" ? "sysA" : "sysB"] = made.systemId;
  }
  engine = loadEngineOrThrow({ ...(BUILDING_JSON as object), systemId: ids.sysA });
  tokens.node = ok(await call(ROOT, "POST", `/${ids.sysA}/cloud-nodes/${NODE}/token`), 200, "token").token;
  tokens.second = ok(await call(ROOT, "POST", `/${ids.sysA}/cloud-nodes/${SECOND}/token`), 200, "token 2").token;
  await subscribe(ids.a, "own", "this", 0);
  await subscribe(ids.a, "annex", [SECOND], 0);
  await subscribe(ids.dealer, "dealer", "recursive", 1);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await receiver?.stop();
  removeTempDirs();
});

const sent: ReturnType<typeof scan>[] = [];

describe("N20–N23: an upload becomes the service's access events", () => {
  test("3 events: 200 accepted 3; each subscription that wants them gets them once, in order", async () => {
    sent.push(scan(10234, 1), scan(99999, 2), scan(11876, 3, "door-staff-entrance"));
    expect(ok(await upload(sent), 200, "upload")).toEqual({ accepted: 3, duplicates: 0 });
    await receiver.waitFor(() => to("own").length >= 3 && to("dealer").length >= 3, 20_000, "3 + 3 notifications");
    const own = to("own");
    expect(own.map((r) => r.body.id)).toEqual(sent.map((e) => e.eventId));
    expect(own.map((r) => r.body.sequence)).toEqual([1, 2, 3]);
    own.forEach((r, i) => {
      const e = sent[i]!;
      expect(verifySignature(r.raw, r.headers["x-service-signature"] as string, SECRET)).toBe(true);
      expect(r.body).toMatchObject({
        topic: e.decision.topic,
        occurredAt: e.occurredAt,
        systemId: ids.sysA,
        cloudNode: { id: NODE, name: "Chicago Main" },
        device: { id: e.request.deviceId },
        reason: e.decision.reason,
        activeRuleId: e.decision.activeRuleId,
        duress: e.decision.duress,
      });
      expect(r.body.holder?.id ?? null).toBe(e.decision.holderId);
    });
    expect(own[0]!.body.holder).toEqual({ id: "holder-0001", firstName: "Maria", lastName: "Alvarez" });
    expect(own[1]!.body.credential).toEqual({ id: null, credentialNumber: 99999, facilityCode: 17 });
    // The dealer's recursive subscription at secrecy level 1: the same events, no credential.
    expect(to("dealer").map((r) => [r.body.id, r.body.credential])).toEqual(sent.map((e) => [e.eventId, null]));
  });

  test("the same upload again: 200 duplicates 3; a partly new one: only the new ones, in order", async () => {
    expect(ok(await upload(sent), 200, "again")).toEqual({ accepted: 0, duplicates: 3 });
    const fresh = [scan(10234, 4), scan(20417, 5)];
    const mixed = [sent[0]!, fresh[0]!, sent[2]!, fresh[1]!, fresh[1]!];
    expect(ok(await upload(mixed), 200, "mixed")).toEqual({ accepted: 2, duplicates: 3 });
    sent.push(...fresh);
    await receiver.waitFor(() => to("own").length >= 5, 20_000, "5 notifications");
    expect(to("own").map((r) => r.body.id)).toEqual(sent.map((e) => e.eventId));
    // The node-array subscription names the other node only: none of this node's events.
    expect(to("annex")).toEqual([]);
  });

  test("an event id is compared without regard to case", async () => {
    const upper = { ...sent[0]!, eventId: sent[0]!.eventId.toUpperCase() };
    expect(ok(await upload([upper]), 200, "upper")).toEqual({ accepted: 0, duplicates: 1 });
  });

  test("a node's event has the shape of the service's own decision event (one function)", async () => {
    const e = scan(10234, 6);
    ok(await call(ROOT, "POST", `/${ids.sysA}/decisions`, e.request), 200, "service decision");
    expect(ok(await upload([e]), 200, "node")).toEqual({ accepted: 1, duplicates: 0 });
    sent.push(e);
    await receiver.waitFor(() => to("own").length >= 7, 20_000, "7 notifications");
    const [service, node] = to("own").slice(5);
    const { id: a, sequence: _s, ...serviceRest } = service!.body;
    const { id: b, sequence: _n, ...nodeRest } = node!.body;
    expect(b).toBe(e.eventId);
    expect(a).not.toBe(b);
    expect(nodeRest).toEqual(serviceRest);
  });
});

describe("N21: bad uploads, every problem at its path", () => {
  test("malformed events: 400 with body.events[i].… paths, nothing stored", async () => {
    const good = scan(10234, 7);
    const bad = {
      eventId: "not-a-uuid",
      occurredAt: "yesterday",
      request: { deviceId: 5, at: "2026-04-15T09:00:00Z" },
      decision: { ...good.decision, outcome: good.decision.outcome === "allowed" ? "unknown" : "allowed" },
    };
    const r = await upload([good, bad]);
    expect(r.status).toBe(400);
    expect(paths(r)).toEqual(
      expect.arrayContaining([
        "body.events[1].eventId",
        "body.events[1].occurredAt",
        "body.events[1].decision.reason",
        "body.events[1].decision.topic",
        "body.events[1].request.deviceId",
      ]),
    );
    // The good event of the refused upload was not stored: it is accepted now.
    expect(ok(await upload([good]), 200, "good")).toEqual({ accepted: 1, duplicates: 0 });
    sent.push(good);
    const missing = await upload([{ eventId: randomUUID() }]);
    expect(paths(missing)).toEqual(
      expect.arrayContaining(["body.events[0].occurredAt", "body.events[0].request", "body.events[0].decision"]),
    );
    expect(paths(await upload(undefined as unknown as unknown[]))).toEqual(["body.events"]);
    const text = await call(tokens.node, "POST", `/${ids.sysA}/cloud-nodes/${NODE}/node/events`, "{}", "text/plain");
    expect(text.status).toBe(415);
  });

  test("1,001 events: 413 at body.events; over 1 MiB: 413", async () => {
    const e = scan(10234, 8);
    const many = Array.from({ length: 1001 }, () => ({ ...e, eventId: randomUUID() }));
    const r = await upload(many);
    expect([r.status, paths(r)]).toEqual([413, ["body.events"]]);
    const padded = { ...e, request: { ...e.request, note: "x".repeat(1024 * 1024) } };
    expect((await upload([padded])).status).toBe(413);
    // A bad request that a badRequest decision stands for is taken as it is.
    const malformed = { deviceId: "door-main-entrance", at: "not a time" };
    const decision = engine.decide(malformed);
    expect(decision.reason).toBe("badRequest");
    const event = { eventId: randomUUID(), occurredAt: "2026-04-15T09:09:00Z", request: malformed, decision };
    expect(ok(await upload([event]), 200, "badRequest")).toEqual({ accepted: 1, duplicates: 0 });
    sent.push({ ...event, occurredAt: "2026-04-15T09:09:00.000Z" } as unknown as ReturnType<typeof scan>);
  });
});

describe("N3, N20: who may upload", () => {
  test("another node's token 404 at the node; none 401; a person's 403; another system 404", async () => {
    const e = [scan(10234, 10)];
    const other = await upload(e, tokens.second);
    expect([other.status, paths(other)]).toEqual([404, ["cloud_node_id"]]);
    expect((await upload(e, "")).status).toBe(401);
    expect((await call(null, "POST", `/${ids.sysA}/cloud-nodes/${NODE}/node/events`, { events: e })).status).toBe(401);
    expect((await upload(e, ROOT)).status).toBe(403);
    const elsewhere = await upload(e, tokens.node, NODE, ids.sysB);
    expect([elsewhere.status, paths(elsewhere)]).toEqual([404, ["system_id"]]);
    const query = await call(tokens.node, "POST", `/${ids.sysA}/cloud-nodes/${NODE}/node/events?x=1`, { events: e });
    expect(query.status).toBe(400);
  });
});

describe("N23, N24: dedupe outlives a restart; the window is bounded", () => {
  test("after a restart the same events are duplicates; a new one is delivered", async () => {
    await server.close();
    server = await start();
    expect(ok(await upload(sent.slice(0, 3)), 200, "after restart")).toEqual({ accepted: 0, duplicates: 3 });
    const e = scan(10234, 11);
    expect(ok(await upload([sent[3]!, e]), 200, "new")).toEqual({ accepted: 1, duplicates: 1 });
    sent.push(e);
    await receiver.waitFor(() => to("own").length >= sent.length + 1, 20_000, "after restart");
    // Every event once, in upload order (and the service's own decision between them).
    const nodeIds = to("own")
      .map((r) => r.body.id)
      .filter((id: string) => sent.some((s) => s.eventId === id));
    expect(nodeIds).toEqual(sent.map((s) => s.eventId));
  });

  test(`batches older than ${DEDUPE_WINDOW.days} days leave the window`, async () => {
    const before = [...server.registry.records(nodeEventsKind(ids.sysA))];
    expect(before.length).toBeGreaterThan(1);
    shift = (DEDUPE_WINDOW.days + 1) * DAY;
    const e = scan(10234, 12);
    expect(ok(await upload([e]), 200, "later")).toEqual({ accepted: 1, duplicates: 0 });
    const after = [...server.registry.records(nodeEventsKind(ids.sysA))];
    expect(after.map((r) => (r.value as { ids: string[] }).ids)).toEqual([[e.eventId]]);
    shift = 0;
  });
});

test.skipIf(!PG.ok)(
  `N26 on PostgreSQL replicas: the same upload to both at once is stored once, delivered once${SKIP_NOTE}`,
  async () => {
    const url = await freshDatabase();
    const options = {
      storeUrl: url,
      token: ROOT,
      port: 0,
      host: "127.0.0.1",
      webhooks: { allow: RECEIVER_ALLOW, backoffMs: 50 },
      log: () => {},
    };
    const servers: RunningServiceServer[] = [];
    try {
      const a = await startServiceServer(options);
      servers.push(a);
      const rootId = (
        ok(await callAt(a.url, ROOT, "GET", "/api/organizations/mine"), 200, "mine") as { id: string }[]
      )[0]!.id;
      const dealer = ok(
        await callAt(a.url, ROOT, "POST", `/api/organizations/${rootId}/children`, { name: "PG dealer" }),
        201,
        "dealer",
      ).id;
      const made = ok(
        await callAt(a.url, ROOT, "POST", `/api/organizations/${dealer}/children`, {
          name: "PG customer",
          import: { ...(BUILDING_JSON as object), systemId: randomUUID() },
        }),
        201,
        "customer",
      );
      const sys: string = made.systemId;
      const b = await startServiceServer(options);
      servers.push(b);
      const token = ok(await callAt(a.url, ROOT, "POST", `/${sys}/cloud-nodes/${NODE}/token`), 200, "token").token;
      const path = `/${sys}/cloud-nodes/${NODE}/node/events`;
      ok(
        await callAt(a.url, ROOT, "POST", `/api/organizations/${made.id}/subscriptions`, {
          name: "pg",
          url: receiver.url,
          scope: "this",
          authentication: { type: "Basic", user: "pg", password: "pw" },
          events: ["device.request.allowed", "device.request.denied", "device.request.unknown"],
          sslVerification: false,
        }),
        201,
        "subscription",
      );
      await eventually(
        "B knows the node token",
        async () => (await callAt(b.url, token, "POST", path, { events: [] })).status === 200,
      );
      await eventually(
        "B knows the subscription",
        () => b.webhooks?.subscriptionsOf(made.id, "2.0").list().length === 1,
      );
      const pgEngine = loadEngineOrThrow({ ...(BUILDING_JSON as object), systemId: sys });
      const scanAt = (minute: number) => {
        const request = {
          deviceId: "door-main-entrance",
          at: `2026-04-15T10:${minute}0:00Z`,
          credential: { credentialNumber: 10234, facilityCode: 17 },
        };
        return { eventId: randomUUID(), occurredAt: request.at, request, decision: pgEngine.decide(request) };
      };
      const events = [scanAt(1), scanAt(2), scanAt(3), scanAt(4)];
      const answers = await Promise.all([a, b, a, b].map((s) => callAt(s.url, token, "POST", path, { events })));
      for (const r of answers) expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(answers.reduce((n, r) => n + r.body.accepted, 0)).toBe(4);
      expect(answers.every((r) => r.body.accepted + r.body.duplicates === 4)).toBe(true);
      // A later event through B: once it arrives, everything before it has.
      const last = scanAt(5);
      expect(ok(await callAt(b.url, token, "POST", path, { events: [last] }), 200, "last")).toEqual({
        accepted: 1,
        duplicates: 0,
      });
      await receiver.waitFor(() => to("pg").some((r) => r.body.id === last.eventId), 20_000, "the last event");
      expect(to("pg").map((r) => r.body.id)).toEqual([...events, last].map((e) => e.eventId));
    } finally {
      for (const s of servers.reverse()) await s.close();
    }
  },
  120_000,
);
