// One SQLite database, many tenants (sqliteStore.ts openSqliteSpace, sqliteRegistry.ts), on real
// files: each tenant keeps its own log, snapshots, reports and kv (T1); appends of different tenants
// interleave and share the group commit; a registry commit is all or nothing and a deleted tenant
// leaves nothing behind (T4); a schema-1 database is upgraded in place, in one transaction (T2); one
// process holds the file (T3).
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { openSqliteSpace, openSqliteStore } from "../../src/adapters/store/sqliteStore.js";
import { openDurableSystem } from "../../src/service/store/durableSystem.js";
import { RegistryConflict, type RegistryChange } from "../../src/service/store/registryStore.js";
import type { StoreSpace } from "../../src/service/store/store.js";
import { building } from "../live/fixture.js";
import { dataDir, inspect } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";

afterAll(removeTempDirs);

const T = "2026-04-15T12:00:00.000Z";
const ROOT = { id: "root", parent: null, name: "Root", type: "root", fields: {}, created: T } as const;

/** The registry changes that make tenant `n` with key `key`, holding `snapshot` (the same for every tenant here). */
function newTenant(n: number, key: string, snapshot: unknown = building()): RegistryChange[] {
  return [
    {
      op: "putTenant",
      row: { n, kind: "system", key, organization: "root", state: "active", info: { nodes: [] }, created: T },
    },
    { op: "initTenant", n, kind: "system", snapshot, time: T },
  ];
}

const write = (i: number) => ({
  operation: { method: "POST", path: "/groups", body: { name: `G${i}` } },
  patches: [],
  time: T,
});

/** Every row of each tenant-keyed table, counted by tenant, read from a file no process holds. */
function rowsByTenant(file: string): Record<string, Record<number, number>> {
  const d = new Database(file, { readonly: true });
  try {
    const out: Record<string, Record<number, number>> = {};
    for (const [table, col] of [
      ["changes", "tenant"],
      ["snapshots", "tenant"],
      ["snapshot_parts", "tenant"],
      ["reports", "tenant"],
      ["kv", "tenant"],
      ["panel_tokens", "tenant"],
      ["tenants", "n"],
    ] as const) {
      const rows = d.prepare(`SELECT ${col} AS t, count(*) AS c FROM ${table} GROUP BY ${col}`).all() as {
        t: number;
        c: number;
      }[];
      out[table] = Object.fromEntries(rows.map((r) => [r.t, r.c]));
    }
    return out;
  } finally {
    d.close();
  }
}

