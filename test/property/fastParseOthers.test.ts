// The device, group, partition, floor group and connection fast paths against their schemas (fastParse.test.ts has holders and rules), and
// parseSnapshot's header fast path: over random near-valid elements, whenever a fast path answers, the
// schema accepts the same element and returns an equal value with the same keys in the same order; and
// it does answer for plainly valid ones.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { z } from "zod";
import {
  DECLINED,
  fastConnection,
  fastDevice,
  fastFloorGroup,
  fastGroup,
  fastPartition,
} from "../../src/model/fastParse.js";
import {
  connectionSchema,
  deviceSchema,
  floorGroupSchema,
  groupSchema,
  partitionSchema,
} from "../../src/model/index.js";
import { fastHead, headerSchema } from "../../src/model/parseSnapshot.js";
import { NUM_RUNS, REPLAY, TIMEOUT } from "./support.js";

/** Values and keys in order, arrays and objects alike: what toEqual would let differ in key order. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return { array: v.map(shape), length: v.length };
  if (typeof v === "object" && v !== null)
    return Object.keys(v).map((k) => [k, shape((v as Record<string, unknown>)[k])]);
  return Object.is(v, -0) ? "-0" : v;
}

const odd = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant({}),
  fc.constant([]),
  fc.string(),
);
/** Mostly a valid value, sometimes an odd one. */
const needed = <T>(valid: fc.Arbitrary<T>, rest: fc.Arbitrary<unknown> = odd) =>
  fc.oneof({ weight: 60, arbitrary: valid as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: rest });
/** The same, or (more often: a device has many fields) absent. */
const field = <T>(valid: fc.Arbitrary<T>, rest: fc.Arbitrary<unknown> = odd) =>
  fc.option(needed(valid, rest), { nil: undefined, freq: 2 });
const int = (min: number, max: number) =>
  fc.oneof(
    { weight: 30, arbitrary: fc.integer({ min, max }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        min - 1,
        max + 1,
        1.5,
        -0,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.MAX_SAFE_INTEGER + 1,
      ),
    },
  );
const text = fc.oneof(
  { weight: 30, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom("", "x".repeat(70), "x".repeat(71)) },
);

const deviceArb = fc.record(
  {
    id: needed(fc.constantFrom("d1", "d2"), fc.constantFrom("", { id: "d1" })),
    name: needed(text),
    cloudNode: needed(fc.constantFrom("n1"), fc.constant("")),
    connection: needed(fc.constantFrom("c1", "c2"), fc.constantFrom("", { id: "c1" }, { id: "" })),
    port: needed(int(0, 20)),
    partition: field(fc.constantFrom(null, [], [{ id: "p1" }], [{ id: "p1", name: "P", extra: 1 }])),
    type: needed(
      fc.constantFrom(
        "primaryReader",
        "additionalReader",
        "ioDevice",
        "premiumIoDevice",
        "elevatorReader",
        "additionalElevatorReader",
        "floorRelay",
      ),
    ),
    publicIcon: field(fc.constantFrom("swingingDoor", "other", null), fc.constantFrom("door", "")),
    primaryReader: fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined) },
      { weight: 2, arbitrary: fc.constantFrom("d1", null) },
      { weight: 1, arbitrary: fc.constantFrom("", { id: "d1" }, 3) },
    ),
    inputTypes: field(
      fc.oneof(
        { weight: 6, arbitrary: fc.subarray(["wiegand", "unencryptedOsdp", "encryptedOsdp"], { minLength: 1 }) },
        { weight: 1, arbitrary: fc.constantFrom([], ["wiegand", "wiegand"], ["osdp"], "wiegand") },
      ),
    ),
    osdpAddress: field(fc.oneof(int(0, 3), fc.constant(null))),
    wirelessAddress: field(fc.oneof(text, fc.constant(null))),
    readerType: field(fc.constantFrom("standard", "touch", "red"), fc.constantFrom("blue", null)),
    readerSerialNumber: field(fc.oneof(text, fc.constant(null))),
    supportBleCredentials: field(fc.boolean()),
    securedReadsOnly: field(fc.boolean()),
    delay: field(int(0, 9999)),
    dwell: field(int(1, 9999)),
    dps: field(fc.boolean()),
    propAlarm: field(fc.boolean()),
    propDelay: field(fc.oneof(fc.constant(0), int(0, 9999))),
    rex: field(fc.boolean()),
    forcedAlarm: field(fc.boolean()),
    autoOpenAfterFirstAllow: field(fc.boolean()),
    authenticationPolicy: field(
      fc.constantFrom("cardOnly", "pinOnly", "cardOrPin", "cardAndPin", null),
      fc.constantFrom("card", ""),
    ),
    hardwareVersion: field(fc.oneof(text, fc.constant(null))),
    serialNumber: field(fc.oneof(text, fc.constant(null))),
    firmwareVersion: field(fc.oneof(text, fc.constant(null))),
    created: field(fc.oneof(text, fc.constant(null))),
    other: field(fc.string()),
  },
  { requiredKeys: ["id", "name", "cloudNode", "connection", "port", "type"] },
);

