// The subscription routes of `rsop serve --data`: a real server on 127.0.0.1 over a real SQLite
// file. Create, retrieve, list, update, delete; each seed validation rule refuses its bad
// subscription with the path of the problem; every problem of a body at once; roles and ids.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { building } from "../live/fixture.js";
import { smallPanel } from "../live/panelFixture.js";
import { caller, dataDir, startData } from "../http/dataSupport.js";
import { TOKEN, removeTempDirs } from "../http/fixtures.js";

afterAll(removeTempDirs);

const BASE = "/api/organizations/sys-1/subscriptions";
const VALID = {
  name: "Door events",
  url: "https://receiver.example/hooks",
  scope: "this",
  authentication: { type: "None" },
  events: ["device.request.allowed", "device.request.denied"],
};

async function server() {
  const { db } = dataDir();
  const started = await startData(db, building());
  return { ...started, api: caller(started.server.url, "") };
}

test("create 201 {id}; retrieve gives every field with the defaults; list; update 204; delete 204, then 404", async () => {
  const { api } = await server();
  const created = await api("POST", BASE, VALID);
  expect(created.status).toBe(201);
  expect(Object.keys(created.body)).toEqual(["id"]);
  const id = created.body.id as string;
  const got = await api("GET", `${BASE}/${id}`);
  expect(got.status).toBe(200);
  expect(got.body).toEqual({
    id,
    ...VALID,
    active: true,
    sslVerification: true,
    secrecyLevel: 1,
    expiresAt: null,
    userId: null,
    odometer: 0,
    secret: null,
  });
  expect((await api("GET", BASE)).body).toEqual([got.body]);
  const update = {
    ...VALID,
    name: "Renamed",
    active: false,
    sslVerification: false,
    secrecyLevel: 2,
    secret: "s3cret",
    expiresAt: "2099-01-01T00:00:00+01:00",
  };
  expect((await api("PUT", `${BASE}/${id}`, update)).status).toBe(204);
  expect((await api("GET", `${BASE}/${id}`)).body).toMatchObject({
    name: "Renamed",
    active: false,
    sslVerification: false,
    secrecyLevel: 2,
    secret: "s3cret",
    expiresAt: "2098-12-31T23:00:00.000Z",
  });
  // W3: an update that omits the optional expiresAt and secret keeps them; null clears them.
  expect(
    (await api("PUT", `${BASE}/${id}`, { ...VALID, active: true, sslVerification: true, secrecyLevel: 1 })).status,
  ).toBe(204);
  expect((await api("GET", `${BASE}/${id}`)).body).toMatchObject({
    secret: "s3cret",
    expiresAt: "2098-12-31T23:00:00.000Z",
  });
  expect(
    (
      await api("PUT", `${BASE}/${id}`, {
        ...VALID,
        active: true,
        sslVerification: true,
        secrecyLevel: 1,
        secret: null,
        expiresAt: null,
      })
    ).status,
  ).toBe(204);
  expect((await api("GET", `${BASE}/${id}`)).body).toMatchObject({ secret: null, expiresAt: null });
  expect((await api("DELETE", `${BASE}/${id}`)).status).toBe(204);
  const gone = await api("GET", `${BASE}/${id}`);
  expect(gone.status).toBe(404);
  expect(gone.body.error.issues).toEqual([{ path: "subscription_id", message: `No subscription has the id "${id}".` }]);
  expect((await api("GET", BASE)).body).toEqual([]);
});

/** One refused body: its status and the paths of its problems. */
async function refusal(api: Awaited<ReturnType<typeof server>>["api"], body: unknown, method = "POST", path = BASE) {
  const r = await api(method, path, body);
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(r.body.error.status).toBe(400);
  for (const i of r.body.error.issues) expect(i.message).toMatch(/\.$/);
  return (r.body.error.issues as { path: string; message: string }[]).map((i) => i.path);
}

