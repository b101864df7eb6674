// Webhook destinations (docs HW1–HW3): loopback, link-local, private, shared, unique-local,
// unspecified, multicast and broadcast addresses are refused by default — on the URL text of a
// subscription (IP literals in every spelling the URL parser normalizes) with 400 at `body.url`, and
// on the address a delivery would connect to (DNS answers included), before any connection; the
// operator's allow-list (`allow`, `--webhook-allow`) admits them. `lastError` says a category only.
// Real servers on 127.0.0.1 over real SQLite files and PostgreSQL, a real HTTPS receiver.
import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { Destinations, REFUSED_CODE, REFUSED_DESTINATION } from "../../src/adapters/delivery/destinations.js";
import type { WebhookOptions } from "../../src/service/webhooks/webhookService.js";
import { building } from "../live/fixture.js";
import { type Caller, caller, dataDir, startData } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";
import { PG, SKIP_NOTE, freshDatabase, startReplica, useCluster } from "../store/pgSupport.js";
import { run } from "../adapters/cliHarness.js";
import { RECEIVER_ALLOW, Receiver, eventually, selfSignedCertificate } from "./receiver.js";

useCluster();
afterAll(removeTempDirs);

let tls: { cert: string; key: string };
beforeAll(() => {
  tls = selfSignedCertificate();
});

const SUBS = "/api/organizations/sys-1/subscriptions";
const FAST: WebhookOptions = { backoffMs: 20, maxBackoffMs: 100, attempts: 2, timeoutMs: 1500 };
const body = (url: string, extra: Record<string, unknown> = {}) => ({
  name: "Hook",
  url,
  scope: "this",
  authentication: { type: "None" },
  events: ["entity.added"],
  sslVerification: false,
  ...extra,
});

/** The spellings of the issue and the other refused ranges, each with the address the URL parser makes of it. */
const REFUSED_URLS = [
  "https://169.254.169.254/latest/meta-data/",
  "https://127.0.0.1:8443/hook",
  "https://10.0.0.1/",
  "https://0x7f000001/",
  "https://2130706433/",
  "https://127.1/",
  "https://0177.0.0.1/",
  "https://[::ffff:127.0.0.1]/",
  "https://[::1]/",
  "https://[fd00::1]/",
  "https://[fe80::1]/",
  "https://0.0.0.0/",
  "https://[::]/",
  "https://100.64.0.1/",
  "https://172.16.5.4/",
  "https://192.168.1.1/",
  "https://224.0.0.1/",
  "https://255.255.255.255/",
  "https://localhost:8443/",
];

test("HW1 the policy: refused ranges in IPv4 and IPv6 (IPv4-mapped included), public addresses allowed, the allow-list admits exactly its CIDRs", () => {
  const d = new Destinations();
  for (const a of [
    "127.0.0.1",
    "127.255.0.9",
    "10.1.2.3",
    "169.254.169.254",
    "100.64.0.1",
    "100.127.255.255",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.0.1",
    "0.0.0.0",
    "224.0.0.251",
    "255.255.255.255",
  ])
    expect(d.allowed(a), a).toBe(false);
  for (const a of [
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:a9fe:a9fe",
    "::ffff:10.0.0.1",
    "fd12::1",
    "fc00::1",
    "fe80::1",
    "fec0::1",
    "ff02::1",
    "::7f00:1",
  ])
    expect(d.allowed(a), a).toBe(false);
  for (const a of ["8.8.8.8", "100.128.0.1", "172.32.0.1", "192.169.0.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"])
    expect(d.allowed(a), a).toBe(true);
  expect(d.allowed("not-an-ip")).toBe(false);

  const allow = new Destinations(["127.0.0.1/32", "fd00::/8", "10.9.0.0/16"]);
  for (const a of ["127.0.0.1", "::ffff:127.0.0.1", "fd00::5", "10.9.200.1"]) expect(allow.allowed(a), a).toBe(true);
  for (const a of ["127.0.0.2", "::1", "10.8.0.1", "169.254.169.254"]) expect(allow.allowed(a), a).toBe(false);

  expect(Destinations.parseList("127.0.0.1/32, ::1 ,10.0.0.0/8")).toEqual({
    ok: true,
    cidrs: ["127.0.0.1/32", "::1", "10.0.0.0/8"],
  });
  for (const bad of ["", "1.2.3/8", "10.0.0.0/33", "fd00::/129", "example.com", "10.0.0.0/8/1"])
    expect(Destinations.parseList(bad).ok, bad).toBe(false);
  expect(() => new Destinations(["nope"])).toThrow(RangeError);
});

