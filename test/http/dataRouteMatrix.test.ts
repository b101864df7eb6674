// Issue 14 acceptance: every route of the systems host (seed 001 §4, with the ★ rules and activation
// routes, decisions and who-can-access) over real HTTP on a real SQLite file, for each role — admin,
// integrator, manager, reporter, and no token — and bad input on every write route, with nothing
// stored on any 4xx (the change log's sequence and the snapshot object compared before and after;
// after the server closes, the database's rows are compared with what the test saw acknowledged).
//
// Each case makes its own fresh targets (through an admin's calls) for each role, so that a write
// accepted for one role does not take the target of the next. The manager and the reporter have the
// default partition `p-default`; targets of their writes are in it, and the fixture's `p-east`
// entities (h-cy, g-night, r-night-lift) stand for what is outside their view.
import { afterAll, describe, expect, test } from "vitest";
import type { RunningDataServer } from "../../src/adapters/http/startDataServer.js";
import { parseTokens } from "../../src/service/auth/tokens.js";
import { building } from "../live/fixture.js";
import {
  type Answer,
  type Maker,
  SYSTEM_ID,
  dataDir,
  expectError,
  inspect,
  makerOf,
  startData,
  unchanged,
} from "./dataSupport.js";
import { TOKEN, removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

const TOKENS = {
  admin: "matrix-admin-token-aaaaaaaa",
  integrator: "matrix-integrator-token-bbbbbbbb",
  manager: "matrix-manager-token-cccccccc",
  reporter: "matrix-reporter-token-dddddddd",
} as const;
type Role = keyof typeof TOKENS;
const ROLES = Object.keys(TOKENS) as Role[];
const TOKENS_JSON = {
  [TOKENS.admin]: { role: "admin" },
  [TOKENS.integrator]: { role: "integrator" },
  [TOKENS.manager]: { role: "manager", partitions: ["p-default"] },
  [TOKENS.reporter]: { role: "reporter", partitions: ["p-default"] },
};
const WEEK = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const AT = "2026-04-15T12:00:00Z";

type Send = (token: string | null, method: string, path: string, body?: unknown) => Promise<Answer>;

interface Request {
  readonly path: string;
  readonly body?: unknown;
}

type Expect = number | "ok";

interface Case {
  /** The seed's route, for the test's name. */
  readonly route: string;
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  /** The request for one role, on fresh targets. */
  readonly make: (m: Maker) => Promise<Request>;
  /** The status of an admin's or integrator's request. */
  readonly status: number;
  /** What the answer's body is: `{id}`, nothing, a JSON array or a JSON object. */
  readonly answer: "id" | "none" | "array" | "object";
  /** A paginated list: `X-Total-Count` and `Link` on every answer. */
  readonly paged?: boolean;
  /** A manager's and a reporter's status ("ok": as the admin's). */
  readonly manager: Expect;
  readonly reporter: Expect;
  /** The same route on a target outside the manager's and reporter's partitions: 404 for them. */
  readonly outside?: string;
  /** Bad input (admin): its status and the path of one issue it must name. */
  readonly bad?: (m: Maker) => Promise<Request & { status: number; issue: string }>;
}

const holderBody = (n: number, extra: Record<string, unknown> = {}) => ({
  firstName: `Matrix${n}`,
  lastName: `Holder${n}`,
  partition: "p-default",
  ...extra,
});
const ruleBody = (groupId: string) => ({
  type: "door",
  groupId,
  devices: ["d-front"],
  startTime: "08:00:00",
  stopTime: "18:00:00",
  recurring: WEEK,
});
const holderPut = (n: number) => ({
  ...holderBody(n),
  lastName: `Renamed${n}`,
  enabled: true,
  activeDate: null,
  expireDate: null,
  pin: null,
  duressPin: null,
});

const newHolder = async (m: Maker) => (await m.ok("POST", "/holders", holderBody(m.n()))).id as string;
const newGroup = async (m: Maker) =>
  (await m.ok("POST", "/groups", { name: `Matrix group ${m.n()}`, partition: "p-default" })).id as string;
const newCard = async (m: Maker, h: string) =>
  (
    await m.ok("POST", `/holders/${h}/credentials`, {
      types: ["card"],
      credentialNumber: 50_000 + m.n(),
      facilityCode: 10,
    })
  ).id as string;
const newPhone = async (m: Maker, h: string) =>
  (await m.ok("POST", `/holders/${h}/credentials`, { types: ["touch"] })).id as string;
const newRule = async (m: Maker) => (await m.ok("POST", "/rules", ruleBody(await newGroup(m)))).id as string;
const newCalendar = async (m: Maker) =>
  (await m.ok("POST", "/calendars", { name: `Matrix calendar ${m.n()}`, dates: ["2026-12-25"] })).id as string;
const areaBody = (n: number) => ({ name: `Matrix area ${n}`, entries: ["d-front"], exits: ["d-front-out"] });
const newArea = async (m: Maker) => (await m.ok("POST", "/areas", areaBody(m.n()))).id as string;
const newNode = async (m: Maker) => (await m.ok("POST", "/cloud-nodes", { name: `Matrix node ${m.n()}` })).id as string;
const connectionBody = (n: number) => ({
  name: `Matrix board ${n}`,
  type: "ethernet",
  ipaddress: `10.9.${n % 250}.${1 + (n % 200)}`,
  port: 4000 + n,
  protocol: "IPv4",
  manufacturer: "VENDOR_A",
});
const newConnection = async (m: Maker, node = "n-main") =>
  (await m.ok("POST", `/cloud-nodes/${node}/connections`, connectionBody(m.n()))).id as string;
const deviceBody = (n: number, connection: string) => ({
  name: `Matrix door ${n}`,
  type: "primaryReader",
  publicIcon: "swingingDoor",
  connection,
  port: 1,
});
/** A device PUT gives every field of the create body (L1). */
const devicePut = (n: number, connection: string) => ({
  ...deviceBody(n, connection),
  delay: 5,
  dwell: 60,
  dps: true,
  rex: false,
  autoOpenAfterFirstAllow: false,
  authenticationPolicy: null,
});
const newDevice = async (m: Maker) =>
  (await m.ok("POST", "/cloud-nodes/n-main/devices", deviceBody(m.n(), await newConnection(m)))).id as string;
const newPartition = async (m: Maker) =>
  (await m.ok("POST", "/partitions", { name: `Matrix partition ${m.n()}` })).id as string;
const floorGroupBody = (n: number) => ({ name: `Matrix floors ${n}`, readerPort: "d-lift", floors: ["d-floor-1"] });
const newFloorGroup = async (m: Maker) => (await m.ok("POST", "/floor_groups", floorGroupBody(m.n()))).id as string;
const newField = async (m: Maker) =>
  (await m.ok("POST", "/partitions/p-default/custom-fields/single", { id: `field${m.n()}`, type: "string" }))
    .id as string;

/** Managed routes: a manager may write them (in its partitions); a reporter never writes. */
const MANAGED = { manager: "ok", reporter: 403 } as const;
/** Routes a manager may not write: cloud nodes, connections, devices, partitions, custom fields, floor groups. */
const ADMINS_ONLY = { manager: 403, reporter: 403 } as const;
/** Reads every role makes. */
const EVERYONE = { manager: "ok", reporter: "ok" } as const;
const at = (r: Request) => async () => r;

const CASES: readonly Case[] = [
  // Holders
  {
    route: "POST /holders",
    method: "POST",
    status: 201,
    answer: "id",
    ...MANAGED,
    make: async (m) => ({ path: "/holders", body: holderBody(m.n()) }),
    bad: async () => ({ path: "/holders", body: { firstName: "" }, status: 400, issue: "body.lastName" }),
  },
  {
    route: "GET /holders",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/holders?include=credentials,groups" }),
  },
  {
    route: "GET /holders/{holder_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    outside: "/holders/h-cy",
    make: async () => ({ path: "/holders/h-ann" }),
  },
  {
    route: "PUT /holders/{holder_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/holders/h-cy",
    make: async (m) => ({ path: `/holders/${await newHolder(m)}`, body: holderPut(m.n()) }),
    bad: async (m) => ({
      path: `/holders/${await newHolder(m)}`,
      body: { ...holderPut(m.n()), enabled: "yes" },
      status: 400,
      issue: "body.enabled",
    }),
  },
  {
    route: "DELETE /holders/{holder_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/holders/h-cy",
    make: async (m) => ({ path: `/holders/${await newHolder(m)}` }),
    bad: async () => ({ path: "/holders/h-nope", status: 404, issue: "(root)" }),
  },
  // Credentials
  {
    route: "POST /holders/{holder_id}/credentials",
    method: "POST",
    status: 201,
    answer: "id",
    ...MANAGED,
    outside: "/holders/h-cy/credentials",
    make: async (m) => ({
      path: `/holders/${await newHolder(m)}/credentials`,
      body: { types: ["card"], credentialNumber: 60_000 + m.n(), facilityCode: 10 },
    }),
    bad: async (m) => ({
      path: `/holders/${await newHolder(m)}/credentials`,
      body: { types: ["card"], credentialNumber: -1 },
      status: 400,
      issue: "body.credentialNumber",
    }),
  },
  {
    route: "GET /holders/{holder_id}/credentials",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    outside: "/holders/h-cy/credentials",
    make: at({ path: "/holders/h-bob/credentials" }),
  },
  {
    route: "GET /holders/{holder_id}/credentials/{credential_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    make: at({ path: "/holders/h-ann/credentials/c-ann" }),
  },
  {
    route: "PUT /holders/{holder_id}/credentials/{credential_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...MANAGED,
    make: async (m) => {
      const h = await newHolder(m);
      return { path: `/holders/${h}/credentials/${await newPhone(m, h)}`, body: { types: ["token"] } };
    },
    bad: async (m) => {
      const h = await newHolder(m);
      return {
        path: `/holders/${h}/credentials/${await newPhone(m, h)}`,
        body: { types: ["card"] },
        status: 400,
        issue: "body.types[0]",
      };
    },
  },
  {
    route: "DELETE /holders/{holder_id}/credentials/{credential_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...MANAGED,
    make: async (m) => {
      const h = await newHolder(m);
      return { path: `/holders/${h}/credentials/${await newCard(m, h)}` };
    },
    bad: async (m) => ({ path: `/holders/${await newHolder(m)}/credentials/c-nope`, status: 404, issue: "(root)" }),
  },
  {
    route: "★ POST /holders/{holder_id}/credentials/{credential_id}/activate",
    method: "POST",
    status: 204,
    answer: "none",
    ...MANAGED,
    make: async (m) => {
      const h = await newHolder(m);
      return {
        path: `/holders/${h}/credentials/${await newPhone(m, h)}/activate`,
        body: { credentialNumber: 70_000 + m.n(), description: "Pixel 9" },
      };
    },
    bad: async (m) => {
      const h = await newHolder(m);
      return {
        path: `/holders/${h}/credentials/${await newPhone(m, h)}/activate`,
        body: { credentialNumber: 70_000 + m.n() },
        status: 400,
        issue: "body.description",
      };
    },
  },
  {
    route: "★ POST /holders/{holder_id}/credentials/{credential_id}/reset",
    method: "POST",
    status: 204,
    answer: "none",
    ...MANAGED,
    make: async (m) => {
      const h = await newHolder(m);
      return { path: `/holders/${h}/credentials/${await newPhone(m, h)}/reset` };
    },
    bad: async (m) => {
      const h = await newHolder(m);
      return { path: `/holders/${h}/credentials/${await newCard(m, h)}/reset`, status: 409, issue: "(root)" };
    },
  },
  {
    route: "GET /credentials",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/credentials" }),
  },
  {
    route: "GET /credentials/facility-codes",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/credentials/facility-codes" }),
  },
  // Groups and memberships
  {
    route: "POST /groups",
    method: "POST",
    status: 200,
    answer: "id",
    ...MANAGED,
    make: async (m) => ({ path: "/groups", body: { name: `Matrix new group ${m.n()}`, partition: "p-default" } }),
    bad: async () => ({ path: "/groups", body: { name: "x".repeat(71) }, status: 400, issue: "body.name" }),
  },
  {
    route: "GET /groups",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/groups?include=holders,partition,rules" }),
  },
  {
    route: "GET /groups/{group_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    outside: "/groups/g-night",
    make: at({ path: "/groups/g-staff" }),
  },
  {
    route: "PUT /groups/{group_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/groups/g-night",
    make: async (m) => ({
      path: `/groups/${await newGroup(m)}`,
      body: { name: `Matrix renamed ${m.n()}`, partition: "p-default" },
    }),
    bad: async (m) => ({
      path: `/groups/${await newGroup(m)}`,
      body: { name: `Matrix renamed ${m.n()}` },
      status: 400,
      issue: "body.partition",
    }),
  },
  {
    route: "DELETE /groups/{group_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/groups/g-night",
    make: async (m) => ({ path: `/groups/${await newGroup(m)}` }),
    bad: async () => ({ path: "/groups/g-staff", status: 409, issue: "rules[0].groupId" }),
  },
  {
    route: "GET /groups/{group_id}/holders",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    outside: "/groups/g-night/holders",
    make: at({ path: "/groups/g-staff/holders" }),
  },
  {
    route: "PUT /groups/{group_id}/holders",
    method: "PUT",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/groups/g-night/holders",
    make: async (m) => ({ path: `/groups/${await newGroup(m)}/holders`, body: { holders: [await newHolder(m)] } }),
    bad: async (m) => ({
      path: `/groups/${await newGroup(m)}/holders`,
      body: { holders: ["h-nope"] },
      status: 400,
      issue: "body.holders[0]",
    }),
  },
  {
    route: "GET /holders/{holder_id}/groups",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    outside: "/holders/h-cy/groups",
    make: at({ path: "/holders/h-bob/groups" }),
  },
  {
    route: "PUT /holders/{holder_id}/groups",
    method: "PUT",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/holders/h-cy/groups",
    make: async (m) => ({ path: `/holders/${await newHolder(m)}/groups`, body: { groups: [await newGroup(m)] } }),
    bad: async (m) => ({
      path: `/holders/${await newHolder(m)}/groups`,
      body: { groups: "g-staff" },
      status: 400,
      issue: "body.groups",
    }),
  },
  {
    route: "PUT /holders/{holder_id}/groups/{group_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/holders/h-cy/groups/g-staff",
    make: async (m) => ({ path: `/holders/${await newHolder(m)}/groups/${await newGroup(m)}` }),
    bad: async (m) => ({ path: `/holders/${await newHolder(m)}/groups/g-nope`, status: 404, issue: "(root)" }),
  },
  {
    route: "DELETE /holders/{holder_id}/groups/{group_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/holders/h-cy/groups/g-empty",
    make: async (m) => {
      const h = await newHolder(m);
      const g = await newGroup(m);
      await m.ok("PUT", `/holders/${h}/groups/${g}`);
      return { path: `/holders/${h}/groups/${g}` };
    },
    bad: async (m) => ({ path: `/holders/${await newHolder(m)}/groups/g-staff`, status: 404, issue: "(root)" }),
  },
  // ★ Rules
  {
    route: "★ POST /rules",
    method: "POST",
    status: 201,
    answer: "id",
    ...MANAGED,
    make: async (m) => ({ path: "/rules", body: ruleBody(await newGroup(m)) }),
    bad: async (m) => ({
      path: "/rules",
      body: { ...ruleBody(await newGroup(m)), startTime: "25:00:00" },
      status: 400,
      issue: "body.startTime",
    }),
  },
  {
    route: "★ GET /rules",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/rules" }),
  },
  {
    route: "★ GET /rules/{rule_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    outside: "/rules/r-night-lift",
    make: at({ path: "/rules/r-staff-door" }),
  },
  {
    route: "★ PUT /rules/{rule_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/rules/r-night-lift",
    make: async (m) => {
      const g = await newGroup(m);
      const r = (await m.ok("POST", "/rules", ruleBody(g))).id;
      return { path: `/rules/${r}`, body: { ...ruleBody(g), allow: false } };
    },
    bad: async (m) => ({
      path: `/rules/${await newRule(m)}`,
      body: { ...ruleBody("g-staff"), devices: ["d-nope"] },
      status: 400,
      issue: "body.devices[0]",
    }),
  },
  {
    route: "★ DELETE /rules/{rule_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...MANAGED,
    outside: "/rules/r-night-lift",
    make: async (m) => ({ path: `/rules/${await newRule(m)}` }),
    bad: async () => ({ path: "/rules/r-nope", status: 404, issue: "(root)" }),
  },
  // ★ Calendars (docs/semantics.md C7): written by admins and integrators, read by everyone.
  {
    route: "★ POST /calendars",
    method: "POST",
    status: 201,
    answer: "id",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: "/calendars", body: { name: `Matrix calendar ${m.n()}`, dates: ["2026-12-25"] } }),
    bad: async () => ({
      path: "/calendars",
      body: { name: "C", dates: ["2026-02-30"] },
      status: 400,
      issue: "body.dates[0]",
    }),
  },
  {
    route: "★ GET /calendars",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/calendars" }),
  },
  {
    route: "★ GET /calendars/{calendar_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    make: async (m) => ({ path: `/calendars/${await newCalendar(m)}` }),
  },
  {
    route: "★ PUT /calendars/{calendar_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/calendars/${await newCalendar(m)}`, body: { name: `Matrix renamed ${m.n()}` } }),
    bad: async (m) => ({
      path: `/calendars/${await newCalendar(m)}`,
      body: { name: "C", recurring: [{ month: 2, day: 30 }] },
      status: 400,
      issue: "body.recurring[0].day",
    }),
  },
  {
    route: "★ DELETE /calendars/{calendar_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/calendars/${await newCalendar(m)}` }),
    bad: async () => ({ path: "/calendars/c-nope", status: 404, issue: "(root)" }),
  },
  // ★ Areas (docs/semantics.md AB1, AB6): written by admins and integrators, read by everyone.
  {
    route: "★ POST /areas",
    method: "POST",
    status: 201,
    answer: "id",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: "/areas", body: areaBody(m.n()) }),
    bad: async () => ({
      path: "/areas",
      body: { name: "A", entries: ["d-nope"] },
      status: 400,
      issue: "body.entries[0]",
    }),
  },
  {
    route: "★ GET /areas",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/areas" }),
  },
  {
    route: "★ GET /areas/{area_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    make: async (m) => ({ path: `/areas/${await newArea(m)}` }),
  },
  {
    route: "★ PUT /areas/{area_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/areas/${await newArea(m)}`, body: areaBody(m.n()) }),
    bad: async (m) => ({
      path: `/areas/${await newArea(m)}`,
      body: { ...areaBody(m.n()), lastReset: null },
      status: 400,
      issue: "body.lastReset",
    }),
  },
  {
    route: "★ DELETE /areas/{area_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/areas/${await newArea(m)}` }),
    bad: async () => ({ path: "/areas/a-nope", status: 404, issue: "(root)" }),
  },
  {
    route: "★ POST /areas/{area_id}/reset",
    method: "POST",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/areas/${await newArea(m)}/reset` }),
    bad: async (m) => ({
      path: `/areas/${await newArea(m)}/reset`,
      body: { all: true },
      status: 400,
      issue: "body.all",
    }),
  },
  {
    route: "★ POST /areas/{area_id}/forgive",
    method: "POST",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/areas/${await newArea(m)}/forgive`, body: { holderId: "h-ann" } }),
    bad: async (m) => ({ path: `/areas/${await newArea(m)}/forgive`, body: {}, status: 400, issue: "body.holderId" }),
  },
  // Cloud nodes
  {
    route: "POST /cloud-nodes",
    method: "POST",
    status: 201,
    answer: "id",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: "/cloud-nodes", body: { name: `Matrix new node ${m.n()}` } }),
    bad: async () => ({
      path: "/cloud-nodes",
      body: { name: "Bad", killTimer: 10 },
      status: 400,
      issue: "body.killTimer",
    }),
  },
  {
    route: "GET /cloud-nodes",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/cloud-nodes" }),
  },
  {
    route: "GET /cloud-nodes/{cloud_node_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    make: at({ path: "/cloud-nodes/n-main" }),
  },
  {
    route: "PUT /cloud-nodes/{cloud_node_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/cloud-nodes/${await newNode(m)}`, body: { name: `Matrix renamed node ${m.n()}` } }),
    bad: async (m) => ({
      path: `/cloud-nodes/${await newNode(m)}`,
      body: { name: "Bad", offlinePolicy: 7 },
      status: 400,
      issue: "body.offlinePolicy",
    }),
  },
  {
    route: "DELETE /cloud-nodes/{cloud_node_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/cloud-nodes/${await newNode(m)}` }),
    bad: async () => ({ path: "/cloud-nodes/n-main", status: 409, issue: "connections[0].cloudNode" }),
  },
  {
    route: "★ PUT /cloud-nodes/{cloud_node_id}/threat-level",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/cloud-nodes/${await newNode(m)}/threat-level`, body: { level: 1 + (m.n() % 255) } }),
    bad: async (m) => ({
      path: `/cloud-nodes/${await newNode(m)}/threat-level`,
      body: { level: 300 },
      status: 400,
      issue: "body.level",
    }),
  },
  {
    route: "GET /cloud-nodes/{cloud_node_id}/hardware",
    method: "GET",
    status: 501,
    answer: "object",
    manager: 501,
    reporter: 501,
    make: at({ path: "/cloud-nodes/n-main/hardware" }),
  },
  // Connections
  {
    route: "POST /cloud-nodes/{cloud_node_id}/connections",
    method: "POST",
    status: 200,
    answer: "id",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: "/cloud-nodes/n-annex/connections", body: connectionBody(m.n()) }),
    bad: async () => ({
      path: "/cloud-nodes/n-annex/connections",
      body: { name: "Bad", type: "serial" },
      status: 400,
      issue: "body.type",
    }),
  },
  {
    route: "GET /cloud-nodes/{cloud_node_id}/connections/{connection_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    make: at({ path: "/cloud-nodes/n-main/connections/x-eth" }),
  },
  {
    route: "PUT /cloud-nodes/{cloud_node_id}/connections/{connection_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({
      path: `/cloud-nodes/n-main/connections/${await newConnection(m)}`,
      body: connectionBody(m.n()),
    }),
    bad: async (m) => ({
      path: `/cloud-nodes/n-main/connections/${await newConnection(m)}`,
      body: { ...connectionBody(m.n()), manufacturer: "VENDOR_Z" },
      status: 400,
      issue: "body.manufacturer",
    }),
  },
  {
    route: "DELETE /cloud-nodes/{cloud_node_id}/connections/{connection_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/cloud-nodes/n-main/connections/${await newConnection(m)}` }),
    bad: async () => ({ path: "/cloud-nodes/n-main/connections/x-eth", status: 409, issue: "devices[0].connection" }),
  },
  {
    route: "POST /cloud-nodes/{cloud_node_id}/connections/{connection_id}/configure",
    method: "POST",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({
      path: `/cloud-nodes/n-main/connections/${await newConnection(m)}/configure`,
      body: { dhcp: false, netmask: "255.255.255.0", gateway: "10.9.0.1", dns: "10.9.0.2" },
    }),
    bad: async (m) => ({
      path: `/cloud-nodes/n-main/connections/${await newConnection(m)}/configure`,
      body: { dhcp: "no" },
      status: 400,
      issue: "body.dhcp",
    }),
  },
  {
    route: "GET /connections",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/connections" }),
  },
  {
    route: "GET /cloud-nodes/{cloud_node_id}/diagnostics/wireless",
    method: "GET",
    status: 501,
    answer: "object",
    manager: 501,
    reporter: 501,
    make: at({ path: "/cloud-nodes/n-main/diagnostics/wireless" }),
  },
  // Devices
  {
    route: "POST /cloud-nodes/{cloud_node_id}/devices",
    method: "POST",
    status: 200,
    answer: "id",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: "/cloud-nodes/n-main/devices", body: deviceBody(m.n(), await newConnection(m)) }),
    bad: async (m) => ({
      path: "/cloud-nodes/n-main/devices",
      body: { ...deviceBody(m.n(), await newConnection(m)), delay: 10_000 },
      status: 400,
      issue: "body.delay",
    }),
  },
  {
    route: "GET /cloud-nodes/{cloud_node_id}/devices/{device_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    make: at({ path: "/cloud-nodes/n-main/devices/d-front" }),
  },
  {
    route: "PUT /cloud-nodes/{cloud_node_id}/devices/{device_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => {
      const c = await newConnection(m);
      const d = (await m.ok("POST", "/cloud-nodes/n-main/devices", deviceBody(m.n(), c))).id;
      return { path: `/cloud-nodes/n-main/devices/${d}`, body: devicePut(m.n(), c) };
    },
    bad: async (m) => {
      const c = await newConnection(m);
      const d = (await m.ok("POST", "/cloud-nodes/n-main/devices", deviceBody(m.n(), c))).id;
      return {
        path: `/cloud-nodes/n-main/devices/${d}`,
        body: { ...devicePut(m.n(), c), dwell: 0 },
        status: 400,
        issue: "body.dwell",
      };
    },
  },
  {
    route: "DELETE /cloud-nodes/{cloud_node_id}/devices/{device_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/cloud-nodes/n-main/devices/${await newDevice(m)}` }),
    bad: async () => ({ path: "/cloud-nodes/n-main/devices/d-front", status: 409, issue: "rules[0].devices[0]" }),
  },
  // Partitions
  {
    route: "POST /partitions",
    method: "POST",
    status: 200,
    answer: "id",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: "/partitions", body: { name: `Matrix new partition ${m.n()}` } }),
    bad: async () => ({ path: "/partitions", body: { name: "East Wing" }, status: 409, issue: "body.name" }),
  },
  {
    route: "GET /partitions",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/partitions?include=attributes,devices,users" }),
  },
  {
    route: "GET /partitions/{partition_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    outside: "/partitions/p-east",
    make: at({ path: "/partitions/p-default" }),
  },
  {
    route: "PUT /partitions/{partition_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({
      path: `/partitions/${await newPartition(m)}`,
      body: { name: `Matrix renamed partition ${m.n()}`, users: null },
    }),
    bad: async (m) => ({
      path: `/partitions/${await newPartition(m)}`,
      body: { name: `Matrix renamed partition ${m.n()}` },
      status: 400,
      issue: "body.users",
    }),
  },
  {
    route: "DELETE /partitions/{partition_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/partitions/${await newPartition(m)}` }),
    bad: async () => ({ path: "/partitions/p-default", status: 409, issue: "partitions[0].default" }),
  },
  {
    route: "PUT /partitions/{partition_id}/devices",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/partitions/${await newPartition(m)}/devices`, body: { devices: ["d-fan"] } }),
    bad: async (m) => ({
      path: `/partitions/${await newPartition(m)}/devices`,
      body: { devices: ["d-nope"] },
      status: 400,
      issue: "body.devices[0]",
    }),
  },
  {
    route: "DELETE /partitions/{partition_id}/devices/{device_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => {
      const p = await newPartition(m);
      await m.ok("PUT", `/partitions/${p}/devices`, { devices: ["d-fan"] });
      return { path: `/partitions/${p}/devices/d-fan` };
    },
    bad: async (m) => ({ path: `/partitions/${await newPartition(m)}/devices/d-fan`, status: 404, issue: "(root)" }),
  },
  // Custom fields
  {
    route: "POST /partitions/{partition_id}/custom-fields/single",
    method: "POST",
    status: 200,
    answer: "id",
    ...ADMINS_ONLY,
    make: async (m) => ({
      path: "/partitions/p-default/custom-fields/single",
      body: { id: `newfield${m.n()}`, type: "string" },
    }),
    bad: async (m) => ({
      path: "/partitions/p-default/custom-fields/single",
      body: { id: `badfield${m.n()}`, type: "colour" },
      status: 400,
      issue: "body.type",
    }),
  },
  {
    route: "POST /partitions/{partition_id}/custom-fields/all",
    method: "POST",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({
      path: `/partitions/${await newPartition(m)}/custom-fields/all`,
      body: [{ id: `allfield${m.n()}`, type: "number", decimals: 2 }],
    }),
    bad: async (m) => ({
      path: `/partitions/${await newPartition(m)}/custom-fields/all`,
      body: [{ id: `allfield${m.n()}`, type: "number", decimals: 11 }],
      status: 400,
      issue: "body[0].decimals",
    }),
  },
  {
    route: "GET /partitions/{partition_id}/custom-fields",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    outside: "/partitions/p-east/custom-fields",
    make: at({ path: "/partitions/p-default/custom-fields" }),
  },
  {
    route: "GET /partitions/{partition_id}/custom-fields/{custom_field_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    make: async (m) => ({ path: `/partitions/p-default/custom-fields/${await newField(m)}` }),
  },
  {
    route: "PUT /partitions/{partition_id}/custom-fields/{custom_field_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => {
      const f = await newField(m);
      return {
        path: `/partitions/p-default/custom-fields/${f}`,
        body: { id: f, type: "string", visibility: "readonly" },
      };
    },
    bad: async (m) => {
      const f = await newField(m);
      return { path: `/partitions/p-default/custom-fields/${f}`, body: { id: f }, status: 400, issue: "body.type" };
    },
  },
  {
    route: "DELETE /partitions/{partition_id}/custom-fields/{custom_field_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/partitions/p-default/custom-fields/${await newField(m)}` }),
    bad: async () => ({ path: "/partitions/p-default/custom-fields/nope", status: 404, issue: "(root)" }),
  },
  // Floor groups
  {
    route: "POST /floor_groups",
    method: "POST",
    status: 200,
    answer: "id",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: "/floor_groups", body: floorGroupBody(m.n()) }),
    bad: async (m) => ({
      path: "/floor_groups",
      body: { ...floorGroupBody(m.n()), floors: ["d-front"] },
      status: 400,
      issue: "body.floors[0]",
    }),
  },
  {
    route: "GET /floor_groups",
    method: "GET",
    status: 200,
    answer: "array",
    paged: true,
    ...EVERYONE,
    make: at({ path: "/floor_groups" }),
  },
  {
    route: "GET /floor_groups/{floor_group_id}",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    make: at({ path: "/floor_groups/f-low" }),
  },
  {
    route: "PUT /floor_groups/{floor_group_id}",
    method: "PUT",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/floor_groups/${await newFloorGroup(m)}`, body: floorGroupBody(m.n()) }),
    bad: async (m) => ({
      path: `/floor_groups/${await newFloorGroup(m)}`,
      body: { ...floorGroupBody(m.n()), readerPort: "d-front" },
      status: 400,
      issue: "body.readerPort",
    }),
  },
  {
    route: "DELETE /floor_groups/{floor_group_id}",
    method: "DELETE",
    status: 204,
    answer: "none",
    ...ADMINS_ONLY,
    make: async (m) => ({ path: `/floor_groups/${await newFloorGroup(m)}` }),
    bad: async () => ({ path: "/floor_groups/f-low", status: 409, issue: "rules[1].floorGroups[0]" }),
  },
  // RSOP, decisions, who can access
  {
    route: "GET /rsop/holders",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    outside: `/rsop/holders?ids=h-cy&at=${AT}`,
    make: at({ path: `/rsop/holders?ids=h-ann,h-bob&at=${AT}` }),
  },
  {
    route: "GET /cloud-nodes/{cloud_node_id}/rsop/holders",
    method: "GET",
    status: 200,
    answer: "object",
    ...EVERYONE,
    outside: `/cloud-nodes/n-main/rsop/holders?ids=h-cy&at=${AT}`,
    make: at({ path: `/cloud-nodes/n-main/rsop/holders?ids=h-ann&at=${AT}` }),
  },
  {
    route: "POST /decisions",
    method: "POST",
    status: 200,
    answer: "object",
    manager: 403,
    reporter: 403,
    make: at({
      path: "/decisions",
      body: { deviceId: "d-front", at: AT, credential: { credentialNumber: 1001, facilityCode: 10 } },
    }),
    bad: async () => ({ path: "/decisions", body: { deviceId: 7, at: AT }, status: 400, issue: "deviceId" }),
  },
  {
    route: "GET /devices/{device_id}/access",
    method: "GET",
    status: 200,
    answer: "object",
    paged: true,
    manager: 403,
    reporter: 403,
    make: at({ path: `/devices/d-front/access?at=${AT}` }),
  },
];

interface Served {
  server: RunningDataServer;
  send: Send;
  maker: Maker;
  /** Every write acknowledged with a 2xx, in order, as `METHOD path`. */
  acknowledged: string[];
}

async function serve(): Promise<Served & { db: string }> {
  const { db } = dataDir();
  const parsed = parseTokens(TOKENS_JSON);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const { server } = await startData(db, building(), { tokens: { file: "tokens.json", entries: parsed.entries } });
  const acknowledged: string[] = [];
  const send: Send = async (token, method, path, body) => {
    const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      headers["content-type"] = "application/json";
    }
    const res = await fetch(`${server.url}/${SYSTEM_ID}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
    const text = await res.text();
    for (const t of [...Object.values(TOKENS), TOKEN]) expect(text.includes(t), "no answer holds a token").toBe(false);
    if (method !== "GET" && path !== "/decisions" && res.status < 300)
      acknowledged.push(`${method} ${path.split("?")[0]}`);
    return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
  };
  return {
    db,
    server,
    send,
    maker: makerOf((method, path, body) => send(TOKENS.admin, method, path, body)),
    acknowledged,
  };
}

