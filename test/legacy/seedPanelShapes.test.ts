// The 1.0 panel API read answers in the API's shapes, field for field, over real HTTP on a real SQLite
// file (`rsop serve --data --panel`): the field tables are written below as data, and each read's answer
// has exactly the keys of its resource's table (LP13). One test per former deviation — devices without
// `bootloaderVersion`/`startupVersion`, attributes without their defaults and with a `partition`, persons
// without `photoUrl` (and the other fields they did not state), `/api/info` answering the snapshot format as
// its `version` — then a walk of every other read. Each answer is also checked against the server's own
// OpenAPI document (test/setup/checkAnswers.ts), which declares these shapes.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, test } from "vitest";
import { type Caller, caller, dataDir, startData } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";
import { AT, smallPanel } from "../live/panelFixture.js";

afterAll(removeTempDirs);

/** The 2.0 device table, which the 1.0 device shares (with integer ids). */
const DEVICE_2_0 = [
  "id",
  "name",
  "connection",
  "port",
  "partition",
  "type",
  "publicIcon",
  "primaryReader",
  "inputTypes",
  "osdpAddress",
  "wirelessAddress",
  "readerType",
  "readerSerialNumber",
  "supportBleCredentials",
  "securedReadsOnly",
  "delay",
  "dwell",
  "dps",
  "propAlarm",
  "propDelay",
  "rex",
  "forcedAlarm",
  "autoOpenAfterFirstAllow",
  "authenticationPolicy",
  "hardwareVersion",
  "serialNumber",
  "firmwareVersion",
  "created",
];

/** The field tables of the 1.0 panel API, resource by resource. */
const SEED = {
  person: [
    "id",
    "firstName",
    "lastName",
    "email",
    "photoUrl",
    "partition",
    "enabled",
    "activeDate",
    "expireDate",
    "pin",
    "duressPin",
    "customAttributes",
    "metadata",
    "groups",
    "credentials",
  ],
  personGroup: ["id", "name", "partition", "metadata"],
  credential: ["id", "personId", "credentialNumber", "facilityCode", "description", "types"],
  group: ["id", "name", "partition", "metadata"],
  connection: [
    "id",
    "name",
    "type",
    "connected",
    "protocol",
    "ipaddress",
    "ipv6Address",
    "port",
    "dhcp",
    "netmask",
    "gateway",
    "dns",
    "macAddress",
    "manufacturer",
  ],
  device: [...DEVICE_2_0, "bootloaderVersion", "startupVersion", "metadata"],
  devicePartition: ["id", "name"],
  // The 2.0 custom field table without `description`.
  attribute: [
    "id",
    "type",
    "displayName",
    "required",
    "visibility",
    "items",
    "minLength",
    "maxLength",
    "values",
    "min",
    "max",
    "decimals",
    "fields",
    "regex",
  ],
  floorGroup: ["id", "name", "partition", "readerPort", "floors"],
  readerPort: ["id", "name"],
  floor: ["id", "name", "type"],
  info: ["online", "version", "elevatorsPresent", "facilityCodesSupported"],
  config: ["timezone", "logPurgeDays", "cardFormat", "locale", "offlinePolicy", "killTimer"],
  configCardFormat: ["id", "min_input_bits", "max_input_bits", "facility_code", "description"],
  search: ["id", "type", "name", "image"],
  rsop: ["date", "persons"],
  rsopPerson: ["id", "enabled", "groups", "doors", "rules", "floorGroups"],
  rsopDoor: [
    "id",
    "activeRuleId",
    "allowed",
    "name",
    "created",
    "type",
    "publicIcon",
    "readerType",
    "securedReadsOnly",
    "supportBleCredentials",
    "readerSerialNumber",
  ],
  rsopRule: ["id", "type", "active", "allow", "authenticationPolicy", "startTime", "stopTime", "recurring"],
  rsopFloorGroup: ["id", "activeRuleId", "allowed", "name", "readerPort", "floors"],
  rsopReaderPort: ["id", "name", "type"],
  rsopGroup: ["id", "name"],
} as const;

/**
 * Fields an answer may leave out, by decision: `protocol`, `manufacturer` belong to ethernet controllers
 * (S13); an attribute answers the type-specific fields it has (L17); a search result's `image` is a
 * person's only; `allow` is a door rule's.
 */
