// The change log's format (changeLogFormat.ts): a new database records format 2; one of format 1 (no
// format recorded, patches addressed by list position) is upgraded when it is opened, in one
// transaction, to a snapshot of its last change; one that does not upgrade, or of a newer format, is
// refused with a message naming both formats and what to do, and left as it was. Both drivers, on a
// real SQLite file and a real PostgreSQL server.
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { openPostgresStore } from "../../src/adapters/store/postgresStore.js";
import { openSqliteStore } from "../../src/adapters/store/sqliteStore.js";
import { openDurableSystem } from "../../src/service/store/durableSystem.js";
import { building } from "../live/fixture.js";
import { dataDir, inspect } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";
import { PG, SKIP_NOTE, freshDatabase, sql, useCluster } from "./pgSupport.js";

afterAll(removeTempDirs);

const T = "2026-04-15T12:00:00.000Z";

/**
 * Four format-1 changes to building(), addressed by position as 1.0 of the store wrote them: a holder
 * added at the end, a field of the first replaced, h-bob removed the way a live system removed (the
 * last moved into its place), and a group added to the moved holder, at its new position.
 */
const FORMAT_1: { operation: unknown; patches: unknown[] }[] = [
  {
    operation: { method: "POST", path: "/holders" },
    patches: [
      {
        op: "add",
        path: ["holders", 3],
        value: {
          id: "h-dee",
          firstName: "Dee",
          lastName: "Fox",
          groups: ["g-night"],
          credentials: [{ id: "c-dee", types: ["card"], credentialNumber: 1003, facilityCode: 10 }],
        },
      },
    ],
  },
  {
    operation: { method: "PATCH", path: "/holders/h-ann" },
    patches: [{ op: "replace", path: ["holders", 0, "firstName"], value: "Annie" }],
  },
  {
    operation: { method: "DELETE", path: "/holders/h-bob" },
    patches: [
      { op: "replace", path: ["holders", 1], value: { id: "h-dee-moved-placeholder" } },
      { op: "remove", path: ["holders", 3] },
    ],
  },
  {
    operation: { method: "PUT", path: "/holders/h-dee/groups/g-staff" },
    patches: [{ op: "add", path: ["holders", 1, "groups", 1], value: "g-staff" }],
  },
];
// The moved holder is the one added by change 1, as the live system wrote it.
(FORMAT_1[2]!.patches[0] as { value: unknown }).value = (FORMAT_1[0]!.patches[0] as { value: unknown }).value;

/** What the upgraded snapshot must hold (only a positional replay gives it). */
function expectUpgraded(snapshot: unknown): void {
  const holders = (snapshot as { holders: { id: string; firstName: string; groups: string[] }[] }).holders;
  expect(holders.map((h) => h.id)).toEqual(["h-ann", "h-dee", "h-cy"]);
  expect(holders[0]!.firstName).toBe("Annie");
  expect(holders[1]!.groups).toEqual(["g-night", "g-staff"]);
}

