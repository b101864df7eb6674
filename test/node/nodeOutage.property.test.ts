// A cloud node through random change sequences and random outages (N40–N44, N53, N56, N59, N61), end
// to end: a real service server on 127.0.0.1 over a SQLite file, a CloudNode in-process reaching it
// through a real TCP proxy that blocks the network, the node's clock a variable the program moves,
// and a real HTTPS webhook receiver. A generated program writes on the service (holders, cards,
// memberships, the node's offline policy, kill timer and e-cards), cuts and restores the network,
// moves the node's clock and scans at the building's devices. Every decision the node made must be
// `decide` of a fresh engine on the service's snapshot at the revision the node held, with the
// `node` field the node's contact gives at the scan's instant; and once the network is back, the
// service must have received each decision exactly once.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { type Engine, loadEngineOrThrow } from "../../src/index.js";
import { CloudNode } from "../../src/node/cloudNode.js";
import type { QueuedEvent } from "../../src/node/nodeStore.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { NODE, ROOT, call, nodeToken, ok, startService } from "../nodes/nodeSupport.js";
import { REPLAY } from "../property/support.js";
import { type TcpProxy, startTcpProxy } from "../support/tcpProxy.js";
import { RECEIVER_ALLOW, Receiver, selfSignedCertificate } from "../webhooks/receiver.js";
import { pollUntil } from "../support/until.js";

/**
 * A run is a whole service round trip with outages (about a second alone, a few under load: a cut is
 * noticed within a heartbeat, a feed reconnects after its back-off), so 10 runs by default;
 * RSOP_PROPERTY_RUNS scales it down by 100 (a 100,000-run hunt gives 1,000 runs here).
 */
const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 10
    : Math.max(10, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 100));
const TIMEOUT = 60_000 + NUM_RUNS * 30_000; // generous: the machine may be shared
/** How long any one wait on the node or the receiver may take. */
const WAIT_MS = 20_000;
/** Keep-alives often, so that a followed node is in contact at the clock's reading soon (N16, N42). */
const FEEDS = { keepAliveMs: 300 };
/** Wednesday 2026-04-15 09:00 in Chicago: the node's clock when a run starts. */
const START_MS = Date.parse("2026-04-15T14:00:00Z");
const DAY_S = 86_400;

const building = BUILDING_JSON as {
  holders: { id: string; credentials: { credentialNumber?: number }[] }[];
  groups: { id: string }[];
  devices: { id: string }[];
};
/** Cards of holders the example's requests use (a nurse, night shift, pharmacist, contractor, doctor, facilities). */
const KNOWN_CARDS = [10234, 11876, 20417, 30555, 12001, 15030];
/** node-chicago-main's e-cards (7001–7003) and one it may be given. */
const ECARDS = [7001, 7002, 7003, 7004];
/** Cards no holder has at first: the program may give them to holders. */
const NEW_CARDS = [48001, 48002, 48003];
const UNKNOWN_CARD = 64999;
const CARDS = [...KNOWN_CARDS, ...ECARDS, ...NEW_CARDS, UNKNOWN_CARD];
/** The holders of the known cards: the ones the program edits (with those it creates). */
const HOLDERS = building.holders
  .filter((h) => h.credentials.some((c) => KNOWN_CARDS.includes(c.credentialNumber ?? -1)))
  .map((h) => h.id);
const GROUPS = building.groups.map((g) => g.id);
const DOORS = ["door-main-entrance", "door-ward-3", "door-ward-4", "door-pharmacy", "door-plant-room", "lift-a-reader"];
const DEVICES = building.devices.map((d) => d.id);
const PINS = ["2468", "4821", "4829", "7350", "0000"];
/** The writable fields of a cloud node (PUT replaces it whole). */
const NODE_FIELDS = [
  "name",
  "description",
  "serialNumber",
  "ecards",
  "offlinePolicy",
  "killTimer",
  "timezone",
  "locale",
  "cardFormat",
];
const HOLDER_FIELDS = ["firstName", "lastName", "partition", "enabled", "activeDate", "expireDate", "pin", "duressPin"];

type Write =
  | { readonly op: "createHolder"; readonly card: number; readonly group: number; readonly pin: string | null }
  | { readonly op: "updateHolder"; readonly holder: number; readonly change: "enabled" | "pin" | "expire" | "renew" }
  | { readonly op: "deleteHolder"; readonly holder: number }
  | { readonly op: "addCard"; readonly holder: number; readonly card: number }
  | { readonly op: "removeCard"; readonly holder: number; readonly pick: number }
  | { readonly op: "join"; readonly holder: number; readonly group: number }
  | { readonly op: "leave"; readonly holder: number; readonly pick: number }
  | { readonly op: "node"; readonly offlinePolicy: number; readonly killTimer: number; readonly ecards: number[] };

