// Delivery of `rsop serve --data` webhooks to a real HTTPS receiver on 127.0.0.1 (a self-signed
// certificate made by openssl), from a real server over a real SQLite file. Backoff is shortened by
// the server's options; no test asserts a duration.
import { afterAll, beforeAll, expect, test } from "vitest";
import type { WebhookOptions } from "../../src/service/webhooks/webhookService.js";
import { verifySignature } from "../../src/webhooks.js";
import { building } from "../live/fixture.js";
import { caller, dataDir, startData } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";
import { RECEIVER_ALLOW, Receiver, eventually, selfSignedCertificate } from "./receiver.js";

afterAll(removeTempDirs);

let tls: { cert: string; key: string };
beforeAll(() => {
  tls = selfSignedCertificate();
});

const SUBS = "/api/organizations/sys-1/subscriptions";
const FAST: WebhookOptions = { backoffMs: 20, maxBackoffMs: 200, attempts: 8, timeoutMs: 5000, allow: RECEIVER_ALLOW };
const SCAN = {
  deviceId: "d-front",
  at: "2026-04-15T12:00:00Z",
  credential: { credentialNumber: 1001, facilityCode: 10 },
  pin: "90817263",
};

async function setup(options: WebhookOptions = FAST) {
  const { db } = dataDir();
  const started = await startData(db, building(), { webhooks: options });
  const receiver = await Receiver.start(tls);
  return { ...started, db, receiver, api: caller(started.server.url, ""), sys: started.call };
}

function subscription(url: string, extra: Record<string, unknown> = {}) {
  return {
    name: "Everything",
    url,
    scope: "this",
    authentication: { type: "None" },
    events: [
      "entity.added",
      "entity.modified",
      "entity.removed",
      "device.request.allowed",
      "device.request.denied",
      "device.request.unknown",
    ],
    sslVerification: false,
    ...extra,
  };
}

