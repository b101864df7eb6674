// Webhooks across organizations (T40–T46): one Webhooks of every organization of a service database
// (a real SQLite file), subscriptions made through the routes of both generations over 127.0.0.1,
// and notifications to a real HTTPS receiver. Root → dealer → two multi-site customers with the same
// building (the same node ids) and a legacy customer with a panel: each event reaches the
// subscriptions its scope names (this/recursive, ou/ouRecursive, node arrays) and no other; an
// event of one customer never reaches the other's.
import type { Server } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Hono } from "hono";
import { afterAll, beforeAll, expect, onTestFinished, test } from "vitest";
import { httpsTransport } from "../../src/adapters/delivery/httpsTransport.js";
import { connectionSettings } from "../../src/adapters/http/connectionGuard.js";
import type { DataEnv } from "../../src/adapters/http/dataPipeline.js";
import { closeGracefully, listenOn, serverUrl } from "../../src/adapters/http/startServer.js";
import { registerSubscriptionRoutes } from "../../src/adapters/http/subscriptionRoutes.js";
import { openSqliteSpace } from "../../src/adapters/store/sqliteStore.js";
import { sqliteWebhooks } from "../../src/adapters/store/sqliteWebhooks.js";
import { type EventContext, organizationEvents, panelEvent } from "../../src/events/orgEvents.js";
import { ADMIN, reaches } from "../../src/service/auth/tokens.js";
import { HttpError, errorResponse } from "../../src/service/httpError.js";
import { type DurableSystem, openDurableSystem } from "../../src/service/store/durableSystem.js";
import type { OrganizationRow, TenantRow } from "../../src/service/store/registryStore.js";
import type { StoreSpace } from "../../src/service/store/store.js";
import { type OrganizationTree, registryScopes } from "../../src/service/webhooks/registryScopes.js";
import { type WebhookOptions, Webhooks } from "../../src/service/webhooks/webhookService.js";
import { building } from "../live/fixture.js";
import { smallPanel } from "../live/panelFixture.js";
import { caller } from "../http/dataSupport.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";
import { RECEIVER_ALLOW, type Received, Receiver, eventually, selfSignedCertificate } from "./receiver.js";

afterAll(removeTempDirs);

let tls: { cert: string; key: string };
beforeAll(() => {
  tls = selfSignedCertificate();
});

const TIME = "2026-04-15T12:00:00.000Z";
const FAST: WebhookOptions = { backoffMs: 20, maxBackoffMs: 100, attempts: 3, timeoutMs: 5000 };
const [ROOT, DEALER, C1, C2, LEGACY] = ["org-root", "org-dealer", "org-c1", "org-c2", "org-legacy"];
const SERIAL = (smallPanel() as { serialNumber: string }).serialNumber;

/** The tree as the service's registry holds it: organizations and tenants (1: C1's system, 2: C2's, 3: the panel). */
function tree(): OrganizationTree {
  const org = (id: string, parent: string | null, type: OrganizationRow["type"]): OrganizationRow => ({
    id,
    parent,
    name: id,
    type,
    fields: {},
    created: TIME,
  });
  const orgs = new Map(
    [
      org(ROOT, null, "root"),
      org(DEALER, ROOT, "dealer"),
      org(C1, DEALER, "multi-site"),
      org(C2, DEALER, "multi-site"),
      org(LEGACY, DEALER, "legacy"),
    ].map((o) => [o.id, o]),
  );
  const nodes = { nodes: building().cloudNodes };
  const tenant = (n: number, kind: TenantRow["kind"], key: string, organization: string, info: unknown): TenantRow => ({
    n,
    kind,
    key,
    organization,
    state: "active",
    info,
    created: TIME,
  });
  const tenants = [
    tenant(1, "system", "sys-c1", C1, nodes),
    tenant(2, "system", "sys-c2", C2, nodes),
    tenant(3, "panel", SERIAL, LEGACY, {}),
  ];
  const ancestors = (id: string): string[] => {
    const parent = orgs.get(id)?.parent ?? null;
    return parent === null ? [] : [...ancestors(parent), parent];
  };
  return {
    organization: (id) => orgs.get(id),
    ancestors,
    tenantsOf: (id) => tenants.filter((t) => t.organization === id),
    tenant: (n) => tenants.find((t) => t.n === n),
  };
}

