// The migration routes' answers in the accounts API's shapes, field for field (M6, M8, M11), one
// test per former deviation: initiate's `id` is the serial number and its tasks carry `taskId`; the
// status read has no `error` (the log says why) and omits what is not known yet instead of null; the
// preflight has no `extensions`; `legacyOuId` is the panel's 1.0 organization; a record an earlier
// version stored is answered in the same shape; and `rsop serve --data m.db --panel p.json`, the
// command line that served the panel, starts again after `complete` and serves the 2.0 system.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { MIGRATION_TASKS, MigrationJob, type MigrationStore, statusAnswer } from "../../src/service/migrationJob.js";
import { buildCli, serveChild } from "../support/cliChild.js";
import { type Answer, dataDir, startData } from "../http/dataSupport.js";
import { TOKEN, removeTempDirs, tempDir } from "../http/fixtures.js";
import { building } from "../live/fixture.js";
import { smallPanel } from "../live/panelFixture.js";

afterAll(removeTempDirs);

const SN = "SN-TEST-1";
type Call = (method: string, path: string, body?: unknown) => Promise<Answer>;

function callerOf(url: string): Call {
  return async (method, path, body) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
  };
}

/** A `--data` server on a new database seeded with the small panel; `pace` as MigrationJobOptions.pace. */
async function servePanel(extra: { pace?: (task: string) => Promise<void>; organizationId?: string } = {}) {
  const { db } = dataDir();
  const { server, lines } = await startData(db, undefined, {
    initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
    ...(extra.pace !== undefined ? { migrationPace: extra.pace } : {}),
    ...(extra.organizationId !== undefined ? { organizationId: extra.organizationId } : {}),
  });
  return { server, lines, db, call: callerOf(server.url) };
}

/** Polls the status read (bounded) until it says `status`. */
async function until(call: Call, status: string): Promise<Record<string, any>> {
  let s = (await call("GET", `/api/migration/${SN}`)).body;
  for (let i = 0; s.status !== status && i < 200; i++) {
    await new Promise((r) => setTimeout(r, 20));
    s = (await call("GET", `/api/migration/${SN}`)).body;
  }
  expect(s.status).toBe(status);
  return s;
}

const initiate = (call: Call) => call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true });