test("a self-signed receiver with sslVerification false gets the events of a write and of a decision: JSON POSTs whose signature verifies, with the Basic credentials; the odometer counts them", async () => {
  const { api, sys, receiver } = await setup();
  const id = (
    await api(
      "POST",
      SUBS,
      subscription(receiver.url, {
        secret: "s3cret-key",
        authentication: { type: "Basic", user: "hook-user", password: "pa:ss wörd" },
        secrecyLevel: 0,
      }),
    )
  ).body.id;
  expect((await sys("POST", "/groups", { name: "Night watch" })).status).toBe(200);
  const decided = await sys("POST", "/decisions", SCAN);
  expect(decided.body.outcome).toBe("allowed");
  await receiver.waitFor(() => receiver.delivered.length >= 2);
  const [change, access] = receiver.delivered;
  for (const r of [change!, access!]) {
    expect(r.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(verifySignature(r.raw, r.headers["x-service-signature"] as string, "s3cret-key")).toBe(true);
    expect(r.headers["x-service-signature"]).toMatch(/^[0-9a-f]{40}$/);
    expect(r.headers.authorization).toBe(`Basic ${Buffer.from("hook-user:pa:ss wörd").toString("base64")}`);
  }
  expect(change!.body).toMatchObject({
    topic: "entity.added",
    systemId: "sys-1",
    entityType: "group",
    data: { name: "Night watch" },
    sequence: 1,
  });
  // HW4: every notification carries its subscription's sequence number (1, 2, … in outbox order).
  expect(access!.body).toEqual({
    topic: "device.request.allowed",
    id: access!.body.id,
    occurredAt: "2026-04-15T12:00:00.000Z",
    systemId: "sys-1",
    cloudNode: { id: "n-main", name: "Main Gateway" },
    device: { id: "d-front", name: "Front Door" },
    holder: { id: "h-ann", firstName: "Ann", lastName: "Lee" },
    credential: { id: "c-ann", credentialNumber: 1001, facilityCode: 10 },
    reason: "allowed",
    activeRuleId: "r-staff-door",
    duress: false,
    floors: [],
    sequence: 2,
  });
  // The typed PIN is in no notification, even at secrecy level 0.
  for (const r of receiver.all) expect(r.raw.toString("utf8")).not.toContain(SCAN.pin);
  await eventually(async () => (await api("GET", `${SUBS}/${id}`)).body.odometer === 2, 5000, "the odometer");
  // A wrong secret does not verify.
  expect(verifySignature(change!.raw, change!.headers["x-service-signature"] as string, "other")).toBe(false);
});

test("sslVerification true refuses the self-signed receiver: the event is parked after its last attempt, listed, and re-delivered once the subscription accepts the certificate", async () => {
  const { api, sys, receiver } = await setup({ ...FAST, attempts: 2 });
  const id = (await api("POST", SUBS, subscription(receiver.url, { sslVerification: true, events: ["entity.added"] })))
    .body.id;
  await sys("POST", "/groups", { name: "Parked group" });
  let parked: any;
  await eventually(
    async () => {
      parked = await api("GET", `${SUBS}/${id}/parked`);
      return parked.body.length === 1;
    },
    20_000,
    "the parked event",
  );
  expect(receiver.all).toEqual([]);
  expect(parked.headers.get("x-total-count")).toBe("1");
  expect(parked.body[0]).toMatchObject({
    topic: "entity.added",
    reason: "failed",
    attempts: 2,
    event: { entityType: "group", data: { name: "Parked group" } },
  });
  expect(parked.body[0].lastError).toMatch(/self[- ]signed|SELF_SIGNED|certificate/i);
  expect((await api("GET", `${SUBS}/${id}`)).body.odometer).toBe(0);

  const sub = (await api("GET", `${SUBS}/${id}`)).body;
  expect((await api("PUT", `${SUBS}/${id}`, { ...sub, sslVerification: false })).status).toBe(204);
  const again = await api("POST", `${SUBS}/${id}/parked/redeliver`);
  expect(again).toMatchObject({ status: 200, body: { redelivered: 1 } });
  await receiver.waitFor(() => receiver.delivered.length === 1);
  expect(receiver.delivered[0]!.body.id).toBe(parked.body[0].id);
  expect((await api("GET", `${SUBS}/${id}/parked`)).body).toEqual([]);
});

test("a receiver that fails the first 5 attempts gets every event afterwards exactly in order, each delivered once", async () => {
  const { api, sys, receiver } = await setup();
  receiver.failNext = 5;
  await api("POST", SUBS, subscription(receiver.url, { events: ["entity.added"] }));
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push((await sys("POST", "/groups", { name: `Crew ${i}` })).body.id);
  await receiver.waitFor(() => receiver.delivered.length === 12);
  expect(receiver.all.slice(0, 5).map((r) => r.status)).toEqual([500, 500, 500, 500, 500]);
  // Head of line: every failed attempt was the first event.
  expect(new Set(receiver.all.slice(0, 6).map((r) => r.body.entityId))).toEqual(new Set([ids[0]]));
  expect(receiver.delivered.map((r) => r.body.entityId)).toEqual(ids);
});

test("a receiver that is down gets the events in order once it is back; a refused write emits nothing", async () => {
  const { api, sys, receiver } = await setup({ ...FAST, attempts: 1000 });
  await receiver.stop();
  await api("POST", SUBS, subscription(receiver.url, { events: ["entity.added", "entity.removed"] }));
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await sys("POST", "/groups", { name: `Shift ${i}` })).body.id);
  expect((await sys("POST", "/groups", { name: "" })).status).toBe(400);
  expect((await sys("DELETE", `/groups/${ids[0]}`)).status).toBe(204);
  await new Promise((r) => setTimeout(r, 300)); // a few refused connections
  await receiver.listen();
  await receiver.waitFor(() => receiver.delivered.length === 6);
  expect(receiver.delivered.map((r) => `${r.body.topic} ${r.body.entityId}`)).toEqual([
    ...ids.map((g) => `entity.added ${g}`),
    `entity.removed ${ids[0]}`,
  ]);
});

test("each secrecy level filters what its subscriber receives", async () => {
  const { api, sys, receiver } = await setup();
  for (const level of [0, 1, 2])
    await api(
      "POST",
      SUBS,
      subscription(receiver.url, {
        name: `level ${level}`,
        secrecyLevel: level,
        events: ["entity.added", "device.request.allowed"],
      }),
    );
  await sys("POST", "/holders", {
    firstName: "Zoe",
    lastName: "Park",
    email: "zoe@example.com",
    pin: "4455",
    credentials: [{ types: ["card"], credentialNumber: 4242, facilityCode: 10 }],
  });
  await sys("POST", "/decisions", SCAN);
  await receiver.waitFor(() => receiver.delivered.length === 9);
  const bodies = receiver.delivered.map((r) => r.raw.toString("utf8"));
  expect(bodies.filter((b) => b.includes('"4455"'))).toHaveLength(1); // level 0's holder event only
  expect(bodies.filter((b) => b.includes("4242"))).toHaveLength(2); // level 0: holder and credential events
  expect(bodies.filter((b) => b.includes("zoe@example.com"))).toHaveLength(2); // levels 0 and 1
  expect(bodies.filter((b) => b.includes('"Ann"'))).toHaveLength(2); // the access event at levels 0 and 1
  expect(bodies.filter((b) => b.includes('"credential":null'))).toHaveLength(2); // the access event at levels 1 and 2
});