/**
 * The subscription routes of both generations over 127.0.0.1. A token names the organization the
 * caller reaches (with its descendants); any other organization, like an unknown one, is 404.
 */
async function serveRoutes(webhooks: Webhooks, orgs: OrganizationTree): Promise<string> {
  const app = new Hono<DataEnv>();
  app.onError((e) => errorResponse(e instanceof HttpError ? e : new HttpError(500, String(e)), 2));
  registerSubscriptionRoutes(app, {
    webhooks,
    generations: ["2.0", "1.0"],
    organization: async (c, id) => {
      const token = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1];
      if (token === undefined) throw new HttpError(401, "A bearer token is required.");
      const grant = { ...ADMIN, organizations: new Set([token]) };
      if (orgs.organization(id) === undefined || !reaches(grant, id, orgs.ancestors))
        throw new HttpError(404, "Unknown organization id.", [
          { path: "organization_id", message: `Unknown organization id "${id}".` },
        ]);
      return grant;
    },
    maxBodyBytes: 1 << 20,
    indent: 2,
    now: Date.now,
  });
  const server: Server = await listenOn(async (request) => app.fetch(request), {}, connectionSettings("test", {}));
  onTestFinished(() => closeGracefully(server, 1000));
  return serverUrl(server);
}

/** The label of the subscription a notification was for (its Basic authentication's user). */
function labelOf(r: Received): string {
  const basic = /^Basic (.+)$/.exec(String(r.headers.authorization))?.[1] ?? "";
  return Buffer.from(basic, "base64").toString("utf8").split(":")[0]!;
}

function eventContext(): EventContext {
  let n = 0;
  return {
    clientInfo: { ipAddress: "127.0.0.1", userAgent: "test" },
    user: { firstName: "Dana", id: "u-dana", lastName: "Lee" },
    occurredAt: TIME,
    newId: () => `ev-${++n}`,
  };
}

async function openAll(db: string): Promise<{ space: StoreSpace; webhooks: Webhooks }> {
  const space = await openSqliteSpace(db);
  const webhooks = await Webhooks.openService(
    space.webhooks!,
    registryScopes(tree()),
    FAST,
    httpsTransport(RECEIVER_ALLOW),
  );
  return { space, webhooks };
}

