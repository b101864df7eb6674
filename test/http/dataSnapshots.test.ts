// Snapshots of `rsop serve --data` off the write path (semantics H23): a snapshot's JSON is written in
// slices, each in a transaction of its own, while writes go on; the snapshot counts once its row is
// written. And start-up replays the log in batches of changes. Real SQLite files throughout.
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, describe, expect, test } from "vitest";
import { openDurableSystem } from "../../src/service/store/durableSystem.js";
import { jsonSlices } from "../../src/adapters/store/jsonSlices.js";
import { openSqliteStore } from "../../src/adapters/store/sqliteStore.js";
import type { Store } from "../../src/service/store/store.js";
import { loadEngineOrThrow } from "../../src/evaluate/index.js";
import { type Operation, createLiveSystem } from "../../src/live/index.js";
import { building } from "../live/fixture.js";
import { dataDir, inspect } from "./dataSupport.js";
import { removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

const AT = "2026-04-15T12:00:00Z";
const plain = (x: unknown) => JSON.parse(JSON.stringify(x));

describe("jsonSlices", () => {
  test("the slices joined are JSON.stringify's text, for any JSON value and slice size", () => {
    const big = fc.dictionary(
      fc.string({ maxLength: 4 }),
      fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 700 }), fc.jsonValue({ maxDepth: 2 })),
    );
    fc.assert(
      fc.property(fc.oneof(big, fc.jsonValue()), fc.integer({ min: 1, max: 5000 }), (value, size) => {
        const slices = [...jsonSlices(value, size)];
        expect(slices.join("")).toBe(JSON.stringify(value));
      }),
      { numRuns: 300 },
    );
  });

  test("undefined, function and symbol members are left out as JSON.stringify leaves them; a long list is cut between elements", () => {
    const value = {
      a: undefined,
      f: () => 1,
      s: Symbol("x"),
      list: Array.from({ length: 1000 }, (_, i) => ({ i, u: undefined })),
      n: null,
    };
    const slices = [...jsonSlices(value, 2000)];
    expect(slices.length).toBeGreaterThan(3);
    expect(slices.join("")).toBe(JSON.stringify(value));
  });
});

/** A mixed run of writes on the fixture: creates, updates, memberships and swap-removing deletes. */
function writes(n: number): Operation[] {
  const ops: Operation[] = [];
  for (let k = 0; k < n; k++) {
    ops.push({
      method: "POST",
      path: "/holders",
      body: {
        firstName: `R${k}`,
        lastName: "Replay",
        groups: [k % 2 === 0 ? "g-staff" : "g-night"],
        credentials: [{ types: ["card"], credentialNumber: 90_000 + k, facilityCode: 10 }],
      },
    });
    if (k % 5 === 4) ops.push({ method: "POST", path: "/groups", body: { name: `Replay group ${k}` } });
  }
  return ops;
}

