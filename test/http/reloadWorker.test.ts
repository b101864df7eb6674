// Reloads in the worker thread (snapshotWorker.ts, built as `npm run build` builds it): the file is
// read, parsed and validated off the event loop, problems cross back whole, the snapshot that crosses
// back compiles to exactly the engine a load on this thread gives, and requests keep being answered
// by the old engine until the swap.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "tsup";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SNAPSHOT_SLICE, type WorkerRead, readSnapshotFileInWorker } from "../../src/adapters/http/loadSnapshotFile.js";
import { startServer } from "../../src/adapters/http/startServer.js";
import { loadEngineOrThrow } from "../../src/index.js";
import {
  AT,
  BUILDING_JSON,
  TOKEN,
  brokenSnapshot,
  engineA,
  engineB,
  logSink,
  removeTempDirs,
  snapshotA,
  snapshotB,
  tempDir,
  writeInPlace,
} from "./fixtures.js";

const ROOT = resolve(__dirname, "../..");
let outDir: string;
let workerFile: string;

beforeAll(async () => {
  // Below node_modules so that the worker's imports of the dependencies resolve.
  outDir = mkdtempSync(join(ROOT, "node_modules", ".rsop-worker-test-"));
  await build({
    entry: { "snapshot-worker": join(ROOT, "src/adapters/http/snapshotWorker.ts") },
    outDir,
    format: ["esm"],
    platform: "node",
    target: "node20",
    config: false,
    silent: true,
  });
  writeFileSync(join(outDir, "package.json"), '{ "type": "module" }\n'); // as the package's own
  workerFile = join(outDir, "snapshot-worker.js");
}, 120_000);

afterAll(() => {
  rmSync(outDir, { recursive: true, force: true });
  removeTempDirs();
});

const auth = { authorization: `Bearer ${TOKEN}` };