test("T43/T44: this, recursive, ou, ouRecursive and node arrays across root → dealer → customers; nothing crosses customers or generations", async () => {
  const receiver = await Receiver.start(tls);
  onTestFinished(() => receiver.stop());
  const db = join(tempDir(), "service.db");
  const { space, webhooks } = await openAll(db);
  onTestFinished(async () => {
    await webhooks.close();
    await space.close();
  });
  const url = await serveRoutes(webhooks, tree());

  // The subscriptions, each made by a token of its own organization, with its label as Basic user.
  const made = new Map<string, { org: string; path: string; id: string }>();
  const subscribe = async (label: string, org: string, generation: "2.0" | "1.0", scope: unknown, events: string[]) => {
    const path = generation === "2.0" ? `/api/organizations/${org}/subscriptions` : `/api/ous/${org}/hooks`;
    const r = await caller(url, "")(
      "POST",
      path,
      {
        name: label,
        url: receiver.url,
        scope,
        authentication: { type: "Basic", user: label, password: "pw" },
        events,
        sslVerification: false,
        secrecyLevel: 0,
      },
      { authorization: `Bearer ${org}` },
    );
    expect(r.status, `${label}: ${JSON.stringify(r.body)}`).toBe(201);
    made.set(label, { org, path, id: r.body.id as string });
  };
  await subscribe("c1-this", C1, "2.0", "this", ["entity.added", "device.request.allowed"]);
  await subscribe("c1-main", C1, "2.0", ["n-main"], ["device.request.allowed"]);
  await subscribe("c1-annex", C1, "2.0", ["n-annex"], ["device.request.allowed"]);
  await subscribe("c1-own", C1, "2.0", "this", ["organization.updated", "organization.deleted"]);
  await subscribe("c2-this", C2, "2.0", "this", ["entity.added", "device.request.allowed"]);
  await subscribe("c2-main", C2, "2.0", ["n-main"], ["device.request.allowed"]);
  await subscribe("dealer-this", DEALER, "2.0", "this", [
    "entity.added",
    "organization.created",
    "organization.updated",
  ]);
  await subscribe("dealer-rec", DEALER, "2.0", "recursive", ["entity.added"]);
  await subscribe("root-this", ROOT, "2.0", "this", ["entity.added"]);
  await subscribe("root-rec", ROOT, "2.0", "recursive", ["entity.added", "entity.removed", "organization.created"]);
  // 1.0 counts entity events among the cloud-node events, which a subscription does not mix with organization events.
  await subscribe("legacy-ou", LEGACY, "1.0", "ou", ["entity.removed"]);
  await subscribe("legacy-ou-org", LEGACY, "1.0", "ou", ["panel.created"]);
  await subscribe("legacy-serial", LEGACY, "1.0", [SERIAL], ["entity.removed"]);
  await subscribe("dealer-ou", DEALER, "1.0", "ou", ["entity.removed"]);
  await subscribe("dealer-ou-org", DEALER, "1.0", "ou", ["ou.created"]);
  await subscribe("dealer-ourec", DEALER, "1.0", "ouRecursive", ["entity.removed"]);
  await subscribe("dealer-ourec-org", DEALER, "1.0", "ouRecursive", ["ou.created", "panel.created"]);

  // Tenant events: a write on each customer's system, a decision at C1's main node, a write on the panel.
  const tenants: [number, string, "system" | "panel", unknown][] = [
    [1, C1, "system", { ...building(), systemId: "sys-c1" }],
    [2, C2, "system", { ...building(), systemId: "sys-c2" }],
    [3, LEGACY, "panel", smallPanel()],
  ];
  const durables: DurableSystem[] = [];
  for (const [n, org, kind, json] of tenants) {
    await space.tenant(n).init(kind, json, TIME);
    const key = kind === "panel" ? SERIAL : `sys-c${n}`;
    durables.push(await openDurableSystem(space.tenant(n), { outbox: webhooks.forTenant(org, key) }));
  }
  onTestFinished(async () => {
    for (const d of durables) await d.close();
  });
  const [c1, c2, panel] = durables as [DurableSystem, DurableSystem, DurableSystem];
  expect((await c1.write({ method: "POST", path: "/groups", body: { name: "C1 group" } })).status).toBe(200);
  expect((await c2.write({ method: "POST", path: "/groups", body: { name: "C2 group" } })).status).toBe(200);
  expect((await panel.write({ method: "DELETE", path: "/api/persons/1" })).status).toBe(204);
  expect(webhooks.forTenant(C1).wantsAccess()).toBe(true);
  expect(webhooks.forTenant(LEGACY, SERIAL).wantsAccess()).toBe(false);
  const live = c1.target.kind === "system" ? c1.target.live : undefined;
  const request = { deviceId: "d-front", at: TIME, credential: { credentialNumber: 1001, facilityCode: 10 } };
  const decision = live!.engine.decide(request);
  expect(decision.topic).toBe("device.request.allowed");
  await webhooks.forTenant(C1, "sys-c1").recordDecisions([request], [decision], live!.engine.snapshot);

  // Organization and panel events (the registry commits their outbox rows with its change).
  const ctx = eventContext();
  const subject = { name: "C1", parent: DEALER, ancestors: [ROOT, DEALER], systemId: "sys-c1" };
  const flags = { useBluetoothCredentials: true, useTouchMobileApp: false };
  const events = [
    ...organizationEvents("created", { id: "org-c3", ...subject, name: "C3", systemId: "sys-c3", ...flags }, ctx),
    // C3's second event shares its `id`: each is sent with its own body (T41).
    ...organizationEvents("updated", { id: "org-c3", ...subject, name: "C3", systemId: "sys-c3", ...flags }, ctx),
    ...organizationEvents("updated", { id: C1, ...subject, ...flags, useTouchMobileApp: true }, ctx, {
      useTouchMobileApp: true,
    }),
    panelEvent("created", { serialNumber: "SN-NEW", name: "Lobby", ou: LEGACY, ancestors: [ROOT, DEALER] }, ctx),
  ];
  const entries = webhooks.organizationEvents(events);
  await space.registry.commit([], entries);
  webhooks.stored(entries);

  // Deleting the panel's person 1 removes it and its credential.
  const removed = ["entity.removed credential 1", "entity.removed holder 1"];
  const expected: Record<string, string[]> = {
    "c1-this": ["entity.added C1 group", "device.request.allowed"],
    "c1-main": ["device.request.allowed"],
    "c1-own": ["organization.updated org-c1"],
    "c2-this": ["entity.added C2 group"],
    "dealer-this": ["organization.created org-c3", "organization.updated org-c3", "organization.updated org-c1"],
    "dealer-rec": ["entity.added C1 group", "entity.added C2 group"],
    "root-rec": ["entity.added C1 group", "entity.added C2 group", "organization.created org-c3"],
    "legacy-ou": removed,
    "legacy-ou-org": ["panel.created SN-NEW"],
    "legacy-serial": removed,
    "dealer-ou-org": ["ou.created org-c3"],
    "dealer-ourec": removed,
    "dealer-ourec-org": ["ou.created org-c3", "panel.created SN-NEW"],
  };
  const total = Object.values(expected).flat().length;
  // Every row an event made is delivered or waiting: once all wait no more, nothing else was made.
  await eventually(
    async () => {
      if (receiver.delivered.length < total) return false;
      for (const { id } of made.values()) if ((await space.webhooks!.pending(id, 1)).length > 0) return false;
      return true;
    },
    20_000,
    "every notification",
  );
  const got: Record<string, string[]> = {};
  for (const r of receiver.delivered) {
    const b = r.body as Record<string, any>;
    const what = b.topic.startsWith("entity.added")
      ? `${b.topic} ${b.data.name}`
      : /^(organization|ou|panel)\./.test(b.topic)
        ? `${b.topic} ${b.id}`
        : b.topic === "entity.removed"
          ? `${b.topic} ${b.entityType} ${b.entityId}`
          : b.topic;
    (got[labelOf(r)] ??= []).push(what);
  }
  for (const list of Object.values(got)) list.sort();
  for (const list of Object.values(expected)) list.sort();
  expect(got).toEqual(expected);

  // The bodies of organization and panel events as the registry made them, each with its topic.
  const body = (label: string, topic: string) =>
    receiver.delivered.find((r) => labelOf(r) === label && r.body.topic === topic)!.body;
  expect(body("dealer-this", "organization.created")).toMatchObject({
    topic: "organization.created",
    id: "org-c3",
    name: "C3",
    parent: DEALER,
    systemId: "sys-c3",
    useBluetoothCredentials: true,
    useTouchMobileApp: false,
    clientInfo: { ipAddress: "127.0.0.1", userAgent: "test" },
    user: { firstName: "Dana", id: "u-dana", lastName: "Lee" },
    occurredAt: TIME,
    sequence: 1,
  });
  expect(body("c1-own", "organization.updated")).toMatchObject({ id: C1, useTouchMobileApp: true, sequence: 1 });
  expect(body("dealer-ou-org", "ou.created")).toMatchObject({ id: "org-c3", parent: DEALER, intercoms: [] });
  expect(body("dealer-ou-org", "ou.created")).not.toHaveProperty("systemId");
  expect(body("legacy-ou-org", "panel.created")).toMatchObject({ id: "SN-NEW", name: "Lobby", ou: LEGACY });
  // Each event of an organization keeps its own eventId, one per event however many subscriptions get it.
  const c3 = receiver.delivered.filter((r) => r.body.id === "org-c3").map((r) => `${r.body.topic} ${r.body.eventId}`);
  expect([...new Set(c3)].sort()).toEqual([
    "organization.created ev-1",
    "organization.updated ev-3",
    "ou.created ev-2",
  ]);
});

