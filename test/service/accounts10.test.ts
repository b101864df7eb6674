// The 1.0 organization routes of the accounts host (`/api/ous…`, routes 10–18 of the plan; semantics
// T10–T24), through a real server on 127.0.0.1 over a real SQLite service database: the 1.0 shapes
// (no systemId, readers), the legacy customer a create makes, and `mine` versioned by `Accept`.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  ACME_INTEGRATOR,
  ACME_REPORTER,
  type Accounts,
  OTHER_ADMIN,
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
const OUS = "/api/ous";
const V2 = "application/vnd.service.v2+json";
const BY = { grant: { role: "admin" as const, partitions: null }, clientInfo: { ipAddress: null, userAgent: null } };

describe("1.0 organizations", () => {
  test("10, 15: GET /api/ous/{id}: the 1.0 shape (no systemId, readers []); 401, 404, 405", async () => {
    const r = await a.call("GET", `${OUS}/${a.shop.id}`, { token: ACME_INTEGRATOR });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    expect(r.body).toEqual({
      id: a.shop.id,
      name: "alpha shop",
      ...FLAGS,
      ancestors: [a.root.id, a.acme.id],
      parent: a.acme.id,
      children: [],
      panels: [
        {
          id: "SN-1",
          name: "Front door",
          online: false,
          allowCredentialResets: true,
          credentialResetsPerMonth: 1,
          reportBillingPolicy: "basic",
          uri: `${a.url}/panels/SN-1`,
          registeredDate: "2026-03-01T10:00:00.000Z",
        },
      ],
      readers: [],
      userPermissionLevel: "integrator",
      parentPermissionLevel: "integrator",
      permissions: [{ _id: "#3", userId: null, email: null, name: null, role: "reporter" }],
    });
    const zeta = await a.call("GET", `${OUS}/${a.zeta.id}`);
    expect(zeta.body).not.toHaveProperty("systemId");
    const acme = (await a.call("GET", `${OUS}/${a.acme.id}`)).body as { children: object[] };
    expect(acme.children).toEqual([
      { id: a.shop.id, name: "alpha shop", ...FLAGS },
      { id: a.zeta.id, name: "Zeta HQ", ...FLAGS },
    ]);
    expect((await a.call("GET", `${OUS}/${a.shop.id}`, { token: null })).status).toBe(401);
    const out = await a.call("GET", `${OUS}/${a.shop.id}`, { token: OTHER_ADMIN });
    expect([out.status, issuePaths(out.body)]).toEqual([404, ["organization_id"]]);
    const put = await a.call("PUT", `${OUS}/${a.shop.id}`, { body: {} });
    expect([put.status, put.headers.get("allow")]).toEqual([405, "GET"]);
  });

  test("11: GET /api/ous/{id}/search: 1.0 entities (no uuid, no systemId); 404; 400 query", async () => {
    const system = a.registry.tenantsOf(a.zeta.id)[0]!;
    await a.registry.setTenantInfo(system.n, {
      nodes: [{ id: "node-1", name: "Lobby door", serialNumber: null, created: null }],
    });
    const r = await a.call("GET", `${OUS}/${a.acme.id}/search?q=door`);
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    expect(r.body).toEqual([
      { _id: "SN-1", type: "panel", name: "Front door" },
      { _id: "node-1", type: "panel", name: "Lobby door" },
    ]);
    const v2 = await a.call("GET", `/api/organizations/${a.acme.id}/search?q=lobby`);
    expect(v2.body).toEqual([
      { _id: "node-1", type: "panel", name: "Lobby door", uuid: "node-1", systemId: system.key },
    ]);
    expect((await a.call("GET", `${OUS}/nope/search`)).status).toBe(404);
    expect(issuePaths((await a.call("GET", `${OUS}/${a.acme.id}/search?per_page=2`)).body)).toEqual(["query.per_page"]);
  });

  test("12: GET /api/ous/mine needs Accept: application/vnd.service.v2+json (406 at headers.accept) and answers with it", async () => {
    const r = await a.call("GET", `${OUS}/mine`, {
      token: ACME_INTEGRATOR,
      headers: { accept: `text/html, ${V2};q=0.5` },
    });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers, `${V2}; charset=utf-8`);
    const list = r.body as Record<string, unknown>[];
    expect(list.map((o) => o.id)).toEqual([a.acme.id]);
    expect(list[0]).toHaveProperty("readers", []);
    for (const accept of [undefined, "application/json", `${V2};q=0`, "*/*"]) {
      const x = await a.call("GET", `${OUS}/mine`, { headers: accept === undefined ? {} : { accept } });
      expect([x.status, issuePaths(x.body)]).toEqual([406, ["headers.accept"]]);
      expectJsonHeaders(x.headers);
    }
    expect((await a.call("GET", `${OUS}/mine`, { token: null, headers: { accept: V2 } })).status).toBe(401);
  });

  test("13: GET /api/ous/mine/search needs the same Accept; 400 query", async () => {
    const r = await a.call("GET", `${OUS}/mine/search?q=BACK`, { token: OTHER_ADMIN, headers: { accept: V2 } });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers, `${V2}; charset=utf-8`);
    expect(r.body).toEqual([{ _id: "SN-2", type: "panel", name: "Back door" }]);
    const no = await a.call("GET", `${OUS}/mine/search?q=x`, { token: OTHER_ADMIN });
    expect([no.status, issuePaths(no.body)]).toEqual([406, ["headers.accept"]]);
    const bad = await a.call("GET", `${OUS}/mine/search?z=1`, { headers: { accept: V2 } });
    expect([bad.status, issuePaths(bad.body)]).toEqual([400, ["query.z"]]);
  });

  test("14: POST /api/ous/{dealer_id}/children creates a legacy customer (a dealer under the root); type is 400", async () => {
    const r = await a.call("POST", `${OUS}/${a.acme.id}/children`, { token: ACME_INTEGRATOR, body: { name: "Kiosk" } });
    expect(r.status).toBe(201);
    expectJsonHeaders(r.headers);
    const made = r.body as Record<string, unknown>;
    expect(made).toEqual({
      id: made.id,
      name: "Kiosk",
      allowCredentialResets: true,
      children: [],
      panels: [],
      readers: [],
      permissions: [],
    });
    expect(a.registry.organization(made.id as string)?.type).toBe("legacy");
    expect(a.registry.tenantsOf(made.id as string)).toEqual([]);
    const dealer = await a.call("POST", `${OUS}/${a.root.id}/children`, { body: { name: "Dealer 1.0" } });
    expect(a.registry.organization((dealer.body as { id: string }).id)?.type).toBe("dealer");
    const typed = await a.call("POST", `${OUS}/${a.acme.id}/children`, { body: { name: "K2", type: "legacy" } });
    expect([typed.status, issuePaths(typed.body)]).toEqual([400, ["body.type"]]);
    expect(
      (await a.call("POST", `${OUS}/${a.acme.id}/children`, { token: ACME_REPORTER, body: { name: "x" } })).status,
    ).toBe(403);
    const taken = await a.call("POST", `${OUS}/${a.acme.id}/children`, { body: { name: "kiosk" } });
    expect([taken.status, issuePaths(taken.body)]).toEqual([409, ["body.name"]]);
  });

  test("16: PUT /api/ous/{dealer_id}/children/{customer_id}: 204; 400 type; 404", async () => {
    const made = await a.registry.createOrganization(a.acme.id, { name: "Ou rename" }, BY, "1.0");
    const path = `${OUS}/${a.acme.id}/children/${made.id}`;
    const r = await a.call("PUT", path, { body: { name: "Ou renamed", allowCredentialResets: false } });
    expect([r.status, r.body]).toEqual([204, null]);
    expect((await a.call("GET", `${OUS}/${made.id}`)).body).toMatchObject({
      name: "Ou renamed",
      allowCredentialResets: false,
    });
    const typed = await a.call("PUT", path, { body: { name: "x", type: "legacy" } });
    expect([typed.status, issuePaths(typed.body)]).toEqual([400, ["body.type"]]);
    const other = await a.call("PUT", `${OUS}/${a.other.id}/children/${made.id}`, { body: { name: "x" } });
    expect([other.status, issuePaths(other.body)]).toEqual([404, ["customer_id"]]);
  });

  test("17: DELETE /api/ous/{dealer_id}/children/{customer_id}: 204; 409 panels; 403", async () => {
    const made = await a.registry.createOrganization(a.acme.id, { name: "Ou delete" }, BY, "1.0");
    const path = `${OUS}/${a.acme.id}/children/${made.id}`;
    expect((await a.call("DELETE", path, { token: ACME_REPORTER })).status).toBe(403);
    expect((await a.call("DELETE", path)).status).toBe(204);
    expect((await a.call("GET", `${OUS}/${made.id}`)).status).toBe(404);
    const busy = await a.call("DELETE", `${OUS}/${a.other.id}/children/${a.beta.id}`, { token: OTHER_ADMIN });
    expect([busy.status, issuePaths(busy.body)]).toEqual([409, ["panels.0"]]);
  });

  test("18: GET /api/ous/{dealer_id}/children: 1.0 organizations; 404", async () => {
    const r = await a.call("GET", `${OUS}/${a.other.id}/children`);
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    const list = r.body as Record<string, unknown>[];
    expect(list.map((o) => o.name)).toEqual(["beta"]);
    expect(Object.keys(list[0]!)).toContain("readers");
    expect(list[0]).not.toHaveProperty("systemId");
    const out = await a.call("GET", `${OUS}/${a.other.id}/children`, { token: ACME_INTEGRATOR });
    expect([out.status, issuePaths(out.body)]).toEqual([404, ["dealer_id"]]);
  });
});