describe("tenants of one SQLite database", () => {
  test("two tenants with identical snapshots keep separate seq, snapshots, reports and kv, across a reopen", async () => {
    const { db } = dataDir();
    let space: StoreSpace = await openSqliteSpace(db, { snapshotPartChars: 1024 });
    expect(await space.registry.commit([{ op: "putOrg", row: ROOT }, ...newTenant(1, "a"), ...newTenant(2, "b")])).toBe(
      1,
    );
    const [a, b] = [space.tenant(1), space.tenant(2)];
    expect(space.tenant(1)).toBe(a);
    for (let i = 1; i <= 3; i++) expect(await a.append(write(i).operation, [], T)).toBe(i);
    expect(await b.append(write(9).operation, [], T)).toBe(1);
    await a.snapshot(3, { ...building(), groups: [] }, T, "now");
    await a.putReport("r1", { of: "a" }, [{ x: 1 }]);
    await b.putReport("r1", { of: "b" });
    await a.setValue!("k", "value of a");
    await space.close();

    space = await openSqliteSpace(db);
    const [a2, b2] = [space.tenant(1), space.tenant(2)];
    const [sa, sb] = [(await a2.load())!, (await b2.load())!];
    expect([sa.seq, sa.snapshotSeq, sa.changes.length]).toEqual([3, 3, 0]);
    expect([sb.seq, sb.snapshotSeq, sb.changes.map((c) => c.operation)]).toEqual([1, 0, [write(9).operation]]);
    expect((sa.snapshot as { groups: unknown[] }).groups).toEqual([]);
    expect(sb.snapshot).toEqual(building());
    expect(await a2.listReports()).toEqual([{ id: "r1", info: { of: "a" } }]);
    expect(await b2.listReports()).toEqual([{ id: "r1", info: { of: "b" } }]);
    expect(await a2.reportRecords("r1")).toEqual([{ x: 1 }]);
    expect(await b2.reportRecords("r1")).toBeNull();
    expect(await a2.getValue!("k")).toBe("value of a");
    expect(await b2.getValue!("k")).toBeNull();
    expect(await space.tenant(3).load()).toBeNull();
    const registry = await space.registry.load();
    expect(registry.rev).toBe(1);
    expect(registry.tenants.map((t) => [t.n, t.key, t.info])).toEqual([
      [1, "a", { nodes: [] }],
      [2, "b", { nodes: [] }],
    ]);
    // A view's close releases nothing: the other tenant and a fresh view of the same one go on.
    await a2.close();
    await expect(a2.load()).rejects.toThrow(/closed/);
    expect(await b2.append(write(10).operation, [], T)).toBe(2);
    expect((await space.tenant(1).load())!.seq).toBe(3);
    await space.close();
    await expect(b2.load()).rejects.toThrow(`the database ${db} is closed`);
  });

  test("appends of different tenants interleave, each tenant's log in its own order, every one kept", async () => {
    const { db } = dataDir();
    const space = await openSqliteSpace(db);
    await space.registry.commit([...newTenant(1, "a"), ...newTenant(2, "b"), ...newTenant(3, "c")]);
    const stores = [1, 2, 3].map((n) => space.tenant(n));
    // Every call made before any resolves: tenant by tenant in turn, several changes per call at times.
    const next = [1, 1, 1];
    const calls: Promise<boolean>[] = [];
    for (let i = 0; i < 60; i++) {
      const t = i % 3;
      const writes = Array.from({ length: 1 + (i % 2) }, (_, k) => write(i * 10 + k));
      calls.push(stores[t]!.appendAt(next[t]!, writes));
      next[t]! += writes.length;
    }
    // A number already taken (tenant 2's first) is refused for that tenant only.
    calls.push(stores[1]!.appendAt(1, [write(999)]));
    const answers = await Promise.all(calls);
    expect(answers.slice(0, 60).every((x) => x)).toBe(true);
    expect(answers[60]).toBe(false);
    await space.close();
    const again = await openSqliteSpace(db);
    for (const [t, n] of [1, 2, 3].entries()) {
      const s = (await again.tenant(n).load())!;
      expect(s.seq).toBe(next[t]! - 1);
      expect(s.changes.map((c) => c.seq)).toEqual(Array.from({ length: s.seq }, (_, k) => k + 1));
    }
    await again.close();
  });

  test("a registry commit that breaks a unique key commits nothing", async () => {
    const { db } = dataDir();
    const space = await openSqliteSpace(db);
    const dealer = {
      id: "d1",
      parent: "root",
      name: "Dealer One",
      type: "dealer",
      fields: { x: 1 },
      created: T,
    } as const;
    const rev = await space.registry.commit([
      { op: "putOrg", row: ROOT },
      { op: "putOrg", row: dealer },
      ...newTenant(1, "a"),
    ]);
    const before = await space.registry.load();
    // A sibling of another case, and the tenant that came with it: neither is stored.
    const clash = space.registry.commit([
      ...newTenant(2, "b"),
      { op: "putOrg", row: { ...dealer, id: "d2", name: "DEALER one" } },
    ]);
    await expect(clash).rejects.toBeInstanceOf(RegistryConflict);
    await expect(clash).rejects.toMatchObject({ what: "name" });
    await expect(
      space.registry.commit([{ op: "putOrg", row: { ...dealer, id: "d3", name: "Other" } }, ...newTenant(2, "a")]),
    ).rejects.toMatchObject({
      what: "key",
    });
    await expect(space.registry.commit(newTenant(1, "a"))).rejects.toMatchObject({ what: "tenant" });
    expect(await space.registry.load()).toEqual(before);
    expect(before.rev).toBe(rev);
    expect(await space.tenant(2).load()).toBeNull();
    // The same name under another parent is no conflict.
    await space.registry.commit([{ op: "putOrg", row: { ...dealer, id: "c1", parent: "d1", name: "dealer one" } }]);
    expect((await space.registry.load()).organizations.map((o) => o.id)).toEqual(["c1", "d1", "root"]);
    await space.close();
  });

  test("deleteTenant removes every row of that tenant and nothing of another; its view refuses use", async () => {
    const { db } = dataDir();
    const space = await openSqliteSpace(db, { snapshotPartChars: 1024 });
    await space.registry.commit([...newTenant(1, "a"), ...newTenant(2, "b")]);
    for (const n of [1, 2]) {
      const s = space.tenant(n);
      await s.append(write(1).operation, [], T);
      await s.snapshot(1, building(), T, "now");
      await s.putReport("r", {}, []);
      await s.setValue!("k", "v");
    }
    const token = (tenant: number) => ({ digest: `d${tenant}`, tenant, role: "admin", created: T });
    await space.registry.commit([
      { op: "putPanelToken", row: token(1) },
      { op: "putPanelToken", row: token(2) },
    ]);
    const doomed = space.tenant(2);
    await space.registry.commit([{ op: "deleteTenant", n: 2 }]);
    await expect(doomed.append(write(2).operation, [], T)).rejects.toThrow(/closed/);
    expect(await space.tenant(2).load()).toBeNull();
    const registry = await space.registry.load();
    expect(registry.tenants.map((t) => t.n)).toEqual([1]);
    expect(registry.panelTokens.map((t) => t.digest)).toEqual(["d1"]);
    expect((await space.tenant(1).load())!.seq).toBe(1);
    await space.close();
    const rows = rowsByTenant(db);
    for (const [table, counts] of Object.entries(rows)) {
      expect(counts[2], table).toBeUndefined();
      expect(counts[1], table).toBeGreaterThan(0);
    }
  });

  test("a second open of the same file is refused while the first holds it", async () => {
    const { db } = dataDir();
    const space = await openSqliteSpace(db);
    await expect(openSqliteSpace(db)).rejects.toThrow(`${db} is in use by another process`);
    await expect(openSqliteStore(db)).rejects.toThrow("is in use by another process");
    await space.close();
    await (await openSqliteSpace(db)).close();
  });
});