test("HW1 every spelling of a refused address in the URL text is what the URL parser makes of it, and refused; names are left to the delivery check", () => {
  const d = new Destinations();
  for (const u of REFUSED_URLS) expect(d.urlProblem(new URL(u)), u).toMatch(/private network.*--webhook-allow\.$/);
  for (const u of [
    "https://receiver.example/hook",
    "https://8.8.8.8/",
    "https://[2001:db8::1]/",
    "https://vm.example/",
  ])
    expect(d.urlProblem(new URL(u)), u).toBeNull();
  const loopback = new Destinations(RECEIVER_ALLOW);
  for (const u of [
    "https://127.0.0.1:8443/hook",
    "https://0x7f000001/",
    "https://2130706433/",
    "https://127.1/",
    "https://[::ffff:127.0.0.1]/",
    "https://localhost:1/",
  ])
    expect(loopback.urlProblem(new URL(u)), u).toBeNull();
  expect(loopback.urlProblem(new URL("https://10.0.0.1/"))).not.toBeNull();
});

test("HW1 the delivery lookup keeps only allowed DNS answers: localhost fails with the refused code, before any connection", async () => {
  const lookup = (d: Destinations, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      d.lookup("localhost", { all, family: 4 } as never, (err, address) => resolve({ err, address })),
    );
  const refused = await lookup(new Destinations(), false);
  expect(refused.err?.code).toBe(REFUSED_CODE);
  expect(refused.err?.message).toBe(REFUSED_DESTINATION);
  expect((await lookup(new Destinations(), true)).err?.code).toBe(REFUSED_CODE);
  expect(await lookup(new Destinations(RECEIVER_ALLOW), false)).toEqual({ err: null, address: "127.0.0.1" });
  expect(await lookup(new Destinations(RECEIVER_ALLOW), true)).toEqual({
    err: null,
    address: [{ address: "127.0.0.1", family: 4 }],
  });
});

/** Creating and updating a subscription to each refused URL: 400 at body.url with a sentence, nothing stored or changed. */
async function refusesEveryUrl(api: Caller): Promise<void> {
  for (const url of REFUSED_URLS) {
    const r = await api("POST", SUBS, body(url));
    expect(r.status, url).toBe(400);
    expect(r.body.error.issues, url).toEqual([
      {
        path: "body.url",
        message: expect.stringMatching(
          /^Names .+ an address of this machine or of a private network .*--webhook-allow\.$/,
        ),
      },
    ]);
  }
  expect((await api("GET", SUBS)).body).toEqual([]);
  const id = (await api("POST", SUBS, body("https://receiver.example/hook"))).body.id as string;
  const before = (await api("GET", `${SUBS}/${id}`)).body;
  for (const url of ["https://169.254.169.254/", "https://0x7f000001/", "https://[::ffff:10.0.0.1]/"]) {
    const r = await api("PUT", `${SUBS}/${id}`, { ...body(url), active: true, secrecyLevel: 1 });
    expect(r.status, url).toBe(400);
    expect(r.body.error.issues.map((i: { path: string }) => i.path)).toEqual(["body.url"]);
  }
  expect((await api("GET", `${SUBS}/${id}`)).body).toEqual(before);
}

test("HW1 --data: a subscription to any refused address is refused at body.url on create and update; with the allow-list the loopback spellings are accepted, 10.0.0.1 still not", async () => {
  const { db } = dataDir();
  const plain = await startData(db, building(), { webhooks: FAST });
  await refusesEveryUrl(caller(plain.server.url, ""));

  const { db: db2 } = dataDir();
  const allowed = await startData(db2, building(), { webhooks: { ...FAST, allow: RECEIVER_ALLOW } });
  const api = caller(allowed.server.url, "");
  for (const url of [
    "https://127.0.0.1:8443/hook",
    "https://0x7f000001/",
    "https://2130706433/",
    "https://127.1/",
    "https://[::ffff:127.0.0.1]/",
  ])
    expect((await api("POST", SUBS, body(url))).status, url).toBe(201);
  expect((await api("POST", SUBS, body("https://10.0.0.1/"))).body.error.issues[0].path).toBe("body.url");
});

