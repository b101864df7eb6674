// `rsop serve --data`: every route family over real HTTP on a real SQLite file; refusals store
// nothing; a restart gives back the very state; a second process on the same file is refused.
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { afterAll, describe, expect, test } from "vitest";
import { serveCommand } from "../../src/adapters/cli/serveCommand.js";
import { type RunningDataServer, startDataServer } from "../../src/adapters/http/startDataServer.js";
import { openDurableSystem } from "../../src/service/store/durableSystem.js";
import { openSqliteStore } from "../../src/adapters/store/sqliteStore.js";
import { createLiveSystem } from "../../src/live/index.js";
import { run } from "../adapters/cliHarness.js";
import { building } from "../live/fixture.js";
import { type Caller, SYSTEM_ID, caller, dataDir, inspect, startData } from "./dataSupport.js";
import { TOKEN, removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

const WEEK = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const AT = "2026-04-15T12:00:00Z";

/** A refusal: the JSON error shape with every issue and its path, and nothing stored or changed. */
async function refused(
  server: RunningDataServer,
  call: Caller,
  status: number,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) {
  const seq = server.durable.seq();
  const before = server.durable.target.live.snapshot;
  const r = await call(method, path, body, headers);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(r.body.error.status).toBe(status);
  expect(typeof r.body.error.message).toBe("string");
  for (const i of r.body.error.issues) expect(Object.keys(i).sort()).toEqual(["message", "path"]);
  expect(server.durable.seq(), "nothing stored").toBe(seq);
  expect(server.durable.target.live.snapshot, "nothing changed").toBe(before);
  return r.body.error as { status: number; message: string; issues: { path: string; message: string }[] };
}

describe("rsop serve --data: routes", () => {
  test("holders, credentials, groups and memberships, rules, devices, custom fields; decisions follow; the log has every accepted write", async () => {
    const { db } = dataDir();
    const { server, call, lines } = await startData(db, building());
    expect(lines.some((l) => l.startsWith(`imported building.json into ${db}: system ${SYSTEM_ID}`))).toBe(true);
    const accepted: { method: string; path: string }[] = [];
    const ok = async (status: number, method: string, path: string, body?: unknown) => {
      const r = await call(method, path, body);
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
      if (method !== "GET") accepted.push({ method, path });
      return r;
    };

    // Holder and card.
    const holder = (await ok(201, "POST", "/holders", { firstName: "Dee", lastName: "Park", email: "dee@example.com" }))
      .body;
    expect(Object.keys(holder)).toEqual(["id"]);
    const card = (
      await ok(201, "POST", `/holders/${holder.id}/credentials`, {
        types: ["card"],
        credentialNumber: 4242,
        facilityCode: 10,
      })
    ).body;
    expect((await ok(200, "GET", `/holders/${holder.id}`)).body).toMatchObject({
      id: holder.id,
      firstName: "Dee",
      credentials: [{ id: card.id, credentialNumber: 4242 }],
    });
    const put = await ok(204, "PUT", `/holders/${holder.id}`, {
      firstName: "Dee",
      lastName: "Parker",
      email: "dee@example.com",
      partition: "p-default",
      enabled: true,
      activeDate: null,
      expireDate: null,
      pin: null,
      duressPin: null,
    });
    expect(put.body).toBeUndefined();
    expect((await ok(200, "GET", `/holders/${holder.id}`)).body.lastName).toBe("Parker");
    expect((await ok(200, "GET", `/holders/${holder.id}/credentials/${card.id}`)).body).toMatchObject({
      id: card.id,
      facilityCode: 10,
    });

    // Group and membership (a PUT without a body), rule: the card opens the fan.
    const group = (await ok(200, "POST", "/groups", { name: "Night Owls" })).body;
    await ok(204, "PUT", `/holders/${holder.id}/groups/${group.id}`);
    expect((await ok(200, "GET", `/groups/${group.id}/holders`)).body.map((h: { id: string }) => h.id)).toEqual([
      holder.id,
    ]);
    const scan = { deviceId: "d-fan", at: AT, credential: { credentialNumber: 4242, facilityCode: 10 } };
    expect((await ok(200, "POST", "/decisions", scan)).body).toMatchObject({ outcome: "denied" });
    accepted.pop(); // decisions store nothing
    const rule = (
      await ok(201, "POST", "/rules", {
        type: "door",
        groupId: group.id,
        devices: ["d-fan"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: WEEK,
      })
    ).body;
    expect((await ok(200, "POST", "/decisions", scan)).body).toMatchObject({
      outcome: "allowed",
      holderId: holder.id,
      activeRuleId: rule.id,
    });
    accepted.pop();
    expect((await ok(200, "GET", `/rsop/holders?ids=${holder.id}&at=${AT}`)).body).toBeDefined();

    // Device: create, read, delete.
    const dev = (
      await ok(200, "POST", "/cloud-nodes/n-main/devices", {
        name: "Annex Door",
        type: "ioDevice",
        publicIcon: "fan",
        connection: "x-spare",
        port: 7,
      })
    ).body;
    expect((await ok(200, "GET", `/cloud-nodes/n-main/devices/${dev.id}`)).body).toMatchObject({
      id: dev.id,
      name: "Annex Door",
      connection: "x-spare",
    });
    await ok(204, "DELETE", `/cloud-nodes/n-main/devices/${dev.id}`);

    // Custom field.
    await ok(200, "POST", "/partitions/p-default/custom-fields/single", { id: "badge", type: "string" });
    expect((await ok(200, "GET", "/partitions/p-default/custom-fields")).body.map((f: { id: string }) => f.id)).toEqual(
      ["badge"],
    );

    // Deletes: a group a rule still names is a conflict naming the rule.
    const conflict = await refused(server, call, 409, "DELETE", `/groups/${group.id}`);
    expect(JSON.stringify(conflict.issues)).toContain(rule.id);
    await ok(204, "DELETE", `/rules/${rule.id}`);
    await ok(204, "DELETE", `/groups/${group.id}`);
    await ok(204, "DELETE", `/holders/${holder.id}/credentials/${card.id}`);
    await ok(204, "DELETE", `/holders/${holder.id}`);
    await refused(server, call, 404, "GET", `/holders/${holder.id}`);

    await server.close();
    const stored = inspect(db);
    expect(stored.integrity).toBe("ok");
    expect(stored.changes.map((c) => ({ method: c.operation.method, path: c.operation.path }))).toEqual(accepted);
    expect(stored.changes.map((c) => c.seq)).toEqual(stored.changes.map((_, i) => i + 1));
  });

  test("updates and replacements of every family answer 204 and are stored; reads show them", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, building());
    const puts: [string, unknown][] = [
      ["/holders/h-bob/credentials/c-bob-phone", { types: ["token"] }],
      ["/groups/g-empty", { name: "Guests", partition: "p-east" }],
      ["/groups/g-staff/holders", { holders: ["h-cy"] }],
      ["/holders/h-bob/groups", { groups: ["g-night", "g-empty"] }],
      [
        "/rules/r-staff-door",
        {
          type: "door",
          groupId: "g-staff",
          devices: ["d-front"],
          startTime: "00:00:00",
          stopTime: "24:00:00",
          recurring: WEEK,
          allow: false,
        },
      ],
      [
        "/cloud-nodes/n-main/devices/d-fan",
        {
          name: "Fan",
          type: "ioDevice",
          publicIcon: "fan",
          connection: "x-spare",
          port: 2,
          delay: 5,
          dwell: 50,
          dps: true,
          rex: true,
          autoOpenAfterFirstAllow: false,
          authenticationPolicy: null,
        },
      ],
    ];
    for (const [path, body] of puts) {
      const r = await call("PUT", path, body);
      expect(r.status, `PUT ${path}: ${JSON.stringify(r.body)}`).toBe(204);
      expect(r.body).toBeUndefined();
    }
    expect(
      (await call("POST", "/partitions/p-east/custom-fields/single", { id: "badge", type: "string" })).status,
    ).toBe(200);
    expect(
      (
        await call("PUT", "/partitions/p-east/custom-fields/badge", {
          id: "badge",
          type: "string",
          visibility: "readonly",
        })
      ).status,
    ).toBe(204);
    expect((await call("GET", "/partitions/p-east/custom-fields/badge")).body).toMatchObject({
      id: "badge",
      visibility: "readonly",
    });
    expect((await call("DELETE", "/partitions/p-east/custom-fields/badge")).status).toBe(204);
    expect((await call("DELETE", "/holders/h-bob/groups/g-empty")).status).toBe(204);

    expect((await call("GET", "/holders/h-bob/credentials/c-bob-phone")).body.types).toEqual(["token"]);
    expect((await call("GET", "/groups/g-empty")).body).toMatchObject({ name: "Guests", partition: "p-east" });
    expect((await call("GET", "/groups/g-staff/holders")).body.map((h: { id: string }) => h.id)).toEqual(["h-cy"]);
    expect((await call("GET", "/holders/h-bob/groups")).body.map((g: { id: string }) => g.id)).toEqual(["g-night"]);
    expect((await call("GET", "/rules/r-staff-door")).body).toMatchObject({ allow: false, devices: ["d-front"] });
    expect((await call("GET", "/cloud-nodes/n-main/devices/d-fan")).body).toMatchObject({
      connection: "x-spare",
      dwell: 50,
    });
    expect((await call("GET", "/partitions/p-east/custom-fields/badge")).status).toBe(404);
    const seq = server.durable.seq();
    expect(seq).toBe(puts.length + 4);
    await server.close();
    expect(inspect(db).changes.map((c) => c.operation.method)).toEqual([
      ...puts.map(() => "PUT"),
      "POST",
      "PUT",
      "DELETE",
      "DELETE",
    ]);
  });

  test("paginated lists carry X-Total-Count and Link (first, prev, next, last)", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, building());
    const r = await call("GET", "/holders?per_page=1&page=1&search=a");
    expect(r.status).toBe(200);
    const total = Number(r.headers.get("x-total-count"));
    expect(total).toBe((await call("GET", "/holders?per_page=100&search=a")).body.length);
    expect(total).toBeGreaterThanOrEqual(3);
    const base = `${server.url}/${SYSTEM_ID}/holders?search=a&`;
    expect(r.headers.get("link")).toBe(
      [
        `<${base}page=0&per_page=1>; rel="first"`,
        `<${base}page=0&per_page=1>; rel="prev"`,
        `<${base}page=2&per_page=1>; rel="next"`,
        `<${base}page=${total - 1}&per_page=1>; rel="last"`,
      ].join(", "),
    );
    expect(r.body).toHaveLength(1);
    const first = await call("GET", "/groups");
    expect(first.headers.get("x-total-count")).toBe("3");
    expect(first.headers.get("link")).not.toContain('rel="prev"');
    expect((await call("GET", `/holders/h-ann`)).headers.get("x-total-count")).toBeNull();
  });

  test("a base path prefixes every route, decisions and /healthz included", async () => {
    const { db } = dataDir();
    const { server } = await startData(db, building(), { basePath: "/v2" });
    const call = caller(server.url, `/v2/${SYSTEM_ID}`);
    expect((await call("POST", "/groups", { name: "Prefixed" })).status).toBe(200);
    expect((await call("GET", "/groups?search=Prefixed")).body).toHaveLength(1);
    const scan = { deviceId: "d-front", at: AT, credential: { credentialNumber: 1001, facilityCode: 10 } };
    expect((await call("POST", "/decisions", scan)).body).toMatchObject({ outcome: "allowed", holderId: "h-ann" });
    expect((await caller(server.url)("GET", "/groups")).status).toBe(404);
    const health = await fetch(`${server.url}/v2/healthz`);
    expect(await health.json()).toMatchObject({ status: "ok", systemId: SYSTEM_ID, seq: 1 });
  });

  test("refusals: 400 with every issue and its path, 401, 404, 405, 409, 413, 415; nothing stored", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, building(), { maxBodyBytes: 2048 });
    const invalid = await refused(server, call, 400, "POST", "/holders", {});
    expect(invalid.issues.map((i) => i.path).sort()).toEqual(["body.firstName", "body.lastName"]);
    expect(invalid.issues.every((i) => i.message.length > 0)).toBe(true);
    await refused(server, call, 400, "POST", "/rules", {
      type: "door",
      groupId: "g-nope",
      devices: ["d-fan"],
      startTime: "25:00:00",
      stopTime: "24:00:00",
      recurring: WEEK,
    });
    await refused(server, call, 404, "PUT", "/holders/h-nope", { firstName: "A", lastName: "B" });
    await refused(server, call, 404, "PUT", "/holders/h-ann/groups/g-nope");
    await refused(server, call, 409, "POST", "/groups", { name: "Staff" });
    await refused(server, call, 409, "DELETE", "/cloud-nodes/n-main");
    await refused(server, call, 404, "GET", "/nothing-here");
    const wrong = await refused(server, call, 405, "PATCH", "/holders", { firstName: "A" });
    expect(wrong.message).toContain("GET, POST");
    expect((await call("PATCH", "/holders")).headers.get("allow")).toBe("GET, POST");
    await refused(server, call, 415, "POST", "/holders", "firstName=A", { "content-type": "text/plain" });
    await refused(server, call, 413, "POST", "/holders", { firstName: "A".repeat(4000), lastName: "B" });
    await refused(server, call, 400, "POST", "/holders", "{not json", { "content-type": "application/json" });
    const unknown = await refused(server, caller(server.url, "/sys-nope"), 404, "GET", "/holders");
    expect(unknown.issues).toEqual([{ path: "system_id", message: 'Unknown system id "sys-nope".' }]);
    const anonymous = await fetch(`${server.url}/${SYSTEM_ID}/holders`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="rsop"');
    const bad = await fetch(`${server.url}/${SYSTEM_ID}/holders`, {
      headers: { authorization: "Bearer wrong-token-0123456789" },
    });
    expect(bad.status).toBe(401);
    expect(server.durable.seq()).toBe(0);
    await server.close();
    const stored = inspect(db);
    expect(stored.changes).toEqual([]);
    expect(stored.integrity).toBe("ok");
  });
});