describe("SQLite", () => {
  /** A database of format 1: imported by this rsop, then its format row removed and FORMAT_1 logged. */
  async function format1Database(changes = FORMAT_1): Promise<string> {
    const { db } = dataDir();
    const durable = await openDurableSystem(await openSqliteStore(db), {
      initial: { kind: "system", json: building() },
    });
    await durable.close();
    const d = new Database(db);
    d.prepare("DELETE FROM meta WHERE key = 'log_format'").run();
    const insert = d.prepare("INSERT INTO changes (seq, time, operation, patches) VALUES (?, ?, ?, ?)");
    changes.forEach((c, i) => insert.run(i + 1, T, JSON.stringify(c.operation), JSON.stringify(c.patches)));
    d.close();
    return db;
  }

  const formatRow = (db: string) => {
    const d = new Database(db, { readonly: true });
    try {
      return (d.prepare("SELECT value FROM meta WHERE key = 'log_format'").get() as { value: string } | undefined)
        ?.value;
    } finally {
      d.close();
    }
  };

  test("a new database records format 2", async () => {
    const { db } = dataDir();
    const durable = await openDurableSystem(await openSqliteStore(db), {
      initial: { kind: "system", json: building() },
    });
    await durable.close();
    expect(formatRow(db)).toBe("2");
  });

  test("format 1 is upgraded at open: its changes replayed by position into a snapshot of the last change, never replayed again; writes go on after it", async () => {
    const db = await format1Database();
    const durable = await openDurableSystem(await openSqliteStore(db));
    expect(durable.startedFrom).toEqual({ how: "loaded", seq: 4, snapshotSeq: 4, replayed: 0 });
    if (durable.target.kind !== "system") throw new Error("a system");
    expectUpgraded(durable.target.live.snapshot);
    const r = await durable.write({ method: "POST", path: "/groups", body: { name: "After the upgrade" } });
    expect(r.status).toBe(200);
    expect(durable.seq()).toBe(5);
    await durable.store.close(); // no closing snapshot: change 5 is replayed at the next open
    const again = await openDurableSystem(await openSqliteStore(db));
    expect(again.startedFrom).toEqual({ how: "loaded", seq: 5, snapshotSeq: 4, replayed: 1 });
    if (again.target.kind !== "system") throw new Error("a system");
    expectUpgraded(again.target.live.snapshot);
    expect(again.target.live.snapshot.groups.map((g) => g.name)).toContain("After the upgrade");
    await again.close();
    expect(formatRow(db)).toBe("2");
    const stored = inspect(db);
    expect(stored.integrity).toBe("ok");
    expect(stored.changes.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  test("a format-1 log that does not replay to a valid snapshot is refused, naming both formats and what to do; the database is left as it was", async () => {
    const bad = [
      ...FORMAT_1,
      {
        operation: { method: "PUT", path: "/holders/h-ann/groups/g-gone" },
        patches: [{ op: "add", path: ["holders", 0, "groups", 1], value: "g-gone" }],
      },
    ];
    const db = await format1Database(bad);
    const before = inspect(db);
    const opening = openSqliteStore(db);
    await expect(opening).rejects.toThrow(/change log of format 1, which this rsop \(format 2\) upgrades/);
    await expect(opening).rejects.toThrow(/serve it once with the rsop that wrote it/);
    expect(formatRow(db)).toBeUndefined();
    expect(inspect(db)).toEqual(before);
    // Not held open: the database can be opened again (and is refused again).
    await expect(openSqliteStore(db)).rejects.toThrow(/format 1/);
  });

  test("a database of a newer format is refused, naming both", async () => {
    const { db } = dataDir();
    const durable = await openDurableSystem(await openSqliteStore(db), {
      initial: { kind: "system", json: building() },
    });
    await durable.close();
    const d = new Database(db);
    d.prepare("UPDATE meta SET value = '3' WHERE key = 'log_format'").run();
    d.close();
    await expect(openSqliteStore(db)).rejects.toThrow(
      `${db} holds a change log of format 3; this rsop reads format 2 (and upgrades format 1 when it opens it): serve it with the rsop that wrote it, or a newer one`,
    );
  });
});

describe("PostgreSQL", () => {
  useCluster();

  /** A database of format 1, as for SQLite. */
  async function format1Database(): Promise<string> {
    const url = await freshDatabase();
    const store = await openPostgresStore(url);
    await store.init("system", building(), T);
    await store.close();
    await sql(url, "DELETE FROM rsop_meta WHERE key = 'log_format'");
    for (const [i, c] of FORMAT_1.entries())
      await sql(url, "INSERT INTO rsop_changes (seq, time, operation, patches) VALUES ($1, $2, $3, $4)", [
        i + 1,
        T,
        JSON.stringify(c.operation),
        JSON.stringify(c.patches),
      ]);
    return url;
  }

  const formatRow = async (url: string) =>
    (await sql<{ value: string }>(url, "SELECT value FROM rsop_meta WHERE key = 'log_format'"))[0]?.value;

  test.skipIf(!PG.ok)(`a new database records format 2${SKIP_NOTE}`, async () => {
    const url = await freshDatabase();
    const store = await openPostgresStore(url);
    await store.init("system", building(), T);
    await store.close();
    expect(await formatRow(url)).toBe("2");
  });

  test.skipIf(!PG.ok)(
    `format 1 is upgraded at open: a snapshot of the last change, nothing left to replay; appends follow it${SKIP_NOTE}`,
    async () => {
      const url = await format1Database();
      const store = await openPostgresStore(url);
      expect(await formatRow(url)).toBe("2");
      const state = (await store.load())!;
      expect(state).toMatchObject({ kind: "system", snapshotSeq: 4, seq: 4, changes: [] });
      expectUpgraded(state.snapshot);
      expect(await store.appendAt(6, [{ operation: {}, patches: [], time: T }]), "no gap in the log").toBe(false);
      expect(await store.appendAt(5, [{ operation: {}, patches: [], time: T }])).toBe(true);
      await store.close();
      // A second process opening it later finds format 2: nothing more to do.
      const again = await openPostgresStore(url);
      expect((await again.load())!).toMatchObject({ snapshotSeq: 4, seq: 5 });
      await again.close();
    },
  );

  test.skipIf(!PG.ok)(`a database of a newer format is refused, naming both${SKIP_NOTE}`, async () => {
    const url = await freshDatabase();
    const store = await openPostgresStore(url);
    await store.init("system", building(), T);
    await store.close();
    await sql(url, "UPDATE rsop_meta SET value = '3' WHERE key = 'log_format'");
    await expect(openPostgresStore(url)).rejects.toThrow(
      /holds a change log of format 3; this rsop reads format 2 \(and upgrades format 1 when it opens it\)/,
    );
  });
});