describe("HW1 --store postgres://", () => {
  test.skipIf(!PG.ok)(
    `a subscription to any refused address is refused at body.url on create and update${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const replica = await startReplica(url, building(), { webhooks: FAST });
      await refusesEveryUrl(caller(replica.server.url, ""));
    },
  );
});

/** A TCP server that accepts and at once resets every connection: a port that is open but speaks nothing. */
async function resetter(): Promise<{ port: number; connections: () => number }> {
  let n = 0;
  const server: TcpServer = createTcpServer((s) => {
    n++;
    s.resetAndDestroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as AddressInfo).port, connections: () => n };
}

/** The parked events of every subscription, once each has one: [lastError, attempts] by name. */
async function parkedOf(api: Caller, ids: Record<string, string>): Promise<Record<string, [string, number]>> {
  const out: Record<string, [string, number]> = {};
  await eventually(
    async () => {
      for (const [name, id] of Object.entries(ids)) {
        const p = (await api("GET", `${SUBS}/${id}/parked`)).body;
        if (p.length === 0) return false;
        out[name] = [p[0].lastError, p[0].attempts];
      }
      return true;
    },
    30_000,
    "every subscription's parked event",
  );
  return out;
}

test("HW1 HW2 without the allow-list a delivery to 127.0.0.1 connects to nothing — an open port, a closed one, a resetting one, a name resolving there — and every lastError is the same category", async () => {
  const { db } = dataDir();
  const open = await Receiver.start(tls);
  onTestFinished(() => open.stop());
  const closed = await Receiver.start(tls);
  await closed.stop(); // its port, now closed
  const reset = await resetter();
  const urls = {
    open: open.url,
    closed: closed.url,
    reset: `https://127.0.0.1:${reset.port}/hook`,
    name: `https://localhost:${open.port}/hook`,
  };
  // Subscribed while the operator allowed loopback (or before this version refused it), then served without the allow-list.
  const first = await startData(db, building(), { webhooks: { ...FAST, allow: RECEIVER_ALLOW } });
  const firstApi = caller(first.server.url, "");
  const ids: Record<string, string> = {};
  for (const [name, url] of Object.entries(urls))
    ids[name] = (await firstApi("POST", SUBS, body(url, { name }))).body.id;
  await first.server.close();

  const { server, call, lines } = await startData(db, undefined, { webhooks: FAST });
  const api = caller(server.url, "");
  expect((await call("POST", "/groups", { name: "Probe" })).status).toBe(200);
  const parked = await parkedOf(api, ids);
  for (const name of Object.keys(urls)) expect(parked[name], name).toEqual([REFUSED_DESTINATION, 2]);
  expect(
    lines.filter((l) => / parked after 2 attempts: .*refused: destination address not allowed/.test(l)),
  ).toHaveLength(4);
  // No byte reached any of them: not even a TCP connection was made.
  expect(open.connections).toBe(0);
  expect(reset.connections()).toBe(0);
  expect(open.all).toEqual([]);
});

test("HW2 with the allow-list, a failed delivery's lastError is a coarse category: a closed port and a resetting one both 'connection failed'; HTTP status; timeout; TLS", async () => {
  const { db } = dataDir();
  const ok = await Receiver.start(tls);
  onTestFinished(() => ok.stop());
  ok.failNext = 1000;
  const slow = await Receiver.start(tls);
  onTestFinished(() => slow.stop());
  slow.hang = true;
  const closed = await Receiver.start(tls);
  await closed.stop();
  const reset = await resetter();
  const { server, call, lines } = await startData(db, building(), { webhooks: { ...FAST, allow: RECEIVER_ALLOW } });
  const api = caller(server.url, "");
  const ids: Record<string, string> = {};
  const subs: Record<string, Record<string, unknown>> = {
    status: body(ok.url),
    tls: body(ok.url, { sslVerification: true }),
    timeout: body(slow.url),
    closed: body(closed.url),
    reset: body(`https://127.0.0.1:${reset.port}/hook`),
  };
  for (const [name, b] of Object.entries(subs)) ids[name] = (await api("POST", SUBS, { ...b, name })).body.id;
  expect((await call("POST", "/groups", { name: "Probe" })).status).toBe(200);
  const parked = await parkedOf(api, ids);
  expect(parked).toEqual({
    status: ["HTTP 500", 2],
    tls: ["TLS error: the receiver's certificate was not accepted", 2],
    timeout: ["timeout", 2],
    closed: ["connection failed", 2],
    reset: ["connection failed", 2],
  });
  expect(reset.connections()).toBeGreaterThan(0);
  // The operator's log keeps the detail the subscriber does not see.
  expect(lines.some((l) => /parked after 2 attempts: ECONNREFUSED/.test(l))).toBe(true);
});

test("HW3 rsop serve --webhook-allow: a malformed CIDR is a usage error (exit 2) naming it; it needs --data or --store", async () => {
  for (const [value, says] of [
    ["10.0.0.0/33", '"10.0.0.0/33" has a prefix length outside 0–32'],
    ["127.0.0.1,example.com", '"example.com" is not an IP address or CIDR'],
    [",", "give at least one IP address or CIDR"],
  ]) {
    const r = await run(["serve", "--data", "never-created.db", "--insecure-no-auth", "--webhook-allow", value!]);
    expect(r.code, value).toBe(2);
    expect(r.stderr).toContain(`--webhook-allow: ${says}`);
  }
  const noData = await run([
    "serve",
    "--system",
    "examples/building.json",
    "--insecure-no-auth",
    "--webhook-allow",
    "127.0.0.1",
  ]);
  expect(noData.code).toBe(2);
  expect(noData.stderr).toContain("--webhook-* need --data FILE.db or --store");
});
