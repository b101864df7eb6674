// Migration across tenants (T70–T77), over HTTP on a real SQLite file: a panel registered to a
// legacy customer migrates into a new multi-site customer under the same dealer (events through the
// registry's outbox), its tasks one at a time; a restart in the middle resumes and reuses the
// customer; complete retires the panel and serves the 2.0 system with its id mappings; rollback
// removes what the migration made; a panel the caller does not reach is 404.
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { parseTokens } from "../../src/service/auth/tokens.js";
import { MIGRATION_TASKS } from "../../src/service/migrationJob.js";
import type { OrgEvent } from "../../src/events/orgEvents.js";
import { smallPanel } from "../live/panelFixture.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";
import { type MigrationService, startMigrationService } from "./migrationSupport.js";

afterAll(removeTempDirs);

const ROOT = "root-admin-token-0123456789";
const OTHER = "other-dealer-admin-0123456789";
const READER = "dealer-reporter-0123456789ab";
const SN = "SN-TEST-1";

interface Answer {
  status: number;
  body: any;
}

let running: MigrationService[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
});

function caller(s: MigrationService, token = ROOT) {
  return async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${s.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
  };
}

function ok(r: Answer, status: number, what: string): any {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

/** A gate per task: the migration waits at each task (Processing) until the test lets it go. */
function gates() {
  const waiting: { task: string; go: () => void }[] = [];
  const arrived: (() => void)[] = [];
  return {
    pace: (task: string) =>
      new Promise<void>((go) => {
        waiting.push({ task, go });
        arrived.splice(0).forEach((f) => f());
      }),
    async next(): Promise<string> {
      while (waiting.length === 0) await new Promise<void>((r) => arrived.push(r));
      return waiting[0]!.task;
    },
    release() {
      waiting.shift()!.go();
    },
  };
}

interface World {
  file: string;
  root: string;
  dealer: string;
  other: string;
  legacy: string;
}

/** A dealer with a legacy customer "Legacy A" and its panel SN, and another dealer; tokens for each. */
async function world(pace?: (task: string) => Promise<void>): Promise<{ s: MigrationService; w: World }> {
  const file = join(tempDir(), "service.db");
  let s = await startMigrationService(file, { rootToken: ROOT });
  const call = caller(s);
  const root = (ok(await call("GET", "/api/organizations/mine"), 200, "mine") as { id: string }[])[0]!.id;
  const dealer = ok(await call("POST", `/api/organizations/${root}/children`, { name: "Dealer" }), 201, "dealer").id;
  const other = ok(await call("POST", `/api/organizations/${root}/children`, { name: "Other" }), 201, "other").id;
  const legacy = ok(await call("POST", `/api/ous/${dealer}/children`, { name: "Legacy A" }), 201, "legacy").id;
  ok(await call("POST", `/api/ous/${legacy}/panels`, { id: SN, name: "Annex", import: smallPanel() }), 201, "panel");
  await s.close();
  const w = { file, root, dealer, other, legacy };
  s = await restart(w, pace);
  return { s, w };
}

async function restart(w: World, pace?: (task: string) => Promise<void>, events?: OrgEvent[]) {
  const parsed = parseTokens({
    [OTHER]: { role: "admin", organizations: [w.other] },
    [READER]: { role: "reporter", partitions: ["p1"], organizations: [w.dealer] },
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const s = await startMigrationService(w.file, {
    rootToken: ROOT,
    tokens: parsed.entries,
    ...(pace !== undefined ? { pace } : {}),
    ...(events !== undefined ? { events } : {}),
  });
  running.push(s);
  return s;
}

const topics = (events: readonly OrgEvent[]) => events.map((e) => e.body.topic);

async function untilStatus(call: ReturnType<typeof caller>, status: string): Promise<any> {
  let r = (await call("GET", `/api/migration/${SN}`)).body;
  for (let i = 0; r.status !== status && i < 200; i++) {
    await new Promise((done) => setTimeout(done, 10));
    r = (await call("GET", `/api/migration/${SN}`)).body;
  }
  expect(r.status).toBe(status);
  return r;
}

describe("migration of a registered panel (T70–T77)", () => {
  test("initiate makes the customer and the staged system; tasks in order; complete retires the panel", async () => {
    const g = gates();
    const { s, w } = await world(g.pace);
    const call = caller(s);
    // Preflight and initiate as in the single-system server.
    expect(ok(await call("GET", `/api/migration/${SN}/preflight-check`), 200, "preflight")).toHaveProperty("errors");
    ok(await call("POST", "/api/migration/initiate", { cloudNodeSN: SN }), 409, "warnings");
    ok(await caller(s, READER)("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true }), 403, "r");
    const started = ok(
      await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true }),
      200,
      "initiate",
    );
    // Seed shape (M8): id is the serial number, legacyOuId the legacy organization the panel is registered in.
    expect(started).toMatchObject({ id: SN, legacyOuId: w.legacy, status: "Pending" });
    for (const [k, type] of MIGRATION_TASKS.entries()) {
      expect(await g.next()).toBe(type);
      const r = ok(await call("GET", `/api/migration/${SN}`), 200, "status");
      expect(r.tasks.map((t: { status: string }) => t.status)).toEqual(
        MIGRATION_TASKS.map((_, j) => (j < k ? "Completed" : j === k ? "Processing" : "Pending")),
      );
      // The panel answers reads and refuses writes and its deletion.
      expect((await call("GET", `/panels/${SN}/api/groups`)).status).toBe(200);
      expect(
        ok(await call("POST", `/panels/${SN}/api/groups`, { name: `During ${type}` }), 409, "w").error.message,
      ).toContain("read-only");
      ok(await call("DELETE", `/api/panels/${SN}`), 409, "delete");
      g.release();
    }
    const staged = await untilStatus(call, "Staged");
    const { systemId, cloudNodeId, ouId } = staged;

    // The customer: a multi-site child of the dealer, named after the legacy customer (taken: with the serial).
    const customer = s.registry.organization(ouId)!;
    expect(customer).toMatchObject({ parent: w.dealer, type: "multi-site", name: `Legacy A (${SN})` });
    expect(topics(s.events)).toEqual(["organization.created", "ou.created"]);
    expect(s.events[0]!.body).toMatchObject({ id: ouId, parent: w.dealer });
    expect(s.registry.tenantByKey(systemId)).toMatchObject({ kind: "system", state: "staged", organization: ouId });

    // The staged system answers reads and refuses writes; its id mappings.
    const holders = ok(await call("GET", `/${systemId}/holders`), 200, "holders");
    expect(holders.map((h: { firstName: string }) => h.firstName).sort()).toEqual(["Ann", "Bob"]);
    expect(ok(await call("POST", `/${systemId}/groups`, { name: "Early" }), 409, "staged w").error.message).toContain(
      "read-only",
    );
    const mapped = ok(await call("GET", `/${systemId}/id-mapping/${cloudNodeId}?type=holder`), 200, "mappings");
    expect(mapped.map((m: { legacyId: number }) => m.legacyId)).toEqual([1, 2]);
    ok(await caller(s, OTHER)("GET", `/${systemId}/id-mapping/${cloudNodeId}`), 404, "other's mapping");

    ok(await caller(s, READER)("POST", `/api/migration/${SN}/complete`), 403, "reader complete");
    expect((await call("POST", `/api/migration/${SN}/complete`)).status).toBe(204);
    // The panel is retired from its legacy organization; the 2.0 system is active and writable.
    ok(await call("GET", `/api/panels/${SN}`), 404, "retired panel");
    expect(ok(await call("GET", `/api/ous/${w.legacy}/panels`), 200, "panels")).toEqual([]);
    ok(await call("GET", `/api/migration/${SN}`), 404, "status after");
    expect(topics(s.events)).toEqual(["organization.created", "ou.created", "panel.deleted"]);
    expect(s.events[2]!.body).toMatchObject({ id: SN, ou: w.legacy });
    expect(s.registry.tenantByKey(systemId)!.state).toBe("active");
    ok(await call("POST", `/${systemId}/groups`, { name: "After migration" }), 200, "write after");
    const after = ok(await call("GET", `/${systemId}/id-mapping/${cloudNodeId}?type=holder`), 200, "mappings");
    expect(after).toEqual(mapped);

    // After a restart: the same, and nothing resumes.
    await s.close();
    running = running.filter((r) => r !== s);
    const again = await restart(w);
    const call2 = caller(again);
    ok(await call2("GET", `/api/panels/${SN}`), 404, "retired after restart");
    ok(await call2("GET", `/${systemId}/holders`), 200, "system after restart");
    ok(await call2("GET", `/${systemId}/id-mapping/${cloudNodeId}`), 200, "mappings after restart");
  });

  test("a restart in the middle resumes the migration and reuses the customer", async () => {
    const g = gates();
    const { s, w } = await world(g.pace);
    const call = caller(s);
    ok(await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true }), 200, "initiate");
    for (const type of MIGRATION_TASKS.slice(0, 3)) {
      expect(await g.next()).toBe(type);
      g.release();
    }
    // Stopped while TRANSFORM_SCHEMA is Processing: the customer and the staged system exist.
    expect(await g.next()).toBe("TRANSFORM_SCHEMA");
    const mid = ok(await call("GET", `/api/migration/${SN}`), 200, "mid");
    const customers = s.registry.children(w.dealer).filter((o) => o.type === "multi-site");
    expect(customers.map((o) => o.id)).toEqual([mid.ouId]);
    // The process stops with the task at its gate (never released).
    await s.close();
    running = running.filter((r) => r !== s);

    const events: OrgEvent[] = [];
    const s2 = await restart(w, undefined, events);
    const call2 = caller(s2);
    const staged = await untilStatus(call2, "Staged");
    expect(staged.ouId).toBe(mid.ouId);
    expect(staged.id).toBe(mid.id);
    // Nothing made twice: one customer, its one staged system, no new organization events.
    expect(
      s2.registry
        .children(w.dealer)
        .filter((o) => o.type === "multi-site")
        .map((o) => o.id),
    ).toEqual([mid.ouId]);
    expect(s2.registry.tenantsOf(mid.ouId).map((t) => [t.key, t.state])).toEqual([[staged.systemId, "staged"]]);
    expect(topics(events)).toEqual([]);
    ok(await call2("GET", `/${staged.systemId}/holders`), 200, "staged reads");

    // Staged, then a restart again: still staged, and it completes.
    await s2.close();
    running = running.filter((r) => r !== s2);
    const s3 = await restart(w, undefined, events);
    const call3 = caller(s3);
    await untilStatus(call3, "Staged");
    expect((await call3("POST", `/api/migration/${SN}/complete`)).status).toBe(204);
    ok(await call3("GET", `/api/panels/${SN}`), 404, "retired");
    expect(topics(events)).toEqual(["panel.deleted"]);
  });

  test("rollback removes the customer and the staged system; the panel is writable; a re-initiate reuses the id", async () => {
    const { s, w } = await world();
    const call = caller(s);
    ok(await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true }), 200, "initiate");
    const staged = await untilStatus(call, "Staged");
    ok(await caller(s, READER)("POST", `/api/migration/${SN}/rollback`), 403, "reader rollback");
    expect((await call("POST", `/api/migration/${SN}/rollback`)).status).toBe(204);
    expect((await call("GET", `/api/migration/${SN}`)).body.status).toBe("RolledBack");
    expect(s.registry.organization(staged.ouId)).toBeUndefined();
    expect(s.registry.tenantByKey(staged.systemId)).toBeUndefined();
    ok(await call("GET", `/${staged.systemId}/holders`), 404, "staged gone");
    expect(topics(s.events)).toEqual(["organization.created", "ou.created", "organization.deleted", "ou.deleted"]);
    ok(await call("POST", `/panels/${SN}/api/groups`, { name: "Writable again" }), 200, "panel write");
    ok(await call("GET", `/api/panels/${SN}`), 200, "panel kept");
    expect(s.registry.children(w.dealer).map((o) => o.name)).toEqual(["Legacy A"]);

    // Initiated again: the same customer id (derived from the serial number), a new system.
    ok(await call("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true }), 200, "again");
    const second = await untilStatus(call, "Staged");
    expect(second.ouId).toBe(staged.ouId);
    expect(second.systemId).not.toBe(staged.systemId);
    const groups = ok(await call("GET", `/${second.systemId}/groups`), 200, "groups");
    expect(groups.some((x: { name: string }) => x.name === "Writable again")).toBe(true);
  });

  test("a panel the caller does not reach is 404 on every migration route", async () => {
    const { s } = await world();
    const other = caller(s, OTHER);
    ok(await other("POST", "/api/migration/initiate", { cloudNodeSN: SN, acceptWarnings: true }), 404, "initiate");
    ok(await other("GET", `/api/migration/${SN}/preflight-check`), 404, "preflight");
    ok(await other("GET", `/api/migration/${SN}`), 404, "status");
    ok(await other("POST", `/api/migration/${SN}/complete`), 404, "complete");
    ok(await other("POST", `/api/migration/${SN}/rollback`), 404, "rollback");
    ok(await caller(s)("POST", "/api/migration/initiate", { cloudNodeSN: "SN-NONE", acceptWarnings: true }), 404, "?");
    ok(await caller(s)("GET", `/api/migration/${SN}`), 404, "never migrated");
    expect(s.events).toEqual([]);
  });
});
