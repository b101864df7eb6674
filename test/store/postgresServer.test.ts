// `rsop serve --store postgres://…` on a real PostgreSQL server (a throwaway cluster): the routes and
// refusals of the SQLite store's tests, restart from snapshot + log, import rules; then what replicas
// add: every answer's X-Rsop-Revision, read-your-writes with X-Rsop-Min-Revision across replicas,
// conflicting writes on two replicas (one wins), catch-up without notifications, the snapshot
// writer's election, and compaction.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { openPostgresStore } from "../../src/adapters/store/postgresStore.js";
import { run } from "../adapters/cliHarness.js";
import { building } from "../live/fixture.js";
import { type Caller, SYSTEM_ID, caller } from "../http/dataSupport.js";
import { TOKEN, removeTempDirs } from "../http/fixtures.js";
import { type RunningDataServer, startDataServer } from "../../src/adapters/http/startDataServer.js";
import { PG, SKIP_NOTE, eventually, freshDatabase, inspectPg, sql, startReplica, useCluster } from "./pgSupport.js";

afterAll(removeTempDirs);
useCluster();

const WEEK = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const AT = "2026-04-15T12:00:00Z";
const pgTest = test.skipIf(!PG.ok);

async function refused(
  server: RunningDataServer,
  call: Caller,
  status: number,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) {
  const seq = server.durable.seq();
  const before = server.durable.target.live.snapshot;
  const r = await call(method, path, body, headers);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(r.body.error.status).toBe(status);
  for (const i of r.body.error.issues) expect(Object.keys(i).sort()).toEqual(["message", "path"]);
  expect(r.headers.get("x-rsop-revision"), "every answer carries the revision").toBe(String(seq));
  expect(server.durable.seq(), "nothing stored").toBe(seq);
  expect(server.durable.target.live.snapshot, "nothing changed").toBe(before);
  return r.body.error as { status: number; message: string; issues: { path: string; message: string }[] };
}