/** Sends a request that must change nothing (unchanged). */
function sendUnchanged(s: Served, token: string | null, method: string, req: Request): Promise<Answer> {
  return unchanged(s.server, () => s.send(token, method, req.path, req.body), `${method} ${req.path}`);
}

/** A successful answer of a case: status, body shape, headers. */
function expectAnswer(c: Case, r: Answer, what: string): void {
  if (c.status >= 400) {
    expectError(r, c.status, what);
    return;
  }
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(c.status);
  if (c.answer === "none") {
    expect(r.body, what).toBeUndefined();
    return;
  }
  expect(r.headers.get("content-type"), what).toMatch(/^application\/json/);
  if (c.answer === "id") {
    expect(Object.keys(r.body), what).toEqual(["id"]);
    expect(typeof r.body.id).toBe("string");
  } else if (c.answer === "array") expect(Array.isArray(r.body), what).toBe(true);
  else expect(typeof r.body === "object" && r.body !== null && !Array.isArray(r.body), what).toBe(true);
  if (c.paged) {
    // A list, or who-can-access's answer with its page of holders.
    const items = Array.isArray(r.body) ? r.body : r.body.holders;
    expect(Number(r.headers.get("x-total-count")), `${what}: X-Total-Count`).toBeGreaterThanOrEqual(items.length);
    expect(r.headers.get("link"), `${what}: Link`).toMatch(/rel="first".*rel="last"/);
  } else expect(r.headers.get("x-total-count"), `${what}: no X-Total-Count`).toBeNull();
}

