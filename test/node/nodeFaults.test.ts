// The cloud node runtime when things go wrong (N40–N43, N54–N59), in-process against a real service
// server on 127.0.0.1, through a real TCP proxy where the network must fail: a cut mid-stream, a
// blocked network (scans decided offline, the kill timer, the offline policies), a clock that jumps,
// daylight-saving nights at the node's zone, a restart without the service, another node's data file,
// a clock marked unreliable, and events stored before their answers are written.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { createEngine } from "../../src/evaluate/index.js";
import { CloudNode, type CloudNodeOptions } from "../../src/node/cloudNode.js";
import { NodeStoreError } from "../../src/node/nodeStore.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { NODE, ROOT, SECOND, call, nodeToken, ok, startService } from "../nodes/nodeSupport.js";
import { type TcpProxy, startTcpProxy } from "../support/tcpProxy.js";
import { pollUntil } from "../support/until.js";

const CHICAGO_KILL = 259_200;
const LONDON_KILL = 86_400;
/** What the node logs when it refuses a change or downloads the system (again, N61, N62). */
const REDONE = /refused|downloading|downloaded/;
/** Keep-alives often, so that a reconnected feed is heard from soon (N16). */
const FEEDS = { keepAliveMs: 300 };

let server: RunningServiceServer;
const proxies: TcpProxy[] = [];
const nodes: CloudNode[] = [];
const extraServers: RunningServiceServer[] = [];

beforeAll(async () => {
  server = await startService(undefined, { nodeFeeds: FEEDS });
}, 60_000);
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await Promise.all(proxies.splice(0).map((p) => p.close()));
  await Promise.all(extraServers.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await server?.close();
  removeTempDirs();
});

const until = pollUntil(15_000);

const iso = (ms: number) => new Date(ms).toISOString();

/** A running node, what it logged, the requests it decided (with `node` filled in), its answers. */
interface Running {
  readonly node: CloudNode;
  readonly log: string[];
  readonly requests: any[];
  readonly answers: any[];
  /** Pushes `scans` as one chunk; returns their answers (written before push returns, N56). */
  scan(...scans: object[]): any[];
}

async function runNode(
  srv: { url: string },
  options: Partial<CloudNodeOptions> & Pick<CloudNodeOptions, "systemId" | "token">,
): Promise<Running> {
  const log: string[] = [];
  const requests: any[] = [];
  const answers: any[] = [];
  const node = await CloudNode.start({
    service: srv.url,
    nodeId: NODE,
    dataFile: join(tempDir(), "node.db"),
    heartbeatSeconds: 1,
    retryMs: 50,
    log: (line) => log.push(line),
    onDecision: (e) => requests.push(JSON.parse(e.request)),
    ...options,
  });
  nodes.push(node);
  const stream = node.scanStream((text) => {
    for (const l of text.split("\n")) if (l !== "") answers.push(JSON.parse(l));
  });
  return {
    node,
    log,
    requests,
    answers,
    scan(...scans) {
      const before = answers.length;
      stream.push(Buffer.from(scans.map((s) => `${JSON.stringify(s)}\n`).join("")));
      return answers.slice(before);
    },
  };
}

/**
 * A customer of its own dealer with the example building imported, on `srv` (importSystem's dealer
 * has a fixed name, taken after the first system of a service): its system id.
 */
async function importSystem(srv: RunningServiceServer): Promise<string> {
  const mine = ok(await call(srv, ROOT, "GET", "/api/organizations/mine"), 200, "mine") as { id: string }[];
  const dealer = ok(
    await call(srv, ROOT, "POST", `/api/organizations/${mine[0]!.id}/children`, { name: `Dealer ${randomUUID()}` }),
    201,
    "dealer",
  ).id;
  const made = ok(
    await call(srv, ROOT, "POST", `/api/organizations/${dealer}/children`, {
      name: "Customer",
      import: { ...(BUILDING_JSON as object), systemId: randomUUID() },
    }),
    201,
    "customer",
  );
  return made.systemId as string;
}

/** A new system on the shared service, the tokens of its two nodes and a proxy in front of the service. */
async function system(): Promise<{ sys: string; chicago: string; london: string; proxy: TcpProxy }> {
  const sys = await importSystem(server);
  const proxy = await startTcpProxy(Number(new URL(server.url).port));
  proxies.push(proxy);
  return { sys, chicago: await nodeToken(server, sys), london: await nodeToken(server, sys, SECOND), proxy };
}