/** Wherever `fast` answers, `schema` accepts the same element with an equal value, keys in the same order. */
function agreesWithSchema(arb: fc.Arbitrary<unknown>, fast: (raw: unknown) => unknown, schema: z.ZodType): void {
  let answered = 0;
  fc.assert(
    fc.property(arb, (raw) => {
      const answer = fast(raw);
      if (answer === DECLINED) return;
      answered++;
      const slow = schema.safeParse(raw);
      expect(slow.success).toBe(true);
      expect(shape(answer)).toEqual(shape(slow.data));
    }),
    { numRuns: NUM_RUNS * 4, ...REPLAY },
  );
  expect(answered).toBeGreaterThan(NUM_RUNS / 4);
}

const groupArb = fc.record(
  {
    id: needed(fc.constantFrom("g1", "g2"), fc.constantFrom("", { id: "g1" })),
    name: needed(text),
    partition: field(fc.oneof(text, fc.constant(null))),
    other: field(fc.string()),
  },
  { requiredKeys: ["id", "name"] },
);

describe("group fast path", () => {
  test(
    "answers only what the group schema answers, keys in the same order",
    () => agreesWithSchema(groupArb, fastGroup, groupSchema),
    TIMEOUT,
  );
});

const partitionArb = fc.record(
  {
    id: needed(fc.constantFrom("p1", "p2"), fc.constantFrom("", { id: "p1" })),
    name: needed(text),
    users: field(fc.oneof(fc.constant(null), fc.array(fc.constantFrom("u1", "")), fc.constant(["u1", 3]))),
    default: field(fc.boolean()),
    other: field(fc.string()),
  },
  { requiredKeys: ["id", "name"] },
);

const ref = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("d1", "d2") },
  { weight: 1, arbitrary: fc.constantFrom("", { id: "d1" }, { id: "" }, 3) },
);
const floorGroupArb = fc.record(
  {
    id: needed(fc.constantFrom("f1", "f2"), fc.constantFrom("", { id: "f1" })),
    name: needed(text),
    partition: field(fc.oneof(text, fc.constant(null))),
    readerPort: ref,
    floors: needed(
      fc.oneof(
        { weight: 6, arbitrary: fc.array(ref, { minLength: 1, maxLength: 3 }) },
        { weight: 1, arbitrary: fc.constant([]) },
      ),
    ),
    other: field(fc.string()),
  },
  { requiredKeys: ["id", "name", "readerPort", "floors"] },
);

// The optional keys of a connection are left out by the record (present but undefined is declined).
const optionalText = (valid: fc.Arbitrary<unknown>) => needed(fc.oneof(valid, fc.constant(null)));
/** Fields only an ethernet connection has: mostly null, so that the other types pass too. */
const ethernetOnly = (valid: fc.Arbitrary<unknown>) =>
  needed(fc.oneof({ weight: 1, arbitrary: valid }, { weight: 4, arbitrary: fc.constant(null) }));
const connectionArb = fc.record(
  {
    id: needed(fc.constantFrom("c1", "c2"), fc.constantFrom("", { id: "c1" })),
    name: needed(text),
    type: needed(fc.constantFrom("lockhub", "ethernet", "usb", "wirelessCoordinator", "wirelessGateway")),
    cloudNode: needed(fc.constantFrom("n1"), fc.constantFrom("", { id: "n1" })),
    connected: needed(fc.boolean()),
    protocol: ethernetOnly(fc.constantFrom("IPv4", "IPv6", "ipv4")),
    ipaddress: needed(fc.constantFrom("10.0.0.1", "10.0.0.2", "", null)),
    ipv6Address: ethernetOnly(fc.constantFrom("::1", "")),
    port: needed(int(0, 65_535)),
    dhcp: needed(fc.boolean()),
    netmask: optionalText(text),
    gateway: optionalText(text),
    dns: optionalText(text),
    macAddress: needed(fc.constantFrom("00:11:22:33:44:55", "00:11:22:33:44:56", "", null)),
    manufacturer: ethernetOnly(fc.constantFrom("VENDOR_A", "VENDOR_B", "VENDOR_C")),
    other: field(fc.string()),
  },
  { requiredKeys: ["id", "name", "type", "cloudNode"] },
);

