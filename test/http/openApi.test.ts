// The HTTP pipeline: /openapi.json is a valid OpenAPI 3.1 document covering every route the router
// has, /docs renders it, answers are checked against it (openApiCheck.ts, used by every shared
// caller), and a request is routed once and its token resolved once.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, describe, expect, test, vi } from "vitest";
import { createDataApp } from "../../src/adapters/http/createDataApp.js";
import type { DeclaredRoute } from "../../src/adapters/http/routes/declaredRoute.js";
import { startServer } from "../../src/adapters/http/startServer.js";
import { routePatterns } from "../../src/live/routes.js";
import { panelRoutePatterns } from "../../src/legacy1/live/panelRoutes.js";
import { parseTokens } from "../../src/service/auth/tokens.js";
import { building } from "../live/fixture.js";
import { smallPanel } from "../live/panelFixture.js";
import { SYSTEM_ID, caller, dataDir, startData } from "./dataSupport.js";
import { BUILDING_FILE, BUILDING_ID, TOKEN, removeTempDirs } from "./fixtures.js";
import { checkAnswerNow } from "./openApiCheck.js";

// Counts of the route matcher of the live route tables and of the write scope check: the pipeline
// hands the live system the route it matched, so a request through HTTP never matches a table again.
const counts = vi.hoisted(() => ({ matchTable: 0, checkWritePath: 0 }));
vi.mock("../../src/live/routeTable.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/live/routeTable.js")>();
  return {
    ...real,
    matchTable: (...args: Parameters<typeof real.matchTable>) => {
      counts.matchTable++;
      return real.matchTable(...args);
    },
  };
});
vi.mock("../../src/service/auth/scope.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/service/auth/scope.js")>();
  return {
    ...real,
    checkWritePath: (...args: Parameters<typeof real.checkWritePath>) => {
      counts.checkWritePath++;
      return real.checkWritePath(...args);
    },
  };
});

afterAll(removeTempDirs);

const EAST = "manager-east-token-cccccccccccc";
const ADMIN = "admin-token-aaaaaaaaaaaa";

/** `/{systemId}/holders/{holderId}` → `/:systemId/holders/:holderId`. */
const honoPath = (p: string) => p.replace(/\{(\w+)\}/g, ":$1");

async function documentOf(url: string): Promise<any> {
  const res = await fetch(`${url}/openapi.json`);
  expect(res.status).toBe(200);
  return res.json();
}

async function expectValid(doc: unknown): Promise<void> {
  const result = await new Validator().validate(doc as Parameters<Validator["validate"]>[0]);
  expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
  expect(result.valid).toBe(true);
  expect((doc as { openapi: string }).openapi).toBe("3.1.0");
}

/** Every method and path the hono app registered for routes (not the fallbacks and docs), as `METHOD /path`. */
async function routerRoutes(server: Awaited<ReturnType<typeof startData>>["server"]): Promise<string[]> {
  const app = await createDataApp({ durable: server.durable, insecureNoAuth: true });
  const declared = (app as unknown as { routes: { method: string; path: string }[] }).routes;
  return [...new Set(declared.map((r) => r.path))].filter(
    (p) => !p.endsWith("/*") && p !== "/openapi.json" && p !== "/docs",
  );
}