interface Scan {
  readonly deviceId: string;
  readonly card: number;
  readonly pin: string | null;
  /** The scan's `at`, seconds from the node's clock; null: no `at` (dated by the node's clock, N46). */
  readonly atOffsetS: number | null;
}

type Step =
  | { readonly kind: "write"; readonly write: Write; readonly settle: boolean }
  | { readonly kind: "block" }
  | { readonly kind: "unblock"; readonly settle: boolean }
  | { readonly kind: "clock"; readonly ms: number }
  | { readonly kind: "scan"; readonly scans: readonly Scan[] };

const pick = fc.nat({ max: 1000 });
const writeArb: fc.Arbitrary<Write> = fc.oneof(
  fc.record({
    op: fc.constant("createHolder" as const),
    // A known card is refused (409: numbers are unique on a node) unless the program freed it.
    card: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...NEW_CARDS) }, fc.constantFrom(...KNOWN_CARDS)),
    group: pick,
    pin: fc.option(fc.constantFrom(...PINS)),
  }),
  fc.record({
    op: fc.constant("updateHolder" as const),
    holder: pick,
    change: fc.constantFrom("enabled" as const, "pin" as const, "expire" as const, "renew" as const),
  }),
  fc.record({ op: fc.constant("deleteHolder" as const), holder: pick }),
  fc.record({ op: fc.constant("addCard" as const), holder: pick, card: fc.constantFrom(...NEW_CARDS, ...ECARDS) }),
  fc.record({ op: fc.constant("removeCard" as const), holder: pick, pick }),
  fc.record({ op: fc.constant("join" as const), holder: pick, group: pick }),
  fc.record({ op: fc.constant("leave" as const), holder: pick, pick }),
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("node" as const),
      offlinePolicy: fc.constantFrom(0, 1, 2),
      // Short kill timers too (300 s is the least), so that a clock jump or two outlives them (N40).
      killTimer: fc.constantFrom(300, 3600, DAY_S, 3 * DAY_S),
      ecards: fc.subarray(ECARDS),
    }),
  },
);

const scanArb: fc.Arbitrary<Scan> = fc.record({
  deviceId: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...DOORS) }, fc.constantFrom(...DEVICES)),
  card: fc.constantFrom(...CARDS),
  pin: fc.option(fc.constantFrom(...PINS), { freq: 2 }),
  atOffsetS: fc.option(fc.integer({ min: -2 * DAY_S, max: DAY_S }), { freq: 3 }),
});
const scanStepArb: fc.Arbitrary<Step> = fc
  .array(scanArb, { minLength: 1, maxLength: 3 })
  .map((scans) => ({ kind: "scan" as const, scans }));
/** Forward up to 4 days (past the longest kill timer), or back a little (a clock set back, N42). */
const clockArb: fc.Arbitrary<Step> = fc
  .oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1000, max: 4 * DAY_S * 1000 }) },
    { weight: 1, arbitrary: fc.integer({ min: -600_000, max: -1 }) },
  )
  .map((ms) => ({ kind: "clock" as const, ms }));
const writeStepArb: fc.Arbitrary<Step> = fc
  .record({ write: writeArb, settle: fc.boolean() })
  .map((w) => ({ kind: "write" as const, ...w }));

/** Steps inside an outage: no network change. */
const quietStepArb = fc.oneof(
  { weight: 4, arbitrary: scanStepArb },
  { weight: 3, arbitrary: writeStepArb },
  { weight: 2, arbitrary: clockArb },
);
const anyStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 9, arbitrary: quietStepArb },
  { weight: 1, arbitrary: fc.constant({ kind: "block" as const }) },
  { weight: 1, arbitrary: fc.boolean().map((settle) => ({ kind: "unblock" as const, settle })) },
);

/** A program: some steps, then at least one outage with a scan in it, then more steps. */
const programArb = fc
  .record({
    before: fc.array(anyStepArb, { maxLength: 6 }),
    during: fc.array(quietStepArb, { maxLength: 6 }),
    duringScan: scanStepArb,
    settle: fc.boolean(),
    after: fc.array(anyStepArb, { maxLength: 6 }),
    timeReliable: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, fc.constant(false)),
  })
  .map((p) => ({
    timeReliable: p.timeReliable,
    steps: [
      ...p.before,
      { kind: "block" as const },
      ...p.during,
      p.duringScan,
      { kind: "unblock" as const, settle: p.settle },
      ...p.after,
    ] as Step[],
  }));

