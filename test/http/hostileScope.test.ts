// Issue rows on scope and secrecy, tried as an attacker would, over real HTTP on a real SQLite file:
// a manager of one partition granting a door of another (HS1), a reporter reading PINs (HS2), RSOP
// naming groups and rules outside a token's partitions (HS3), query parameters a route does not take
// (HS4) and body fields a write does not take (HS5). The fixture building: partitions p-default (the
// default) and p-east; d-side is in p-east, every other device in none (the default partition);
// floor groups f-low (p-default) and f-high (none); h-bob is in g-staff (p-default) and g-night (p-east).
import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, test } from "vitest";
import type { RunningDataServer } from "../../src/adapters/http/startDataServer.js";
import { startServer } from "../../src/adapters/http/startServer.js";
import { type TokenEntry, parseTokens } from "../../src/service/auth/tokens.js";
import { routePatterns } from "../../src/live/routes.js";
import { panelRoutePatterns } from "../../src/legacy1/live/panelRoutes.js";
import { building } from "../live/fixture.js";
import { smallPanel } from "../live/panelFixture.js";
import { type Answer, SYSTEM_ID, dataDir, expectError, startData, unchanged } from "./dataSupport.js";
import { TOKEN, removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

const ADMIN = "hs-admin-token-aaaaaaaaaaaa";
const INTEGRATOR = "hs-integrator-token-bbbbbbbbbb";
const EAST = "hs-manager-east-token-cccccccccc";
const DEFAULT_MANAGER = "hs-manager-default-token-dddddd";
const REPORTER = "hs-reporter-default-token-eeeeee";
const WEEK = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const AT = "2026-04-15T12:00:00Z";
/** PINs of the building as served here: none of them may reach a reporter. */
const SECRETS = ["1234", "5678", "9999"];

function entries(json: Record<string, unknown>): TokenEntry[] {
  const r = parseTokens(json);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.entries;
}

const TOKENS = {
  [ADMIN]: { role: "admin" },
  [INTEGRATOR]: { role: "integrator" },
  [EAST]: { role: "manager", partitions: ["p-east"] },
  [DEFAULT_MANAGER]: { role: "manager", partitions: ["p-default"] },
  [REPORTER]: { role: "reporter", partitions: ["p-default"] },
};

/** The building with a duress PIN on h-ann, so both PIN fields carry a secret. */
function system(): Record<string, any> {
  const b = building() as Record<string, any>;
  b.holders.find((h: { id: string }) => h.id === "h-ann").duressPin = "9999";
  return b;
}

type As = (token: string, method: string, path: string, body?: unknown) => Promise<Answer & { text: string }>;

function asOf(url: string, prefix = `/${SYSTEM_ID}`): As {
  return async (token, method, path, body) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${url}${prefix}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    const json =
      res.headers.get("content-type")?.startsWith("application/json") && text !== "" ? JSON.parse(text) : undefined;
    return { status: res.status, headers: res.headers, body: json, text };
  };
}

async function serve(): Promise<{ server: RunningDataServer; as: As }> {
  const { db } = dataDir();
  const { server } = await startData(db, system(), { tokens: { file: "tokens.json", entries: entries(TOKENS) } });
  return { server, as: asOf(server.url) };
}

const ids = (r: Answer): string[] => (r.body as { id: string }[]).map((x) => x.id);

