// docs/semantics.md section W (webhooks): the lines that the delivery and subscription tests do not
// already pin, one test named after each.
import { expect, test } from "vitest";
import { parseSubscriptionBody } from "../../src/service/webhooks/subscription.js";
import { accessEvent, changeEvents, filterEvent } from "../../src/webhooks.js";
import type { ChangeEvent } from "../../src/webhooks.js";
import { AT, liveOf } from "../live/fixture.js";
import { panelLive } from "../live/panelFixture.js";

const CTX = {
  generation: "2.0" as const,
  nodeIds: new Set(["n-main", "n-annex"]),
  now: Date.parse("2026-04-15T12:00:00Z"),
};
const BODY = {
  name: "Sub",
  url: "https://r.example/",
  scope: "this",
  authentication: { type: "None" },
  events: ["entity.added"],
};
const paths = (r: ReturnType<typeof parseSubscriptionBody>) => (r.ok ? [] : r.issues.map((i) => i.path));

test("W1. System events (entity.*) mix with organization or with cloud-node events; organization and cloud-node events never mix; an array scope admits cloud-node events only", () => {
  expect(
    paths(parseSubscriptionBody({ ...BODY, events: ["entity.added", "device.request.allowed"] }, "create", CTX)),
  ).toEqual([]);
  expect(
    paths(parseSubscriptionBody({ ...BODY, events: ["entity.removed", "organization.updated"] }, "create", CTX)),
  ).toEqual([]);
  expect(
    paths(parseSubscriptionBody({ ...BODY, events: ["permission.created", "device.request.denied"] }, "create", CTX)),
  ).toEqual(["body.events"]);
  expect(paths(parseSubscriptionBody({ ...BODY, scope: ["n-main"], events: ["entity.added"] }, "create", CTX))).toEqual(
    ["body.events[0]"],
  );
  // 1.0: entity.* are panel (cloud-node) events, so an array of serial numbers admits them.
  const one = { generation: "1.0" as const, nodeIds: new Set(["SN-1"]), now: CTX.now };
  expect(
    paths(
      parseSubscriptionBody(
        { ...BODY, scope: ["SN-1"], events: ["entity.added", "door.request.allowed"] },
        "create",
        one,
      ),
    ),
  ).toEqual([]);
  expect(
    paths(
      parseSubscriptionBody({ ...BODY, scope: "ouRecursive", events: ["entity.added", "ou.created"] }, "create", one),
    ),
  ).toEqual(["body.events"]);
});

test("W2. A blank name, an event named twice and a Basic user with a colon are refused; unknown fields (id, odometer, userId) are ignored; an empty secret means none", () => {
  expect(paths(parseSubscriptionBody({ ...BODY, name: "   " }, "create", CTX))).toEqual(["body.name"]);
  expect(paths(parseSubscriptionBody({ ...BODY, events: ["entity.added", "entity.added"] }, "create", CTX))).toEqual([
    "body.events[1]",
  ]);
  expect(
    paths(
      parseSubscriptionBody({ ...BODY, authentication: { type: "Basic", user: "a:b", password: "p" } }, "create", CTX),
    ),
  ).toEqual(["body.authentication.user"]);
  const r = parseSubscriptionBody({ ...BODY, id: "x", odometer: 9, userId: "u", secret: "" }, "create", CTX);
  expect(r.ok && r.value).toEqual({
    ...BODY,
    active: true,
    sslVerification: true,
    secrecyLevel: 1,
    expiresAt: null,
    secret: null,
  });
});

test("W3. An update keeps expiresAt and secret when it omits them, and clears them with null", () => {
  const current = {
    ...BODY,
    authentication: { type: "None" as const },
    active: true,
    sslVerification: true,
    secrecyLevel: 1 as const,
    expiresAt: "2030-01-01T00:00:00.000Z",
    secret: "k",
  };
  const update = { ...BODY, active: false, sslVerification: true, secrecyLevel: 2 };
  const kept = parseSubscriptionBody(update, "update", CTX, current);
  expect(kept.ok && [kept.value.expiresAt, kept.value.secret, kept.value.active]).toEqual([
    "2030-01-01T00:00:00.000Z",
    "k",
    false,
  ]);
  const cleared = parseSubscriptionBody({ ...update, expiresAt: null, secret: null }, "update", CTX, current);
  expect(cleared.ok && [cleared.value.expiresAt, cleared.value.secret]).toEqual([null, null]);
});