test("each seed validation rule refuses its bad subscription, at the field's path, and nothing is created", async () => {
  const { api } = await server();
  // name max 70
  expect(await refusal(api, { ...VALID, name: "x".repeat(71) })).toEqual(["body.name"]);
  expect((await api("POST", BASE, { ...VALID, name: "x".repeat(70) })).status).toBe(201);
  // url must be HTTPS
  expect(await refusal(api, { ...VALID, url: "http://receiver.example/hooks" })).toEqual(["body.url"]);
  expect(await refusal(api, { ...VALID, url: "receiver.example" })).toEqual(["body.url"]);
  // expiresAt must be in the future
  expect(await refusal(api, { ...VALID, expiresAt: "2020-01-01T00:00:00Z" })).toEqual(["body.expiresAt"]);
  expect(await refusal(api, { ...VALID, expiresAt: "tomorrow" })).toEqual(["body.expiresAt"]);
  // secret max 255
  expect(await refusal(api, { ...VALID, secret: "s".repeat(256) })).toEqual(["body.secret"]);
  expect((await api("POST", BASE, { ...VALID, secret: "s".repeat(255) })).status).toBe(201);
  // events: known topics only, never organization and cloud-node events together
  expect(await refusal(api, { ...VALID, events: ["device.request.allowed", "door.opened"] })).toEqual([
    "body.events[1]",
  ]);
  expect(await refusal(api, { ...VALID, events: ["organization.created", "device.request.denied"] })).toEqual([
    "body.events",
  ]);
  expect(await refusal(api, { ...VALID, events: [] })).toEqual(["body.events"]);
  // scope: this / recursive / cloud-node ids of this system, which admit cloud-node events only
  expect(await refusal(api, { ...VALID, scope: "everything" })).toEqual(["body.scope"]);
  expect(await refusal(api, { ...VALID, scope: ["n-main", "n-elsewhere"] })).toEqual(["body.scope[1]"]);
  expect(
    await refusal(api, { ...VALID, scope: ["n-main"], events: ["device.request.allowed", "entity.added"] }),
  ).toEqual(["body.events[1]"]);
  expect((await api("POST", BASE, { ...VALID, scope: ["n-main", "n-annex"] })).status).toBe(201);
  expect(
    (await api("POST", BASE, { ...VALID, scope: "recursive", events: ["entity.added", "device.request.unknown"] }))
      .status,
  ).toBe(201);
  // authentication: None or Basic with user and password
  expect(await refusal(api, { ...VALID, authentication: { type: "Basic", user: "u" } })).toEqual([
    "body.authentication.password",
  ]);
  expect(await refusal(api, { ...VALID, authentication: { type: "Digest" } })).toEqual(["body.authentication.type"]);
  // secrecyLevel 0, 1 or 2
  expect(await refusal(api, { ...VALID, secrecyLevel: 3 })).toEqual(["body.secrecyLevel"]);
  // the required fields of a create
  expect(await refusal(api, {})).toEqual(["body.name", "body.url", "body.scope", "body.authentication", "body.events"]);
  expect(await refusal(api, [])).toEqual(["body"]);
  const all = (await api("GET", BASE)).body as { name: string }[];
  expect(all).toHaveLength(4);
  // W2: names need not be unique (three of the four are "Door events").
  expect(all.filter((x) => x.name === VALID.name)).toHaveLength(3);
});

test("every problem of a body is listed at once; an update also requires active, sslVerification and secrecyLevel", async () => {
  const { api } = await server();
  const paths = await refusal(api, {
    name: "",
    url: "ftp://x",
    scope: ["nope"],
    authentication: {},
    events: ["organization.created", "x"],
    active: "yes",
    secrecyLevel: -1,
    secret: 5,
    expiresAt: "2001-01-01T00:00Z",
  });
  expect(paths).toEqual([
    "body.name",
    "body.url",
    "body.scope[0]",
    "body.authentication.type",
    "body.events[0]",
    "body.events[1]",
    "body.active",
    "body.secrecyLevel",
    "body.expiresAt",
    "body.secret",
  ]);
  const id = (await api("POST", BASE, VALID)).body.id;
  expect(await refusal(api, VALID, "PUT", `${BASE}/${id}`)).toEqual([
    "body.active",
    "body.sslVerification",
    "body.secrecyLevel",
  ]);
  expect((await api("GET", `${BASE}/${id}`)).body.name).toBe(VALID.name);
});

