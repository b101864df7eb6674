// The authorization matrix (semantics I3, I5, T51): every route the service declares, for every role
// (a user holding that role on a dealer through a permission), against its own organization, a
// descendant and another dealer's tenant, with the status it must get; then no token, an expired
// token and a token of another tenant. Real parts: the service server on 127.0.0.1 over a SQLite
// file, ID tokens signed with the service's own keys, system tokens from `POST /api/systems/{id}/token`,
// panel tokens from `POST /api/panels/{id}/token`.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import type { DeclaredRoute } from "../../src/adapters/http/routes/declaredRoute.js";
import { nodeEventRouteDeclarations } from "../../src/adapters/http/nodeEventRoutes.js";
import { nodeRouteDeclarations } from "../../src/adapters/http/nodeRoutes.js";
import { migrationRoutes } from "../../src/adapters/http/routes/serviceRoutes.js";
import { serviceRouteDeclarations } from "../../src/adapters/http/routes/servedRoutes.js";
import type { Role } from "../../src/service/auth/grant.js";
import { createUser } from "../../src/service/identity/accounts.js";
import { KIND, type PermissionRecord } from "../../src/service/identity/records.js";
import { openSigningKeys } from "../../src/service/identity/signingKeys.js";
import type { Caller } from "../../src/service/tenants/organization.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";

const ROLES: readonly Role[] = ["admin", "integrator", "manager", "reporter"];
const BY: Caller = { grant: { role: "admin", partitions: null }, clientInfo: { ipAddress: null, userAgent: null } };
const FAKE = "00000000-0000-4000-8000-00000000beef";
/** The issue paths a 404 has when the tenant (organization, system, panel) is unknown or out of reach. */
const TENANT_PATHS = new Set([
  "organization_id",
  "dealer_id",
  "system_id",
  "panel_id",
  "systemId",
  "body.systemId",
  "query.systemId",
]);

let clock = Date.parse("2026-05-04T09:00:00.000Z");
let server: RunningServiceServer;
let url: string;

interface Ids {
  root: string;
  dealerA: string;
  dealerB: string;
  a1: string;
  b1: string;
  la: string;
  lb: string;
  systemA1: string;
  systemB1: string;
  panelA: string;
  panelB: string;
}
const ids = {} as Ids;
/** ID tokens of the users holding each role on dealer A, and of dealer B's admin. */
const idTokens = new Map<string, string>();
/** System tokens of those users for A1's system (and B's admin for B1's). */
const systemTokens = new Map<string, string>();
const panelTokens = new Map<string, string>();