describe("rsop serve --store postgres://: routes", () => {
  pgTest(
    `every route family; decisions follow; the log has every accepted write; each answer carries X-Rsop-Revision (PG1, PG3)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const { server, call, lines } = await startReplica(url, building());
      expect(lines.some((l) => l.startsWith(`imported building.json into ${url}: system ${SYSTEM_ID}`))).toBe(true);
      const accepted: { method: string; path: string }[] = [];
      const ok = async (status: number, method: string, path: string, body?: unknown) => {
        const before = server.durable.seq();
        const r = await call(method, path, body);
        expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
        const isWrite = method !== "GET" && path !== "/decisions";
        if (isWrite) accepted.push({ method, path });
        // A write answers with the sequence number it got; a read with the revision it reflects.
        expect(r.headers.get("x-rsop-revision"), `${method} ${path}`).toBe(String(isWrite ? before + 1 : before));
        return r;
      };

      const holder = (
        await ok(201, "POST", "/holders", { firstName: "Dee", lastName: "Park", email: "dee@example.com" })
      ).body;
      const card = (
        await ok(201, "POST", `/holders/${holder.id}/credentials`, {
          types: ["card"],
          credentialNumber: 4242,
          facilityCode: 10,
        })
      ).body;
      expect((await ok(200, "GET", `/holders/${holder.id}`)).body).toMatchObject({
        id: holder.id,
        firstName: "Dee",
        credentials: [{ id: card.id, credentialNumber: 4242 }],
      });
      await ok(204, "PUT", `/holders/${holder.id}`, {
        firstName: "Dee",
        lastName: "Parker",
        email: "dee@example.com",
        partition: "p-default",
        enabled: true,
        activeDate: null,
        expireDate: null,
        pin: null,
        duressPin: null,
      });
      expect((await ok(200, "GET", `/holders/${holder.id}`)).body.lastName).toBe("Parker");
      const group = (await ok(200, "POST", "/groups", { name: "Night Owls" })).body;
      await ok(204, "PUT", `/holders/${holder.id}/groups/${group.id}`);
      expect((await ok(200, "GET", `/groups/${group.id}/holders`)).body.map((h: { id: string }) => h.id)).toEqual([
        holder.id,
      ]);
      const scan = { deviceId: "d-fan", at: AT, credential: { credentialNumber: 4242, facilityCode: 10 } };
      expect((await ok(200, "POST", "/decisions", scan)).body).toMatchObject({ outcome: "denied" });
      const rule = (
        await ok(201, "POST", "/rules", {
          type: "door",
          groupId: group.id,
          devices: ["d-fan"],
          startTime: "00:00:00",
          stopTime: "24:00:00",
          recurring: WEEK,
        })
      ).body;
      expect((await ok(200, "POST", "/decisions", scan)).body).toMatchObject({
        outcome: "allowed",
        holderId: holder.id,
        activeRuleId: rule.id,
      });
      expect((await ok(200, "GET", `/rsop/holders?ids=${holder.id}&at=${AT}`)).body).toBeDefined();
      const dev = (
        await ok(200, "POST", "/cloud-nodes/n-main/devices", {
          name: "Annex Door",
          type: "ioDevice",
          publicIcon: "fan",
          connection: "x-spare",
          port: 7,
        })
      ).body;
      await ok(204, "DELETE", `/cloud-nodes/n-main/devices/${dev.id}`);
      await ok(200, "POST", "/partitions/p-default/custom-fields/single", { id: "badge", type: "string" });
      const conflict = await refused(server, call, 409, "DELETE", `/groups/${group.id}`);
      expect(JSON.stringify(conflict.issues)).toContain(rule.id);
      await ok(204, "DELETE", `/rules/${rule.id}`);
      await ok(204, "DELETE", `/groups/${group.id}`);
      await ok(204, "DELETE", `/holders/${holder.id}/credentials/${card.id}`);
      await ok(204, "DELETE", `/holders/${holder.id}`);
      await refused(server, call, 404, "GET", `/holders/${holder.id}`);
      const health = await fetch(`${server.url}/healthz`);
      expect(health.headers.get("x-rsop-revision")).toBe(String(accepted.length));
      expect(await health.json()).toMatchObject({
        status: "ok",
        systemId: SYSTEM_ID,
        seq: accepted.length,
        revision: accepted.length,
        latest: accepted.length,
        lag: 0,
      });

      await server.close();
      const stored = await inspectPg(url);
      expect(stored.changes.map((c) => ({ method: c.operation.method, path: c.operation.path }))).toEqual(accepted);
      expect(stored.changes.map((c) => c.seq)).toEqual(stored.changes.map((_, i) => i + 1));
    },
  );

  pgTest(
    `refusals: 400 with every issue and its path, 401, 404, 405, 409, 413, 415; nothing stored (PG1, PG3)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const { server, call } = await startReplica(url, building(), { maxBodyBytes: 2048 });
      const invalid = await refused(server, call, 400, "POST", "/holders", {});
      expect(invalid.issues.map((i) => i.path).sort()).toEqual(["body.firstName", "body.lastName"]);
      await refused(server, call, 400, "POST", "/rules", {
        type: "door",
        groupId: "g-nope",
        devices: ["d-fan"],
        startTime: "25:00:00",
        stopTime: "24:00:00",
        recurring: WEEK,
      });
      await refused(server, call, 404, "PUT", "/holders/h-nope", { firstName: "A", lastName: "B" });
      await refused(server, call, 409, "POST", "/groups", { name: "Staff" });
      await refused(server, call, 409, "DELETE", "/cloud-nodes/n-main");
      await refused(server, call, 405, "PATCH", "/holders", { firstName: "A" });
      await refused(server, call, 415, "POST", "/holders", "firstName=A", { "content-type": "text/plain" });
      await refused(server, call, 413, "POST", "/holders", { firstName: "A".repeat(4000), lastName: "B" });
      await refused(server, call, 400, "POST", "/holders", "{not json", { "content-type": "application/json" });
      const anonymous = await fetch(`${server.url}/${SYSTEM_ID}/holders`, {
        method: "POST",
        body: "{}",
        headers: { "content-type": "application/json" },
      });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get("x-rsop-revision")).toBe("0");
      // PG3: a Min-Revision that is not a whole number is refused.
      const bad = await refused(server, call, 400, "GET", "/groups", undefined, { "x-rsop-min-revision": "soon" });
      expect(bad.issues).toEqual([{ path: "headers.x-rsop-min-revision", message: '"soon" is not a whole number.' }]);
      expect(server.durable.seq()).toBe(0);
      await server.close();
      expect((await inspectPg(url)).changes).toEqual([]);
    },
  );
});

