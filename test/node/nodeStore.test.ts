// A cloud node's data file (N54–N56) on real SQLite files: the event queue (order, count and byte
// bounds, removal), the snapshot and its stored changes (a rebase every REBASE_CHANGES), the contact
// record, the identity check; and a CloudNode restarted from such a file replaying its changes to the
// service's own state, after more than REBASE_CHANGES changes followed from a real service.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Patch } from "immer";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { createLiveSystem } from "../../src/live/index.js";
import { CloudNode } from "../../src/node/cloudNode.js";
import { reconcile, scopeOf } from "../../src/node/nodeAccess.js";
import type { SystemSnapshot } from "../../src/model/index.js";
import {
  type NodeIdentity,
  NodeStore,
  NodeStoreError,
  REBASE_CHANGES,
  type QueuedEvent,
} from "../../src/node/nodeStore.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { NODE, ROOT, SECOND, call, importSystem, nodeToken, ok, startService } from "../nodes/nodeSupport.js";
import { type TcpProxy, startTcpProxy } from "../support/tcpProxy.js";
import { pollUntil } from "../support/until.js";

const IDENTITY: NodeIdentity = { service: "http://127.0.0.1:1", systemId: "sys-1", nodeId: NODE };

const stores: NodeStore[] = [];
const nodes: CloudNode[] = [];
const servers: RunningServiceServer[] = [];
const proxies: TcpProxy[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) s.close();
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await Promise.all(proxies.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(removeTempDirs);

const until = pollUntil(30_000);

async function open(file = join(tempDir(), "node.db"), identity = IDENTITY): Promise<NodeStore> {
  const store = await NodeStore.open(file, identity);
  stores.push(store);
  return store;
}

function event(n: number, requestBytes = 10): Omit<QueuedEvent, "seq"> {
  return {
    eventId: randomUUID(),
    occurredAt: new Date(Date.UTC(2026, 3, 15, 14, 0, n)).toISOString(),
    revision: 7,
    request: JSON.stringify({ n, pad: "x".repeat(requestBytes) }),
    decision: JSON.stringify({ outcome: "allowed" }),
  };
}

describe("N53, N56: the event queue", () => {
  test("enqueued in order; peek bounds by count and bytes, always at least one; remove up to a seq", async () => {
    const store = await open();
    expect(store.pending()).toBe(0);
    expect(store.peek(10, 1_000_000)).toEqual([]);
    const events = [1, 2, 3, 4, 5].map((n) => event(n));
    store.enqueue(events.slice(0, 2));
    store.enqueue(events.slice(2));
    store.enqueue([]);
    expect(store.pending()).toBe(5);
    const all = store.peek(10, 1_000_000);
    expect(all.map(({ seq: _s, ...e }) => e)).toEqual(events);
    const seqs = all.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(store.peek(2, 1_000_000).map((e) => e.eventId)).toEqual([events[0]!.eventId, events[1]!.eventId]);
    // Each event counts its request, decision and 120 bytes of envelope.
    const size = all[0]!.request.length + all[0]!.decision.length + 120;
    expect(store.peek(10, size * 3)).toHaveLength(3);
    expect(store.peek(10, size * 3 - 1)).toHaveLength(2);
    // An event larger than the byte bound still goes, alone: the queue never stalls on it.
    expect(store.peek(10, 1)).toHaveLength(1);
    store.remove(all[1]!.seq);
    expect(store.pending()).toBe(3);
    expect(store.peek(10, 1_000_000).map((e) => e.eventId)).toEqual(events.slice(2).map((e) => e.eventId));
    // Seqs are never reused: a new event comes after every earlier one, removed or not.
    store.enqueue([event(6)]);
    const after = store.peek(10, 1_000_000);
    expect(after.at(-1)!.seq).toBeGreaterThan(all.at(-1)!.seq);
    store.remove(after.at(-1)!.seq);
    expect(store.pending()).toBe(0);
  });

  test("the queue, snapshot, changes and contact survive closing the file", async () => {
    const file = join(tempDir(), "node.db");
    const store = await open(file);
    store.saveSnapshot(3, { systemId: "sys-1", n: 3 });
    store.appendChange(4, [{ op: "replace", path: ["n"], value: 4 }]);
    store.saveContact({ lastContactMs: 1_776_261_600_000, timeReliable: false });
    // The access state the scans moved goes in the same transaction as their events (AB7).
    store.enqueue(
      [event(1), event(2)],
      [
        { kind: "enter", areaId: "lab", holderId: "h1", at: 1_776_261_600_000 },
        { kind: "enter", areaId: "lab", holderId: "h2", at: 1_776_261_601_000 },
        { kind: "enter", areaId: "lobby", holderId: "h1", at: 1_776_261_602_000 },
        { kind: "exit", areaId: "lab", holderId: "h2" },
        { kind: "firstAllow", deviceId: "door-1", at: 1_776_261_603_000 },
      ],
    );
    // Resets applied outside scans, and the values they were applied for (AB6).
    store.saveAccess([
      { kind: "empty", areaId: "lobby" },
      { kind: "reset", areaId: "lobby", value: "2026-04-15T14:00:00.000Z" },
      { kind: "forgiven", areaId: "lab", holderId: "h3", value: "2026-04-15T14:01:00.000Z" },
      { kind: "reset", areaId: "gone", value: "2026-04-15T14:02:00.000Z" },
      { kind: "dropArea", areaId: "gone" },
    ]);
    store.close();
    const again = await open(file);
    expect(again.pending()).toBe(2);
    const { access, ...rest } = again.load();
    expect(rest).toEqual({
      base: { revision: 3, snapshot: { systemId: "sys-1", n: 3 } },
      changes: [{ revision: 4, patches: [{ op: "replace", path: ["n"], value: 4 }] }],
      contact: { lastContactMs: 1_776_261_600_000, timeReliable: false },
    });
    expect(access.toJSON()).toEqual({
      areas: { lab: { h1: 1_776_261_600_000 } },
      firstAllow: { "door-1": 1_776_261_603_000 },
    });
    expect(access.applied).toEqual(
      new Map([
        ["lobby", { lastReset: "2026-04-15T14:00:00.000Z", forgiven: new Map() }],
        ["lab", { lastReset: null, forgiven: new Map([["h3", "2026-04-15T14:01:00.000Z"]]) }],
      ]),
    );
    // What was read back is stored already: nothing is written down to store again.
    expect(access.takeChanges()).toEqual([]);
  });
});

test("AB7: a device gone from the system forgets its first allowed scan, in memory and in the file", async () => {
  const file = join(tempDir(), "node.db");
  const store = await open(file);
  store.enqueue(
    [event(1)],
    [
      { kind: "firstAllow", deviceId: "door-1", at: 1_776_261_603_000 },
      { kind: "firstAllow", deviceId: "door-2", at: 1_776_261_604_000 },
    ],
  );
  const { access } = store.load();
  // The next snapshot has door-2 only; a change deleting a device asks for the devices to be looked at.
  const scope = scopeOf([{ op: "remove", path: ["devices", "door-1"] }]);
  expect(scope).toEqual({ areas: false, holders: false, devices: true });
  reconcile({ devices: [{ id: "door-2" }], areas: [], holders: [] } as unknown as SystemSnapshot, access, scope);
  store.saveAccess(access.takeChanges());
  expect(access.toJSON().firstAllow).toEqual({ "door-2": 1_776_261_604_000 });
  store.close();
  const again = await open(file);
  expect(again.load().access.toJSON().firstAllow).toEqual({ "door-2": 1_776_261_604_000 });
});

describe("N55: the snapshot and the changes stored beside it", () => {
  test("a new file holds nothing; saveSnapshot drops the stored changes", async () => {
    const store = await open();
    const { access, ...rest } = store.load();
    expect(rest).toEqual({ base: null, changes: [], contact: null });
    expect(access.toJSON()).toEqual({ areas: {}, firstAllow: {} });
    expect(access.applied.size).toBe(0);
    store.saveSnapshot(10, { a: 1 });
    store.appendChange(11, [{ op: "add", path: ["b"], value: 2 }]);
    store.appendChange(12, [{ op: "add", path: ["c"], value: 3 }]);
    expect(store.load().changes.map((c) => c.revision)).toEqual([11, 12]);
    store.saveSnapshot(12, { a: 1, b: 2, c: 3 });
    expect(store.load()).toMatchObject({ base: { revision: 12, snapshot: { a: 1, b: 2, c: 3 } }, changes: [] });
  });

  test("appendChange asks for a rebase at the REBASE_CHANGES-th change since the snapshot, counted across opens", async () => {
    const file = join(tempDir(), "node.db");
    const store = await open(file);
    store.saveSnapshot(0, {});
    const half = REBASE_CHANGES / 2;
    for (let r = 1; r <= half; r++) expect(store.appendChange(r, [])).toBe(false);
    store.close();
    // The count is read back from the file: a restart does not postpone the rebase.
    const again = await open(file);
    for (let r = half + 1; r < REBASE_CHANGES; r++) expect(again.appendChange(r, [])).toBe(false);
    expect(again.appendChange(REBASE_CHANGES, [])).toBe(true);
    again.saveSnapshot(REBASE_CHANGES, { rebased: true });
    expect(again.appendChange(REBASE_CHANGES + 1, [])).toBe(false);
    expect(again.load().changes.map((c) => c.revision)).toEqual([REBASE_CHANGES + 1]);
  });
});

describe("N54: a file is one node's", () => {
  test("another node, system or service is refused, naming the node the file belongs to", async () => {
    const file = join(tempDir(), "node.db");
    (await open(file)).close();
    for (const other of [
      { ...IDENTITY, nodeId: SECOND },
      { ...IDENTITY, systemId: "sys-2" },
      { ...IDENTITY, service: "http://127.0.0.1:2" },
    ]) {
      const refused = NodeStore.open(file, other);
      await expect(refused).rejects.toBeInstanceOf(NodeStoreError);
      await expect(refused).rejects.toThrow(`belongs to cloud node ${NODE} of system sys-1 at http://127.0.0.1:1`);
    }
    // Refusing it left it as it was: its own node opens it.
    expect((await open(file)).load().base).toBeNull();
  });

  test("a file that is not SQLite is refused, naming the file", async () => {
    const { writeFileSync } = await import("node:fs");
    const file = join(tempDir(), "not-a-node.db");
    writeFileSync(file, "this is not a database, it is a text file long enough to have a header".repeat(20));
    await expect(NodeStore.open(file, IDENTITY)).rejects.toThrow(NodeStoreError);
    await expect(NodeStore.open(file, IDENTITY)).rejects.toThrow(file);
  });
});

/** The example building with a random system id, its live system and patches of `n` group creates. */
function changesOf(n: number): {
  snapshot: unknown;
  changes: { revision: number; patches: Patch[] }[];
  after: unknown;
} {
  const input = { ...(BUILDING_JSON as object), systemId: randomUUID() };
  const made = createLiveSystem(input);
  if (!made.ok) throw new Error("the example building does not load");
  const live = made.value;
  const snapshot = live.snapshot;
  const changes: { revision: number; patches: Patch[] }[] = [];
  for (let r = 1; r <= n; r++) {
    const result = live.apply({ method: "POST", path: "/groups", body: { name: `Group ${r}` } });
    if (!result.ok || !("patches" in result)) throw new Error(`group ${r} refused`);
    changes.push({ revision: r, patches: [...result.patches] });
  }
  return { snapshot, changes, after: live.snapshot };
}

describe("N55: a restart replays the stored changes", () => {
  test("a file written change by change is replayed to the state the changes made, offline", async () => {
    const { snapshot, changes, after } = changesOf(25);
    const systemId = (snapshot as { systemId: string }).systemId;
    const identity = { service: "http://127.0.0.1:9", systemId, nodeId: NODE };
    const file = join(tempDir(), "node.db");
    const store = await open(file, identity);
    store.saveSnapshot(0, snapshot);
    for (const c of changes) store.appendChange(c.revision, c.patches);
    store.saveContact({ lastContactMs: Date.parse("2026-04-15T14:00:00Z"), timeReliable: true });
    store.close();
    const log: string[] = [];
    const node = await CloudNode.start({
      ...identity,
      token: "unused",
      dataFile: file,
      retryMs: 50,
      log: (l) => log.push(l),
    });
    nodes.push(node);
    await node.ready();
    expect(node.status()).toMatchObject({ online: false, revision: 25, lastContact: "2026-04-15T14:00:00.000Z" });
    expect(node.engine!.snapshot).toEqual(after);
    expect(log.filter((l) => /can't|refused/.test(l))).toEqual([]);
  });

  test("the stored contact record: none is offline with the time unknown; an unreliable clock stays so (N41, N43)", async () => {
    const { snapshot } = changesOf(0);
    const systemId = (snapshot as { systemId: string }).systemId;
    const identity = { service: "http://127.0.0.1:9", systemId, nodeId: NODE };
    const at = Date.parse("2026-04-15T14:00:00Z");
    for (const [contact, node] of [
      [null, { online: false, timeKnown: false }],
      [
        { lastContactMs: at, timeReliable: false },
        { online: false, offlineSeconds: 90, timeKnown: false },
      ],
    ] as const) {
      const file = join(tempDir(), "node.db");
      const store = await open(file, identity);
      store.saveSnapshot(0, snapshot);
      if (contact !== null) store.saveContact(contact);
      store.close();
      const requests: any[] = [];
      const started = await CloudNode.start({
        ...identity,
        token: "unused",
        dataFile: file,
        retryMs: 50,
        onDecision: (e) => requests.push(JSON.parse(e.request)),
      });
      nodes.push(started);
      await started.ready();
      started.scanStream(() => {}).push(Buffer.from(`{"deviceId":"door-ward-3","at":${at + 90_500}}\n`));
      expect(requests.map((r) => r.node)).toEqual([node]);
    }
  });

  test("a file whose changes can't be replayed is dropped and the system downloaded again", async () => {
    const server = await startService();
    servers.push(server);
    const sys = await importSystem(server);
    const token = await nodeToken(server, sys);
    const fresh = ok(await call(server, token, "GET", `/${sys}/cloud-nodes/${NODE}/node/snapshot`), 200, "snapshot");
    const file = join(tempDir(), "node.db");
    const store = await open(file, { service: server.url, systemId: sys, nodeId: NODE });
    store.saveSnapshot(0, fresh.snapshot);
    // A gap: change 2 without change 1.
    store.appendChange(2, [{ op: "replace", path: ["timezone"], value: "Europe/Paris" }]);
    store.close();
    const log: string[] = [];
    const node = await CloudNode.start({
      service: server.url,
      systemId: sys,
      nodeId: NODE,
      token,
      dataFile: file,
      log: (l) => log.push(l),
    });
    nodes.push(node);
    await node.ready();
    expect(log).toContain("stored change 2 can't be replayed, downloading the system again");
    expect(node.status()).toMatchObject({ online: true, revision: 0 });
    expect(node.engine!.snapshot).toEqual(fresh.snapshot);
  });

  test(`a node that followed more than ${REBASE_CHANGES} changes restarts to the service's state`, async () => {
    const server = await startService();
    servers.push(server);
    const sys = await importSystem(server);
    const token = await nodeToken(server, sys);
    const proxy = await startTcpProxy(Number(new URL(server.url).port));
    proxies.push(proxy);
    const file = join(tempDir(), "node.db");
    const options = { service: proxy.url, systemId: sys, nodeId: NODE, token, dataFile: file, retryMs: 50 };
    const first = await CloudNode.start({ ...options, heartbeatSeconds: 1 });
    nodes.push(first);
    await first.ready();
    const total = REBASE_CHANGES + 5;
    // Four writers at once: the service orders them into one revision each.
    let next = 0;
    const writer = async () => {
      while (next < total) {
        const n = ++next;
        ok(await call(server, ROOT, "POST", `/${sys}/groups`, { name: `Group ${n}` }), 200, `group ${n}`);
      }
    };
    await Promise.all([writer(), writer(), writer(), writer()]);
    await until("all changes followed", () => first.status().revision === total, 60_000);
    await first.close();
    nodes.splice(nodes.indexOf(first), 1);

    // The snapshot was written again at the REBASE_CHANGES-th change; the rest are stored as changes.
    const stored = await open(file, { service: proxy.url, systemId: sys, nodeId: NODE });
    const load = stored.load();
    expect(load.base!.revision).toBe(REBASE_CHANGES);
    expect(load.changes.map((c) => c.revision)).toEqual([1, 2, 3, 4, 5].map((k) => REBASE_CHANGES + k));
    stored.close();

    const fresh = ok(await call(server, token, "GET", `/${sys}/cloud-nodes/${NODE}/node/snapshot`), 200, "snapshot");
    expect(fresh.revision).toBe(total);
    proxy.block();
    const log: string[] = [];
    const again = await CloudNode.start({ ...options, log: (l) => log.push(l) });
    nodes.push(again);
    await again.ready();
    expect(again.status()).toMatchObject({ online: false, revision: total });
    expect(again.engine!.snapshot).toEqual(fresh.snapshot);
    expect(log.filter((l) => /can't|refused|downloaded/.test(l))).toEqual([]);
  });
});
