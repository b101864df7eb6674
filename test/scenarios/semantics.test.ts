// One test per line of docs/semantics.md: the snapshot lines (S*) through parseSnapshot, the request
// (R*) and evaluation (E*) lines through both deciders. Test names start with the line id.
import { describe, expect, test } from "vitest";
import { encodeWiegand, parseSnapshot } from "../../src/model/index.js";
import {
  ALL_DAYS,
  type Expected,
  IMPLS,
  T,
  bitsOf,
  building,
  cardAt,
  checker,
  h10301,
  issuesOf,
  mobileAt,
  pathsAndCodes,
  pinAt,
  rawBuilding,
} from "./fixture.js";

const ALICE_CARD = {
  holderId: "h-alice",
  credentialId: "c-alice-card",
  facilityCode: 17,
  credentialNumber: 1001,
} as const;
const BOB_CARD = { holderId: "h-bob", credentialId: "c-bob-card", facilityCode: 17, credentialNumber: 1002 } as const;
const aliceIn = (ruleId = "r-staff-front", extra: Partial<Expected> = {}): Expected => ({
  reason: "allowed",
  activeRuleId: ruleId,
  ...ALICE_CARD,
  ...extra,
});
const OFFLINE_UNKNOWN = { node: { online: false, timeKnown: false } } as const;

// ---------------------------------------------------------------------------------------------
// Snapshot lines: parseSnapshot reports the path and code (and nothing else).