/** Schema 1 as rsop wrote it before tenants (sqliteStore.ts), and its version row. */
const SCHEMA_1 = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, operation TEXT NOT NULL, patches TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS snapshots (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, snapshot TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS snapshot_parts (seq INTEGER NOT NULL, part INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (seq, part)) STRICT;
CREATE TABLE IF NOT EXISTS reports (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, info TEXT NOT NULL, records TEXT) STRICT;
INSERT INTO meta (key, value) VALUES ('schema', '1');
`;

describe("a schema-1 database", () => {
  /**
   * A schema-1 file holding building() at 0 and the changes `writes` made to it (taken from a
   * schema-2 database the same writes went to, whose state the upgraded file must give), split into
   * parts, with a report and a kv row. Answers both files.
   */
  async function schema1File(logFormat: string | null, patches?: unknown[]) {
    const reference = dataDir().db;
    const durable = await openDurableSystem(await openSqliteStore(reference), {
      initial: { kind: "system", json: building() },
    });
    for (const name of ["Night", "Weekend", "Contractors"])
      expect((await durable.write({ method: "POST", path: "/groups", body: { name } })).status).toBe(200);
    const expected = JSON.parse(JSON.stringify(durable.target.live.snapshot)) as unknown;
    await durable.store.close();
    const src = new Database(reference, { readonly: true });
    const changes = src.prepare("SELECT seq, time, operation, patches FROM changes ORDER BY seq").all() as {
      seq: number;
      time: string;
      operation: string;
      patches: string;
    }[];
    src.close();

    const { db } = dataDir();
    const d = new Database(db);
    d.pragma("journal_mode = WAL");
    d.exec(SCHEMA_1);
    d.prepare("INSERT INTO meta (key, value) VALUES ('kind', 'system')").run();
    if (logFormat !== null) d.prepare("INSERT INTO meta (key, value) VALUES ('log_format', ?)").run(logFormat);
    // The snapshot's text split as the store splits it: the row, then its parts.
    const text = JSON.stringify(building());
    d.prepare("INSERT INTO snapshots (seq, time, snapshot) VALUES (0, ?, ?)").run(T, text.slice(0, 100));
    d.prepare("INSERT INTO snapshot_parts (seq, part, text) VALUES (0, 1, ?)").run(text.slice(100, 200));
    d.prepare("INSERT INTO snapshot_parts (seq, part, text) VALUES (0, 2, ?)").run(text.slice(200));
    const insert = d.prepare("INSERT INTO changes (seq, time, operation, patches) VALUES (?, ?, ?, ?)");
    for (const c of changes)
      insert.run(c.seq, c.time, c.operation, patches === undefined ? c.patches : JSON.stringify(patches));
    d.prepare("INSERT INTO reports (id, info, records) VALUES ('r1', '{\"a\":1}', '[1]'), ('r0', '{}', NULL)").run();
    d.prepare("INSERT INTO kv (key, value) VALUES ('migration', 'x')").run();
    d.close();
    return { db, expected };
  }

  /** Every table's rows and the meta rows of a file no process holds. */
  function dump(file: string): Record<string, unknown[]> {
    const d = new Database(file, { readonly: true });
    try {
      const tables = d.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[];
      return Object.fromEntries(tables.map((t) => [t.name, d.prepare(`SELECT * FROM "${t.name}"`).all()]));
    } finally {
      d.close();
    }
  }

  test("is upgraded in place at open: its log, snapshot parts, reports and kv become tenant 1's, whose row names its system", async () => {
    const { db, expected } = await schema1File("2");
    const space = await openSqliteSpace(db);
    const registry = await space.registry.load();
    expect(registry.tenants).toEqual([
      { n: 1, kind: "system", key: "sys-1", organization: "", state: "active", info: {}, created: T },
    ]);
    expect(registry.rev).toBe(0);
    const one = space.tenant(1);
    expect(await one.listReports()).toEqual([
      { id: "r1", info: { a: 1 } },
      { id: "r0", info: {} },
    ]);
    expect(await one.reportRecords("r1")).toEqual([1]);
    expect(await one.getValue!("migration")).toBe("x");
    await space.close();

    const d = new Database(db, { readonly: true });
    expect(d.prepare("SELECT key, value FROM meta ORDER BY key").all()).toEqual([
      { key: "log_format", value: "2" },
      { key: "schema", value: "2" },
    ]);
    d.close();
    const durable = await openDurableSystem(await openSqliteStore(db));
    expect(durable.startedFrom).toMatchObject({ how: "loaded", seq: 3, snapshotSeq: 0, replayed: 3 });
    expect(JSON.parse(JSON.stringify(durable.target.live.snapshot))).toEqual(expected);
    expect((await durable.write({ method: "POST", path: "/groups", body: { name: "After" } })).status).toBe(200);
    await durable.close();
    const stored = inspect(db);
    expect(stored.integrity).toBe("ok");
    expect(stored.changes.map((c) => c.seq)).toEqual([1, 2, 3, 4]);
  });

  test("a format-1 log is upgraded with it, in the same open", async () => {
    const { db, expected } = await schema1File(null);
    const durable = await openDurableSystem(await openSqliteStore(db));
    // The format upgrade stored a snapshot of the last change: nothing is replayed.
    expect(durable.startedFrom).toMatchObject({ how: "loaded", seq: 3, snapshotSeq: 3, replayed: 0 });
    // These patches were made as format 2 (by id): replayed by position, the new groups land first.
    const byId = (s: unknown) => {
      const { groups, ...rest } = JSON.parse(JSON.stringify(s)) as { groups: { id: string }[] };
      return { ...rest, groups: groups.sort((x, y) => x.id.localeCompare(y.id)) };
    };
    expect(byId(durable.target.live.snapshot)).toEqual(byId(expected));
    await durable.close();
  });

  test("an upgrade that fails leaves the schema-1 file as it was, and it can be opened again", async () => {
    // Format-1 changes that do not replay: the format upgrade fails after the tables were rebuilt.
    const { db } = await schema1File(null, [{ op: "replace", path: ["holders", 99, "firstName"], value: "x" }]);
    const before = dump(db);
    expect(before.meta).toContainEqual({ key: "schema", value: "1" });
    await expect(openSqliteSpace(db)).rejects.toThrow(/change log of format 1/);
    expect(dump(db)).toEqual(before);
    await expect(openSqliteStore(db)).rejects.toThrow(/change log of format 1/);
    expect(dump(db)).toEqual(before);
  });
});
