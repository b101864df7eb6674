// Scenario: the heap a loaded tenant holds, to calibrate the tenant host's estimate (memoryBudget.ts:
// TENANT_BASE_BYTES + TENANT_BYTES_PER_CHAR × JSON characters). Needs `node --expose-gc`.
//
// For each size (the example building plus 0 to 30,000 generated holders), a SQLite space holds N
// tenants of that building; a TenantHost with an unbounded budget loads all of them and keeps them
// leased. The settled heap (full GCs until two readings agree) before and after, divided by N, is the
// heap of one loaded tenant: its validated snapshot, the live system's write indexes, its engine, its
// report service and the host's bookkeeping. A least-squares line through (JSON characters, bytes) of
// the sizes gives A (intercept) and B (slope).
//
// Standalone (it is not one of bench/main.ts's scenarios):
//   npx esbuild bench/tenantMemory.ts --bundle --platform=node --format=esm --packages=external \
//     --outfile=node_modules/.cache/tenantMemory.mjs && node --expose-gc node_modules/.cache/tenantMemory.mjs
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteSpace } from "../src/adapters/store/sqliteStore.js";
import type { StoreSpace } from "../src/service/store/store.js";
import { type Lease, TenantHost } from "../src/service/tenants/tenantHost.js";
import { jsonChars } from "../src/service/tenants/memoryBudget.js";
import { type Row, fmtBytes, log } from "./benchUtil.js";
import type { ScenarioContext } from "./scenario.js";

type Gc = (options?: { type?: "major" | "minor" }) => void;

/** Extra holders, and how many tenants of that size are loaded at once. */
const SIZES: readonly { readonly extra: number; readonly tenants: number }[] = [
  { extra: 0, tenants: 40 },
  { extra: 2_000, tenants: 16 },
  { extra: 10_000, tenants: 6 },
  { extra: 30_000, tenants: 3 },
];

function settledHeap(gc: Gc): number {
  let last = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 6; round++) {
    for (let i = 0; i < 8; i++) gc();
    const used = process.memoryUsage().heapUsed;
    if (Math.abs(used - last) < 1 << 18) return used;
    last = used;
  }
  return last;
}

/** The example building with `extra` generated holders (as test/http/hostileSupport.ts makes them). */
function buildingWith(building: unknown, extra: number, systemId: string): unknown {
  const b = structuredClone(building) as {
    systemId: string;
    holders: unknown[];
    groups: { id: string; partition?: string | null }[];
  };
  b.systemId = systemId;
  const groups = b.groups.filter((g) => g.partition === "part-main-campus" || g.partition == null).map((g) => g.id);
  for (let i = 0; i < extra; i++)
    b.holders.push({
      id: `gen-${i}`,
      firstName: `First${i % 997}`,
      lastName: `Last${i}`,
      partition: "part-main-campus",
      enabled: true,
      groups: groups.length === 0 ? [] : i % 3 === 0 ? groups.slice(0, 2) : groups.slice(0, 1),
      credentials: [{ id: `gen-c-${i}`, types: ["card"], credentialNumber: 100_000 + i, facilityCode: 99 }],
    });
  return b;
}

interface Measured {
  readonly written: boolean;
  readonly extra: number;
  readonly tenants: number;
  readonly chars: number;
  readonly bytesPerTenant: number;
}

/** Until each tenant's latest stored snapshot is of change 1 (stored in the background after its write). */
async function snapshotsStored(space: StoreSpace, tenants: number): Promise<void> {
  for (let n = 1; n <= tenants; n++)
    while ((await space.tenant(n).load())?.snapshotSeq !== 1) await new Promise((r) => setTimeout(r, 20));
}

/**
 * The heap per tenant of `tenants` tenants of one size, loaded; `written`: after one write each and the
 * snapshot it is followed by (snapshotEvery 1), the state of a tenant in use (its store view then also
 * keeps the snapshot's JSON text, to serialize only what changed next time).
 */
