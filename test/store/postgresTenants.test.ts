// A PostgreSQL database of many tenants (openPostgresSpace, T6–T9) on a real server: each tenant its
// own log, snapshots, compaction and reports; replicas follow every tenant through one listening
// session each and one poll query; appends to one tenant race per sequence number; the registry
// commits with its outbox and is re-read across replicas; a database of schema 1 is upgraded in one
// transaction (or not at all).
import { describe, expect, test } from "vitest";
import {
  FOLLOWER_APPLICATION,
  type PostgresSpace,
  openPostgresSpace,
  openPostgresStore,
} from "../../src/adapters/store/postgresStore.js";
import { type ReplicatedSystem, openReplicatedSystem } from "../../src/service/store/replicatedSystem.js";
import { RegistryConflict, type RegistryChange } from "../../src/service/store/registryStore.js";
import { building } from "../live/fixture.js";
import { PG, SKIP_NOTE, eventually, freshDatabase, sql, useCluster } from "./pgSupport.js";

const T = "2026-04-15T12:00:00.000Z";
const pgTest = test.skipIf(!PG.ok);

/** building() under another system id (a tenant's key is its system id: two tenants never share one). */
const buildingOf = (systemId: string) => ({ ...building(), systemId });
const group = (name: string) => ({ method: "POST", path: "/groups", body: { name } }) as const;
const groupNames = (r: ReplicatedSystem) =>
  (r.target.live.snapshot as unknown as { groups: { name: string }[] }).groups.map((g) => g.name);
const write = (seq: number, name: string) => ({
  operation: group(name),
  patches: [{ op: "add", path: ["groups", 2 + seq], value: { id: `g-${name}`, name } }],
  time: T,
});

/** Sessions of `db` with this application name (pg_stat_activity). */
async function sessions(url: string, application: string): Promise<number> {
  const db = new URL(url).pathname.slice(1);
  const rows = await sql<{ n: string }>(
    url,
    "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2",
    [db, application],
  );
  return Number(rows[0]!.n);
}