let server: RunningServiceServer;
let receiver: Receiver;
let dealer = "";

/** What the runs saw, for the report and the checks that the program reached every case. */
const seen = {
  runs: 0,
  steps: 0,
  writes: 0,
  refused: 0,
  decisions: 0,
  online: 0,
  offline: 0,
  /** Offline with the time known, beyond the kill timer of the device's node (N40). */
  beyondKill: 0,
  /** Decided at a revision behind the service's. */
  lagging: 0,
  /** Accepted and refused writes of each kind. */
  ops: {} as Record<string, { accepted: number; refused: number }>,
};

beforeAll(async () => {
  receiver = await Receiver.start(selfSignedCertificate());
  server = await startService(undefined, { nodeFeeds: FEEDS, webhooks: { allow: RECEIVER_ALLOW, backoffMs: 50 } });
  const mine = ok(await call(server, ROOT, "GET", "/api/organizations/mine"), 200, "mine") as { id: string }[];
  dealer = ok(
    await call(server, ROOT, "POST", `/api/organizations/${mine[0]!.id}/children`, { name: "Dealer" }),
    201,
    "d",
  ).id;
  // Every customer's decisions, under the dealer: the receiver sees each event the service accepted.
  ok(
    await call(server, ROOT, "POST", `/api/organizations/${dealer}/subscriptions`, {
      name: "all",
      url: receiver.url,
      scope: "recursive",
      authentication: { type: "Basic", user: "outage", password: "pw" },
      events: ["device.request.allowed", "device.request.denied", "device.request.unknown"],
      sslVerification: false,
      secrecyLevel: 0,
    }),
    201,
    "subscription",
  );
}, 60_000);

afterAll(async () => {
  await server?.close();
  await receiver?.stop();
  removeTempDirs();
});

const until = pollUntil(WAIT_MS);

const iso = (ms: number) => new Date(ms).toISOString();
const accepted = (status: number) => status >= 200 && status < 300;
type Decided = Omit<QueuedEvent, "seq">;

/** One run: a new customer with the example building, its node behind a proxy, the program's state. */
class Run {
  clock = START_MS;
  /** Every reading the node's clock has had: its last contact is always one of them (N42). */
  readonly clocks = new Set<number>([START_MS]);
  blocked = false;
  /** The clock when the network went down, once the node noticed; null when the network is up. */
  cutAt: number | null = null;
  /** The service's snapshot (as a download gives it, N13) at each revision of the run. */
  readonly snapshots = new Map<number, string>();
  readonly #engines = new Map<number, Engine>();
  serviceRevision = -1;
  readonly holders = [...HOLDERS];
  readonly events: Decided[] = [];
  readonly answers: any[] = [];
  readonly log: string[] = [];
  line = 0;
  created = 0;
  node!: CloudNode;
  proxy!: TcpProxy;
  token = "";
  sys = "";
  scans!: { push(chunk: Uint8Array): void; end(): void };

  constructor(readonly timeReliable: boolean) {}

  async start(): Promise<void> {
    const made = ok(
      await call(server, ROOT, "POST", `/api/organizations/${dealer}/children`, {
        name: `Customer ${randomUUID()}`,
        import: { ...(BUILDING_JSON as object), systemId: randomUUID() },
      }),
      201,
      "customer",
    );
    this.sys = made.systemId;
    this.token = await nodeToken(server, this.sys);
    await this.fetchSnapshot();
    this.proxy = await startTcpProxy(Number(new URL(server.url).port));
    this.node = await CloudNode.start({
      service: this.proxy.url,
      systemId: this.sys,
      nodeId: NODE,
      token: this.token,
      dataFile: join(tempDir(), "node.db"),
      now: () => this.clock,
      heartbeatSeconds: 1,
      retryMs: 50,
      timeReliable: this.timeReliable,
      log: (line) => this.log.push(line),
      onDecision: (e) => this.events.push(e),
    });
    this.scans = this.node.scanStream((text) => {
      for (const l of text.split("\n")) if (l !== "") this.answers.push(JSON.parse(l));
    });
    await this.node.ready();
    await this.settle();
  }

  async stop(): Promise<void> {
    await this.node?.close();
    await this.proxy?.close();
  }