async function call(
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { accept: "application/json, application/vnd.service.v2+json" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(`${url}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {}
  return { status: r.status, body: parsed };
}

const issuePaths = (body: unknown): string[] =>
  ((body as { error?: { issues?: { path: string }[] } })?.error?.issues ?? []).map((i) => i.path);
const isTenant404 = (r: { status: number; body: unknown }) =>
  r.status === 404 && issuePaths(r.body).some((p) => TENANT_PATHS.has(p));

async function permit(email: string, organization: string, role: Role, userId: string): Promise<void> {
  const value: PermissionRecord = {
    id: randomUUID(),
    organization,
    email,
    name: email,
    role,
    partitions: role === "manager" || role === "reporter" ? {} : null,
    userId,
    created: new Date(clock).toISOString(),
    accepted: null,
  };
  await server.registry.updateRecords(() => ({
    changes: [{ op: "putRecord", kind: KIND.permission, id: value.id, value, ifVersion: 0 }],
    result: undefined,
  }));
}

async function setUp(): Promise<void> {
  const dir = tempDir();
  server = await startServiceServer({ dataFile: join(dir, "service.db"), port: 0, log: () => {}, now: () => clock });
  url = server.url;
  const r = server.registry;
  ids.root = r.root().id;
  ids.dealerA = (await r.createOrganization(ids.root, { name: "Dealer A" }, BY)).id;
  ids.dealerB = (await r.createOrganization(ids.root, { name: "Dealer B" }, BY)).id;
  const imported = () => ({ ...(BUILDING_JSON as object), systemId: randomUUID() });
  ids.a1 = (await r.createOrganization(ids.dealerA, { name: "A1", import: imported() }, BY)).id;
  ids.b1 = (await r.createOrganization(ids.dealerB, { name: "B1", import: imported() }, BY)).id;
  ids.la = (await r.createOrganization(ids.dealerA, { name: "LA", type: "legacy" }, BY)).id;
  ids.lb = (await r.createOrganization(ids.dealerB, { name: "LB", type: "legacy" }, BY)).id;
  ids.systemA1 = r.tenantsOf(ids.a1)[0]!.key;
  ids.systemB1 = r.tenantsOf(ids.b1)[0]!.key;
  ids.panelA = (await r.registerPanel(ids.la, { id: "SN-A", name: "A door" }, BY)).key;
  ids.panelB = (await r.registerPanel(ids.lb, { id: "SN-B", name: "B door" }, BY)).key;
  panelTokens.set("A", await r.createPanelToken(ids.panelA, BY));
  panelTokens.set("B", await r.createPanelToken(ids.panelB, BY));
  const keys = openSigningKeys(r, { now: () => clock });
  const users: [string, string, Role][] = [
    ...ROLES.map((role): [string, string, Role] => [role, ids.dealerA, role]),
    ["otherAdmin", ids.dealerB, "admin"],
  ];
  for (const [name, org, role] of users) {
    const user = await createUser(r, { email: `${name}@example.test`, password: "correct horse battery" });
    await permit(user.email, org, role, user.id);
    idTokens.set(name, await keys.sign({ sub: user.id, aud: "matrix-client", email: user.email }, url, 300));
  }
  for (const [name] of users) {
    const system = name === "otherAdmin" ? ids.systemB1 : ids.systemA1;
    const got = await call("POST", `/api/systems/${system}/token`, idTokens.get(name)!);
    expect(got.status, `system token of ${name}`).toBe(200);
    systemTokens.set(name, (got.body as { token: string }).token);
  }
}

beforeAll(setUp, 60_000);
afterAll(async () => {
  await server?.close();
  removeTempDirs();
});

/** A route's path with its parameters filled for one target. */
function fill(route: DeclaredRoute, values: Readonly<Record<string, string>>): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(values[name] ?? FAKE));
}

type Target = "own" | "descendant" | "other";
const routes = () =>
  serviceRouteDeclarations([...migrationRoutes(), ...nodeRouteDeclarations(), ...nodeEventRouteDeclarations()]).filter(
    (r) => r.access.scope !== "public" && r.host !== "service",
  );

/** What each accounts-host parameter names for a target (dealer A's user: own = dealer A, descendant = A1 or LA, other = B's). */
function accountsValues(route: DeclaredRoute, target: Target): Record<string, string> | null {
  const legacy = route.path.startsWith("/api/ous") || route.path.startsWith("/api/panels");
  const org = { own: ids.dealerA, descendant: legacy ? ids.la : ids.a1, other: ids.dealerB }[target];
  const child = { own: legacy ? ids.la : ids.a1, descendant: FAKE, other: legacy ? ids.lb : ids.b1 }[target];
  const panel = target === "other" ? ids.panelB : ids.panelA;
  const system = target === "other" ? ids.systemB1 : ids.systemA1;
  if (target === "own" && (route.path.includes(":panelId") || route.path.includes(":systemId"))) return null;
  return { organizationId: org, dealerId: org, customerId: child, panelId: panel, systemId: system };
}

/** The body of a write: empty (enough to get past authorization, refused by validation after). */
const bodyOf = (route: DeclaredRoute) => (route.method === "POST" || route.method === "PUT" ? {} : undefined);

/**
 * Whether an answer got past the role check: not 401, not the tenant's 404, and not a 403 of the role
 * (a 403 at a body field is about the data, e.g. a manager's holder outside its partitions).
 */
function passedRole(r: { status: number; body: unknown }): boolean {
  if (r.status === 401 || isTenant404(r)) return false;
  return r.status !== 403 || issuePaths(r.body).some((p) => p.startsWith("body."));
}

/** Whether an answer is the role's refusal: 403, or the 404 of a made-up sub-resource id checked before it. */
function refusedRole(r: { status: number; body: unknown }, path: string): boolean {
  return r.status === 403 || (r.status === 404 && !isTenant404(r) && path.includes(FAKE));
}

/** Whether a role may call a route on a tenant it reaches. */
function allowed(route: DeclaredRoute, role: Role): boolean {
  return route.access.roles.includes(role);
}

describe("authorization matrix", () => {
  test("accounts host: every route × role × own, descendant and other organization (I3, T51)", async () => {
    const failures: string[] = [];
    for (const route of routes().filter((r) => r.host === "accounts" && !r.path.includes("/mine"))) {
      for (const target of ["other", "own", "descendant"] as const) {
        const values = accountsValues(route, target);
        if (values === null || !/:(organizationId|dealerId|panelId|systemId)/.test(route.path)) continue;
        for (const role of ROLES) {
          const r = await call(route.method, fill(route, values), idTokens.get(role)!, bodyOf(route));
          const where = `${route.method} ${route.path} ${role} ${target}: ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`;
          if (target === "other") {
            if (!isTenant404(r)) failures.push(`expected 404 out of reach — ${where}`);
          } else if (allowed(route, role)) {
            if (!passedRole(r)) failures.push(`expected allowed — ${where}`);
          } else if (!refusedRole(r, fill(route, values))) failures.push(`expected 403 — ${where}`);
          // A deleted panel comes back for the next combination.
          if (route.path === "/api/panels/:panelId" && route.method === "DELETE" && r.status === 204) {
            await server.registry.registerPanel(ids.la, { id: "SN-A", name: "A door" }, BY);
            panelTokens.set("A", await server.registry.createPanelToken(ids.panelA, BY));
          }
        }
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  test("systems host: every route × role on the system reached and another one (I3, I5)", async () => {
    const failures: string[] = [];
    for (const route of routes().filter((r) => r.host === "systems" || r.host === "engine")) {
      for (const role of ROLES) {
        const token = systemTokens.get(role)!;
        const mine = await call(route.method, fill(route, { systemId: ids.systemA1 }), token, bodyOf(route));
        const where = `${route.method} ${route.path} ${role}: ${mine.status} ${JSON.stringify(mine.body).slice(0, 160)}`;
        if (allowed(route, role)) {
          if (!passedRole(mine)) failures.push(`expected allowed — ${where}`);
        } else if (mine.status !== 403) failures.push(`expected 403 — ${where}`);
        const other = await call(route.method, fill(route, { systemId: ids.systemB1 }), token, bodyOf(route));
        if (!isTenant404(other)) failures.push(`expected 404 on another system — ${where} → ${other.status}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  test("per-node host: every route with its panel's token, another panel's token and none (I5)", async () => {
    const failures: string[] = [];
    for (const route of routes().filter((r) => r.host === "panel")) {
      const path = fill(route, { serial: ids.panelA });
      const own = await call(route.method, path, panelTokens.get("A")!, bodyOf(route));
      if (!passedRole(own)) failures.push(`own ${route.method} ${route.path}: ${own.status}`);
      const other = await call(route.method, path, panelTokens.get("B")!, bodyOf(route));
      if (!isTenant404(other)) failures.push(`other ${route.method} ${route.path}: ${other.status}`);
      const none = await call(route.method, path, null, bodyOf(route));
      if (none.status !== 401) failures.push(`none ${route.method} ${route.path}: ${none.status}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);

  test("no token, a token of another kind, another tenant's token, an expired token: 401 or 404 on every route (I5)", async () => {
    const failures: string[] = [];
    const all = routes().filter((r) => r.host !== "panel");
    const pathOf = (r: DeclaredRoute) =>
      fill(r, { ...accountsValues(r, "descendant"), systemId: ids.systemA1, organizationId: ids.a1 });
    for (const route of all) {
      const none = await call(route.method, pathOf(route), null, bodyOf(route));
      if (none.status !== 401) failures.push(`no token ${route.method} ${route.path}: ${none.status}`);
      const onSystems = route.host === "systems" || route.host === "engine";
      // An ID token on a systems host, a system token on the accounts host: not this host's tokens.
      const wrongKind = onSystems ? idTokens.get("admin")! : systemTokens.get("admin")!;
      const wrong = await call(route.method, pathOf(route), wrongKind, bodyOf(route));
      if (wrong.status !== 401) failures.push(`wrong kind ${route.method} ${route.path}: ${wrong.status}`);
      if (/:(organizationId|dealerId|systemId)/.test(route.path)) {
        const otherToken = onSystems ? systemTokens.get("otherAdmin")! : idTokens.get("otherAdmin")!;
        const other = await call(route.method, pathOf(route), otherToken, bodyOf(route));
        if (!isTenant404(other)) failures.push(`other tenant ${route.method} ${route.path}: ${other.status}`);
      }
    }
    clock += 3601_000;
    try {
      for (const route of all) {
        const onSystems = route.host === "systems" || route.host === "engine";
        const expired = await call(
          route.method,
          pathOf(route),
          (onSystems ? systemTokens : idTokens).get("admin")!,
          bodyOf(route),
        );
        if (expired.status !== 401) failures.push(`expired ${route.method} ${route.path}: ${expired.status}`);
      }
    } finally {
      clock -= 3601_000;
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