describe("rsop serve --store postgres://: restart and import", () => {
  pgTest(
    `a restart gives back the state before: snapshot and decisions (snapshots every 3 changes, the rest replayed)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const first = await startReplica(url, building(), { snapshotEvery: 3 });
      const call = first.call;
      const made: string[] = [];
      for (let k = 0; k < 5; k++) {
        const h = (await call("POST", "/holders", { firstName: `P${k}`, lastName: "Q", groups: ["g-staff"] })).body.id;
        expect(
          (
            await call("POST", `/holders/${h}/credentials`, {
              types: ["card"],
              credentialNumber: 7000 + k,
              facilityCode: 10,
            })
          ).status,
        ).toBe(201);
        made.push(h);
      }
      expect((await call("PUT", `/holders/${made[0]}/groups/g-night`)).status).toBe(204);
      expect((await call("DELETE", `/holders/${made[4]}`)).status).toBe(204);
      expect(first.server.durable.seq()).toBe(12);
      const before = JSON.parse(JSON.stringify(first.server.durable.target.live.snapshot));
      const scans = [...made, "h-ann"].flatMap((_, k) =>
        ["d-front", "d-lift", "d-side"].map((deviceId) => ({
          deviceId,
          at: AT,
          credential: { credentialNumber: 7000 + k, facilityCode: 10 },
        })),
      );
      const decisionsBefore = (await call("POST", "/decisions", scans)).body;
      // The snapshot writer (the only replica here) stores snapshots off the write path: wait for the last.
      await eventually("the snapshot of change 12", async () => (await inspectPg(url)).snapshots.includes(12));
      await first.server.close();
      expect((await inspectPg(url)).snapshots).toEqual([9, 12]);

      const again = await startReplica(url);
      expect(
        again.lines.some((l) =>
          l.startsWith(`loaded ${url}: system ${SYSTEM_ID} at change 12 (snapshot of change 12, 0 changes replayed`),
        ),
      ).toBe(true);
      expect(JSON.parse(JSON.stringify(again.server.durable.target.live.snapshot))).toEqual(before);
      expect((await again.call("POST", "/decisions", scans)).body).toEqual(decisionsBefore);
      expect(decisionsBefore.some((d: { outcome: string }) => d.outcome === "allowed")).toBe(true);
    },
  );

  pgTest(`start-up replays the log after the latest snapshot${SKIP_NOTE}`, async () => {
    const url = await freshDatabase();
    const first = await startReplica(url, building());
    for (let k = 0; k < 4; k++) expect((await first.call("POST", "/groups", { name: `G${k}` })).status).toBe(200);
    const before = JSON.parse(JSON.stringify(first.server.durable.target.live.snapshot));
    await first.server.close();
    await sql(url, "DELETE FROM rsop_snapshots WHERE seq > 0");
    const again = await startReplica(url);
    expect(again.lines.some((l) => l.includes("at change 4 (snapshot of change 0, 4 changes replayed"))).toBe(true);
    expect(JSON.parse(JSON.stringify(again.server.durable.target.live.snapshot))).toEqual(before);
  });

  pgTest(
    `an empty database needs a snapshot to serve one system (the command line starts a service there instead, T57); --system on a loaded database is ignored with a notice; --panel on a system database is refused; --data and --store exclude each other (PG4)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      // The command line starts a service on an empty database instead (T57, test/service/postgresService.test.ts).
      await expect(startDataServer({ storeUrl: url, token: TOKEN, log: () => {} })).rejects.toThrow(
        "the database is empty: give a snapshot to import (--system FILE or --panel FILE)",
      );
      const first = await startReplica(url, building());
      expect((await first.call("POST", "/groups", { name: "Later" })).status).toBe(200);
      await first.server.close();
      const again = await startReplica(url, { not: "read" });
      expect(again.lines).toContain(
        `building.json ignored: it only seeds an empty database, and ${url} already holds the 2.0 system (change 1)`,
      );
      await again.server.close();
      const panel = resolve(__dirname, "../../examples/panel.json");
      const r = await run(["serve", "--store", url, "--panel", panel, "--token", TOKEN, "--port", "0"]);
      expect(r).toMatchObject({
        code: 1,
        stderr: expect.stringContaining(
          `${url} holds a 2.0 system; serve it with --system FILE or with neither, not with --panel`,
        ),
      });
      expect(await run(["serve", "--store", url, "--data", "x.db", "--token", TOKEN])).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("give at most one of --data FILE.db and --store postgres://"),
      });
      expect(await run(["serve", "--store", "mysql://x/y", "--token", TOKEN])).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("--store takes a PostgreSQL URL"),
      });
      const unreachable = await run([
        "serve",
        "--store",
        "postgres://rsop@127.0.0.1:1/nothing",
        "--token",
        TOKEN,
        "--port",
        "0",
      ]);
      // CE2: the reason in words, not the driver's errno.
      expect(unreachable).toMatchObject({
        code: 1,
        stderr: expect.stringContaining(
          "rsop: cannot use the database postgres://rsop@127.0.0.1:1/nothing: nothing answers at that host and port (is PostgreSQL running there?)",
        ),
      });
      const missing = new URL(url);
      missing.pathname = "/no_such_database";
      expect(await run(["serve", "--store", missing.href, "--token", TOKEN, "--port", "0"])).toMatchObject({
        code: 1,
        stderr: expect.stringContaining("the database does not exist (create it first: createdb)"),
      });
    },
  );

  pgTest(`a password in the URL never reaches the log (PG1)${SKIP_NOTE}`, async () => {
    const url = (await freshDatabase()).replace("rsop@", "rsop:s3cret-pw@");
    const { lines, server } = await startReplica(url, building());
    await server.close();
    expect(lines.join("\n")).not.toContain("s3cret-pw");
    expect(lines.join("\n")).toContain("rsop:***@");
  });
});

