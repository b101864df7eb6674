// The throwaway cluster itself: it starts, answers, survives a restart with its data, and is gone after.
import { existsSync } from "node:fs";
import pg from "pg";
import { expect, test } from "vitest";
import { join } from "node:path";
import { findPostgres, startPostgresCluster } from "../support/postgresCluster.js";

const bins = findPostgres();

test.skipIf(!bins.ok)(
  `a throwaway PostgreSQL cluster starts, keeps committed rows across a restart, and is removed after${bins.ok ? "" : ` (skipped: ${bins.why})`}`,
  async () => {
    if (!bins.ok) return;
    const cluster = await startPostgresCluster(bins);
    try {
      const url = await cluster.createDatabase("t1");
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query("CREATE TABLE t (x int)");
      await c.query("INSERT INTO t VALUES (1)");
      await c.end();
      await cluster.restart();
      const d = new pg.Client({ connectionString: url });
      await d.connect();
      expect((await d.query("SELECT x FROM t")).rows).toEqual([{ x: 1 }]);
      await d.end();
    } finally {
      cluster.stop();
    }
    expect(existsSync(cluster.dir)).toBe(false);
  },
);

test("without PostgreSQL binaries the helper says why, and the tests skip with that sentence in their names", () => {
  const nowhere = findPostgres({ env: { PATH: "/nonexistent" }, debianDir: join(__dirname, "no-such-folder") });
  expect(nowhere).toEqual({
    ok: false,
    why: "no PostgreSQL server binaries (initdb, pg_ctl, postgres) in /usr/lib/postgresql/*/bin, $RSOP_PG_BIN or the PATH: apt-get install postgresql (.ci/run does)",
  });
});
