// The cloud-node feed (semantics N13–N19) on PostgreSQL replicas: a node following replica B gets the
// writes made on replica A as B applies them from the shared log, its patches applied to its download
// equal a fresh download, and once the store compacted the log a feed from before it is 410.
import type { Patch } from "immer";
import { expect, test } from "vitest";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { createLiveSystem } from "../../src/live/index.js";
import { PG, SKIP_NOTE, eventually, freshDatabase, sql, useCluster } from "../store/pgSupport.js";
import { NODE, ROOT, call, importSystem, nodeToken, ok, openLines, startService } from "./nodeSupport.js";

useCluster();
const pgTest = test.skipIf(!PG.ok);
const FEEDS = { keepAliveMs: 150, checkMs: 30 };
const isChange = (line: any) => typeof line.revision === "number" && line.keepAlive === undefined;

pgTest(
  `N13–N17 on replicas: a feed on B follows A's writes; patches equal a fresh download; compacted 410${SKIP_NOTE}`,
  async () => {
    const url = await freshDatabase();
    const servers: RunningServiceServer[] = [];
    try {
      const a = await startService({ storeUrl: url }, { nodeFeeds: FEEDS, snapshotEvery: 1 });
      servers.push(a);
      const sys = await importSystem(a);
      const b = await startService({ storeUrl: url }, { nodeFeeds: FEEDS, snapshotEvery: 1 });
      servers.push(b);
      await eventually("B knows the system", () => b.registry.tenantByKey(sys) !== undefined);
      const token = await nodeToken(a, sys);
      await eventually(
        "B knows the token",
        async () => (await call(b, token, "GET", `/${sys}/cloud-nodes/${NODE}/node/snapshot`)).status === 200,
      );
      const base = ok(await call(b, token, "GET", `/${sys}/cloud-nodes/${NODE}/node/snapshot`), 200, "download");
      const node = createLiveSystem(base.snapshot);
      if (!node.ok) throw new Error("the download does not load");
      const lines = await openLines(b, token, `/${sys}/cloud-nodes/${NODE}/node/changes?from=${base.revision}`);
      for (const name of ["One", "Two"])
        ok(await call(a, ROOT, "POST", `/${sys}/holders`, { firstName: name, lastName: "PG" }), 201, name);
      const got = (await lines.collect((l) => isChange(l) && l.revision === base.revision + 2)).filter(isChange);
      expect(got.map((l) => l.revision)).toEqual([base.revision + 1, base.revision + 2]);
      for (const l of got) expect(node.value.applyPatches(l.patches as Patch[]).ok).toBe(true);
      lines.close();
      const fresh = ok(await call(b, token, "GET", `/${sys}/cloud-nodes/${NODE}/node/snapshot`), 200, "fresh");
      expect(fresh.revision).toBe(base.revision + 2);
      expect(JSON.parse(JSON.stringify(node.value.snapshot))).toEqual(fresh.snapshot);

      // Compaction: the changes aged past the retention go once two later snapshots cover them.
      await sql(url, "UPDATE rsop_changes SET stored_at = now() - interval '3 days'");
      for (const name of ["Three", "Four", "Five"])
        ok(await call(a, ROOT, "POST", `/${sys}/holders`, { firstName: name, lastName: "PG" }), 201, name);
      await eventually("the log compacted", async () => {
        const rows = await sql<{ min: string }>(url, "SELECT min(seq) AS min FROM rsop_changes");
        return Number(rows[0]!.min) > base.revision + 1;
      });
      const gone = await call(b, token, "GET", `/${sys}/cloud-nodes/${NODE}/node/changes?from=${base.revision}`);
      expect(gone.status).toBe(410);
    } finally {
      for (const s of servers.reverse()) await s.close();
    }
  },
  120_000,
);