describe("snapshot (S*)", () => {
  test("the base building loads", () => {
    expect(parseSnapshot(rawBuilding()).ok).toBe(true);
  });

  test("S1 credential numbers are unique system-wide, digital credentials included", () => {
    // Bob's card reuses Alice's card number; both live on every node.
    expect(pathsAndCodes(issuesOf((d) => (d.credential("c-bob-card").credentialNumber = 1001)))).toEqual([
      ["holders.1.credentials.0.credentialNumber", "duplicateCredentialNumber"],
    ]);
    // A digital credential reusing a card number, and a card reusing a digital number.
    expect(
      pathsAndCodes(
        issuesOf((d) => {
          d.holder("h-bob").credentials!.push({ id: "c-bob-phone", credentialNumber: 1001, types: ["token"] });
          d.credential("c-dave-card").credentialNumber = 5001;
        }),
      ),
    ).toEqual([
      ["holders.1.credentials.1.credentialNumber", "duplicateCredentialNumber"],
      ["holders.3.credentials.0.credentialNumber", "duplicateCredentialNumber"],
    ]);
    // Pending digital credentials (null numbers) never collide.
    expect(
      parseSnapshot(rawBuilding((d) => d.holder("h-bob").credentials!.push({ id: "c-bob-phone", types: ["token"] })))
        .ok,
    ).toBe(true);
  });

  test("S2 a node without card formats uses H10301, 26 bits, ENFORCED, parity enforced", () => {
    const expected = [
      {
        id: "H10301",
        min_input_bits: 26,
        max_input_bits: 26,
        facility_code: "ENFORCED",
        allowed_facility_codes: [],
        enforce_parity: true,
        layout: null,
      },
    ];
    for (const cardFormat of [undefined, null, []]) {
      const r = parseSnapshot(
        rawBuilding((d) => {
          if (cardFormat === undefined) delete d.node("node-a").cardFormat;
          else d.node("node-a").cardFormat = cardFormat;
        }),
      );
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.value.cloudNodes[0]!.cardFormat).toMatchObject(expected);
    }
  });

  test("S3 a well-known format reads exactly its length; a layout fits inside min_input_bits", () => {
    // The layout named by a string sets the length, not the id; a raw format takes any range.
    const one = (f: Record<string, unknown>) =>
      pathsAndCodes(issuesOf((d) => (d.node("node-a").cardFormat = [f as never])));
    const loads = (f: Record<string, unknown>) =>
      parseSnapshot(rawBuilding((d) => (d.node("node-a").cardFormat = [f as never]))).ok;
    expect(loads({ id: "lobby", layout: "H10306", min_input_bits: 34, max_input_bits: 34 })).toBe(true);
    expect(one({ id: "H10301", layout: "H10306", min_input_bits: 26, max_input_bits: 26 })).toEqual([
      ["cloudNodes.0.cardFormat.0.max_input_bits", "invalidRange"],
      ["cloudNodes.0.cardFormat.0.min_input_bits", "invalidRange"],
    ]);
    expect(loads({ id: "site-raw", min_input_bits: 9, max_input_bits: 512 })).toBe(true);
    expect(
      pathsAndCodes(
        issuesOf((d) => (d.node("node-a").cardFormat = [{ id: "H10301", min_input_bits: 26, max_input_bits: 27 }])),
      ),
    ).toEqual([["cloudNodes.0.cardFormat.0.max_input_bits", "invalidRange"]]);
    expect(
      pathsAndCodes(
        issuesOf((d) => (d.node("node-a").cardFormat = [{ id: "H10301", min_input_bits: 34, max_input_bits: 34 }])),
      ),
    ).toEqual([
      ["cloudNodes.0.cardFormat.0.max_input_bits", "invalidRange"],
      ["cloudNodes.0.cardFormat.0.min_input_bits", "invalidRange"],
    ]);
    expect(
      pathsAndCodes(
        issuesOf((d) => (d.node("node-a").cardFormat = [{ id: "H10301", min_input_bits: 24, max_input_bits: 26 }])),
      ),
    ).toEqual([["cloudNodes.0.cardFormat.0.min_input_bits", "invalidRange"]]);
    expect(
      pathsAndCodes(
        issuesOf(
          (d) =>
            (d.node("node-a").cardFormat = [
              {
                id: "TALL",
                min_input_bits: 26,
                max_input_bits: 40,
                layout: { cardNumber: { offset: 20, length: 10 } },
              },
            ]),
        ),
      ),
    ).toEqual([["cloudNodes.0.cardFormat.0.layout.cardNumber", "outOfRange"]]);
  });

  test("S4 a layout string names a well-known layout (an unknown name is refused at layout); without a layout an unknown id is raw", () => {
    const one = (f: Record<string, unknown>) => issuesOf((d) => (d.node("node-a").cardFormat = [f as never]));
    const loads = (f: Record<string, unknown>) =>
      parseSnapshot(rawBuilding((d) => (d.node("node-a").cardFormat = [f as never]))).ok;
    // An unknown id without a layout loads: it is a raw format.
    expect(loads({ id: "NOT-A-FORMAT", min_input_bits: 26, max_input_bits: 26 })).toBe(true);
    expect(loads({ id: "NOT-A-FORMAT", min_input_bits: 26, max_input_bits: 26, layout: null })).toBe(true);
    // A layout name must be in the table, spelled as it spells it.
    for (const name of ["H10301", "H10302", "H10304", "H10306", "C1k35s", "C1k48s"])
      expect(
        one({ id: "x", layout: name, min_input_bits: 9, max_input_bits: 9 }).map((i) => i.path.at(-1)),
      ).not.toContain("layout");
    const refused = one({ id: "x", layout: "c1k35s", min_input_bits: 35, max_input_bits: 35 });
    expect(pathsAndCodes(refused)).toEqual([["cloudNodes.0.cardFormat.0.layout", "unknownCardFormat"]]);
    expect(refused[0]!.message).toMatch(
      /^"c1k35s" is not a well-known layout \(did you mean "C1k35s"\?\)\. Known layouts: H10301, /,
    );
    for (const name of ["H10302", "H10304", "H10306", "C1k35s", "C1k48s"])
      expect(refused[0]!.message).toContain(` ${name},`);
    expect(pathsAndCodes(one({ id: "x", layout: 26, min_input_bits: 26, max_input_bits: 26 }))).toEqual([
      ["cloudNodes.0.cardFormat.0.layout", "invalidType"],
    ]);
  });

  test("S17 a raw format loads with any bit range, facility-code policy and parity setting", () => {
    for (const f of [
      { id: "raw", min_input_bits: 9, max_input_bits: 512, enforce_parity: true },
      { id: "raw", min_input_bits: 64, max_input_bits: 64, enforce_parity: false },
      { id: "raw", min_input_bits: 26, max_input_bits: 26, facility_code: "FILTER_LIST", allowed_facility_codes: [17] },
      { id: "raw", min_input_bits: 26, max_input_bits: 26, facility_code: "NOT_ENFORCED" },
    ])
      expect(parseSnapshot(rawBuilding((d) => (d.node("node-a").cardFormat = [f as never]))).ok).toBe(true);
    // The entry checks every format has still apply.
    expect(
      pathsAndCodes(
        issuesOf(
          (d) =>
            (d.node("node-a").cardFormat = [
              { id: "raw", min_input_bits: 26, max_input_bits: 26, facility_code: "FILTER_LIST" },
            ]),
        ),
      ),
    ).toEqual([["cloudNodes.0.cardFormat.0.allowed_facility_codes", "invalid"]]);
  });

  test("S5 door rules name no elevator reader or floor relay; elevator rules name no device and never deny", () => {
    expect(
      pathsAndCodes(
        issuesOf((d) => {
          d.addRule({ id: "r-x1", groupId: "g-staff", devices: ["elev-1"] });
          d.addRule({ id: "r-x2", groupId: "g-staff", devices: ["door-front", "floor-1"] });
          d.addRule({
            id: "r-x3",
            groupId: "g-staff",
            type: "elevator",
            devices: ["door-front"],
            floorGroups: ["fg-low"],
          });
          d.addRule({ id: "r-x4", groupId: "g-staff", type: "elevator", floorGroups: ["fg-low"], allow: false });
        }),
      ),
    ).toEqual([
      ["rules.5.devices.0", "invalidReference"],
      ["rules.6.devices.1", "invalidReference"],
      ["rules.7.devices", "invalid"],
      ["rules.8.allow", "invalid"],
    ]);
  });

  test("S6 a floor group opens floor relays of its reader's node, and its reader is an elevator reader", () => {
    expect(pathsAndCodes(issuesOf((d) => (d.floorGroup("fg-high").floors = [])))).toEqual([
      ["floorGroups.1.floors", "tooSmall"],
    ]);
    expect(
      pathsAndCodes(
        issuesOf((d) => {
          d.addDevice({
            id: "floor-b",
            port: 2,
            cloudNode: "node-b",
            connection: "conn-b",
            type: "floorRelay",
            publicIcon: null,
          });
          d.raw.floorGroups.push(
            { id: "fg-x1", name: "Wrong floor type", readerPort: "elev-1", floors: ["door-lab"] },
            { id: "fg-x2", name: "Other node", readerPort: "elev-1", floors: ["floor-1", "floor-b"] },
            { id: "fg-x3", name: "Door as reader", readerPort: "door-front", floors: ["floor-1"] },
          );
        }),
      ),
    ).toEqual([
      ["floorGroups.2.floors.0", "invalidReference"],
      ["floorGroups.3.floors.1", "inconsistentReference"],
      ["floorGroups.4.readerPort", "invalidReference"],
    ]);
  });

  test("S7 a holder's duress PIN differs from its own PIN; holders may share PINs", () => {
    expect(pathsAndCodes(issuesOf((d) => (d.holder("h-alice").duressPin = "1234")))).toEqual([
      ["holders.0.duressPin", "invalid"],
    ]);
    expect(parseSnapshot(rawBuilding((d) => (d.holder("h-bob").pin = "1234"))).ok).toBe(true);
    expect(parseSnapshot(rawBuilding((d) => (d.holder("h-bob").duressPin = "1234"))).ok).toBe(true);
  });

  test("S8 partition references name a listed partition", () => {
    expect(
      pathsAndCodes(
        issuesOf((d) => {
          d.holder("h-alice").partition = "p-x";
          d.raw.groups[0]!.partition = "p-x";
          d.floorGroup("fg-low").partition = "p-x";
          d.device("door-front").partition = [{ id: "p-x" }];
        }),
      ),
    ).toEqual([
      ["devices.0.partition.0.id", "unknownReference"],
      ["floorGroups.0.partition", "unknownReference"],
      ["groups.0.partition", "unknownReference"],
      ["holders.0.partition", "unknownReference"],
    ]);
    const ok = parseSnapshot(
      rawBuilding((d) => {
        d.raw.partitions.push({ id: "p-1", name: "Main" });
        d.holder("h-alice").partition = "p-1";
        d.device("door-front").partition = [{ id: "p-1", name: "Main" }];
      }),
    );
    expect(ok.ok).toBe(true);
  });

  test("S9 a device's cloud node is its connection's cloud node", () => {
    expect(pathsAndCodes(issuesOf((d) => (d.device("door-annex").cloudNode = "node-a")))).toEqual([
      ["devices.7.cloudNode", "inconsistentReference"],
    ]);
  });

  test("S13 a connection has what its type needs (ipaddress, port, macAddress), ethernet-only fields only on ethernet, and an ethernet controller's defaults", () => {
    const conn = (d: { raw: { connections: Record<string, unknown>[] } }, i: number, c: Record<string, unknown>) => {
      d.raw.connections[i] = {
        id: d.raw.connections[i]!.id,
        name: "Controller",
        cloudNode: d.raw.connections[i]!.cloudNode,
        ...c,
      };
    };
    // What each type needs: an ipaddress for ethernet and wirelessGateway, a port unless lockhub, a MAC address for a lockhub.
    expect(pathsAndCodes(issuesOf((d) => conn(d, 0, { type: "ethernet", port: 4000 })))).toEqual([
      ["connections.0.ipaddress", "invalid"],
    ]);
    expect(pathsAndCodes(issuesOf((d) => conn(d, 0, { type: "ethernet", ipaddress: "10.0.0.5" })))).toEqual([
      ["connections.0.port", "invalid"],
    ]);
    expect(pathsAndCodes(issuesOf((d) => conn(d, 0, { type: "wirelessGateway", port: 7, ipaddress: "" })))).toEqual([
      ["connections.0.ipaddress", "invalid"],
    ]);
    expect(pathsAndCodes(issuesOf((d) => conn(d, 0, { type: "usb" })))).toEqual([["connections.0.port", "invalid"]]);
    expect(pathsAndCodes(issuesOf((d) => conn(d, 0, { type: "wirelessCoordinator", port: null })))).toEqual([
      ["connections.0.port", "invalid"],
    ]);
    const hub = issuesOf((d) => conn(d, 1, { type: "lockhub", macAddress: null }));
    expect(pathsAndCodes(hub)).toEqual([["connections.1.macAddress", "invalid"]]);
    expect(hub[0]!.message).toBe("A lockhub connection needs a macAddress.");
    // protocol, ipv6Address and manufacturer are ethernet-only: each is reported on any other type.
    const usb = issuesOf((d) =>
      conn(d, 0, { type: "usb", port: 1, protocol: "IPv4", ipv6Address: "fd00::5", manufacturer: "VENDOR_A" }),
    );
    expect(pathsAndCodes(usb)).toEqual([
      ["connections.0.ipv6Address", "invalid"],
      ["connections.0.manufacturer", "invalid"],
      ["connections.0.protocol", "invalid"],
    ]);
    expect(usb.map((i) => i.message)).toContain(
      "manufacturer is used by ethernet connections only; this is a usb connection.",
    );
    // null is no value: a usb connection with null ethernet fields loads.
    const ok = (c: Record<string, unknown>) => {
      const r = parseSnapshot(rawBuilding((d) => conn(d, 0, c)));
      if (!r.ok) throw new Error(JSON.stringify(r.issues));
      return r.value.connections[0]! as Record<string, unknown>;
    };
    expect(ok({ type: "usb", port: 1, protocol: null, manufacturer: null, ipv6Address: null })).toMatchObject({
      type: "usb",
      protocol: null,
      manufacturer: null,
    });
    // Defaults: an ethernet controller speaks IPv6 and is VENDOR_B unless it says otherwise; other types get neither.
    expect(ok({ type: "ethernet", ipaddress: "10.0.0.5", port: 4000 })).toMatchObject({
      protocol: "IPv6",
      manufacturer: "VENDOR_B",
    });
    expect(
      ok({
        type: "ethernet",
        ipaddress: "10.0.0.5",
        port: 4000,
        protocol: "IPv4",
        manufacturer: "VENDOR_A",
        ipv6Address: "fd00::5",
      }),
    ).toMatchObject({ protocol: "IPv4", manufacturer: "VENDOR_A", ipv6Address: "fd00::5" });
    const gateway = ok({ type: "wirelessGateway", ipaddress: "10.0.0.7", port: 7 });
    expect([gateway.protocol, gateway.manufacturer]).toEqual([undefined, undefined]);
    const lockhub = ok({ type: "lockhub", macAddress: "00:1B:2C:4A:10:09" });
    expect([lockhub.port, lockhub.protocol, lockhub.manufacturer]).toEqual([null, undefined, undefined]);
    // A lockhub may still state a port.
    expect(ok({ type: "lockhub", macAddress: "00:1B:2C:4A:10:09", port: 9 }).port).toBe(9);
  });

  test("S14 a lockhub operates at most 64 locks: the 65th device on it is reported at the connection", () => {
    // conn-a (a lockhub) carries 7 devices; `n` more makes 7 + n.
    const locks = (n: number) => (d: { raw: { devices: Record<string, unknown>[] } }) => {
      for (let k = 0; k < n; k++)
        d.raw.devices.push({
          id: `lock-${k}`,
          name: `Lock ${k}`,
          cloudNode: "node-a",
          connection: "conn-a",
          port: 100 + k,
          type: "ioDevice",
          publicIcon: "other",
        });
    };
    expect(parseSnapshot(rawBuilding(locks(57))).ok).toBe(true);
    const over = issuesOf(locks(58));
    expect(pathsAndCodes(over)).toEqual([["connections.0.type", "overCapacity"]]);
    expect(over[0]!.message).toBe('Lockhub "conn-a" has 65 devices on it; a lockhub operates at most 64 locks.');
    // An ethernet controller has no such limit here (its model decides how many doors it runs).
    const ethernet = (d: { raw: { connections: Record<string, unknown>[] } }) => {
      d.raw.connections[0] = {
        id: "conn-a",
        name: "HQ controller",
        type: "ethernet",
        cloudNode: "node-a",
        ipaddress: "10.0.0.5",
        port: 4000,
      };
    };
    expect(
      parseSnapshot(
        rawBuilding((d) => {
          ethernet(d);
          locks(58)(d);
        }),
      ).ok,
    ).toBe(true);
  });

  test("S15 custom field definitions: the seed rules, defaults, a description wherever a regex is, ids unique per partition, the partition listed", () => {
    const snap = (customFields: unknown[]) => ({
      format: "rsop-system/1",
      systemId: "s",
      partitions: [
        { id: "p1", name: "One" },
        { id: "p2", name: "Two" },
      ],
      customFields,
    });
    const r = parseSnapshot(
      snap([
        { id: "badge", type: "string", partition: "p1" },
        { id: "badge", type: "number", decimals: 10, partition: "p2" },
      ]),
    );
    expect(
      r.ok && r.value.customFields.map((d) => [d.partition, d.id, d.displayName, d.required, d.visibility]),
    ).toEqual([
      ["p1", "badge", "badge", false, "visible"],
      ["p2", "badge", "badge", false, "visible"],
    ]);
    const bad = parseSnapshot(
      snap([
        { id: "a", type: "enum", partition: "p1" },
        { id: "b", type: "array", items: { type: "object" }, partition: "p1" },
        { id: "c", type: "object", fields: [{ id: "x", type: "string", regex: "^x" }], partition: "p1" },
        { id: "d", type: "number", min: 2, max: 1, decimals: 11, partition: "p1" },
        { id: "e", type: "string", regex: "(", description: "d", partition: "p1" },
        { id: "f", type: "string", partition: "p9" },
        { id: "f", type: "string", partition: "p9" },
      ]),
    );
    expect(pathsAndCodes(bad.ok ? [] : bad.issues)).toEqual([
      ["customFields.0.values", "invalid"],
      ["customFields.1.items.type", "invalidValue"],
      ["customFields.2.fields.0.description", "invalid"],
      ["customFields.3.decimals", "tooBig"],
      ["customFields.3.max", "invalid"],
      ["customFields.4.regex", "invalid"],
      ["customFields.5.partition", "unknownReference"],
      ["customFields.6.id", "duplicateId"],
      ["customFields.6.partition", "unknownReference"],
    ]);
  });

  test("S16 a holder's values are checked against its partition's definitions; required needs a non-null value; no partition, no fields", () => {
    const snap = (holders: unknown[]) => ({
      format: "rsop-system/1",
      systemId: "s",
      partitions: [
        { id: "p1", name: "One" },
        { id: "p2", name: "Two" },
      ],
      customFields: [
        { id: "badge", type: "string", regex: "^B", description: "B first", required: true, partition: "p1" },
        { id: "level", type: "number", max: 3, partition: "p1" },
        { id: "wing", type: "string", partition: "p2" },
      ],
      holders: holders.map((h, i) => ({ id: `h${i}`, firstName: "A", lastName: "B", ...(h as object) })),
    });
    expect(
      parseSnapshot(
        snap([
          { partition: "p1", customFields: { badge: "B1", level: null } },
          { partition: "p2", customFields: { wing: "East" } },
          { partition: null },
        ]),
      ).ok,
    ).toBe(true);
    const bad = parseSnapshot(
      snap([
        { partition: "p1", customFields: { badge: "X", level: 4, wing: "East" } },
        { partition: "p1", customFields: { badge: null } },
        { partition: null, customFields: { wing: "East" } },
      ]),
    );
    expect(pathsAndCodes(bad.ok ? [] : bad.issues)).toEqual([
      ["holders.0.customFields.badge", "invalidValue"],
      ["holders.0.customFields.level", "invalidValue"],
      ["holders.0.customFields.wing", "invalidKey"],
      ["holders.1.customFields.badge", "required"],
      ["holders.2.customFields.wing", "invalidKey"],
    ]);
  });

  test("S11 unknown keys are dropped; a node's loaded timezone is its own, else the system's", () => {
    const r = parseSnapshot(
      rawBuilding((d) => {
        (d.holder("h-alice") as Record<string, unknown>).shoeSize = 42;
        d.raw.extraTopLevel = true;
      }),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.holders[0]).not.toHaveProperty("shoeSize");
    expect(r.value).not.toHaveProperty("extraTopLevel");
    expect(r.value.cloudNodes.map((n) => n.timezone)).toEqual(["America/New_York", "Europe/London"]);
  });
});

