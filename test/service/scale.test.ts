// A service of 1,000 customers, each with one small system, on one SQLite database (T36): written
// over HTTP with a memory budget that holds about twenty of them, so tenants are evicted and loaded
// again all along; then the process restarts and every tenant is read back. Bounded in size; no
// duration is asserted (bench/tenants.bench.ts measures them).
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";

const ROOT = "root-admin-token-0123456789";
const CUSTOMERS = 1000;
const HOLDERS_EACH = 2;
const BUDGET = 12 * 1024 * 1024;

afterAll(() => removeTempDirs());

async function call(server: RunningServiceServer, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ROOT}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
}

/** Runs `work(i)` for i in [0, n) with at most `width` at once. */
async function inParallel(n: number, width: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

const start = (db: string) =>
  startServiceServer({ dataFile: db, token: ROOT, port: 0, log: () => {}, memoryBudgetBytes: BUDGET });

test("T36: 1,000 customers with a system each, written under a budget of about twenty loaded, all intact after evictions and a restart", async () => {
  const db = join(tempDir(), "service.db");
  let server = await start(db);
  const rootId = (await call(server, "GET", "/api/organizations/mine")).body[0].id as string;
  const dealer = await call(server, "POST", `/api/organizations/${rootId}/children`, { name: "Dealer" });
  expect(dealer.status).toBe(201);
  const systems: string[] = [];
  await inParallel(CUSTOMERS, 8, async (i) => {
    const made = await call(server, "POST", `/api/organizations/${dealer.body.id}/children`, { name: `Customer ${i}` });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    systems[i] = made.body.systemId;
  });
  // Holders written round the customers, so that nearly every write finds its tenant evicted.
  await inParallel(CUSTOMERS * HOLDERS_EACH, 16, async (k) => {
    const i = k % CUSTOMERS;
    const r = await call(server, "POST", `/${systems[i]}/holders`, { firstName: `H${k}`, lastName: `C${i}` });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  });
  const during = (await call(server, "GET", "/healthz")).body;
  expect(during.tenants).toBe(CUSTOMERS);
  expect(during.evictions).toBeGreaterThan(0);
  expect(during.loaded).toBeLessThan(CUSTOMERS / 10);
  await server.close();

  server = await start(db);
  try {
    const after = (await call(server, "GET", "/healthz")).body;
    expect([after.tenants, after.loaded]).toEqual([CUSTOMERS, 0]);
    await inParallel(CUSTOMERS, 16, async (i) => {
      const r = await call(server, "GET", `/${systems[i]}/holders`);
      expect(r.status).toBe(200);
      const names = (r.body as { firstName: string; lastName: string }[]).map((h) => `${h.firstName} ${h.lastName}`);
      expect(names.sort()).toEqual(
        Array.from({ length: HOLDERS_EACH }, (_, j) => `H${i + j * CUSTOMERS} C${i}`).sort(),
      );
    });
    const children = await call(server, "GET", `/api/organizations/${dealer.body.id}/children`);
    expect(children.body).toHaveLength(CUSTOMERS);
    expect((await call(server, "GET", "/healthz")).body.evictions).toBeGreaterThan(0);
  } finally {
    await server.close();
  }
}, 600_000);
