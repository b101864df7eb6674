// Issue 18: a migration as seed 000 §3 runs it, over real HTTP on a real SQLite file — preflight,
// initiate (refused on errors, and on warnings unless accepted), six tasks watched one at a time,
// both systems read-only while staged, complete (the 2.0 system is served, the 1.0 routes are gone)
// or roll back after each task (the panel is writable again), a failing task, the id mappings, and
// restarts: in-process after a completed migration, and SIGKILL of `rsop serve` in the middle of one.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { buildCli, serveChild } from "../support/cliChild.js";
import { MIGRATION_TASKS } from "../../src/service/migrationJob.js";
import type { RunningDataServer } from "../../src/adapters/http/startDataServer.js";
import { smallPanel } from "../live/panelFixture.js";
import { type Answer, dataDir, expectError, inspect, startData } from "./dataSupport.js";
import { TOKEN, removeTempDirs, tempDir } from "./fixtures.js";

afterAll(removeTempDirs);

const SN = "SN-TEST-1";
type Call = (method: string, path: string, body?: unknown) => Promise<Answer>;

function callerOf(url: string): Call {
  return async (method, path, body) => {
    const init: RequestInit = {
      method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
    };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await fetch(`${url}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
  };
}

/** A gate per task: the migration waits at each task (Processing) until the test lets it go. */
function gates() {
  const waiting: { task: string; go: () => void; fail: (e: Error) => void }[] = [];
  const arrived: (() => void)[] = [];
  return {
    pace: (task: string) =>
      new Promise<void>((go, fail) => {
        waiting.push({ task, go, fail });
        arrived.splice(0).forEach((f) => f());
      }),
    /** Waits until the migration waits at a task; answers its name. */
    async next(): Promise<string> {
      while (waiting.length === 0) await new Promise<void>((r) => arrived.push(r));
      return waiting[0]!.task;
    },
    release() {
      waiting.shift()!.go();
    },
    failNext(message: string) {
      waiting.shift()!.fail(new Error(message));
    },
  };
}

async function servePanel(
  db: string,
  pace?: (task: string) => Promise<void>,
  initial = true,
): Promise<{ server: RunningDataServer; call: Call; lines: string[] }> {
  const { server, lines } = await startData(db, undefined, {
    ...(initial ? { initial: { kind: "panel" as const, file: "panel.json", read: async () => smallPanel() } } : {}),
    ...(pace !== undefined ? { migrationPace: pace } : {}),
  });
  return { server, call: callerOf(server.url), lines };
}

/**
 * Rolls back while the migration waits at a task's gate: once the record says RolledBack (the
 * rollback then waits for the task in progress), the gate opens and the task stops.
 */
async function rollbackAtGate(call: Call, g: ReturnType<typeof gates>): Promise<Answer> {
  const answer = call("POST", `/api/migration/${SN}/rollback`);
  for (let i = 0; i < 500 && (await call("GET", `/api/migration/${SN}`)).body.status !== "RolledBack"; i++)
    await new Promise((r) => setTimeout(r, 10));
  g.release();
  return answer;
}

/** A refusal in the one error shape (expectError); answers its message and issues. */
const refusal = (r: Answer, status: number) => {
  expectError(r, status, "a migration request");
  expect(Object.keys(r.body.error).sort()).toEqual(["issues", "message", "status"]);
  return r.body.error as { message: string; issues: { path: string; message: string }[] };
};

describe("a migration over HTTP (seed 000 §3, §4)", () => {
  test("preflight, initiate, six tasks one at a time, staged read-only, complete: the 2.0 system is served and stored; a restart keeps it", async () => {
    const { db } = dataDir();
    const g = gates();
    const { server, call, lines } = await servePanel(db, g.pace);

    // Preflight: the seed's members; the fixture's group metadata is dropped, so it warns.
    const pre = await call("GET", `/api/migration/${SN}/preflight-check`);
    expect(pre.status).toBe(200);
    expect(pre.body).toMatchObject({
      ok: false,
      warnings: { integrations: [] },
      errors: { softwareVersion: {}, personalInfoMissing: false, invalidDevice: [] },
    });
    // Exactly the seed's members (M6): what the library finds beyond them is listed by a refused initiate.
    expect(Object.keys(pre.body)).toEqual(["ok", "warnings", "errors"]);
    refusal(await call("GET", "/api/migration/SN-OTHER/preflight-check"), 404);

    // Warnings need acceptWarnings; a bad body names each problem.
    const warned = refusal(await call("POST", "/api/migration/initiate", { cloudNodeSN: SN }), 409);
    expect(warned.message).toContain("acceptWarnings");
    expect(warned.issues.some((i) => i.path.startsWith("preflight.extensions.warnings.droppedFields["))).toBe(true);
    expect(
      refusal(await call("POST", "/api/migration/initiate", { cloudNodeSN: 7, extra: true }), 400)
        .issues.map((i) => i.path)
        .sort(),
    ).toEqual(["body.cloudNodeSN", "body.extra"]);
    expect(refusal(await call("POST", "/api/migration/initiate", {}), 400).issues.map((i) => i.path)).toEqual([
      "body.cloudNodeSN",
    ]);
    refusal(await call("POST", "/api/migration/initiate", { panel_id: "SN-OTHER", acceptWarnings: true }), 404);
    expect(server.durable.seq()).toBe(0);

    // A people report of the panel (it goes with the panel when the migration completes, M10).
    expect((await call("POST", "/api/reports/cloudpeople/generate", { output: ["id", "Last Name"] })).status).toBe(204);

    // Initiate (the parameter table's key): Pending, every task Pending.
    const started = await call("POST", "/api/migration/initiate", { panel_id: SN, acceptWarnings: true });
    expect(started.status).toBe(200);
    expect(Object.keys(started.body)).toEqual(["id", "name", "legacyOuId", "status", "createdAt", "tasks"]);
    expect(started.body).toMatchObject({ id: SN, legacyOuId: SN, status: "Pending" });
    expect(started.body.tasks).toEqual(MIGRATION_TASKS.map((taskId) => ({ taskId, status: "Pending" })));
    refusal(await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true }), 409);

    // One task at a time: earlier Completed, the current Processing, later Pending; systemId only after IMPORT_SYSTEM_DATA.
    for (const [k, type] of MIGRATION_TASKS.entries()) {
      expect(await g.next()).toBe(type);
      const s = (await call("GET", `/api/migration/${SN}`)).body;
      expect(s.status).toBe("Processing");
      expect(s.tasks.map((t: { status: string }) => t.status)).toEqual(
        MIGRATION_TASKS.map((_, j) => (j < k ? "Completed" : j === k ? "Processing" : "Pending")),
      );
      expect(s.tasks[k].startedAt).toEqual(expect.any(String));
      // A task not yet started has no timestamps; systemId is absent until IMPORT_SYSTEM_DATA has Completed (M8).
      expect(s.tasks.slice(k + 1).every((t: object) => !("startedAt" in t) && !("updatedAt" in t))).toBe(true);
      expect("systemId" in s).toBe(k > MIGRATION_TASKS.indexOf("IMPORT_SYSTEM_DATA"));
      // The panel is read-only from initiate on; its reads answer.
      const w = refusal(await call("POST", "/api/groups", { name: `During ${type}` }), 409);
      expect(w.message).toContain("read-only");
      expect((await call("GET", "/api/groups")).status).toBe(200);
      refusal(await call("POST", `/api/migration/${SN}/complete`), 409);
      g.release();
    }
    let status = (await call("GET", `/api/migration/${SN}`)).body;
    for (let i = 0; status.status !== "Staged" && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await call("GET", `/api/migration/${SN}`)).body;
    }
    expect(status).toMatchObject({ status: "Staged", legacyOuId: SN, backupUrl: `/api/migration/${SN}/backup` });
    expect(typeof status.ouId).toBe("string");
    const { systemId, cloudNodeId } = status;
    expect(
      status.tasks.every(
        (t: { status: string; updatedAt: string | null }) => t.status === "Completed" && t.updatedAt !== null,
      ),
    ).toBe(true);
    expect((await call("GET", status.backupUrl)).body).toEqual(
      JSON.parse(JSON.stringify(server.durable.target.live.snapshot)),
    );

    // Staged: the 2.0 system answers reads, refuses writes; the id mappings with the type filter.
    const holders = await call("GET", `/${systemId}/holders`);
    expect(holders.status).toBe(200);
    expect(holders.body.map((h: { firstName: string }) => h.firstName).sort()).toEqual(["Ann", "Bob"]);
    expect(refusal(await call("POST", `/${systemId}/groups`, { name: "Too early" }), 409).message).toContain(
      "read-only",
    );
    // Its reports: a preview answers (it stores nothing), generating is refused, none is listed.
    expect((await call("POST", `/${systemId}/reports/holders/preview`, { output: ["firstName"] })).body).toEqual([
      { firstName: "Ann" },
      { firstName: "Bob" },
    ]);
    refusal(await call("POST", `/${systemId}/reports/holders/generate`, { output: ["firstName"] }), 409);
    expect((await call("GET", `/${systemId}/reports/holders/requests`)).body).toEqual([]);
    const mappings = await call("GET", `/${systemId}/id-mapping/${cloudNodeId}?type=holder,group`);
    expect(mappings.status).toBe(200);
    expect(mappings.body.map((m: { type: string; legacyId: number }) => `${m.type}:${m.legacyId}`)).toEqual([
      "group:1",
      "group:2",
      "holder:1",
      "holder:2",
    ]);
    expect(mappings.body[0]).toMatchObject({ serialNumber: SN, systemId });
    expect(
      (await call("GET", `/${systemId}/id-mapping/${cloudNodeId}`)).body.some(
        (m: { type: string }) => m.type === "cardFormat",
      ),
    ).toBe(true);
    expect(
      refusal(await call("GET", `/${systemId}/id-mapping/${cloudNodeId}?type=holder,nope`), 400).issues[0]!.path,
    ).toBe("query.type");
    refusal(await call("GET", `/${systemId}/id-mapping/${SN}`), 404);

    // Complete: 204; the 1.0 routes are gone, the 2.0 system is writable and stored.
    const done = await call("POST", `/api/migration/${SN}/complete`);
    expect(done.status).toBe(204);
    expect((await call("GET", `/api/migration/${SN}`)).body.status).toBe("Completed");
    refusal(await call("GET", "/api/groups"), 404);
    refusal(await call("POST", `/api/migration/${SN}/rollback`), 409);
    refusal(await call("POST", `/api/migration/${SN}/complete`), 409);
    expect((await call("GET", `/${systemId}/reports/holders/requests`)).body).toEqual([]);
    const created = await call("POST", `/${systemId}/groups`, { name: "After migration" });
    expect(created.status).toBe(200);
    expect(lines.some((l) => l.includes(`migration of panel ${SN} completed`))).toBe(true);
    const decisions = await call("POST", `/${systemId}/decisions`, {
      deviceId:
        mappings.body.length > 0
          ? (await call("GET", `/${systemId}/id-mapping/${cloudNodeId}?type=device`)).body[0].id
          : "",
      at: "2026-04-15T12:15:00Z",
      pin: "2468",
    });
    expect(decisions.status).toBe(200);
    expect(decisions.body.outcome).toBe("allowed");
    await server.close();
    const stored = inspect(db);
    expect(stored.integrity).toBe("ok");
    expect(stored.changes.map((c) => `${c.operation.method} ${c.operation.path}`)).toEqual([
      `POST /api/migration/${SN}/complete`,
      "POST /groups",
    ]);

    // Restart: the database holds the 2.0 system; the mappings and the migration's record stay.
    const again = await startData(db);
    expect(again.lines.some((l) => l.startsWith(`loaded ${db}: system ${systemId} at change 2`))).toBe(true);
    const call2 = callerOf(again.server.url);
    expect((await call2("GET", `/${systemId}/groups`)).body.map((x: { name: string }) => x.name)).toContain(
      "After migration",
    );
    expect((await call2("GET", `/${systemId}/id-mapping/${cloudNodeId}?type=holder`)).body).toHaveLength(2);
    expect((await call2("GET", `/api/migration/${SN}`)).body.status).toBe("Completed");
  });

  test.each(MIGRATION_TASKS.map((t, k) => [t, k] as const))(
    "rollback while %s is Processing: RolledBack, nothing staged, the panel writable; a new migration may start",
    async (type, k) => {
      const { db } = dataDir();
      const g = gates();
      const { server, call } = await servePanel(db, g.pace);
      expect((await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true })).status).toBe(
        200,
      );
      for (let j = 0; j < k; j++) {
        await g.next();
        g.release();
      }
      expect(await g.next()).toBe(type);
      const systemId = ((await call("GET", `/api/migration/${SN}`)).body.systemId as string | undefined) ?? null;
      expect((await rollbackAtGate(call, g)).status).toBe(204);
      const s = (await call("GET", `/api/migration/${SN}`)).body;
      expect(s.status).toBe("RolledBack");
      expect(s).not.toHaveProperty("systemId");
      expect(s.tasks.slice(k + 1).every((t: { status: string }) => t.status === "Pending")).toBe(true);
      if (systemId !== null) refusal(await call("GET", `/${systemId}/holders`), 404);
      expect((await call("POST", "/api/groups", { name: `After rollback ${k}` })).status).toBe(200);
      refusal(await call("POST", `/api/migration/${SN}/rollback`), 409);
      refusal(await call("POST", `/api/migration/${SN}/complete`), 409);
      // A new migration starts from the panel as it is now.
      expect(
        (await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true })).body.status,
      ).toBe("Pending");
      await g.next();
      expect((await rollbackAtGate(call, g)).status).toBe(204);
      await server.close();
      expect(inspect(db).changes.map((c) => c.operation.path)).toEqual(["/api/groups"]);
    },
  );

  test("rollback of a staged migration; a task that fails leaves the panel as it was, writable, and says why", async () => {
    const { db } = dataDir();
    const g = gates();
    const { server, call, lines } = await servePanel(db, g.pace);
    await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true });
    for (const _ of MIGRATION_TASKS) {
      await g.next();
      g.release();
    }
    let s = (await call("GET", `/api/migration/${SN}`)).body;
    for (let i = 0; s.status !== "Staged" && i < 100; i++)
      s = (await new Promise((r) => setTimeout(r, 20)), (await call("GET", `/api/migration/${SN}`)).body);
    expect(s.status).toBe("Staged");
    expect((await call("GET", `/${s.systemId}/holders`)).status).toBe(200);
    expect((await call("POST", `/api/migration/${SN}/rollback`)).status).toBe(204);
    refusal(await call("GET", `/${s.systemId}/holders`), 404);
    refusal(await call("GET", `/${s.systemId}/id-mapping/${s.cloudNodeId}`), 404);

    const before = server.durable.target.live.snapshot;
    await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true });
    await g.next();
    g.release();
    await g.next();
    g.release();
    expect(await g.next()).toBe("CREATE_SYSTEM");
    g.failNext("the disk is full");
    for (let i = 0; s.status !== "Failed" && i < 100; i++)
      s = (await new Promise((r) => setTimeout(r, 20)), (await call("GET", `/api/migration/${SN}`)).body);
    // The seed's shape has no error field (M11): the reason is in the server's log (below).
    expect(s.status).toBe("Failed");
    expect(s).not.toHaveProperty("error");
    expect(s).not.toHaveProperty("systemId");
    expect(s.tasks.map((t: { status: string }) => t.status)).toEqual([
      "Completed",
      "Completed",
      "Failed",
      "Pending",
      "Pending",
      "Pending",
    ]);
    expect(lines).toContain(`migration of panel ${SN} failed in CREATE_SYSTEM: the disk is full`);
    expect(server.durable.target.live.snapshot).toBe(before);
    expect((await call("POST", "/api/groups", { name: "After a failure" })).status).toBe(200);
    refusal(await call("POST", `/api/migration/${SN}/rollback`), 409);
  });

  test("errors in the preflight refuse initiate (409 naming each), with nothing started", async () => {
    const { db } = dataDir();
    const panel = smallPanel();
    panel.devices[0].propDelay = 30;
    const { server, lines } = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => panel },
    });
    const call = callerOf(server.url);
    const r = refusal(await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true }), 409);
    expect(r.message).toContain("errors");
    expect(r.issues.map((i) => i.path)).toContain("preflight.errors.invalidDevice[0]");
    refusal(await call("GET", `/api/migration/${SN}`), 404);
    expect((await call("POST", "/api/groups", { name: "Still writable" })).status).toBe(200);
    expect(lines.some((l) => l.includes("initiated"))).toBe(false);
    const anonymous = await fetch(`${server.url}/api/migration/${SN}/preflight-check`);
    expect(anonymous.status).toBe(401);
  });
});

describe("a restart in the middle of a migration", () => {
  test("`rsop serve` killed with SIGKILL while a task is Processing: the restart resumes from that task and stages the system", async () => {
    const cli = await buildCli("migration-test");
    const dir = tempDir();
    const panelFile = join(dir, "panel.json");
    writeFileSync(panelFile, JSON.stringify(smallPanel()));
    const db = join(dir, "data.db");
    // Each task waits 400 ms once Processing: the kill lands in the middle of one.
    const first = await serveChild(cli, ["--data", db, "--panel", panelFile, "--port", "0"], {
      RSOP_MIGRATION_TASK_DELAY_MS: "400",
    });
    const call = callerOf(first.url);
    expect((await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true })).status).toBe(200);
    let s = (await call("GET", `/api/migration/${SN}`)).body;
    while (s.tasks.findIndex((t: { status: string }) => t.status === "Processing") < 2)
      s = (await new Promise((r) => setTimeout(r, 50)), (await call("GET", `/api/migration/${SN}`)).body);
    const cut = s.tasks.findIndex((t: { status: string }) => t.status === "Processing");
    const exited = new Promise((r) => first.child.once("exit", r));
    first.child.kill("SIGKILL");
    await exited;

    const second = await serveChild(cli, ["--data", db, "--port", "0"]);
    const call2 = callerOf(second.url);
    let after = (await call2("GET", `/api/migration/${SN}`)).body;
    expect(after.tasks.slice(0, cut).every((t: { status: string }) => t.status === "Completed")).toBe(true);
    for (let i = 0; after.status !== "Staged" && i < 200; i++)
      after = (await new Promise((r) => setTimeout(r, 25)), (await call2("GET", `/api/migration/${SN}`)).body);
    expect(after.status).toBe("Staged");
    expect((await call2("GET", `/${after.systemId}/holders`)).body).toHaveLength(2);
    refusal(await call2("POST", "/api/groups", { name: "Still read-only" }), 409);
    expect((await call2("POST", `/api/migration/${SN}/complete`)).status).toBe(204);
    expect((await call2("GET", `/${after.systemId}/holders`)).status).toBe(200);
  }, 120_000);
});