test("a decision is answered while the subscriber holds its notification open; the backlog of access events is capped, the oldest parked and re-deliverable", async () => {
  const { api, sys, receiver } = await setup({ ...FAST, maxPendingAccess: 3, timeoutMs: 60_000 });
  receiver.hang = true;
  const id = (await api("POST", SUBS, subscription(receiver.url, { events: ["device.request.allowed"] }))).body.id;
  expect((await sys("POST", "/decisions", SCAN)).status).toBe(200);
  await eventually(() => receiver.open === 1, 10_000, "the receiver to hold a notification");
  // The receiver holds the first notification; decisions are still answered at once.
  const answered = await sys(
    "POST",
    "/decisions",
    Array.from({ length: 10 }, () => SCAN),
  );
  expect(answered.status).toBe(200);
  expect(receiver.open).toBe(1);
  const parked = await api("GET", `${SUBS}/${id}/parked?per_page=100`);
  // 11 events: the one in flight and the newest beyond it stay pending (3), the 8 oldest are parked.
  expect(parked.headers.get("x-total-count")).toBe("8");
  expect(new Set(parked.body.map((p: any) => p.reason))).toEqual(new Set(["backlog"]));
  receiver.hang = false;
  await receiver.stop();
  await receiver.listen();
  // The 3 newest, and the oldest (in flight when it was parked: its retry delivers it, W8).
  await receiver.waitFor(() => receiver.delivered.length >= 4);
  let left: any;
  await eventually(
    async () => {
      left = await api("GET", `${SUBS}/${id}/parked?per_page=100`);
      return left.body.length === 7;
    },
    10_000,
    "7 parked events",
  );
  expect(
    (await api("POST", `${SUBS}/${id}/parked/redeliver`, { ids: [left.body[0].id, "no-such-event"] })).body,
  ).toEqual({ redelivered: 1 });
  await receiver.waitFor(() => receiver.delivered.length >= 5);
  expect((await api("POST", `${SUBS}/${id}/parked/redeliver`)).body).toEqual({ redelivered: 6 });
  await receiver.waitFor(() => receiver.delivered.length >= 11);
  expect(new Set(receiver.delivered.map((r) => r.body.id)).size).toBe(11);
  expect((await api("GET", `${SUBS}/${id}/parked`)).body).toEqual([]);
});

test("expiresAt reached: the subscription becomes inactive and gets nothing more", async () => {
  const { api, sys, receiver } = await setup();
  const expiresAt = new Date(Date.now() + 4000).toISOString(); // room for a busy machine to deliver the first event before
  const id = (await api("POST", SUBS, subscription(receiver.url, { events: ["entity.added"], expiresAt }))).body.id;
  expect((await api("GET", `${SUBS}/${id}`)).body.active).toBe(true);
  await sys("POST", "/groups", { name: "Before expiry" });
  await receiver.waitFor(() => receiver.delivered.length === 1);
  await eventually(async () => (await api("GET", `${SUBS}/${id}`)).body.active === false, 10_000, "active false");
  await sys("POST", "/groups", { name: "After expiry" });
  await new Promise((r) => setTimeout(r, 300));
  expect(receiver.all.map((r) => r.body.data.name)).toEqual(["Before expiry"]);
});

test("an inactive subscription records nothing; once active again it gets the events from then on", async () => {
  const { api, sys, receiver } = await setup();
  const body = subscription(receiver.url, { events: ["entity.added"], active: false });
  const id = (await api("POST", SUBS, body)).body.id;
  await sys("POST", "/groups", { name: "While inactive" });
  expect((await api("PUT", `${SUBS}/${id}`, { ...body, active: true, secrecyLevel: 1 })).status).toBe(204);
  await sys("POST", "/groups", { name: "While active" });
  await receiver.waitFor(() => receiver.delivered.length === 1);
  await new Promise((r) => setTimeout(r, 200));
  expect(receiver.all.map((r) => r.body.data.name)).toEqual(["While active"]);
});
