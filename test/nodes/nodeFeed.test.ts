// What a cloud node downloads and follows (semantics N13–N19), over a real service server on
// 127.0.0.1 over a SQLite file: the snapshot at a revision, the change feed from a revision (past
// changes, then live writes, keep-alives), the node's patches applied to its download equal to a fresh
// download, resuming without duplicates, the refusals (409 ahead, 410 compacted, 404 another node,
// 401 no token), one feed per node, and the feed ending on a new token and on eviction.
import type { Patch } from "immer";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { createLiveSystem } from "../../src/live/index.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";
import { DONE, NODE, ROOT, SECOND, call, importSystem, nodeToken, ok, openLines, startService } from "./nodeSupport.js";

const FEEDS = { keepAliveMs: 150, checkMs: 30 };
let server: RunningServiceServer;
let file = "";
let sys = "";
let token = "";
let second = "";

const nodePath = (node = NODE) => `/${sys}/cloud-nodes/${node}/node`;
const download = async (t = token) => ok(await call(server, t, "GET", `${nodePath()}/snapshot`), 200, "snapshot");
const feed = (from: number, t = token, node = NODE) => openLines(server, t, `${nodePath(node)}/changes?from=${from}`);
const addHolder = async (name: string) =>
  ok(await call(server, ROOT, "POST", `/${sys}/holders`, { firstName: name, lastName: "Feed" }), 201, name).id;
const isChange = (line: any) => typeof line.revision === "number" && line.keepAlive === undefined;
const start = () => startService({ dataFile: file }, { nodeFeeds: FEEDS });

/** Every holder the GET routes answer, page by page. */
async function holdersByGet(): Promise<any[]> {
  const all: any[] = [];
  for (let page = 0; ; page++) {
    const got = ok(await call(server, ROOT, "GET", `/${sys}/holders?per_page=100&page=${page}`), 200, "holders");
    all.push(...got);
    if (got.length < 100) return all;
  }
}

beforeAll(async () => {
  file = join(tempDir(), "service.db");
  server = await start();
  sys = await importSystem(server);
  token = await nodeToken(server, sys);
  second = await nodeToken(server, sys, SECOND);
}, 60_000);

afterAll(async () => {
  await server?.close();
  removeTempDirs();
});

describe("N13: the snapshot at a revision", () => {
  test("the snapshot and its revision are what the GET routes answer", async () => {
    await addHolder("Before");
    const got = await download();
    expect(got.revision).toBe(1);
    const holders = await holdersByGet();
    expect(got.snapshot.systemId).toBe(sys);
    const ids = (list: { id: string }[]) => list.map((h) => h.id).sort();
    expect(ids(got.snapshot.holders)).toEqual(ids(holders));
    // The API names a holder's groups with their names; the snapshot by id.
    for (const h of holders)
      expect({ ...h, groups: h.groups.map((g: { id: string }) => g.id) }).toMatchObject(
        got.snapshot.holders.find((s: { id: string }) => s.id === h.id),
      );
  });

  test("another node's token 404 at the node; no token 401; a person's token 403; a query 400", async () => {
    const other = await call(server, second, "GET", `${nodePath()}/snapshot`);
    expect([other.status, other.body.error.issues.map((i: { path: string }) => i.path)]).toEqual([
      404,
      ["cloud_node_id"],
    ]);
    expect((await call(server, null, "GET", `${nodePath()}/snapshot`)).status).toBe(401);
    expect((await call(server, ROOT, "GET", `${nodePath()}/snapshot`)).status).toBe(403);
    expect((await call(server, token, "GET", `${nodePath()}/snapshot?x=1`)).status).toBe(400);
  });
});