async function measure(gc: Gc, example: unknown, extra: number, tenants: number, written: boolean): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), "rsop-tenant-memory-"));
  try {
    const space = await openSqliteSpace(join(dir, "data.db"));
    let chars = 0;
    for (let n = 1; n <= tenants; n++) {
      const snapshot = buildingWith(example, extra, `sys-${n}`);
      if (n === 1) chars = jsonChars(snapshot);
      await space.tenant(n).init("system", snapshot, new Date().toISOString());
    }
    const host = new TenantHost(space, { memoryBudgetBytes: Number.MAX_SAFE_INTEGER, snapshotEvery: 1 });
    const write = async (l: Lease) => {
      if (written) await l.durable.write({ method: "POST", path: "/groups", body: { name: "Written" } });
    };
    // Tenant 1 first: the code and one-time tables it brings are not counted per tenant.
    const first = await host.acquire(1);
    await write(first);
    await snapshotsStored(space, written ? 1 : 0);
    const before = settledHeap(gc);
    const leases: Lease[] = [first];
    for (let n = 2; n <= tenants; n++) leases.push(await host.acquire(n));
    for (const l of leases.slice(1)) await write(l);
    await snapshotsStored(space, written ? tenants : 0);
    const after = settledHeap(gc);
    const loadedChars = jsonChars(first.durable.target.live.snapshot);
    for (const l of leases) l.release();
    await host.close();
    await space.close();
    return { written, extra, tenants, chars: loadedChars || chars, bytesPerTenant: (after - before) / (tenants - 1) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Least squares: bytes = a + b × chars. */
function leastSquares(points: readonly Measured[]): { a: number; b: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.chars, 0) / n;
  const my = points.reduce((s, p) => s + p.bytesPerTenant, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.chars - mx) * (p.bytesPerTenant - my);
    sxx += (p.chars - mx) ** 2;
  }
  const b = sxy / sxx;
  return { a: my - b * mx, b };
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (typeof gc !== "function")
    return [
      { section: "tenant memory", size: "-", name: "heap per tenant", note: "skipped: run node with --expose-gc" },
    ];
  const example = JSON.parse(readFileSync("examples/building.json", "utf8")) as unknown;
  const rows: Row[] = [];
  for (const written of [false, true]) {
    const state = written ? "written, snapshot stored" : "loaded";
    const points: Measured[] = [];
    for (const { extra, tenants } of SIZES) {
      const m = await measure(gc, example, extra, tenants, written);
      log(
        `  tenant memory (${state}) +${extra} holders: ${m.chars} JSON chars, ${fmtBytes(m.bytesPerTenant)} per tenant (${(m.bytesPerTenant / m.chars).toFixed(2)} B/char) over ${tenants - 1} tenants`,
      );
      points.push(m);
      rows.push({
        section: "tenant memory",
        size: `+${extra} holders`,
        name: `heap per tenant, ${state}`,
        value: fmtBytes(m.bytesPerTenant),
        note: `${m.chars.toLocaleString("en-US")} JSON chars, ${(m.bytesPerTenant / m.chars).toFixed(2)} B/char, ${tenants - 1} tenants measured`,
      });
    }
    const { a, b } = leastSquares(points);
    ctx.facts[`tenantMemory.${written ? "written" : "loaded"}.baseBytes`] = a;
    ctx.facts[`tenantMemory.${written ? "written" : "loaded"}.bytesPerChar`] = b;
    rows.push({
      section: "tenant memory",
      size: "-",
      name: `fit A + B × chars, ${state}`,
      value: `A = ${fmtBytes(a)}, B = ${b.toFixed(2)} B/char`,
      note: "least squares over the sizes above",
    });
  }
  return rows;
}

// Run directly (not through bench/main.ts): print the rows.
if (process.argv[1]?.endsWith("tenantMemory.mjs")) {
  const rows = await run({ quick: false, sizes: [], facts: {} });
  for (const r of rows) console.log(`${r.size}\t${r.name}\t${r.value ?? ""}\t${r.note ?? ""}`);
}