test("T45: the routes of each organization: its own subscriptions only, 404 out of reach, a node array on a dealer is 400 at body.scope", async () => {
  const db = join(tempDir(), "routes.db");
  const { space, webhooks } = await openAll(db);
  onTestFinished(async () => {
    await webhooks.close();
    await space.close();
  });
  const url = await serveRoutes(webhooks, tree());
  const api = (org: string) => (method: string, path: string, body?: unknown) =>
    caller(url, "")(method, path, body, { authorization: `Bearer ${org}` });
  const sub = (scope: unknown, events = ["device.request.allowed"]) => ({
    name: "S",
    url: "https://receiver.example/",
    scope,
    authentication: { type: "None" },
    events,
  });
  const c1Subs = `/api/organizations/${C1}/subscriptions`;
  const id = (await api(C1)("POST", c1Subs, sub(["n-main"]))).body.id as string;
  // The dealer reaches its customers; a customer does not reach its sibling (404, as unknown).
  expect((await api(DEALER)("GET", c1Subs)).body.map((s: { id: string }) => s.id)).toEqual([id]);
  const other = await api(C2)("GET", c1Subs);
  expect([other.status, other.body.error.issues]).toEqual([
    404,
    [{ path: "organization_id", message: `Unknown organization id "${C1}".` }],
  ]);
  expect((await api(ROOT)("GET", "/api/organizations/org-nowhere/subscriptions")).status).toBe(404);
  // Another organization's subscription, or the other generation's, is unknown on these paths.
  expect((await api(ROOT)("GET", `/api/organizations/${C2}/subscriptions/${id}`)).status).toBe(404);
  expect((await api(ROOT)("GET", `/api/ous/${C1}/hooks/${id}`)).status).toBe(404);
  expect((await api(ROOT)("GET", `/api/ous/${C1}/hooks`)).body).toEqual([]);
  // A dealer has no nodes: a node array is refused at body.scope.
  const dealer = await api(DEALER)("POST", `/api/organizations/${DEALER}/subscriptions`, sub(["n-main"]));
  expect(dealer.status).toBe(400);
  expect(dealer.body.error.issues.map((i: { path: string }) => i.path)).toEqual(["body.scope"]);
  expect((await api(DEALER)("POST", `/api/ous/${DEALER}/hooks`, sub("ouRecursive", ["ou.created"]))).status).toBe(201);
  // The legacy customer's node is its panel, named on its 1.0 routes; another's node is refused.
  expect((await api(LEGACY)("POST", `/api/ous/${LEGACY}/hooks`, sub([SERIAL], ["entity.removed"]))).status).toBe(201);
  const wrong = await api(LEGACY)("POST", `/api/ous/${LEGACY}/hooks`, sub(["n-main"], ["entity.removed"]));
  expect(wrong.body.error.issues.map((i: { path: string }) => i.path)).toEqual(["body.scope[0]"]);
  // Update and delete through the owner's path only.
  expect((await api(C2)("DELETE", `/api/organizations/${C2}/subscriptions/${id}`)).status).toBe(404);
  expect((await api(C1)("DELETE", `${c1Subs}/${id}`)).status).toBe(204);
});

