// The panel registration routes of the accounts host (routes 19–24 of the plan; semantics T15, T17,
// T21), through a real server on 127.0.0.1 over a real SQLite service database; and the accounts
// routes' declarations: each one served, and their OpenAPI document valid.
import { createHash } from "node:crypto";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { registerAccountsRoutes } from "../../src/adapters/http/accountsRoutes.js";
import { accountsRouteDeclarations } from "../../src/adapters/http/routes/accountsDeclarations.js";
import { buildOpenApiDocument } from "../../src/adapters/http/routes/openApiDocument.js";
import { type HttpError, errorResponse } from "../../src/service/httpError.js";
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

describe("panels", () => {
  test("19: POST /api/ous/{id}/panels: 201 the 1.0 organization with the panel; 400, 403, 404, 409", async () => {
    const r = await a.call("POST", `/api/ous/${a.shop.id}/panels`, {
      token: ACME_INTEGRATOR,
      body: { id: "SN-10", name: "Side gate", credentialResetsPerMonth: 3 },
    });
    expect(r.status).toBe(201);
    expectJsonHeaders(r.headers);
    const org = r.body as { id: string; panels: { id: string }[]; readers: unknown[] };
    expect(org.id).toBe(a.shop.id);
    expect(org.readers).toEqual([]);
    expect(org.panels.map((p) => p.id)).toEqual(["SN-1", "SN-10"]);
    expect(org.panels[1]).toEqual({
      id: "SN-10",
      name: "Side gate",
      online: false,
      allowCredentialResets: true,
      credentialResetsPerMonth: 3,
      reportBillingPolicy: "basic",
      uri: `${a.url}/panels/SN-10`,
      registeredDate: "2026-03-01T10:00:00.000Z",
    });
    const refused = async (status: number, paths: string[], org: string, body: unknown, token?: string) => {
      const x = await a.call("POST", `/api/ous/${org}/panels`, { body, ...(token ? { token } : {}) });
      expect([x.status, issuePaths(x.body)]).toEqual([status, paths]);
    };
    await refused(400, ["body.id"], a.shop.id, { id: "bad serial", name: "x" });
    await refused(400, ["body.name"], a.shop.id, { id: "SN-11" });
    await refused(400, ["body.extra"], a.shop.id, { id: "SN-11", name: "x", extra: 1 });
    await refused(403, [], a.shop.id, { id: "SN-11", name: "x" }, SHOP_REPORTER);
    await refused(404, ["organization_id"], a.shop.id, { id: "SN-11", name: "x" }, OTHER_ADMIN);
    await refused(409, ["body.id"], a.shop.id, { id: "SN-2", name: "x" });
    await refused(409, ["organization_id"], a.zeta.id, { id: "SN-11", name: "x" });
    await refused(409, ["organization_id"], a.acme.id, { id: "SN-11", name: "x" });
  });

  test("20: GET /api/panels/{panel_id}: the panel; 401, 404 unknown or out of reach, 405", async () => {
    const r = await a.call("GET", "/api/panels/SN-1", { token: SHOP_REPORTER });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    expect(r.body).toEqual({
      id: "SN-1",
      name: "Front door",
      ouId: a.shop.id,
      online: false,
      allowCredentialResets: true,
      credentialResetsPerMonth: 1,
      reportBillingPolicy: "basic",
      uri: `${a.url}/panels/SN-1`,
      registeredDate: "2026-03-01T10:00:00.000Z",
    });
    expect((await a.call("GET", "/api/panels/SN-1", { token: null })).status).toBe(401);
    for (const [serial, token] of [
      ["SN-404", undefined],
      ["SN-2", ACME_INTEGRATOR],
      [a.registry.tenantsOf(a.zeta.id)[0]!.key, undefined],
    ] as const) {
      const x = await a.call("GET", `/api/panels/${serial}`, { token });
      expect([x.status, issuePaths(x.body)]).toEqual([404, ["panel_id"]]);
    }
    const post = await a.call("POST", "/api/panels/SN-1", { body: {} });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, PUT, DELETE"]);
  });

  test("21: PUT /api/panels/{panel_id}: 204; 400, 403, 404", async () => {
    const r = await a.call("PUT", "/api/panels/SN-2", {
      token: OTHER_ADMIN,
      body: { name: "Loading dock", reportBillingPolicy: "premium" },
    });
    expect([r.status, r.body]).toEqual([204, null]);
    expect((await a.call("GET", "/api/panels/SN-2")).body).toMatchObject({
      name: "Loading dock",
      reportBillingPolicy: "premium",
      credentialResetsPerMonth: 1,
    });
    const noName = await a.call("PUT", "/api/panels/SN-2", { body: { reportBillingPolicy: "basic" } });
    expect([noName.status, issuePaths(noName.body)]).toEqual([400, ["body.name"]]);
    expect((await a.call("PUT", "/api/panels/SN-1", { token: SHOP_REPORTER, body: { name: "x" } })).status).toBe(403);
    const out = await a.call("PUT", "/api/panels/SN-2", { token: ACME_INTEGRATOR, body: { name: "x" } });
    expect([out.status, issuePaths(out.body)]).toEqual([404, ["panel_id"]]);
  });

  test("22: DELETE /api/panels/{panel_id}: 204, the panel and its data go; 403, 404", async () => {
    await a.registry.registerPanel(
      a.shop.id,
      { id: "SN-GONE", name: "Temporary" },
      {
        grant: { role: "admin", partitions: null },
        clientInfo: { ipAddress: null, userAgent: null },
      },
    );
    expect((await a.call("DELETE", "/api/panels/SN-GONE", { token: ACME_REPORTER })).status).toBe(403);
    const r = await a.call("DELETE", "/api/panels/SN-GONE", { token: ACME_INTEGRATOR });
    expect([r.status, r.body]).toEqual([204, null]);
    const again = await a.call("DELETE", "/api/panels/SN-GONE");
    expect([again.status, issuePaths(again.body)]).toEqual([404, ["panel_id"]]);
    expect(a.registry.tenantByKey("SN-GONE")).toBeUndefined();
  });

  test("23: GET /api/ous/{id}/panels: the panels by serial number; an organization without panels: []; 404", async () => {
    const r = await a.call("GET", `/api/ous/${a.shop.id}/panels`, { token: SHOP_REPORTER });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    const list = r.body as { id: string; ouId: string }[];
    expect(list.map((p) => p.id)).toEqual(["SN-1", "SN-10"]);
    expect(list.every((p) => p.ouId === a.shop.id)).toBe(true);
    expect((await a.call("GET", `/api/ous/${a.acme.id}/panels`)).body).toEqual([]);
    const out = await a.call("GET", `/api/ous/${a.shop.id}/panels`, { token: OTHER_ADMIN });
    expect([out.status, issuePaths(out.body)]).toEqual([404, ["organization_id"]]);
  });

  test("24: POST /api/panels/{panel_id}/token: 200 {token}, stored as its digest for that panel; 403, 404", async () => {
    const r = await a.call("POST", "/api/panels/SN-1/token", { token: ACME_INTEGRATOR });
    expect(r.status).toBe(200);
    expectJsonHeaders(r.headers);
    const { token } = r.body as { token: string };
    expect(Object.keys(r.body as object)).toEqual(["token"]);
    expect(token.length).toBeGreaterThanOrEqual(32);
    const digest = createHash("sha256").update(token).digest("hex");
    expect(a.registry.panelToken(digest)).toMatchObject({
      tenant: a.registry.tenantByKey("SN-1")!.n,
      role: "integrator",
    });
    // Not a token of the accounts host.
    expect((await a.call("GET", "/api/panels/SN-1", { token })).status).toBe(401);
    expect((await a.call("POST", "/api/panels/SN-1/token", { token: SHOP_REPORTER })).status).toBe(403);
    const out = await a.call("POST", "/api/panels/SN-1/token", { token: OTHER_ADMIN });
    expect([out.status, issuePaths(out.body)]).toEqual([404, ["panel_id"]]);
    expect((await a.call("GET", "/api/panels/SN-1/token")).headers.get("allow")).toBe("POST");
  });
});