/**
 * The scan's answer is `decide` of a fresh engine on the node's own snapshot, with `node` worked out
 * here (N40, N41); the request the node decided carries that same `node` and instant.
 */
function expectDecided(r: Running, answer: any, scan: object, at: string | number, node: object): void {
  const request = r.requests.at(-1);
  expect(request.node).toEqual(node);
  expect(request.at).toEqual(at);
  const expected = createEngine(r.node.engine!.snapshot).decide({ ...scan, at, node });
  const { line: _line, ...decision } = answer;
  expect(decision).toEqual(JSON.parse(JSON.stringify(expected)));
}

/**
 * Scans one request at `at` (epoch ms, or an ISO string given as it is), or without `at` (dated by
 * the node's clock, `clock`), and checks it (see expectDecided).
 */
function scanAt(r: Running, scan: object, at: number | string | undefined, clock: number, node: object): any {
  const instant = typeof at === "number" ? iso(at) : at;
  const [answer] = r.scan(instant === undefined ? scan : { ...scan, at: instant });
  expectDecided(r, answer, scan, instant ?? clock, node);
  return answer;
}

const offline = (offlineSeconds: number, timeKnown = true) => ({ online: false, offlineSeconds, timeKnown });

/** Waits until the node is offline after its calls failed (N59). */
const goneOffline = (r: Running) => until("offline", () => !r.node.status().online);
/** Waits until the node is online again and has uploaded its queue (N53). */
async function backAndUploaded(r: Running): Promise<void> {
  await until("online", () => r.node.status().online);
  await until("queue uploaded", () => r.node.status().pendingEvents === 0);
}

const NURSE = { deviceId: "door-ward-3", credential: { credentialNumber: 10234, facilityCode: 17 } };
/** Facilities staff at the plant room: a 24x7 rule. */
const FACILITIES = { deviceId: "door-plant-room", credential: { credentialNumber: 15030, facilityCode: 17 } };
/** An e-card of node-chicago-main at its main entrance: no holder has it. */
const ECARD = { deviceId: "door-main-entrance", credential: { credentialNumber: 7001, facilityCode: 17 } };
/** A raw 26-bit frame (FC 42, CN 31337) at the London annex. */
const LONDON_CARD = { deviceId: "door-lon-clinic", credential: { wiegand: "00010101001111010011010011" } };

/** The service's snapshot, as a fresh download (N13) gives it. */
async function serviceSnapshot(sys: string, token: string): Promise<any> {
  return ok(await call(server, token, "GET", `/${sys}/cloud-nodes/${NODE}/node/snapshot`), 200, "snapshot");
}

async function addHolder(sys: string, name: string): Promise<string> {
  return ok(await call(server, ROOT, "POST", `/${sys}/holders`, { firstName: name, lastName: "Faults" }), 201, name).id;
}