describe("N14–N16: the change feed", () => {
  test("past changes, then a live write within a second, then keep-alives with the revision", async () => {
    const lines = await feed(0);
    expect(lines.response.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const past = await lines.collect((l) => isChange(l) && l.revision === 1);
    expect(past.filter(isChange).map((l) => l.revision)).toEqual([1]);
    const id = await addHolder("Live");
    const live = (await lines.collect(isChange, 1000)).filter(isChange);
    expect(live.map((l) => l.revision)).toEqual([2]);
    expect(live[0].operation).toMatchObject({ method: "POST", path: "/holders" });
    expect(JSON.stringify(live[0].patches)).toContain(id);
    const alive = await lines.collect((l) => l.keepAlive === true);
    expect(alive.at(-1)).toEqual({ keepAlive: true, revision: 2 });
    lines.close();
  });

  test("the streamed patches applied to the download equal a fresh download; a reconnect gets nothing twice", async () => {
    const base = await download();
    const node = createLiveSystem(base.snapshot);
    if (!node.ok) throw new Error("the download does not load");
    let held = base.revision;
    const first = await feed(held);
    await addHolder("One");
    await addHolder("Two");
    for (const l of (await first.collect((l) => isChange(l) && l.revision === base.revision + 2)).filter(isChange)) {
      expect(l.revision).toBe(held + 1);
      expect(node.value.applyPatches(l.patches as Patch[]).ok).toBe(true);
      held = l.revision;
    }
    first.close();
    const holderId = (await holdersByGet()).at(-1).id;
    const h = ok(await call(server, ROOT, "GET", `/${sys}/holders/${holderId}`), 200, "holder");
    const fields = ["partition", "enabled", "activeDate", "expireDate", "pin", "duressPin", "email", "customFields"];
    const body = Object.fromEntries(fields.filter((f) => f in h).map((f) => [f, h[f]]));
    const put = await call(server, ROOT, "PUT", `/${sys}/holders/${holderId}`, {
      ...body,
      firstName: "Renamed",
      lastName: "X",
    });
    ok(put, 204, "put");
    ok(await call(server, ROOT, "DELETE", `/${sys}/holders/${holderId}`), 204, "delete");
    const again = await feed(held);
    const resumed = (await again.collect((l) => isChange(l) && l.revision === held + 2)).filter(isChange);
    expect(resumed.map((l) => l.revision)).toEqual([held + 1, held + 2]);
    for (const l of resumed) expect(node.value.applyPatches(l.patches as Patch[]).ok).toBe(true);
    held += 2;
    again.close();
    const fresh = await download();
    expect(fresh.revision).toBe(held);
    expect(JSON.parse(JSON.stringify(node.value.snapshot))).toEqual(fresh.snapshot);
  });

  test("a download among writes in flight is the state after its revision: the feed from it equals a fresh one", async () => {
    const writes = Array.from({ length: 20 }, (_, i) => addHolder(`Burst${i}`));
    const amid = await download();
    await Promise.all(writes);
    const node = createLiveSystem(amid.snapshot);
    if (!node.ok) throw new Error("the download does not load");
    const { revision } = await download();
    if (revision > amid.revision) {
      const lines = await feed(amid.revision);
      const got = (await lines.collect((l) => isChange(l) && l.revision === revision)).filter(isChange);
      expect(got.map((l) => l.revision)).toEqual(
        Array.from({ length: revision - amid.revision }, (_, i) => amid.revision + i + 1),
      );
      for (const l of got) expect(node.value.applyPatches(l.patches as Patch[]).ok).toBe(true);
      lines.close();
    }
    expect(JSON.parse(JSON.stringify(node.value.snapshot))).toEqual((await download()).snapshot);
  });

  test("from ahead of the system 409; not a whole number 400; another node's token 404; no token 401", async () => {
    const { revision } = await download();
    const ahead = await call(server, token, "GET", `${nodePath()}/changes?from=${revision + 1}`);
    expect([ahead.status, ahead.body.error.issues[0].path]).toEqual([409, "from"]);
    expect((await call(server, token, "GET", `${nodePath()}/changes?from=-1`)).status).toBe(400);
    expect((await call(server, token, "GET", `${nodePath()}/changes`)).status).toBe(400);
    const other = await call(server, second, "GET", `${nodePath()}/changes?from=0`);
    expect([other.status, other.body.error.issues[0].path]).toEqual([404, "cloud_node_id"]);
    expect((await call(server, null, "GET", `${nodePath()}/changes?from=0`)).status).toBe(401);
    expect((await call(server, ROOT, "GET", `${nodePath()}/changes?from=0`)).status).toBe(403);
  });
});

describe("N18: one feed per node, and what ends it", () => {
  test("a second feed of the node ends the first; another node's feed goes on", async () => {
    const { revision } = await download();
    const a = await feed(revision);
    const other = await feed(revision, second, SECOND);
    await a.collect((l) => l.keepAlive === true);
    const b = await feed(revision);
    let line: any;
    do line = await a.next(2000);
    while (line !== DONE);
    await addHolder("AfterSecond");
    expect((await b.collect(isChange, 1000)).filter(isChange).map((l) => l.revision)).toEqual([revision + 1]);
    expect((await other.collect(isChange, 1000)).filter(isChange).map((l) => l.revision)).toEqual([revision + 1]);
    b.close();
    other.close();
  });

  test("a new token of the node ends its feed; the eviction of its system ends it too", async () => {
    const { revision } = await download();
    const old = await feed(revision);
    await old.collect((l) => l.keepAlive === true);
    token = await nodeToken(server, sys);
    let line: any;
    do line = await old.next(2000);
    while (line !== DONE);
    const next = await feed(revision);
    await next.collect((l) => l.keepAlive === true);
    await server.tenants.unload(server.registry.tenantByKey(sys)!.n);
    do line = await next.next(2000);
    while (line !== DONE);
    // The node reconnects: the system loads again.
    const back = await feed(revision);
    await back.collect((l) => l.keepAlive === true);
    back.close();
  });
});

describe("N15: a log that no longer reaches back", () => {
  test("from before the retained log 410 telling the node to download again; from within it the rest", async () => {
    for (const name of ["Last1", "Last2", "Last3", "Last4"]) await addHolder(name);
    const { revision } = await download();
    expect(revision).toBeGreaterThanOrEqual(4);
    // Closing stores a snapshot at the last change; the changes up to 2 are then removed, as a compaction does.
    await server.close();
    const db = new Database(file);
    db.prepare("DELETE FROM changes WHERE seq <= 2").run();
    db.close();
    server = await start();
    const gone = await call(server, token, "GET", `${nodePath()}/changes?from=1`);
    expect(gone.status).toBe(410);
    expect(gone.body.error.message).toMatch(/download the snapshot again/);
    const rest = await feed(2);
    const got = (await rest.collect((l) => isChange(l) && l.revision === revision)).filter(isChange);
    expect(got.map((l) => l.revision)).toEqual(Array.from({ length: revision - 2 }, (_, i) => i + 3));
    rest.close();
    expect((await download()).revision).toBe(revision);
  });
});