describe("the durable system's snapshots and replay", () => {
  test("a snapshot written in many parts loads back whole; parts of an unfinished snapshot are ignored and removed", async () => {
    const { db } = dataDir();
    const store = await openSqliteStore(db, { snapshotPartChars: 1024 });
    const durable = await openDurableSystem(store, {
      initial: { kind: "system", json: building() },
      snapshotEvery: 1_000_000,
    });
    for (const op of writes(300)) expect((await durable.write(op)).ok).toBe(true);
    const before = plain(durable.target.live.snapshot);
    await durable.close(); // stores the snapshot at the last change
    const d = new Database(db);
    const parts = (d.prepare("SELECT count(*) AS n FROM snapshot_parts").get() as { n: number }).n;
    expect(parts, "the snapshot took several parts").toBeGreaterThan(5);
    // A crash in the middle of a later snapshot: parts written, no row.
    d.prepare("INSERT INTO snapshot_parts (seq, part, text) VALUES (999, 1, 'garbage')").run();
    d.close();
    const again = await openDurableSystem(await openSqliteStore(db));
    expect(again.startedFrom).toMatchObject({ how: "loaded", replayed: 0 });
    expect(plain(again.target.live.snapshot)).toEqual(before);
    await again.close();
    const after = new Database(db, { readonly: true });
    expect(after.prepare("SELECT count(*) AS n FROM snapshot_parts WHERE seq = 999").get()).toEqual({ n: 0 });
    after.close();
    expect(inspect(db).integrity).toBe("ok");
  });

  test("writes go on while a snapshot is being written; every stored snapshot is exactly the state after its change, also with writes queued while it starts and appends that take a turn", async () => {
    const { db } = dataDir();
    const real = await openSqliteStore(db, { snapshotPartChars: 1024, keepSnapshots: 1000 });
    // The real store, watched: how many appends happen while a snapshot is being written.
    let writing = 0;
    let appendsDuringSnapshot = 0;
    const store: Store = {
      ...real,
      load: () => real.load(),
      init: (...a) => real.init(...a),
      close: () => real.close(),
      // An append that takes a turn of the event loop, as one over the network (PostgreSQL) does:
      // a snapshot may then start while a write is applied but not yet stored.
      appendAt: async (...a) => {
        if (writing > 0) appendsDuringSnapshot++;
        await new Promise((resolveTurn) => setImmediate(resolveTurn));
        return real.appendAt(...a);
      },
      snapshot: async (...a) => {
        writing++;
        try {
          await real.snapshot(...a);
        } finally {
          writing--;
        }
      },
    };
    const failures: unknown[] = [];
    const durable = await openDurableSystem(store, {
      initial: { kind: "system", json: building() },
      snapshotEvery: 7,
      onSnapshotError: (e) => failures.push(e),
    });
    const ops = writes(150);
    // Writes in bursts (queued behind each other, as 16 clients send them), the event loop turning between.
    for (let i = 0; i < ops.length; i += 5) {
      const results = await Promise.all(ops.slice(i, i + 5).map((op) => durable.write(op)));
      expect(results.every((r) => r.ok)).toBe(true);
      await new Promise((resolveTurn) => setImmediate(resolveTurn));
    }
    expect(failures).toEqual([]);
    expect(appendsDuringSnapshot, "writes were stored while a snapshot was still being written").toBeGreaterThan(0);
    const seq = durable.seq();
    const final = plain(durable.target.live.snapshot);
    await real.close(); // as a crash: no closing snapshot
    // Each snapshot row equals the imported snapshot with the log's changes up to its number replayed.
    const d = new Database(db, { readonly: true });
    const rows = d.prepare("SELECT seq, snapshot FROM snapshots ORDER BY seq").all() as {
      seq: number;
      snapshot: string;
    }[];
    const changes = d.prepare("SELECT seq, patches FROM changes ORDER BY seq").all() as {
      seq: number;
      patches: string;
    }[];
    const textOf = (row: { seq: number; snapshot: string }) =>
      row.snapshot +
      (d.prepare("SELECT text FROM snapshot_parts WHERE seq = ? ORDER BY part").all(row.seq) as { text: string }[])
        .map((p) => p.text)
        .join("");
    expect(rows.length).toBeGreaterThan(5);
    const replayed = createLiveSystem(JSON.parse(textOf(rows[0]!)));
    if (!replayed.ok) throw new Error("the imported snapshot does not load");
    let applied = 0;
    for (const row of rows.slice(1)) {
      for (; applied < row.seq; applied++)
        expect(replayed.value.applyPatches(JSON.parse(changes[applied]!.patches)).ok).toBe(true);
      expect(JSON.parse(textOf(row)), `the snapshot of change ${row.seq} is the state after change ${row.seq}`).toEqual(
        plain(replayed.value.snapshot),
      );
    }
    d.close();
    const again = await openDurableSystem(await openSqliteStore(db));
    expect(again.startedFrom).toMatchObject({ how: "loaded", seq, snapshotSeq: rows.at(-1)!.seq });
    expect(plain(again.target.live.snapshot)).toEqual(final);
    await again.close();
  });

  test("a snapshot that starts while a write is applied but not yet stored holds the state of the last stored change, not the write's", async () => {
    const { db } = dataDir();
    const real = await openSqliteStore(db);
    const gate = () => {
      let open!: () => void;
      const shut = new Promise<void>((r) => (open = r));
      return { shut, open };
    };
    const snapshotGate = gate();
    const appendGate = gate();
    let holdAppends = false;
    const taken: { at: number; holders: string[] }[] = [];
    let snapshots = 0;
    const store: Store = {
      ...real,
      load: () => real.load(),
      init: (...a) => real.init(...a),
      close: () => real.close(),
      appendAt: async (...a) => {
        if (holdAppends) await appendGate.shut;
        return real.appendAt(...a);
      },
      snapshot: async (at, snap, time) => {
        taken.push({ at, holders: (snap as { holders: { lastName: string }[] }).holders.map((h) => h.lastName) });
        if (snapshots++ === 0) await snapshotGate.shut;
        return real.snapshot(at, snap, time);
      },
    };
    const durable = await openDurableSystem(store, { initial: { kind: "system", json: building() }, snapshotEvery: 1 });
    // Change 1 is stored; its snapshot starts and is held.
    await durable.write({ method: "POST", path: "/holders", body: { firstName: "A", lastName: "First" } });
    expect(taken.map((t) => t.at)).toEqual([1]);
    // Change 2 is stored (its snapshot waits: one is being stored); change 3 is applied, its append held.
    await durable.write({ method: "POST", path: "/holders", body: { firstName: "B", lastName: "Second" } });
    holdAppends = true;
    const third = durable.write({ method: "POST", path: "/holders", body: { firstName: "C", lastName: "Third" } });
    await new Promise((r) => setImmediate(r));
    // The first snapshot finishes: the next one starts now, while change 3 is applied but not stored.
    snapshotGate.open();
    // The store syncs each part of a snapshot off the event loop: a snapshot takes some milliseconds.
    const until = async (n: number) => {
      for (let i = 0; i < 1000 && taken.length < n; i++) await new Promise((r) => setTimeout(r, 5));
    };
    await until(2);
    appendGate.open();
    await third;
    await until(3);
    expect(taken.map((t) => t.at)).toEqual([1, 2, 3]);
    for (const t of taken) {
      expect(t.holders.includes("Second"), `the snapshot of change ${t.at}`).toBe(t.at >= 2);
      expect(t.holders.includes("Third"), `the snapshot of change ${t.at}`).toBe(t.at >= 3);
    }
    await durable.close();
  });

  test("start-up replays hundreds of changes in batches: the state, decisions and RSOP equal those before, and a fresh load's", async () => {
    const { db } = dataDir();
    const store = await openSqliteStore(db);
    const durable = await openDurableSystem(store, {
      initial: { kind: "system", json: building() },
      snapshotEvery: 1_000_000,
    });
    const made: string[] = [];
    for (const op of writes(200)) {
      const r = await durable.write(op);
      if (r.ok && "id" in r && op.path === "/holders") made.push(String(r.id));
    }
    // Updates and swap-removing deletes between the creates' batches.
    expect(made).toHaveLength(200);
    for (let k = 0; k < made.length; k += 7) {
      const r = await durable.write({ method: "DELETE", path: `/holders/${made[k]}` });
      expect(r.status, JSON.stringify(r).slice(0, 400)).toBe(204);
    }
    for (let k = 1; k < made.length; k += 9)
      if (k % 7 !== 0)
        expect(
          (
            await durable.write({
              method: "PUT",
              path: `/holders/${made[k]}/groups`,
              body: { groups: ["g-night", "g-empty"] },
            })
          ).status,
        ).toBe(204);
    const seq = durable.seq();
    expect(seq).toBeGreaterThan(250);
    const live = durable.target.kind === "system" ? durable.target.live : undefined;
    const before = plain(live!.snapshot);
    const ids = made.filter((_, k) => k % 7 !== 0).slice(0, 30);
    const rsopBefore = live!.engine.rsop(ids, { at: AT });
    await store.close(); // no closing snapshot: every change is replayed
    const again = await openDurableSystem(await openSqliteStore(db));
    expect(again.startedFrom).toEqual({ how: "loaded", seq, snapshotSeq: 0, replayed: seq });
    const replayed = again.target.kind === "system" ? again.target.live : undefined;
    expect(plain(replayed!.snapshot)).toEqual(before);
    expect(replayed!.engine.rsop(ids, { at: AT })).toEqual(rsopBefore);
    const fresh = loadEngineOrThrow(before);
    const scans = made.map((_, k) => ({
      deviceId: k % 2 === 0 ? "d-front" : "d-lift",
      at: AT,
      credential: { credentialNumber: 90_000 + k, facilityCode: 10 },
    }));
    expect(scans.map((s) => replayed!.engine.decide(s))).toEqual(scans.map((s) => fresh.decide(s)));
    expect(scans.some((s) => fresh.decide(s).outcome === "allowed")).toBe(true);
    await again.close();
  });
});