test("T40: owners survive a restart; a subscription stored without an organization is the embedded organization's (tenant 1's)", async () => {
  const db = join(tempDir(), "restart.db");
  let { space, webhooks } = await openAll(db);
  const dealerHooks = webhooks.subscriptionsOf(DEALER, "1.0");
  const fields = {
    name: "Old",
    url: "https://receiver.example/",
    scope: "this",
    authentication: { type: "None" as const },
    events: ["entity.added"],
    active: true,
    sslVerification: true,
    secrecyLevel: 1 as const,
    expiresAt: null,
    secret: null,
  };
  const hook = await dealerHooks.create({ ...fields, scope: "ouRecursive", events: ["ou.created"] });
  // As a server of one system stored it, before organizations: no owner.
  await space.webhooks!.putSubscription("s-old", { id: "s-old", ...fields, userId: null });
  await webhooks.close();
  await space.close();

  ({ space, webhooks } = await openAll(db));
  onTestFinished(async () => {
    await webhooks.close();
    await space.close();
  });
  expect(
    webhooks
      .subscriptionsOf(DEALER, "1.0")
      .list()
      .map((s) => s.id),
  ).toEqual([hook]);
  expect(webhooks.subscriptionsOf(DEALER, "2.0").list()).toEqual([]);
  expect(
    webhooks
      .subscriptionsOf(C1, "2.0")
      .list()
      .map((s) => s.id),
  ).toEqual(["s-old"]);
  expect((await space.webhooks!.subscriptions(DEALER)).map((s) => [s.id, s.organization, s.generation])).toEqual([
    [hook, DEALER, "1.0"],
  ]);
});

