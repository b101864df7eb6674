// The tenant host (T30–T36) on a real SQLite space: tenants load on first use, once however many ask
// at once; under a memory budget of about three tenants, thirty tenants written round-robin keep every
// acknowledged write across evictions, reloads and a reopen of the database; pins, leases and writes
// in flight keep a tenant loaded; the cloud-node summary follows the writes that change it.
import { afterAll, describe, expect, test } from "vitest";
import { openSqliteSpace } from "../../src/adapters/store/sqliteStore.js";
import type { Operation } from "../../src/live/index.js";
import type { StoreSpace } from "../../src/service/store/store.js";
import {
  estimateBytes,
  jsonChars,
  jsonCharsInTurns,
  parseBytes,
  patchChars,
} from "../../src/service/tenants/memoryBudget.js";
import { type TenantHostOptions, TenantHost } from "../../src/service/tenants/tenantHost.js";
import { type SystemSummary, touchesCloudNodes } from "../../src/service/tenants/tenantSummary.js";
import { building } from "../live/fixture.js";
import { dataDir } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";

afterAll(removeTempDirs);

const TIME = "2026-04-15T12:00:00Z";
const group = (name: string): Operation => ({ method: "POST", path: "/groups", body: { name } });
const systemOf = (n: number) => ({ ...building(), systemId: `sys-${n}` });

/** A new database holding tenants 1..count, each the fixture building under its own system id. */
async function spaceWith(count: number): Promise<{ db: string; space: StoreSpace }> {
  const { db } = dataDir();
  const space = await openSqliteSpace(db);
  for (let n = 1; n <= count; n++) await space.tenant(n).init("system", systemOf(n), TIME);
  return { db, space };
}

/** About the estimate of one freshly loaded tenant. */
const oneTenant = () => estimateBytes(jsonChars(systemOf(1)));

function groupNames(host: TenantHost, n: number): Promise<string[]> {
  return host.acquire(n).then((lease) => {
    try {
      const target = lease.durable.target;
      if (target.kind !== "system") throw new Error("a system");
      return target.live.snapshot.groups.map((g) => g.name);
    } finally {
      lease.release();
    }
  });
}