describe("reload in a worker thread", () => {
  test("a broken file is refused with every problem; a good one is swapped in and answers as a fresh load does", async () => {
    const file = join(tempDir(), "system.json");
    writeInPlace(file, snapshotA);
    const logs = logSink();
    const server = await startServer({
      systemFile: file,
      token: TOKEN,
      log: logs.log,
      watch: false,
      reloadWorker: workerFile,
    });
    try {
      const ask = async () =>
        (await fetch(`${server.url}/sys-ab/devices/d1/access?at=${AT}`, { headers: auth })).json();
      writeInPlace(file, brokenSnapshot);
      const refused = await server.reload();
      expect(refused).toMatchObject({ status: "refused" });
      expect(refused.status === "refused" && refused.issues.map((i) => i.path.join("."))).toEqual(
        expect.arrayContaining(["timezone", "holders.0.groups.0", "rules.0.stopTime"]),
      );
      expect(logs.lines).toContain(`reload refused: ${file} has 3 problems; still serving the previous snapshot`);
      expect(await ask()).toEqual(engineA.whoCanAccess("d1", { at: AT }));

      writeFileSync(file, "{ not json");
      expect(await server.reload()).toMatchObject({ status: "refused", issues: [{ code: "invalidJson" }] });
      writeInPlace(file, { ...snapshotB, systemId: "another" });
      expect(await server.reload()).toMatchObject({ status: "refused", issues: [{ path: ["systemId"] }] });
      writeInPlace(file, snapshotA);
      expect(await server.reload()).toEqual({ status: "unchanged" });

      writeInPlace(file, snapshotB);
      const done = await server.reload();
      expect(done.status).toBe("reloaded");
      expect(server.engine().snapshot).toStrictEqual(engineB.snapshot);
      expect(await ask()).toEqual(engineB.whoCanAccess("d1", { at: AT }));
    } finally {
      await server.close();
    }
  });

  test("the example building crosses the thread unchanged: the same validated snapshot as a load on this thread", async () => {
    const file = join(tempDir(), "building.json");
    writeInPlace(file, BUILDING_JSON);
    const server = await startServer({
      systemFile: file,
      token: TOKEN,
      log: () => {},
      watch: false,
      reloadWorker: workerFile,
    });
    try {
      const changed = { ...(BUILDING_JSON as Record<string, unknown>), name: "Renamed" };
      writeInPlace(file, changed);
      expect((await server.reload()).status).toBe("reloaded");
      expect(server.engine().snapshot).toStrictEqual(loadEngineOrThrow(changed).snapshot);
    } finally {
      await server.close();
    }
  });

  test("a snapshot whose holders cross in several slices is reassembled in order", async () => {
    const file = join(tempDir(), "system.json");
    writeInPlace(file, snapshotA);
    const server = await startServer({
      systemFile: file,
      token: TOKEN,
      log: () => {},
      watch: false,
      reloadWorker: workerFile,
    });
    try {
      const holders = Array.from({ length: 12_001 }, (_, i) => ({
        id: `h${String(i).padStart(5, "0")}`,
        firstName: "Ada",
        lastName: `Number ${i}`,
        groups: ["g1"],
        credentials: [{ id: `k${i}`, types: ["card"], credentialNumber: 1000 + i, facilityCode: 17 }],
      }));
      const large = { ...snapshotB, holders };
      writeInPlace(file, large);
      expect((await server.reload()).status).toBe("reloaded");
      expect(server.engine().snapshot).toStrictEqual(loadEngineOrThrow(large).snapshot);

      // The worker leaves out the slices the server already has: one changed holder, one slice sent.
      const first = await readSnapshotFileInWorker(file, workerFile);
      if (!first.ok) throw new Error("refused");
      const holderSlices = (r: WorkerRead) => (r.ok ? r.slices.arrays.find(([k]) => k === "holders")![1] : []);
      expect(holderSlices(first).every((p) => typeof p === "string")).toBe(true);
      expect(holderSlices(first)).toHaveLength(Math.ceil(holders.length / SNAPSHOT_SLICE));
      const edited = { ...large, holders: holders.map((h, i) => (i === 7_000 ? { ...h, firstName: "Grace" } : h)) };
      writeInPlace(file, edited);
      const second = await readSnapshotFileInWorker(file, workerFile, undefined, first.slices.hashes);
      const sent = holderSlices(second).flatMap((p, k) => (p === null ? [] : [k]));
      expect(sent).toEqual([Math.floor(7_000 / SNAPSHOT_SLICE)]);
      const before = server.engine();
      expect((await server.reload()).status).toBe("reloaded");
      expect(server.engine()).toBe(before);
      expect(server.engine().snapshot).toStrictEqual(loadEngineOrThrow(edited).snapshot);
      expect(server.engine().snapshot.holders[0]).toBe(before.snapshot.holders[0]); // kept, not parsed again
    } finally {
      await server.close();
    }
  });

  test("requests during a reload are answered (by the old engine) until the swap", async () => {
    const file = join(tempDir(), "system.json");
    writeInPlace(file, snapshotA);
    const server = await startServer({
      systemFile: file,
      token: TOKEN,
      log: () => {},
      watch: false,
      reloadWorker: workerFile,
    });
    try {
      const a = JSON.stringify(engineA.whoCanAccess("d1", { at: AT }));
      const b = JSON.stringify(engineB.whoCanAccess("d1", { at: AT }));
      writeInPlace(file, snapshotB);
      let swapped = false;
      const reload = server.reload().then((r) => {
        swapped = true;
        return r;
      });
      // The swap and the resolution of reload() happen in one turn of the event loop, so an answer
      // received before `swapped` was set was computed before the swap.
      const before: string[] = [];
      while (!swapped) {
        const text = JSON.stringify(
          await (await fetch(`${server.url}/sys-ab/devices/d1/access?at=${AT}`, { headers: auth })).json(),
        );
        if (!swapped) before.push(text);
      }
      expect((await reload).status).toBe("reloaded");
      expect(before.length).toBeGreaterThan(0);
      expect(new Set(before)).toEqual(new Set([a]));
      expect(
        JSON.stringify(
          await (await fetch(`${server.url}/sys-ab/devices/d1/access?at=${AT}`, { headers: auth })).json(),
        ),
      ).toBe(b);
    } finally {
      await server.close();
    }
  });

  test("close() during a reload stops the worker; the reload reports nothing swapped", async () => {
    const file = join(tempDir(), "system.json");
    writeInPlace(file, snapshotA);
    const server = await startServer({
      systemFile: file,
      token: TOKEN,
      log: () => {},
      watch: false,
      reloadWorker: workerFile,
    });
    writeInPlace(file, snapshotB);
    const reload = server.reload();
    await server.close();
    expect(await reload).toEqual({ status: "unchanged" });
    expect(server.engine().snapshot).toStrictEqual(engineA.snapshot);
  });
});