describe("rsop serve --data: restart, lock, import", () => {
  test("a restart gives back the state before: snapshot and decisions (snapshots every 3 changes, the rest replayed)", async () => {
    const { db } = dataDir();
    const first = await startData(db, building(), { snapshotEvery: 3 });
    const call = first.call;
    const made: string[] = [];
    for (let k = 0; k < 5; k++) {
      const h = (await call("POST", "/holders", { firstName: `P${k}`, lastName: "Q", groups: ["g-staff"] })).body.id;
      expect(
        (
          await call("POST", `/holders/${h}/credentials`, {
            types: ["card"],
            credentialNumber: 7000 + k,
            facilityCode: 10,
          })
        ).status,
      ).toBe(201);
      made.push(h);
    }
    expect((await call("PUT", `/holders/${made[0]}/groups/g-night`)).status).toBe(204);
    expect((await call("DELETE", `/holders/${made[4]}`)).status).toBe(204);
    expect(first.server.durable.seq()).toBe(12);
    const before = JSON.parse(JSON.stringify(first.server.durable.target.live.snapshot));
    const scans = [...made, "h-ann"].flatMap((_, k) =>
      ["d-front", "d-lift", "d-side"].map((deviceId) => ({
        deviceId,
        at: AT,
        credential: { credentialNumber: 7000 + k, facilityCode: 10 },
      })),
    );
    const decisionsBefore = (await call("POST", "/decisions", scans)).body;
    const rsopBefore = (await call("GET", `/rsop/holders?ids=${made.slice(0, 4).join(",")}&at=${AT}`)).body;
    await first.server.close();
    expect(inspect(db).snapshots).toEqual([9, 12]); // the last kept on close

    const again = await startData(db);
    expect(
      again.lines.some((l) =>
        l.startsWith(`loaded ${db}: system ${SYSTEM_ID} at change 12 (snapshot of change 12, 0 changes replayed`),
      ),
    ).toBe(true);
    expect(JSON.parse(JSON.stringify(again.server.durable.target.live.snapshot))).toEqual(before);
    expect((await again.call("POST", "/decisions", scans)).body).toEqual(decisionsBefore);
    expect((await again.call("GET", `/rsop/holders?ids=${made.slice(0, 4).join(",")}&at=${AT}`)).body).toEqual(
      rsopBefore,
    );
    expect(decisionsBefore.some((d: { outcome: string }) => d.outcome === "allowed")).toBe(true);
  });

  test("start-up replays the log after the latest snapshot", async () => {
    const { db } = dataDir();
    const first = await startData(db, building(), { snapshotEvery: 1000 });
    for (let k = 0; k < 4; k++) expect((await first.call("POST", "/groups", { name: `G${k}` })).status).toBe(200);
    const before = JSON.parse(JSON.stringify(first.server.durable.target.live.snapshot));
    // Close the store without the closing snapshot: as after a crash, the log holds changes 1…4.
    await first.server.close();
    const d = new (await import("better-sqlite3")).default(db);
    d.prepare("DELETE FROM snapshots WHERE seq > 0").run();
    d.close();
    const again = await startData(db);
    expect(again.lines.some((l) => l.includes("at change 4 (snapshot of change 0, 4 changes replayed"))).toBe(true);
    expect(JSON.parse(JSON.stringify(again.server.durable.target.live.snapshot))).toEqual(before);
  });

  test("a second instance on the same file refuses to start (in-process and as `rsop serve`, exit 1)", async () => {
    const { db, system } = dataDir();
    const first = await startData(db, building());
    await expect(startData(db)).rejects.toThrow(
      `${db} is in use by another process (another rsop serve?); only one process may serve a database at a time`,
    );
    await expect(openSqliteStore(db)).rejects.toThrow("is in use by another process");
    const r = await run(["serve", "--data", db, "--system", system, "--token", TOKEN, "--port", "0"]);
    expect(r).toMatchObject({ code: 1, stderr: expect.stringContaining(`rsop: ${db} is in use by another process`) });
    expect((await first.call("GET", "/groups")).status).toBe(200);
    await first.server.close();
    const second = await startData(db);
    expect((await second.call("GET", "/groups")).status).toBe(200);
  });

  test("an empty database needs a snapshot to serve one system (the command line starts a service there instead, T52); --system on a loaded database is ignored with a notice; --panel on a system database is refused", async () => {
    const { db, system } = dataDir();
    await expect(startDataServer({ dataFile: db, token: TOKEN, log: () => {} })).rejects.toThrow(
      "the database is empty: give a snapshot to import (--system FILE or --panel FILE)",
    );
    const first = await startData(db, building());
    expect((await first.call("POST", "/groups", { name: "Later" })).status).toBe(200);
    await first.server.close();
    const again = await startData(db, { not: "read" });
    expect(again.lines).toContain(
      `building.json ignored: it only seeds an empty database, and ${db} already holds the 2.0 system (change 1)`,
    );
    expect((await again.call("GET", "/groups?search=Later")).body).toHaveLength(1);
    await again.server.close();
    const panel = resolve(__dirname, "../../examples/panel.json");
    const r = await run(["serve", "--data", db, "--panel", panel, "--token", TOKEN, "--port", "0"]);
    expect(r).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        `${db} holds a 2.0 system; serve it with --system FILE or with neither, not with --panel`,
      ),
    });
    const usage = await run(["serve", "--panel", panel, "--token", TOKEN]);
    expect(usage).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--panel is served only from a database: add --data FILE.db"),
    });
    expect((await run(["serve", "--data", db, "--system", system, "--panel", panel, "--token", TOKEN])).code).toBe(2);
  });

  test("an invalid snapshot to import: every problem listed, exit 1, nothing imported", async () => {
    const { db, dir } = dataDir();
    const broken = join(dir, "broken.json");
    const json = building();
    (json.holders as { groups: string[] }[])[0]!.groups = ["g-nope"];
    (await import("node:fs")).writeFileSync(broken, JSON.stringify(json));
    const r = await run(["serve", "--data", db, "--system", broken, "--token", TOKEN, "--port", "0"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("holders[0].groups[0]: ");
    const store = await openSqliteStore(db);
    expect(await store.load()).toBeNull();
    await store.close();
  });

  test("`rsop serve --data` runs until SIGTERM, then finishes and closes the database", async () => {
    const { db, system } = dataDir();
    const stderr = new PassThrough();
    let log = "";
    stderr.on("data", (b: Buffer) => (log += b.toString("utf8")));
    const signals = new EventEmitter();
    let server: RunningDataServer | undefined;
    let listening!: () => void;
    const started = new Promise<void>((r) => (listening = r));
    const io = { stdin: Readable.from([]), stdout: new PassThrough(), stderr };
    const exit = serveCommand(
      { data: db, system, port: "0", host: "127.0.0.1", token: TOKEN, snapshotEvery: "2" },
      io,
      {},
      signals,
      undefined,
      (s) => {
        server = s;
        listening();
      },
    );
    await Promise.race([started, exit]);
    expect(server, log).toBeDefined();
    const call = caller(server!.url);
    const writes = await Promise.all(
      Array.from({ length: 8 }, (_, k) => call("POST", "/groups", { name: `Team ${k}` })),
    );
    expect(writes.map((w) => w.status)).toEqual(Array(8).fill(200));
    signals.emit("SIGTERM");
    expect(await exit).toBe(0);
    expect(log).toMatch(/SIGTERM: closing/);
    const stored = inspect(db);
    expect(stored.changes).toHaveLength(8);
    expect(stored.snapshots.at(-1)).toBe(8);
    // What the database holds is what a fresh live system from the import plus the writes holds.
    const fresh = createLiveSystem(JSON.parse(readFileSync(system, "utf8")));
    if (!fresh.ok) throw new Error("fixture");
    expect(fresh.value.snapshot.groups.length + 8).toBe(
      await (async () => {
        const again = await startData(db);
        return again.server.durable.target.live.snapshot.groups.length;
      })(),
    );
  });
});