describe("replicas on one database", () => {
  pgTest(
    `read-your-writes: a write on replica A, then a read on B with X-Rsop-Min-Revision sees it (PG3)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const a = await startReplica(url, building());
      // B polls rarely: without the header it could answer before the notification arrives.
      const b = await startReplica(url, undefined, { pollMs: 60_000 });
      for (let k = 0; k < 20; k++) {
        const w = await a.call("POST", "/holders", {
          firstName: `R${k}`,
          lastName: "W",
          credentials: [{ types: ["card"], credentialNumber: 9100 + k, facilityCode: 3 }],
        });
        expect(w.status).toBe(201);
        const revision = w.headers.get("x-rsop-revision")!;
        expect(revision).toBe(String(k + 1));
        const r = await b.call("GET", `/holders/${w.body.id}`, undefined, { "x-rsop-min-revision": revision });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.firstName).toBe(`R${k}`);
        expect(Number(r.headers.get("x-rsop-revision"))).toBeGreaterThanOrEqual(k + 1);
        const d = await b.call(
          "POST",
          "/decisions",
          { deviceId: "d-front", at: AT, credential: { credentialNumber: 9100 + k, facilityCode: 3 } },
          { "x-rsop-min-revision": revision },
        );
        expect(d.body.holderId).toBe(w.body.id);
      }
    },
  );

  pgTest(
    `a revision no replica has: 503 with Retry-After once the bounded wait is over (PG3)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const a = await startReplica(url, building(), { minRevisionWaitMs: 200 });
      const r = await a.call("GET", "/groups", undefined, { "x-rsop-min-revision": "5" });
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.headers.get("x-rsop-revision")).toBe("0");
      expect(r.body.error.message).toContain("has not yet applied revision 5 (it is at 0)");
      // Reached: answered.
      for (let k = 0; k < 5; k++) expect((await a.call("POST", "/groups", { name: `W${k}` })).status).toBe(200);
      expect((await a.call("GET", "/groups", undefined, { "x-rsop-min-revision": "5" })).status).toBe(200);
    },
  );

  pgTest(
    `conflicting writes on two replicas at once: exactly one is accepted, the other refused (409); both replicas end equal (PG2)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const a = await startReplica(url, building());
      const b = await startReplica(url);
      for (let k = 0; k < 25; k++) {
        const body = {
          firstName: "Dup",
          lastName: `${k}`,
          credentials: [{ types: ["card"], credentialNumber: 60_000 + k, facilityCode: 10 }],
        };
        const [ra, rb] = await Promise.all([a.call("POST", "/holders", body), b.call("POST", "/holders", body)]);
        expect([ra.status, rb.status].sort(), JSON.stringify([ra.body, rb.body])).toEqual([201, 409]);
        // Group names are unique too: the same on both.
        const [ga, gb] = await Promise.all([
          a.call("POST", "/groups", { name: `Same ${k}` }),
          b.call("POST", "/groups", { name: `Same ${k}` }),
        ]);
        expect([ga.status, gb.status].sort()).toEqual([200, 409]);
      }
      const last = Math.max(a.server.durable.seq(), b.server.durable.seq());
      expect(last).toBe(50);
      await eventually(
        "both replicas at change 50",
        () => a.server.durable.seq() === 50 && b.server.durable.seq() === 50,
      );
      expect(JSON.parse(JSON.stringify(a.server.durable.target.live.snapshot))).toEqual(
        JSON.parse(JSON.stringify(b.server.durable.target.live.snapshot)),
      );
      const holders = (
        a.server.durable.target.live.snapshot as unknown as { holders: { lastName: string; firstName: string }[] }
      ).holders.filter((h) => h.firstName === "Dup");
      expect(holders).toHaveLength(25);
    },
  );

  pgTest(
    `a write that loses the race for its sequence number is checked again after catching up: refused when it now conflicts, stored at the next number when not (PG2)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      // No poll and no notification for the change below: A learns of it only by losing the race.
      const a = await startReplica(url, building(), { pollMs: 60_000 });
      const holder = {
        id: "h-other",
        firstName: "Other",
        lastName: "Replica",
        groups: [],
        credentials: [{ id: "c-other", types: ["card"], credentialNumber: 61_000, facilityCode: 10 }],
      };
      const index = (a.server.durable.target.live.snapshot as unknown as { holders: unknown[] }).holders.length;
      await sql(url, "INSERT INTO rsop_changes (seq, time, operation, patches) VALUES (1, $1, $2, $3)", [
        new Date().toISOString(),
        JSON.stringify({ method: "POST", path: "/holders", body: holder }),
        JSON.stringify([{ op: "add", path: ["holders", index], value: holder }]),
      ]);
      expect(a.server.durable.seq()).toBe(0);
      const same = await a.call("POST", "/holders", {
        firstName: "Same",
        lastName: "Card",
        credentials: [{ types: ["card"], credentialNumber: 61_000, facilityCode: 10 }],
      });
      expect(same.status, JSON.stringify(same.body)).toBe(409);
      expect(same.body.error.issues[0].path).toBe("body.credentials[0].credentialNumber");
      expect(same.headers.get("x-rsop-revision")).toBe("1");
      expect(await (await fetch(`${a.server.url}/healthz`)).json()).toMatchObject({ revision: 1, racesLost: 1 });
      const other = await a.call("POST", "/holders", {
        firstName: "Next",
        lastName: "Card",
        credentials: [{ types: ["card"], credentialNumber: 61_001, facilityCode: 10 }],
      });
      expect(other.status).toBe(201);
      expect(other.headers.get("x-rsop-revision")).toBe("2");
      expect((await inspectPg(url)).changes.map((c) => [c.seq, c.operation.body.firstName])).toEqual([
        [1, "Other"],
        [2, "Next"],
      ]);
    },
  );

  pgTest(
    `writes that queue on one replica are checked in order and stored together (group commit); a write refused for one stored in the same append is refused, never both accepted (PG2)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const a = await startReplica(url, building());
      const bodies = Array.from({ length: 24 }, (_, k) => ({
        firstName: "Batch",
        lastName: `${k}`,
        credentials: [{ types: ["card"], credentialNumber: 62_000 + (k % 12), facilityCode: 10 }],
      }));
      const answers = await Promise.all(bodies.map((b) => a.call("POST", "/holders", b)));
      for (let n = 0; n < 12; n++) {
        const statuses = answers.filter((_, k) => k % 12 === n).map((r) => r.status);
        expect(statuses.sort(), `card ${62_000 + n}`).toEqual([201, 409]);
      }
      const revisions = answers.filter((r) => r.status === 201).map((r) => Number(r.headers.get("x-rsop-revision")));
      expect(revisions.sort((x, y) => x - y)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      const rows = await sql<{ seq: string; stored_at: Date }>(
        url,
        "SELECT seq, stored_at FROM rsop_changes ORDER BY seq",
      );
      expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      // Rows of one transaction share its start time: fewer distinct times than rows means appends of several writes.
      expect(new Set(rows.map((r) => r.stored_at.getTime())).size).toBeLessThan(12);
    },
  );

  pgTest(
    `a change appended without a notification (missed) is caught up by sequence number (the poll) (PG5)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const a = await startReplica(url, building(), { pollMs: 300 });
      // Another writer's change, stored without NOTIFY: the poll finds it.
      const store = await openPostgresStore(url);
      const op = { method: "POST", path: "/groups", body: { name: "Silent" } };
      const patches = [{ op: "add", path: ["groups", 3], value: { id: "g-silent", name: "Silent" } }];
      await sql(url, "INSERT INTO rsop_changes (seq, time, operation, patches) VALUES (1, $1, $2, $3)", [
        new Date().toISOString(),
        JSON.stringify(op),
        JSON.stringify(patches),
      ]);
      await store.close();
      await eventually("replica A applied the silent change", () => a.server.durable.seq() === 1);
      expect((await a.call("GET", "/groups/g-silent")).body).toMatchObject({ id: "g-silent", name: "Silent" });
      expect(await (await fetch(`${a.server.url}/healthz`)).json()).toMatchObject({ revision: 1, lag: 0 });
    },
  );

  pgTest(
    `one snapshot writer at a time, elected by an advisory lock; another takes over when it goes (PG5)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const a = await startReplica(url, building(), { snapshotEvery: 2 });
      const b = await startReplica(url, undefined, { snapshotEvery: 2 });
      const health = async (r: { server: RunningDataServer }) =>
        (await (await fetch(`${r.server.url}/healthz`)).json()) as { snapshotWriter: boolean; revision: number };
      await eventually(
        "one writer elected",
        async () => [await health(a), await health(b)].filter((h) => h.snapshotWriter).length === 1,
      );
      const [writer, other] = (await health(a)).snapshotWriter ? [a, b] : [b, a];
      for (let k = 0; k < 4; k++) expect((await other.call("POST", "/groups", { name: `S${k}` })).status).toBe(200);
      await eventually("the writer stored the snapshot of change 4", async () =>
        (await inspectPg(url)).snapshots.includes(4),
      );
      expect((await health(other)).snapshotWriter).toBe(false);
      await writer.server.close();
      for (let k = 4; k < 8; k++) expect((await other.call("POST", "/groups", { name: `S${k}` })).status).toBe(200);
      await eventually("the other replica took over and stored the snapshot of change 8", async () =>
        (await inspectPg(url)).snapshots.includes(8),
      );
      expect((await health(other)).snapshotWriter).toBe(true);
    },
  );

  pgTest(
    `compaction: changes a kept snapshot covers and older than the retention go; a replica behind them stops following and says so (PG6)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const a = await startReplica(url, building());
      const b = await startReplica(url, undefined, { pollMs: 60_000 });
      for (let k = 0; k < 6; k++) expect((await a.call("POST", "/groups", { name: `C${k}` })).status).toBe(200);
      await eventually("B at change 6", () => b.server.durable.seq() === 6);
      // A store with no retention, keeping 2 snapshots: after snapshots at 3 and 6, changes 1…3 go.
      const store = await openPostgresStore(url, { retainMs: 0, keepSnapshots: 2 });
      const snap = a.server.durable.target.live.snapshot;
      await store.snapshot(3, snap, new Date().toISOString()); // (content unused below: only the log is checked)
      await store.snapshot(6, snap, new Date().toISOString());
      expect((await inspectPg(url)).changes.map((c) => c.seq)).toEqual([4, 5, 6]);
      expect((await inspectPg(url)).snapshots).toEqual([3, 6]);
      expect(await store.changesAfter(0, 10)).toBeNull();
      expect((await store.changesAfter(3, 10))!.map((c) => c.seq)).toEqual([4, 5, 6]);
      await store.close();
      // With the default retention (a day) nothing this young goes.
      const keepDay = await openPostgresStore(url);
      await keepDay.snapshot(6, snap, new Date().toISOString());
      expect((await inspectPg(url)).changes.map((c) => c.seq)).toEqual([4, 5, 6]);
      await keepDay.close();
      // B stops hearing of changes (stored without NOTIFY), and they are compacted before it polls.
      const silent = (seq: number, index: number) =>
        sql(url, "INSERT INTO rsop_changes (seq, time, operation, patches) VALUES ($1, $2, $3, $4)", [
          seq,
          new Date().toISOString(),
          JSON.stringify({ method: "POST", path: "/groups", body: { name: `Silent ${seq}` } }),
          JSON.stringify([
            { op: "add", path: ["groups", index], value: { id: `g-silent-${seq}`, name: `Silent ${seq}` } },
          ]),
        ]);
      for (let seq = 7; seq <= 9; seq++) await silent(seq, seq + 2);
      const keepOne = await openPostgresStore(url, { retainMs: 0, keepSnapshots: 1 });
      await keepOne.snapshot(8, snap, new Date().toISOString());
      await keepOne.close();
      expect((await inspectPg(url)).changes.map((c) => c.seq)).toEqual([9]);
      const asked = await b.call("GET", "/groups", undefined, { "x-rsop-min-revision": "9" });
      expect(asked.status).toBe(503);
      const health = await (await fetch(`${b.server.url}/healthz`)).json();
      expect(health).toMatchObject({
        status: "failed",
        revision: 6,
        error: "the log no longer holds change 7 (compacted while this replica was behind)",
      });
      expect(b.lines.some((l) => l.includes("must be restarted"))).toBe(true);
      const write = await b.call("POST", "/groups", { name: "Refused" });
      expect(write.status).toBe(503);
      expect(b.server.durable.seq()).toBe(6);
    },
  );
});