  /** The service's snapshot now, kept under its revision; one accepted write is one change (N14). */
  async fetchSnapshot(): Promise<void> {
    const got = ok(
      await call(server, this.token, "GET", `/${this.sys}/cloud-nodes/${NODE}/node/snapshot`),
      200,
      "snapshot",
    );
    const text = JSON.stringify(got.snapshot);
    if (this.serviceRevision >= 0) {
      expect(got.revision - this.serviceRevision, "revisions per accepted write").toBeLessThanOrEqual(1);
      if (got.revision === this.serviceRevision) expect(text).toBe(this.snapshots.get(got.revision));
    }
    this.snapshots.set(got.revision, text);
    this.serviceRevision = got.revision;
  }

  engineAt(revision: number): Engine {
    let engine = this.#engines.get(revision);
    if (engine === undefined) {
      const text = this.snapshots.get(revision);
      if (text === undefined) throw new Error(`a decision at revision ${revision}, which the service never had`);
      engine = loadEngineOrThrow(JSON.parse(text));
      this.#engines.set(revision, engine);
    }
    return engine;
  }

  /** Waits until the node is in contact and holds the service's revision (N14, N61). */
  async settle(): Promise<void> {
    await until(
      `node online at revision ${this.serviceRevision}`,
      () => this.node.status().online && this.node.status().revision === this.serviceRevision,
    );
  }

  async step(step: Step): Promise<void> {
    seen.steps++;
    if (step.kind === "scan") scanAndCheck(this, step.scans);
    else if (step.kind === "clock") {
      this.clock += step.ms;
      this.clocks.add(this.clock);
    } else if (step.kind === "block") await this.block();
    else if (step.kind === "unblock") await this.unblock(step.settle);
    else {
      const done = await applyWrite(this, step.write);
      const tally = (seen.ops[step.write.op] ??= { accepted: 0, refused: 0 });
      if (!done) {
        seen.refused++;
        tally.refused++;
        return;
      }
      seen.writes++;
      tally.accepted++;
      await this.fetchSnapshot();
      if (step.settle && !this.blocked) await this.settle();
    }
  }

  /**
   * Cuts the network once the node's last contact is the clock's reading (a keep-alive is contact,
   * N42), and waits until the node notices (N59): its outage then counts from that reading.
   */
  async block(): Promise<void> {
    if (this.blocked) return;
    const clock = this.clock;
    await until("contact at the clock's reading", () => {
      const s = this.node.status();
      return s.online && s.lastContact === iso(clock);
    });
    this.proxy.block();
    this.blocked = true;
    await until("the node offline", () => !this.node.status().online);
    expect(this.node.status().lastContact).toBe(iso(clock));
    this.cutAt = clock;
  }

  async unblock(settle: boolean): Promise<void> {
    if (!this.blocked) return;
    this.proxy.unblock();
    this.blocked = false;
    this.cutAt = null;
    if (settle) await this.settle();
  }
}

/** The node's state for a scan at `atMs`, from its contact as read just before (N40, N41, N44). */
function expectedNode(online: boolean, lastContactMs: number, atMs: number, timeReliable: boolean): object {
  if (online) return { online: true };
  return {
    online: false,
    offlineSeconds: Math.max(0, Math.floor((atMs - lastContactMs) / 1000)),
    timeKnown: timeReliable,
  };
}

/**
 * Scans `scans` as one chunk of input and checks each decision: its event (N53) carries the revision
 * the node held, the scan's instant, the request with `at` and `node` filled in; its decision (and
 * answer) is that of a fresh engine on the service's snapshot at that revision.
 */
