// The 2.0 systems API read and create answers in the API's shapes, field for field, over real HTTP on a
// real SQLite file (`rsop serve --data`): the field tables are written below as data, and each read's
// answer has exactly the keys of its resource's table (L23, L24). One test per former deviation — a
// connection's unknown state answered null instead of left out, a digital credential's create carrying
// `inviteId` (L16, I81), `default` on the default partition only, no `cloudNode` on devices and
// connections — then a walk of every other read. Each answer is also checked against the server's own
// OpenAPI document (test/setup/checkAnswers.ts), which declares these shapes.
import { afterAll, describe, expect, test } from "vitest";
import { type Caller, dataDir, startData } from "./dataSupport.js";
import { removeTempDirs } from "./fixtures.js";
import { AT, building } from "../live/fixture.js";

afterAll(removeTempDirs);

/** The field tables of the 2.0 systems API, resource by resource. */
const SEED = {
  holder: [
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
    "customFields",
    "groups",
    "credentials",
  ],
  holderGroup: ["id", "name", "partition"],
  partialHolder: ["id", "firstName", "lastName", "enabled", "partition", "email"],
  credential: ["id", "holderId", "credentialNumber", "facilityCode", "description", "types"],
  group: ["id", "name", "partition"],
  cloudNode: [
    "id",
    "name",
    "description",
    "created",
    "serialNumber",
    "ecards",
    "offlinePolicy",
    "killTimer",
    "timezone",
    "locale",
    "cardFormat",
    "syncStatus",
    "connectionStatus",
  ],
  cardFormat: [
    "id",
    "description",
    "min_input_bits",
    "max_input_bits",
    "facility_code",
    "allowed_facility_codes",
    "enforce_parity",
  ],
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
  device: [
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
  ],
  devicePartition: ["id", "name", "default"],
  partialConnection: ["id", "name", "type"],
  partition: ["id", "name", "users", "default"],
  customField: [
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
    "description",
  ],
  floorGroup: ["id", "name", "partition", "readerPort", "floors"],
  floorGroupReader: ["id", "name", "cloudNode"],
  nodeRef: ["id", "serialNumber", "name"],
  floor: ["id", "name", "type"],
  rsop: ["date", "holders"],
  rsopHolder: ["id", "enabled", "devices", "floorGroups", "rules", "groups"],
  rsopDevice: ["id", "name", "created", "type", "publicIcon", "readerType", "cloudNode", "allowed", "activeRuleId"],
  rsopRule: ["type", "id", "startTime", "stopTime", "recurring", "allow", "authenticationPolicy", "groupId", "active"],
  rsopGroup: ["id", "name"],
} as const;

/**
 * Where an answer differs from a table by decision: the fields left out, each with its semantics id.
 * Status fields are the service's (H31, N10); `protocol`, `manufacturer` belong to ethernet controllers
 * (S13); a partition's `default` is on the default partition only (L24); a custom field answers the
 * type-specific fields it has (L17).
 */
const ONLY_SOMETIMES = {
  cloudNode: ["syncStatus", "connectionStatus"],
  connection: ["protocol", "manufacturer"],
  partition: ["default"],
  customField: [
    "items",
    "minLength",
    "maxLength",
    "values",
    "min",
    "max",
    "decimals",
    "fields",
    "regex",
    "description",
  ],
} as const satisfies Partial<Record<keyof typeof SEED, readonly string[]>>;

/** Additions to the API a table does not list: a card format's `layout` (S4), a cloud node's `threatLevel` (TL1). */
const ADDED = { cardFormat: ["layout"], cloudNode: ["threatLevel"] } as const satisfies Partial<
  Record<keyof typeof SEED, readonly string[]>
>;

/** `x` has every key of `table` (but those it may leave out) and no other; `what` names it in a failure. */
function expectShape(x: unknown, table: keyof typeof SEED, what: string): Record<string, any> {
  expect(typeof x === "object" && x !== null && !Array.isArray(x), `${what} is an object`).toBe(true);
  const keys = Object.keys(x as object);
  const sometimes: readonly string[] = (ONLY_SOMETIMES as Partial<Record<string, readonly string[]>>)[table] ?? [];
  const added: readonly string[] = (ADDED as Partial<Record<string, readonly string[]>>)[table] ?? [];
  const allowed = [...SEED[table], ...added];
  expect(
    keys.filter((k) => !allowed.includes(k)),
    `${what}: keys outside the ${table} table`,
  ).toEqual([]);
  expect(
    SEED[table].filter((k) => !sometimes.includes(k) && !keys.includes(k)),
    `${what}: fields of the ${table} table left out`,
  ).toEqual([]);
  return x as Record<string, any>;
}