describe("N59: a network cut mid-stream", () => {
  test("the node reconnects its feed from its revision, applies later changes once, and stays online", async () => {
    const { sys, chicago, proxy } = await system();
    // A slow heartbeat: after the first ones, no call is in flight when the network is cut, so only
    // the feed breaks (an answer lost in flight would rightly count as lost contact, N59).
    const r = await runNode(proxy, { systemId: sys, token: chicago, heartbeatSeconds: 60 });
    await r.node.ready();
    expect(r.node.status().online).toBe(true);
    await addHolder(sys, "Before");
    await until("first change followed", () => r.node.status().revision === 1);
    await until("acknowledged", async () => {
      const n = ok(await call(server, ROOT, "GET", `/${sys}/cloud-nodes/${NODE}`), 200, "node");
      return n.syncStatus.synced === true;
    });
    // The service stores an acknowledgement before it answers it: let that answer reach the node.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const logged = r.log.length;
    proxy.cut();
    for (const name of ["After-1", "After-2", "After-3"]) await addHolder(sys, name);
    await until("later changes followed", () => r.node.status().revision === 4);
    const fresh = await serviceSnapshot(sys, chicago);
    expect(fresh.revision).toBe(4);
    // Nothing twice: a change applied again would add a holder twice (and be refused, N62).
    expect(r.node.engine!.snapshot).toEqual(fresh.snapshot);
    expect(r.log.filter((l) => REDONE.test(l))).toEqual(["downloaded the system at revision 0"]);
    expect(r.node.status().online).toBe(true);
    // The broken feed alone was not lost contact: the node never said it went offline.
    expect(r.log.slice(logged).filter((l) => l.startsWith("offline"))).toEqual([]);
  });

  test("changes made while the feed is cut repeatedly all arrive, each once", async () => {
    const { sys, chicago, proxy } = await system();
    const r = await runNode(proxy, { systemId: sys, token: chicago });
    await r.node.ready();
    for (let i = 1; i <= 12; i++) {
      await addHolder(sys, `Cut-${i}`);
      if (i % 3 === 0) proxy.cut();
    }
    await until("all changes followed", () => r.node.status().revision === 12);
    const fresh = await serviceSnapshot(sys, chicago);
    expect(r.node.engine!.snapshot).toEqual(fresh.snapshot);
    expect(r.log.filter((l) => REDONE.test(l))).toEqual(["downloaded the system at revision 0"]);
    await until("online", () => r.node.status().online);
  });
});

/** Puts node-chicago-main's offline policy to `policy` on the service (PUT takes the whole node). */
async function setChicagoPolicy(sys: string, policy: number): Promise<void> {
  const now = ok(await call(server, ROOT, "GET", `/${sys}/cloud-nodes/${NODE}`), 200, "node");
  const keys = ["name", "description", "serialNumber", "ecards", "killTimer", "timezone", "locale", "cardFormat"];
  const body: Record<string, unknown> = { offlinePolicy: policy };
  for (const k of keys) if (now[k] !== undefined && now[k] !== null) body[k] = now[k];
  ok(await call(server, ROOT, "PUT", `/${sys}/cloud-nodes/${NODE}`, body), 204, "offline policy");
}

const policyOf = (r: Running, id = NODE) => r.node.engine!.snapshot.cloudNodes.find((n) => n.id === id)!.offlinePolicy;

describe("N40: a blocked network: scans decided offline, from the last contact", () => {
  test("node-chicago-main (24x7, kill timer 3 days) and node-london-annex (e-card only, 1 day)", async () => {
    const { sys, chicago, london, proxy } = await system();
    // Each node's clock stands still at a Wednesday morning of its own zone: every contact is then
    // that instant, and the scans' instants are given.
    const t0 = Date.parse("2026-04-15T09:00:00-05:00");
    const l0 = Date.parse("2026-04-15T09:00:00+01:00");
    const chi = await runNode(proxy, { systemId: sys, token: chicago, now: () => t0 });
    const lon = await runNode(proxy, { systemId: sys, token: london, nodeId: SECOND, now: () => l0 });
    await Promise.all([chi.node.ready(), lon.node.ready()]);
    expect(chi.node.status()).toMatchObject({ online: true, lastContact: iso(t0) });
    expect(lon.node.status()).toMatchObject({ online: true, lastContact: iso(l0) });
    proxy.block();
    await goneOffline(chi);
    await goneOffline(lon);
    expect(chi.node.status().lastContact).toBe(iso(t0));

    // Within the kill timer the rules decide as online (a weekday nurse, the 24x7 plant room).
    expect(scanAt(chi, NURSE, t0 + 900_000, t0, offline(900))).toMatchObject({ outcome: "allowed", reason: "allowed" });
    const edge = t0 + CHICAGO_KILL * 1000 + 999; // still 259,200 whole seconds
    expect(scanAt(chi, FACILITIES, edge, t0, offline(CHICAGO_KILL))).toMatchObject({ outcome: "allowed" });
    expect(scanAt(chi, ECARD, edge, t0, offline(CHICAGO_KILL))).toMatchObject({ reason: "unknownCredential" });
    // Past it, only the node's e-cards open.
    const past = t0 + (CHICAGO_KILL + 1) * 1000;
    expect(scanAt(chi, FACILITIES, past, t0, offline(CHICAGO_KILL + 1))).toMatchObject({
      outcome: "denied",
      reason: "offlineEcardOnly",
    });
    expect(scanAt(chi, ECARD, past, t0, offline(CHICAGO_KILL + 1))).toMatchObject({
      outcome: "allowed",
      reason: "ecard",
    });

    const hour = l0 + 3_600_000;
    expect(scanAt(lon, LONDON_CARD, hour, l0, offline(3600))).toMatchObject({ outcome: "allowed", reason: "allowed" });
    const lonPast = l0 + (LONDON_KILL + 1) * 1000;
    expect(scanAt(lon, LONDON_CARD, lonPast, l0, offline(LONDON_KILL + 1))).toMatchObject({
      outcome: "denied",
      reason: "offlineEcardOnly",
    });
    expect(chi.node.status().pendingEvents).toBe(5);
    expect(lon.node.status().pendingEvents).toBe(2);

    proxy.unblock();
    await backAndUploaded(chi);
    await backAndUploaded(lon);
  });

  test("offline policy 2 (any schedule), set on the service and followed by the node before the cut", async () => {
    const { sys, chicago, proxy } = await system();
    const t0 = Date.parse("2026-04-15T09:00:00-05:00");
    const chi = await runNode(proxy, { systemId: sys, token: chicago, now: () => t0 });
    await chi.node.ready();
    expect(policyOf(chi)).toBe(1);
    await setChicagoPolicy(sys, 2);
    await until("policy followed", () => policyOf(chi) === 2);
    proxy.block();
    await goneOffline(chi);
    // The time is known: the kill timer decides as for any policy (E3 applies only without a clock).
    expect(scanAt(chi, NURSE, t0 + 60_000, t0, offline(60))).toMatchObject({ outcome: "allowed", reason: "allowed" });
    const past = t0 + (CHICAGO_KILL + 1) * 1000;
    expect(scanAt(chi, NURSE, past, t0, offline(CHICAGO_KILL + 1))).toMatchObject({ reason: "offlineEcardOnly" });
    expect(scanAt(chi, ECARD, past, t0, offline(CHICAGO_KILL + 1))).toMatchObject({ reason: "ecard" });
    proxy.unblock();
    await backAndUploaded(chi);
  });
});

