// Every problem of a write body in one answer (HS6), over real HTTP on a real SQLite file: for every
// write route of the 2.0 and 1.0 route tables (walked, so a new route must be given a case here), a
// body with at least two independent faults in different fields, each reported at its path in one
// 400. Then one rule for unknown ids in a replace-all list (L22, LP7), a malformed JSON body's one
// issue at `body` (HJ4), and 1.0 ids that are never given twice, across a restart (LP1).
import { afterAll, describe, expect, test } from "vitest";
import { routePatterns } from "../../src/live/routes.js";
import { panelRoutePatterns } from "../../src/legacy1/live/panelRoutes.js";
import { building } from "../live/fixture.js";
import { smallPanel } from "../live/panelFixture.js";
import { caller, dataDir, expectError, startData, unchanged } from "./dataSupport.js";
import { removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

/** A request with several independent faults, and the path of each fault (as the error shape writes it). */
interface Faulty {
  readonly path: string;
  readonly body: unknown;
  readonly paths: readonly string[];
}

/** Write routes that take no body: nothing to be wrong in it. */
const NO_BODY = new Set([
  "DELETE /holders/:holderId",
  "DELETE /holders/:holderId/credentials/:credentialId",
  "POST /holders/:holderId/credentials/:credentialId/reset",
  "DELETE /groups/:groupId",
  "PUT /holders/:holderId/groups/:groupId",
  "DELETE /holders/:holderId/groups/:groupId",
  "DELETE /rules/:ruleId",
  "DELETE /calendars/:calendarId",
  "DELETE /areas/:areaId",
  "DELETE /cloud-nodes/:cloudNodeId",
  "DELETE /cloud-nodes/:cloudNodeId/connections/:connectionId",
  "DELETE /cloud-nodes/:cloudNodeId/devices/:deviceId",
  "DELETE /partitions/:partitionId",
  "DELETE /partitions/:partitionId/devices/:deviceId",
  "DELETE /partitions/:partitionId/custom-fields/:customFieldId",
  "DELETE /floor_groups/:floorGroupId",
  "DELETE /api/persons/:personId",
  "DELETE /api/persons/:personId/credentials/:credentialId",
  "DELETE /api/groups/:groupId",
  "DELETE /api/persons/:personId/groups/:groupId",
  "DELETE /api/devices/:deviceId",
  "DELETE /api/connections/:connectionId",
  "DELETE /api/partitions/:partitionId/attributes/:attributeId",
  "DELETE /api/floor_groups/:floorGroupId",
  "DELETE /api/rules/:ruleId",
]);

const DAYS = ["Mon", "Tue"];

/** 2.0 (the live fixture building): per write route, a body with faults in several fields. */
const SYSTEM_CASES: Readonly<Record<string, Faulty>> = {
  "POST /holders": {
    path: "/holders",
    body: { firstName: 5, lastName: "Lee", pin: "12a", partition: "p-nowhere", groups: ["g-nowhere"] },
    paths: ["body.firstName", "body.pin", "body.partition", "body.groups[0]"],
  },
  "PUT /holders/:holderId": {
    path: "/holders/h-ann",
    body: { firstName: "Ann", lastName: 7, enabled: "yes", photoUrl: "x", partition: null },
    paths: ["body.photoUrl", "body.activeDate", "body.lastName", "body.enabled"],
  },
  "POST /holders/:holderId/credentials": {
    path: "/holders/h-ann/credentials",
    body: { types: ["card"], credentialNumber: -4, facilityCode: "x", colour: "red" },
    paths: ["body.colour", "body.credentialNumber", "body.facilityCode"],
  },
  "PUT /holders/:holderId/credentials/:credentialId": {
    path: "/holders/h-bob/credentials/c-bob-phone",
    body: { types: ["laser"], description: "x" },
    paths: ["body.description", "body.types[0]"],
  },
  "POST /holders/:holderId/credentials/:credentialId/activate": {
    path: "/holders/h-cy/credentials/c-cy-phone/activate",
    body: { credentialNumber: "many", description: "" },
    paths: ["body.credentialNumber", "body.description"],
  },
  "POST /groups": {
    path: "/groups",
    body: { name: 5, partition: "p-nowhere" },
    paths: ["body.name", "body.partition"],
  },
  "PUT /groups/:groupId": {
    path: "/groups/g-staff",
    body: { name: "", partition: "p-nowhere", holders: [] },
    paths: ["body.holders", "body.name", "body.partition"],
  },
  "PUT /groups/:groupId/holders": {
    path: "/groups/g-staff/holders",
    body: { holders: ["h-nowhere", 5, "h-ann", "h-ann"] },
    paths: ["body.holders[0]", "body.holders[1]", "body.holders[3]"],
  },
  "PUT /holders/:holderId/groups": {
    path: "/holders/h-ann/groups",
    body: { groups: ["g-staff", "g-nowhere", 7] },
    paths: ["body.groups[1]", "body.groups[2]"],
  },
  "POST /rules": {
    path: "/rules",
    body: {
      name: "R",
      type: "door",
      groupId: "g-nowhere",
      startTime: "25:00:00",
      stopTime: "18:00:00",
      recurring: DAYS,
      calendar: { id: "cal-nowhere", mode: "exclude" },
    },
    paths: ["body.groupId", "body.startTime", "body.calendar.id"],
  },
  "PUT /rules/:ruleId": {
    path: "/rules/r-staff-door",
    body: {
      name: "R",
      type: "door",
      groupId: "g-staff",
      devices: ["d-nowhere"],
      startTime: "x",
      recurring: ["Someday"],
    },
    paths: ["body.devices[0]", "body.startTime", "body.stopTime", "body.recurring[0]"],
  },
  "POST /calendars": {
    path: "/calendars",
    body: { name: "", dates: ["2026-02-30"], recurring: [{ month: 4, day: 31 }] },
    paths: ["body.name", "body.dates[0]", "body.recurring[0].day"],
  },
  // The path is set once a calendar exists (below).
  "PUT /calendars/:calendarId": {
    path: "/calendars/?",
    body: { name: "C", partition: "p-nowhere", dates: ["2026-1-1"], colour: "red" },
    paths: ["body.partition", "body.dates[0]", "body.colour"],
  },
  "POST /areas": {
    path: "/areas",
    body: { name: "", entries: ["d-nowhere"], occupancyLimit: 0, lastReset: null },
    paths: ["body.name", "body.entries[0]", "body.occupancyLimit", "body.lastReset"],
  },
  // The paths of the area routes are set once an area exists (below).
  "PUT /areas/:areaId": {
    path: "/areas/?",
    body: { name: "A", entries: ["d-front"], antiPassback: { mode: "never", resetSeconds: -1 }, forgiven: {} },
    paths: ["body.antiPassback.mode", "body.antiPassback.resetSeconds", "body.forgiven"],
  },
  "POST /areas/:areaId/reset": {
    path: "/areas/?/reset",
    body: { all: true, at: "now" },
    paths: ["body.all", "body.at"],
  },
  "POST /areas/:areaId/forgive": {
    path: "/areas/?/forgive",
    body: { holderId: 7, at: "now" },
    paths: ["body.holderId", "body.at"],
  },
  "PUT /cloud-nodes/:cloudNodeId/threat-level": {
    path: "/cloud-nodes/n-main/threat-level",
    body: { level: 2.5, reason: "drill" },
    paths: ["body.level", "body.reason"],
  },
  "POST /cloud-nodes": {
    path: "/cloud-nodes",
    body: { name: "", killTimer: 600.5 },
    paths: ["body.name", "body.killTimer"],
  },
  "PUT /cloud-nodes/:cloudNodeId": {
    path: "/cloud-nodes/n-annex",
    body: { name: 5, killTimer: -1 },
    paths: ["body.name", "body.killTimer"],
  },
  "POST /cloud-nodes/:cloudNodeId/connections": {
    path: "/cloud-nodes/n-annex/connections",
    body: { type: "ethernet", port: "x", macaddress: 5 },
    paths: ["body.name", "body.port", "body.macaddress"],
  },
  "PUT /cloud-nodes/:cloudNodeId/connections/:connectionId": {
    path: "/cloud-nodes/n-main/connections/x-usb",
    body: { name: 5, type: "usb", port: "x" },
    paths: ["body.name", "body.port"],
  },
  "POST /cloud-nodes/:cloudNodeId/connections/:connectionId/configure": {
    path: "/cloud-nodes/n-main/connections/x-eth/configure",
    body: { netmask: 5, gateway: 6 },
    paths: ["body.dhcp", "body.netmask", "body.gateway"],
  },
  "POST /cloud-nodes/:cloudNodeId/devices": {
    path: "/cloud-nodes/n-main/devices",
    body: { type: "primaryReader", connection: "x-usb", port: "x", dwell: -5 },
    paths: ["body.name", "body.port", "body.dwell"],
  },
  "PUT /cloud-nodes/:cloudNodeId/devices/:deviceId": {
    path: "/cloud-nodes/n-main/devices/d-lift",
    body: { name: 5, type: "elevatorReader", connection: "x-eth", port: 3, dwell: 0 },
    paths: ["body.name", "body.dwell"],
  },
  "POST /partitions": { path: "/partitions", body: { name: 5, users: "all" }, paths: ["body.name", "body.users"] },
  "PUT /partitions/:partitionId": {
    path: "/partitions/p-east",
    body: { name: "", users: [5] },
    paths: ["body.name", "body.users[0]"],
  },
  "PUT /partitions/:partitionId/devices": {
    path: "/partitions/p-east/devices",
    body: { devices: ["d-nowhere", "d-front", "d-elsewhere"] },
    paths: ["body.devices[0]", "body.devices[2]"],
  },
  "POST /partitions/:partitionId/custom-fields/single": {
    path: "/partitions/p-east/custom-fields/single",
    body: { id: "shoe", type: "colour", required: "yes" },
    paths: ["body.type", "body.required"],
  },
  "POST /partitions/:partitionId/custom-fields/all": {
    path: "/partitions/p-east/custom-fields/all",
    body: [{ id: "a", type: "colour" }, { type: "string" }],
    paths: ["body[0].type", "body[1].id"],
  },
  "PUT /partitions/:partitionId/custom-fields/:customFieldId": {
    path: "/partitions/p-east/custom-fields/badge",
    body: { type: "colour", required: 3 },
    paths: ["body.type", "body.required"],
  },
  "POST /floor_groups": {
    path: "/floor_groups",
    body: { name: 5, readerPort: "d-nowhere", floors: ["d-floor-1"] },
    paths: ["body.name", "body.readerPort"],
  },
  "PUT /floor_groups/:floorGroupId": {
    path: "/floor_groups/f-low",
    body: { name: "", readerPort: "d-lift", floors: ["d-nowhere"], partition: "p-nowhere" },
    paths: ["body.name", "body.floors[0]", "body.partition"],
  },
};

/** 1.0 (the small panel): per write route, a body with faults in several fields. */
const PANEL_CASES: Readonly<Record<string, Faulty>> = {
  "POST /api/persons": {
    path: "/api/persons",
    body: { firstName: 5, pin: "12a", partition: "zero" },
    paths: ["body.lastName", "body.partition", "body.firstName", "body.pin"],
  },
  "PUT /api/persons/:personId": {
    path: "/api/persons/1",
    body: { firstName: "Ann", lastName: 5, groups: [1], partition: 0, enabled: true, activeDate: null },
    paths: ["body.groups", "body.expireDate", "body.lastName"],
  },
  "PUT /api/persons/:personId/photo": {
    path: "/api/persons/1/photo",
    body: { base64: 5 },
    paths: ["body.base64"],
  },
  "POST /api/persons/:personId/credentials": {
    path: "/api/persons/1/credentials",
    body: { types: ["touch"], credentialNumber: 5, description: "x" },
    paths: ["body.credentialNumber", "body.description"],
  },
  "PUT /api/persons/:personId/credentials/:credentialId": {
    path: "/api/persons/2/credentials/2",
    body: { types: ["laser", "card2"] },
    paths: ["body.types[0]", "body.types[1]"],
  },
  "POST /api/persons/:personId/credentials/:credentialId/activate": {
    path: "/api/persons/2/credentials/2/activate",
    body: { credentialNumber: "many", description: "" },
    paths: ["body.credentialNumber", "body.description"],
  },
  "POST /api/groups": {
    path: "/api/groups",
    body: { name: 5, partition: "zero" },
    paths: ["body.name", "body.partition"],
  },
  "PUT /api/groups/:groupId": {
    path: "/api/groups/1",
    body: { name: "", metadata: 5 },
    paths: ["body.partition", "body.name", "body.metadata"],
  },
  "PUT /api/groups/:groupId/persons": {
    path: "/api/groups/1/persons",
    body: { persons: [1, 98, 99] },
    paths: ["body.persons[1]", "body.persons[2]"],
  },
  "PUT /api/persons/:personId/groups": {
    path: "/api/persons/1/groups",
    body: { groups: [97, 1, 99] },
    paths: ["body.groups[0]", "body.groups[2]"],
  },
  "POST /api/devices": {
    path: "/api/devices",
    body: { connection: 1, port: "x", dwell: -5 },
    paths: ["body.name", "body.port", "body.dwell"],
  },
  "PUT /api/devices/:deviceId": {
    path: "/api/devices/3",
    body: { name: 5, connection: 1, port: 3, type: "primaryReader", publicIcon: "swingingDoor", delay: 0, dwell: 0 },
    paths: ["body.dps", "body.name", "body.dwell"],
  },
  "POST /api/connections": {
    path: "/api/connections",
    body: { type: "ethernet", port: "x" },
    paths: ["body.name", "body.port"],
  },
  "PUT /api/connections/:connectionId": {
    path: "/api/connections/1",
    body: { name: 5, type: "usb", port: "x" },
    paths: ["body.name", "body.port"],
  },
  "POST /api/connections/:connectionId/configure": {
    path: "/api/connections/2/configure",
    body: { netmask: 5, gateway: 6 },
    paths: ["body.dhcp", "body.netmask", "body.gateway"],
  },
  "POST /api/partitions/:partitionId/attributes/single": {
    path: "/api/partitions/0/attributes/single",
    body: { id: "shoe", type: "colour", description: "x" },
    paths: ["body.description", "body.type"],
  },
  "POST /api/partitions/:partitionId/attributes/all": {
    path: "/api/partitions/0/attributes/all",
    body: [{ id: "a", type: "colour", description: "x" }, { type: "string" }],
    paths: ["body[0].description", "body[0].type", "body[1].id"],
  },
  "PUT /api/partitions/:partitionId/attributes/:attributeId": {
    path: "/api/partitions/0/attributes/badge",
    body: { type: "colour", regexDescription: "x" },
    paths: ["body.regexDescription", "body.type"],
  },
  "POST /api/floor_groups": {
    path: "/api/floor_groups",
    body: { name: 5, partition: "zero", readerPort: 4, floors: [5] },
    paths: ["body.name", "body.partition"],
  },
  "PUT /api/floor_groups/:floorGroupId": {
    path: "/api/floor_groups/1",
    body: { readerPort: 4, floors: "five" },
    paths: ["body.name", "body.floors"],
  },
  "POST /api/rules": {
    path: "/api/rules",
    body: { groupId: "x", startTime: "9", type: "door", recurring: DAYS },
    paths: ["body.stopTime", "body.groupId", "body.startTime"],
  },
  "PUT /api/rules/:ruleId": {
    path: "/api/rules/1",
    body: { groupId: 1, startTime: "25:00", stopTime: "26:00", type: "door", recurring: DAYS },
    paths: ["body.startTime", "body.stopTime"],
  },
  "PUT /api/config": {
    path: "/api/config",
    body: { timezone: "Mars/Olympus", logPurgeDays: -1, colour: "red" },
    paths: ["body.colour"],
  },
};

/** The write routes of a table, as `METHOD /pattern`. */
function writeRoutes(patterns: readonly [string, string][]): string[] {
  return patterns.filter(([m]) => m !== "GET").map(([m, p]) => `${m} ${p}`);
}

describe("HS6: every write route reports every problem of its body in one answer", () => {
  test("2.0: each write route of the route table, several independent faults each reported at its path", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, building());
    // A pending phone credential for the activate route.
    const made = await call("POST", "/holders/h-cy/credentials", { types: ["touch"] });
    expect(made.status).toBe(201);
    // A custom field of p-east for its update route.
    expect(
      (await call("POST", "/partitions/p-east/custom-fields/single", { id: "badge", type: "string" })).status,
    ).toBe(200);
    // A calendar for its update route.
    const calendar = await call("POST", "/calendars", { name: "Holidays" });
    expect(calendar.status).toBe(201);
    // An area for its routes.
    const area = await call("POST", "/areas", { name: "Lobby", entries: ["d-front"] });
    expect(area.status).toBe(201);
    const atArea = (route: string) => ({
      ...SYSTEM_CASES[route]!,
      path: SYSTEM_CASES[route]!.path.replace("?", area.body.id),
    });
    const cases: Record<string, Faulty> = {
      ...SYSTEM_CASES,
      "PUT /areas/:areaId": atArea("PUT /areas/:areaId"),
      "POST /areas/:areaId/reset": atArea("POST /areas/:areaId/reset"),
      "POST /areas/:areaId/forgive": atArea("POST /areas/:areaId/forgive"),
      "PUT /calendars/:calendarId": {
        ...SYSTEM_CASES["PUT /calendars/:calendarId"]!,
        path: `/calendars/${calendar.body.id}`,
      },
      "POST /holders/:holderId/credentials/:credentialId/activate": {
        ...SYSTEM_CASES["POST /holders/:holderId/credentials/:credentialId/activate"]!,
        path: `/holders/h-cy/credentials/${made.body.id}/activate`,
      },
    };
    for (const route of writeRoutes(routePatterns())) {
      if (NO_BODY.has(route)) continue;
      const c = cases[route];
      expect(c, `${route} has a case with several faults (a new write route needs one here)`).toBeDefined();
      const r = await unchanged(server, () => call(route.split(" ")[0]!, c!.path, c!.body), route);
      const paths = expectError(r, 400, route).map((i) => i.path);
      for (const p of c!.paths) expect(paths, `${route}: ${JSON.stringify(r.body.error.issues)}`).toContain(p);
    }
  });

  test("1.0: each write route of the panel route table, several independent faults each reported at its path", async () => {
    const { db } = dataDir();
    const { server } = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
    });
    const call = caller(server.url, "");
    for (const route of writeRoutes(panelRoutePatterns())) {
      if (NO_BODY.has(route)) continue;
      const c = PANEL_CASES[route];
      expect(c, `${route} has a case with several faults (a new write route needs one here)`).toBeDefined();
      const r = await unchanged(server, () => call(route.split(" ")[0]!, c!.path, c!.body), route);
      const paths = expectError(r, 400, route).map((i) => i.path);
      for (const p of c!.paths) expect(paths, `${route}: ${JSON.stringify(r.body.error.issues)}`).toContain(p);
    }
  });

  test("every route without a body is a write route of one of the tables", () => {
    const all = new Set([...writeRoutes(routePatterns()), ...writeRoutes(panelRoutePatterns())]);
    for (const r of NO_BODY) expect(all.has(r), r).toBe(true);
  });
});