describe("the migration routes answer the accounts API's shapes (M6, M8)", () => {
  test("M8: initiate answers id = the cloud node's serial number, not a random id", async () => {
    const { call } = await servePanel();
    const r = await initiate(call);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(SN);
    expect(Object.keys(r.body)).toEqual(["id", "name", "legacyOuId", "status", "createdAt", "tasks"]);
    expect((await call("GET", `/api/migration/${SN}`)).body.id).toBe(SN);
  });

  test("M8: tasks carry taskId (not type): initiate {taskId, status}; the status read adds startedAt, updatedAt", async () => {
    const { call } = await servePanel();
    expect((await initiate(call)).body.tasks).toEqual(MIGRATION_TASKS.map((taskId) => ({ taskId, status: "Pending" })));
    const staged = await until(call, "Staged");
    expect(staged.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([...MIGRATION_TASKS]);
    for (const t of staged.tasks) {
      expect(Object.keys(t)).toEqual(["taskId", "status", "startedAt", "updatedAt"]);
      expect(t).toEqual({
        taskId: t.taskId,
        status: "Completed",
        startedAt: expect.any(String),
        updatedAt: t.updatedAt,
      });
    }
  });

  test("M8: the status read is the seed's Migration and nothing else; a field not known yet is omitted, never null", async () => {
    // Each task waits at a gate until the test opens it.
    const waiting: (() => void)[] = [];
    const pace = () => new Promise<void>((go) => waiting.push(go));
    const { call } = await servePanel({ pace });
    await initiate(call);
    for (let i = 0; waiting.length === 0 && i < 500; i++) await new Promise((r) => setTimeout(r, 5));
    // EXPORT_LEGACY_DATA is Processing: nothing is known yet but the migration itself and the first task's times.
    const first = (await call("GET", `/api/migration/${SN}`)).body;
    expect(Object.keys(first)).toEqual(["id", "name", "legacyOuId", "status", "createdAt", "tasks"]);
    expect(Object.keys(first.tasks[0])).toEqual(["taskId", "status", "startedAt", "updatedAt"]);
    for (const t of first.tasks.slice(1)) expect(Object.keys(t)).toEqual(["taskId", "status"]);
    // Every task let through: staged, every field of the seed's Migration, in its order.
    const release = setInterval(() => waiting.splice(0).forEach((go) => go()), 5);
    try {
      const staged = await until(call, "Staged");
      expect(Object.keys(staged)).toEqual([
        "id",
        "name",
        "legacyOuId",
        "status",
        "createdAt",
        "backupUrl",
        "ouId",
        "systemId",
        "cloudNodeId",
        "tasks",
      ]);
      for (const k of ["backupUrl", "ouId", "systemId", "cloudNodeId"]) expect(staged[k]).toEqual(expect.any(String));
    } finally {
      clearInterval(release);
    }
  });

  test("M11: a failed migration's status has no error field; the server's log says why, naming the panel and the task", async () => {
    const pace = async (task: string) => {
      if (task === "CREATE_SYSTEM") throw new Error("the disk is full");
    };
    const { call, lines } = await servePanel({ pace });
    await initiate(call);
    const failed = await until(call, "Failed");
    expect(failed).not.toHaveProperty("error");
    expect(Object.keys(failed)).toEqual([
      "id",
      "name",
      "legacyOuId",
      "status",
      "createdAt",
      "backupUrl",
      "ouId",
      "tasks",
    ]);
    expect(failed.tasks.map((t: { status: string }) => t.status)).toEqual([
      "Completed",
      "Completed",
      "Failed",
      "Pending",
      "Pending",
      "Pending",
    ]);
    expect(lines).toContain(`migration of panel ${SN} failed in CREATE_SYSTEM: the disk is full`);
    // A refused rollback repeats it to the client that tries.
    const refused = await call("POST", `/api/migration/${SN}/rollback`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("the disk is full");
  });

  test("M6: the preflight check answers ok, warnings and errors only (no extensions); a refused initiate lists what ok counted", async () => {
    const { call } = await servePanel();
    const pre = await call("GET", `/api/migration/${SN}/preflight-check`);
    expect(pre.status).toBe(200);
    expect(Object.keys(pre.body)).toEqual(["ok", "warnings", "errors"]);
    expect(Object.keys(pre.body.warnings)).toEqual(["integrations"]);
    expect(Object.keys(pre.body.errors)).toEqual([
      "softwareVersion",
      "integrations",
      "personalInfoMissing",
      "controllerOffline",
      "controllerVersion",
      "legacyDevice",
      "invalidDevice",
    ]);
    // The fixture's group metadata is dropped: not ok, and initiate without acceptWarnings says why.
    expect(pre.body.ok).toBe(false);
    const refused = await call("POST", "/api/migration/initiate", { cloudNodeSN: SN });
    expect(refused.status).toBe(409);
    expect(
      refused.body.error.issues.some((i: { path: string }) =>
        i.path.startsWith("preflight.extensions.warnings.droppedFields["),
      ),
    ).toBe(true);
  });

  test("M8: legacyOuId is the panel's 1.0 organization (the server's organization id; the serial number by default)", async () => {
    const { call } = await servePanel({ organizationId: "ou-legacy-7" });
    expect((await initiate(call)).body.legacyOuId).toBe("ou-legacy-7");
    expect((await call("GET", `/api/migration/${SN}`)).body.legacyOuId).toBe("ou-legacy-7");
  });

  test("M8: the document declares the seed shapes strictly (an answer with another field does not match it)", async () => {
    const { call } = await servePanel();
    const doc = (await call("GET", "/openapi.json")).body;
    const schemaOf = (path: string, method: string) => {
      const s = doc.paths[path][method].responses["200"].content["application/json"].schema;
      return s.$ref === undefined ? s : doc.components.schemas[s.$ref.split("/").pop()];
    };
    const status = schemaOf("/api/migration/{panelId}", "get");
    expect(status.additionalProperties).toBe(false);
    expect(Object.keys(status.properties).sort()).toEqual(
      [
        "id",
        "name",
        "legacyOuId",
        "status",
        "createdAt",
        "backupUrl",
        "ouId",
        "systemId",
        "cloudNodeId",
        "tasks",
      ].sort(),
    );
    expect(Object.keys(status.properties.tasks.items.properties).sort()).toEqual(
      ["taskId", "status", "startedAt", "updatedAt"].sort(),
    );
    expect(schemaOf("/api/migration/initiate", "post").additionalProperties).toBe(false);
    const preflight = schemaOf("/api/migration/{panelId}/preflight-check", "get");
    expect(Object.keys(preflight.properties)).toEqual(["ok", "warnings", "errors"]);
    expect(preflight.additionalProperties).toBe(false);
  });

  test("M8: a record an earlier version stored (random id, serial in legacyOuId, tasks' type, error) is answered in the seed shape", () => {
    const none = async () => undefined;
    const store: MigrationStore = {
      saveMigration: none,
      saveBackup: none,
      loadBackup: async () => null,
      saveStaged: none,
      loadStaged: async () => null,
    };
    const old = {
      id: "0b9e0c4e-3f7a-4c55-9d1e-000000000001",
      name: "Migration of Annex",
      legacyOuId: SN,
      status: "Failed",
      createdAt: "2026-04-15T12:00:00.000Z",
      tasks: MIGRATION_TASKS.map((type, k) => ({
        type,
        status: k === 0 ? "Failed" : "Pending",
        startedAt: k === 0 ? "2026-04-15T12:00:01.000Z" : null,
        updatedAt: k === 0 ? "2026-04-15T12:00:02.000Z" : null,
      })),
      backupUrl: null,
      ouId: null,
      systemId: null,
      cloudNodeId: null,
      error: "the disk is full",
    };
    const job = new MigrationJob({ store, panel: () => smallPanel() }, { record: old as never, plannedSystemId: null });
    expect(job.record?.runId).toBe(old.id);
    expect(statusAnswer(job.status(SN))).toEqual({
      id: SN,
      name: "Migration of Annex",
      legacyOuId: SN,
      status: "Failed",
      createdAt: "2026-04-15T12:00:00.000Z",
      tasks: MIGRATION_TASKS.map((taskId, k) =>
        k === 0
          ? { taskId, status: "Failed", startedAt: "2026-04-15T12:00:01.000Z", updatedAt: "2026-04-15T12:00:02.000Z" }
          : { taskId, status: "Pending" },
      ),
    });
  });
});

describe("a restart after a completed migration (M11)", () => {
  test("`rsop serve --data m.db --panel p.json` starts again after complete: it serves the 2.0 system and says --panel is ignored", async () => {
    const cli = await buildCli("migration-restart");
    const dir = tempDir();
    const panelFile = join(dir, "p.json");
    writeFileSync(panelFile, JSON.stringify(smallPanel()));
    const db = join(dir, "m.db");
    const args = ["--data", db, "--panel", panelFile, "--port", "0"];

    const first = await serveChild(cli, args);
    const call = callerOf(first.url);
    expect((await initiate(call)).status).toBe(200);
    const { systemId } = await until(call, "Staged");
    expect((await call("POST", `/api/migration/${SN}/complete`)).status).toBe(204);
    const exited = new Promise<number | null>((r) => first.child.once("exit", (code) => r(code)));
    first.child.kill("SIGTERM");
    expect(await exited).toBe(0);

    // The same command line: it listens, serving the migrated system, and tells why the panel file is not read.
    const second = await serveChild(cli, args);
    expect(second.log()).toContain(
      `--panel ${panelFile} ignored: panel ${SN} was migrated to 2.0 system ${systemId}, which ${db} holds and serves now`,
    );
    expect(second.log()).toContain(`serving system ${systemId} from ${db} on ${second.url}`);
    const call2 = callerOf(second.url);
    const holders = await call2("GET", `/${systemId}/holders`);
    expect(holders.status).toBe(200);
    expect(holders.body).toHaveLength(2);
    expect((await call2("GET", "/api/groups")).status).toBe(404);
    expect((await call2("GET", `/api/migration/${SN}`)).body.status).toBe("Completed");
    expect((await call2("POST", `/${systemId}/groups`, { name: "After the restart" })).status).toBe(200);
  }, 120_000);

  test("a database holding a 2.0 system no migration made still refuses --panel", async () => {
    const { db, dir } = dataDir();
    const { server } = await startData(db, building());
    await server.close();
    await expect(
      startData(db, undefined, {
        initial: { kind: "panel", file: join(dir, "p.json"), read: async () => smallPanel() },
      }),
    ).rejects.toThrow(/holds a 2\.0 system; serve it with --system FILE or with neither, not with --panel/);
  });
});
