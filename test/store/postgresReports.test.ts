// Reports on PostgreSQL (RP, PG): a report generated through one replica is kept in the database's
// `rsop_reports` table, so every replica lists it, views its records and may delete it; a report
// left pending by a replica that stopped ends finishedTruncated at the next start (RP). A real
// PostgreSQL cluster, started by the test (skipped with the reason where no binaries exist).
import { afterAll, describe, expect, test } from "vitest";
import { building } from "../live/fixture.js";
import { removeTempDirs } from "../http/fixtures.js";
import { PG, SKIP_NOTE, eventually, freshDatabase, sql, startReplica, useCluster } from "./pgSupport.js";

useCluster();
afterAll(removeTempDirs);

describe("reports on PostgreSQL", () => {
  test.skipIf(!PG.ok)(
    `a report generated on replica A is listed, viewed and deleted on replica B${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const a = await startReplica(url, building());
      const b = await startReplica(url);
      expect((await a.call("POST", "/reports/holders/generate", { output: ["firstName", "lastName"] })).status).toBe(
        204,
      );
      const listed = (await b.call("GET", "/reports/holders/requests")).body as { id: string; status: string }[];
      expect(listed).toHaveLength(1);
      const id = listed[0]!.id;
      await eventually(
        "the report is finished",
        async () => (await b.call("GET", `/reports/holders/requests/${id}`)).body.status === "finished",
      );
      const records = (await b.call("GET", `/reports/holders/requests/${id}/view`)).body as { firstName: string }[];
      expect(records.map((r) => r.firstName).sort()).toEqual(["Ann", "Bob", "Cy"]);
      expect((await sql<{ n: string }>(url, "SELECT count(*) AS n FROM rsop_reports"))[0]!.n).toBe("1");
      expect((await b.call("DELETE", `/reports/holders/requests/${id}`)).status).toBe(204);
      expect((await a.call("GET", `/reports/holders/requests/${id}`)).status).toBe(404);
      expect((await sql<{ n: string }>(url, "SELECT count(*) AS n FROM rsop_reports"))[0]!.n).toBe("0");
    },
  );
});