describe("tenant host", () => {
  test("first use loads the tenant; concurrent acquires load it once and share it", async () => {
    const { space } = await spaceWith(2);
    const host = new TenantHost(space, { memoryBudgetBytes: 1 << 30 });
    expect(host.stats()).toMatchObject({ loaded: 0, loads: 0, evictions: 0, estimatedBytes: 0 });
    const first = await host.acquire(1);
    expect(first.n).toBe(1);
    expect(first.durable.kind).toBe("system");
    expect(host.stats()).toMatchObject({ loaded: 1, loads: 1, evictions: 0, budgetBytes: 1 << 30 });
    expect(host.stats().estimatedBytes).toBe(estimateBytes(jsonChars(first.durable.target.live.snapshot)));
    first.release();
    first.release(); // a second release changes nothing
    const leases = await Promise.all(Array.from({ length: 8 }, () => host.acquire(2)));
    expect(new Set(leases.map((l) => l.durable)).size).toBe(1);
    expect(new Set(leases.map((l) => l.reports)).size).toBe(1);
    expect(host.stats()).toMatchObject({ loaded: 2, loads: 2 });
    for (const l of leases) l.release();
    await host.close();
    await space.close();
  });

  test("an unknown (empty) tenant is refused, and an acquire after it tries again", async () => {
    const { space } = await spaceWith(1);
    const host = new TenantHost(space, { memoryBudgetBytes: 1 << 30 });
    await expect(host.acquire(7)).rejects.toThrow(/empty/);
    await expect(host.acquire(7)).rejects.toThrow(/empty/);
    expect(host.stats()).toMatchObject({ loaded: 0, loads: 0 });
    await host.close();
    await space.close();
  });

  test("a budget of about three tenants: thirty tenants written round-robin by concurrent writers keep every acknowledged write across evictions, reloads and a reopen", async () => {
    const TENANTS = 30;
    const ROUNDS = 8;
    const { db, space } = await spaceWith(TENANTS);
    const budget = Math.round(oneTenant() * 3.5);
    const lines: string[] = [];
    const options: TenantHostOptions = { memoryBudgetBytes: budget, snapshotEvery: 3, log: (l) => lines.push(l) };
    const host = new TenantHost(space, options);
    const jobs = Array.from({ length: TENANTS * ROUNDS }, (_, k) => ({
      n: (k % TENANTS) + 1,
      round: Math.floor(k / TENANTS),
    }));
    const acknowledged = new Map<number, string[]>();
    let next = 0;
    const writer = async () => {
      while (next < jobs.length) {
        const { n, round } = jobs[next++]!;
        const lease = await host.acquire(n);
        try {
          const name = `Round ${round} of ${n}`;
          const r = await lease.durable.write(group(name));
          expect(r.status).toBe(200);
          acknowledged.set(n, [...(acknowledged.get(n) ?? []), name]);
        } finally {
          lease.release();
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, writer));
    const stats = host.stats();
    expect(stats.evictions).toBeGreaterThan(0);
    expect(stats.loads).toBeGreaterThan(TENANTS);
    expect(stats.estimatedBytes).toBeLessThanOrEqual(budget);
    expect(stats.loaded).toBeLessThanOrEqual(4);
    for (let n = 1; n <= TENANTS; n++) {
      expect(acknowledged.get(n)).toHaveLength(ROUNDS);
      expect(await groupNames(host, n)).toEqual(expect.arrayContaining(acknowledged.get(n)!));
    }
    expect(lines.filter((l) => /over the memory budget/.test(l))).toEqual([]);
    await host.close();
    await space.close();

    const again = await openSqliteSpace(db);
    const reopened = new TenantHost(again, { memoryBudgetBytes: budget });
    for (let n = 1; n <= TENANTS; n++) {
      const names = await groupNames(reopened, n);
      expect(names).toEqual(expect.arrayContaining(acknowledged.get(n)!));
      expect(names.filter((x) => x.startsWith("Round "))).toHaveLength(ROUNDS);
    }
    expect(reopened.stats().evictions).toBeGreaterThan(0);
    await reopened.close();
    await again.close();
  });

  test("a pinned tenant stays loaded; a lone tenant over the budget still loads, with one log line", async () => {
    const { space } = await spaceWith(5);
    const lines: string[] = [];
    const host = new TenantHost(space, { memoryBudgetBytes: 1, pinned: (n) => n === 1, log: (l) => lines.push(l) });
    (await host.acquire(1)).release();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/tenant 1 alone is estimated at \d+ bytes, over the memory budget of 1/);
    for (let n = 2; n <= 5; n++) (await host.acquire(n)).release();
    expect(host.isLoaded(1)).toBe(true);
    for (let n = 2; n <= 5; n++) expect(host.isLoaded(n)).toBe(false);
    expect(host.stats()).toMatchObject({ loaded: 1, loads: 5, evictions: 4 });
    await host.close();
    await space.close();
  });

  test("a lease keeps its tenant loaded; once released it is evicted, and an acquire during the eviction reloads it with its writes", async () => {
    const { space } = await spaceWith(2);
    const host = new TenantHost(space, { memoryBudgetBytes: 1 });
    const held = await host.acquire(1);
    expect((await held.durable.write(group("Held"))).status).toBe(200);
    (await host.acquire(2)).release();
    expect(host.isLoaded(1)).toBe(true);
    expect(host.isLoaded(2)).toBe(false);
    held.release();
    expect(host.isLoaded(1)).toBe(false); // being evicted
    const again = await host.acquire(1); // waits for the eviction, then loads it again
    expect(again.durable).not.toBe(held.durable);
    if (again.durable.target.kind !== "system") throw new Error("a system");
    expect(again.durable.target.live.snapshot.groups.map((g) => g.name)).toContain("Held");
    expect(again.durable.startedFrom).toMatchObject({ how: "loaded", seq: 1, snapshotSeq: 1, replayed: 0 });
    expect(host.stats()).toMatchObject({ loads: 3, evictions: 2 });
    again.release();
    await host.close();
    await space.close();
  });

  test("a write in flight keeps its tenant loaded until it is durable", async () => {
    const { space } = await spaceWith(1);
    const host = new TenantHost(space, { memoryBudgetBytes: 1 });
    const lease = await host.acquire(1);
    const written = lease.durable.write(group("In flight"));
    lease.release();
    expect(host.isLoaded(1)).toBe(true);
    expect((await written).status).toBe(200);
    await new Promise((r) => setImmediate(r));
    expect(host.isLoaded(1)).toBe(false);
    expect(await groupNames(host, 1)).toContain("In flight");
    await host.close();
    await space.close();
  });

  test("a report being generated keeps its tenant loaded until it ends", async () => {
    const { space } = await spaceWith(1);
    const host = new TenantHost(space, { memoryBudgetBytes: 1 });
    const lease = await host.acquire(1);
    const target = lease.durable.target;
    if (target.kind !== "system") throw new Error("a system");
    const admin = { role: "admin" as const, partitions: null };
    const r = await lease.reports.generate(target.live.snapshot, { output: ["id"] }, admin, "UTC");
    expect(r.status).toBe(204);
    expect(lease.reports.generating).toBe(true);
    lease.release();
    expect(host.isLoaded(1)).toBe(true);
    await lease.reports.settled();
    await new Promise((r) => setImmediate(r)); // the host is told after the generation ends
    expect(host.isLoaded(1)).toBe(false);
    await host.close();
    await space.close();
  });

  test("unload evicts a tenant now, leased or pinned; an acquire after it loads it again", async () => {
    const { space } = await spaceWith(1);
    const host = new TenantHost(space, { memoryBudgetBytes: 1 << 30, pinned: () => true });
    const lease = await host.acquire(1);
    expect((await lease.durable.write(group("Before unload"))).status).toBe(200);
    await Promise.all([host.unload(1), host.unload(1)]);
    expect(host.isLoaded(1)).toBe(false);
    expect(host.stats()).toMatchObject({ loaded: 0, evictions: 1 });
    await expect(lease.durable.write(group("After unload"))).rejects.toThrow(/closing/);
    lease.release();
    expect(await groupNames(host, 1)).toContain("Before unload");
    await host.unload(2); // never loaded: nothing to do
    await host.close();
    await space.close();
  });

  test("the cloud-node summary is handed on at load and after each write that changes it, not after other writes", async () => {
    const { space } = await spaceWith(1);
    const summaries: [number, SystemSummary][] = [];
    const host = new TenantHost(space, { memoryBudgetBytes: 1 << 30, onSummary: (n, s) => summaries.push([n, s]) });
    const lease = await host.acquire(1);
    expect(summaries).toEqual([
      [
        1,
        {
          nodes: [
            {
              id: "n-main",
              name: "Main Gateway",
              serialNumber: "SN-0001",
              created: null,
              credentialResetsPerMonth: null,
            },
            { id: "n-annex", name: "Annex", serialNumber: "SN-0002", created: null, credentialResetsPerMonth: null },
          ],
        },
      ],
    ]);
    expect((await lease.durable.write(group("Not a node"))).status).toBe(200);
    expect(summaries).toHaveLength(1);
    const renamed = await lease.durable.write({
      method: "PUT",
      path: "/cloud-nodes/n-annex",
      body: { name: "Annex B" },
    });
    expect(renamed.status).toBe(204);
    expect(summaries).toHaveLength(2);
    expect(summaries[1]![1].nodes.map((n) => n.name)).toEqual(["Main Gateway", "Annex B"]);
    const made = await lease.durable.write({
      method: "POST",
      path: "/cloud-nodes",
      body: { name: "Roof", serialNumber: "SN-0003" },
    });
    expect(made.status).toBe(201);
    expect(summaries).toHaveLength(3);
    expect(summaries[2]![1].nodes.map((n) => [n.name, n.serialNumber])).toEqual([
      ["Main Gateway", "SN-0001"],
      ["Annex B", null], // PUT replaces the node: its serial number went
      ["Roof", "SN-0003"],
    ]);
    // A node's self-help resets per month (I85) are in the summary: the accounts listing shows them.
    const resets = await lease.durable.write({
      method: "PUT",
      path: "/cloud-nodes/n-main",
      body: { name: "Main Gateway", serialNumber: "SN-0001", credentialResetsPerMonth: 3 },
    });
    expect(resets.status).toBe(204);
    expect(summaries).toHaveLength(4);
    expect(summaries[3]![1].nodes.map((n) => n.credentialResetsPerMonth)).toEqual([3, null, null]);
    lease.release();
    await host.close();
    await space.close();
  });
});