test("W5. An access event's credential: the one read (id null when no credential has the number), null for a PIN alone; an unknown device has no name and no node", () => {
  const live = liveOf();
  const snap = live.snapshot;
  const ev = (r: Record<string, unknown>) => accessEvent(live.engine.decide(r), r, snap, { id: "e", now: 0 });
  const unknownCard = ev({ deviceId: "d-front", at: AT, credential: { credentialNumber: 777, facilityCode: 10 } });
  expect([unknownCard.topic, unknownCard.holder, unknownCard.credential]).toEqual([
    "device.request.unknown",
    null,
    { id: null, credentialNumber: 777, facilityCode: 10 },
  ]);
  const pinOnly = ev({ deviceId: "d-front", at: AT, pin: "1234" });
  expect([pinOnly.holder?.id, pinOnly.credential]).toEqual(["h-ann", null]);
  const nowhere = ev({
    deviceId: "d-nowhere",
    at: "2026-04-15T12:00:00+02:00",
    credential: { credentialNumber: 1001, facilityCode: 10 },
  });
  expect([nowhere.reason, nowhere.device, nowhere.cloudNode, nowhere.occurredAt]).toEqual([
    "unknownDevice",
    { id: "d-nowhere", name: null },
    null,
    "2026-04-15T10:00:00.000Z",
  ]);
  expect(ev({ deviceId: "d-front", credential: { credentialNumber: 1001, facilityCode: 10 } }).occurredAt).toBe(
    "1970-01-01T00:00:00.000Z",
  );
});

function events(
  live: ReturnType<typeof liveOf>,
  op: { method: "POST" | "PUT" | "DELETE"; path: string; body?: unknown },
): string[] {
  const before = live.snapshot;
  const r = live.apply(op);
  if (!r.ok || !("patches" in r)) throw new Error(`${op.method} ${op.path} refused`);
  return changeEvents({ before, after: live.snapshot, patches: r.patches, occurredAt: "t" }).map(
    (e: ChangeEvent) => `${e.topic} ${e.entityType} ${String(e.entityId)}`,
  );
}

test("W6. A holder added or removed brings its credentials' events; a credential change emits only credential events; a deleted group modifies the holders that lose it; 1.0 persons are holders and the panel's config is its cloud node", () => {
  const live = liveOf();
  const added = events(live, {
    method: "POST",
    path: "/holders",
    body: {
      firstName: "Zed",
      lastName: "Ray",
      credentials: [{ types: ["card"], credentialNumber: 5555, facilityCode: 10 }],
    },
  });
  expect(added.map((e) => e.split(" ").slice(0, 2).join(" "))).toEqual([
    "entity.added holder",
    "entity.added credential",
  ]);
  expect(
    events(live, {
      method: "POST",
      path: "/holders/h-ann/credentials",
      body: { types: ["card"], credentialNumber: 4444, facilityCode: 10 },
    }).map((e) => e.split(" ").slice(0, 2).join(" ")),
  ).toEqual(["entity.added credential"]);
  expect(events(live, { method: "DELETE", path: "/holders/h-bob" })).toEqual([
    "entity.removed credential c-bob",
    "entity.removed credential c-bob-phone",
    "entity.removed holder h-bob",
  ]);
  expect(events(live, { method: "DELETE", path: "/groups/g-empty" })).toEqual([
    "entity.removed group g-empty",
    "entity.modified holder h-cy",
  ]);

  const panel = panelLive();
  const apply = (op: { method: "POST" | "PUT" | "DELETE"; path: string; body?: unknown }) => {
    const before = panel.snapshot;
    const r = panel.apply(op);
    if (!r.ok || !("patches" in r)) throw new Error(`${op.path} refused`);
    return changeEvents({ before, after: panel.snapshot, patches: r.patches, occurredAt: "t" });
  };
  const removed = apply({ method: "DELETE", path: "/api/persons/1" });
  expect(removed.map((e) => `${e.topic} ${e.entityType} ${String(e.entityId)} ${e.systemId}`)).toEqual([
    "entity.removed credential 1 SN-TEST-1",
    "entity.removed holder 1 SN-TEST-1",
  ]);
  expect(filterEvent(removed[0]!, 1).data).toEqual({ id: 1, personId: 1 });
  const config = { ...(panel.snapshot.config as object), timezone: "Europe/Berlin" };
  const node = apply({ method: "PUT", path: "/api/config", body: config });
  expect(node.map((e) => `${e.topic} ${e.entityType} ${String(e.entityId)}`)).toEqual([
    "entity.modified cloudNode SN-TEST-1",
  ]);
});
