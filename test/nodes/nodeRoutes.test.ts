// The service side of cloud nodes (semantics N1–N19) over a real service server on 127.0.0.1 over a
// SQLite file, its clock injected: node tokens (who may make one), heartbeats (whose token, what
// body), the status answered on the cloud-node reads as the node acknowledges, goes quiet and fails,
// the hardware list before and after a report, and all of it after a restart.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { parseTokens } from "../../src/service/auth/tokens.js";
import { createUser } from "../../src/service/identity/accounts.js";
import { KIND, type PermissionRecord } from "../../src/service/identity/records.js";
import { openSigningKeys } from "../../src/service/identity/signingKeys.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";

const ROOT = "root-admin-token-0123456789";
const ADMIN = "customer-admin-token-0123456789";
const INTEGRATOR = "customer-integrator-0123456789";
const MANAGER = "customer-manager-0123456789ab";
const REPORTER = "customer-reporter-0123456789a";
const OTHER = "other-customer-admin-012345678";
const NODE = "node-chicago-main";
const SECOND = "node-london-annex";

let clock = Date.parse("2026-06-01T08:00:00.000Z");
let server: RunningServiceServer;
let file = "";
const ids = { a: "", b: "", sysA: "", sysB: "" };

interface Answer {
  status: number;
  body: any;
}

async function call(token: string | null, method: string, path: string, body?: unknown): Promise<Answer> {
  const r = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text === "" ? undefined : JSON.parse(text) };
}