describe("/openapi.json", () => {
  test("2.0 --data: valid OpenAPI 3.1, without a token; every path of the router and of the live route table is in it", async () => {
    const { db } = dataDir();
    const { server } = await startData(db, building());
    const doc = await documentOf(server.url);
    await expectValid(doc);
    const documented = new Set(Object.keys(doc.paths).map(honoPath));
    for (const path of await routerRoutes(server)) expect(documented, path).toContain(path);
    for (const [method, pattern] of routePatterns())
      expect(
        doc.paths[`/{systemId}${pattern.replace(/:(\w+)/g, "{$1}")}`]?.[method.toLowerCase()],
        pattern,
      ).toBeDefined();
    // Every documented route answers every status with a schema (or none for 204).
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item)) {
        expect(Object.keys(op.responses).length, `${method} ${path}`).toBeGreaterThan(1);
        for (const [status, r] of Object.entries<any>(op.responses))
          if (status !== "204")
            expect(r.content?.["application/json"]?.schema, `${method} ${path} ${status}`).toBeDefined();
      }
  });

  test("1.0 --data --panel: valid, and every route of the panel's table is in it", async () => {
    const { db } = dataDir();
    const { server } = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
    });
    const doc = await documentOf(server.url);
    await expectValid(doc);
    const documented = new Set(Object.keys(doc.paths).map(honoPath));
    for (const path of await routerRoutes(server)) expect(documented, path).toContain(path);
    for (const [method, pattern] of panelRoutePatterns())
      expect(doc.paths[pattern.replace(/:(\w+)/g, "{$1}")]?.[method.toLowerCase()], pattern).toBeDefined();
  });

  test("serve --system: valid, with RSOP, decisions, explain, who-can-access and health", async () => {
    const server = await startServer({ systemFile: BUILDING_FILE, token: TOKEN, log: () => {}, reloadWorker: false });
    try {
      const doc = await documentOf(server.url);
      await expectValid(doc);
      expect(Object.keys(doc.paths).sort()).toEqual(
        [
          "/healthz",
          "/{systemId}/cloud-nodes/{cloudNodeId}/rsop/holders",
          "/{systemId}/decisions",
          "/{systemId}/decisions/explain",
          "/{systemId}/devices/{deviceId}/access",
          "/{systemId}/rsop/holders",
        ].sort(),
      );
      // Its answers match it too.
      const res = await fetch(`${server.url}/${BUILDING_ID}/decisions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ deviceId: "door-ward-3", credential: { credentialNumber: 10234, facilityCode: 17 } }),
      });
      await checkAnswerNow(
        `${server.url}/openapi.json`,
        "POST",
        res.url,
        res.status,
        await res.json(),
        res.headers.get("content-type"),
      );
    } finally {
      await server.close();
    }
  });

  test("a mismatch is caught: an undeclared status, a body off its schema, a refusal off the error shape", async () => {
    const { db } = dataDir();
    const { server } = await startData(db, building());
    const doc = `${server.url}/openapi.json`;
    const at = `${server.url}/${SYSTEM_ID}/holders`;
    const json = "application/json";
    await expect(checkAnswerNow(doc, "GET", at, 418, {}, json)).rejects.toThrow(/status 418 is not declared/);
    await expect(checkAnswerNow(doc, "GET", at, 200, { not: "a list" }, json)).rejects.toThrow(/does not match/);
    await expect(checkAnswerNow(doc, "GET", at, 404, { oops: 1 }, json)).rejects.toThrow(/does not match/);
    await expect(checkAnswerNow(doc, "GET", `${server.url}/x/y/z/w/v`, 200, {}, json)).rejects.toThrow(/no route/);
    await checkAnswerNow(doc, "GET", at, 200, [{ id: "h-1" }], json);
  });
});

describe("one route match and one token check per request", () => {
  test("a read, a write, a decision, a manager's write and a 1.0 panel route: routed once, authenticated once, no table match again", async () => {
    const routed: string[] = [];
    let authorized = 0;
    const observe = {
      routed: (r: DeclaredRoute) => routed.push(`${r.method} ${r.path}`),
      authorized: () => void authorized++,
    };
    const tokens = parseTokens({ [ADMIN]: { role: "admin" }, [EAST]: { role: "manager", partitions: ["p-east"] } });
    if (!tokens.ok) throw new Error("tokens");
    const { db } = dataDir();
    const { server } = await startData(db, building(), {
      observe,
      tokens: { file: "t.json", entries: tokens.entries },
    });
    const admin = caller(server.url);
    const once = async (what: string, run: () => Promise<{ status: number }>, status: number, route: string) => {
      routed.length = 0;
      authorized = 0;
      const before = { ...counts };
      const r = await run();
      expect(r.status, what).toBe(status);
      expect(routed, what).toEqual([route]);
      expect(authorized, what).toBe(1);
      expect(counts.matchTable - before.matchTable, `${what}: the live system matched no route again`).toBe(0);
      return counts.checkWritePath - before.checkWritePath;
    };
    await once("read", () => admin("GET", "/holders/h-ann"), 200, "GET /:systemId/holders/:holderId");
    await once("write", () => admin("POST", "/groups", { name: "Night" }), 200, "POST /:systemId/groups");
    await once(
      "decision",
      () =>
        admin("POST", "/decisions", {
          deviceId: "d-front",
          at: "2026-04-15T12:00:00Z",
          credential: { credentialNumber: 1001, facilityCode: 10 },
        }),
      200,
      "POST /:systemId/decisions",
    );
    const east = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}/${SYSTEM_ID}${path}`, {
        method,
        headers: { authorization: `Bearer ${EAST}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status };
    };
    const scopeChecks = await once(
      "a manager's write",
      () => east("POST", "/groups", { name: "East night", partition: "p-east" }),
      200,
      "POST /:systemId/groups",
    );
    expect(scopeChecks, "the scope of the path is checked once").toBe(1);

    const panelDb = dataDir().db;
    const panel = await startData(panelDb, undefined, {
      observe,
      initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
    });
    const panelCall = caller(panel.server.url, "");
    await once("1.0 panel read", () => panelCall("GET", "/api/groups"), 200, "GET /api/groups");
    await once(
      "1.0 panel write",
      () => panelCall("POST", "/api/groups", { name: "Pipeline counted" }),
      200,
      "POST /api/groups",
    );
  });
});

/** The Chromium binary, if one runs here. */
function chromium(): string | null {
  const env = process.env.RSOP_CHROMIUM;
  for (const bin of env !== undefined && env !== "" ? [env] : ["chromium", "chromium-browser", "google-chrome"]) {
    const r = spawnSync(bin, ["--version"], { encoding: "utf8", timeout: 30_000 });
    if (r.status === 0) return bin;
  }
  return null;
}

const browser = chromium();

describe("/docs", () => {
  test.skipIf(browser === null)(
    "renders Swagger UI from this server (no CDN) in headless Chromium, showing the API's title and routes",
    async () => {
      const { db } = dataDir();
      const { server } = await startData(db, building());
      const page = await fetch(`${server.url}/docs`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
      const dir = mkdtempSync(join(tmpdir(), "rsop-docs-"));
      try {
        const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          // Asynchronously: the server answers the browser's requests from this process meanwhile.
          const p = spawn(browser!, [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            `--user-data-dir=${dir}`,
            "--virtual-time-budget=15000",
            "--dump-dom",
            `${server.url}/docs`,
          ]);
          let stdout = "";
          let stderr = "";
          p.stdout.on("data", (d) => (stdout += d));
          p.stderr.on("data", (d) => (stderr += d));
          p.on("close", (status) => resolve({ status, stdout, stderr }));
        });
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout).toContain("rsop-engine: a 2.0 system");
        expect(r.stdout).toContain("/{systemId}/holders");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