describe("PostgreSQL tenants", () => {
  useCluster();

  pgTest(`two tenants keep separate logs, snapshots, compaction and reports (T6, PG6)${SKIP_NOTE}`, async () => {
    const url = await freshDatabase();
    const space = await openPostgresSpace(url, { retainMs: 0, keepSnapshots: 1 });
    try {
      const [one, two] = [space.tenant(1), space.tenant(2)];
      expect(await two.load()).toBeNull();
      await one.init("system", buildingOf("sys-one"), T);
      await two.init("system", buildingOf("sys-two"), T);
      await expect(two.init("system", buildingOf("sys-two"), T)).rejects.toThrow(/already holds a system as tenant 2/);
      await expect(space.tenant(3).init("system", buildingOf("sys-one"), T)).rejects.toThrow(
        /another tenant has its id \(sys-one\)/,
      );
      // Both logs start at 1: a sequence number is per tenant.
      expect(await one.appendAt(1, [write(1, "A1"), write(2, "A2"), write(3, "A3")])).toBe(true);
      expect(await two.appendAt(1, [write(1, "B1")])).toBe(true);
      expect(await two.appendAt(1, [write(1, "B1 again")]), "seq 1 of tenant 2 is taken").toBe(false);
      expect(await two.append(group("B2"), [], T)).toBe(2);
      expect(await one.load()).toMatchObject({ kind: "system", snapshotSeq: 0, seq: 3 });
      expect((await two.load())!.changes.map((c) => (c.operation as { body: { name: string } }).body.name)).toEqual([
        "B1",
        "B2",
      ]);
      // Compaction of tenant 1 (one snapshot kept, no retention) leaves tenant 2's log alone.
      await one.snapshot(3, buildingOf("sys-one"), T);
      expect(await one.load()).toMatchObject({ snapshotSeq: 3, seq: 3, changes: [] });
      expect(await one.append(group("A4"), [], T)).toBe(4);
      expect(await one.changesAfter(0, 10), "changes 1…3 are gone").toBeNull();
      expect((await two.changesAfter(0, 10))!.map((c) => c.seq)).toEqual([1, 2]);
      expect(await two.load()).toMatchObject({ snapshotSeq: 0, seq: 2 });
      const rows = await sql<{ tenant: string; seq: string }>(
        url,
        "SELECT tenant, seq FROM rsop_snapshots ORDER BY tenant, seq",
      );
      expect(rows.map((r) => [Number(r.tenant), Number(r.seq)])).toEqual([
        [1, 3],
        [2, 0],
      ]);
      // Reports: the same id in both tenants, two reports.
      await one.putReport("r-1", { who: "one" }, [{ a: 1 }]);
      await two.putReport("r-1", { who: "two" });
      expect(await one.listReports()).toEqual([{ id: "r-1", info: { who: "one" } }]);
      expect(await two.listReports()).toEqual([{ id: "r-1", info: { who: "two" } }]);
      expect(await two.reportRecords("r-1")).toBeNull();
      expect(await one.reportRecords("r-1")).toEqual([{ a: 1 }]);
      expect(await two.deleteReport("r-1")).toBe(true);
      expect(await one.listReports()).toHaveLength(1);
      // Named values (kv), per tenant.
      await one.setValue!("k", "of one");
      expect(await one.getValue!("k")).toBe("of one");
      expect(await two.getValue!("k")).toBeNull();
      await one.setValue!("k", null);
      expect(await one.getValue!("k")).toBeNull();
      // A view's close releases nothing: the space still serves every tenant.
      await one.close();
      expect(await one.load()).toMatchObject({ seq: 4 });
      // The registry sees both tenants, named by their snapshots until a commit names their organization.
      expect((await space.registry.load()).tenants.map((t) => [t.n, t.key, t.organization])).toEqual([
        [1, "sys-one", ""],
        [2, "sys-two", ""],
      ]);
    } finally {
      await space.close();
    }
    await expect(space.tenant(1).load()).rejects.toThrow(/closed/);
  });

  pgTest(
    `two replicas follow 50 tenants through one listening session each and one poll, and converge (T6, T7)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const tenants = Array.from({ length: 50 }, (_, i) => i + 1);
      const spaces: PostgresSpace[] = [];
      const replicas: ReplicatedSystem[][] = [[], []];
      try {
        for (const side of [0, 1]) {
          const space = await openPostgresSpace(url, { pollMs: 200 });
          spaces.push(space);
          for (const n of tenants)
            replicas[side]!.push(
              await openReplicatedSystem(space.tenant(n), {
                pollMs: 0,
                snapshotEvery: 3,
                ...(side === 0 ? { initial: { kind: "system", json: buildingOf(`sys-${n}`) } } : {}),
              }),
            );
        }
        expect(await sessions(url, FOLLOWER_APPLICATION)).toBe(2);
        // Writes on both sides, to every tenant: tenant n gets n % 4 + 1 groups.
        await Promise.all(
          tenants.map(async (n, i) => {
            for (let k = 0; k <= n % 4; k++) {
              const r = await replicas[k % 2]![i]!.write(group(`T${n}-${k}`));
              expect(r.status, `tenant ${n} write ${k}`).toBe(200);
            }
          }),
        );
        await eventually("both sides at every tenant's last change", () =>
          tenants.every(
            (n, i) => replicas[0]![i]!.revision() === (n % 4) + 1 && replicas[1]![i]!.revision() === (n % 4) + 1,
          ),
        );
        for (const [i, n] of tenants.entries()) {
          expect(groupNames(replicas[1]![i]!), `tenant ${n}`).toEqual(groupNames(replicas[0]![i]!));
          expect(groupNames(replicas[0]![i]!).filter((g) => g.startsWith("T"))).toEqual(
            Array.from({ length: (n % 4) + 1 }, (_, k) => `T${n}-${k}`),
          );
        }
        // A change stored without a notification (missed) reaches the other side through the space's poll.
        await sql(url, "INSERT INTO rsop_changes (tenant, seq, time, operation, patches) VALUES (17, $1, $2, $3, $4)", [
          (17 % 4) + 2,
          T,
          JSON.stringify(group("Silent")),
          JSON.stringify([
            { op: "add", path: ["groups", 3 + (17 % 4) + 1], value: { id: "g-silent", name: "Silent" } },
          ]),
        ]);
        await eventually("both sides applied the silent change of tenant 17", () =>
          replicas.every((side) => groupNames(side[16]!).includes("Silent")),
        );
        // Snapshots every 3 changes, by each tenant's one writer: the tenants that reached 3 changes
        // (n % 4 of 2 or 3, and 17 with its silent change).
        const reached = tenants.filter((n) => n % 4 >= 2 || n === 17);
        await eventually("a snapshot of every tenant that reached 3 changes", async () => {
          const rows = await sql<{ tenant: string }>(
            url,
            "SELECT DISTINCT tenant FROM rsop_snapshots WHERE seq >= 3 ORDER BY tenant",
          );
          return JSON.stringify(rows.map((r) => Number(r.tenant))) === JSON.stringify(reached);
        });
        // Never both sides the writer of one tenant.
        const both = tenants.filter((_, i) => replicas.every((side) => side[i]!.health().snapshotWriter));
        expect(both).toEqual([]);
        // Tenant 3's writer stops following it: its lock goes, and the other side stores the next snapshot.
        const [gone, stays] = replicas[0]![2]!.health().snapshotWriter
          ? [replicas[0]![2]!, replicas[1]![2]!]
          : [replicas[1]![2]!, replicas[0]![2]!];
        await gone.close();
        for (let k = 0; k < 3; k++) expect((await stays.write(group(`Later ${k}`))).status).toBe(200);
        await eventually("the other side stored a snapshot of tenant 3", async () => {
          const rows = await sql<{ seq: string }>(url, "SELECT max(seq) AS seq FROM rsop_snapshots WHERE tenant = 3");
          return Number(rows[0]!.seq) >= 6;
        });
        expect(stays.health().snapshotWriter).toBe(true);
        // Still one listening session per space, after every tenant followed, wrote and was polled.
        expect(await sessions(url, FOLLOWER_APPLICATION)).toBe(2);
      } finally {
        for (const side of replicas) for (const r of side) await r.close();
        for (const s of spaces) await s.close();
      }
      expect(await sessions(url, FOLLOWER_APPLICATION)).toBe(0);
    },
  );

  pgTest(
    `concurrent appends to one tenant from two replicas: exactly one wins each sequence number (PG2, T6)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const [a, b] = [await openPostgresSpace(url), await openPostgresSpace(url)];
      try {
        await a.tenant(5).init("system", buildingOf("sys-5"), T);
        await a.tenant(6).init("system", buildingOf("sys-6"), T);
        const [ta, tb] = [a.tenant(5), b.tenant(5)];
        for (let seq = 1; seq <= 20; seq++) {
          const won = await Promise.all([
            ta.appendAt(seq, [write(seq, `a${seq}`)]),
            tb.appendAt(seq, [write(seq, `b${seq}`)]),
          ]);
          expect(won.filter(Boolean), `seq ${seq}`).toHaveLength(1);
        }
        const log = (await ta.changesAfter(0, 100))!;
        expect(log.map((c) => c.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        expect(await b.tenant(6).load()).toMatchObject({ seq: 0 });
        // Through replicas: the same group name written on both at once, one accepted, one refused.
        const ra = await openReplicatedSystem(a.tenant(6), { pollMs: 0 });
        const rb = await openReplicatedSystem(b.tenant(6), { pollMs: 0 });
        const answers = await Promise.all([ra.write(group("Same")), rb.write(group("Same"))]);
        expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
        await eventually("both replicas at change 1", () => ra.revision() === 1 && rb.revision() === 1);
        expect(groupNames(ra)).toEqual(groupNames(rb));
        await ra.close();
        await rb.close();
      } finally {
        await a.close();
        await b.close();
      }
    },
  );

  pgTest(
    `registry: a commit with its outbox in one transaction, unique keys settle races, changedSince and the notification reach the other replica (T9)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const [a, b] = [await openPostgresSpace(url), await openPostgresSpace(url)];
      try {
        let told = 0;
        const stopWatching = await b.registry.watch(() => told++);
        const org = (id: string, parent: string | null, name: string, type: "root" | "dealer" | "multi-site") =>
          ({
            op: "putOrg",
            row: { id, parent, name, type, fields: { useTouchMobileApp: false }, created: T },
          }) as const;
        await a.webhooks!.putSubscription("s-1", { url: "https://example.test/hook" });
        const event = { id: "e-1", topic: "organization.created", occurredAt: T };
        const tenant = {
          n: 7,
          kind: "system",
          key: "sys-7",
          organization: "o-cust",
          state: "active",
          info: { nodes: [] },
          created: T,
        } as const;
        const first: RegistryChange[] = [
          org("o-root", null, "Root", "root"),
          org("o-dealer", "o-root", "Dealer", "dealer"),
          org("o-cust", "o-dealer", "Customer", "multi-site"),
          { op: "putTenant", row: tenant },
          { op: "initTenant", n: 7, kind: "system", snapshot: buildingOf("sys-7"), time: T },
          { op: "putPanelToken", row: { digest: "d".repeat(64), tenant: 7, role: "admin", created: T } },
        ];
        expect(await a.registry.commit(first, [{ subscriptionId: "s-1", kind: "change", event }])).toBe(1);
        expect((await a.webhooks!.pending("s-1", 10)).map((r) => r.event)).toEqual([event]);
        expect(await a.tenant(7).load()).toMatchObject({ kind: "system", seq: 0 });
        await eventually("B was told of the commit", () => told > 0);
        const seen = (await b.registry.changedSince(0))!;
        expect(seen.rev).toBe(1);
        expect(seen.organizations.map((o) => [o.id, o.parent, o.type])).toEqual([
          ["o-cust", "o-dealer", "multi-site"],
          ["o-dealer", "o-root", "dealer"],
          ["o-root", null, "root"],
        ]);
        expect(seen.organizations[0]!.fields).toEqual({ useTouchMobileApp: false });
        expect(seen.tenants).toEqual([tenant]);
        expect(seen.panelTokens).toEqual([{ digest: "d".repeat(64), tenant: 7, role: "admin", created: T }]);
        expect(await b.registry.changedSince(1)).toBeNull();
        // B, not yet re-read, commits a sibling of the same name (case ignored): refused, nothing stored, no event.
        const clash = b.registry.commit(
          [org("o-other", "o-dealer", "CUSTOMER", "multi-site")],
          [{ subscriptionId: "s-1", kind: "change", event: { ...event, id: "e-2" } }],
        );
        await expect(clash).rejects.toBeInstanceOf(RegistryConflict);
        await expect(clash).rejects.toMatchObject({ what: "name" });
        await expect(b.registry.commit([{ op: "putTenant", row: { ...tenant, n: 8 } }])).rejects.toMatchObject({
          what: "key",
        });
        await expect(
          b.registry.commit([{ op: "initTenant", n: 7, kind: "system", snapshot: buildingOf("sys-7"), time: T }]),
        ).rejects.toMatchObject({ what: "tenant" });
        expect(await a.registry.changedSince(1)).toBeNull();
        expect(await a.webhooks!.pending("s-1", 10)).toHaveLength(1);
        // Deleting the tenant removes everything stored under its number.
        await a.tenant(7).putReport("r", {});
        await a.tenant(7).setValue!("k", "v");
        expect(await b.registry.commit([{ op: "deleteTenant", n: 7 }])).toBe(2);
        expect(await a.tenant(7).load()).toBeNull();
        expect(await a.tenant(7).listReports()).toEqual([]);
        expect(await a.tenant(7).getValue!("k")).toBeNull();
        const after = (await a.registry.changedSince(1))!;
        expect([after.rev, after.tenants, after.panelTokens]).toEqual([2, [], []]);
        await stopWatching();
      } finally {
        await a.close();
        await b.close();
      }
    },
  );

  /** A database as rsop wrote it before tenants (schema 1): one system, its log, a report. */
  async function schema1Database(changes: { operation: unknown; patches: unknown[] }[], format?: string) {
    const url = await freshDatabase();
    await sql(
      url,
      `CREATE TABLE rsop_meta (key text PRIMARY KEY, value text NOT NULL);
       CREATE TABLE rsop_changes (seq bigint PRIMARY KEY, time text NOT NULL, operation text NOT NULL, patches text NOT NULL, stored_at timestamptz NOT NULL DEFAULT now());
       CREATE TABLE rsop_snapshots (seq bigint PRIMARY KEY, time text NOT NULL, snapshot text NOT NULL, stored_at timestamptz NOT NULL DEFAULT now());
       CREATE TABLE rsop_reports (n bigserial PRIMARY KEY, id text NOT NULL UNIQUE, info text NOT NULL, records text);
       INSERT INTO rsop_meta (key, value) VALUES ('schema', '1'), ('kind', 'system');`,
    );
    if (format !== undefined) await sql(url, "INSERT INTO rsop_meta (key, value) VALUES ('log_format', $1)", [format]);
    await sql(url, "INSERT INTO rsop_snapshots (seq, time, snapshot) VALUES (0, $1, $2)", [
      T,
      JSON.stringify(building()),
    ]);
    for (const [i, c] of changes.entries())
      await sql(url, "INSERT INTO rsop_changes (seq, time, operation, patches) VALUES ($1, $2, $3, $4)", [
        i + 1,
        T,
        JSON.stringify(c.operation),
        JSON.stringify(c.patches),
      ]);
    await sql(url, "INSERT INTO rsop_reports (id, info, records) VALUES ('r-old', '{\"k\":1}', '[1]')");
    return url;
  }

  pgTest(
    `a database of schema 1 is upgraded at open, its rows tenant 1's; a failing upgrade changes nothing; another version is refused (T8)${SKIP_NOTE}`,
    async () => {
      const url = await schema1Database([write(1, "Old one"), write(2, "Old two")], "2");
      const space = await openPostgresSpace(url);
      try {
        expect(await space.tenant(1).load()).toMatchObject({ kind: "system", snapshotSeq: 0, seq: 2 });
        expect(await space.tenant(1).listReports()).toEqual([{ id: "r-old", info: { k: 1 } }]);
        expect(await space.tenant(1).reportRecords("r-old")).toEqual([1]);
        expect((await space.registry.load()).tenants).toMatchObject([
          { n: 1, kind: "system", key: "sys-1", organization: "" },
        ]);
        const meta = await sql<{ key: string; value: string }>(url, "SELECT key, value FROM rsop_meta ORDER BY key");
        expect(Object.fromEntries(meta.map((r) => [r.key, r.value]))).toEqual({
          schema: "2",
          log_format: "2",
          registry_rev: "0",
        });
        // The old system serves on, and a second tenant beside it.
        const r = await openReplicatedSystem(space.tenant(1), { pollMs: 0 });
        expect(groupNames(r)).toContain("Old two");
        expect((await r.write(group("New"))).status).toBe(200);
        expect(r.revision()).toBe(3);
        await r.close();
      } finally {
        await space.close();
      }
      // openPostgresStore is tenant 1 of the same database.
      const store = await openPostgresStore(url);
      expect(await store.load()).toMatchObject({ seq: 3 });
      await store.close();

      // A format-1 log that does not replay: the whole upgrade is rolled back, schema 1 as it was.
      const bad = await schema1Database([
        { operation: { method: "PUT" }, patches: [{ op: "add", path: ["holders", 0, "groups", 1], value: "g-gone" }] },
      ]);
      await expect(openPostgresSpace(bad)).rejects.toThrow(/format 1/);
      expect(await sql(bad, "SELECT value FROM rsop_meta WHERE key = 'schema'")).toEqual([{ value: "1" }]);
      expect(await sql(bad, "SELECT value FROM rsop_meta WHERE key = 'kind'")).toEqual([{ value: "system" }]);
      const columns = await sql<{ column_name: string }>(
        bad,
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'rsop_changes' ORDER BY column_name",
      );
      expect(columns.map((c) => c.column_name)).not.toContain("tenant");
      expect(await sql(bad, "SELECT to_regclass('rsop_tenants') AS t")).toEqual([{ t: null }]);

      // A version this rsop does not know.
      await sql(url, "UPDATE rsop_meta SET value = '3' WHERE key = 'schema'");
      await expect(openPostgresSpace(url)).rejects.toThrow(
        /has rsop schema version 3; this rsop reads version 2 \(and upgrades version 1 when it opens it\)/,
      );
    },
  );
});
