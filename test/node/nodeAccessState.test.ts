// The state a cloud node keeps for its areas and doors (SPEC §15, docs/semantics.md AB1–AB7, UF2–UF3),
// in-process against a real service server on 127.0.0.1, and `rsop node` killed with SIGKILL: hard
// anti-passback holds across a restart on the node's data file; the service's reset and forgive
// routes reach the node through its change feed and are applied once, by value; a deleted holder or
// area drops its state; occupancy counts entries and exits; the first person in unlocks a door.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { CloudNode, type CloudNodeOptions } from "../../src/node/cloudNode.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { NODE, ROOT, call, nodeToken, ok, startService } from "../nodes/nodeSupport.js";
import { buildCli } from "../support/cliChild.js";
import { NodeChild, killChildren } from "./nodeProcessSupport.js";
import { pollUntil } from "../support/until.js";

let server: RunningServiceServer;
const nodes: CloudNode[] = [];

beforeAll(async () => {
  server = await startService(undefined, { nodeFeeds: { keepAliveMs: 300 } });
}, 60_000);
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});
afterAll(async () => {
  killChildren();
  await server?.close();
  removeTempDirs();
});

const until = pollUntil(10_000);

const MAIN = "area-main";
const WARD = "area-ward-3";
const MARIA = "holder-0001";
const BRIDGET = "holder-0027";
const INGRID = "holder-0022";
const CARDS: Record<string, number> = { [MARIA]: 10234, [BRIDGET]: 41513, [INGRID]: 13280 };
/** Wednesday morning at Chicago Main: the nurses' day rule is open (06:30–19:30). */
const WEDNESDAY = Date.parse("2026-04-15T09:15:00-05:00");
const STAFF_DOOR = "door-staff-entrance";
const UNLOCK_RULE = "rule-staff-entrance-unlock";

/**
 * The example building with two areas at Chicago Main — the main building (hard anti-passback, in
 * at the main entrance, out at its exit reader) and ward 3 (at most two inside, in at ward 3, out at
 * ward 4) — and the staff entrance held unlocked on weekdays 08:00–18:00 once a first person is in.
 */
function building(): unknown {
  const b = structuredClone(BUILDING_JSON) as Record<string, any>;
  b.systemId = randomUUID();
  b.areas = [
    {
      id: MAIN,
      name: "Main building",
      entries: ["door-main-entrance"],
      exits: ["door-main-entrance-exit"],
      antiPassback: { mode: "hard", resetSeconds: 0 },
    },
    { id: WARD, name: "Ward 3", entries: ["door-ward-3"], exits: ["door-ward-4"], occupancyLimit: 2 },
  ];
  for (const d of b.devices) if (d.id === STAFF_DOOR) d.autoOpenAfterFirstAllow = true;
  b.rules.push({
    id: UNLOCK_RULE,
    name: "Staff entrance open in the day",
    groupId: "grp-nurses",
    type: "door",
    allow: true,
    action: "unlock",
    devices: [STAFF_DOOR],
    recurring: ["Mon", "Tue", "Wed", "Thu", "Fri"],
    startTime: "08:00:00",
    stopTime: "18:00:00",
  });
  return b;
}

/** A customer of its own dealer with `building()` imported: its system id and the node's token. */
async function system(): Promise<{ sys: string; token: string }> {
  const mine = ok(await call(server, ROOT, "GET", "/api/organizations/mine"), 200, "mine") as { id: string }[];
  const dealer = ok(
    await call(server, ROOT, "POST", `/api/organizations/${mine[0]!.id}/children`, { name: `Dealer ${randomUUID()}` }),
    201,
    "dealer",
  ).id;
  const made = ok(
    await call(server, ROOT, "POST", `/api/organizations/${dealer}/children`, { name: "Customer", import: building() }),
    201,
    "customer",
  );
  const sys = made.systemId as string;
  return { sys, token: await nodeToken(server, sys) };
}

