// The 2.0 organization routes of the accounts host (`/api/organizations…`, routes 1–9 of the plan;
// semantics T10–T24, T29), through a real server on 127.0.0.1 over a real SQLite service database:
// one test per route, its status, shape, headers and each refusal with its issue path.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  ACME_INTEGRATOR,
  ACME_REPORTER,
  type Accounts,
  OTHER_ADMIN,
  SHOP_REPORTER,
  expectJsonHeaders,
  issuePaths,
  startAccounts,
} from "./accountsSupport.js";

let a: Accounts;
beforeAll(async () => {
  a = await startAccounts();
});
afterAll(async () => {
  await a?.close();
});

const FLAGS = { useBluetoothCredentials: true, useTouchMobileApp: false, allowCredentialResets: true };
const ORG = "/api/organizations";

describe("2.0 organizations", () => {
  test("1, 6: GET /api/organizations/{id}: the organization (a customer too); 401, 404 out of reach, 405, 400 query", async () => {
    const system = a.registry.tenantsOf(a.zeta.id)[0]!;
    const r = await a.call("GET", `${ORG}/${a.zeta.id}`, { token: ACME_INTEGRATOR });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    expect(r.body).toEqual({
      id: a.zeta.id,
      name: "Zeta HQ",
      systemId: system.key,
      ...FLAGS,
      ancestors: [a.root.id, a.acme.id],
      parent: a.acme.id,
      children: [],
      panels: [],
      userPermissionLevel: "integrator",
      parentPermissionLevel: "integrator",
      permissions: [],
    });
    const shop = await a.call("GET", `${ORG}/${a.shop.id}`);
    expect(shop.body).toMatchObject({
      id: a.shop.id,
      panels: [
        { uuid: null, name: "Front door", id: "SN-1", registeredDate: "2026-03-01T10:00:00.000Z", online: false },
      ],
    });
    expect(shop.body).not.toHaveProperty("systemId");
    const acme = await a.call("GET", `${ORG}/${a.acme.id}`);
    expect((acme.body as { permissions: unknown }).permissions).toEqual([
      { _id: "#2", userId: "u-ada", email: "ada@example.test", name: "Ada Byron", role: "integrator" },
      { _id: "#5", userId: null, email: null, name: null, role: "reporter" },
    ]);
    const root = await a.call("GET", `${ORG}/${a.root.id}`);
    expect(root.body).toMatchObject({ parent: null, ancestors: [], userPermissionLevel: "admin" });
    expect(root.body).not.toHaveProperty("parentPermissionLevel");

    const none = await a.call("GET", `${ORG}/${a.zeta.id}`, { token: null });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect((await a.call("GET", `${ORG}/${a.zeta.id}`, { token: "not-a-known-token-000000" })).status).toBe(401);
    for (const [id, token] of [
      ["nope", undefined],
      [a.zeta.id, OTHER_ADMIN],
      [a.acme.id, SHOP_REPORTER],
    ] as const) {
      const r404 = await a.call("GET", `${ORG}/${id}`, { token });
      expect(r404.status).toBe(404);
      expect(issuePaths(r404.body)).toEqual(["organization_id"]);
    }
    const post = await a.call("POST", `${ORG}/${a.zeta.id}`, { body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    const q = await a.call("GET", `${ORG}/${a.zeta.id}?page=1`);
    expect(q.status).toBe(400);
    expect(issuePaths(q.body)).toEqual(["query.page"]);
  });

  test("2: GET /api/organizations/{id}/search: the subtree without itself; 404; 400 query", async () => {
    const r = await a.call("GET", `${ORG}/${a.acme.id}/search?q=DOOR`, { token: ACME_INTEGRATOR });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    expect(r.body).toEqual([{ _id: "SN-1", type: "panel", name: "Front door", uuid: null }]);
    const all = await a.call("GET", `${ORG}/${a.acme.id}/search`, { token: ACME_INTEGRATOR });
    expect((all.body as { _id: string }[]).map((e) => e._id)).toEqual([a.shop.id, "SN-1", a.zeta.id]);
    expect((await a.call("GET", `${ORG}/${a.acme.id}/search?q=acme`)).body).toEqual([]);
    const out = await a.call("GET", `${ORG}/${a.acme.id}/search`, { token: OTHER_ADMIN });
    expect([out.status, issuePaths(out.body)]).toEqual([404, ["organization_id"]]);
    const bad = await a.call("GET", `${ORG}/${a.acme.id}/search?q=a&name=b`);
    expect([bad.status, issuePaths(bad.body)]).toEqual([400, ["query.name"]]);
  });

  test("3: GET /api/organizations/mine: the organizations the token names (the root for none); 401", async () => {
    const r = await a.call("GET", `${ORG}/mine`, { token: ACME_INTEGRATOR });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    const list = r.body as Record<string, unknown>[];
    expect(list.map((o) => o.id)).toEqual([a.acme.id]);
    expect(list[0]).toMatchObject({ userPermissionLevel: "integrator", parentPermissionLevel: "guest" });
    expect(((await a.call("GET", `${ORG}/mine`)).body as { id: string }[]).map((o) => o.id)).toEqual([a.root.id]);
    expect((await a.call("GET", `${ORG}/mine`, { token: null })).status).toBe(401);
    expect((await a.call("DELETE", `${ORG}/mine`)).status).toBe(405);
  });

  test("4: GET /api/organizations/mine/search: every subtree the token names, those included; 400 query", async () => {
    const r = await a.call("GET", `${ORG}/mine/search`, { token: OTHER_ADMIN });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    expect(r.body).toEqual([
      { _id: "SN-2", type: "panel", name: "Back door", uuid: null },
      { _id: a.beta.id, type: "ou", name: "beta" },
      { _id: a.other.id, type: "ou", name: "Other" },
    ]);
    const bad = await a.call("GET", `${ORG}/mine/search?x=1`);
    expect([bad.status, issuePaths(bad.body)]).toEqual([400, ["query.x"]]);
  });

  test("5: POST /api/organizations/{dealer_id}/children: 201 partial organization; 400, 403, 404, 409, 413, 415", async () => {
    const r = await a.call("POST", `${ORG}/${a.acme.id}/children`, {
      token: ACME_INTEGRATOR,
      body: { name: "New site", allowCredentialResets: false },
    });
    expect(r.status).toBe(201);
    expectJsonHeaders(r.headers);
    const made = r.body as Record<string, unknown>;
    const system = a.registry.tenantsOf(made.id as string)[0]!;
    expect(made).toEqual({
      id: made.id,
      name: "New site",
      systemId: system.key,
      allowCredentialResets: false,
      children: [],
      panels: [],
      permissions: [],
    });
    const legacy = await a.call("POST", `${ORG}/${a.acme.id}/children`, { body: { name: "Old site", type: "legacy" } });
    expect(legacy.status).toBe(201);
    expect(Object.keys(legacy.body as object)).toEqual([
      "id",
      "name",
      "allowCredentialResets",
      "children",
      "panels",
      "permissions",
    ]);
    const dealer = await a.call("POST", `${ORG}/${a.root.id}/children`, { body: { name: "Third" } });
    expect(dealer.status).toBe(201);
    expect(a.registry.organization((dealer.body as { id: string }).id)?.type).toBe("dealer");

    const refused = async (status: number, paths: string[], dealerId: string, body: unknown, token?: string) => {
      const x = await a.call("POST", `${ORG}/${dealerId}/children`, { body, ...(token ? { token } : {}) });
      expect([x.status, issuePaths(x.body)]).toEqual([status, paths]);
    };
    await refused(400, ["body.name"], a.acme.id, { name: "" });
    await refused(400, ["body.type"], a.root.id, { name: "D4", type: "multi-site" });
    await refused(400, ["body.colour"], a.acme.id, { name: "x", colour: "red" });
    await refused(403, [], a.acme.id, { name: "x" }, ACME_REPORTER);
    await refused(404, ["dealer_id"], a.acme.id, { name: "x" }, OTHER_ADMIN);
    await refused(409, ["dealer_id"], a.shop.id, { name: "x" });
    await refused(409, ["body.name"], a.acme.id, { name: "ZETA hq" });
    const notJson = await a.call("POST", `${ORG}/${a.acme.id}/children`, {
      body: "name=x",
      headers: { "content-type": "text/plain" },
    });
    expect(notJson.status).toBe(415);
    const big = await a.call("POST", `${ORG}/${a.acme.id}/children`, { body: { name: "x".repeat(5000) } });
    expect(big.status).toBe(413);
  });

  test("7: PUT /api/organizations/{dealer_id}/children/{customer_id}: 204; 400, 403, 404 not its child, 409 name", async () => {
    const made = await a.registry.createOrganization(
      a.acme.id,
      { name: "Rename me" },
      {
        grant: { role: "admin", partitions: null },
        clientInfo: { ipAddress: null, userAgent: null },
      },
    );
    const path = `${ORG}/${a.acme.id}/children/${made.id}`;
    const r = await a.call("PUT", path, { token: ACME_INTEGRATOR, body: { name: "Renamed", useTouchMobileApp: true } });
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
    expect(r.headers.get("content-type")).toBeNull();
    expect((await a.call("GET", `${ORG}/${made.id}`)).body).toMatchObject({
      name: "Renamed",
      ...FLAGS,
      useTouchMobileApp: true,
    });
    const refused = async (status: number, paths: string[], p: string, body: unknown, token?: string) => {
      const x = await a.call("PUT", p, { body, ...(token ? { token } : {}) });
      expect([x.status, issuePaths(x.body)]).toEqual([status, paths]);
    };
    await refused(400, ["body.type"], path, { name: "R", type: "legacy" });
    await refused(400, ["body.name"], path, { useTouchMobileApp: false });
    await refused(403, [], path, { name: "R" }, ACME_REPORTER);
    await refused(404, ["customer_id"], `${ORG}/${a.acme.id}/children/${a.beta.id}`, { name: "R" });
    await refused(404, ["dealer_id"], path, { name: "R" }, OTHER_ADMIN);
    await refused(409, ["body.name"], path, { name: "alpha SHOP" });
    const get = await a.call("GET", path);
    expect([get.status, get.headers.get("allow")]).toEqual([405, "PUT, DELETE"]);
  });

  test("8: DELETE /api/organizations/{dealer_id}/children/{customer_id}: 204 (its system goes); 403, 404, 409 one issue each", async () => {
    const made = await a.registry.createOrganization(
      a.acme.id,
      { name: "Short lived" },
      {
        grant: { role: "admin", partitions: null },
        clientInfo: { ipAddress: null, userAgent: null },
      },
    );
    const system = a.registry.tenantsOf(made.id)[0]!;
    const path = `${ORG}/${a.acme.id}/children/${made.id}`;
    expect((await a.call("DELETE", path, { token: ACME_REPORTER })).status).toBe(403);
    const r = await a.call("DELETE", path, { token: ACME_INTEGRATOR });
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
    expect((await a.call("GET", `${ORG}/${made.id}`)).status).toBe(404);
    expect(a.registry.tenantByKey(system.key)).toBeUndefined();
    const again = await a.call("DELETE", path);
    expect([again.status, issuePaths(again.body)]).toEqual([404, ["customer_id"]]);
    const panels = await a.call("DELETE", `${ORG}/${a.acme.id}/children/${a.shop.id}`);
    expect([panels.status, issuePaths(panels.body)]).toEqual([409, ["panels.0"]]);
    const dealer = await a.call("DELETE", `${ORG}/${a.root.id}/children/${a.other.id}`);
    expect([dealer.status, issuePaths(dealer.body)]).toEqual([409, ["children.0"]]);
  });

  test("9: GET /api/organizations/{dealer_id}/children: full organizations by name then id; 404; 405", async () => {
    const r = await a.call("GET", `${ORG}/${a.other.id}/children`, { token: OTHER_ADMIN });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    expect(r.body).toEqual([
      {
        id: a.beta.id,
        name: "beta",
        ...FLAGS,
        ancestors: [a.root.id, a.other.id],
        parent: a.other.id,
        children: [],
        panels: [
          { uuid: null, name: "Back door", id: "SN-2", registeredDate: "2026-03-01T10:00:00.000Z", online: false },
        ],
        userPermissionLevel: "admin",
        parentPermissionLevel: "admin",
        permissions: [],
      },
    ]);
    const names = ((await a.call("GET", `${ORG}/${a.acme.id}/children`)).body as { name: string }[]).map((o) => o.name);
    expect(names.slice(0, 2)).toEqual(["alpha shop", "New site"]);
    expect(names).toEqual([...names].sort((x, y) => x.toLowerCase().localeCompare(y.toLowerCase())));
    const out = await a.call("GET", `${ORG}/${a.other.id}/children`, { token: ACME_INTEGRATOR });
    expect([out.status, issuePaths(out.body)]).toEqual([404, ["dealer_id"]]);
    const put = await a.call("PUT", `${ORG}/${a.other.id}/children`, { body: {} });
    expect([put.status, put.headers.get("allow")]).toEqual([405, "GET, POST"]);
  });
});