describe("every route of the systems host, for each role (issue 14)", () => {
  test("the table holds every route of the live system's route table, decisions and who-can-access", async () => {
    const { routePatterns } = await import("../../src/live/routes.js");
    const seed = (p: string) =>
      p.replace(/:[a-zA-Z]+Id\b/g, (x) => `{${x.slice(1, -2).replace(/[A-Z]/g, (ch) => `_${ch.toLowerCase()}`)}_id}`);
    const routed = routePatterns().map(([method, path]) => `${method} ${seed(path)}`);
    const tabled = CASES.map((c) => c.route.replace(/^★ /, ""));
    expect([...tabled].sort()).toEqual([...routed, "POST /decisions", "GET /devices/{device_id}/access"].sort());
  });

  test.each(CASES.map((c) => [c.route, c] as const))("%s", async (_, c) => {
    const s = await serve();
    // No token: 401 before anything else, nothing stored.
    const anonymous = await sendUnchanged(s, null, c.method, await c.make(s.maker));
    expectError(anonymous, 401, `${c.route} without a token`);
    expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="rsop"');

    for (const role of ROLES) {
      const expected = role === "manager" ? c.manager : role === "reporter" ? c.reporter : "ok";
      const req = await c.make(s.maker);
      const what = `${c.route} as ${role}`;
      if (expected === "ok") {
        const seq = s.server.durable.seq();
        const r = await s.send(TOKENS[role], c.method, req.path, req.body);
        expectAnswer(c, r, what);
        const writes = c.method !== "GET" && c.route !== "POST /decisions";
        expect(s.server.durable.seq(), `${what}: ${writes ? "stored once" : "a read stores nothing"}`).toBe(
          writes ? seq + 1 : seq,
        );
      } else {
        const r = await sendUnchanged(s, TOKENS[role], c.method, req);
        expectError(r, expected, what);
      }
    }

    // Outside the manager's and reporter's partitions: the answer of an id that does not exist.
    if (c.outside !== undefined) {
      const body = c.method === "GET" ? undefined : ((await c.make(s.maker)).body ?? undefined);
      const asAdmin = await sendUnchanged(s, TOKENS.admin, "GET", {
        path: c.outside.replace(/\/groups\/g-(staff|empty)$/, ""),
      });
      expect(asAdmin.status, `${c.outside} exists for an admin`).toBe(200);
      for (const role of ["manager", "reporter"] as const) {
        const expected = c.method === "GET" || role === "manager" ? 404 : 403;
        expectError(
          await sendUnchanged(s, TOKENS[role], c.method, { path: c.outside, body }),
          expected,
          `${c.route} outside the ${role}'s partitions`,
        );
      }
    }

    // Bad input: refused with the issue's path, nothing stored.
    if (c.bad !== undefined) {
      const bad = await c.bad(s.maker);
      const issues = expectError(
        await sendUnchanged(s, TOKENS.admin, c.method, bad),
        bad.status,
        `${c.route} with bad input`,
      );
      expect(
        issues.map((i) => i.path),
        `${c.route} with bad input`,
      ).toContain(bad.issue);
    } else expect(c.method, `${c.route}: every write route has a bad input`).toBe("GET");

    // The database holds exactly the acknowledged writes, in order, and is intact.
    await s.server.close();
    const stored = inspect(s.db);
    expect(stored.integrity).toBe("ok");
    expect(stored.changes.map((ch) => `${ch.operation.method} ${String(ch.operation.path).split("?")[0]}`)).toEqual(
      s.acknowledged,
    );
  });
});