describe("the durable system", () => {
  test("writes run one at a time in order; close() finishes the queued writes, stores a snapshot and releases the database", async () => {
    const { db } = dataDir();
    const store = await openSqliteStore(db);
    const durable = await openDurableSystem(store, { initial: { kind: "system", json: building() } });
    expect(durable.startedFrom).toEqual({ how: "imported" });
    const writes = Array.from({ length: 20 }, (_, k) =>
      durable.write({ method: "POST", path: "/groups", body: { name: `Queue ${k}` } }),
    );
    writes.push(durable.write({ method: "POST", path: "/groups", body: { name: "Queue 3" } })); // refused: a duplicate name
    const closed = durable.close();
    await expect(durable.write({ method: "POST", path: "/groups", body: { name: "Too late" } })).rejects.toThrow(
      "the store is closing",
    );
    const results = await Promise.all(writes);
    await closed;
    expect(results.map((r) => r.status)).toEqual([...Array(20).fill(200), 409]);
    const stored = inspect(db);
    expect(stored.changes.map((c) => c.operation.body.name)).toEqual(
      Array.from({ length: 20 }, (_, k) => `Queue ${k}`),
    );
    expect(stored.snapshots).toEqual([0, 20]);
    const reopened = await openDurableSystem(await openSqliteStore(db));
    expect(reopened.startedFrom).toEqual({ how: "loaded", seq: 20, snapshotSeq: 20, replayed: 0 });
    await reopened.close();
  });
});

describe("rsop serve --data --panel", () => {
  test("1.0 routes under /api: create, list with headers, restart keeps them", async () => {
    const { db } = dataDir();
    const panel = JSON.parse(readFileSync(resolve(__dirname, "../../examples/panel.json"), "utf8"));
    const first = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => panel },
    });
    const call = caller(first.server.url, "");
    const g = await call("POST", "/api/groups", { name: "Durable Group" });
    expect(g.status).toBe(200);
    expect(typeof g.body.id).toBe("number");
    const list = await call("GET", "/api/groups?per_page=1");
    expect(list.status).toBe(200);
    expect(Number(list.headers.get("x-total-count"))).toBe(panel.groups.length + 1);
    expect(list.headers.get("link")).toContain('rel="last"');
    expect((await call("POST", "/api/groups", {})).status).toBe(400);
    expect((await call("GET", "/sys/holders")).status).toBe(404);
    await first.server.close();
    const again = await startData(db);
    expect(again.lines.some((l) => l.startsWith(`loaded ${db}: 1.0 panel at change 1`))).toBe(true);
    expect((await caller(again.server.url, "")("GET", `/api/groups/${g.body.id}`)).body).toMatchObject({
      id: g.body.id,
      name: "Durable Group",
    });
  });
});