function ok(r: Answer, status: number, what: string): any {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

const paths = (r: Answer): string[] => (r.body?.error?.issues ?? []).map((i: { path: string }) => i.path);

async function start(tokens?: Record<string, unknown>): Promise<void> {
  const parsed = tokens === undefined ? undefined : parseTokens(tokens);
  if (parsed !== undefined && !parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  server = await startServiceServer({
    dataFile: file,
    token: ROOT,
    ...(parsed?.ok ? { tokens: { file: "tokens.json", entries: parsed.entries } } : {}),
    port: 0,
    host: "127.0.0.1",
    now: () => clock,
    log: () => {},
  });
}

const tokenFile = () => ({
  [ADMIN]: { role: "admin", organizations: [ids.a] },
  [INTEGRATOR]: { role: "integrator", organizations: [ids.a] },
  [MANAGER]: { role: "manager", partitions: ["p-any"], organizations: [ids.a] },
  [REPORTER]: { role: "reporter", partitions: ["p-any"], organizations: [ids.a] },
  [OTHER]: { role: "admin", organizations: [ids.b] },
});

/** The system's revision (its durable log's), as a node would have applied it. */
async function revisionOf(systemId: string): Promise<number> {
  const lease = await server.tenants.acquire(server.registry.tenantByKey(systemId)!.n);
  try {
    return lease.durable.seq();
  } finally {
    lease.release();
  }
}

const nodePath = (node = NODE, sys = ids.sysA) => `/${sys}/cloud-nodes/${node}`;
const beat = (token: string, body: unknown, node = NODE, sys = ids.sysA) =>
  call(token, "POST", `${nodePath(node, sys)}/node/heartbeat`, body);
const statusOfNode = async (node = NODE) => {
  const one = ok(await call(ADMIN, "GET", nodePath(node)), 200, "cloud node");
  return { syncStatus: one.syncStatus, connectionStatus: one.connectionStatus };
};

beforeAll(async () => {
  file = join(tempDir(), "service.db");
  await start();
  const rootId = (ok(await call(ROOT, "GET", "/api/organizations/mine"), 200, "mine") as { id: string }[])[0]!.id;
  const dealer = ok(await call(ROOT, "POST", `/api/organizations/${rootId}/children`, { name: "Dealer" }), 201, "d").id;
  for (const key of ["a", "b"] as const) {
    const made = ok(
      await call(ROOT, "POST", `/api/organizations/${dealer}/children`, {
        name: `Customer ${key}`,
        import: { ...(BUILDING_JSON as object), systemId: randomUUID() },
      }),
      201,
      key,
    );
    ids[key] = made.id;
    ids[key === "a" ? "sysA" : "sysB"] = made.systemId;
  }
  await server.close();
  await start(tokenFile());
}, 60_000);

afterAll(async () => {
  await server?.close();
  removeTempDirs();
});

let nodeToken = "";
let secondToken = "";

describe("N2: node tokens", () => {
  test("admin and integrator get a token; manager and reporter 403; another customer's admin 404", async () => {
    for (const who of [ADMIN, INTEGRATOR]) {
      const got = ok(await call(who, "POST", `${nodePath()}/token`), 200, "token");
      expect(got.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      nodeToken = got.token;
    }
    for (const who of [MANAGER, REPORTER]) ok(await call(who, "POST", `${nodePath()}/token`), 403, "role");
    const other = await call(OTHER, "POST", `${nodePath()}/token`);
    expect(other.status).toBe(404);
    expect(paths(other)).toEqual(["system_id"]);
    expect((await call(null, "POST", `${nodePath()}/token`)).status).toBe(401);
    const unknown = await call(ADMIN, "POST", `${nodePath("no-such-node")}/token`);
    expect([unknown.status, paths(unknown)]).toEqual([404, ["cloud_node_id"]]);
    secondToken = ok(await call(ADMIN, "POST", `${nodePath(SECOND)}/token`), 200, "second").token;
  });

  test("a new token replaces the node's earlier one", async () => {
    const first = ok(await call(ADMIN, "POST", `${nodePath()}/token`), 200, "first").token;
    const second = ok(await call(ADMIN, "POST", `${nodePath()}/token`), 200, "second").token;
    expect((await beat(first, { revision: 0 })).status).toBe(401);
    ok(await beat(second, { revision: 0 }), 204, "beat");
    nodeToken = second;
  });
});

describe("N2: signed tokens", () => {
  test("a system token of a user holding integrator gets a node token; manager 403; its ID token 401", async () => {
    const keys = openSigningKeys(server.registry, { now: () => clock });
    const tokens = new Map<string, { id: string; system: string }>();
    for (const role of ["integrator", "manager"] as const) {
      const user = await createUser(server.registry, {
        email: `${role}@example.test`,
        password: "correct horse battery",
      });
      const value: PermissionRecord = {
        id: randomUUID(),
        organization: ids.a,
        email: user.email,
        name: role,
        role,
        partitions: role === "manager" ? {} : null,
        userId: user.id,
        created: new Date(clock).toISOString(),
        accepted: null,
      };
      await server.registry.updateRecords(() => ({
        changes: [{ op: "putRecord", kind: KIND.permission, id: value.id, value, ifVersion: 0 }],
        result: undefined,
      }));
      const id = await keys.sign({ sub: user.id, aud: "node-client", email: user.email }, server.url, 300);
      const system = ok(await call(id, "POST", `/api/systems/${ids.sysA}/token`), 200, "system token").token;
      tokens.set(role, { id, system });
    }
    ok(await call(tokens.get("integrator")!.system, "POST", `${nodePath(SECOND)}/token`), 200, "integrator");
    ok(await call(tokens.get("manager")!.system, "POST", `${nodePath(SECOND)}/token`), 403, "manager");
    expect((await call(tokens.get("integrator")!.id, "POST", `${nodePath(SECOND)}/token`)).status).toBe(401);
    expect((await beat(tokens.get("integrator")!.id, { revision: 0 })).status).toBe(401);
    ok(await beat(tokens.get("integrator")!.system, { revision: 0 }), 403, "a person's system token");
    const elsewhere = await call(tokens.get("integrator")!.system, "POST", `${nodePath(NODE, ids.sysB)}/token`);
    expect([elsewhere.status, paths(elsewhere)]).toEqual([404, ["system_id"]]);
    secondToken = ok(await call(ADMIN, "POST", `${nodePath(SECOND)}/token`), 200, "second again").token;
  });
});

describe("N3: who may report a heartbeat", () => {
  test("a wrong token 401; another node's 404 at the node; the node's on another system 404; a person's 403", async () => {
    expect((await beat("not-a-token-at-all", { revision: 0 })).status).toBe(401);
    expect((await call(null, "POST", `${nodePath()}/node/heartbeat`, { revision: 0 })).status).toBe(401);
    const other = await beat(secondToken, { revision: 0 });
    expect([other.status, paths(other)]).toEqual([404, ["cloud_node_id"]]);
    const elsewhere = await beat(nodeToken, { revision: 0 }, NODE, ids.sysB);
    expect([elsewhere.status, paths(elsewhere)]).toEqual([404, ["system_id"]]);
    ok(await beat(ADMIN, { revision: 0 }), 403, "admin's token");
    const outOfReach = await beat(OTHER, { revision: 0 });
    expect([outOfReach.status, paths(outOfReach)]).toEqual([404, ["system_id"]]);
    // A node token is nothing else: not a reader of its system.
    expect((await call(nodeToken, "GET", `/${ids.sysA}/holders`)).status).toBe(401);
  });

  test("bad bodies: every issue at its body path", async () => {
    const cases: [unknown, string[]][] = [
      [{}, ["body.revision"]],
      [{ revision: -1 }, ["body.revision"]],
      [{ revision: 1.5, intervalSeconds: 0 }, ["body.revision", "body.intervalSeconds"]],
      [{ revision: 0, intervalSeconds: 301, transfer: "yes" }, ["body.intervalSeconds", "body.transfer"]],
      [{ revision: 0, failure: { revision: 1 } }, ["body.failure.message"]],
      [{ revision: 0, extra: 1 }, ["body"]],
      [{ revision: 0, hardware: [{ id: "h1", type: "toaster" }] }, ["body.hardware[0].type"]],
      [{ revision: 0, hardware: [{ id: "h1", type: "usb", colour: "red" }] }, ["body.hardware[0]"]],
      [{ revision: 0, hardware: [{ id: "h1", type: "usb", batteryLevel: "full" }] }, ["body.hardware[0].batteryLevel"]],
      [
        { revision: 0, hardware: Array.from({ length: 1001 }, (_, i) => ({ id: `h${i}`, type: "usb" })) },
        ["body.hardware"],
      ],
      [{ revision: 0, wireless: [{ id: "w1", nodes: [] }] }, ["body.wireless[0].links"]],
      [
        { revision: 0, wireless: [{ id: "w1", nodes: [{ failureRate: "high" }], links: [] }] },
        ["body.wireless[0].nodes[0].failureRate"],
      ],
    ];
    for (const [body, expected] of cases) {
      const r = await beat(nodeToken, body);
      expect([r.status, paths(r)], JSON.stringify(body).slice(0, 80)).toEqual([400, expected]);
    }
    expect((await beat(nodeToken, "{not json")).status).toBe(400);
    const ahead = await beat(nodeToken, { revision: (await revisionOf(ids.sysA)) + 1 });
    expect([ahead.status, paths(ahead)]).toEqual([409, ["body.revision"]]);
  });
});

describe("N7–N11: the status answered from the reports", () => {
  test("never reported: disconnected, not synced, blocked by an offline node; hardware 503", async () => {
    const list = ok(await call(ADMIN, "GET", `/${ids.sysA}/cloud-nodes`), 200, "list");
    const second = list.find((n: { id: string }) => n.id === SECOND);
    expect(second.connectionStatus).toEqual({ connected: false, details: { timestamp: null } });
    expect(second.syncStatus).toEqual({
      synced: false,
      details: { timestamp: null, dataFlowStatus: "BlockedByOfflineNode" },
    });
    const hw = await call(REPORTER, "GET", `${nodePath(SECOND)}/hardware`);
    expect(hw.status).toBe(503);
    expect(hw.body.error.message).toContain(SECOND);
  });

  test("the walk: ack → synced; a write → Pending; transfer → Started; ack → synced; quiet → offline; failure", async () => {
    clock += 1000;
    const at = await revisionOf(ids.sysA);
    ok(await beat(nodeToken, { revision: at, intervalSeconds: 5 }), 204, "ack");
    const beatAt = new Date(clock).toISOString();
    // The sync time is when the node first acknowledged this revision (its earlier heartbeats, at 08:00:00).
    const syncedAt = "2026-06-01T08:00:00.000Z";
    expect(await statusOfNode()).toEqual({
      connectionStatus: { connected: true, details: { timestamp: beatAt } },
      syncStatus: { synced: true, details: { timestamp: syncedAt } },
    });
    const holder = ok(await call(ADMIN, "GET", `/${ids.sysA}/holders/holder-0001`), 200, "holder");
    const keys = ["firstName", "lastName", "partition", "enabled", "activeDate", "expireDate", "pin", "duressPin"];
    const update = Object.fromEntries(keys.map((k) => [k, holder[k] ?? null]));
    ok(await call(ADMIN, "PUT", `/${ids.sysA}/holders/holder-0001`, { ...update, firstName: "Moved" }), 204, "write");
    expect((await statusOfNode()).syncStatus).toEqual({
      synced: false,
      details: { timestamp: syncedAt, dataFlowStatus: "Pending" },
    });
    clock += 2000;
    ok(await beat(nodeToken, { revision: at, transfer: true }), 204, "transfer");
    expect((await statusOfNode()).syncStatus.details.dataFlowStatus).toBe("Started");
    clock += 2000;
    const now = await revisionOf(ids.sysA);
    expect(now).toBeGreaterThan(at);
    ok(await beat(nodeToken, { revision: now }), 204, "ack 2");
    const acked = new Date(clock).toISOString();
    expect((await statusOfNode()).syncStatus).toEqual({ synced: true, details: { timestamp: acked } });
    // 3 intervals without a heartbeat: still connected at exactly 15 s, not after; no change waiting: synced.
    clock += 15_000;
    expect((await statusOfNode()).connectionStatus.connected).toBe(true);
    clock += 1;
    expect(await statusOfNode()).toEqual({
      connectionStatus: { connected: false, details: { timestamp: acked } },
      syncStatus: { synced: true, details: { timestamp: acked } },
    });
    ok(await call(ADMIN, "PUT", `/${ids.sysA}/holders/holder-0001`, { ...update, firstName: "Again" }), 204, "w2");
    expect((await statusOfNode()).syncStatus).toEqual({
      synced: false,
      details: { timestamp: acked, dataFlowStatus: "BlockedByOfflineNode" },
    });
    const failing = await revisionOf(ids.sysA);
    ok(await beat(nodeToken, { revision: now, failure: { revision: failing, message: "storage full" } }), 204, "f");
    expect((await statusOfNode()).syncStatus.details.dataFlowStatus).toBe("BlockedByFailure");
    // A manager reads the same status (the field is not partition data).
    const seen = ok(await call(MANAGER, "GET", `/${ids.sysA}/cloud-nodes`), 200, "manager list");
    expect(seen.find((n: { id: string }) => n.id === NODE)?.syncStatus.details.dataFlowStatus).toBe("BlockedByFailure");
    ok(await beat(nodeToken, { revision: failing, failure: null }), 204, "recovered");
    expect((await statusOfNode()).syncStatus.synced).toBe(true);
  });

  test("hardware: 200 with the items the node reported last", async () => {
    const items = [
      {
        id: "hw-1",
        type: "lockhub",
        connection: { id: "conn-1", name: "Bus A", type: "rs485" },
        firmwareVersion: "1.2.3",
        serialNumber: null,
        batteryLevel: 80,
        unstableConnection: false,
        recentComlosses: [],
        connectionStatus: { connected: true, details: { timestamp: new Date(clock).toISOString() } },
      },
      { id: "hw-2", type: "ethernet" },
    ];
    ok(await beat(nodeToken, { revision: await revisionOf(ids.sysA), hardware: items }), 204, "report");
    expect(ok(await call(REPORTER, "GET", `${nodePath()}/hardware`), 200, "hardware")).toEqual(items);
    // A heartbeat without hardware keeps the last report.
    ok(await beat(nodeToken, { revision: await revisionOf(ids.sysA) }), 204, "beat");
    expect(ok(await call(ADMIN, "GET", `${nodePath()}/hardware`), 200, "hardware again")).toEqual(items);
    const unknown = await call(ADMIN, "GET", `${nodePath("no-such-node")}/hardware`);
    expect(unknown.status).toBe(404);
  });

  test("wireless diagnostics (N27): 503 before a report, then 200 with the last one; a beat without keeps it", async () => {
    const before = await call(REPORTER, "GET", `${nodePath()}/diagnostics/wireless`);
    expect([before.status, before.body.error.message]).toEqual([
      503,
      `Cloud node "${NODE}" has not reported its wireless diagnostics yet.`,
    ]);
    const wireless = [
      {
        id: "wn-1",
        name: "Ward mesh",
        type: "zigbee",
        nodes: [
          { name: "lock 3", shortAddress: "0x1a2b", address: "00:11", communicationLost: false, averageRtt: 41.5 },
        ],
        links: [{ from: "0x0000", to: "0x1a2b", lqi: 212 }],
      },
    ];
    ok(await beat(nodeToken, { revision: await revisionOf(ids.sysA), wireless }), 204, "report");
    expect(ok(await call(REPORTER, "GET", `${nodePath()}/diagnostics/wireless`), 200, "wireless")).toEqual(wireless);
    ok(await beat(nodeToken, { revision: await revisionOf(ids.sysA) }), 204, "beat");
    expect(ok(await call(ADMIN, "GET", `${nodePath()}/diagnostics/wireless`), 200, "again")).toEqual(wireless);
    expect((await call(ADMIN, "GET", `${nodePath("no-such-node")}/diagnostics/wireless`)).status).toBe(404);
  });

  test("a restart keeps tokens, the acknowledgement and the hardware", async () => {
    const before = await statusOfNode();
    const hardware = ok(await call(ADMIN, "GET", `${nodePath()}/hardware`), 200, "hardware");
    await server.close();
    await start(tokenFile());
    const after = await statusOfNode();
    expect(after.syncStatus).toEqual(before.syncStatus);
    // The stored heartbeat time: the node still counts as connected within the stored time's slack.
    expect(after.connectionStatus.connected).toBe(true);
    expect(ok(await call(ADMIN, "GET", `${nodePath()}/hardware`), 200, "hardware after")).toEqual(hardware);
    ok(await beat(nodeToken, { revision: await revisionOf(ids.sysA) }), 204, "same token after a restart");
  }, 30_000);
});
