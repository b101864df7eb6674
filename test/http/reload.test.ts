// Hot reload under load: 1,000 requests over real HTTP while the snapshot file is replaced twice,
// first with a broken snapshot (refused, old engine keeps serving), then with snapshot B. No request
// may fail, and every answer must be exactly snapshot A's or exactly snapshot B's.
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { startServer } from "../../src/adapters/http/startServer.js";
import {
  AT,
  TOKEN,
  brokenSnapshot,
  engineA,
  engineB,
  replaceByRename,
  snapshotA,
  snapshotB,
  removeTempDirs,
  tempDir,
  waitFor,
  writeInPlace,
} from "./fixtures.js";

afterAll(removeTempDirs);

const TOTAL = 1000;
const CONCURRENCY = 100;
const SLOW = 5;
const auth = { authorization: `Bearer ${TOKEN}` };
const pretty = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

const scan = (credentialNumber: number) => ({
  deviceId: "d1",
  at: AT,
  credential: { credentialNumber, facilityCode: 17 },
});
const batch = [scan(100), scan(200)];

/** The three kinds of request, each with the exact text snapshots A and B answer. */
const KINDS = [
  {
    path: `/sys-ab/rsop/holders?ids=h1,h2&at=${AT}`,
    a: pretty(engineA.rsop(["h1", "h2"], { at: AT })),
    b: pretty(engineB.rsop(["h1", "h2"], { at: AT })),
  },
  {
    path: `/sys-ab/devices/d1/access?at=${AT}`,
    a: pretty(engineA.whoCanAccess("d1", { at: AT })),
    b: pretty(engineB.whoCanAccess("d1", { at: AT })),
  },
  {
    path: "/sys-ab/decisions",
    body: JSON.stringify(batch),
    a: pretty(batch.map((r) => engineA.decide(r))),
    b: pretty(batch.map((r) => engineB.decide(r))),
  },
] as const;

interface Outcome {
  started: number;
  ended: number;
  snapshot: "A" | "B" | "failed";
  detail?: string;
}

function classify(kind: (typeof KINDS)[number], status: number, text: string): Pick<Outcome, "snapshot" | "detail"> {
  if (status === 200 && text === kind.a) return { snapshot: "A" };
  if (status === 200 && text === kind.b) return { snapshot: "B" };
  return { snapshot: "failed", detail: `${status} ${text.slice(0, 200)}` };
}

/** A decisions POST whose body is sent in two parts; the second once `release` resolves. */
function slowPost(url: string, release: Promise<void>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/sys-ab/decisions`,
      { method: "POST", headers: { ...auth, "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    const body = KINDS[2].body;
    req.write(body.slice(0, 10));
    release.then(() => req.end(body.slice(10)), reject);
  });
}

test("1,000 requests in flight while the file is replaced twice (once broken): 0 failures, one snapshot per answer", async () => {
  // The two snapshots really answer differently on every route.
  for (const k of KINDS) expect(k.a).not.toBe(k.b);

  const dir = tempDir();
  const file = join(dir, "system.json");
  writeInPlace(file, snapshotA);

  let inFlight = 0;
  let refusedAt = Infinity;
  let swappedAt = Infinity;
  let inFlightAtRefusal = -1;
  let inFlightAtSwap = -1;
  const lines: string[] = [];
  const log = (line: string) => {
    lines.push(line);
    // Called synchronously by the server right after it refused / swapped: the exact moment.
    if (line.startsWith("reload refused") && refusedAt === Infinity) {
      refusedAt = performance.now();
      inFlightAtRefusal = inFlight;
    }
    if (line.startsWith("reloaded")) {
      swappedAt = performance.now();
      inFlightAtSwap = inFlight;
    }
  };
  const server = await startServer({ systemFile: file, token: TOKEN, log, debounceMs: 20 });
  try {
    // Slow requests: begun on snapshot A, their bodies completed only after B is in.
    let releaseSlow!: () => void;
    const slowGate = new Promise<void>((r) => (releaseSlow = r));
    inFlight += SLOW;
    const slow = Array.from({ length: SLOW }, () => {
      const started = performance.now();
      return slowPost(server.url, slowGate).then(({ status, text }): Outcome => {
        inFlight--;
        return { started, ended: performance.now(), ...classify(KINDS[2], status, text) };
      });
    });

    let swapObserved!: () => void;
    const swapGate = new Promise<void>((r) => (swapObserved = r));
    let next = 0;
    let brokenWritten = false;
    const outcomes: Outcome[] = [];

    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= TOTAL) return;
        if (i === 150 && !brokenWritten) {
          brokenWritten = true;
          writeInPlace(file, brokenSnapshot); // a plain in-place rewrite: truncate, then write
        }
        if (i >= TOTAL - 150) await swapGate; // keep the last requests for after the swap
        const kind = KINDS[i % KINDS.length]!;
        const started = performance.now();
        inFlight++;
        try {
          const res = await fetch(
            `${server.url}${kind.path}`,
            "body" in kind
              ? { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: kind.body }
              : { headers: auth },
          );
          const text = await res.text();
          outcomes.push({ started, ended: performance.now(), ...classify(kind, res.status, text) });
        } catch (e) {
          outcomes.push({ started, ended: performance.now(), snapshot: "failed", detail: String(e) });
        } finally {
          inFlight--;
        }
      }
    };

    const controller = (async () => {
      await waitFor(() => refusedAt !== Infinity, 10_000, "the broken snapshot to be refused");
      replaceByRename(file, snapshotB); // the way editors and deploy tools replace a file
      await waitFor(() => swappedAt !== Infinity, 10_000, "snapshot B to be swapped in");
      swapObserved();
      releaseSlow();
    })();

    await Promise.all([...Array.from({ length: CONCURRENCY }, worker), controller]);
    const slowOutcomes = await Promise.all(slow);

    // 0 failures, every request answered.
    expect(outcomes).toHaveLength(TOTAL);
    expect([...outcomes, ...slowOutcomes].filter((o) => o.snapshot === "failed")).toEqual([]);
    // Both snapshots answered, and the broken one was refused while requests were in flight.
    const count = (s: "A" | "B") => outcomes.filter((o) => o.snapshot === s).length;
    expect(count("A")).toBeGreaterThan(0);
    expect(count("B")).toBeGreaterThan(0);
    expect(inFlightAtRefusal).toBeGreaterThan(0);
    expect(inFlightAtSwap).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith("reloaded"))).toHaveLength(1);
    expect(refusedAt).toBeLessThan(swappedAt);
    // Consistent with the order of events: finished before the swap → A; begun after it → B.
    for (const o of outcomes) {
      if (o.ended < swappedAt) expect(o.snapshot).toBe("A");
      if (o.started > swappedAt) expect(o.snapshot).toBe("B");
    }
    // A request keeps the snapshot it started with, even when it ends after the swap.
    for (const o of slowOutcomes) {
      expect(o.started).toBeLessThan(swappedAt);
      expect(o.ended).toBeGreaterThan(swappedAt);
      expect(o.snapshot).toBe("A");
    }
    // One log line per request.
    expect(lines.filter((l) => /^(GET|POST) \/sys-ab\/\S+ 200 \d+\.\dms$/.test(l))).toHaveLength(TOTAL + SLOW);
    expect(server.engine().snapshot.groups[0]!.name).toBe("Night staff");
  } finally {
    await server.close();
  }
}, 30_000);