describe("memory budget", () => {
  test("jsonChars counts the JSON text's characters without making it", async () => {
    for (const value of [systemOf(1), { a: [1, undefined, "x\n"], b: undefined, c: { d: null } }, [], "s", 1, null]) {
      expect(jsonChars(value)).toBe(JSON.stringify(value).length);
      expect(await jsonCharsInTurns(value)).toBe(JSON.stringify(value).length);
    }
    expect(patchChars([{ op: "add", path: ["groups", "g"], value: { id: "g" } }])).toBe(
      JSON.stringify({ op: "add", path: ["groups", "g"], value: { id: "g" } }).length,
    );
  });

  test("parseBytes takes what --max-report-bytes takes", () => {
    expect(parseBytes("1048576")).toBe(1048576);
    expect(parseBytes("512MiB")).toBe(512 * 1024 ** 2);
    expect(parseBytes(" 2g ")).toBe(2 * 1024 ** 3);
    expect(parseBytes("16 k")).toBe(16 * 1024);
    for (const bad of ["", "0", "-1", "1.5g", "12 parsecs", "1e9"]) expect(parseBytes(bad)).toBeNull();
  });

  test("touchesCloudNodes: patches of the cloudNodes list, or of the whole state", () => {
    expect(touchesCloudNodes([{ op: "replace", path: ["cloudNodes", "n-1"], value: {} }])).toBe(true);
    expect(touchesCloudNodes([{ op: "replace", path: [], value: {} }])).toBe(true);
    expect(touchesCloudNodes([{ op: "add", path: ["groups", "g"], value: {} }])).toBe(false);
  });
});