describe("reload through the changed slices only", () => {
  type Building = {
    holders: {
      id: string;
      enabled?: boolean;
      credentials?: { credentialNumber?: number | null; facilityCode?: number | null }[];
    }[];
    timezone?: string;
  };

  /** Every card of the building at every door, at two instants: a fresh engine's answers and the server's. */
  function sameAnswers(served: ReturnType<typeof loadEngineOrThrow>, json: unknown): number {
    const fresh = loadEngineOrThrow(json);
    expect(served.snapshot).toStrictEqual(fresh.snapshot);
    let n = 0;
    for (const h of fresh.snapshot.holders.slice(0, 60))
      for (const c of h.credentials)
        if (c.credentialNumber !== null)
          for (const d of fresh.snapshot.devices.slice(0, 8))
            for (const at of [AT, "2026-04-18T03:30:00Z"]) {
              const req = {
                deviceId: d.id,
                at,
                credential: { credentialNumber: c.credentialNumber, facilityCode: c.facilityCode },
              };
              expect({ ...served.decide(req) }).toStrictEqual({ ...fresh.decide(req) });
              n++;
            }
    const ids = fresh.snapshot.holders.slice(0, 5).map((h) => h.id);
    expect(served.rsop(ids, { at: AT })).toStrictEqual(fresh.rsop(ids, { at: AT }));
    return n;
  }

  test("a holder change updates the served engine in place and answers as a fresh load; a zone change compiles anew", async () => {
    const file = join(tempDir(), "building.json");
    writeInPlace(file, BUILDING_JSON);
    const server = await startServer({
      systemFile: file,
      token: TOKEN,
      log: () => {},
      watch: false,
      reloadWorker: workerFile,
    });
    try {
      const before = server.engine();
      const changed = structuredClone(BUILDING_JSON) as Building;
      changed.holders[3]!.enabled = false;
      changed.holders.push({ ...structuredClone(changed.holders[0]!), id: "holder-new", credentials: [] });
      writeInPlace(file, changed);
      const done = await server.reload();
      expect(done.status).toBe("reloaded");
      expect(server.engine()).toBe(before); // the incremental path: the same engine, moved
      expect(sameAnswers(server.engine(), changed)).toBeGreaterThan(100);

      const rezoned = { ...structuredClone(changed), timezone: "Europe/Berlin" };
      writeInPlace(file, rezoned);
      expect((await server.reload()).status).toBe("reloaded");
      expect(server.engine()).not.toBe(before); // outside the arrays: a full compile
      sameAnswers(server.engine(), rezoned);

      // And incremental again from there.
      const again = structuredClone(rezoned) as Building;
      again.holders[3]!.enabled = true;
      const current = server.engine();
      writeInPlace(file, again);
      expect((await server.reload()).status).toBe("reloaded");
      expect(server.engine()).toBe(current);
      sameAnswers(server.engine(), again);
    } finally {
      await server.close();
    }
  });
});