const ONLY_SOMETIMES = {
  connection: ["protocol", "manufacturer"],
  attribute: ["items", "minLength", "maxLength", "values", "min", "max", "decimals", "fields", "regex"],
  search: ["image"],
  rsopRule: ["allow"],
} as const satisfies Partial<Record<keyof typeof SEED, readonly string[]>>;

/** `x` has every key of `table` (but those it may leave out) and no other; `what` names it in a failure. */
function expectShape(x: unknown, table: keyof typeof SEED, what: string): Record<string, any> {
  expect(typeof x === "object" && x !== null && !Array.isArray(x), `${what} is an object`).toBe(true);
  const keys = Object.keys(x as object);
  const sometimes: readonly string[] = (ONLY_SOMETIMES as Partial<Record<string, readonly string[]>>)[table] ?? [];
  const allowed: readonly string[] = SEED[table];
  expect(
    keys.filter((k) => !allowed.includes(k)),
    `${what}: keys outside the ${table} table`,
  ).toEqual([]);
  expect(
    allowed.filter((k) => !sometimes.includes(k) && !keys.includes(k)),
    `${what}: fields of the ${table} table left out`,
  ).toEqual([]);
  return x as Record<string, any>;
}

async function serve(): Promise<Caller> {
  const { db } = dataDir();
  const { server } = await startData(db, undefined, {
    initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
  });
  return caller(server.url, "");
}

