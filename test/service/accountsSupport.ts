// The accounts routes served for tests: a hono app with registerAccountsRoutes over a real SQLite
// service database, served by listenOn on 127.0.0.1, with a small organization tree and tokens.
//   root ─ Acme (dealer) ─ Zeta HQ (multi-site), alpha shop (legacy, panel SN-1)
//        └ Other (dealer) ─ beta (legacy, panel SN-2)
import type { Server } from "node:http";
import { Hono } from "hono";
import { expect } from "vitest";
import { registerAccountsRoutes, identifyByToken } from "../../src/adapters/http/accountsRoutes.js";
import { connectionSettings } from "../../src/adapters/http/connectionGuard.js";
import { closeGracefully, listenOn, serverUrl } from "../../src/adapters/http/startServer.js";
import { type TokenEntry, grantLookup, parseTokens } from "../../src/service/auth/tokens.js";
import { HttpError, errorResponse } from "../../src/service/httpError.js";
import type { OrganizationRow } from "../../src/service/store/registryStore.js";
import type { Caller } from "../../src/service/tenants/organization.js";
import { TenantRegistry } from "../../src/service/tenants/registry.js";
import { openTestSpace } from "./registrySpace.js";

export const ADMIN = "admin-token-0123456789abcdef";
export const ACME_INTEGRATOR = "acme-integrator-0123456789ab";
export const SHOP_REPORTER = "shop-reporter-0123456789abcd";
export const OTHER_ADMIN = "other-admin-0123456789abcdef";
export const ACME_REPORTER = "acme-reporter-0123456789abcd";

const BY: Caller = { grant: { role: "admin", partitions: null }, clientInfo: { ipAddress: null, userAgent: null } };
export const T0 = Date.parse("2026-03-01T10:00:00.000Z");

export interface Accounts {
  readonly url: string;
  readonly registry: TenantRegistry;
  readonly root: OrganizationRow;
  readonly acme: OrganizationRow;
  readonly other: OrganizationRow;
  readonly zeta: OrganizationRow;
  readonly shop: OrganizationRow;
  readonly beta: OrganizationRow;
  readonly app: Hono;
  call(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: unknown }>;
  close(): Promise<void>;
}

export async function startAccounts(): Promise<Accounts> {
  const { space, close: closeSpace } = await openTestSpace();
  const registry = await TenantRegistry.open(space.registry, { now: () => T0, rootName: "Operator" });
  const root = registry.root();
  const acme = await registry.createOrganization(root.id, { name: "Acme" }, BY);
  const other = await registry.createOrganization(root.id, { name: "Other" }, BY);
  const zeta = await registry.createOrganization(acme.id, { name: "Zeta HQ" }, BY);
  const shop = await registry.createOrganization(acme.id, { name: "alpha shop", type: "legacy" }, BY);
  const beta = await registry.createOrganization(other.id, { name: "beta", type: "legacy" }, BY);
  await registry.registerPanel(shop.id, { id: "SN-1", name: "Front door" }, BY);
  await registry.registerPanel(beta.id, { id: "SN-2", name: "Back door" }, BY);
  const parsed = parseTokens({
    [ADMIN]: { role: "admin", user: { id: "u-root", firstName: "Root", lastName: "Op", email: "op@example.test" } },
    [ACME_INTEGRATOR]: {
      role: "integrator",
      organizations: [acme.id],
      user: { id: "u-ada", firstName: "Ada", lastName: "Byron", email: "ada@example.test" },
    },
    [SHOP_REPORTER]: { role: "reporter", partitions: ["p-any"], organizations: [shop.id] },
    [OTHER_ADMIN]: { role: "admin", organizations: [other.id] },
    [ACME_REPORTER]: { role: "reporter", partitions: ["p-any"], organizations: [acme.id] },
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const entries: TokenEntry[] = parsed.entries;
  const app = new Hono();
  app.onError((e) => {
    if (e instanceof HttpError) return errorResponse(e, 2);
    return errorResponse(new HttpError(500, `Internal server error: ${String(e)}`), 2);
  });
  app.notFound((c) => errorResponse(new HttpError(404, `No route for ${c.req.method} ${c.req.path}.`), 2));
  registerAccountsRoutes(app, {
    registry,
    identify: identifyByToken(grantLookup(entries)),
    permissions: entries.map((e) => e.grant),
    indent: 2,
    maxBodyBytes: 4096,
  });
  const server: Server = await listenOn(
    async (request) => app.fetch(request),
    { port: 0, host: "127.0.0.1" },
    connectionSettings("test", {}),
  );
  const url = serverUrl(server);
  return {
    url,
    registry,
    root,
    acme,
    other,
    zeta: registry.organization(zeta.id)!,
    shop,
    beta,
    app,
    async call(method, path, options = {}) {
      const token = options.token === undefined ? ADMIN : options.token;
      const headers: Record<string, string> = { ...options.headers };
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
        headers["content-type"] ??= "application/json";
      }
      const r = await fetch(`${url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await r.text();
      return { status: r.status, headers: r.headers, body: text === "" ? null : JSON.parse(text) };
    },
    async close() {
      await closeGracefully(server, 1000);
      await closeSpace();
    },
  };
}

/** The issue paths of an error answer. */
export function issuePaths(body: unknown): string[] {
  return ((body as { error: { issues: { path: string }[] } }).error.issues ?? []).map((i) => i.path);
}

/** The headers every JSON answer carries. */
export function expectJsonHeaders(headers: Headers, contentType = "application/json; charset=utf-8"): void {
  expect(headers.get("content-type")).toBe(contentType);
  expect(headers.get("cache-control")).toBe("no-store");
  expect(headers.get("x-content-type-options")).toBe("nosniff");
}