describe("N40, N42: the node's clock jumps", () => {
  test("forward past the kill timer while offline, back before the last contact, then online again", async () => {
    const { sys, chicago, proxy } = await system();
    const t0 = Date.parse("2026-04-15T09:00:00-05:00");
    let clock = t0;
    const chi = await runNode(proxy, { systemId: sys, token: chicago, now: () => clock });
    await chi.node.ready();
    proxy.block();
    await goneOffline(chi);
    expect(chi.node.status().lastContact).toBe(iso(t0));

    // Scans without `at` are dated by the clock: three days and ten seconds on, the kill timer is past.
    clock = t0 + (CHICAGO_KILL + 10) * 1000;
    expect(scanAt(chi, FACILITIES, undefined, clock, offline(CHICAGO_KILL + 10))).toMatchObject({
      outcome: "denied",
      reason: "offlineEcardOnly",
    });
    expect(scanAt(chi, ECARD, undefined, clock, offline(CHICAGO_KILL + 10))).toMatchObject({ reason: "ecard" });

    // Set back before the last contact: offline 0 s, not a negative time (N40).
    clock = t0 - 3_600_000;
    expect(scanAt(chi, FACILITIES, undefined, clock, offline(0))).toMatchObject({
      outcome: "allowed",
      reason: "allowed",
    });

    // Back in contact, the last contact is the clock's reading, though earlier than the one before (N42).
    proxy.unblock();
    await backAndUploaded(chi);
    expect(chi.node.status().lastContact).toBe(iso(clock));
    proxy.block();
    await goneOffline(chi);
    expect(scanAt(chi, NURSE, clock + 10_500, clock, offline(10))).toMatchObject({ outcome: "allowed" });
    proxy.unblock();
    await backAndUploaded(chi);
  });
});