describe("rsop serve --store postgres:// --panel", () => {
  pgTest(
    `1.0 routes under /api on two replicas: creates (each stored before it shows), two at once on both replicas get different ids, a refusal, restart keeps them (PG2)${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const panel = JSON.parse(readFileSync(resolve(__dirname, "../../examples/panel.json"), "utf8"));
      const a = await startReplica(url, undefined, {
        initial: { kind: "panel", file: "panel.json", read: async () => panel },
      });
      const b = await startReplica(url);
      const callA = caller(a.server.url, "");
      const callB = caller(b.server.url, "");
      const g = await callA("POST", "/api/groups", { name: "Durable Group" });
      expect(g.status).toBe(200);
      expect(g.headers.get("x-rsop-revision")).toBe("1");
      // Both replicas create at once: integer ids are the next free one, so the two creates conflict on it; both end stored, with different ids.
      const [x, y] = await Promise.all([
        callA("POST", "/api/groups", { name: "From A" }),
        callB("POST", "/api/groups", { name: "From B" }),
      ]);
      expect([x.status, y.status]).toEqual([200, 200]);
      expect(x.body.id).not.toBe(y.body.id);
      expect((await callA("POST", "/api/groups", {})).status).toBe(400);
      const seen = await callB("GET", `/api/groups/${g.body.id}`, undefined, { "x-rsop-min-revision": "3" });
      expect(seen.body).toMatchObject({ id: g.body.id, name: "Durable Group" });
      await eventually("both at change 3", () => a.server.durable.seq() === 3 && b.server.durable.seq() === 3);
      expect(JSON.parse(JSON.stringify(a.server.durable.target.live.snapshot))).toEqual(
        JSON.parse(JSON.stringify(b.server.durable.target.live.snapshot)),
      );
      await a.server.close();
      await b.server.close();
      const again = await startReplica(url);
      expect(again.lines.some((l) => l.startsWith(`loaded ${url}: 1.0 panel at change 3`))).toBe(true);
      const names = (await caller(again.server.url, "")("GET", "/api/groups?per_page=100")).body.map(
        (x: { name: string }) => x.name,
      );
      expect(names).toEqual(expect.arrayContaining(["Durable Group", "From A", "From B"]));
    },
  );
});