/** A scan of `holder`'s card at `deviceId`, `minutes` after Wednesday 09:15. */
const card = (holder: string, deviceId: string, minutes = 0) => ({
  deviceId,
  at: new Date(WEDNESDAY + minutes * 60_000).toISOString(),
  credential: { credentialNumber: CARDS[holder], facilityCode: 17 },
});

interface Running {
  readonly node: CloudNode;
  /** The decisions of the access events the node queued, in order. */
  readonly events: any[];
  /** Pushes one scan; its answer (written before push returns, N56). */
  scan(request: object): any;
}

async function runNode(
  sys: string,
  token: string,
  dataFile: string,
  extra: Partial<CloudNodeOptions> = {},
): Promise<Running> {
  const events: any[] = [];
  const node = await CloudNode.start({
    service: server.url,
    systemId: sys,
    nodeId: NODE,
    token,
    dataFile,
    heartbeatSeconds: 1,
    retryMs: 50,
    onDecision: (e) => events.push(JSON.parse(e.decision)),
    ...extra,
  });
  nodes.push(node);
  await node.ready();
  const answers: any[] = [];
  const stream = node.scanStream((text) => {
    for (const l of text.split("\n")) if (l !== "") answers.push(JSON.parse(l));
  });
  return {
    node,
    events,
    scan(request) {
      const before = answers.length;
      stream.push(Buffer.from(`${JSON.stringify(request)}\n`));
      expect(answers.length).toBe(before + 1);
      return answers[before];
    },
  };
}

/** Closes a node as its operator would, and takes it out of the cleanup list. */
async function stop(r: Running): Promise<void> {
  nodes.splice(nodes.indexOf(r.node), 1);
  await r.node.close();
}

const inside = (node: CloudNode, area: string) => Object.keys(node.accessState().areas[area] ?? {}).sort();