test("T40: a webhook table made before owners gets the columns at open, its subscriptions the embedded organization's", () => {
  const db = new Database(join(tempDir(), "old.db"));
  onTestFinished(() => {
    db.close();
  });
  db.exec(
    "CREATE TABLE webhook_subscriptions (id TEXT PRIMARY KEY, fields TEXT NOT NULL, odometer INTEGER NOT NULL DEFAULT 0, last_sequence INTEGER NOT NULL DEFAULT 0) STRICT",
  );
  db.prepare("INSERT INTO webhook_subscriptions (id, fields) VALUES ('s-1', '{}')").run();
  sqliteWebhooks(db as never, () => undefined);
  expect(db.prepare("SELECT id, organization, generation FROM webhook_subscriptions").all()).toEqual([
    { id: "s-1", organization: "", generation: "" },
  ]);
});

test("T41: a parked organization event is listed and redelivered by its eventId, not by the organization's id", async () => {
  const db = join(tempDir(), "parked.db");
  const { space, webhooks } = await openAll(db);
  onTestFinished(async () => {
    await webhooks.close();
    await space.close();
  });
  const hooks = webhooks.subscriptionsOf(DEALER, "2.0");
  // Nothing listens on port 1: every attempt fails, and the events are parked.
  const id = await hooks.create({
    name: "Down",
    url: "https://127.0.0.1:1/",
    scope: "this",
    authentication: { type: "None" },
    events: ["organization.created", "organization.updated"],
    active: true,
    sslVerification: false,
    secrecyLevel: 1,
    expiresAt: null,
    secret: null,
  });
  const ctx = eventContext();
  const c3 = { id: "org-c3", name: "C3", parent: DEALER, ancestors: [ROOT, DEALER], systemId: "sys-c3" };
  const flags = { useBluetoothCredentials: true, useTouchMobileApp: false };
  const events = [
    ...organizationEvents("created", { ...c3, ...flags }, ctx),
    ...organizationEvents("updated", { ...c3, ...flags }, ctx),
  ];
  const entries = webhooks.organizationEvents(events);
  expect(entries.map((e) => e.event.topic)).toEqual(["organization.created", "organization.updated"]);
  await space.registry.commit([], entries);
  webhooks.stored(entries);
  let parked: any[] = [];
  await eventually(async () => (parked = (await hooks.parked(id, 0, 10))!.rows).length === 2, 20_000, "both parked");
  expect(parked.map((p) => [p.id, p.topic, p.event.id])).toEqual([
    ["ev-1", "organization.created", "org-c3"],
    ["ev-3", "organization.updated", "org-c3"],
  ]);
  expect(await hooks.redeliver(id, ["org-c3"])).toBe(0);
  expect(await hooks.redeliver(id, ["ev-3"])).toBe(1);
  // Another organization's view does not reach this subscription.
  expect(await webhooks.subscriptionsOf(C1, "2.0").redeliver(id, null)).toBeUndefined();
});
