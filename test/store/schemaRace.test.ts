// Processes opening one new PostgreSQL database at once while others already commit to its registry
// (T56, PG schema lock): every one opens, one root organization, no "deadlock detected".
import { describe, expect, test } from "vitest";
import { openPostgresSpace } from "../../src/adapters/store/postgresStore.js";
import { TenantRegistry } from "../../src/service/tenants/registry.js";
import { PG, SKIP_NOTE, freshDatabase, useCluster } from "./pgSupport.js";

useCluster();

describe("schema and registry commits racing", () => {
  test.skipIf(!PG.ok)(
    `8 processes open a new database at once, 4 rounds: all open, one root${SKIP_NOTE}`,
    async () => {
      for (let round = 0; round < 4; round++) {
        const url = await freshDatabase();
        const opened = await Promise.allSettled(
          Array.from({ length: 8 }, async () => {
            const space = await openPostgresSpace(url);
            try {
              const registry = await TenantRegistry.open(space.registry);
              // A second open of the schema while the others commit (as serve does: its mode, then its space).
              const again = await openPostgresSpace(url);
              await again.close();
              return registry.root().id;
            } finally {
              await space.close();
            }
          }),
        );
        const failed = opened
          .filter((r) => r.status === "rejected")
          .map((r) => String((r as PromiseRejectedResult).reason));
        expect(failed).toEqual([]);
        expect(new Set(opened.map((r) => (r as PromiseFulfilledResult<string>).value)).size).toBe(1);
      }
    },
    120_000,
  );
});