function scanAndCheck(run: Run, scans: readonly Scan[]): void {
  const requests = scans.map((s) => ({
    deviceId: s.deviceId,
    credential: { credentialNumber: s.card, facilityCode: 17 },
    ...(s.pin !== null ? { pin: s.pin } : {}),
    ...(s.atOffsetS !== null ? { at: iso(run.clock + s.atOffsetS * 1000) } : {}),
  }));
  // Read right before the chunk: the node decides it synchronously, nothing can change in between.
  const status = run.node.status();
  const firstEvent = run.events.length;
  const firstAnswer = run.answers.length;
  run.scans.push(Buffer.from(requests.map((r) => `${JSON.stringify(r)}\n`).join("")));
  const events = run.events.slice(firstEvent);
  const answers = run.answers.slice(firstAnswer);
  expect(events).toHaveLength(requests.length);
  expect(answers).toHaveLength(requests.length);
  const lastContactMs = Date.parse(status.lastContact!);
  expect(run.clocks.has(lastContactMs), `last contact ${status.lastContact} is a reading of the clock`).toBe(true);
  // In an outage the node's last contact is the clock's reading when the network went down (N42).
  if (!status.online && run.cutAt !== null) expect(lastContactMs).toBe(run.cutAt);
  if (run.blocked && run.cutAt !== null) expect(status.online).toBe(false);
  requests.forEach((scan, i) => {
    const event = events[i]!;
    const at = scan.at ?? run.clock;
    const atMs = typeof at === "number" ? at : Date.parse(at);
    const node = expectedNode(status.online, lastContactMs, atMs, run.timeReliable);
    const request = JSON.parse(event.request);
    const why = `scan ${JSON.stringify(scan)} at revision ${event.revision}, clock ${iso(run.clock)}`;
    expect(request, why).toEqual({ ...scan, at, node });
    expect(event.occurredAt, why).toBe(iso(atMs));
    expect(event.revision, why).toBe(status.revision);
    const expected = JSON.parse(JSON.stringify(run.engineAt(event.revision).decide(request)));
    expect(JSON.parse(event.decision), why).toEqual(expected);
    expect(answers[i], why).toEqual({ line: ++run.line, ...expected });
    seen.decisions++;
    if (status.online) seen.online++;
    else seen.offline++;
    if (beyondKill(run.engineAt(event.revision), request)) seen.beyondKill++;
    if (event.revision < run.serviceRevision) seen.lagging++;
  });
}

/** Whether a request was decided offline, the time known, beyond its device's node's kill timer. */
function beyondKill(engine: Engine, request: any): boolean {
  const node = request.node;
  if (node.online || !node.timeKnown) return false;
  const snapshot = engine.snapshot;
  const device = snapshot.devices.find((d) => d.id === request.deviceId);
  const owner = snapshot.cloudNodes.find((n) => n.id === device?.cloudNode);
  return owner?.killTimer != null && node.offlineSeconds > owner.killTimer;
}

/** A holder of the program's list (null when it has none left). */
const holderOf = (run: Run, n: number): string | null =>
  run.holders.length === 0 ? null : run.holders[n % run.holders.length]!;

/** Performs a write on the service as an admin would; whether it was accepted (refused ones are skipped). */
async function applyWrite(run: Run, w: Write): Promise<boolean> {
  const sys = `/${run.sys}`;
  const send = async (method: string, path: string, body?: unknown) =>
    accepted((await call(server, ROOT, method, `${sys}${path}`, body)).status);
  if (w.op === "createHolder") {
    const r = await call(server, ROOT, "POST", `${sys}/holders`, {
      firstName: "Outage",
      lastName: `Holder ${++run.created}`,
      groups: [GROUPS[w.group % GROUPS.length]],
      credentials: [{ types: ["card"], credentialNumber: w.card, facilityCode: 17 }],
      ...(w.pin !== null ? { pin: w.pin } : {}),
    });
    if (r.status === 201) run.holders.push(r.body.id);
    return r.status === 201;
  }
  if (w.op === "node") return updateNode(run, w);
  const holder = holderOf(run, w.holder);
  if (holder === null) return false;
  if (w.op === "deleteHolder") {
    const done = await send("DELETE", `/holders/${holder}`);
    if (done) run.holders.splice(run.holders.indexOf(holder), 1);
    return done;
  }
  if (w.op === "addCard")
    return send("POST", `/holders/${holder}/credentials`, {
      types: ["card"],
      credentialNumber: w.card,
      facilityCode: 17,
    });
  if (w.op === "join") return send("PUT", `/holders/${holder}/groups/${GROUPS[w.group % GROUPS.length]}`);
  const current = ok(await call(server, ROOT, "GET", `${sys}/holders/${holder}`), 200, "holder");
  if (w.op === "removeCard") {
    const cards = current.credentials as { id: string }[];
    if (cards.length === 0) return false;
    return send("DELETE", `/holders/${holder}/credentials/${cards[w.pick % cards.length]!.id}`);
  }
  if (w.op === "leave") {
    const groups = (current.groups as (string | { id: string })[]).map((g) => (typeof g === "string" ? g : g.id));
    if (groups.length === 0) return false;
    return send("DELETE", `/holders/${holder}/groups/${groups[w.pick % groups.length]}`);
  }
  const body: Record<string, unknown> = Object.fromEntries(HOLDER_FIELDS.map((k) => [k, current[k] ?? null]));
  if (w.change === "enabled") body.enabled = !current.enabled;
  else if (w.change === "pin") body.pin = current.pin === "2468" ? "1357" : "2468";
  else if (w.change === "expire") body.expireDate = iso(run.clock - DAY_S * 1000).slice(0, 19);
  else body.expireDate = null;
  return send("PUT", `/holders/${holder}`, body);
}

