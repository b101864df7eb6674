// Helpers of the hostile-load tests: run one hostile request against a real server on 127.0.0.1 while
// an honest client keeps reading one holder, and report what the honest client saw (latency of each
// read) and how far the process's memory grew. The server runs in this process, so an event loop the
// hostile request blocks delays the honest reads' timers and answers alike: the latencies show it.
import type { Caller } from "./dataSupport.js";

/** What the honest client saw while the hostile request ran. */
export interface HostileRun<T> {
  /** What `hostile` answered. */
  readonly result: T;
  /** How many honest reads completed while it ran (at least one is always made, after it too). */
  readonly samples: number;
  /** The 99th-percentile latency of the honest reads, in ms. */
  readonly p99: number;
  /** The slowest honest read, in ms. */
  readonly max: number;
  /** Every honest read answered 200. */
  readonly allOk: boolean;
  /** Growth of this process's RSS, peak minus start, in MiB (sampled at every honest read). */
  readonly rssGrowthMiB: number;
}

/** The q-quantile (0..1) of `values`, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * Runs `hostile()` and, until it settles, reads `probePath` with `call` one request after another
 * (`gapMs` apart), timing each; one more read follows once it has settled.
 */
export async function whileHostile<T>(
  call: Caller,
  probePath: string,
  hostile: () => Promise<T>,
  gapMs = 5,
): Promise<HostileRun<T>> {
  const latencies: number[] = [];
  let allOk = true;
  const rss0 = process.memoryUsage().rss;
  let rssPeak = rss0;
  let done = false;
  const probeOnce = async () => {
    const t0 = performance.now();
    const r = await call("GET", probePath);
    latencies.push(performance.now() - t0);
    if (r.status !== 200) allOk = false;
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  };
  const probing = (async () => {
    while (!done) {
      await probeOnce();
      await new Promise((r) => setTimeout(r, gapMs));
    }
  })();
  let result: T;
  try {
    result = await hostile();
  } finally {
    done = true;
    await probing;
  }
  await probeOnce();
  return {
    result,
    samples: latencies.length,
    p99: quantile(latencies, 0.99),
    max: Math.max(...latencies),
    allOk,
    rssGrowthMiB: (rssPeak - rss0) / 1024 / 1024,
  };
}

/**
 * The example building (examples/building.json) with `extra` generated holders added: each in the
 * main-campus partition, a member of the first one or two of its groups, with one 26-bit card
 * (facility code 99, numbers from 100,000 up, so none collides with the building's own cards).
 */
export function buildingWithHolders(building: unknown, extra: number): unknown {
  const b = structuredClone(building) as { holders: unknown[]; groups: { id: string; partition?: string | null }[] };
  const groups = b.groups
    .filter((g) => g.partition === "part-main-campus" || g.partition === undefined || g.partition === null)
    .map((g) => g.id);
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
