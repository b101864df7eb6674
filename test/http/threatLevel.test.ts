// ★ Threat levels over real HTTP (docs/semantics.md TL1): `PUT /{system_id}/cloud-nodes/{id}/threat-level`
// on a `--data` server over a real SQLite file, the node's reads showing `threatLevel`, and the
// `cloudNode.threatLevel.changed` webhook delivered to a real HTTPS receiver on 127.0.0.1 beside
// the node's `entity.modified` — nothing for the same level again.
import { afterAll, beforeAll, expect, test } from "vitest";
import { building } from "../live/fixture.js";
import { RECEIVER_ALLOW, Receiver, selfSignedCertificate } from "../webhooks/receiver.js";
import { caller, dataDir, expectError, inspect, startData, unchanged } from "./dataSupport.js";
import { removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

let tls: { cert: string; key: string };
beforeAll(() => {
  tls = selfSignedCertificate();
});

const SUBS = "/api/organizations/sys-1/subscriptions";
const TOPIC = "cloudNode.threatLevel.changed";
const FAST = { backoffMs: 20, maxBackoffMs: 200, attempts: 8, timeoutMs: 5000, allow: RECEIVER_ALLOW };

test("TL1: 204 sets the level, reads show it (0 when none is set), 400 at body.level, 404 for an unknown node, the change stored", async () => {
  const { db } = dataDir();
  const { server, call } = await startData(db, building());
  expect((await call("GET", "/cloud-nodes/n-main")).body.threatLevel).toBe(0);
  const set = await call("PUT", "/cloud-nodes/n-main/threat-level", { level: 5 });
  expect(set.status).toBe(204);
  expect(set.body).toBeUndefined();
  expect((await call("GET", "/cloud-nodes/n-main")).body.threatLevel).toBe(5);
  const list = (await call("GET", "/cloud-nodes")).body as { id: string; threatLevel: number }[];
  expect(Object.fromEntries(list.map((n) => [n.id, n.threatLevel]))).toEqual({ "n-main": 5, "n-annex": 0 });
  for (const level of [256, -1, 1.5, "2"]) {
    const r = await unchanged(
      server,
      () => call("PUT", "/cloud-nodes/n-main/threat-level", { level }),
      `level ${JSON.stringify(level)}`,
    );
    expect(expectError(r, 400, "bad level").map((i) => i.path)).toEqual(["body.level"]);
  }
  const missing = await unchanged(server, () => call("PUT", "/cloud-nodes/n-main/threat-level", {}), "no level");
  expect(expectError(missing, 400, "no level").map((i) => i.path)).toEqual(["body.level"]);
  const unknown = await unchanged(
    server,
    () => call("PUT", "/cloud-nodes/n-nope/threat-level", { level: 1 }),
    "unknown node",
  );
  expectError(unknown, 404, "unknown node");
  // The same level again changes nothing (the very snapshot object stays); the log keeps the
  // request, as it keeps every accepted write.
  const before = server.durable.target.live.snapshot;
  expect((await call("PUT", "/cloud-nodes/n-main/threat-level", { level: 5 })).status).toBe(204);
  expect(server.durable.target.live.snapshot).toBe(before);
  await server.close();
  const stored = inspect(db).changes.map(({ operation: { method, path, body } }) => ({ method, path, body }));
  expect(stored).toEqual([
    { method: "PUT", path: "/cloud-nodes/n-main/threat-level", body: { level: 5 } },
    { method: "PUT", path: "/cloud-nodes/n-main/threat-level", body: { level: 5 } },
  ]);
});

test("TL1: a change is delivered as cloudNode.threatLevel.changed {cloudNodeId, level, previous} beside entity.modified; a node array takes its node's only; the same level again sends nothing", async () => {
  const { db } = dataDir();
  const { server } = await startData(db, building(), { webhooks: FAST });
  const api = caller(server.url, "");
  const sys = caller(server.url);
  const receiver = await Receiver.start(tls);
  const sub = (name: string, scope: unknown, events: string[]) => ({
    name,
    url: receiver.url,
    scope,
    // The Basic user tells the receiver which subscription a notification is for.
    authentication: { type: "Basic", user: name, password: "pw" },
    events,
    sslVerification: false,
  });
  expect((await api("POST", SUBS, sub("all", "this", [TOPIC, "entity.modified"]))).status).toBe(201);
  expect((await api("POST", SUBS, sub("annex", ["n-annex"], [TOPIC]))).status).toBe(201);
  // An array scope admits cloud-node events only: the topic is one.
  const mixed = await api("POST", SUBS, sub("mixed", ["n-main"], [TOPIC, "entity.added"]));
  expect(expectError(mixed, 400, "entity.* with a node array").map((i) => i.path)).toEqual(["body.events[1]"]);

  expect((await sys("PUT", "/cloud-nodes/n-main/threat-level", { level: 3 })).status).toBe(204);
  expect((await sys("PUT", "/cloud-nodes/n-main/threat-level", { level: 3 })).status).toBe(204);
  expect((await sys("PUT", "/cloud-nodes/n-main/threat-level", { level: 0 })).status).toBe(204);
  expect((await sys("PUT", "/cloud-nodes/n-annex/threat-level", { level: 200 })).status).toBe(204);
  await receiver.waitFor(() => receiver.delivered.length >= 7);
  const summary = (name: string) =>
    receiver.delivered
      .filter((r) => r.headers.authorization === `Basic ${Buffer.from(`${name}:pw`).toString("base64")}`)
      .map((r) =>
        r.body.topic === TOPIC
          ? `${r.body.topic} ${r.body.cloudNodeId} ${r.body.previous}→${r.body.level}`
          : `${r.body.topic} ${r.body.entityType} ${r.body.entityId}`,
      );
  expect(summary("all")).toEqual([
    "entity.modified cloudNode n-main",
    `${TOPIC} n-main 0→3`,
    "entity.modified cloudNode n-main",
    `${TOPIC} n-main 3→0`,
    "entity.modified cloudNode n-annex",
    `${TOPIC} n-annex 0→200`,
  ]);
  expect(summary("annex")).toEqual([`${TOPIC} n-annex 0→200`]);
  const event = receiver.delivered.find((r) => r.body.topic === TOPIC)!.body;
  expect(event).toMatchObject({ systemId: "sys-1", cloudNodeId: "n-main", level: 3, previous: 0 });
  expect(typeof event.id).toBe("string");
  expect(Number.isNaN(Date.parse(event.occurredAt))).toBe(false);
  await receiver.stop();
});