test("an unknown organization or subscription is 404, a wrong method 405 with Allow, no token 401, a manager 403", async () => {
  const { dir, db } = dataDir();
  const tokens = join(dir, "tokens.json");
  writeFileSync(tokens, JSON.stringify({ "manager-token-0123456789": { role: "manager", partitions: ["p-default"] } }));
  const { server: s } = await startData(db, building(), {
    tokens: {
      file: tokens,
      entries: [{ token: "manager-token-0123456789", grant: { role: "manager", partitions: new Set(["p-default"]) } }],
    },
  });
  const api = caller(s.url, "");
  const org = await api("GET", "/api/organizations/other-org/subscriptions");
  expect(org.status).toBe(404);
  expect(org.body.error.issues).toEqual([{ path: "organization_id", message: 'Unknown organization id "other-org".' }]);
  expect((await api("GET", `${BASE}/nope`)).status).toBe(404);
  const wrong = await api("PATCH", BASE);
  expect(wrong.status).toBe(405);
  expect(wrong.headers.get("allow")).toBe("GET, POST");
  const anonymous = await fetch(`${s.url}${BASE}`);
  expect(anonymous.status).toBe(401);
  const manager = await fetch(`${s.url}${BASE}`, { headers: { authorization: "Bearer manager-token-0123456789" } });
  expect(manager.status).toBe(403);
  void TOKEN;
});

test("--organization-id names the organization of the routes", async () => {
  const { db } = dataDir();
  const { server: s } = await startData(db, building(), { organizationId: "org-42" });
  const api = caller(s.url, "");
  expect((await api("POST", "/api/organizations/org-42/subscriptions", VALID)).status).toBe(201);
  expect((await api("GET", BASE)).status).toBe(404);
});

test("1.0 (--panel): /api/ous/{serial number}/hooks with door and panel events, scope ou / ouRecursive / the panel's serial number", async () => {
  const { db } = dataDir();
  const p = smallPanel() as { serialNumber: string };
  const { server: s } = await startData(db, undefined, {
    initial: { kind: "panel", file: "panel.json", read: async () => p },
  });
  const api = caller(s.url, "");
  const hooks = `/api/ous/${p.serialNumber}/hooks`;
  const body = {
    name: "Sync",
    url: "https://receiver.example/",
    scope: "ou",
    authentication: { type: "None" },
    events: ["entity.added", "door.request.denied"],
  };
  const id = (await api("POST", hooks, body)).body.id;
  expect((await api("GET", `${hooks}/${id}`)).body).toMatchObject({
    id,
    scope: "ou",
    events: ["entity.added", "door.request.denied"],
  });
  expect((await api("POST", hooks, { ...body, scope: [p.serialNumber] })).status).toBe(201);
  expect(await refusal(api, { ...body, scope: ["SN-OTHER"] }, "POST", hooks)).toEqual(["body.scope[0]"]);
  expect(await refusal(api, { ...body, scope: "this" }, "POST", hooks)).toEqual(["body.scope"]);
  expect(await refusal(api, { ...body, events: ["ou.created", "door.request.allowed"] }, "POST", hooks)).toEqual([
    "body.events",
  ]);
  expect(await refusal(api, { ...body, events: ["device.request.allowed"] }, "POST", hooks)).toEqual([
    "body.events[0]",
  ]);
});

test("W10: with --base-path the subscription routes are below it, like every route", async () => {
  const { db } = dataDir();
  const { server: s } = await startData(db, building(), { basePath: "/v2" });
  const api = caller(s.url, "/v2");
  expect((await api("POST", BASE, VALID)).status).toBe(201);
  expect((await api("GET", BASE)).body).toHaveLength(1);
  expect((await caller(s.url, "")("GET", BASE)).status).toBe(404);
});
