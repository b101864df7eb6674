// `rsop serve --data --tokens FILE`: roles and partitions over real HTTP on a real SQLite file
// (semantics H17–H22). The fixture building: partitions p-default (the default) and p-east; groups
// g-staff (p-default), g-night (p-east), g-empty (none: the default partition); holders h-ann and
// h-bob (none; h-bob in g-staff and g-night), h-cy (p-east, in g-empty); rules r-staff-door (g-staff)
// and r-night-lift (g-night).
import { EventEmitter } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { afterAll, describe, expect, test } from "vitest";
import { serveCommand } from "../../src/adapters/cli/serveCommand.js";
import type { RunningDataServer } from "../../src/adapters/http/startDataServer.js";
import { startServer } from "../../src/adapters/http/startServer.js";
import { type TokenEntry, constantTimeEqual, grantLookup, parseTokens } from "../../src/service/auth/tokens.js";
import { run } from "../adapters/cliHarness.js";
import { building } from "../live/fixture.js";
import { type Answer, SYSTEM_ID, dataDir, inspect, startData } from "./dataSupport.js";
import { TOKEN, removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

const ADMIN = "admin-token-aaaaaaaaaaaa";
const INTEGRATOR = "integrator-token-bbbbbbbbbbbb";
const EAST = "manager-east-token-cccccccccccc";
const DEFAULT_MANAGER = "manager-default-token-dddddddddd";
const REPORTER = "reporter-default-token-eeeeeeeeee";
const TOKENS_JSON = {
  [ADMIN]: { role: "admin" },
  [INTEGRATOR]: { role: "integrator" },
  [EAST]: { role: "manager", partitions: ["p-east"] },
  [DEFAULT_MANAGER]: { role: "manager", partitions: ["p-default"] },
  [REPORTER]: { role: "reporter", partitions: ["p-default"] },
};
const ALL_TOKENS = [ADMIN, INTEGRATOR, EAST, DEFAULT_MANAGER, REPORTER, TOKEN];
const WEEK = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const AT = "2026-04-15T12:00:00Z";

function entries(): TokenEntry[] {
  const r = parseTokens(TOKENS_JSON);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.entries;
}

type As = (token: string, method: string, path: string, body?: unknown) => Promise<Answer>;

/** A `--data` server on the fixture with the tokens file's tokens and TOKEN (as RSOP_TOKEN) as an admin's. */
async function serve(): Promise<{ server: RunningDataServer; as: As; lines: string[] }> {
  const { db } = dataDir();
  const { server, lines } = await startData(db, building(), { tokens: { file: "tokens.json", entries: entries() } });
  const as: As = async (token, method, path, body) => {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${token}` } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    const res = await fetch(`${server.url}/${SYSTEM_ID}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
    const text = await res.text();
    for (const t of ALL_TOKENS) expect(text.includes(t), "no answer holds a token").toBe(false);
    return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
  };
  return { server, as, lines };
}

const ids = (r: Answer): string[] => (r.body as { id: string }[]).map((x) => x.id);

/** A refusal in the one error shape, with nothing stored: the change log and the snapshot are as before. */
async function refused(
  server: RunningDataServer,
  as: As,
  status: number,
  token: string,
  method: string,
  path: string,
  body?: unknown,
) {
  const seq = server.durable.seq();
  const before = server.durable.target.live.snapshot;
  const r = await as(token, method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(Object.keys(r.body.error).sort()).toEqual(["issues", "message", "status"]);
  expect(r.body.error.status).toBe(status);
  expect(server.durable.seq(), `${method} ${path}: nothing stored`).toBe(seq);
  expect(server.durable.target.live.snapshot, `${method} ${path}: nothing changed`).toBe(before);
  return r.body.error as { status: number; message: string; issues: { path: string; message: string }[] };
}

describe("tokens file", () => {
  test("constantTimeEqual compares fixed-length digests: equal strings only, whatever the lengths", () => {
    expect(constantTimeEqual("s3cret-token-0123456789", "s3cret-token-0123456789")).toBe(true);
    for (const other of [
      "",
      "s3cret-token-012345678",
      "s3cret-token-01234567890",
      "S3cret-token-0123456789",
      "x".repeat(100_000),
    ])
      expect(constantTimeEqual("s3cret-token-0123456789", other)).toBe(false);
  });

  test("grantLookup finds each token's grant and nothing else", () => {
    const lookup = grantLookup(entries());
    expect(lookup(ADMIN)).toEqual({ role: "admin", partitions: null });
    expect(lookup(EAST)).toEqual({ role: "manager", partitions: new Set(["p-east"]) });
    expect(lookup(REPORTER)?.role).toBe("reporter");
    for (const t of ["", `${ADMIN}x`, ADMIN.slice(0, -1), ADMIN.toUpperCase()]) expect(lookup(t)).toBeNull();
  });

  test("every problem of a file is named by the entry's place, never by its token", () => {
    const secret = "a-secret-token-that-is-long-enough";
    const r = parseTokens({
      [secret]: { role: "owner" },
      "short-one": { role: "admin" },
      "bad token with spaces": { role: "admin" },
      "manager-without-partitions-0000": { role: "manager" },
      "admin-with-partitions-00000000": { role: "admin", partitions: ["p-1"] },
      "reporter-empty-partitions-0000": { role: "reporter", partitions: [] },
      "reporter-bad-partition-0000000": { role: "reporter", partitions: ["p-1", 7], extra: true },
      "not-an-object-000000000000000": "admin",
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path)).toEqual([
      "#1.role",
      "#2",
      "#3",
      "#4.partitions",
      "#5.partitions",
      "#6.partitions",
      "#7.extra",
      "#7.partitions.1",
      "#8",
    ]);
    for (const i of r.issues) {
      expect(i.message.length).toBeGreaterThan(10);
      expect(i.message).not.toContain(secret);
      expect(i.message).not.toContain("short-one");
    }
    expect(parseTokens([])).toMatchObject({ ok: false, issues: [{ path: "" }] });
    expect(parseTokens({})).toMatchObject({
      ok: false,
      issues: [{ path: "", message: "Names no token: add at least one." }],
    });
  });

  test("rsop serve refuses a bad tokens file with its path (exit 1) and wrong option use (exit 2); the token is never echoed", async () => {
    const { dir, db, system } = dataDir();
    const file = join(dir, "tokens.json");
    const secret = "a-secret-token-that-is-long-enough";
    writeFileSync(file, JSON.stringify({ [secret]: { role: "manager" } }));
    const bad = await run(["serve", "--data", db, "--system", system, "--tokens", file, "--port", "0"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      `rsop: ${file}: 1 problem\n  #1.partitions: Is required for a manager: the ids of the partitions it may see.`,
    );
    expect(bad.stderr).not.toContain(secret);
    writeFileSync(file, `{"${secret}": {"role": "admin"},}`);
    const notJson = await run(["serve", "--data", db, "--system", system, "--tokens", file, "--port", "0"]);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain(`rsop: ${file}: 1 problem\n  (the file): Is not valid JSON`);
    expect(notJson.stderr).not.toContain(secret);
    const missing = await run([
      "serve",
      "--data",
      db,
      "--system",
      system,
      "--tokens",
      join(dir, "nope.json"),
      "--port",
      "0",
    ]);
    expect(missing).toMatchObject({
      code: 1,
      stderr: `rsop: ${join(dir, "nope.json")}: no such file\n`,
    });
    writeFileSync(file, JSON.stringify(TOKENS_JSON));
    expect(
      await run(["serve", "--data", db, "--system", system, "--tokens", file, "--insecure-no-auth"]),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--insecure-no-auth contradicts --tokens FILE"),
    });
    const panel = join(__dirname, "../../examples/panel.json");
    const onPanel = await run([
      "serve",
      "--data",
      join(dir, "panel.db"),
      "--panel",
      panel,
      "--tokens",
      file,
      "--port",
      "0",
    ]);
    expect(onPanel.code).toBe(1);
    expect(onPanel.stderr).toContain(
      `${file}: 3 problems\n  #3.role: A 1.0 panel is served to admin and integrator tokens only, not to a manager.`,
    );
  });

  test("the read-only file mode takes the tokens file too: RSOP of a manager's or reporter's holders only, decisions for admins and integrators", async () => {
    const { system } = dataDir();
    const lines: string[] = [];
    const server = await startServer({
      systemFile: system,
      tokens: { file: "tokens.json", entries: entries() },
      token: TOKEN,
      log: (l) => lines.push(l),
      reloadWorker: false,
    });
    try {
      const get = async (token: string, path: string, body?: unknown) => {
        const res = await fetch(`${server.url}/${SYSTEM_ID}${path}`, {
          method: body === undefined ? "GET" : "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
        return { status: res.status, text: await res.text() };
      };
      const scan = { deviceId: "d-front", at: AT, credential: { credentialNumber: 1001, facilityCode: 10 } };
      for (const token of [TOKEN, ADMIN, INTEGRATOR]) {
        expect((await get(token, "/decisions", scan)).status).toBe(200);
        expect((await get(token, `/rsop/holders?ids=h-cy&at=${AT}`)).status).toBe(200);
      }
      for (const token of [EAST, REPORTER]) {
        expect((await get(token, "/decisions", scan)).status).toBe(403);
        expect((await get(token, "/devices/d-front/access")).status).toBe(403);
      }
      expect((await get(REPORTER, `/rsop/holders?ids=h-ann,h-bob&at=${AT}`)).status).toBe(200);
      expect((await get(EAST, `/cloud-nodes/n-main/rsop/holders?ids=h-cy&at=${AT}`)).status).toBe(200);
      const hidden = await get(REPORTER, `/rsop/holders?ids=h-ann,h-cy&at=${AT}`);
      const none = await get(ADMIN, `/rsop/holders?ids=h-ann,zz-none&at=${AT}`);
      expect(hidden.status).toBe(404);
      expect(hidden.text.replace("h-cy", "zz-none")).toBe(none.text);
      expect((await get(`${REPORTER}0`, "/rsop/holders?ids=h-ann")).status).toBe(401);
    } finally {
      await server.close();
    }
    for (const t of ALL_TOKENS) expect(lines.join("\n")).not.toContain(t);
  });

  test("rsop serve --tokens: the tokens work, RSOP_TOKEN stays an admin's, and no log line holds a token", async () => {
    const { dir, db, system } = dataDir();
    const file = join(dir, "tokens.json");
    writeFileSync(file, JSON.stringify(TOKENS_JSON));
    const stderr = new PassThrough();
    let log = "";
    stderr.on("data", (b: Buffer) => (log += b.toString("utf8")));
    const signals = new EventEmitter();
    let server: RunningDataServer | undefined;
    let listening!: () => void;
    const started = new Promise<void>((r) => (listening = r));
    const io = { stdin: Readable.from([]), stdout: new PassThrough(), stderr };
    const exit = serveCommand(
      { data: db, system, tokens: file, port: "0", host: "127.0.0.1" },
      io,
      { RSOP_TOKEN: TOKEN },
      signals,
      undefined,
      (s) => {
        server = s;
        listening();
      },
    );
    await Promise.race([started, exit]);
    expect(server, log).toBeDefined();
    const get = (token: string, path: string, method = "GET") =>
      fetch(`${server!.url}/${SYSTEM_ID}${path}`, { method, headers: { authorization: `Bearer ${token}` } }).then(
        async (r) => ({ status: r.status, text: await r.text() }),
      );
    expect((await get(TOKEN, "/partitions")).status).toBe(200);
    expect((await get(TOKEN, "/partitions", "POST")).status).toBe(400); // an admin's write reaches the live system
    expect((await get(INTEGRATOR, "/cloud-nodes")).status).toBe(200);
    expect((await get(REPORTER, "/holders")).status).toBe(200);
    const wrong = await get(`${ADMIN}x`, "/holders");
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain(ADMIN);
    signals.emit("SIGTERM");
    expect(await exit).toBe(0);
    expect(log).toContain(
      `tokens: 5 from ${file} (1 admin, 1 integrator, 2 manager, 1 reporter), and RSOP_TOKEN or --token as an admin's`,
    );
    expect(log).toMatch(/GET \/sys-1\/holders 401/);
    for (const t of ALL_TOKENS) expect(log).not.toContain(t);
  });
});

describe("roles over HTTP", () => {
  test("RSOP_TOKEN stays an admin's even when the tokens file gives it another role", async () => {
    const { db } = dataDir();
    const listed = parseTokens({ [TOKEN]: { role: "reporter", partitions: ["p-east"] } });
    if (!listed.ok) throw new Error("fixture");
    const { call } = await startData(db, building(), { tokens: { file: "tokens.json", entries: listed.entries } });
    expect(ids(await call("GET", "/holders"))).toEqual(["h-ann", "h-bob", "h-cy"]);
    expect((await call("POST", "/groups", { name: "Admin's" })).status).toBe(200);
  });

  test("admin (file and RSOP_TOKEN) and integrator reach everything: every partition, hardware, partitions, decisions", async () => {
    const { server, as } = await serve();
    for (const token of [ADMIN, TOKEN, INTEGRATOR]) {
      const holders = await as(token, "GET", "/holders");
      expect(ids(holders)).toEqual(["h-ann", "h-bob", "h-cy"]);
      expect(holders.headers.get("x-total-count")).toBe("3");
      expect(ids(await as(token, "GET", "/rules"))).toEqual(["r-night-lift", "r-staff-door"]);
      expect(
        (
          await as(token, "POST", "/decisions", {
            deviceId: "d-front",
            at: AT,
            credential: { credentialNumber: 1001, facilityCode: 10 },
          })
        ).body,
      ).toMatchObject({ outcome: "allowed" });
      expect((await as(token, "GET", "/devices/d-front/access")).status).toBe(200);
    }
    expect((await as(INTEGRATOR, "POST", "/partitions", { name: "North" })).status).toBe(200);
    expect(
      (
        await as(INTEGRATOR, "POST", "/cloud-nodes/n-main/devices", {
          name: "Dock",
          type: "ioDevice",
          publicIcon: "fan",
          connection: "x-spare",
          port: 9,
        })
      ).status,
    ).toBe(200);
    expect(
      (await as(ADMIN, "POST", "/holders", { firstName: "Ed", lastName: "Ito", partition: "p-east" })).status,
    ).toBe(201);
    expect(server.durable.seq()).toBe(3);
  });

  test("401 for no token, a wrong one, or one of another kind; the answer and the log never hold it", async () => {
    const { as, lines } = await serve();
    for (const token of ["", `${EAST}0`, EAST.slice(0, 20), REPORTER.toUpperCase()]) {
      const r = await as(token, "GET", "/holders");
      expect(r.status).toBe(401);
    }
    for (const t of ALL_TOKENS) expect(lines.join("\n")).not.toContain(t);
  });

  test("reporter: reads of its partitions only (404 outside, lists and totals filtered); every write 403 with nothing stored", async () => {
    const { server, as, lines } = await serve();
    const db = server.durable;
    // Lists: holders and groups of p-default (h-ann and h-bob have no partition: the default one, H18).
    const holders = await as(REPORTER, "GET", "/holders?per_page=1");
    expect(ids(holders)).toEqual(["h-ann"]);
    expect(holders.headers.get("x-total-count")).toBe("2");
    expect(holders.headers.get("link")).toContain('rel="last"');
    expect(holders.headers.get("link")).toContain("page=1");
    const bob = (await as(REPORTER, "GET", "/holders/h-bob")).body;
    expect(bob.groups.map((g: { id: string }) => g.id)).toEqual(["g-staff"]); // g-night is p-east's
    expect(ids(await as(REPORTER, "GET", "/holders?include=rules")).length).toBe(2);
    const withRules = (await as(REPORTER, "GET", "/holders?include=rules,groups")).body as {
      id: string;
      rules: { id: string }[];
    }[];
    expect(withRules.find((h) => h.id === "h-bob")!.rules.map((r) => r.id)).toEqual(["r-staff-door"]);
    const groups = await as(REPORTER, "GET", "/groups");
    expect(ids(groups)).toEqual(["g-empty", "g-staff"]);
    expect(groups.headers.get("x-total-count")).toBe("2");
    expect(ids(await as(REPORTER, "GET", "/groups?include=holders"))).toEqual(["g-empty", "g-staff"]);
    expect(ids(await as(REPORTER, "GET", "/rules"))).toEqual(["r-staff-door"]);
    expect(ids(await as(REPORTER, "GET", "/holders/h-bob/groups"))).toEqual(["g-staff"]);
    const empty = await as(REPORTER, "GET", "/groups/g-empty/holders");
    expect(ids(empty)).toEqual([]); // h-cy is p-east's
    expect(empty.headers.get("x-total-count")).toBe("0");
    expect(ids(await as(REPORTER, "GET", "/partitions"))).toEqual(["p-default"]);
    expect((await as(REPORTER, "GET", "/credentials")).headers.get("x-total-count")).toBe("3"); // Ann's card, Bob's two
    // Outside: 404, the very answer of an id that does not exist.
    for (const [path, what] of [
      ["/holders/h-cy", "holder"],
      ["/groups/g-night", "group"],
      ["/rules/r-night-lift", "rule"],
      ["/partitions/p-east", "partition"],
      ["/groups/g-night/holders", "group"],
      ["/holders/h-cy/credentials", "holder"],
      ["/partitions/p-east/custom-fields", "partition"],
    ] as const) {
      const hidden = await as(REPORTER, "GET", path);
      const id = path.split("/")[2]!;
      const none = await as(ADMIN, "GET", path.replace(id, "zz-none"));
      expect(hidden.status, path).toBe(404);
      expect(JSON.stringify(hidden.body).replace(id, "zz-none"), path).toBe(JSON.stringify(none.body));
      expect(hidden.body.error.issues[0].message).toBe(`No ${what} has id "${id}".`);
    }
    // Hardware and floor groups: read in full.
    expect(ids(await as(REPORTER, "GET", "/cloud-nodes"))).toEqual(["n-annex", "n-main"]);
    expect((await as(REPORTER, "GET", "/cloud-nodes/n-main/devices/d-side")).status).toBe(200);
    expect((await as(REPORTER, "GET", "/floor_groups")).headers.get("x-total-count")).toBe("2");
    // RSOP of its holders; another's id is unknown.
    expect((await as(REPORTER, "GET", `/rsop/holders?ids=h-ann,h-bob&at=${AT}`)).status).toBe(200);
    const rsop = await as(REPORTER, "GET", `/rsop/holders?ids=h-ann,h-cy&at=${AT}`);
    const rsopNone = await as(ADMIN, "GET", `/rsop/holders?ids=h-ann,zz-none&at=${AT}`);
    expect(rsop.status).toBe(404);
    expect(JSON.stringify(rsop.body).replace("h-cy", "zz-none")).toBe(JSON.stringify(rsopNone.body));
    // Decisions and who-can-access: 403.
    await refused(server, as, 403, REPORTER, "POST", "/decisions", {
      deviceId: "d-front",
      at: AT,
      credential: { credentialNumber: 1001, facilityCode: 10 },
    });
    await refused(server, as, 403, REPORTER, "GET", "/devices/d-front/access");
    // Writes: 403, nothing stored, also for a bad body or an id outside.
    const before = db.seq();
    for (const [method, path, body] of [
      ["POST", "/holders", { firstName: "Zed", lastName: "Ray" }],
      [
        "PUT",
        "/holders/h-ann",
        {
          firstName: "Ann",
          lastName: "Lee",
          partition: null,
          enabled: true,
          activeDate: null,
          expireDate: null,
          pin: null,
          duressPin: null,
        },
      ],
      ["DELETE", "/holders/h-ann", undefined],
      ["DELETE", "/holders/h-cy", undefined],
      ["POST", "/holders/h-ann/credentials", { types: ["card"], credentialNumber: 9, facilityCode: 1 }],
      ["PUT", "/holders/h-ann/groups/g-empty", undefined],
      ["POST", "/groups", { name: "X", partition: "p-default" }],
      ["DELETE", "/rules/r-staff-door", undefined],
      ["POST", "/partitions", { name: "N" }],
      ["POST", "/cloud-nodes", { name: "N", serialNumber: "SN-9" }],
      ["POST", "/holders", "not json"],
    ] as const) {
      const e = await refused(server, as, 403, REPORTER, method, path, body);
      expect(e.message).toBe("This token is a reporter's: it may only read.");
    }
    expect(db.seq()).toBe(before);
    for (const t of ALL_TOKENS) expect(lines.join("\n")).not.toContain(t);
  });

  test("manager: changes holders, groups and rules of its partitions; 404 outside; 403 for another partition or another collection", async () => {
    const { server, as } = await serve();
    const holders = await as(EAST, "GET", "/holders");
    expect(ids(holders)).toEqual(["h-cy"]);
    expect(holders.headers.get("x-total-count")).toBe("1");
    expect(holders.body[0].groups).toEqual([]); // g-empty is in the default partition
    expect(ids(await as(EAST, "GET", "/groups"))).toEqual(["g-night"]);
    expect(ids(await as(EAST, "GET", "/rules"))).toEqual(["r-night-lift"]);
    expect(ids(await as(EAST, "GET", "/groups/g-night/holders"))).toEqual([]); // h-bob is the default partition's

    // Creates in its partition; a holder or group elsewhere, or without a partition (the default one), is 403.
    const dee = await as(EAST, "POST", "/holders", {
      firstName: "Dee",
      lastName: "Park",
      partition: "p-east",
      groups: ["g-night"],
    });
    expect(dee.status).toBe(201);
    for (const partition of [undefined, null, "p-default", "p-nope"]) {
      const e = await refused(server, as, 403, EAST, "POST", "/holders", {
        firstName: "Zed",
        lastName: "Ray",
        ...(partition !== undefined ? { partition } : {}),
      });
      expect(e.issues).toEqual([
        { path: "body.partition", message: expect.stringContaining('is not one of this token\'s: "p-east".') },
      ]);
    }
    await refused(server, as, 403, EAST, "POST", "/groups", { name: "Elsewhere", partition: "p-default" });
    await refused(server, as, 403, EAST, "POST", "/groups", { name: "Nowhere" });
    const team = await as(EAST, "POST", "/groups", { name: "East Team", partition: "p-east" });
    expect(team.status).toBe(200);
    expect((await as(EAST, "PUT", `/holders/${dee.body.id}/groups/${team.body.id}`)).status).toBe(204);
    const rule = await as(EAST, "POST", "/rules", {
      type: "door",
      groupId: team.body.id,
      devices: ["d-side"],
      startTime: "00:00:00",
      stopTime: "24:00:00",
      recurring: WEEK,
    });
    expect(rule.status).toBe(201);
    expect((await as(EAST, "PUT", "/groups/g-night", { name: "Night Shift", partition: "p-east" })).status).toBe(204);
    // Moving its holder out of its partitions: 403.
    await refused(server, as, 403, EAST, "PUT", "/holders/h-cy", {
      firstName: "Cy",
      lastName: "Annand",
      partition: "p-default",
      enabled: true,
      activeDate: null,
      expireDate: null,
      pin: null,
      duressPin: null,
    });
    await refused(server, as, 403, EAST, "PUT", "/groups/g-night", { name: "Night Shift", partition: null });

    // Ids outside: 404 (path) or the answer of an id that does not exist (body), nothing stored.
    for (const [method, path, body] of [
      [
        "PUT",
        "/holders/h-ann",
        {
          firstName: "Ann",
          lastName: "Lee",
          partition: "p-east",
          enabled: true,
          activeDate: null,
          expireDate: null,
          pin: null,
          duressPin: null,
        },
      ],
      ["DELETE", "/holders/h-bob", undefined],
      ["POST", "/holders/h-ann/credentials", { types: ["card"], credentialNumber: 77, facilityCode: 1 }],
      ["PUT", "/holders/h-cy/groups/g-staff", undefined],
      ["DELETE", "/holders/h-bob/groups/g-night", undefined],
      ["DELETE", "/groups/g-staff", undefined],
      ["PUT", "/groups/g-staff/holders", { holders: ["h-cy"] }],
      ["DELETE", "/rules/r-staff-door", undefined],
    ] as const) {
      const e = await refused(server, as, 404, EAST, method, path, body);
      expect(e.issues[0]!.message).toMatch(/^No (holder|group|rule) has id "[a-z-]+"\.$/);
    }
    const hiddenRef = await refused(server, as, 400, EAST, "PUT", "/holders/h-cy/groups", {
      groups: ["g-night", "g-staff"],
    });
    const noneRef = await refused(server, as, 400, ADMIN, "PUT", "/holders/h-cy/groups", {
      groups: ["g-night", "zz-none"],
    });
    expect(JSON.stringify(hiddenRef).replace("g-staff", "zz-none")).toBe(JSON.stringify(noneRef));
    const hiddenRule = await refused(server, as, 400, EAST, "POST", "/rules", {
      type: "door",
      groupId: "g-staff",
      devices: ["d-side"],
      startTime: "00:00:00",
      stopTime: "24:00:00",
      recurring: WEEK,
    });
    const noneRule = await refused(server, as, 400, ADMIN, "POST", "/rules", {
      type: "door",
      groupId: "zz-none",
      devices: ["d-side"],
      startTime: "00:00:00",
      stopTime: "24:00:00",
      recurring: WEEK,
    });
    expect(JSON.stringify(hiddenRule).replace("g-staff", "zz-none")).toBe(JSON.stringify(noneRule));
    const hiddenMember = await refused(server, as, 400, EAST, "POST", "/holders", {
      firstName: "Gil",
      lastName: "Ho",
      partition: "p-east",
      groups: ["g-night", "g-staff"],
    });
    const noneMember = await refused(server, as, 400, ADMIN, "POST", "/holders", {
      firstName: "Gil",
      lastName: "Ho",
      partition: "p-east",
      groups: ["g-night", "zz-none"],
    });
    expect(JSON.stringify(hiddenMember).replace("g-staff", "zz-none")).toBe(JSON.stringify(noneMember));
    const hiddenHolder = await refused(server, as, 400, EAST, "PUT", "/groups/g-night/holders", {
      holders: ["h-cy", "h-ann"],
    });
    const noneHolder = await refused(server, as, 400, ADMIN, "PUT", "/groups/g-night/holders", {
      holders: ["h-cy", "zz-none"],
    });
    expect(JSON.stringify(hiddenHolder).replace("h-ann", "zz-none")).toBe(JSON.stringify(noneHolder));

    // A replace list keeps what the manager cannot see: h-bob stays in g-night.
    expect((await as(EAST, "PUT", "/groups/g-night/holders", { holders: [dee.body.id] })).status).toBe(204);
    expect(ids(await as(ADMIN, "GET", "/groups/g-night/holders")).sort()).toEqual([dee.body.id, "h-bob"].sort());
    expect(ids(await as(EAST, "GET", "/groups/g-night/holders"))).toEqual([dee.body.id]);
    // Also when the path spells the id percent-encoded.
    expect((await as(EAST, "PUT", "/groups/g%2Dnight/holders", { holders: [dee.body.id] })).status).toBe(204);
    expect(ids(await as(ADMIN, "GET", "/groups/g-night/holders")).sort()).toEqual([dee.body.id, "h-bob"].sort());
    // And a holder's groups keep the ones of other partitions.
    expect((await as(EAST, "PUT", "/holders/h-cy/groups", { groups: ["g-night"] })).status).toBe(204);
    expect((await as(ADMIN, "GET", "/holders/h-cy")).body.groups.map((g: { id: string }) => g.id)).toEqual([
      "g-night",
      "g-empty",
    ]);

    // Other collections: read, not written; decisions 403.
    expect((await as(EAST, "GET", "/cloud-nodes/n-main/devices/d-front")).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", "/partitions", { name: "N" }],
      ["PUT", "/partitions/p-east/devices", { devices: [] }],
      ["POST", "/partitions/p-east/custom-fields/single", { id: "badge", type: "string" }],
      ["POST", "/floor_groups", { name: "F", readerPort: "d-lift", floors: ["d-floor-1"], partition: "p-east" }],
      ["DELETE", "/cloud-nodes/n-annex", undefined],
    ] as const) {
      const e = await refused(server, as, 403, EAST, method, path, body);
      expect(e.message).toBe("A manager changes only holders, groups and rules.");
    }
    await refused(server, as, 403, EAST, "POST", "/decisions", {
      deviceId: "d-front",
      at: AT,
      credential: { credentialNumber: 1001, facilityCode: 10 },
    });
    // Deleting its own group and holder.
    expect((await as(EAST, "DELETE", `/rules/${rule.body.id}`)).status).toBe(204);
    expect((await as(EAST, "DELETE", `/groups/${team.body.id}`)).status).toBe(204);
    expect((await as(EAST, "DELETE", `/holders/${dee.body.id}`)).status).toBe(204);
    // A manager of the default partition sees and changes the holders without a partition.
    expect(ids(await as(DEFAULT_MANAGER, "GET", "/holders"))).toEqual(["h-ann", "h-bob"]);
    expect((await as(DEFAULT_MANAGER, "POST", "/holders", { firstName: "Flo", lastName: "Ng" })).status).toBe(201);
    expect((await as(DEFAULT_MANAGER, "PUT", "/holders/h-ann/groups/g-empty")).status).toBe(204);
  });

  test("a reporter's refusal stores nothing: the change log on disk is the same before and after", async () => {
    const { dir } = dataDir();
    const db = join(dir, "roles.db");
    const first = await startData(db, building(), { tokens: { file: "tokens.json", entries: entries() } });
    expect((await first.call("POST", "/groups", { name: "Before" })).status).toBe(200);
    await first.server.close();
    const stored = inspect(db).changes;
    const again = await startData(db, undefined, { tokens: { file: "tokens.json", entries: entries() } });
    for (const [path, body] of [
      ["/groups", "{}"],
      ["/holders", "{ not json"],
      ["/rules", "{}"],
    ] as const) {
      const r = await fetch(`${again.server.url}/${SYSTEM_ID}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${REPORTER}`, "content-type": "application/json" },
        body,
      });
      expect(r.status, "403 before the body is read").toBe(403);
    }
    await again.server.close();
    expect(inspect(db).changes).toEqual(stored);
  });
});