describe("a cloud node's areas and doors (SPEC §15)", () => {
  test("hard anti-passback holds across a restart on the node's data file; an exit lets the holder in again (AB1, AB2, AB7)", async () => {
    const { sys, token } = await system();
    const file = join(tempDir(), "node.db");
    let r = await runNode(sys, token, file);
    expect(r.scan(card(MARIA, "door-main-entrance"))).toMatchObject({ outcome: "allowed", reason: "allowed" });
    expect(r.node.accessState().areas[MAIN]).toEqual({ [MARIA]: WEDNESDAY });
    // The event carries the stateful decision, as the answer does.
    expect(r.scan(card(MARIA, "door-main-entrance", 1))).toMatchObject({
      outcome: "denied",
      reason: "antiPassback",
      holderId: MARIA,
      activeRuleId: null,
    });
    await stop(r);

    r = await runNode(sys, token, file);
    expect(r.node.accessState().areas[MAIN]).toEqual({ [MARIA]: WEDNESDAY });
    expect(r.scan(card(MARIA, "door-main-entrance", 2))).toMatchObject({ outcome: "denied", reason: "antiPassback" });
    expect(r.scan(card(MARIA, "door-main-entrance-exit", 3))).toMatchObject({ outcome: "allowed" });
    expect(inside(r.node, MAIN)).toEqual([]);
    expect(r.scan(card(MARIA, "door-main-entrance", 4))).toMatchObject({ outcome: "allowed", reason: "allowed" });
    // The access events hold the decisions the node answered.
    expect(r.events.map((d) => d.reason)).toEqual(["antiPassback", "allowed", "allowed"]);
  });

  test("the reset and forgive routes reach the node by its change feed and are applied once, by value, also across a restart (AB6)", async () => {
    const { sys, token } = await system();
    const file = join(tempDir(), "node.db");
    let r = await runNode(sys, token, file);
    for (const h of [MARIA, BRIDGET])
      expect(r.scan(card(h, "door-main-entrance"))).toMatchObject({ outcome: "allowed" });
    expect(inside(r.node, MAIN)).toEqual([MARIA, BRIDGET]);

    ok(await call(server, ROOT, "POST", `/${sys}/areas/${MAIN}/forgive`, { holderId: MARIA }), 204, "forgive");
    await until("Maria forgiven at the node", () => !inside(r.node, MAIN).includes(MARIA));
    expect(inside(r.node, MAIN)).toEqual([BRIDGET]);
    expect(r.scan(card(MARIA, "door-main-entrance", 5))).toMatchObject({ outcome: "allowed" });
    expect(r.scan(card(BRIDGET, "door-main-entrance", 5))).toMatchObject({ reason: "antiPassback" });

    ok(await call(server, ROOT, "POST", `/${sys}/areas/${MAIN}/reset`), 204, "reset");
    await until("the area emptied at the node", () => inside(r.node, MAIN).length === 0);
    expect(r.scan(card(BRIDGET, "door-main-entrance", 6))).toMatchObject({ outcome: "allowed" });
    // Entered after the reset: a restart must not apply the same reset (or forgive) again.
    await stop(r);
    r = await runNode(sys, token, file);
    expect(inside(r.node, MAIN)).toEqual([BRIDGET]);
    expect(r.scan(card(BRIDGET, "door-main-entrance", 7))).toMatchObject({ reason: "antiPassback" });

    // Forgiving the same holder again is a new value: applied again.
    ok(await call(server, ROOT, "POST", `/${sys}/areas/${MAIN}/forgive`, { holderId: BRIDGET }), 204, "forgive");
    await until("Bridget forgiven at the node", () => inside(r.node, MAIN).length === 0);
  });

  test("a reset written while the node was stopped is applied at its next start, from the snapshot it downloads or follows (AB6)", async () => {
    const { sys, token } = await system();
    const file = join(tempDir(), "node.db");
    let r = await runNode(sys, token, file);
    expect(r.scan(card(MARIA, "door-main-entrance"))).toMatchObject({ outcome: "allowed" });
    await stop(r);
    ok(await call(server, ROOT, "POST", `/${sys}/areas/${MAIN}/reset`), 204, "reset");
    r = await runNode(sys, token, file);
    await until("the reset applied after the restart", () => inside(r.node, MAIN).length === 0);
    expect(r.scan(card(MARIA, "door-main-entrance", 1))).toMatchObject({ outcome: "allowed" });
  });

  test("a deleted holder drops out of every area, a deleted area drops its state (AB6)", async () => {
    const { sys, token } = await system();
    const r = await runNode(sys, token, join(tempDir(), "node.db"));
    for (const h of [MARIA, BRIDGET]) {
      expect(r.scan(card(h, "door-main-entrance"))).toMatchObject({ outcome: "allowed" });
      expect(r.scan(card(h, "door-ward-3"))).toMatchObject({ outcome: "allowed" });
    }
    ok(await call(server, ROOT, "DELETE", `/${sys}/holders/${BRIDGET}`), 204, "delete holder");
    await until("Bridget gone from both areas", () => !inside(r.node, MAIN).includes(BRIDGET));
    expect(inside(r.node, MAIN)).toEqual([MARIA]);
    expect(inside(r.node, WARD)).toEqual([MARIA]);
    ok(await call(server, ROOT, "DELETE", `/${sys}/areas/${MAIN}`), 204, "delete area");
    await until("the main building's state dropped", () => r.node.accessState().areas[MAIN] === undefined);
    expect(inside(r.node, WARD)).toEqual([MARIA]);
    // No area at the main entrance any more: the rules alone decide.
    expect(r.scan(card(MARIA, "door-main-entrance", 1))).toMatchObject({ outcome: "allowed" });
    expect(r.node.accessState().areas[MAIN]).toBeUndefined();
  });

  test("occupancy: a full area refuses a newcomer, not a holder inside; an exit makes room (AB3, AB4)", async () => {
    const { sys, token } = await system();
    const r = await runNode(sys, token, join(tempDir(), "node.db"));
    expect(r.scan(card(MARIA, "door-ward-3"))).toMatchObject({ outcome: "allowed" });
    expect(r.scan(card(BRIDGET, "door-ward-3", 1))).toMatchObject({ outcome: "allowed" });
    expect(r.scan(card(INGRID, "door-ward-3", 2))).toMatchObject({
      outcome: "denied",
      reason: "occupancyLimit",
      holderId: INGRID,
      activeRuleId: null,
    });
    expect(r.scan(card(MARIA, "door-ward-3", 3))).toMatchObject({ outcome: "allowed" });
    // Leaving through the exit: only the rules decide, and the holder is out.
    expect(r.scan(card(BRIDGET, "door-ward-4", 4))).toMatchObject({ outcome: "allowed" });
    expect(r.node.accessState().areas[WARD]).toEqual({
      [MARIA]: WEDNESDAY + 3 * 60_000,
    });
    expect(r.scan(card(INGRID, "door-ward-3", 5))).toMatchObject({ outcome: "allowed" });
    expect(inside(r.node, WARD)).toEqual([MARIA, INGRID]);
    expect(r.scan(card(BRIDGET, "door-ward-3", 6))).toMatchObject({ reason: "occupancyLimit" });
  });

  test("first person in: the staff entrance waits for the first allowed scan of its window, then is held unlocked, also after a restart (UF2, UF3)", async () => {
    const { sys, token } = await system();
    const file = join(tempDir(), "node.db");
    let clock = WEDNESDAY;
    let r = await runNode(sys, token, file, { now: () => clock });
    expect(r.node.doorState("no-such-door")).toBeNull();
    expect(r.node.doorState(STAFF_DOOR)).toEqual({
      deviceId: STAFF_DOOR,
      unlocked: false,
      ruleId: UNLOCK_RULE,
      waitingForFirstAllow: true,
    });
    expect(r.node.status().doors).toEqual([r.node.doorState(STAFF_DOOR)]);
    clock = WEDNESDAY + 60_000;
    expect(r.scan({ ...card(MARIA, STAFF_DOOR), at: undefined })).toMatchObject({ outcome: "allowed" });
    expect(r.node.accessState().firstAllow).toEqual({ [STAFF_DOOR]: clock });
    const open = { deviceId: STAFF_DOOR, unlocked: true, ruleId: UNLOCK_RULE, waitingForFirstAllow: false };
    expect(r.node.doorState(STAFF_DOOR)).toEqual(open);
    await stop(r);
    r = await runNode(sys, token, file, { now: () => clock });
    expect(r.node.doorState(STAFF_DOOR)).toEqual(open);
    // Thursday morning: a new window, waiting for its own first person in.
    clock = WEDNESDAY + 86_400_000;
    expect(r.node.doorState(STAFF_DOOR)).toMatchObject({ unlocked: false, waitingForFirstAllow: true });
    // Wednesday night: no unlock rule open, nothing to wait for.
    clock = WEDNESDAY + 12 * 3_600_000;
    expect(r.node.doorState(STAFF_DOOR)).toEqual({
      deviceId: STAFF_DOOR,
      unlocked: false,
      ruleId: null,
      waitingForFirstAllow: false,
    });
    expect(r.node.status().doors).toEqual([]);
  });

  test("`rsop node` killed with SIGKILL right after answering an entry still refuses the second entry after its restart (AB7, N56)", async () => {
    onTestFinished(killChildren);
    const cli = await buildCli("node-access");
    const { sys, token } = await system();
    const options = { service: server.url, systemId: sys, nodeId: NODE, token, heartbeatSeconds: 1 };
    const dataFile = join(tempDir(), "node.db");
    let child = new NodeChild(cli, { ...options, dataFile });
    expect(await child.scan(card(MARIA, "door-main-entrance"))).toMatchObject({ outcome: "allowed" });
    await child.kill("SIGKILL");
    child = new NodeChild(cli, { ...options, dataFile });
    expect(await child.scan(card(MARIA, "door-main-entrance", 1))).toMatchObject({ reason: "antiPassback" });
    expect(await child.scan(card(MARIA, "door-main-entrance-exit", 2))).toMatchObject({ outcome: "allowed" });
    await child.kill("SIGKILL");
    child = new NodeChild(cli, { ...options, dataFile });
    expect(await child.scan(card(MARIA, "door-main-entrance", 3))).toMatchObject({ outcome: "allowed" });
    await child.kill("SIGKILL");
  }, 120_000);
});