describe("L22, LP7: an unknown id in a replace-all list is 400 on both architectures", () => {
  test("2.0 and 1.0 answer 400 at body.<list>[i] for each unknown id, nothing stored", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, building());
    const two = await unchanged(server, () => call("PUT", "/holders/h-ann/groups", { groups: ["g-nowhere"] }), "2.0");
    expect(expectError(two, 400, "2.0")).toEqual([
      { path: "body.groups[0]", message: 'Names group "g-nowhere", which does not exist.' },
    ]);
    const { db: db1 } = dataDir();
    const panel = await startData(db1, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
    });
    const one = await unchanged(
      panel.server,
      () => caller(panel.server.url, "")("PUT", "/api/persons/1/groups", { groups: [1, 99] }),
      "1.0",
    );
    expect(expectError(one, 400, "1.0")).toEqual([
      { path: "body.groups[1]", message: "Names group 99, which does not exist." },
    ]);
  });
});

describe("HJ4: a malformed JSON body names one problem at `body`", () => {
  test("its position and what was expected, never the body's text", async () => {
    const { db } = dataDir();
    const { call } = await startData(db, building());
    const r = await call("PUT", "/holders/h-ann", '{\n  "firstName": "Ann",\n  "pin": "739146" "x": 1\n}');
    const issues = expectError(r, 400, "malformed");
    expect(issues).toEqual([
      { path: "body", message: "Is not valid JSON: at line 3, column 19, expected ',' or '}' after a property value." },
    ]);
    expect(JSON.stringify(r.body)).not.toContain("739146");
  });
});

describe("LP1: a 1.0 id is never given twice", () => {
  test("a create after deleting the largest id takes the next one, also after a restart", async () => {
    const { db } = dataDir();
    const first = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
    });
    let call = caller(first.server.url, "");
    expect((await call("DELETE", "/api/persons/2")).status).toBe(204);
    const made = await call("POST", "/api/persons", { firstName: "Dee", lastName: "Ng" });
    expect(made.body).toEqual({ id: 3 });
    expect((await call("DELETE", "/api/persons/3")).status).toBe(204);
    expect((await call("DELETE", "/api/groups/2")).status).toBe(204);
    await first.server.close();
    const again = await startData(db);
    call = caller(again.server.url, "");
    expect((await call("POST", "/api/persons", { firstName: "Eve", lastName: "Ng" })).body).toEqual({ id: 4 });
    expect((await call("POST", "/api/groups", { name: "Later" })).body).toEqual({ id: 3 });
    // A person's credentials are deleted with it: their ids are not given again either (person 2 held credential 2).
    expect((await call("POST", "/api/persons/1/credentials", { types: ["touch"] })).body).toEqual({ id: 3 });
  });
});
