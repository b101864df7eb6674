// Identity records in the registry (semantics I1, I4) on a real SQLite file and a real PostgreSQL
// server: puts and deletes are committed and read back at the next open; a change that requires a
// version refuses, committing nothing, when the record moved on; two processes of one PostgreSQL
// database racing for the same version: exactly one wins. The TenantRegistry's view follows.
import { afterAll, describe, expect, test } from "vitest";
import { openPostgresSpace } from "../../src/adapters/store/postgresStore.js";
import { openSqliteSpace } from "../../src/adapters/store/sqliteStore.js";
import { RegistryConflict, type RegistryStore } from "../../src/service/store/registryStore.js";
import { StaleRecord, TenantRegistry } from "../../src/service/tenants/registry.js";
import { dataDir } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";
import { PG, SKIP_NOTE, freshDatabase, useCluster } from "../store/pgSupport.js";

afterAll(removeTempDirs);

/** The version/stale behaviour every registry store must have. */
async function checkVersions(store: RegistryStore): Promise<void> {
  await store.commit([{ op: "putRecord", kind: "user", id: "u1", value: { email: "a@b.test" }, ifVersion: 0 }]);
  // A second "create" of the same id is refused, and its other changes are not committed either.
  await expect(
    store.commit([
      { op: "putRecord", kind: "user", id: "u2", value: { email: "c@d.test" } },
      { op: "putRecord", kind: "user", id: "u1", value: { email: "x@y.test" }, ifVersion: 0 },
    ]),
  ).rejects.toSatisfy((e) => e instanceof RegistryConflict && e.what === "stale");
  await store.commit([{ op: "putRecord", kind: "user", id: "u1", value: { email: "e@f.test" }, ifVersion: 1 }]);
  await expect(store.commit([{ op: "deleteRecord", kind: "user", id: "u1", ifVersion: 1 }])).rejects.toBeInstanceOf(
    RegistryConflict,
  );
  await store.commit([{ op: "putRecord", kind: "code", id: "c1", value: { used: null } }]);
  await store.commit([{ op: "deleteRecord", kind: "code", id: "c1", ifVersion: 1 }]);
  const state = await store.load();
  expect(state.records).toEqual([{ kind: "user", id: "u1", value: { email: "e@f.test" }, version: 2 }]);
}

describe("identity records", () => {
  test("SQLite: versions, refusals that commit nothing, and the records read back after a reopen (I1, I4)", async () => {
    const { db } = dataDir();
    let space = await openSqliteSpace(db);
    try {
      await checkVersions(space.registry);
    } finally {
      await space.close();
    }
    space = await openSqliteSpace(db);
    try {
      const registry = await TenantRegistry.open(space.registry);
      expect(registry.record("user", "u1")).toEqual({
        kind: "user",
        id: "u1",
        value: { email: "e@f.test" },
        version: 2,
      });
      expect([...registry.records("code")]).toEqual([]);
      // The registry's own view applies what it commits, versions included.
      await registry.updateRecords(() => ({
        changes: [{ op: "putRecord", kind: "user", id: "u1", value: { email: "g@h.test" }, ifVersion: 2 }],
        result: undefined,
      }));
      expect(registry.record("user", "u1")?.version).toBe(3);
      await expect(
        registry.updateRecords(() => ({
          changes: [{ op: "putRecord", kind: "user", id: "u1", value: {}, ifVersion: 2 }],
          result: undefined,
        })),
      ).rejects.toBeInstanceOf(StaleRecord);
      expect(registry.record("user", "u1")?.value).toEqual({ email: "g@h.test" });
    } finally {
      await space.close();
    }
  });

  describe("PostgreSQL", () => {
    useCluster();
    test.skipIf(!PG.ok)(
      `versions and refusals; two processes racing for one version: one wins (I4)${SKIP_NOTE}`,
      async () => {
        const url = await freshDatabase();
        const [a, b] = [await openPostgresSpace(url), await openPostgresSpace(url)];
        try {
          await checkVersions(a.registry);
          const ra = await TenantRegistry.open(a.registry);
          const rb = await TenantRegistry.open(b.registry);
          const use = (r: TenantRegistry) =>
            r.updateRecords(() => ({
              changes: [{ op: "putRecord", kind: "user", id: "u1", value: { by: r === ra ? "a" : "b" }, ifVersion: 2 }],
              result: "won",
            }));
          const results = await Promise.allSettled([use(ra), use(rb)]);
          expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
          expect(results.filter((r) => r.status === "rejected" && r.reason instanceof StaleRecord)).toHaveLength(1);
          await rb.refresh();
          await ra.refresh();
          expect(ra.record("user", "u1")).toEqual(rb.record("user", "u1"));
          expect(ra.record("user", "u1")?.version).toBe(3);
        } finally {
          await a.close();
          await b.close();
        }
      },
    );
  });
});