describe("HS1 partitions scope devices and floor groups for managers", () => {
  test("HS1 a manager of partition A may not create an allow rule on a door or floor group of partition B (issue row 7); nothing is stored", async () => {
    const { server, as } = await serve();
    try {
      const door = (devices: string[]) => ({
        type: "door",
        groupId: "g-night",
        devices,
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: WEEK,
      });
      const lift = (floorGroups: string[]) => ({
        type: "elevator",
        groupId: "g-night",
        floorGroups,
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: WEEK,
      });
      // d-front is in no partition (the default partition, not p-east): the manager of p-east may not grant it.
      const r = await unchanged(
        server,
        () => as(EAST, "POST", "/rules", door(["d-side", "d-front"])),
        "east grants d-front",
      );
      expect(expectError(r, 403, "east grants d-front")).toEqual([
        { path: "body.devices.1", message: 'Device "d-front" is not in this token\'s partitions: "p-east".' },
      ]);
      const f = await unchanged(
        server,
        () => as(EAST, "POST", "/rules", lift(["f-low", "f-high"])),
        "east grants floors",
      );
      expect(expectError(f, 403, "east grants floors").map((i) => i.path)).toEqual([
        "body.floorGroups.0",
        "body.floorGroups.1",
      ]);
      // An id that exists nowhere is answered alike: the answer tells nothing about other partitions.
      const none = await unchanged(server, () => as(EAST, "POST", "/rules", door(["d-nowhere"])), "east names nothing");
      expect(expectError(none, 403, "east names nothing").map((i) => i.path)).toEqual(["body.devices.0"]);
      // Its own door is fine; so is an update that keeps to it.
      const ok = await as(EAST, "POST", "/rules", door(["d-side"]));
      expect(ok.status).toBe(201);
      expect(
        expectError(await as(EAST, "PUT", `/rules/${ok.body.id}`, door(["d-side", "d-fan"])), 403, "east widens").map(
          (i) => i.path,
        ),
      ).toEqual(["body.devices.1"]);
      expect((await as(EAST, "PUT", `/rules/${ok.body.id}`, { ...door(["d-side"]), name: "Side" })).status).toBe(204);
      // The default partition's manager reaches a device in no partition, not d-side.
      const staff = (devices: string[]) => ({ ...door(devices), groupId: "g-staff" });
      expect((await as(DEFAULT_MANAGER, "POST", "/rules", staff(["d-front"]))).status).toBe(201);
      expect(
        expectError(await as(DEFAULT_MANAGER, "POST", "/rules", staff(["d-side"])), 403, "default grants d-side").map(
          (i) => i.path,
        ),
      ).toEqual(["body.devices.0"]);
      // An admin still grants any door.
      expect((await as(ADMIN, "POST", "/rules", door(["d-front"]))).status).toBe(201);
    } finally {
      await server.close();
    }
  });

  test("HS1 a rule an admin made over another partition's door is changed or deleted by an admin only", async () => {
    const { server, as } = await serve();
    try {
      // r-night-lift (g-night, p-east) names f-low (p-default); r-staff-door (g-staff) names d-side (p-east).
      const put = {
        type: "elevator",
        groupId: "g-night",
        floorGroups: ["f-low"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: WEEK,
      };
      for (const [token, method, path, body] of [
        [EAST, "PUT", "/rules/r-night-lift", put],
        [EAST, "DELETE", "/rules/r-night-lift", undefined],
        [DEFAULT_MANAGER, "DELETE", "/rules/r-staff-door", undefined],
      ] as const) {
        const r = await unchanged(server, () => as(token, method, path, body), `${method} ${path}`);
        const issues = expectError(r, 403, `${method} ${path}`);
        expect(issues[0]!.path).toBe("rule_id");
        expect(r.body.error.message).toBe(
          "This rule names devices or floor groups outside this token's partitions: an admin changes it.",
        );
      }
      expect((await as(ADMIN, "DELETE", "/rules/r-night-lift")).status).toBe(204);
    } finally {
      await server.close();
    }
  });
});

describe("HS2 secrets stay secret: reporters never see pin or duressPin", () => {
  test("HS2 a reporter's reads mask PINs (issue row 9); admins, integrators and managers read them", async () => {
    const { server, as } = await serve();
    try {
      const reads = [
        "/holders/h-ann",
        "/holders",
        "/holders?include=credentials,groups,partition,rules",
        "/holders?search=ann",
        "/groups/g-staff/holders",
        "/groups?include=holders",
        `/rsop/holders?ids=h-ann,h-bob&at=${AT}`,
        "/credentials",
      ];
      for (const path of reads) {
        const r = await as(REPORTER, "GET", path);
        expect(r.status, path).toBe(200);
        for (const secret of SECRETS) expect(r.text.includes(secret), `${path} holds a PIN`).toBe(false);
      }
      const ann = (await as(REPORTER, "GET", "/holders/h-ann")).body;
      expect([ann.pin, ann.duressPin]).toEqual(["****", "****"]);
      expect((await as(REPORTER, "GET", "/holders/h-bob")).body.duressPin).toBeNull();
      // Searching by PIN would find the digits one guess at a time.
      const search = await as(REPORTER, "GET", "/holders?search=12&search_fields=pin");
      expect(expectError(search, 403, "reporter searches PINs").map((i) => i.path)).toEqual(["query.search_fields"]);
      for (const token of [ADMIN, INTEGRATOR, DEFAULT_MANAGER, TOKEN]) {
        const h = (await as(token, "GET", "/holders/h-ann")).body;
        expect([h.pin, h.duressPin], token).toEqual(["1234", "9999"]);
      }
    } finally {
      await server.close();
    }
  });

  test("HS2 reports show PINs only when an admin names them: left out of a default output, refused to other roles, stripped from what they view", async () => {
    const { server, as } = await serve();
    const R = "/reports/holders";
    try {
      for (const token of [ADMIN, INTEGRATOR, DEFAULT_MANAGER, REPORTER]) {
        const all = await as(token, "POST", `${R}/preview`);
        expect(all.status, token).toBe(200);
        expect(Object.keys(all.body[0]), token).not.toContain("pin");
        expect(Object.keys(all.body[0]), token).not.toContain("duressPin");
        for (const secret of SECRETS)
          expect(all.text.includes(secret), `${token}: default preview holds a PIN`).toBe(false);
      }
      for (const token of [INTEGRATOR, DEFAULT_MANAGER, REPORTER]) {
        for (const route of ["preview", "generate"]) {
          const r = await as(token, "POST", `${R}/${route}`, { output: ["id", "pin", "duressPin"] });
          expect(expectError(r, 403, `${token} ${route}`).map((i) => i.path)).toEqual([
            "body.output.1",
            "body.output.2",
          ]);
        }
      }
      const admin = await as(ADMIN, "POST", `${R}/preview`, {
        filters: [{ type: "lastName", operator: "equals", operand: "Lee" }],
        output: ["id", "pin", "duressPin"],
      });
      expect(admin.body).toEqual([{ id: "h-ann", pin: "1234", duressPin: "9999" }]);
      // An admin's stored report with PINs: the integrator (who sees every report) views it without them.
      expect((await as(ADMIN, "POST", `${R}/generate`, { output: ["id", "pin", "duressPin"] })).status).toBe(204);
      await server.reports?.settled?.();
      let list = await as(ADMIN, "GET", `${R}/requests`);
      for (let i = 0; i < 100 && list.body[0].status === "pending"; i++) {
        await new Promise((r) => setTimeout(r, 20));
        list = await as(ADMIN, "GET", `${R}/requests`);
      }
      const id = list.body[0].id;
      const mine = await as(ADMIN, "GET", `${R}/requests/${id}/view`);
      expect(mine.body.find((x: { id: string }) => x.id === "h-ann")).toEqual({
        id: "h-ann",
        pin: "1234",
        duressPin: "9999",
      });
      const theirs = await as(INTEGRATOR, "GET", `${R}/requests/${id}/view`);
      expect(theirs.status).toBe(200);
      expect(theirs.body.find((x: { id: string }) => x.id === "h-ann")).toEqual({ id: "h-ann" });
      for (const secret of SECRETS) expect(theirs.text.includes(secret)).toBe(false);
      // As a template, it is an admin's only.
      expect(
        expectError(await as(INTEGRATOR, "POST", `${R}/preview`, { reportId: id }), 403, "integrator template").map(
          (i) => i.path,
        ),
      ).toEqual(["body.reportId", "body.reportId"]);
    } finally {
      await server.close();
    }
  });
});

describe("HS3 RSOP answers to a manager or reporter name only groups and rules of its partitions", () => {
  const check = (body: any) => {
    const bob = body.holders.find((h: { id: string }) => h.id === "h-bob");
    expect(bob.groups.map((g: { id: string }) => g.id)).toEqual(["g-staff"]);
    expect(bob.rules.map((r: { id: string }) => r.id)).toEqual(["r-staff-door"]);
    // f-low is opened by r-night-lift (g-night, p-east): still allowed, its rule not named.
    const low = bob.floorGroups.find((f: { id: string }) => f.id === "f-low");
    expect(low).toMatchObject({ allowed: true, activeRuleId: null });
    expect(JSON.stringify(body).includes("g-night")).toBe(false);
    expect(JSON.stringify(body).includes("r-night-lift")).toBe(false);
  };

  test("HS3 with --data: a manager's and a reporter's RSOP of h-bob leave out g-night and r-night-lift; an admin's names them", async () => {
    const { server, as } = await serve();
    try {
      const path = `/rsop/holders?ids=h-bob&at=${AT}`;
      for (const token of [DEFAULT_MANAGER, REPORTER]) {
        const r = await as(token, "GET", path);
        expect(r.status, token).toBe(200);
        check(r.body);
        const node = await as(token, "GET", `/cloud-nodes/n-main${path}`);
        expect(node.status).toBe(200);
        check(node.body);
      }
      const admin = (await as(ADMIN, "GET", path)).body.holders[0];
      expect(admin.groups.map((g: { id: string }) => g.id).sort()).toEqual(["g-night", "g-staff"]);
      expect(admin.rules.map((r: { id: string }) => r.id)).toContain("r-night-lift");
      expect(admin.floorGroups.find((f: { id: string }) => f.id === "f-low").activeRuleId).toBe("r-night-lift");
    } finally {
      await server.close();
    }
  });

  test("HS3 in the read-only file mode alike", async () => {
    const { dir } = dataDir();
    const file = `${dir}/hs-building.json`;
    writeFileSync(file, JSON.stringify(system()));
    const server = await startServer({
      systemFile: file,
      tokens: { file: "tokens.json", entries: entries(TOKENS) },
      token: TOKEN,
      log: () => {},
      reloadWorker: false,
    });
    try {
      const as = asOf(server.url);
      for (const token of [DEFAULT_MANAGER, REPORTER]) {
        const r = await as(token, "GET", `/rsop/holders?ids=h-bob&at=${AT}`);
        expect(r.status, token).toBe(200);
        check(r.body);
      }
      const admin = await as(ADMIN, "GET", `/rsop/holders?ids=h-bob&at=${AT}`);
      expect(admin.body.holders[0].rules.map((r: { id: string }) => r.id)).toContain("r-night-lift");
    } finally {
      await server.close();
    }
  });
});

/** A route pattern with each `:param` filled (the query is checked before any id is looked up). */
const fill = (pattern: string, id: string) => pattern.replace(/:[A-Za-z]+/g, id);

describe("HS4 a query parameter a route does not take is a 400 naming it", () => {
  test("HS4 GET /holders?ids=x and /rules?search=x are refused, not answered with every holder and rule (issue row 12)", async () => {
    const { server, as } = await serve();
    try {
      const h = await as(ADMIN, "GET", "/holders?ids=h-ann");
      expect(expectError(h, 400, "holders ids")).toEqual([
        {
          path: "query.ids",
          message: "Unknown query parameter: this route takes search, search_fields, include, page and per_page.",
        },
      ]);
      const r = await as(ADMIN, "GET", "/rules?search=staff");
      expect(expectError(r, 400, "rules search")).toEqual([
        { path: "query.search", message: "Unknown query parameter: this route takes page and per_page." },
      ]);
      // Given twice, a parameter is refused too: the second would be silently ignored.
      const twice = await as(ADMIN, "GET", "/groups?ids=g-staff&ids=g-night");
      expect(expectError(twice, 400, "ids twice").map((i) => i.path)).toEqual(["query.ids"]);
      expect(
        expectError(await as(ADMIN, "GET", `/rsop/holders?ids=h-ann&ids=h-bob`), 400, "rsop ids twice").map(
          (i) => i.path,
        ),
      ).toEqual(["query.ids"]);
      // What each route does take still answers.
      expect(ids(await as(ADMIN, "GET", "/groups?ids=g-staff&search=sta&include=rules&page=0&per_page=5"))).toEqual([
        "g-staff",
      ]);
      expect((await as(ADMIN, "GET", "/cloud-nodes/n-main/devices/d-front?include=connection")).status).toBe(200);
      // A manager's or reporter's view is checked the same way.
      expect(
        expectError(await as(REPORTER, "GET", "/holders?ids=h-ann"), 400, "reporter ids").map((i) => i.path),
      ).toEqual(["query.ids"]);
    } finally {
      await server.close();
    }
  });

  test("HS4 every 2.0 read route and the report routes refuse an unknown parameter at query.<name>", async () => {
    const { server, as } = await serve();
    try {
      const gets = routePatterns()
        .filter(([m]) => m === "GET")
        .map(([, p]) => p);
      expect(gets.length).toBeGreaterThan(25);
      for (const pattern of gets) {
        for (const token of [ADMIN, DEFAULT_MANAGER]) {
          const path = `${fill(pattern, "x")}?bogus=1${pattern.includes("rsop") ? "&ids=h-ann" : ""}`;
          const r = await as(token, "GET", path);
          expect(
            expectError(r, 400, `${token} GET ${path}`).map((i) => i.path),
            path,
          ).toEqual(["query.bogus"]);
        }
      }
      for (const path of [
        "/reports/holders/requests?bogus=1",
        "/reports/holders/requests/x?bogus=1",
        "/reports/holders/requests/x/view?bogus=1",
      ])
        expect(expectError(await as(ADMIN, "GET", path), 400, path).map((i) => i.path)).toEqual(["query.bogus"]);
      expect(
        expectError(await as(ADMIN, "POST", "/reports/holders/preview?output=pin"), 400, "preview query").map(
          (i) => i.path,
        ),
      ).toEqual(["query.output"]);
      expect((await as(ADMIN, "GET", "/reports/holders/requests?page=0&per_page=5")).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  test("HS4 HS5 HS2 the 1.0 panel host: every read route refuses an unknown parameter at query.<name>; a person update with groups is 400; PIN columns are an admin's", async () => {
    const { db } = dataDir();
    const { server } = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
      tokens: {
        file: "tokens.json",
        entries: entries({ [ADMIN]: { role: "admin" }, [INTEGRATOR]: { role: "integrator" } }),
      },
    });
    try {
      const as = asOf(server.url, "");
      const gets = panelRoutePatterns()
        .filter(([m]) => m === "GET")
        .map(([, p]) => p);
      expect(gets.length).toBeGreaterThan(20);
      for (const pattern of gets) {
        const path = `${fill(pattern, "1")}?bogus=1`;
        expect(
          expectError(await as(ADMIN, "GET", path), 400, path).map((i) => i.path),
          path,
        ).toEqual(["query.bogus"]);
      }
      expect(expectError(await as(ADMIN, "GET", "/api/persons?search=Lee"), 400, "persons search")).toEqual([
        { path: "query.search", message: "Unknown query parameter: this route takes page and per_page." },
      ]);
      expect((await as(ADMIN, "GET", "/api/search?q=a")).status).toBe(200);
      expect(
        expectError(await as(ADMIN, "GET", "/api/reports/cloudpeople/requests?bogus=1"), 400, "people reports").map(
          (i) => i.path,
        ),
      ).toEqual(["query.bogus"]);
      const person = {
        firstName: "Ann",
        lastName: "Lee",
        partition: 0,
        enabled: true,
        activeDate: null,
        expireDate: null,
        pin: null,
        duressPin: null,
      };
      const put = await unchanged(
        server,
        () => as(ADMIN, "PUT", "/api/persons/1", { ...person, groups: [] }),
        "person PUT groups",
      );
      expect(expectError(put, 400, "person PUT groups").map((i) => i.path)).toEqual(["body.groups"]);
      const pins = await as(INTEGRATOR, "POST", "/api/reports/cloudpeople/preview", {
        output: ["id", "Pin", "Duress Pin"],
      });
      expect(expectError(pins, 403, "integrator people pins").map((i) => i.path)).toEqual([
        "body.output.1",
        "body.output.2",
      ]);
      const plain = await as(INTEGRATOR, "POST", "/api/reports/cloudpeople/preview");
      expect(plain.status).toBe(200);
      expect(Object.keys(plain.body[0])).not.toContain("Pin");
      expect((await as(ADMIN, "POST", "/api/reports/cloudpeople/preview", { output: ["id", "Pin"] })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("HS5 a body field a write route does not take is a 400 at body.<field>", () => {
  test("HS5 PUT /holders/{id} with groups is refused at body.groups and the groups stay as they were (issue row 13)", async () => {
    const { server, as } = await serve();
    try {
      const holder = {
        firstName: "Ann",
        lastName: "Lee",
        partition: null,
        enabled: true,
        activeDate: null,
        expireDate: null,
        pin: "1234",
        duressPin: "9999",
      };
      const r = await unchanged(
        server,
        () => as(ADMIN, "PUT", "/holders/h-ann", { ...holder, groups: ["g-night"] }),
        "PUT groups",
      );
      const issues = expectError(r, 400, "PUT groups");
      expect(issues.map((i) => i.path)).toEqual(["body.groups"]);
      expect(issues[0]!.message).toMatch(/PUT \/holders\/\{holder_id\}\/groups/);
      expect((await as(ADMIN, "GET", "/holders/h-ann")).body.groups.map((g: { id: string }) => g.id)).toEqual([
        "g-staff",
      ]);
      // A read-modify-write of the whole holder names every field the update does not take.
      const whole = (await as(ADMIN, "GET", "/holders/h-ann")).body;
      const all = await unchanged(server, () => as(ADMIN, "PUT", "/holders/h-ann", whole), "PUT whole holder");
      expect(
        expectError(all, 400, "PUT whole holder")
          .map((i) => i.path)
          .sort(),
      ).toEqual(["body.credentials", "body.groups", "body.id", "body.photoUrl"]);
      expect((await as(ADMIN, "PUT", "/holders/h-ann", holder)).status).toBe(204);
    } finally {
      await server.close();
    }
  });

  test("HS5 other writes whose fields the seed lists: holder, group and rule creates and updates, credential update and activation", async () => {
    const { server, as } = await serve();
    try {
      const rule = {
        type: "door",
        groupId: "g-staff",
        devices: ["d-front"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: WEEK,
      };
      for (const [method, path, body, at] of [
        ["POST", "/holders", { firstName: "Zed", lastName: "Roe", nickname: "Z" }, "body.nickname"],
        ["POST", "/holders", { id: "h-mine", firstName: "Zed", lastName: "Roe" }, "body.id"],
        ["POST", "/groups", { name: "Crew", holders: ["h-ann"] }, "body.holders"],
        ["PUT", "/groups/g-staff", { name: "Staff", partition: "p-default", holders: [] }, "body.holders"],
        ["POST", "/rules", { ...rule, priority: 1 }, "body.priority"],
        ["PUT", "/rules/r-staff-door", { ...rule, id: "r-staff-door" }, "body.id"],
        [
          "PUT",
          "/holders/h-bob/credentials/c-bob-phone",
          { types: ["touch"], description: "New phone" },
          "body.description",
        ],
        ["POST", "/holders/h-cy/credentials", { types: ["card"], credentialNumber: 4242, pin: "1" }, "body.pin"],
      ] as const) {
        const r = await unchanged(server, () => as(ADMIN, method, path, body), `${method} ${path}`);
        expect(
          expectError(r, 400, `${method} ${path}`).map((i) => i.path),
          `${method} ${path}`,
        ).toEqual([at]);
      }
    } finally {
      await server.close();
    }
  });
});