describe("N40: daylight saving at the node's zone (America/Chicago) counts instants, not wall time", () => {
  test("spring forward (2026-03-08) and fall back (2026-11-01)", async () => {
    const { sys, chicago, proxy } = await system();
    // 01:30 CST, just before the gap: 02:00 CST is 03:00 CDT.
    let clock = Date.parse("2026-03-08T01:30:00-06:00");
    const chi = await runNode(proxy, { systemId: sys, token: chicago, now: () => clock });
    await chi.node.ready();
    const spring = clock;
    proxy.block();
    await goneOffline(chi);
    expect(chi.node.status().lastContact).toBe(iso(spring));
    // Two hours of wall clock, one hour of time.
    scanAt(chi, FACILITIES, "2026-03-08T03:30:00-05:00", clock, offline(3600));
    clock = Date.parse("2026-03-08T03:30:00-05:00");
    expect(scanAt(chi, FACILITIES, undefined, clock, offline(3600))).toMatchObject({ outcome: "allowed" });

    // 01:30 CDT, the first of the two 01:30s of the night the clocks fall back.
    clock = Date.parse("2026-11-01T01:30:00-05:00");
    const autumn = clock;
    proxy.unblock();
    await until("contact at the autumn clock", () => chi.node.status().lastContact === iso(autumn));
    proxy.block();
    await goneOffline(chi);
    expect(chi.node.status().lastContact).toBe(iso(autumn));
    // The same wall time an hour later, and one hour of wall time that is two of time.
    scanAt(chi, FACILITIES, "2026-11-01T01:30:00-06:00", clock, offline(3600));
    scanAt(chi, FACILITIES, "2026-11-01T02:30:00-06:00", clock, offline(7200));
    expect(chi.requests.slice(-2).map((q) => q.node.offlineSeconds)).toEqual([3600, 7200]);
    proxy.unblock();
    await backAndUploaded(chi);
  });
});

describe("N43, N55: a restart without the service", () => {
  test("decides from its stored system, offline, counting from the saved last contact", async () => {
    const own = await startService();
    extraServers.push(own);
    const sys = await importSystem(own);
    const token = await nodeToken(own, sys);
    const dataFile = join(tempDir(), "node.db");
    const t0 = Date.parse("2026-04-15T09:00:00-05:00");
    let clock = t0;
    const first = await runNode(own, { systemId: sys, token, dataFile, now: () => clock });
    await first.node.ready();
    ok(await call(own, ROOT, "POST", `/${sys}/holders`, { firstName: "Stored", lastName: "Change" }), 201, "holder");
    await until("change followed", () => first.node.status().revision === 1);
    const held = first.node.engine!.snapshot;
    await first.node.close();
    await own.close();
    extraServers.splice(extraServers.indexOf(own), 1);

    // Two hours later, the service gone.
    clock = t0 + 7_200_000;
    const again = await runNode(own, { systemId: sys, token, dataFile, now: () => clock });
    await again.node.ready();
    expect(again.node.status()).toEqual({
      online: false,
      revision: 1,
      lastContact: iso(t0),
      pendingEvents: 0,
      rejectedEvents: 0,
      doors: [],
    });
    expect(again.node.engine!.snapshot).toEqual(held);
    // Two hours offline, not none: the restart did not reset the kill timer.
    expect(scanAt(again, NURSE, undefined, clock, offline(7200))).toMatchObject({ outcome: "allowed" });
    const past = t0 + (CHICAGO_KILL + 1) * 1000;
    expect(scanAt(again, NURSE, past, clock, offline(CHICAGO_KILL + 1))).toMatchObject({ reason: "offlineEcardOnly" });
    expect(again.node.status().pendingEvents).toBe(2);
  });
});

describe("N54: a data file of another node is refused", () => {
  test("another node, another system, another service: each refused, naming the node it belongs to", async () => {
    const { sys, chicago, london, proxy } = await system();
    const dataFile = join(tempDir(), "node.db");
    const first = await runNode(server, { systemId: sys, token: chicago, dataFile });
    await first.node.ready();
    await first.node.close();
    const base = { systemId: sys, dataFile, token: chicago, service: server.url, nodeId: NODE };
    const other = await importSystem(server);
    for (const wrong of [
      { ...base, nodeId: SECOND, token: london },
      { ...base, systemId: other },
      { ...base, service: proxy.url },
    ]) {
      const refused = CloudNode.start(wrong);
      await expect(refused).rejects.toBeInstanceOf(NodeStoreError);
      await expect(refused).rejects.toThrow(`belongs to cloud node ${NODE} of system ${sys} at ${server.url}`);
    }
    // The file is still the first node's: it starts from it again.
    const back = await runNode(server, { systemId: sys, token: chicago, dataFile });
    await back.node.ready();
    expect(back.node.status().revision).toBe(0);
  });
});

