// The cloud node runtime's acceptance test, with real processes over 127.0.0.1: `rsop serve` on a
// SQLite file, two `rsop node` children (Chicago Main and London Annex) fed scans on stdin, and a real
// HTTPS webhook receiver subscribed to the access events. A holder created on the service opens a
// node's door within a second (N14, N51); the node's sync status walks to synced (N8); with the
// service stopped (SIGTERM, then SIGKILL) the nodes keep deciding by the offline rules (N40, N43),
// also after a node is killed and restarted from its data file (N55, N56); and once the service is
// back every answered scan's access event is stored once and reaches the receiver, in each node's
// order (N22, N23, N53), arriving once but for what W12 allows after a crash of the service.
import { join } from "node:path";
import { afterAll, expect, onTestFinished, test } from "vitest";
import type { Engine } from "../../src/evaluate/index.js";
import { loadEngineOrThrow } from "../../src/index.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { buildCli } from "../support/cliChild.js";
import { RECEIVER_ALLOW, type Received, Receiver, selfSignedCertificate } from "../webhooks/receiver.js";
import {
  NodeChild,
  type ServiceChild,
  api,
  bounded,
  importSystemAt,
  killChildren,
  ok,
  serviceChild,
  until,
} from "./nodeProcessSupport.js";

afterAll(() => {
  killChildren();
  removeTempDirs();
});

const CHI = "node-chicago-main";
const LON = "node-london-annex";
const NODES = [CHI, LON] as const;
type NodeId = (typeof NODES)[number];
const KILL_TIMER: Record<NodeId, number> = { [CHI]: 259_200, [LON]: 86_400 };
const HOUR = 3_600_000;

const WEBHOOK_FLAGS = [
  "--webhook-backoff",
  "50",
  "--webhook-attempts",
  "1000000",
  "--webhook-allow",
  RECEIVER_ALLOW.join(","),
];

/** Where each node's scans are made and by whom: a door, a created holder's card, a weekday in its hours. */
const DOORS: Record<
  NodeId,
  { deviceId: string; weekday: number; card: { credentialNumber: number; facilityCode: number } }
> = {
  // Wednesday 2026-04-15, 09:15 in Chicago (CDT): the nurses' weekday rule.
  [CHI]: {
    deviceId: "door-ward-3",
    weekday: Date.parse("2026-04-15T14:15:00Z"),
    card: { credentialNumber: 60017, facilityCode: 17 },
  },
  // The same Wednesday, 10:00 in London (BST): the London staff's weekday rule.
  [LON]: {
    deviceId: "door-lon-reception",
    weekday: Date.parse("2026-04-15T09:00:00Z"),
    card: { credentialNumber: 60042, facilityCode: 42 },
  },
};

/** The holders this test creates, as the snapshot holds them (ids given by the service). */
const HOLDERS: Record<NodeId, Record<string, unknown>> = {
  [CHI]: {
    firstName: "Nina",
    lastName: "Endtoend",
    partition: "part-main-campus",
    groups: ["grp-nurses"],
    credentials: [{ id: "cred-e2e-chicago", types: ["card"], ...DOORS[CHI].card }],
  },
  [LON]: {
    firstName: "Leo",
    lastName: "Endtoend",
    partition: "part-london-annex",
    groups: ["grp-london-annex-staff"],
    credentials: [{ id: "cred-e2e-london", types: ["card"], ...DOORS[LON].card }],
  },
};

interface Scan {
  deviceId: string;
  at: string;
  credential: object;
}

/** Everything the steps share: the processes, the system, and every scan answered so far. */
class World {
  cli = "";
  db = join(tempDir(), "service.db");
  port = 0;
  service!: ServiceChild;
  base = "";
  systemId = "";
  customerId = "";
  receiver!: Receiver;
  readonly tokens = {} as Record<NodeId, string>;
  readonly dataFiles = { [CHI]: join(tempDir(), "chicago.db"), [LON]: join(tempDir(), "london.db") };
  readonly nodes = {} as Record<NodeId, NodeChild>;
  /** The `at` (UTC ISO) of every answered scan of each node, in scan order: its access events. */
  readonly scanned: Record<NodeId, string[]> = { [CHI]: [], [LON]: [] };
  /** Answer lines written by the running process of each node, to check each answer's `line`. */
  readonly lines: Record<NodeId, number> = { [CHI]: 0, [LON]: 0 };
  /** The holders created, as snapshot records. */
  readonly created: Record<string, unknown>[] = [];
  /** Ids of events delivered before the service was killed (W12: they may arrive again). */
  readonly #mayRepeat = new Set<string>();
  #tick = 0;