async function serve(): Promise<Caller> {
  const { db } = dataDir();
  const { call } = await startData(db, building());
  return call;
}

async function ok(call: Caller, method: string, path: string, body?: unknown): Promise<any> {
  const r = await call(method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  return r.body;
}

const NETWORK = ["connected", "ipaddress", "ipv6Address", "dhcp", "netmask", "gateway", "dns", "macAddress"] as const;

describe("2.0 systems API answers in the API's shapes", () => {
  test("L23 a connection answers every field of its table: connected, ipv6Address, dhcp, netmask, gateway, dns, macAddress null when unset", async () => {
    const call = await serve();
    // x-usb states none of them; an ethernet controller created through the API neither.
    const usb = expectShape(await ok(call, "GET", "/cloud-nodes/n-main/connections/x-usb"), "connection", "x-usb");
    for (const k of NETWORK) expect(usb[k], `x-usb ${k}`).toBeNull();
    expect(usb).not.toHaveProperty("protocol");
    expect(usb).not.toHaveProperty("manufacturer");
    const made = await ok(call, "POST", "/cloud-nodes/n-annex/connections", {
      name: "Board B",
      type: "ethernet",
      ipaddress: "10.1.0.9",
      port: 4100,
    });
    const eth = expectShape(
      await ok(call, "GET", `/cloud-nodes/n-annex/connections/${made.id}`),
      "connection",
      "created ethernet",
    );
    expect(eth).toMatchObject({ protocol: "IPv6", manufacturer: "VENDOR_B", ipaddress: "10.1.0.9", port: 4100 });
    for (const k of NETWORK.filter((x) => x !== "ipaddress")) expect(eth[k], `ethernet ${k}`).toBeNull();
    // A lockhub's macAddress (sent as `macaddress`) is answered; configure network's settings once set.
    const hub = await ok(call, "POST", "/cloud-nodes/n-main/connections", {
      name: "Hub",
      type: "lockhub",
      macaddress: "00:11:22:33:44:55",
    });
    expect(
      expectShape(await ok(call, "GET", `/cloud-nodes/n-main/connections/${hub.id}`), "connection", "lockhub"),
    ).toMatchObject({ macAddress: "00:11:22:33:44:55", port: null, connected: null });
    await ok(call, "POST", "/cloud-nodes/n-main/connections/x-eth/configure", { dhcp: false, dns: "10.0.0.53" });
    expect(await ok(call, "GET", "/cloud-nodes/n-main/connections/x-eth")).toMatchObject({
      dhcp: false,
      dns: "10.0.0.53",
      netmask: null,
      gateway: null,
    });
    const list = await ok(call, "GET", "/connections?per_page=100");
    expect(list.length).toBe(5);
    for (const c of list) expectShape(c, "connection", `list entry ${c.id}`);
  });

  test("L23 devices and connections answer no cloudNode: the path names the node, as a custom field's partition (L17)", async () => {
    const call = await serve();
    expect(await ok(call, "GET", "/cloud-nodes/n-main/devices/d-front")).not.toHaveProperty("cloudNode");
    expect(await ok(call, "GET", "/cloud-nodes/n-main/connections/x-eth")).not.toHaveProperty("cloudNode");
    for (const c of await ok(call, "GET", "/connections?per_page=100")) expect(c).not.toHaveProperty("cloudNode");
  });

  test("L16 I81 a digital credential's create always carries inviteId (null without invitations); a card's answers {id}", async () => {
    const call = await serve();
    const r = await call("POST", "/holders/h-ann/credentials", { types: ["touch"], sendEmail: false });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["id", "inviteId"]);
    expect(typeof r.body.id).toBe("string");
    // One embedded system makes no invitations: no service secret keys an invite id (I80).
    expect(r.body.inviteId).toBeNull();
    const token = await call("POST", "/holders/h-cy/credentials", { types: ["token", "touch"] });
    expect(token.status).toBe(201);
    expect(token.body).toEqual({ id: token.body.id, inviteId: null });
    const card = await call("POST", "/holders/h-ann/credentials", { types: ["card"], credentialNumber: 7777 });
    expect(card.status).toBe(201);
    expect(Object.keys(card.body)).toEqual(["id"]);
  });

  test("L24 only the default partition carries `default`; a device's partitions are {id, name, default}", async () => {
    const call = await serve();
    const list = await ok(call, "GET", "/partitions");
    expect(list.map((p: { id: string }) => p.id)).toEqual(["p-default", "p-east"]);
    expect(expectShape(list[0], "partition", "p-default").default).toBe(true);
    expect(expectShape(list[1], "partition", "p-east")).not.toHaveProperty("default");
    expect(await ok(call, "GET", "/partitions/p-east")).toEqual({ id: "p-east", name: "East Wing", users: ["u-1"] });
    expect(await ok(call, "GET", "/partitions/p-default")).toEqual({
      id: "p-default",
      name: "Default",
      users: [],
      default: true,
    });
    const made = await ok(call, "POST", "/partitions", { name: "West" });
    expect(await ok(call, "GET", `/partitions/${made.id}`)).toEqual({ id: made.id, name: "West", users: [] });
    await ok(call, "PUT", "/partitions/p-default/devices", { devices: ["d-fan"] });
    const fan = expectShape(await ok(call, "GET", "/cloud-nodes/n-main/devices/d-fan"), "device", "d-fan");
    expect(fan.partition).toEqual([{ id: "p-default", name: "Default", default: true }]);
    const side = expectShape(await ok(call, "GET", "/cloud-nodes/n-main/devices/d-side"), "device", "d-side");
    expect(side.partition).toEqual([{ id: "p-east", name: "East Wing", default: false }]);
    for (const e of side.partition) expectShape(e, "devicePartition", "d-side partition");
  });

  test("every other read answers the keys of its resource's table", async () => {
    const call = await serve();
    await ok(call, "POST", "/partitions/p-east/custom-fields/single", { id: "badge", type: "string" });
    const holder = expectShape(await ok(call, "GET", "/holders/h-bob"), "holder", "holder");
    for (const g of holder.groups) expectShape(g, "holderGroup", "holder's group");
    for (const c of holder.credentials) expectShape(c, "credential", "holder's credential");
    for (const h of await ok(call, "GET", "/holders?per_page=100")) expectShape(h, "holder", `holder ${h.id}`);
    for (const h of await ok(call, "GET", "/groups/g-staff/holders")) expectShape(h, "partialHolder", "group member");
    expectShape(await ok(call, "GET", "/holders/h-bob/credentials/c-bob"), "credential", "credential");
    for (const c of await ok(call, "GET", "/credentials?per_page=100")) expectShape(c, "credential", "credential");
    for (const c of await ok(call, "GET", "/holders/h-bob/credentials")) expectShape(c, "credential", "credential");
    expect(await ok(call, "GET", "/credentials/facility-codes")).toEqual(["10", "20"]);
    expectShape(await ok(call, "GET", "/groups/g-staff"), "group", "group");
    for (const g of await ok(call, "GET", "/groups")) expectShape(g, "group", `group ${g.id}`);
    for (const g of await ok(call, "GET", "/holders/h-bob/groups")) expectShape(g, "group", "holder's group");
    const node = expectShape(await ok(call, "GET", "/cloud-nodes/n-main"), "cloudNode", "cloud node");
    for (const f of node.cardFormat) expectShape(f, "cardFormat", "card format");
    for (const n of await ok(call, "GET", "/cloud-nodes")) expectShape(n, "cloudNode", `cloud node ${n.id}`);
    const device = await ok(call, "GET", "/cloud-nodes/n-main/devices/d-front?include=connection");
    expectShape(expectShape(device, "device", "device").connection, "partialConnection", "device's connection");
    const field = expectShape(await ok(call, "GET", "/partitions/p-east/custom-fields/badge"), "customField", "field");
    expect(field).toEqual({
      id: "badge",
      type: "string",
      displayName: "badge",
      required: false,
      visibility: "visible",
    });
    for (const f of await ok(call, "GET", "/partitions/p-east/custom-fields")) expectShape(f, "customField", "field");
    const fg = expectShape(await ok(call, "GET", "/floor_groups/f-low"), "floorGroup", "floor group");
    expectShape(expectShape(fg.readerPort, "floorGroupReader", "reader port").cloudNode, "nodeRef", "reader's node");
    for (const f of fg.floors) expectShape(f, "floor", "floor");
    for (const f of await ok(call, "GET", "/floor_groups")) expectShape(f, "floorGroup", `floor group ${f.id}`);
    for (const path of [
      `/rsop/holders?ids=h-ann,h-bob&at=${AT}`,
      `/cloud-nodes/n-main/rsop/holders?ids=h-bob&at=${AT}`,
    ]) {
      const rsop = expectShape(await ok(call, "GET", path), "rsop", path);
      for (const h of rsop.holders) {
        expectShape(h, "rsopHolder", `${path} holder`);
        for (const d of h.devices)
          expectShape(expectShape(d, "rsopDevice", "RSOP device").cloudNode, "nodeRef", "node");
        for (const r of h.rules) expectShape(r, "rsopRule", "RSOP rule");
        for (const g of h.groups) expectShape(g, "rsopGroup", "RSOP group");
      }
    }
  });
});