async function ok(call: Caller, method: string, path: string, body?: unknown): Promise<any> {
  const r = await call(method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  return r.body;
}

describe("1.0 panel API answers in the API's shapes", () => {
  test("LP13 a device answers bootloaderVersion and startupVersion, null when unknown", async () => {
    const call = await serve();
    const door = expectShape(await ok(call, "GET", "/api/devices/3"), "device", "device 3");
    expect(door.bootloaderVersion).toBeNull();
    expect(door.startupVersion).toBeNull();
    for (const d of await ok(call, "GET", "/api/devices?per_page=100")) {
      expectShape(d, "device", `device ${d.id}`);
      for (const p of d.partition) expectShape(p, "devicePartition", `device ${d.id} partition`);
    }
  });

  test("LP13 an attribute answers displayName, required and visibility with their defaults, and no partition", async () => {
    const call = await serve();
    await ok(call, "POST", "/api/partitions/0/attributes/single", {
      id: "shift",
      type: "enum",
      values: [{ id: "am" }],
    });
    expect(expectShape(await ok(call, "GET", "/api/partitions/0/attributes/shift"), "attribute", "shift")).toEqual({
      id: "shift",
      type: "enum",
      values: [{ id: "am" }],
      displayName: "shift",
      required: false,
      visibility: "visible",
    });
    const list = await ok(call, "GET", "/api/partitions/0/attributes");
    expect(list.map((a: { id: string }) => a.id)).toEqual(["badge", "shift"]);
    for (const a of list) expect(expectShape(a, "attribute", a.id)).not.toHaveProperty("partition");
    expect(list[0]).toEqual({
      id: "badge",
      type: "string",
      displayName: "Badge",
      required: false,
      visibility: "visible",
    });
  });

  test("LP13 a person answers every field of its table: photoUrl (and what it does not state) null, enabled true", async () => {
    const call = await serve();
    const bob = expectShape(await ok(call, "GET", "/api/persons/2"), "person", "person 2");
    expect(bob).toMatchObject({
      photoUrl: null,
      email: null,
      enabled: true,
      activeDate: null,
      expireDate: null,
      pin: null,
      duressPin: null,
    });
    expect(Object.keys(bob)).toEqual(SEED.person);
    const made = await ok(call, "POST", "/api/persons", { firstName: "Cy", lastName: "Ng" });
    expect(expectShape(await ok(call, "GET", `/api/persons/${made.id}`), "person", "new person").photoUrl).toBeNull();
    await ok(call, "PUT", `/api/persons/${made.id}/photo`, { base64: "data:image/png;base64,iVBORw0KGgo=" });
    expect((await ok(call, "GET", `/api/persons/${made.id}`)).photoUrl).toBe("data:image/png;base64,iVBORw0KGgo=");
    // A card made without a description or facility code answers them null.
    const card = await ok(call, "POST", `/api/persons/${made.id}/credentials`, {
      types: ["card"],
      credentialNumber: 9,
    });
    const c = expectShape(
      await ok(call, "GET", `/api/persons/${made.id}/credentials/${card.id}`),
      "credential",
      "card",
    );
    expect(c).toMatchObject({ personId: made.id, credentialNumber: 9, facilityCode: null, description: null });
    for (const p of await ok(call, "GET", "/api/persons?per_page=100")) {
      expectShape(p, "person", `person ${p.id}`);
      for (const g of p.groups) expectShape(g, "personGroup", "person's group");
      for (const x of p.credentials) expectShape(x, "credential", "person's credential");
    }
  });

  test("LP9 /api/info answers the software version, as `rsop --version` prints it, not the snapshot format", async () => {
    const call = await serve();
    const info = expectShape(await ok(call, "GET", "/api/info"), "info", "info");
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(info.version).toBe(pkg.version);
    expect(info.version).not.toBe("rsop-panel/1");
  });

  test("every other read answers the keys of its resource's table", async () => {
    const call = await serve();
    for (const p of await ok(call, "GET", "/api/groups/1/persons")) expectShape(p, "person", "group member");
    for (const x of await ok(call, "GET", "/api/persons/1/credentials")) expectShape(x, "credential", "credential");
    expectShape(await ok(call, "GET", "/api/groups/1"), "group", "group");
    for (const g of await ok(call, "GET", "/api/groups")) expectShape(g, "group", `group ${g.id}`);
    for (const g of await ok(call, "GET", "/api/persons/1/groups")) expectShape(g, "group", "person's group");
    const conns = await ok(call, "GET", "/api/connections");
    for (const c of conns) expectShape(c, "connection", `connection ${c.id}`);
    const usb = expectShape(await ok(call, "GET", "/api/connections/1"), "connection", "connection 1");
    expect(usb).toMatchObject({ connected: null, ipaddress: null, macAddress: null, dhcp: null });
    expect(expectShape(await ok(call, "GET", "/api/connections/2"), "connection", "ethernet")).toMatchObject({
      protocol: "IPv4",
      manufacturer: "VENDOR_A",
      ipv6Address: null,
    });
    const fg = expectShape(await ok(call, "GET", "/api/floor_groups/1"), "floorGroup", "floor group");
    expectShape(fg.readerPort, "readerPort", "reader port");
    for (const f of fg.floors) expectShape(f, "floor", "floor");
    for (const f of await ok(call, "GET", "/api/floor_groups")) expectShape(f, "floorGroup", "floor group");
    const config = expectShape(await ok(call, "GET", "/api/config"), "config", "config");
    expectShape(config.cardFormat, "configCardFormat", "config card format");
    for (const s of await ok(call, "GET", "/api/search?q=a")) expectShape(s, "search", `search ${s.type}`);
    const rsop = expectShape(await ok(call, "GET", `/api/rsop/persons?ids=1,2&at=${AT}`), "rsop", "RSOP");
    for (const p of rsop.persons) {
      expectShape(p, "rsopPerson", "RSOP person");
      for (const d of p.doors) expectShape(d, "rsopDoor", "RSOP door");
      for (const r of p.rules) expectShape(r, "rsopRule", "RSOP rule");
      for (const g of p.groups) expectShape(g, "rsopGroup", "RSOP group");
      for (const f of p.floorGroups) {
        expectShape(expectShape(f, "rsopFloorGroup", "RSOP floor group").readerPort, "rsopReaderPort", "port");
        for (const x of f.floors) expectShape(x, "floor", "RSOP floor");
      }
    }
  });

  test("LP13 a configuration that states no locale, offlinePolicy, killTimer or logPurgeDays answers them", async () => {
    const { db } = dataDir();
    const panel = smallPanel();
    panel.config = { timezone: "UTC" };
    const { server } = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => panel },
    });
    const config = expectShape(await ok(caller(server.url, ""), "GET", "/api/config"), "config", "bare config");
    expect(config).toEqual({
      timezone: "UTC",
      logPurgeDays: null,
      cardFormat: null,
      locale: "en",
      offlinePolicy: 0,
      killTimer: 259200,
    });
  });
});