// ---------------------------------------------------------------------------------------------
// Decision lines, through both deciders.

describe.each(IMPLS)("$name", (impl) => {
  const base = building();

  test("S1 every node knows every holder's credentials", () => {
    checker(impl, base)(cardAt("door-annex", T.WED_NOON, 17, 1001), aliceIn());
  });

  test("S2 a node without card formats reads H10301 with ENFORCED facility codes and parity", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_NOON, 17, 1001), aliceIn());
    at(cardAt("door-front", T.WED_NOON, 16, 1001), {
      reason: "facilityCodeMismatch",
      facilityCode: 16,
      credentialNumber: 1001,
    });
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 1001, [25]) } },
      { reason: "parityError", facilityCode: 17, credentialNumber: 1001 },
    );
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 1001).slice(1) } },
      { reason: "unknownCardFormat" },
    );
  });

  test("S3 a custom layout admitting 26–30 bits ignores a longer frame's extra bits", () => {
    const snap = building((d) => {
      d.node("node-a").cardFormat = [
        {
          id: "LOOSE26",
          min_input_bits: 26,
          max_input_bits: 30,
          layout: { facilityCode: { offset: 1, length: 8 }, cardNumber: { offset: 9, length: 16 } },
        },
      ];
    });
    const at = checker(impl, snap);
    at({ deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 1001) } }, aliceIn());
    at({ deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: `${h10301(17, 1001)}1011` } }, aliceIn());
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: `${h10301(17, 1001)}10110` } },
      { reason: "unknownCardFormat" },
    );
  });

  test("S4 an entry with a layout and a well-known id decodes by its layout", () => {
    const snap = building((d) => {
      d.node("node-a").cardFormat = [
        {
          id: "H10301",
          min_input_bits: 26,
          max_input_bits: 26,
          facility_code: "NOT_ENFORCED",
          layout: { facilityCode: null, cardNumber: { offset: 0, length: 26 } },
        },
      ];
    });
    // The whole frame is the card number: no facility code, no parity.
    checker(impl, snap)(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: bitsOf(1001, 26) } },
      aliceIn("r-staff-front", { facilityCode: null }),
    );
  });

  test("S4 a layout string decodes by that well-known layout whatever the id; an unknown id without a layout decodes raw", () => {
    const named = building((d) => {
      d.node("node-a").cardFormat = [
        { id: "lobby-readers", min_input_bits: 34, max_input_bits: 34, layout: "H10306" },
        { id: "H10301", min_input_bits: 37, max_input_bits: 37, layout: "H10304" },
      ];
    });
    let at = checker(impl, named);
    at(
      {
        deviceId: "door-front",
        at: T.WED_NOON,
        credential: { wiegand: encodeWiegand("H10306", { facilityCode: 17, cardNumber: 1001 }) },
      },
      aliceIn(),
    );
    at(
      {
        deviceId: "door-front",
        at: T.WED_NOON,
        credential: { wiegand: encodeWiegand("H10304", { facilityCode: 17, cardNumber: 1001 }) },
      },
      aliceIn(),
    );
    // The id "H10301" does not make 26-bit frames readable: its layout says 37.
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 1001) } },
      { reason: "unknownCardFormat" },
    );
    const raw = building((d) => {
      d.node("node-a").cardFormat = [
        {
          id: "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90",
          min_input_bits: 26,
          max_input_bits: 40,
          facility_code: "NOT_ENFORCED",
        },
      ];
    });
    at = checker(impl, raw);
    // The whole frame, of any admitted length, is the card number.
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: bitsOf(1001, 26) } },
      aliceIn("r-staff-front", { facilityCode: null }),
    );
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: bitsOf(1001, 40) } },
      aliceIn("r-staff-front", { facilityCode: null }),
    );
    // An H10301 frame of Alice's card is read whole: another number.
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 1001) } },
      { reason: "unknownCredential", credentialNumber: parseInt(h10301(17, 1001), 2) },
    );
  });

  test("S17 a raw format: no facility code and no parity; ENFORCED matches code-less credentials, FILTER_LIST denies raw reads, long frames overflow", () => {
    const rawNode = (f: Record<string, unknown>) =>
      building((d) => {
        d.node("node-a").cardFormat = [{ id: "site-raw", min_input_bits: 26, max_input_bits: 64, ...f } as never];
        d.credential("c-bob-card").facilityCode = null;
      });
    const read = (n: number | bigint, length = 26, extra: Record<string, unknown> = {}) => ({
      deviceId: "door-front",
      at: T.WED_NOON,
      credential: { wiegand: bitsOf(n, length) },
      ...extra,
    });
    // ENFORCED (the default): a credential without a facility code matches; one with a code does not.
    let at = checker(impl, rawNode({}));
    at(read(1002), { reason: "noActiveRule", ...BOB_CARD, facilityCode: null });
    at(read(1001), { reason: "facilityCodeMismatch", credentialNumber: 1001 });
    // No parity to fail, whatever enforce_parity says.
    for (const enforce_parity of [true, false]) {
      at = checker(impl, rawNode({ enforce_parity, facility_code: "NOT_ENFORCED" }));
      at(read(1001), aliceIn("r-staff-front", { facilityCode: null }));
      at(read(2 ** 26 - 1), { reason: "unknownCredential", credentialNumber: 2 ** 26 - 1 });
    }
    // FILTER_LIST: a raw read has no code, so it is never in the list; a decoded request is filtered by its own code.
    at = checker(impl, rawNode({ facility_code: "FILTER_LIST", allowed_facility_codes: [17] }));
    at(read(1001), { reason: "facilityCodeNotAllowed", credentialNumber: 1001 });
    const decoded = (facilityCode: number) => ({
      deviceId: "door-front",
      at: T.WED_NOON,
      credential: { credentialNumber: 1001, facilityCode },
    });
    at(decoded(17), aliceIn());
    at(decoded(16), { reason: "facilityCodeNotAllowed", facilityCode: 16, credentialNumber: 1001 });
    // Above 2^53−1 the number is read exactly (CN3) and reported as its decimal string; leading zeros do
    // not matter; the e-card check reads the same number.
    at = checker(impl, rawNode({ facility_code: "NOT_ENFORCED" }));
    at(read(1001, 64), aliceIn("r-staff-front", { facilityCode: null }));
    at(read(2n ** 53n + 1001n, 64), { reason: "unknownCredential", credentialNumber: String(2n ** 53n + 1001n) });
    const dead = { node: { online: false, offlineSeconds: 259_201 } };
    at(read(4242, 30, dead), { reason: "ecard", credentialNumber: 4242 });
    at(read(2n ** 60n + 4242n, 64, dead), { reason: "offlineEcardOnly", credentialNumber: String(2n ** 60n + 4242n) });
  });

  test("S10 an additionalReader uses the rules that name it, not its primary reader's", () => {
    const at = checker(impl, base);
    at(cardAt("door-side", T.WED_NOON, 17, 1001), { reason: "noActiveRule", ...ALICE_CARD });
    const named = building((d) => d.addRule({ id: "r-side", groupId: "g-staff", devices: ["door-side"] }));
    checker(impl, named)(cardAt("door-side", T.WED_NOON, 17, 1001), aliceIn("r-side"));
  });

  // --- requests -------------------------------------------------------------------------------

  test("R1 a request is checked whole before step 1: malformed and naming an unknown device is badRequest", () => {
    const at = checker(impl, base);
    at({ deviceId: "door-nowhere", at: "yesterday", pin: "1234" }, { reason: "badRequest" });
    at({ deviceId: "door-nowhere", at: T.WED_NOON, pin: "12x4" }, { reason: "badRequest" });
    at({ deviceId: "door-nowhere", at: T.WED_NOON, pin: "1234" }, { reason: "unknownDevice" });
    at({ deviceId: "door-front", at: T.WED_NOON, pin: "1234", input: "bluetooth" }, { reason: "badRequest" });
    at({ deviceId: "", at: T.WED_NOON, pin: "1234" }, { reason: "badRequest" });
    at({ deviceId: 7, at: T.WED_NOON, pin: "1234" }, { reason: "badRequest" });
    at({ at: T.WED_NOON, pin: "1234" }, { reason: "badRequest" });
    at(undefined, { reason: "badRequest" });
  });

  test("R2 at: epoch ms or ISO 8601 with Z/±HH:mm/±HHmm/±HH (also t, z and a comma fraction); no offset is malformed", () => {
    const at = checker(impl, base);
    const bobIn: Expected = { reason: "allowed", activeRuleId: "r-night-front", ...BOB_CARD };
    const bobOut: Expected = { reason: "noActiveRule", ...BOB_CARD };
    // Bob's night shift ends Saturday 2026-03-07 06:00 EST = 11:00Z.
    const cases: [unknown, Expected][] = [
      ["2026-03-07T10:59:59Z", bobIn],
      ["2026-03-07T10:59:59.999999Z", bobIn],
      ["2026-03-07T10:59Z", bobIn],
      ["2026-03-07T11:00Z", bobOut],
      ["2026-03-07T16:29:59+05:30", bobIn],
      ["2026-03-07T16:30:00+05:30", bobOut],
      ["2026-03-07T16:29:59+0530", bobIn],
      ["2026-03-07T16:30:00+0530", bobOut],
      ["2026-03-07T15:59:59+05", bobIn],
      ["2026-03-07T16:00:00+05", bobOut],
      ["2026-03-07T05:59:59-05:00", bobIn],
      // ISO 8601 also allows a lower-case t and z, and a comma as the decimal sign.
      ["2026-03-07t10:59:59z", bobIn],
      ["2026-03-07t11:00:00z", bobOut],
      ["2026-03-07T10:59:59,999Z", bobIn],
      ["2026-03-07t05:59:59,9999999-05:00", bobIn],
      ["2026-03-07T10:59:59,Z", { reason: "badRequest" }],
      ["2026-03-07T10:59:59.5,5Z", { reason: "badRequest" }],
      [Date.UTC(2026, 2, 7, 10, 59, 59, 999), bobIn],
      [Date.UTC(2026, 2, 7, 11), bobOut],
      ["2026-03-07T05:59:59", { reason: "badRequest" }],
      ["2026-03-07", { reason: "badRequest" }],
      ["2026-03-07 05:59:59Z", { reason: "badRequest" }],
      ["2026-02-30T05:59:59Z", { reason: "badRequest" }],
      ["2026-03-07T24:00:00Z", { reason: "badRequest" }],
      [Date.UTC(2026, 2, 7, 10) + 0.5, { reason: "badRequest" }],
      [String(Date.UTC(2026, 2, 7, 10)), { reason: "badRequest" }],
      [null, { reason: "badRequest" }],
    ];
    for (const [instant, expected] of cases) at(cardAt("door-front", instant as string, 17, 1002), expected);
  });

  test("R3 instants outside [1970-01-01T00:00Z, 2100-01-01T00:00Z) are badRequest", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", 0, 17, 1001), aliceIn());
    at(cardAt("door-front", "1970-01-01T00:00:00Z", 17, 1001), aliceIn());
    at(cardAt("door-front", -1, 17, 1001), { reason: "badRequest" });
    at(cardAt("door-front", "1969-12-31T23:59:59.999Z", 17, 1001), { reason: "badRequest" });
    at(cardAt("door-front", "1970-01-01T00:30:00+01:00", 17, 1001), { reason: "badRequest" });
    at(cardAt("door-front", "2099-12-31T23:59:59.999Z", 17, 1001), aliceIn());
    at(cardAt("door-front", 4_102_444_799_999, 17, 1001), aliceIn());
    at(cardAt("door-front", "2100-01-01T00:00:00Z", 17, 1001), { reason: "badRequest" });
    at(cardAt("door-front", 4_102_444_800_000, 17, 1001), { reason: "badRequest" });
    at(cardAt("door-front", "2099-12-31T19:00:00-05:00", 17, 1001), { reason: "badRequest" });
  });

  test("R4 a request presents a credential, a PIN or both; a PIN is a non-empty string of digits", () => {
    const at = checker(impl, base);
    at({ deviceId: "door-front", at: T.WED_NOON }, { reason: "badRequest" });
    at({ deviceId: "door-front", at: T.WED_NOON, credential: null, pin: null }, { reason: "badRequest" });
    at(pinAt("door-front", T.WED_NOON, ""), { reason: "badRequest" });
    at(pinAt("door-front", T.WED_NOON, "12 4"), { reason: "badRequest" });
    at(pinAt("door-front", T.WED_NOON, "-123"), { reason: "badRequest" });
    at({ deviceId: "door-front", at: T.WED_NOON, pin: 1234 }, { reason: "badRequest" });
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { pin: "" }), { reason: "badRequest" });
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: null, pin: "1234" },
      { reason: "allowed", holderId: "h-alice", activeRuleId: "r-staff-front" },
    );
  });

  test("R5 one credential kind only; credentialNumber/facilityCode are non-negative safe integers", () => {
    const at = checker(impl, base);
    const card = (credential: unknown) => ({ deviceId: "door-front", at: T.WED_NOON, credential });
    at(card({ wiegand: h10301(17, 1001), credentialNumber: 1001 }), { reason: "badRequest" });
    at(card({ credentialNumber: 5001, mobile: "token", credentialId: "c-alice-phone" }), { reason: "badRequest" });
    at(card({}), { reason: "badRequest" });
    at(card({ credentialNumber: -1 }), { reason: "badRequest" });
    at(card({ credentialNumber: 1001.5 }), { reason: "badRequest" });
    at(card({ credentialNumber: 2 ** 53 }), { reason: "badRequest" });
    // A decimal string is a card number's other spelling (CN2): "1001" is 1001, "01001" is malformed.
    at(card({ credentialNumber: "01001" }), { reason: "badRequest" });
    at(card({ credentialNumber: "1001" }), { reason: "facilityCodeMismatch", credentialNumber: 1001 });
    at(card({ credentialNumber: 1001, facilityCode: -17 }), { reason: "badRequest" });
    at(card({ credentialNumber: 1001, facilityCode: 17.5 }), { reason: "badRequest" });
    at(card({ wiegand: "01".repeat(4) }), { reason: "badRequest" }); // 8 bits
    at(card({ wiegand: "1".repeat(513) }), { reason: "badRequest" });
    at(card({ wiegand: h10301(17, 1001).replace("1", "2") }), { reason: "badRequest" });
    at(card({ mobile: "nfc", credentialId: "c-alice-phone" }), { reason: "badRequest" });
    at(card({ mobile: "token", credentialId: "" }), { reason: "badRequest" });
    at(card({ mobile: "token" }), { reason: "badRequest" });
    at(card("1001"), { reason: "badRequest" });
    // Well formed: explicit null facility code (matches only a null-code credential).
    at(card({ credentialNumber: 1001, facilityCode: null }), {
      reason: "facilityCodeMismatch",
      credentialNumber: 1001,
    });
    at(card({ credentialNumber: 1001, facilityCode: 17 }), aliceIn());
  });

  test("R6 offline with time known needs offlineSeconds; timeKnown defaults to true", () => {
    const at = checker(impl, base);
    const withNode = (node: unknown) => cardAt("door-front", T.WED_NOON, 17, 1001, { node });
    at(withNode({ online: false }), { reason: "badRequest" });
    at(withNode({ online: false, timeKnown: true }), { reason: "badRequest" });
    at(withNode({ online: false, offlineSeconds: -1 }), { reason: "badRequest" });
    at(withNode({ online: false, offlineSeconds: 1.5 }), { reason: "badRequest" });
    at(withNode({ online: false, offlineSeconds: "60" }), { reason: "badRequest" });
    at(withNode({ online: false, timeKnown: "no", offlineSeconds: 60 }), { reason: "badRequest" });
    at(withNode({ online: "false" }), { reason: "badRequest" });
    at(withNode({}), { reason: "badRequest" });
    at(withNode({ online: false, offlineSeconds: 60 }), aliceIn());
    at(withNode({ online: true }), aliceIn());
    at(withNode(null), aliceIn());
    // Time unknown needs no offlineSeconds; policy 0 then means e-card only.
    at(withNode({ online: false, timeKnown: false }), {
      reason: "offlineEcardOnly",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  // --- evaluation -----------------------------------------------------------------------------

  test("E1 decoded fields are reported from step 2 on, and null where nothing was read", () => {
    const wide = building((d) => {
      d.node("node-a").cardFormat = [
        {
          id: "WIDE64",
          min_input_bits: 64,
          max_input_bits: 64,
          facility_code: "NOT_ENFORCED",
          layout: { facilityCode: null, cardNumber: { offset: 4, length: 60 } },
        },
      ];
    });
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_NOON, 17, 7777), {
      reason: "unknownCredential",
      facilityCode: 17,
      credentialNumber: 7777,
    });
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(200, 65535, [0]) } },
      { reason: "parityError", facilityCode: 200, credentialNumber: 65535 },
    );
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 7777, facilityCode: 3 } },
      { reason: "unknownCredential", facilityCode: 3, credentialNumber: 7777 },
    );
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 7777 } },
      { reason: "unknownCredential", credentialNumber: 7777 },
    );
    at(cardAt("door-nowhere", T.WED_NOON, 17, 1001), { reason: "unknownDevice" });
    at(mobileAt("door-front", T.WED_NOON, "token", "c-alice-phone"), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
      activeRuleId: "r-staff-front",
    });
    at(pinAt("door-front", T.WED_NOON, "1234"), {
      reason: "allowed",
      holderId: "h-alice",
      activeRuleId: "r-staff-front",
    });
    const w = checker(impl, wide);
    const frame = (n: bigint) => ({
      deviceId: "door-front",
      at: T.WED_NOON,
      credential: { wiegand: `0000${bitsOf(n, 60)}` },
    });
    w(frame(1001n), aliceIn("r-staff-front", { facilityCode: null }));
    w(frame(2n ** 59n + 1001n), { reason: "unknownCredential", credentialNumber: String(2n ** 59n + 1001n) });
  });

  test("E2 e-cards match on the card number alone and name no holder; e-card-only refuses everything else", () => {
    const at = checker(impl, base);
    const dead = { node: { online: false, offlineSeconds: 259_201 } };
    at(cardAt("door-front", T.WED_NOON, 99, 4242, dead), { reason: "ecard", facilityCode: 99, credentialNumber: 4242 });
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 4242 }, ...dead },
      { reason: "ecard", credentialNumber: 4242 },
    );
    at(cardAt("door-front", T.WED_NOON, 17, 4242, { ...dead, pin: "1234" }), {
      reason: "ecard",
      facilityCode: 17,
      credentialNumber: 4242,
    });
    at(mobileAt("door-front", T.WED_NOON, "token", "c-alice-phone", dead), { reason: "offlineEcardOnly" });
    at(pinAt("door-front", T.WED_NOON, "1234", dead), { reason: "offlineEcardOnly" });
    at(pinAt("door-front", T.WED_NOON, "0000", dead), { reason: "offlineEcardOnly" });
    at(cardAt("door-front", T.WED_NOON, 17, 1001, dead), {
      reason: "offlineEcardOnly",
      facilityCode: 17,
      credentialNumber: 1001,
    });
    at(cardAt("door-front", T.WED_NOON, 17, 7777, dead), {
      reason: "offlineEcardOnly",
      facilityCode: 17,
      credentialNumber: 7777,
    });
    // Online, an e-card number is just a number: it is nobody's credential.
    at(cardAt("door-front", T.WED_NOON, 17, 4242), {
      reason: "unknownCredential",
      facilityCode: 17,
      credentialNumber: 4242,
    });
    // E-cards are per node: node-b lists none.
    at(cardAt("door-annex", T.WED_NOON, 17, 4242, dead), {
      reason: "offlineEcardOnly",
      facilityCode: 17,
      credentialNumber: 4242,
    });
    // Steps 1 and 2 still come first (SPEC §3 order).
    at(cardAt("door-nowhere", T.WED_NOON, 17, 4242, dead), { reason: "unknownDevice" });
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 4242, [0]) }, ...dead },
      { reason: "parityError", facilityCode: 17, credentialNumber: 4242 },
    );
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: "1".repeat(30) }, ...dead },
      { reason: "unknownCardFormat" },
    );
    const filtered = building((d) => {
      d.node("node-a").cardFormat = [
        {
          id: "H10301",
          min_input_bits: 26,
          max_input_bits: 26,
          facility_code: "FILTER_LIST",
          allowed_facility_codes: [17],
        },
      ];
    });
    checker(impl, filtered)(cardAt("door-front", T.WED_NOON, 99, 4242, dead), {
      reason: "facilityCodeNotAllowed",
      facilityCode: 99,
      credentialNumber: 4242,
    });
    checker(impl, filtered)(cardAt("door-front", T.WED_NOON, 17, 4242, dead), {
      reason: "ecard",
      facilityCode: 17,
      credentialNumber: 4242,
    });
  });

  test("E3 offline with time unknown: steps 4–5 without dates, candidates without windows, deny candidates win", () => {
    const p1 = building((d) => {
      d.node("node-a").offlinePolicy = 1;
      d.holder("h-alice").activeDate = "2030-01-01T00:00:00"; // dates unknown offline
      d.holder("h-bob").expireDate = "2020-01-01T00:00:00";
      d.addRule({ id: "r-lab-24x7", groupId: "g-staff", devices: ["door-lab"], authenticationPolicy: "cardAndPin" });
    });
    const at1 = checker(impl, p1);
    at1(cardAt("door-front", T.WED_NOON, 17, 1001, OFFLINE_UNKNOWN), { ...aliceIn(), reason: "offline24x7" });
    at1(cardAt("door-lab", T.WED_NOON, 17, 1001, OFFLINE_UNKNOWN), {
      reason: "pinRequired",
      activeRuleId: "r-lab-24x7",
      ...ALICE_CARD,
    });
    at1(cardAt("door-lab", T.WED_NOON, 17, 1001, { ...OFFLINE_UNKNOWN, pin: "0000" }), {
      reason: "wrongPin",
      activeRuleId: "r-lab-24x7",
      ...ALICE_CARD,
    });
    at1(cardAt("door-lab", T.WED_NOON, 17, 1001, { ...OFFLINE_UNKNOWN, pin: "1234" }), {
      ...aliceIn("r-lab-24x7"),
      reason: "offline24x7",
    });
    at1(cardAt("door-front", T.WED_NOON, 17, 1002, OFFLINE_UNKNOWN), { reason: "offlineNot24x7", ...BOB_CARD });
    at1(cardAt("door-front", T.WED_NOON, 17, 1004, OFFLINE_UNKNOWN), {
      reason: "offlineNot24x7",
      holderId: "h-dave",
      credentialId: "c-dave-card",
      facilityCode: 17,
      credentialNumber: 1004,
    });
    at1(cardAt("door-front", T.WED_NOON, 17, 7777, OFFLINE_UNKNOWN), {
      reason: "unknownCredential",
      facilityCode: 17,
      credentialNumber: 7777,
    });
    // Elevator: only the 24x7 rule's floors.
    at1(cardAt("elev-1", T.WED_10, 17, 1001, OFFLINE_UNKNOWN), {
      ...aliceIn("r-staff-low"),
      reason: "offline24x7",
      floors: ["floor-1", "floor-2"],
    });

    const p2 = building((d) => {
      d.node("node-a").offlinePolicy = 2;
      d.holder("h-bob").expireDate = "2020-01-01T00:00:00";
      d.rule("r-night-front").startDate = "2030-01-01";
      d.addRule({ id: "r-night-lab-off", groupId: "g-night", devices: ["door-lab"], enabled: false });
    });
    const at2 = checker(impl, p2);
    at2(cardAt("door-front", T.WED_NOON, 17, 1002, OFFLINE_UNKNOWN), {
      reason: "offlineAnySchedule",
      activeRuleId: "r-night-front",
      ...BOB_CARD,
    });
    at2(cardAt("door-lab", T.WED_NOON, 17, 1002, OFFLINE_UNKNOWN), { reason: "noActiveRule", ...BOB_CARD });
    at2(cardAt("door-front", T.WED_NOON, 17, 1004, OFFLINE_UNKNOWN), {
      reason: "noActiveRule",
      holderId: "h-dave",
      credentialId: "c-dave-card",
      facilityCode: 17,
      credentialNumber: 1004,
    });
    at2(cardAt("door-lab", T.WED_20, 17, 1001, OFFLINE_UNKNOWN), {
      reason: "pinRequired",
      activeRuleId: "r-staff-lab",
      ...ALICE_CARD,
    });
    at2(cardAt("door-lab", T.WED_20, 17, 1001, { ...OFFLINE_UNKNOWN, pin: "1234" }), {
      ...aliceIn("r-staff-lab"),
      reason: "offlineAnySchedule",
    });
    at2(cardAt("elev-1", T.SAT_NOON, 17, 1001, OFFLINE_UNKNOWN), {
      ...aliceIn("r-staff-high"),
      reason: "offlineAnySchedule",
      floors: ["floor-1", "floor-2", "floor-3"],
    });

    // A deny rule can't be proven inactive without a clock (both policies), and steps 4–5 still run.
    for (const policy of [1, 2] as const) {
      const snap = building((d) => {
        d.node("node-a").offlinePolicy = policy;
        d.addRule({
          id: "r-deny-sunday",
          groupId: "g-staff",
          devices: ["door-front"],
          allow: false,
          startTime: "03:00:00",
          stopTime: "04:00:00",
          recurring: ["Sun"],
        });
        d.holder("h-carol").enabled = false;
      });
      const at = checker(impl, snap);
      at(cardAt("door-front", T.WED_NOON, 17, 1001, OFFLINE_UNKNOWN), {
        reason: "deniedByRule",
        activeRuleId: "r-deny-sunday",
        ...ALICE_CARD,
      });
      at(cardAt("door-front", T.WED_NOON, 17, 1003, OFFLINE_UNKNOWN), {
        reason: "holderDisabled",
        holderId: "h-carol",
        credentialId: "c-carol-card",
        facilityCode: 17,
        credentialNumber: 1003,
      });
      at(mobileAt("door-front", T.WED_NOON, "token", "c-carol-phone", OFFLINE_UNKNOWN), {
        reason: "credentialPending",
        holderId: "h-carol",
        credentialId: "c-carol-phone",
      });
      at(mobileAt("door-front", T.WED_NOON, "touch", "c-alice-phone", OFFLINE_UNKNOWN), {
        reason: "bleNotSupported",
        holderId: "h-alice",
        credentialId: "c-alice-phone",
      });
    }
  });

  test("E4 24x7 is a property of one rule: enabled, allow, every day, whole day; its dates are ignored", () => {
    const scenario = (
      rules: {
        id: string;
        startTime?: string;
        stopTime?: string;
        recurring?: string[];
        enabled?: boolean;
        endDate?: string;
      }[],
    ) =>
      building((d) => {
        d.node("node-a").offlinePolicy = 1;
        d.keepRules();
        for (const r of rules)
          d.addRule({ groupId: "g-staff", devices: ["door-front"], ...r } as Parameters<typeof d.addRule>[0]);
      });
    const scan = (snap: ReturnType<typeof building>, expected: Expected) =>
      checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1001, OFFLINE_UNKNOWN), expected);
    const in24 = (id: string): Expected => ({ ...aliceIn(id), reason: "offline24x7" });
    const not24: Expected = { reason: "offlineNot24x7", ...ALICE_CARD };
    scan(scenario([{ id: "r-a", startTime: "00:00:00", stopTime: "24:00:00" }]), in24("r-a"));
    scan(scenario([{ id: "r-a", startTime: "08:00:00", stopTime: "08:00:00" }]), in24("r-a"));
    scan(scenario([{ id: "r-a", startTime: "00:00:00", stopTime: "00:00:00" }]), in24("r-a"));
    scan(scenario([{ id: "r-a", endDate: "2020-01-01" }]), in24("r-a"));
    scan(scenario([{ id: "r-a", startTime: "00:00:00", stopTime: "23:59:59" }]), not24);
    scan(scenario([{ id: "r-a", recurring: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri"] }]), not24);
    scan(scenario([{ id: "r-a", enabled: false }]), not24);
    // Two rules that together cover the week are not a 24x7 rule.
    scan(
      scenario([
        { id: "r-a", startTime: "00:00:00", stopTime: "12:00:00" },
        { id: "r-b", startTime: "12:00:00", stopTime: "24:00:00" },
      ]),
      not24,
    );
    // Online, the expired rule's dates do apply.
    checker(impl, scenario([{ id: "r-a", endDate: "2020-01-01" }]))(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "noActiveRule",
      ...ALICE_CARD,
    });
  });

  test("E5 card reads match card credentials; phones match digital credentials of the requested kind", () => {
    const snap = building((d) => {
      d.device("door-front").supportBleCredentials = true;
      d.holder("h-bob").credentials!.push(
        { id: "c-bob-touch", credentialNumber: 6001, types: ["touch"] },
        { id: "c-bob-hybrid", credentialNumber: 6002, facilityCode: 17, types: ["card", "touch"] },
      );
      d.rule("r-night-front").recurring = [...ALL_DAYS];
      d.rule("r-night-front").startTime = d.rule("r-night-front").stopTime = "00:00:00";
    });
    const at = checker(impl, snap);
    // Alice's phone number 5001 is not a card.
    at(cardAt("door-front", T.WED_NOON, 17, 5001), {
      reason: "unknownCredential",
      facilityCode: 17,
      credentialNumber: 5001,
    });
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 5001 } },
      { reason: "unknownCredential", credentialNumber: 5001 },
    );
    // A card credential is not a phone.
    at(mobileAt("door-front", T.WED_NOON, "token", "c-alice-card"), { reason: "unknownCredential" });
    at(mobileAt("door-front", T.WED_NOON, "token", "c-nobody"), { reason: "unknownCredential" });
    // A touch-only phone is not a token.
    at(mobileAt("door-front", T.WED_NOON, "token", "c-bob-touch"), { reason: "unknownCredential" });
    at(mobileAt("door-front", T.WED_NOON, "touch", "c-bob-touch"), {
      reason: "allowed",
      holderId: "h-bob",
      credentialId: "c-bob-touch",
      activeRuleId: "r-night-front",
    });
    // A credential with the card type is read as a card, never as a phone.
    at(mobileAt("door-front", T.WED_NOON, "touch", "c-bob-hybrid"), { reason: "unknownCredential" });
    at(cardAt("door-front", T.WED_NOON, 17, 6002), {
      reason: "allowed",
      holderId: "h-bob",
      credentialId: "c-bob-hybrid",
      activeRuleId: "r-night-front",
      facilityCode: 17,
      credentialNumber: 6002,
    });
  });

  test("E6 step 4 order: identify, then credentialPending, then bleNotSupported, then insecureRead", () => {
    const snap = building((d) => {
      d.device("door-front").securedReadsOnly = true;
      d.credential("c-carol-phone").types = ["touch"];
      d.holder("h-dave").pin = "1234";
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", T.WED_NOON, 17, 7777), {
      reason: "unknownCredential",
      facilityCode: 17,
      credentialNumber: 7777,
    });
    at(cardAt("door-front", T.WED_NOON, 18, 1001), {
      reason: "facilityCodeMismatch",
      facilityCode: 18,
      credentialNumber: 1001,
    });
    at(pinAt("door-front", T.WED_NOON, "0000"), { reason: "unknownPin" });
    at(pinAt("door-front", T.WED_NOON, "1234"), { reason: "ambiguousPin" });
    // Pending beats no-BLE; no-BLE beats (the absent) insecure read for phones.
    at(mobileAt("door-front", T.WED_NOON, "touch", "c-carol-phone"), {
      reason: "credentialPending",
      holderId: "h-carol",
      credentialId: "c-carol-phone",
    });
    at(mobileAt("door-front", T.WED_NOON, "touch", "c-alice-phone"), {
      reason: "bleNotSupported",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
    });
    at(cardAt("door-front", T.WED_NOON, 17, 1001), { reason: "insecureRead", ...ALICE_CARD });
    // And all of step 4 precedes the holder (step 5).
    const disabled = building((d) => {
      d.device("door-front").securedReadsOnly = true;
      d.holder("h-alice").enabled = false;
    });
    checker(impl, disabled)(cardAt("door-front", T.WED_NOON, 17, 1001), { reason: "insecureRead", ...ALICE_CARD });
    checker(impl, disabled)(mobileAt("door-front", T.WED_NOON, "touch", "c-alice-phone"), {
      reason: "bleNotSupported",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
    });
  });

  test("E7 securedReadsOnly admits phones and encryptedOsdp reads; card or PIN over wiegand/unencryptedOsdp is insecureRead", () => {
    const snap = building((d) => {
      d.device("door-front").securedReadsOnly = true;
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { input: "encryptedOsdp" }), aliceIn());
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { input: "unencryptedOsdp" }), {
      reason: "insecureRead",
      ...ALICE_CARD,
    });
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { input: "wiegand" }), { reason: "insecureRead", ...ALICE_CARD });
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 1001, facilityCode: 17 } },
      { reason: "insecureRead", ...ALICE_CARD },
    );
    at(pinAt("door-front", T.WED_NOON, "1234"), { reason: "insecureRead", holderId: "h-alice" });
    at(pinAt("door-front", T.WED_NOON, "1234", { input: "unencryptedOsdp" }), {
      reason: "insecureRead",
      holderId: "h-alice",
    });
    at(pinAt("door-front", T.WED_NOON, "1234", { input: "encryptedOsdp" }), {
      reason: "allowed",
      holderId: "h-alice",
      activeRuleId: "r-staff-front",
    });
    at(mobileAt("door-front", T.WED_NOON, "token", "c-alice-phone"), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
      activeRuleId: "r-staff-front",
    });
    at(mobileAt("door-front", T.WED_NOON, "token", "c-alice-phone", { input: "unencryptedOsdp", pin: "1234" }), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
      activeRuleId: "r-staff-front",
    });
  });

  test("E8 PIN alone looks at every holder, enabled or not; two or more holders is ambiguousPin", () => {
    const disabledTwin = building((d) => {
      d.holder("h-bob").pin = "1234";
      d.holder("h-bob").enabled = false;
    });
    checker(impl, disabledTwin)(pinAt("door-front", T.WED_NOON, "1234"), { reason: "ambiguousPin" });
    // One holder's PIN is another's duress PIN.
    const duressTwin = building((d) => {
      d.holder("h-bob").duressPin = "1234";
    });
    checker(impl, duressTwin)(pinAt("door-front", T.WED_NOON, "1234"), { reason: "ambiguousPin" });
    // A single disabled holder is found, then refused.
    const disabled = building((d) => {
      d.holder("h-alice").enabled = false;
    });
    checker(impl, disabled)(pinAt("door-front", T.WED_NOON, "1234"), { reason: "holderDisabled", holderId: "h-alice" });
    // With a card, shared PINs do not matter: the card names the holder.
    checker(impl, disabledTwin)(cardAt("door-lab", T.WED_10, 17, 1001, { pin: "1234" }), aliceIn("r-staff-lab"));
  });

  test("E9 duress fires on a denial", () => {
    const at = checker(impl, base);
    at(pinAt("door-front", T.WED_NOON, "9999"), {
      reason: "allowed",
      holderId: "h-alice",
      activeRuleId: "r-staff-front",
      duress: true,
    });
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { pin: "9999" }), aliceIn("r-staff-front", { duress: true }));
    at(cardAt("door-lab", T.WED_10, 17, 1001, { pin: "9999" }), aliceIn("r-staff-lab", { duress: true }));
    // Denials that name Alice still raise the alarm.
    at(pinAt("door-lab", T.WED_10, "9999"), {
      reason: "cardRequired",
      holderId: "h-alice",
      activeRuleId: "r-staff-lab",
      duress: true,
    });
    at(cardAt("door-lab", T.WED_20, 17, 1001, { pin: "9999" }), {
      reason: "noActiveRule",
      ...ALICE_CARD,
      duress: true,
    });
    at(pinAt("door-side", T.WED_NOON, "9999"), { reason: "noActiveRule", holderId: "h-alice", duress: true });
    const disabled = building((d) => {
      d.holder("h-alice").enabled = false;
      d.device("door-lab").securedReadsOnly = true;
    });
    checker(impl, disabled)(cardAt("door-front", T.WED_NOON, 17, 1001, { pin: "9999" }), {
      reason: "holderDisabled",
      ...ALICE_CARD,
      duress: true,
    });
    checker(impl, disabled)(cardAt("door-lab", T.WED_NOON, 17, 1001, { pin: "9999" }), {
      reason: "insecureRead",
      ...ALICE_CARD,
      duress: true,
    });
    // No holder named (or another holder named): no duress.
    at(cardAt("door-front", T.WED_NOON, 17, 7777, { pin: "9999" }), {
      reason: "unknownCredential",
      facilityCode: 17,
      credentialNumber: 7777,
    });
    at(cardAt("door-front", T.WED_NOON, 18, 1001, { pin: "9999" }), {
      reason: "facilityCodeMismatch",
      facilityCode: 18,
      credentialNumber: 1001,
    });
    at(cardAt("door-nowhere", T.WED_NOON, 17, 1001, { pin: "9999" }), { reason: "unknownDevice" });
    at(cardAt("door-front", T.WED_NOON, 17, 1002, { pin: "9999" }), { reason: "noActiveRule", ...BOB_CARD });
    at(cardAt("door-front", T.WED_NOON, 17, 4242, { pin: "9999", node: { online: false, offlineSeconds: 259_201 } }), {
      reason: "ecard",
      facilityCode: 17,
      credentialNumber: 4242,
    });
    const shared = building((d) => {
      d.holder("h-bob").pin = "9999";
    });
    checker(impl, shared)(pinAt("door-front", T.WED_NOON, "9999"), { reason: "ambiguousPin" });
  });

  test("E10 a card with a PIN matching neither of the holder's PINs presents {card}", () => {
    const snap = building((d) => {
      d.addRule({ id: "r-lab-pinonly", groupId: "g-night", devices: ["door-lab"], authenticationPolicy: "pinOnly" });
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { pin: "0000" }), aliceIn());
    at(mobileAt("door-front", T.WED_NOON, "token", "c-alice-phone", { pin: "0000" }), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
      activeRuleId: "r-staff-front",
    });
    at(cardAt("door-lab", T.WED_10, 17, 1001, { pin: "0000" }), {
      reason: "wrongPin",
      activeRuleId: "r-staff-lab",
      ...ALICE_CARD,
    });
    at(cardAt("door-lab", T.WED_10, 17, 1002, { pin: "1234" }), {
      reason: "wrongPin",
      activeRuleId: "r-lab-pinonly",
      ...BOB_CARD,
    });
    at(cardAt("door-lab", T.WED_10, 17, 1002, { pin: "5678" }), {
      reason: "allowed",
      activeRuleId: "r-lab-pinonly",
      ...BOB_CARD,
    });
  });

  test("E11 with no accepting rule, the smallest-id applicable allow rule gives the reason", () => {
    const snap = building((d) => {
      d.keepRules();
      d.addRule({ id: "r-b", groupId: "g-staff", devices: ["door-lab"], authenticationPolicy: "pinOnly" });
      d.addRule({ id: "r-a", groupId: "g-staff", devices: ["door-lab"], authenticationPolicy: "cardAndPin" });
      d.addRule({ id: "r-c", groupId: "g-staff", devices: ["door-front"], authenticationPolicy: "cardOnly" });
      d.device("door-front").authenticationPolicy = "pinOnly"; // cardOnly ∩ pinOnly = cardAndPin
    });
    const at = checker(impl, snap);
    at(cardAt("door-lab", T.WED_NOON, 17, 1001), { reason: "pinRequired", activeRuleId: "r-a", ...ALICE_CARD });
    at(cardAt("door-lab", T.WED_NOON, 17, 1001, { pin: "0000" }), {
      reason: "wrongPin",
      activeRuleId: "r-a",
      ...ALICE_CARD,
    });
    at(pinAt("door-lab", T.WED_NOON, "1234"), { reason: "allowed", holderId: "h-alice", activeRuleId: "r-b" });
    at(cardAt("door-lab", T.WED_NOON, 17, 1001, { pin: "1234" }), aliceIn("r-a"));
    at(cardAt("door-front", T.WED_NOON, 17, 1001), { reason: "pinRequired", activeRuleId: "r-c", ...ALICE_CARD });
    at(pinAt("door-front", T.WED_NOON, "1234"), { reason: "cardRequired", holderId: "h-alice", activeRuleId: "r-c" });
    at(mobileAt("door-front", T.WED_NOON, "token", "c-alice-phone"), {
      reason: "pinRequired",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
      activeRuleId: "r-c",
    });
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { pin: "1234" }), aliceIn("r-c"));
    // A null rule policy combined with the device's cardAndPin is cardAndPin.
    const orPin = building((d) => {
      d.device("door-front").authenticationPolicy = "cardAndPin";
    });
    checker(impl, orPin)(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "pinRequired",
      activeRuleId: "r-staff-front",
      ...ALICE_CARD,
    });
    checker(impl, orPin)(pinAt("door-front", T.WED_NOON, "1234"), {
      reason: "cardRequired",
      holderId: "h-alice",
      activeRuleId: "r-staff-front",
    });
  });

  test("E12 activeRuleId names the deciding rule, and is null for every other reason", () => {
    const snap = building((d) => {
      d.addRule({
        id: "r-deny-lunch",
        groupId: "g-staff",
        devices: ["door-lab"],
        allow: false,
        startTime: "12:00:00",
        stopTime: "13:00:00",
      });
      d.holder("h-carol").expireDate = "2026-01-01T00:00:00";
    });
    const at = checker(impl, snap);
    at(cardAt("door-lab", T.WED_NOON, 17, 1001, { pin: "1234" }), {
      reason: "deniedByRule",
      activeRuleId: "r-deny-lunch",
      ...ALICE_CARD,
    });
    at(cardAt("door-lab", T.WED_10, 17, 1001, { pin: "1234" }), aliceIn("r-staff-lab"));
    at(cardAt("door-lab", T.WED_10, 17, 1001), { reason: "pinRequired", activeRuleId: "r-staff-lab", ...ALICE_CARD });
    // Rules apply to Carol at this instant, but the holder step decides first.
    at(cardAt("door-front", T.WED_NOON, 17, 1003), {
      reason: "holderExpired",
      holderId: "h-carol",
      credentialId: "c-carol-card",
      facilityCode: 17,
      credentialNumber: 1003,
    });
    at(cardAt("door-front", T.WED_NOON, 17, 1002), { reason: "noActiveRule", ...BOB_CARD });
  });

  test("E13 floors: [] at doors; at an elevator reader, the sorted floors of accepted rules only; an e-card enables every floor of the reader", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_10, 17, 1001), aliceIn());
    at(cardAt("elev-1", T.WED_10, 17, 1001), aliceIn("r-staff-high", { floors: ["floor-1", "floor-2", "floor-3"] }));
    at(cardAt("elev-1", T.WED_20, 17, 1001), aliceIn("r-staff-low", { floors: ["floor-1", "floor-2"] }));
    at(cardAt("elev-1", T.WED_10, 17, 1002), { reason: "noActiveRule", ...BOB_CARD });
    // A rule whose policy does not accept the factors opens none of its floors.
    const strictHigh = building((d) => {
      d.rule("r-staff-high").authenticationPolicy = "cardAndPin";
    });
    checker(impl, strictHigh)(
      cardAt("elev-1", T.WED_10, 17, 1001),
      aliceIn("r-staff-low", { floors: ["floor-1", "floor-2"] }),
    );
    checker(impl, strictHigh)(
      cardAt("elev-1", T.WED_10, 17, 1001, { pin: "1234" }),
      aliceIn("r-staff-high", { floors: ["floor-1", "floor-2", "floor-3"] }),
    );
    // Nothing accepted: denied, no floors.
    const allStrict = building((d) => {
      d.rule("r-staff-high").authenticationPolicy = "cardAndPin";
      d.device("elev-1").authenticationPolicy = "cardAndPin";
    });
    checker(impl, allStrict)(cardAt("elev-1", T.WED_10, 17, 1001), {
      reason: "pinRequired",
      activeRuleId: "r-staff-high",
      ...ALICE_CARD,
    });
    // Overlapping floor groups: each floor once; an additional elevator reader has its own groups.
    const overlap = building((d) => {
      d.addDevice({ id: "elev-1b", port: 9, type: "additionalElevatorReader", publicIcon: null });
      d.raw.floorGroups.push(
        { id: "fg-mid", name: "Mid floors", readerPort: "elev-1", floors: ["floor-3", "floor-2"] },
        { id: "fg-b", name: "From the second reader", readerPort: "elev-1b", floors: ["floor-3"] },
      );
      d.addRule({ id: "r-staff-mid", groupId: "g-staff", type: "elevator", floorGroups: ["fg-mid", "fg-b"] });
    });
    checker(impl, overlap)(
      cardAt("elev-1", T.WED_20, 17, 1001),
      aliceIn("r-staff-low", { floors: ["floor-1", "floor-2", "floor-3"] }),
    );
    checker(impl, overlap)(cardAt("elev-1b", T.WED_20, 17, 1001), aliceIn("r-staff-mid", { floors: ["floor-3"] }));
    // SPEC §3 step 3: an e-card at an elevator reader enables every floor of every floor group whose
    // readerPort is that reader (their sorted union), whatever the rules; at a door, none.
    const dead = { node: { online: false, offlineSeconds: 259_201 } };
    const ecard: Expected = { reason: "ecard", facilityCode: 17, credentialNumber: 4242 };
    at(cardAt("elev-1", T.WED_NOON, 17, 4242, dead), { ...ecard, floors: ["floor-1", "floor-2", "floor-3"] });
    at(cardAt("door-front", T.WED_NOON, 17, 4242, dead), ecard);
    const ecards = building((d) => {
      d.node("node-a").offlinePolicy = 2;
      d.addDevice({ id: "elev-1b", port: 9, type: "additionalElevatorReader", publicIcon: null });
      d.addDevice({ id: "elev-bare", port: 10, type: "elevatorReader", publicIcon: null });
      d.addDevice({ id: "floor-10", port: 11, type: "floorRelay", publicIcon: null });
      d.raw.floorGroups.push(
        { id: "fg-mid", name: "Mid floors", readerPort: "elev-1", floors: ["floor-3", "floor-2", "floor-10"] },
        { id: "fg-b", name: "From the second reader", readerPort: "elev-1b", floors: ["floor-3"] },
      );
    });
    const unknownTime = { node: { online: false, timeKnown: false } };
    const e = checker(impl, ecards);
    // Floor groups no rule reaches count too; each floor once, in string order; other readers' groups don't.
    e(cardAt("elev-1", T.WED_NOON, 17, 4242, dead), {
      ...ecard,
      floors: ["floor-1", "floor-10", "floor-2", "floor-3"],
    });
    e(cardAt("elev-1", T.WED_NOON, 17, 4242, unknownTime), {
      ...ecard,
      floors: ["floor-1", "floor-10", "floor-2", "floor-3"],
    });
    e(cardAt("elev-1b", T.WED_NOON, 17, 4242, dead), { ...ecard, floors: ["floor-3"] });
    // An elevator reader without floor groups: still the e-card's decision, with no floors.
    e(cardAt("elev-bare", T.WED_NOON, 17, 4242, dead), ecard);
  });

  test("E14 holder dates compare the local wall time with milliseconds; in a fall-back hour the wall clock counts", () => {
    const snap = building((d) => {
      d.holder("h-alice").activeDate = "2026-11-01T01:15:00";
      d.holder("h-alice").expireDate = "2026-11-01T01:45:00";
    });
    const at = checker(impl, snap);
    const early: Expected = { reason: "holderNotYetActive", ...ALICE_CARD };
    const late: Expected = { reason: "holderExpired", ...ALICE_CARD };
    at(cardAt("door-front", "2026-11-01T05:14:59.999Z", 17, 1001), early); // 01:14:59.999 EDT
    at(cardAt("door-front", "2026-11-01T05:15:00Z", 17, 1001), aliceIn()); // 01:15 EDT
    at(cardAt("door-front", "2026-11-01T05:44:59.999Z", 17, 1001), aliceIn()); // 01:44:59.999 EDT
    at(cardAt("door-front", "2026-11-01T05:45:00Z", 17, 1001), late); // 01:45 EDT
    at(cardAt("door-front", "2026-11-01T06:14:59.999Z", 17, 1001), early); // 01:14:59.999 EST
    at(cardAt("door-front", "2026-11-01T06:30:00Z", 17, 1001), aliceIn()); // 01:30 EST
    at(cardAt("door-front", "2026-11-01T06:45:00Z", 17, 1001), late); // 01:45 EST
  });

  test("E15 rule dates bound the day the occurrence starts (previous day after midnight)", () => {
    const snap = building((d) => {
      d.rule("r-night-front").startDate = "2026-03-06";
      d.rule("r-night-front").endDate = "2026-03-06";
    });
    const at = checker(impl, snap);
    const bobIn: Expected = { reason: "allowed", activeRuleId: "r-night-front", ...BOB_CARD };
    at(cardAt("door-front", "2026-03-07T03:00:00-05:00", 17, 1002), bobIn); // Sat 03-07 is after endDate, but the occurrence started Fri 03-06
    at(cardAt("door-front", "2026-03-14T03:00:00-04:00", 17, 1002), { reason: "noActiveRule", ...BOB_CARD });
    const later = building((d) => {
      d.rule("r-night-front").startDate = "2026-03-07";
    });
    checker(impl, later)(cardAt("door-front", "2026-03-07T03:00:00-05:00", 17, 1002), {
      reason: "noActiveRule",
      ...BOB_CARD,
    });
  });

  test("E16 windows compare to the millisecond: 05:59:59.999 is inside a window ending 06:00:00", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", "2026-03-07T05:59:59.999-05:00", 17, 1002), {
      reason: "allowed",
      activeRuleId: "r-night-front",
      ...BOB_CARD,
    });
    at(cardAt("door-front", "2026-03-07T06:00:00.000-05:00", 17, 1002), { reason: "noActiveRule", ...BOB_CARD });
    at(cardAt("door-front", "2026-03-06T21:59:59.999-05:00", 17, 1002), { reason: "noActiveRule", ...BOB_CARD });
    at(cardAt("door-front", "2026-03-06T22:00:00.000-05:00", 17, 1002), {
      reason: "allowed",
      activeRuleId: "r-night-front",
      ...BOB_CARD,
    });
  });

  test("E17 a card number beyond 2^53−1 no credential or e-card has is unknownCredential, read exactly (CN3)", () => {
    const snap = building((d) => {
      d.node("node-a").cardFormat = [
        {
          id: "WIDE64",
          min_input_bits: 64,
          max_input_bits: 64,
          facility_code: "NOT_ENFORCED",
          layout: { facilityCode: null, cardNumber: { offset: 4, length: 60 } },
        },
      ];
      d.addHolder({
        id: "h-max",
        groups: ["g-staff"],
        credentials: [{ id: "c-max", credentialNumber: Number.MAX_SAFE_INTEGER, types: ["card"] }],
      });
    });
    const at = checker(impl, snap);
    const frame = (n: bigint, extra: Record<string, unknown> = {}) => ({
      deviceId: "door-front",
      at: T.WED_NOON,
      credential: { wiegand: `0000${bitsOf(n, 60)}` },
      ...extra,
    });
    const max = BigInt(Number.MAX_SAFE_INTEGER);
    at(frame(max), {
      reason: "allowed",
      holderId: "h-max",
      credentialId: "c-max",
      activeRuleId: "r-staff-front",
      credentialNumber: Number.MAX_SAFE_INTEGER,
    });
    at(frame(max + 1n), { reason: "unknownCredential", credentialNumber: String(max + 1n) });
    // Low bits are Alice's number: the whole number is read (CN3).
    at(frame(2n ** 59n + 1001n), { reason: "unknownCredential", credentialNumber: String(2n ** 59n + 1001n) });
    at(frame(2n ** 60n - 1n), { reason: "unknownCredential", credentialNumber: String(2n ** 60n - 1n) });
    const dead = { node: { online: false, offlineSeconds: 259_201 } };
    at(frame(4242n, dead), { reason: "ecard", credentialNumber: 4242 });
    // Low bits are the e-card's number: the whole number is read (CN3).
    at(frame(2n ** 59n + 4242n, dead), { reason: "offlineEcardOnly", credentialNumber: String(2n ** 59n + 4242n) });
    at(frame(2n ** 53n + 4242n, dead), { reason: "offlineEcardOnly", credentialNumber: String(2n ** 53n + 4242n) });
  });

  test("E17 (SPEC §5) a facility code beyond 2^53−1 never matches a credential, not even one without a code", () => {
    const snap = building((d) => {
      d.node("node-a").cardFormat = [
        {
          id: "WIDEFC80",
          min_input_bits: 80,
          max_input_bits: 80,
          layout: { facilityCode: { offset: 0, length: 60 }, cardNumber: { offset: 60, length: 16 } },
        },
      ];
      d.credential("c-dave-card").facilityCode = null;
      d.credential("c-bob-card").facilityCode = 5;
      d.addRule({ id: "r-contractors", groupId: "g-contractors", devices: ["door-front"] });
      d.rule("r-night-front").recurring = [...ALL_DAYS];
      d.rule("r-night-front").startTime = d.rule("r-night-front").stopTime = "00:00:00";
    });
    const at = checker(impl, snap);
    const frame = (fcValue: bigint, cn: number) => ({
      deviceId: "door-front",
      at: T.WED_NOON,
      credential: { wiegand: `${bitsOf(fcValue, 60) + bitsOf(cn, 16)}0000` },
    });
    at(frame(5n, 1002), {
      reason: "allowed",
      activeRuleId: "r-night-front",
      holderId: "h-bob",
      credentialId: "c-bob-card",
      facilityCode: 5,
      credentialNumber: 1002,
    });
    at(frame(0n, 1004), { reason: "facilityCodeMismatch", facilityCode: 0, credentialNumber: 1004 });
    // The read code does not fit: the decision shows null (E1), and it matches no credential (SPEC §5).
    at(frame(2n ** 59n + 5n, 1004), { reason: "facilityCodeMismatch", credentialNumber: 1004 });
    at(frame(2n ** 59n + 5n, 1002), { reason: "facilityCodeMismatch", credentialNumber: 1002 });
  });

  test("E18 holder and credential are named from step 4 on; unknown decisions and ambiguousPin name none", () => {
    const snap = building((d) => {
      d.holder("h-dave").pin = "1234";
      d.holder("h-bob").enabled = false;
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", T.WED_NOON, 18, 1001), {
      reason: "facilityCodeMismatch",
      facilityCode: 18,
      credentialNumber: 1001,
    });
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 1001, [0]) } },
      { reason: "parityError", facilityCode: 17, credentialNumber: 1001 },
    );
    at(pinAt("door-front", T.WED_NOON, "1234"), { reason: "ambiguousPin" });
    at(pinAt("door-front", T.WED_NOON, "5678"), { reason: "holderDisabled", holderId: "h-bob" });
    at(pinAt("door-front", T.WED_NOON, "9999"), {
      reason: "allowed",
      holderId: "h-alice",
      activeRuleId: "r-staff-front",
      duress: true,
    });
    at(cardAt("door-front", T.WED_NOON, 17, 1002, { pin: "5678" }), { reason: "holderDisabled", ...BOB_CARD });
  });

  test("E19 smallest id is JavaScript string order (UTF-16), for rules and floors alike", () => {
    const snap = building((d) => {
      d.keepRules();
      // Locale order would put r-a before r-Z (and d-b before d-C); numeric order r-9 before r-10.
      for (const id of ["r-a", "r-Z"]) d.addRule({ id, groupId: "g-staff", devices: ["door-front"] });
      for (const id of ["r-9", "r-10"]) d.addRule({ id, groupId: "g-staff", devices: ["door-side"] });
      for (const id of ["d-b", "d-C"]) d.addRule({ id, groupId: "g-staff", devices: ["door-lab"], allow: false });
      d.addRule({ id: "r-lab", groupId: "g-staff", devices: ["door-lab"] });
      d.addDevice({ id: "floor-a", port: 10, type: "floorRelay", publicIcon: null });
      d.addDevice({ id: "floor-Z", port: 11, type: "floorRelay", publicIcon: null });
      d.addDevice({ id: "floor-10", port: 12, type: "floorRelay", publicIcon: null });
      d.floorGroup("fg-low").floors = ["floor-a", "floor-2", "floor-Z", "floor-10"];
      d.addRule({ id: "r-elev-b", groupId: "g-staff", type: "elevator", floorGroups: ["fg-low"] });
      d.addRule({ id: "r-elev-B", groupId: "g-staff", type: "elevator", floorGroups: ["fg-high"] });
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", T.WED_NOON, 17, 1001), aliceIn("r-Z"));
    at(cardAt("door-side", T.WED_NOON, 17, 1001), aliceIn("r-10"));
    at(cardAt("door-lab", T.WED_NOON, 17, 1001), { reason: "deniedByRule", activeRuleId: "d-C", ...ALICE_CARD });
    at(
      cardAt("elev-1", T.WED_NOON, 17, 1001),
      aliceIn("r-elev-B", { floors: ["floor-10", "floor-2", "floor-3", "floor-Z", "floor-a"] }),
    );
  });

  test("E20 a wrong marker bit (Kastle's bit 1, a custom fixed bit) is a parityError under enforce_parity, read as usual without", () => {
    /**
     * A Kastle frame written out from shared/reference/wiegand-formats.md §1.2: bit 1 the marker,
     * issue level 2–6 (0), FC 7–14, CN 15–30; bit 0 even parity over 1–16, bit 31 odd over 14–30.
     * Parity is computed after the marker is written, so a wrong marker keeps parity good.
     */
    const kastle = (facilityCode: number, cardNumber: number, marker: "0" | "1") => {
      const body = [...`0${marker}00000${bitsOf(facilityCode, 8)}${bitsOf(cardNumber, 16)}0`];
      const ones = (from: number, to: number) => body.slice(from, to + 1).filter((b) => b === "1").length;
      body[0] = ones(1, 16) % 2 === 0 ? "0" : "1";
      body[31] = ones(14, 30) % 2 === 0 ? "1" : "0";
      return body.join("");
    };
    const kastleNode = (enforce: boolean) =>
      building((d) => {
        d.node("node-a").cardFormat = [
          { id: "Kastle", min_input_bits: 32, max_input_bits: 32, enforce_parity: enforce },
        ];
      });
    const wiegand = (bits: string, extra: Record<string, unknown> = {}) => ({
      deviceId: "door-front",
      at: T.WED_NOON,
      credential: { wiegand: bits },
      ...extra,
    });
    const enforced = checker(impl, kastleNode(true));
    enforced(wiegand(kastle(17, 1001, "1")), aliceIn());
    enforced(wiegand(kastle(17, 1001, "0")), { reason: "parityError", facilityCode: 17, credentialNumber: 1001 });
    // Before the e-card check too (step 2 decides first).
    const dead = { node: { online: false, offlineSeconds: 259_201 } };
    enforced(wiegand(kastle(17, 4242, "0"), dead), { reason: "parityError", facilityCode: 17, credentialNumber: 4242 });
    enforced(wiegand(kastle(17, 4242, "1"), dead), { reason: "ecard", facilityCode: 17, credentialNumber: 4242 });
    const lenient = checker(impl, kastleNode(false));
    lenient(wiegand(kastle(17, 1001, "0")), aliceIn());

    // A custom layout's `fixed` bits behave the same, whether a parity bit covers them or not.
    const customNode = (enforce: boolean) =>
      building((d) => {
        d.node("node-a").cardFormat = [
          {
            id: "M30",
            min_input_bits: 30,
            max_input_bits: 30,
            enforce_parity: enforce,
            layout: {
              facilityCode: { offset: 1, length: 8 },
              cardNumber: { offset: 9, length: 16 },
              parity: [{ position: 0, type: "even", range: { offset: 1, length: 26 } }],
              fixed: [
                { position: 26, value: 1 }, // covered by parity bit 0
                { position: 28, value: 0 }, // covered by none
                { position: 29, value: 1 },
              ],
            },
          },
        ];
      });
    const m30 = (f26: string, f28: string, f29: string) => {
      const body = [...`0${bitsOf(17, 8)}${bitsOf(1001, 16)}0${f26}0${f28}${f29}`];
      body[0] = body.slice(1, 27).filter((b) => b === "1").length % 2 === 0 ? "0" : "1";
      return body.join("");
    };
    const custom = checker(impl, customNode(true));
    custom(wiegand(m30("1", "0", "1")), aliceIn());
    for (const bad of [m30("0", "0", "1"), m30("1", "1", "1"), m30("1", "0", "0")])
      custom(wiegand(bad), { reason: "parityError", facilityCode: 17, credentialNumber: 1001 });
    checker(impl, customNode(false))(wiegand(m30("0", "1", "0")), aliceIn());
  });
});
