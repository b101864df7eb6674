// Tenants never meet (T51): two multi-site customers importing the same building (the same holder,
// device and group ids inside) and two legacy customers with panels holding the same persons, served
// by one process from one SQLite database. Every kind of route of each host stays within its tenant:
// reads and writes, lists and their totals, decisions, reports, subscriptions and their events; an
// id of another tenant answers exactly as an unknown one (404) to a token that does not reach it.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { parseTokens } from "../../src/service/auth/tokens.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { RECEIVER_ALLOW, Receiver, eventually, selfSignedCertificate } from "../webhooks/receiver.js";

const ROOT = "root-admin-token-0123456789";
const A_ADMIN = "customer-a-admin-0123456789";
const B_ADMIN = "customer-b-admin-0123456789";
const LA_ADMIN = "legacy-a-admin-0123456789ab";
const PANEL = JSON.parse(readFileSync(join(__dirname, "../../examples/panel.json"), "utf8")) as Record<string, unknown>;

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

let server: RunningServiceServer;
let receiver: Receiver;
const ids = { dealer: "", a: "", b: "", la: "", lb: "", sysA: "", sysB: "" };

async function call(
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
}

const root = (method: string, path: string, body?: unknown) => call(ROOT, method, path, body);

/** A GET with its own Host header (fetch does not let a caller set one). */
function viaHostHeader(token: string, path: string, host: string): Promise<Answer> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, headers: { host, authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers, body: text === "" ? undefined : JSON.parse(text) });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function ok(r: Answer, status: number, what: string): any {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

/** The fields a holder or person update takes (every required one), from a read of it. */
function updatable(x: Record<string, unknown>): Record<string, unknown> {
  const keys = ["firstName", "lastName", "partition", "enabled", "activeDate", "expireDate", "pin", "duressPin"];
  return Object.fromEntries(keys.map((k) => [k, x[k] ?? null]));
}

const panelOf = (serial: string) => ({ ...PANEL, serialNumber: serial });

beforeAll(async () => {
  const dir = tempDir();
  receiver = await Receiver.start(selfSignedCertificate());
  // The first start makes the root organization; tokens naming organizations come after (their ids).
  let first = await startServiceServer({ dataFile: join(dir, "service.db"), token: ROOT, port: 0, log: () => {} });
  server = first;
  const rootId = (ok(await root("GET", "/api/organizations/mine"), 200, "mine") as { id: string }[])[0]!.id;
  ids.dealer = ok(await root("POST", `/api/organizations/${rootId}/children`, { name: "Dealer" }), 201, "dealer").id;
  for (const [key, name] of [
    ["a", "Customer A"],
    ["b", "Customer B"],
  ] as const) {
    const made = ok(
      await root("POST", `/api/organizations/${ids.dealer}/children`, {
        name,
        import: { ...(BUILDING_JSON as object), systemId: randomUUID() },
      }),
      201,
      name,
    );
    ids[key] = made.id;
    ids[key === "a" ? "sysA" : "sysB"] = made.systemId;
  }
  for (const [key, name, serial] of [
    ["la", "Legacy A", "SN-A"],
    ["lb", "Legacy B", "SN-B"],
  ] as const) {
    ids[key] = ok(await root("POST", `/api/ous/${ids.dealer}/children`, { name }), 201, name).id;
    ok(
      await root("POST", `/api/ous/${ids[key]}/panels`, { id: serial, name: `${name} panel`, import: panelOf(serial) }),
      201,
      `${name} panel`,
    );
  }
  await first.close();
  const parsed = parseTokens({
    [A_ADMIN]: { role: "admin", organizations: [ids.a] },
    [B_ADMIN]: { role: "admin", organizations: [ids.b] },
    [LA_ADMIN]: { role: "admin", organizations: [ids.la] },
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  first = await startServiceServer({
    dataFile: join(dir, "service.db"),
    token: ROOT,
    tokens: { file: "tokens.json", entries: parsed.entries },
    port: 0,
    log: () => {},
    webhooks: { allow: RECEIVER_ALLOW, backoffMs: 50 },
  });
  server = first;
}, 60_000);

afterAll(async () => {
  await server?.close();
  await receiver?.stop();
  removeTempDirs();
});

describe("T51: two customers with the same ids inside never meet", () => {
  test("both systems hold holder-0001; a write to one leaves the other as it was", async () => {
    expect(ids.sysA).not.toBe(ids.sysB);
    const before = ok(await call(B_ADMIN, "GET", `/${ids.sysB}/holders/holder-0001`), 200, "B holder");
    const a = ok(await call(A_ADMIN, "GET", `/${ids.sysA}/holders/holder-0001`), 200, "A holder");
    expect(a).toEqual(before);
    ok(
      await call(A_ADMIN, "PUT", `/${ids.sysA}/holders/holder-0001`, { ...updatable(a), firstName: "Changed" }),
      204,
      "PUT A",
    );
    expect(ok(await call(A_ADMIN, "GET", `/${ids.sysA}/holders/holder-0001`), 200, "A after").firstName).toBe(
      "Changed",
    );
    expect(ok(await call(B_ADMIN, "GET", `/${ids.sysB}/holders/holder-0001`), 200, "B after")).toEqual(before);
  });

  test("lists and their totals count each tenant's own", async () => {
    const totalOf = async (token: string, sys: string) =>
      Number((await call(token, "GET", `/${sys}/holders?per_page=1`)).headers.get("x-total-count"));
    const a0 = await totalOf(A_ADMIN, ids.sysA);
    const b0 = await totalOf(B_ADMIN, ids.sysB);
    expect(a0).toBe(b0);
    ok(await call(A_ADMIN, "POST", `/${ids.sysA}/holders`, { firstName: "Only", lastName: "InA" }), 201, "create");
    expect(await totalOf(A_ADMIN, ids.sysA)).toBe(a0 + 1);
    expect(await totalOf(B_ADMIN, ids.sysB)).toBe(b0);
  });

  test("an id of the other tenant is 404 exactly as an unknown one, on every host", async () => {
    const unknownSystem = await call(A_ADMIN, "GET", "/00000000-0000-4000-8000-000000000000/holders");
    const otherSystem = await call(A_ADMIN, "GET", `/${ids.sysB}/holders`);
    expect(otherSystem.status).toBe(404);
    expect(otherSystem.body.error.message).toBe(unknownSystem.body.error.message);
    expect((await call(A_ADMIN, "POST", `/${ids.sysB}/decisions`, {})).status).toBe(404);
    const unknownOrg = await call(A_ADMIN, "GET", "/api/organizations/00000000-0000-4000-8000-000000000000");
    const otherOrg = await call(A_ADMIN, "GET", `/api/organizations/${ids.b}`);
    expect([otherOrg.status, unknownOrg.status]).toEqual([404, 404]);
    expect(otherOrg.body.error.message.replace(ids.b, "ID")).toBe(
      unknownOrg.body.error.message.replace("00000000-0000-4000-8000-000000000000", "ID"),
    );
    expect((await call(A_ADMIN, "GET", `/api/organizations/${ids.b}/subscriptions`)).status).toBe(404);
    expect((await call(LA_ADMIN, "GET", "/panels/SN-B/api/persons")).status).toBe(404);
    expect((await viaHostHeader(LA_ADMIN, "/api/persons", "SN-B.panels.example.test")).status).toBe(404);
    expect((await call(LA_ADMIN, "GET", "/api/panels/SN-B")).status).toBe(404);
    // No token, or an unknown one: 401 before any tenant is looked up.
    expect((await call(null, "GET", `/${ids.sysB}/holders`)).status).toBe(401);
    expect((await call("not-a-token-of-this-service", "GET", `/${ids.sysB}/holders`)).status).toBe(401);
  });

  test("a panel's persons are its own on both of its addresses", async () => {
    const viaPath = ok(await call(LA_ADMIN, "GET", "/panels/SN-A/api/persons?per_page=5"), 200, "path");
    const viaHost = ok(
      await viaHostHeader(LA_ADMIN, "/api/persons?per_page=5", "sn-a.panels.example.test"),
      200,
      "host",
    );
    expect(viaHost).toEqual(viaPath);
    const person = viaPath[0];
    ok(
      await call(LA_ADMIN, "PUT", `/panels/SN-A/api/persons/${person.id}`, {
        ...updatable(person),
        firstName: "OnlyA",
      }),
      204,
      "PUT person",
    );
    const b = ok(await call(ROOT, "GET", `/panels/SN-B/api/persons/${person.id}`), 200, "B person");
    expect(b.firstName).toBe(person.firstName);
  });

  test("decisions and reports stay in their system", async () => {
    const decide = {
      deviceId: "door-ward-3",
      at: "2026-04-15T09:15:00-05:00",
      credential: { credentialNumber: 10234, facilityCode: 17 },
    };
    const da = ok(await call(A_ADMIN, "POST", `/${ids.sysA}/decisions`, decide), 200, "decide A");
    const db = ok(await call(B_ADMIN, "POST", `/${ids.sysB}/decisions`, decide), 200, "decide B");
    expect(da).toEqual(db);
    ok(await call(A_ADMIN, "POST", `/${ids.sysA}/reports/holders/generate`, {}), 204, "generate A");
    await eventually(async () => {
      const list = ok(await call(A_ADMIN, "GET", `/${ids.sysA}/reports/holders/requests`), 200, "reports A");
      return list.length === 1 && list[0].status === "finished";
    });
    const [report] = ok(await call(A_ADMIN, "GET", `/${ids.sysA}/reports/holders/requests`), 200, "reports A");
    expect(ok(await call(B_ADMIN, "GET", `/${ids.sysB}/reports/holders/requests`), 200, "reports B")).toEqual([]);
    expect((await call(ROOT, "GET", `/${ids.sysB}/reports/holders/requests/${report.id}`)).status).toBe(404);
  });

  test("a customer's subscription gets its own events; the dealer's recursive one gets both", async () => {
    const hook = (name: string, scope: string) => ({
      name,
      url: receiver.url,
      scope,
      authentication: { type: "None" },
      events: ["entity.added"],
      sslVerification: false,
    });
    const subA = ok(
      await call(A_ADMIN, "POST", `/api/organizations/${ids.a}/subscriptions`, hook("A", "this")),
      201,
      "sub A",
    ).id;
    const subD = ok(
      await call(ROOT, "POST", `/api/organizations/${ids.dealer}/subscriptions`, hook("D", "recursive")),
      201,
      "sub D",
    ).id;
    const inA = ok(
      await call(A_ADMIN, "POST", `/${ids.sysA}/holders`, { firstName: "Hook", lastName: "A" }),
      201,
      "A",
    ).id;
    const inB = ok(
      await call(B_ADMIN, "POST", `/${ids.sysB}/holders`, { firstName: "Hook", lastName: "B" }),
      201,
      "B",
    ).id;
    await eventually(async () => receiver.delivered.length >= 3);
    const bySub = (id: string) =>
      receiver.delivered.filter((r) => r.body.subscriptionId === id || r.headers["x-rsop-subscription"] === id);
    const all = receiver.delivered.map((r) => r.body);
    const aEvents = all.filter((b) => JSON.stringify(b).includes(inA));
    const bEvents = all.filter((b) => JSON.stringify(b).includes(inB));
    // A's holder reached A's subscription and the dealer's; B's only the dealer's.
    expect(aEvents).toHaveLength(2);
    expect(bEvents).toHaveLength(1);
    void bySub;
    void subA;
    void subD;
    expect((await call(B_ADMIN, "GET", `/api/organizations/${ids.a}/subscriptions/${subA}`)).status).toBe(404);
    expect(ok(await call(B_ADMIN, "GET", `/api/organizations/${ids.b}/subscriptions`), 200, "B subs")).toEqual([]);
  });
});

describe("T70: the service serves the migration of a registered panel", () => {
  test("initiate on a panel the caller reaches; another caller's panel is 404", async () => {
    expect((await call(LA_ADMIN, "POST", "/api/migration/initiate", { cloudNodeSN: "SN-B" })).status).toBe(404);
    const started = ok(
      await root("POST", "/api/migration/initiate", { cloudNodeSN: "SN-B", acceptWarnings: true }),
      200,
      "initiate",
    );
    expect(started.tasks).toHaveLength(6);
    await eventually(async () => ok(await root("GET", "/api/migration/SN-B"), 200, "status").systemId !== undefined);
    expect((await call(LA_ADMIN, "GET", "/api/migration/SN-B")).status).toBe(404);
    // Read-only while staged: a write to the panel is refused.
    expect((await root("POST", "/panels/SN-B/api/groups", { name: "Late" })).status).toBe(409);
  });
});