describe("options", () => {
  test("grantOf in place of identify, and --public-url as the panels' uri (T21)", async () => {
    const app = new Hono();
    app.onError((e) => errorResponse(e as HttpError, 0));
    registerAccountsRoutes(app, {
      registry: a.registry,
      grantOf: (token) =>
        token === "a-grant-of-token-000000" ? { role: "reporter", partitions: new Set(["p"]) } : null,
      publicUrl: "https://svc.example/",
      indent: 0,
      maxBodyBytes: 1000,
    });
    const get = (token: string) =>
      app.fetch(new Request("http://x/api/panels/SN-1", { headers: { authorization: `Bearer ${token}` } }));
    const r = await get("a-grant-of-token-000000");
    expect(r.status).toBe(200);
    expect(((await r.json()) as { uri: string }).uri).toBe("https://svc.example/panels/SN-1");
    expect((await get("another-token-00000000000")).status).toBe(401);
  });
});

describe("declarations", () => {
  test("each declared route is served (24 seed routes in 22 declarations), and nothing else answers", async () => {
    const declared = accountsRouteDeclarations();
    expect(declared).toHaveLength(22);
    expect(new Set(declared.map((d) => d.id)).size).toBe(22);
    const ids: Record<string, string> = {
      organizationId: a.acme.id,
      dealerId: a.acme.id,
      customerId: a.zeta.id,
      panelId: "SN-1",
    };
    for (const d of declared) {
      const path = d.path.replace(/:(\w+)/g, (_, k: string) => ids[k]!);
      // A reporter's write is refused by the route itself (403), never left to the fallback (404).
      const r = await a.app.fetch(
        new Request(`http://x${path}`, {
          method: d.method,
          headers: { authorization: `Bearer ${ACME_REPORTER}`, accept: "application/vnd.service.v2+json" },
        }),
      );
      expect([d.id, r.status]).toEqual([d.id, d.method === "GET" ? 200 : 403]);
    }
    const none = await a.app.fetch(
      new Request("http://x/api/ous/a/b/c", { headers: { authorization: `Bearer ${ACME_REPORTER}` } }),
    );
    expect(none.status).toBe(404);
  });

  test("their OpenAPI document is valid OpenAPI 3.1, with the shapes as components", async () => {
    const doc = await buildOpenApiDocument(accountsRouteDeclarations(), {
      title: "accounts",
      version: "1",
      basePath: "",
    });
    const result = await new Validator().validate(doc as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    const schemas = Object.keys((doc as unknown as { components: { schemas: object } }).components.schemas);
    for (const name of ["Organization20", "Organization10", "Panel", "SearchEntity20", "SearchEntity10", "Permission"])
      expect(schemas).toContain(name);
    expect(Object.keys(doc.paths)).toContain("/api/ous/{organizationId}/panels");
  });
});