/** Changes node-chicago-main's offline policy, kill timer and e-cards, keeping its other fields. */
async function updateNode(run: Run, w: Extract<Write, { op: "node" }>): Promise<boolean> {
  const current = ok(await call(server, ROOT, "GET", `/${run.sys}/cloud-nodes/${NODE}`), 200, "cloud node");
  const body: Record<string, unknown> = {};
  for (const k of NODE_FIELDS) if (current[k] !== undefined && current[k] !== null) body[k] = current[k];
  Object.assign(body, { offlinePolicy: w.offlinePolicy, killTimer: w.killTimer, ecards: w.ecards });
  return accepted((await call(server, ROOT, "PUT", `/${run.sys}/cloud-nodes/${NODE}`, body)).status);
}

/** The receiver's notifications of a system's access events, in the subscription's order. */
const deliveredFor = (sys: string) =>
  receiver.delivered
    .filter((r) => r.body?.systemId === sys)
    .sort((a, b) => a.body.sequence - b.body.sequence)
    .map((r) => r.body.id as string);

/**
 * The service's answers to the node's uploads, by the node's log (N22): events it accepted, and ids
 * it had already (an upload whose answer a cut lost is sent again, N56).
 */
function uploadAnswers(run: Run): { accepted: number; duplicates: number } {
  const sum = { accepted: 0, duplicates: 0 };
  for (const line of run.log) {
    const m = /^uploaded (\d+) events \((\d+) already there\)$/.exec(line);
    if (m === null) continue;
    sum.accepted += Number(m[1]);
    sum.duplicates += Number(m[2]);
  }
  return sum;
}

/** The systems of finished runs, with their events, for the last look for late duplicates. */
const finished: { sys: string; ids: string[] }[] = [];

/**
 * The network back for good: the node catches up, scans online (N44), uploads its whole queue; the
 * service accepted each event once, and the receiver got each once, in the node's order (N22, N53).
 */
async function finish(run: Run): Promise<void> {
  await run.unblock(false);
  await run.settle();
  scanAndCheck(run, [{ deviceId: "door-ward-3", card: 10234, pin: null, atOffsetS: null }]);
  expect(run.node.engine!.snapshot).toEqual(JSON.parse(run.snapshots.get(run.serviceRevision)!));
  await until("the queue uploaded", async () => {
    await run.node.flush();
    return run.node.status().pendingEvents === 0;
  });
  const ids = run.events.map((e) => e.eventId);
  // Every event was answered once at least, none accepted twice; the receiver then tells exactly.
  const answered = uploadAnswers(run);
  expect(answered.accepted, run.log.join("\n")).toBeLessThanOrEqual(ids.length);
  expect(answered.accepted + answered.duplicates, run.log.join("\n")).toBeGreaterThanOrEqual(ids.length);
  await receiver.waitFor(() => deliveredFor(run.sys).length >= ids.length, WAIT_MS, `${ids.length} notifications`);
  expect(deliveredFor(run.sys)).toEqual(ids);
  finished.push({ sys: run.sys, ids });
}

describe("N40–N44, N53, N59, N61: a cloud node through random changes and outages", () => {
  test(
    "each decision is decide on the service's snapshot at the node's revision with the node's contact; each reaches the service once",
    async () => {
      await fc.assert(
        fc.asyncProperty(programArb, async (program) => {
          const run = new Run(program.timeReliable);
          try {
            await run.start();
            for (const step of program.steps) await run.step(step);
            await finish(run);
          } finally {
            await run.stop();
          }
          seen.runs++;
        }),
        // A failing run is reported as drawn: shrinking would replay whole end-to-end runs.
        { numRuns: NUM_RUNS, endOnFailure: true, ...REPLAY },
      );
      // Every program has an outage with a scan in it, and ends with a scan online.
      expect(seen.offline).toBeGreaterThan(0);
      expect(seen.online).toBeGreaterThan(0);
      expect(seen.writes).toBeGreaterThan(0);
      // No event arrived twice, even late: the runs' systems looked at again after the last one.
      for (const { sys, ids } of finished) expect(deliveredFor(sys)).toEqual(ids);
    },
    TIMEOUT,
  );
});