describe("partition, floor group and connection fast paths", () => {
  test(
    "answer only what their schemas answer, keys in the same order",
    () => {
      agreesWithSchema(partitionArb, fastPartition, partitionSchema);
      agreesWithSchema(floorGroupArb, fastFloorGroup, floorGroupSchema);
      agreesWithSchema(connectionArb, fastConnection, connectionSchema);
    },
    TIMEOUT,
  );

  test("a connection present but undefined is the schema's to decide", () => {
    const base = { id: "c1", name: "C", type: "usb", cloudNode: "n1", port: 1 };
    expect(fastConnection(base)).not.toBe(DECLINED);
    expect(fastConnection({ ...base, dhcp: undefined })).toBe(DECLINED);
    expect(
      shape(fastConnection({ id: "c1", name: "C", type: "ethernet", cloudNode: "n1", port: 1, ipaddress: "10.0.0.1" })),
    ).toEqual(
      shape(
        connectionSchema.parse({
          id: "c1",
          name: "C",
          type: "ethernet",
          cloudNode: "n1",
          port: 1,
          ipaddress: "10.0.0.1",
        }),
      ),
    );
  });
});

describe("snapshot header fast path", () => {
  const collection = fc.oneof(
    { weight: 10, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fc.constantFrom(null, {}, "x", [1], [{}], [null]) },
  );
  const snapshotArb = fc.record(
    {
      format: needed(fc.constant("rsop-system/1"), fc.constantFrom("rsop-panel/1", "")),
      systemId: needed(fc.constantFrom("s1"), fc.constant("")),
      timezone: field(fc.constantFrom("UTC", "Europe/Paris", "Mars/Olympus")),
      partitions: collection,
      groups: collection,
      holders: collection,
      cloudNodes: collection,
      connections: collection,
      devices: collection,
      floorGroups: collection,
      rules: collection,
      customFields: collection,
    },
    { requiredKeys: [] },
  );
  test(
    "answers only what the header schema answers",
    () => {
      let answered = 0;
      fc.assert(
        fc.property(snapshotArb, (raw) => {
          const answer = fastHead(raw);
          if (answer === undefined) return;
          answered++;
          const slow = headerSchema.safeParse(raw);
          expect(slow.success).toBe(true);
          expect(shape(answer)).toEqual(shape(slow.data));
        }),
        { numRuns: NUM_RUNS * 4, ...REPLAY },
      );
      expect(answered).toBeGreaterThan(NUM_RUNS / 4);
    },
    TIMEOUT,
  );
});

describe("device fast path", () => {
  test(
    "answers only what the device schema answers, keys in the same order",
    () => agreesWithSchema(deviceArb, fastDevice, deviceSchema),
    TIMEOUT,
  );

  test("answers for plainly valid devices, with every default the schema fills in", () => {
    const raw = { id: "d1", name: "Door", cloudNode: "n1", connection: "c1", port: 0, type: "floorRelay" };
    const fast = fastDevice(raw);
    expect(fast).not.toBe(DECLINED);
    expect(shape(fast)).toEqual(shape(deviceSchema.parse(raw)));
    expect(fast).toMatchObject({
      partition: [],
      inputTypes: ["wiegand", "unencryptedOsdp", "encryptedOsdp"],
      dwell: 30,
    });
  });

  test("declines what only the schema can report or normalize", () => {
    const base = { id: "d1", name: "Door", cloudNode: "n1", connection: "c1", port: 0, type: "floorRelay" };
    for (const odd of [
      { connection: { id: "c1" } },
      { partition: [{ id: "p1" }] },
      { type: "primaryReader" },
      { type: "additionalReader" },
      { primaryReader: "d2" },
      { osdpAddress: 1, inputTypes: ["wiegand"] },
      { propAlarm: true },
      { forcedAlarm: true },
      { propDelay: 5, dps: true },
      { readerType: null },
      { dwell: 0 },
      { name: "x".repeat(71) },
    ])
      expect(fastDevice({ ...base, ...odd }), JSON.stringify(odd)).toBe(DECLINED);
  });
});