  async startService(port = 0): Promise<void> {
    const args = ["--data", this.db, "--port", String(port), "--host", "127.0.0.1", ...WEBHOOK_FLAGS];
    this.service = await serviceChild(this.cli, args);
    this.base = this.service.url;
    this.port = Number(new URL(this.base).port);
  }

  startNode(id: NodeId): NodeChild {
    const node = new NodeChild(this.cli, {
      service: this.base,
      systemId: this.systemId,
      nodeId: id,
      token: this.tokens[id],
      dataFile: this.dataFiles[id],
      heartbeatSeconds: 1,
    });
    this.nodes[id] = node;
    this.lines[id] = 0;
    return node;
  }

  /** A scan at `id`'s door with `card`, at `baseMs` plus a tick (every scan of a node has its own instant). */
  request(id: NodeId, baseMs: number, card: object = DOORS[id].card): Scan {
    return this.requestAt(id, baseMs + ++this.#tick * 1000, card);
  }

  /** A scan at `id`'s door with `card` at exactly `atMs`. */
  requestAt(id: NodeId, atMs: number, card: object = DOORS[id].card): Scan {
    return { deviceId: DOORS[id].deviceId, at: new Date(atMs).toISOString(), credential: card };
  }

  /** Scans at node `id`; the answer (its `line` checked, then left out), the scan recorded as an event. */
  async scan(id: NodeId, request: { at: string }): Promise<any> {
    const { line, ...decision } = await this.nodes[id].scan(request);
    expect(line, `${id}: one answer line per scan, numbered`).toBe(++this.lines[id]);
    this.scanned[id].push(request.at);
    return decision;
  }

  /** The engine `rsop decide` runs on the system as the service holds it now. */
  engine(): Engine {
    const b = BUILDING_JSON as { holders: unknown[] };
    return loadEngineOrThrow({ ...b, systemId: this.systemId, holders: [...b.holders, ...this.created] });
  }

  async createHolder(body: Record<string, unknown>): Promise<string> {
    const id = ok(await api(this.base, "POST", `/${this.systemId}/holders`, body), 201, "holder").id as string;
    this.created.push({ id, ...body });
    return id;
  }

  async nodeStatus(id: NodeId): Promise<any> {
    return ok(await api(this.base, "GET", `/${this.systemId}/cloud-nodes/${id}`), 200, `cloud node ${id}`);
  }

  /** The notifications received, each event once: its first arrival (receivers de-duplicate on `id`, W12). */
  firstArrivals(): Received[] {
    const seen = new Set<string>();
    return this.receiver.delivered.filter((r) => !seen.has(r.body.id) && seen.add(r.body.id) !== undefined);
  }

  /** The access events the receiver got from node `id`, each once, in arrival order. */
  delivered(id: NodeId): any[] {
    return this.firstArrivals()
      .map((r) => r.body)
      .filter((b) => b.cloudNode?.id === id);
  }

  /** Notes that the service is killed now: what it delivered so far may arrive again (W12). */
  killingService(): void {
    for (const r of this.receiver.delivered) this.#mayRepeat.add(r.body.id);
  }

  /**
   * Waits until every answered scan's event has arrived, then: each node's events exactly its scans,
   * in scan order, each stored once (one `sequence` each, 1, 2, 3, … with no gap), nothing else
   * (N22, N23, N25, N53). An event arrives once, except that one the service had delivered just
   * before it was killed may be sent again, unchanged (W12: its removal from the outbox is committed
   * every 10 ms).
   */
  async checkDeliveries(what: string): Promise<void> {
    const want = () => NODES.every((id) => this.delivered(id).length >= this.scanned[id].length);
    await this.receiver.waitFor(want, 20_000, `${what}: the events of every answered scan`);
    const first = this.firstArrivals();
    for (const r of this.receiver.delivered) {
      const original = first.find((f) => f.body.id === r.body.id)!;
      if (original === r) continue;
      expect(this.#mayRepeat.has(r.body.id), `${what}: ${r.body.id} arrived twice, not after a crash`).toBe(true);
      expect(r.raw.toString(), `${what}: a repeat is the same notification`).toBe(original.raw.toString());
    }
    for (const id of NODES)
      expect(
        this.delivered(id).map((b) => b.occurredAt),
        `${what}: ${id}'s events, once each, in the order scanned`,
      ).toEqual(this.scanned[id]);
    expect(first.length, `${what}: no event but the nodes' scans`).toBe(
      this.scanned[CHI].length + this.scanned[LON].length,
    );
    expect(
      first.map((r) => r.body.sequence),
      `${what}: each event stored once, in order`,
    ).toEqual(first.map((_, i) => i + 1));
  }
}

/** What the engine decides for `request` online (N44). */
function online(engine: Engine, request: object): unknown {
  return JSON.parse(JSON.stringify(engine.decide({ ...request, node: { online: true } })));
}

/**
 * What the engine decides for `request` at a node offline since its last contact, which was between
 * `low` and `high` (epoch ms) (N40): the same decision for both, since each scan is hours from any
 * kill-timer edge.
 */
function offline(engine: Engine, request: { at: string }, low: number, high: number): unknown {
  const at = Date.parse(request.at);
  const at_ = (lc: number) => {
    const node = { online: false, offlineSeconds: Math.max(0, Math.floor((at - lc) / 1000)), timeKnown: true };
    return JSON.parse(JSON.stringify(engine.decide({ ...request, node })));
  };
  const d = at_(low);
  expect(at_(high), "the expected decision does not hang on the exact last contact").toEqual(d);
  return d;
}

/** The service, a customer with the example building, the receiver subscribed, both nodes started. */
async function setUp(w: World): Promise<void> {
  w.cli = await buildCli("node-e2e");
  w.receiver = await Receiver.start(selfSignedCertificate());
  onTestFinished(() => w.receiver.stop());
  await w.startService();
  ({ customerId: w.customerId, systemId: w.systemId } = await importSystemAt(w.base));
  ok(
    await api(w.base, "POST", `/api/organizations/${w.customerId}/subscriptions`, {
      name: "Node end to end",
      url: w.receiver.url,
      scope: "this",
      authentication: { type: "None" },
      events: ["device.request.allowed", "device.request.denied", "device.request.unknown"],
      sslVerification: false,
    }),
    201,
    "subscription",
  );
  for (const id of NODES) {
    w.tokens[id] = ok(await api(w.base, "POST", `/${w.systemId}/cloud-nodes/${id}/token`), 200, "token").token;
    w.startNode(id);
  }
  // Before the holders exist their cards are unknown at both nodes, which answer once they have
  // downloaded the system (N57), online (N44).
  const engine = w.engine();
  for (const id of NODES) {
    const r = w.request(id, DOORS[id].weekday);
    const d = await w.scan(id, r);
    expect(d, `${id}: a card no holder has`).toMatchObject({ outcome: "unknown", reason: "unknownCredential" });
    expect(d).toEqual(online(engine, r));
  }
}

/**
 * (a) A holder created on the service is allowed at its node within 1 s of the create's answer
 * (N14, N51, the acceptance list's deadline): scans are polled until one is allowed.
 */
async function holderAllowedWithinASecond(w: World, id: NodeId, flow: string[]): Promise<void> {
  const watch = watchSync(w, id, flow);
  try {
    const holderId = await w.createHolder(HOLDERS[id]);
    const answered = performance.now();
    let d: any;
    let r: Scan;
    for (;;) {
      r = w.request(id, DOORS[id].weekday);
      d = await w.scan(id, r);
      if (d.outcome === "allowed" || performance.now() - answered > 5000) break;
    }
    const elapsed = performance.now() - answered;
    expect(d, `${id}: the new holder is allowed`).toMatchObject({ outcome: "allowed", holderId });
    expect(d).toEqual(online(w.engine(), r));
    expect(elapsed, `${id}: allowed ${Math.round(elapsed)} ms after the create's answer`).toBeLessThan(1000);
    await until(`${id} synced`, async () => (await w.nodeStatus(id)).syncStatus.synced === true);
  } finally {
    await watch();
  }
}

/** Records `id`'s syncStatus (synced, or its dataFlowStatus) as it changes, until the answer is called. */
function watchSync(w: World, id: NodeId, into: string[]): () => Promise<void> {
  let on = true;
  const loop = (async () => {
    while (on) {
      const s = (await w.nodeStatus(id)).syncStatus;
      const v = s.synced === true ? "synced" : String(s.details.dataFlowStatus);
      if (into.at(-1) !== v) into.push(v);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return async () => {
    on = false;
    await loop;
  };
}

/**
 * (b) A node that has not applied a change is not synced, Pending (or Started) while connected
 * (N8), and synced once it has acknowledged it: the node is paused (SIGSTOP) across the change.
 */
async function syncWalk(w: World, flow: string[]): Promise<void> {
  const node = w.nodes[CHI];
  node.child.kill("SIGSTOP");
  try {
    await w.createHolder({ firstName: "Late", lastName: "Change", groups: ["grp-nurses"] });
    const s = (await w.nodeStatus(CHI)).syncStatus;
    flow.push(s.synced === true ? "synced" : String(s.details.dataFlowStatus));
    expect(s.synced, "a paused node has not acknowledged the change").toBe(false);
    expect(["Pending", "Started"], "a connected node behind the system").toContain(s.details.dataFlowStatus);
  } finally {
    node.child.kill("SIGCONT");
  }
  const done = watchSync(w, CHI, flow);
  try {
    await until("synced after the node goes on", async () => flow.at(-1) === "synced");
  } finally {
    await done();
  }
  expect((await w.nodeStatus(CHI)).connectionStatus.connected).toBe(true);
}

/** Stops the service with `signal`: the instants around it (the last contact of each node is before `after`). */
async function stopService(w: World, signal: NodeJS.Signals): Promise<{ before: number; after: number }> {
  const exited = new Promise((r) => w.service.child.once("exit", r));
  const before = Date.now();
  w.service.child.kill(signal);
  await bounded(exited, 20_000, `the service to exit on ${signal}`);
  return { before, after: Date.now() };
}

/** Occurrences of `pattern` in a node's stderr. */
const count = (node: NodeChild, pattern: RegExp) => (node.stderr.match(new RegExp(pattern, "g")) ?? []).length;

/**
 * (c) Offline scans at node `id`, the service stopped, the last contact between `low` and `high`:
 * before the last contact (0 s offline: normal rules), within the kill timer, past it (e-card only,
 * N40), and an e-card past it; each answered as the engine decides it.
 */
async function offlineScans(w: World, id: NodeId, low: number, high: number): Promise<void> {
  const engine = w.engine();
  const kill = KILL_TIMER[id] * 1000;
  const past = w.request(id, DOORS[id].weekday + HOUR);
  const d = await w.scan(id, past);
  expect(d, `${id}: a scan dated before the last contact is decided by the normal rules`).toMatchObject({
    outcome: "allowed",
    reason: "allowed",
  });
  expect(d).toEqual(offline(engine, past, low, high));
  const within = w.request(id, high + kill - 2 * HOUR);
  expect(await w.scan(id, within), `${id}: within the kill timer`).toEqual(offline(engine, within, low, high));
  const beyond = w.request(id, high + kill + 2 * HOUR);
  const late = await w.scan(id, beyond);
  expect(late, `${id}: past the kill timer, e-cards only`).toMatchObject({
    outcome: "denied",
    reason: "offlineEcardOnly",
  });
  expect(late).toEqual(offline(engine, beyond, low, high));
  const ecard = w.request(id, high + kill + 3 * HOUR, { credentialNumber: 7001, facilityCode: 17 });
  const e = await w.scan(id, ecard);
  // Chicago Main lists 7001 as an e-card; London Annex lists none.
  expect(e, `${id}: card 7001 past the kill timer`).toMatchObject(
    id === CHI ? { outcome: "allowed", reason: "ecard" } : { outcome: "denied", reason: "offlineEcardOnly" },
  );
  expect(e).toEqual(offline(engine, ecard, low, high));
}

const OFFLINE = /rsop node: offline: /;
const ONLINE = /rsop node: online at revision/;

/** How often each running node has logged `pattern` so far. */
function marks(w: World, pattern: RegExp): Record<NodeId, number> {
  return { [CHI]: count(w.nodes[CHI], pattern), [LON]: count(w.nodes[LON], pattern) };
}

/** Waits until each node has logged `pattern` again since `since` (N59: it says when it goes offline or online). */
async function loggedAgain(w: World, pattern: RegExp, since: Record<NodeId, number>): Promise<void> {
  for (const id of NODES) await until(`${id} logs ${pattern}`, () => count(w.nodes[id], pattern) > since[id]);
}

test("two `rsop node` processes against `rsop serve`: a new holder within 1 s, sync status, offline decisions across SIGTERM and SIGKILL of the service and a node, every answered scan's event stored once and delivered in each node's order (N8, N23, N40, N43, N53, N56)", async ({
  annotate,
}) => {
  onTestFinished(killChildren);
  const w = new World();
  await setUp(w);

  // (a) and (b)
  const flows: Record<string, string[]> = { [CHI]: [], [LON]: [], paused: [] };
  for (const id of NODES) await holderAllowedWithinASecond(w, id, flows[id]!);
  await syncWalk(w, flows.paused!);
  expect(flows.paused![0], "the paused node's first status").toMatch(/^(Pending|Started)$/);
  expect(flows.paused!.at(-1)).toBe("synced");
  await w.checkDeliveries("online");

  // (c) The service stopped with SIGTERM: both nodes keep deciding, offline.
  let offlineMark = marks(w, OFFLINE);
  const term = await stopService(w, "SIGTERM");
  await loggedAgain(w, OFFLINE, offlineMark);
  for (const id of NODES) await offlineScans(w, id, term.before - 10_000, term.after);
  let onlineMark = marks(w, ONLINE);
  await w.startService(w.port);
  await loggedAgain(w, ONLINE, onlineMark);
  await w.checkDeliveries("after the SIGTERM outage");

  // (c), (d) The service killed: London Annex killed too after answering scans (its events queued in
  // its data file, N56), restarted from that file; it decides offline, counting from the saved last
  // contact (N43, N55).
  offlineMark = marks(w, OFFLINE);
  w.killingService();
  const kill = await stopService(w, "SIGKILL");
  await loggedAgain(w, OFFLINE, offlineMark);
  for (const id of NODES) await offlineScans(w, id, kill.before - 10_000, kill.after);
  await w.nodes[LON].kill("SIGKILL");
  await restartedOffline(w, kill);

  // (e) The service back on the same port and file: every event once, in each node's order.
  onlineMark = marks(w, ONLINE);
  await w.startService(w.port);
  await loggedAgain(w, ONLINE, onlineMark);
  await w.checkDeliveries("after the SIGKILL outage");
  await cutOffAndBack(w, flows);

  await annotate(`dataFlowStatus seen: ${JSON.stringify(flows)}`);
  for (const id of NODES) expect(await w.nodes[id].end(), `${id} exits 0 when its stdin ends`).toBe(0);
  await w.checkDeliveries("at the end");
}, 150_000);

/**
 * (d) London Annex, killed while the service is down, restarted from its data file: it answers from
 * its stored system, offline, its kill timer counting from the last contact it saved, not from its
 * restart (N43, N55): a scan 2 s past the kill timer after that contact, though less than the kill
 * timer after the restart, is e-card only.
 */
async function restartedOffline(w: World, kill: { before: number; after: number }): Promise<void> {
  // The restart at least 5 s after the last contact, so that the two ways of counting differ.
  await until("5 s after the service was killed", () => Date.now() >= kill.after + 5000, 10_000);
  const restarted = Date.now();
  w.startNode(LON);
  await offlineScans(w, LON, kill.before - 10_000, kill.after);
  const edge = w.requestAt(LON, kill.after + (KILL_TIMER[LON] + 2) * 1000);
  expect(Date.parse(edge.at) - restarted, "within the kill timer after the restart").toBeLessThan(
    KILL_TIMER[LON] * 1000,
  );
  const d = await w.scan(LON, edge);
  expect(d, "past the kill timer since the saved last contact").toMatchObject({ reason: "offlineEcardOnly" });
  expect(d).toEqual(offline(w.engine(), edge, kill.before - 10_000, kill.after));
}

/**
 * (e) A node cut off (killed) while the system changes is BlockedByOfflineNode once 3 heartbeat
 * intervals have passed (N7, N8); restarted from its data file it catches up, is synced again, and
 * allows the holder created meanwhile.
 */
async function cutOffAndBack(w: World, flows: Record<string, string[]>): Promise<void> {
  const cut: string[] = [];
  flows.cut = cut;
  await w.nodes[CHI].kill("SIGKILL");
  const body = {
    firstName: "After",
    lastName: "Cut",
    partition: "part-main-campus",
    groups: ["grp-nurses"],
    credentials: [{ id: "cred-e2e-after-cut", types: ["card"], credentialNumber: 60018, facilityCode: 17 }],
  };
  const holderId = await w.createHolder(body);
  const stop = watchSync(w, CHI, cut);
  try {
    await until("BlockedByOfflineNode", () => cut.includes("BlockedByOfflineNode"));
    expect((await w.nodeStatus(CHI)).connectionStatus.connected).toBe(false);
    w.startNode(CHI);
    await until("synced after the node restarted", () => cut.at(-1) === "synced", 20_000);
  } finally {
    await stop();
  }
  const r = w.request(CHI, DOORS[CHI].weekday, { credentialNumber: 60018, facilityCode: 17 });
  const d = await w.scan(CHI, r);
  expect(d, "the holder created while the node was down").toMatchObject({ outcome: "allowed", holderId });
  expect(d).toEqual(online(w.engine(), r));
}