describe("N41: a clock marked unreliable (--clock-unreliable)", () => {
  test("offline scans have no time: the node's offline policy decides (0, 1 and 2)", async () => {
    const { sys, chicago, london, proxy } = await system();
    const t0 = Date.parse("2026-04-15T09:00:00-05:00");
    const l0 = Date.parse("2026-04-15T09:00:00+01:00");
    const chi = await runNode(proxy, { systemId: sys, token: chicago, now: () => t0, timeReliable: false });
    const lon = await runNode(proxy, {
      systemId: sys,
      token: london,
      nodeId: SECOND,
      now: () => l0,
      timeReliable: false,
    });
    await Promise.all([chi.node.ready(), lon.node.ready()]);
    // In contact, a scan is online whatever the clock (N44).
    expect(scanAt(chi, NURSE, t0 + 60_000, t0, { online: true })).toMatchObject({ outcome: "allowed" });
    proxy.block();
    await goneOffline(chi);
    await goneOffline(lon);
    // offlineSeconds is still sent, and ignored: a minute offline, yet only the policy counts.
    const minute = offline(60, false);
    expect(scanAt(chi, NURSE, t0 + 60_000, t0, minute)).toMatchObject({ outcome: "denied", reason: "offlineNot24x7" });
    expect(scanAt(chi, FACILITIES, t0 + 60_000, t0, minute)).toMatchObject({
      outcome: "allowed",
      reason: "offline24x7",
    });
    expect(scanAt(chi, ECARD, t0 + 60_000, t0, minute)).toMatchObject({ outcome: "allowed", reason: "ecard" });
    expect(scanAt(lon, LONDON_CARD, l0 + 60_000, l0, minute)).toMatchObject({ reason: "offlineEcardOnly" });
    proxy.unblock();
    await backAndUploaded(chi);
    await backAndUploaded(lon);

    // Policy 2: any allow rule of the holder, its window ignored (a weekday rule on a Sunday night).
    await setChicagoPolicy(sys, 2);
    await until("policy followed", () => policyOf(chi) === 2);
    proxy.block();
    await goneOffline(chi);
    const sunday = Date.parse("2026-04-19T03:00:00-05:00");
    expect(scanAt(chi, NURSE, sunday, t0, offline((sunday - t0) / 1000, false))).toMatchObject({
      outcome: "allowed",
      reason: "offlineAnySchedule",
    });
    proxy.unblock();
    await backAndUploaded(chi);
  });
});

describe("N56: the events of a chunk are stored before its answers are written", () => {
  test("two scans in one chunk, and one split across chunks, counted as pending when answered", async () => {
    const { sys, chicago, proxy } = await system();
    const t0 = Date.parse("2026-04-15T09:00:00-05:00");
    const chi = await runNode(proxy, { systemId: sys, token: chicago, now: () => t0 });
    await chi.node.ready();
    proxy.block();
    await goneOffline(chi);
    const writes: { lines: number; pending: number }[] = [];
    const stream = chi.node.scanStream((text) =>
      writes.push({ lines: text.split("\n").length - 1, pending: chi.node.status().pendingEvents }),
    );
    const line = (s: object, minute: number) => `${JSON.stringify({ ...s, at: iso(t0 + minute * 60_000) })}\n`;
    stream.push(Buffer.from(line(NURSE, 1) + line(FACILITIES, 2)));
    expect(writes).toEqual([{ lines: 2, pending: 2 }]);
    expect(chi.node.status().pendingEvents).toBe(2);
    const split = line(NURSE, 3) + line(ECARD, 4);
    const cut = split.length - 10;
    stream.push(Buffer.from(split.slice(0, cut)));
    expect(writes.at(-1)).toEqual({ lines: 1, pending: 3 });
    stream.push(Buffer.from(split.slice(cut)));
    expect(writes.at(-1)).toEqual({ lines: 1, pending: 4 });
    stream.end();
    expect(writes).toHaveLength(3);
    proxy.unblock();
    await backAndUploaded(chi);
  });
});
