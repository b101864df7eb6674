// Sanity checks of the reference evaluator itself: small hand-made snapshots, one scan each.
// The per-reason scenario suite lives in test/scenarios; these only make sure the oracle is sane.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type Decision, type SystemSnapshot, parseSnapshot } from "../../src/model/index.js";
import { decideNaive } from "./decideNaive.js";

// ---- builders -----------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

const ALL_DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** A one-node, one-door system; `patch` overrides or extends any top-level collection. */
function system(patch: Obj = {}, nodePatch: Obj = {}): Obj {
  return {
    format: "rsop-system/1",
    systemId: "sys",
    timezone: "UTC",
    cloudNodes: [{ id: "n1", name: "Node 1", ...nodePatch }],
    connections: [{ id: "c1", name: "Conn 1", type: "ethernet", cloudNode: "n1", ipaddress: "10.0.0.10", port: 4000 }],
    devices: [
      {
        id: "d1",
        name: "Front door",
        cloudNode: "n1",
        connection: "c1",
        port: 1,
        type: "primaryReader",
        publicIcon: "swingingDoor",
      },
    ],
    groups: [{ id: "g1", name: "Staff" }],
    holders: [
      {
        id: "h1",
        firstName: "Ada",
        lastName: "Lovelace",
        groups: ["g1"],
        pin: "1234",
        duressPin: "9999",
        credentials: [{ id: "cr1", credentialNumber: 12345, facilityCode: 17, types: ["card"] }],
      },
    ],
    rules: [rule24x7("r1")],
    ...patch,
  };
}

function rule24x7(id: string, extra: Obj = {}): Obj {
  return {
    id,
    type: "door",
    groupId: "g1",
    devices: ["d1"],
    startTime: "00:00:00",
    stopTime: "24:00:00",
    recurring: ALL_DAYS,
    ...extra,
  };
}

function load(input: Obj): SystemSnapshot {
  const r = parseSnapshot(input);
  expect(r.ok, r.ok ? "" : JSON.stringify(r.issues)).toBe(true);
  if (!r.ok) throw new Error("unreachable");
  return r.value;
}

/** Encodes an H10301 frame: even parity over bits 1–12 at 0, odd parity over 13–24 at 25. */
function h10301(fc: number, cn: number): string {
  const body = fc.toString(2).padStart(8, "0") + cn.toString(2).padStart(16, "0");
  const ones = (s: string) => [...s].filter((c) => c === "1").length;
  const even = ones(body.slice(0, 12)) % 2 === 0 ? "0" : "1";
  const odd = ones(body.slice(12)) % 2 === 0 ? "1" : "0";
  return even + body + odd;
}

const AT = "2026-11-18T12:00:00Z"; // a Wednesday

function expectReason(d: Decision, outcome: string, reason: string): void {
  expect([d.outcome, d.reason, d.topic]).toEqual([outcome, reason, `device.request.${outcome}`]);
}

// ---- tests --------------------------------------------------------------------------------------

describe("decideNaive", () => {
  test("returns every decision key in SPEC order, for an allowed card read", () => {
    const snap = load(system());
    const d = decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: h10301(17, 12345) } });
    expect(Object.keys(d)).toEqual([
      "outcome",
      "topic",
      "reason",
      "holderId",
      "credentialId",
      "activeRuleId",
      "duress",
      "floors",
      "facilityCode",
      "credentialNumber",
    ]);
    expect(d).toEqual({
      outcome: "allowed",
      topic: "device.request.allowed",
      reason: "allowed",
      holderId: "h1",
      credentialId: "cr1",
      activeRuleId: "r1",
      duress: false,
      floors: [],
      facilityCode: 17,
      credentialNumber: 12345,
    });
  });

  test("malformed requests are badRequest before the device is looked up (R1, R4)", () => {
    const snap = load(system());
    expectReason(decideNaive(snap, { deviceId: "nope", at: AT }), "denied", "badRequest");
    expectReason(decideNaive(snap, { deviceId: "d1", at: "2026-11-18T12:00:00", pin: "1234" }), "denied", "badRequest");
    expectReason(decideNaive(snap, null), "denied", "badRequest");
    const d = decideNaive(snap, { deviceId: "nope", at: AT, pin: "1234" });
    expect(d).toMatchObject({ outcome: "denied", reason: "unknownDevice", holderId: null, floors: [] });
  });

  test("reads: unknown format, parity error keeps the decoded fields, facility-code mismatch", () => {
    const snap = load(system());
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: "1".repeat(27) } }),
      "unknown",
      "unknownCardFormat",
    );
    const good = h10301(17, 12345);
    const flipped = good[25] === "1" ? `${good.slice(0, 25)}0` : `${good.slice(0, 25)}1`;
    const parity = decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: flipped } });
    expect(parity).toMatchObject({ reason: "parityError", facilityCode: 17, credentialNumber: 12345, holderId: null });
    const mismatch = decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: h10301(18, 12345) } });
    expect(mismatch).toMatchObject({
      outcome: "unknown",
      reason: "facilityCodeMismatch",
      holderId: null,
      credentialId: null,
      facilityCode: 18,
    });
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { credentialNumber: 777, facilityCode: 17 } }),
      "unknown",
      "unknownCredential",
    );
    // Already decoded, no facility code: null never equals 17 under ENFORCED.
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { credentialNumber: 12345 } }),
      "unknown",
      "facilityCodeMismatch",
    );
  });

  test("FILTER_LIST refuses codes outside the list and ignores the credential's own code", () => {
    const fmt = {
      id: "H10301",
      min_input_bits: 26,
      max_input_bits: 26,
      facility_code: "FILTER_LIST",
      allowed_facility_codes: [5],
    };
    const snap = load(system({}, { cardFormat: [fmt] }));
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: h10301(17, 12345) } }),
      "denied",
      "facilityCodeNotAllowed",
    );
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: h10301(5, 12345) } }),
      "allowed",
      "allowed",
    );
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { credentialNumber: 12345 } }),
      "denied",
      "facilityCodeNotAllowed",
    );
  });

  test("a custom 64-bit layout: a card number above 2^53−1 no credential has is unknownCredential, the number read exact as a decimal string (CN3, E17)", () => {
    const fmt = {
      id: "wide64",
      min_input_bits: 64,
      max_input_bits: 64,
      facility_code: "NOT_ENFORCED",
      layout: {
        facilityCode: null,
        cardNumber: { offset: 1, length: 62 },
        parity: [{ position: 63, type: "odd", mask: `0${"1".repeat(62)}` }],
      },
    };
    const snap = load(system({}, { cardFormat: [fmt] }));
    // 62 ones: even count, so the odd parity bit is 1.
    const d = decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: `0${"1".repeat(62)}1` } });
    expect(d).toMatchObject({
      outcome: "unknown",
      reason: "unknownCredential",
      facilityCode: null,
      credentialNumber: (2n ** 62n - 1n).toString(),
    });
    // A small number in the same layout decodes and matches.
    const bits = `0${(12345).toString(2).padStart(62, "0")}`;
    const ones = [...bits].filter((c) => c === "1").length;
    const frame = bits + (ones % 2 === 0 ? "1" : "0");
    expect(decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: frame } })).toMatchObject({
      reason: "allowed",
      facilityCode: null,
      credentialNumber: 12345,
    });
  });

  test("overnight window Fri 22:00 → Sat 06:00", () => {
    const snap = load(
      system({ rules: [rule24x7("r1", { startTime: "22:00:00", stopTime: "06:00:00", recurring: ["Fri"] })] }),
    );
    const scan = (at: string) =>
      decideNaive(snap, { deviceId: "d1", at, credential: { credentialNumber: 12345, facilityCode: 17 } });
    expectReason(scan("2026-11-20T21:59:59.999Z"), "denied", "noActiveRule"); // Fri
    expect(scan("2026-11-20T22:00:00Z")).toMatchObject({ reason: "allowed", activeRuleId: "r1" });
    expectReason(scan("2026-11-21T05:59:59Z"), "allowed", "allowed"); // Sat
    expectReason(scan("2026-11-21T05:59:59.999Z"), "allowed", "allowed");
    expectReason(scan("2026-11-21T06:00:00Z"), "denied", "noActiveRule");
    expectReason(scan("2026-11-21T22:30:00Z"), "denied", "noActiveRule"); // Sat night: not in recurring
  });

  test("rule dates bound the occurrence's start day (E15)", () => {
    const r = rule24x7("r1", {
      startTime: "22:00:00",
      stopTime: "06:00:00",
      recurring: ["Fri"],
      startDate: "2026-11-20",
      endDate: "2026-11-20",
    });
    const snap = load(system({ rules: [r] }));
    const scan = (at: string) =>
      decideNaive(snap, { deviceId: "d1", at, credential: { credentialNumber: 12345, facilityCode: 17 } });
    expectReason(scan("2026-11-21T03:00:00Z"), "allowed", "allowed"); // Sat, but the occurrence started on the 20th
    expectReason(scan("2026-11-14T03:00:00Z"), "denied", "noActiveRule"); // started on the 13th
    expectReason(scan("2026-11-28T03:00:00Z"), "denied", "noActiveRule"); // started on the 27th
  });

  test("America/New_York DST: skipped hour never occurs, repeated hour is inside twice", () => {
    const snap = load(
      system(
        {
          rules: [
            rule24x7("spring", {
              startTime: "02:00:00",
              stopTime: "03:00:00",
              recurring: ["Sun"],
              startDate: "2026-03-01",
              endDate: "2026-03-31",
            }),
            rule24x7("fall", {
              startTime: "01:00:00",
              stopTime: "02:00:00",
              recurring: ["Sun"],
              startDate: "2026-11-01",
              endDate: "2026-11-01",
            }),
          ],
        },
        { timezone: "America/New_York" },
      ),
    );
    const scan = (at: string) =>
      decideNaive(snap, { deviceId: "d1", at, credential: { credentialNumber: 12345, facilityCode: 17 } });
    // 2026-03-08: 01:59:59.999 EST is followed by 03:00:00 EDT.
    expectReason(scan("2026-03-08T06:59:59.999Z"), "denied", "noActiveRule");
    expectReason(scan("2026-03-08T07:00:00Z"), "denied", "noActiveRule");
    // A week later 02:30 EDT exists and is inside.
    expect(scan("2026-03-15T06:30:00Z")).toMatchObject({ reason: "allowed", activeRuleId: "spring" });
    // 2026-11-01: 01:30 EDT (05:30Z) and 01:30 EST (06:30Z) are both inside; 02:00 EST (07:00Z) is not.
    expect(scan("2026-11-01T05:30:00Z")).toMatchObject({ reason: "allowed", activeRuleId: "fall" });
    expect(scan("2026-11-01T06:30:00Z")).toMatchObject({ reason: "allowed", activeRuleId: "fall" });
    expectReason(scan("2026-11-01T07:00:00Z"), "denied", "noActiveRule");
    expectReason(scan("2026-11-01T04:59:59Z"), "denied", "noActiveRule"); // 00:59:59 EDT
  });

  test("holder dates compare the node's local wall time (E14)", () => {
    const base = system({}, { timezone: "Asia/Tokyo" });
    const holders = base.holders as Obj[];
    const snap = load({
      ...base,
      holders: [{ ...holders[0], activeDate: "2026-11-18T09:00:00", expireDate: "2026-11-19T00:00:00" }],
    });
    const scan = (at: string) =>
      decideNaive(snap, { deviceId: "d1", at, credential: { credentialNumber: 12345, facilityCode: 17 } });
    expectReason(scan("2026-11-17T23:59:59.999Z"), "denied", "holderNotYetActive"); // 08:59:59.999 JST
    expectReason(scan("2026-11-18T00:00:00Z"), "allowed", "allowed"); // 09:00 JST
    expectReason(scan("2026-11-18T14:59:59.999Z"), "allowed", "allowed");
    expect(scan("2026-11-18T15:00:00Z")).toMatchObject({
      reason: "holderExpired",
      holderId: "h1",
      credentialId: "cr1",
    });
  });

  test("deny rules win, smallest id decides", () => {
    const snap = load(
      system({
        rules: [rule24x7("a-allow"), rule24x7("z-deny", { allow: false }), rule24x7("m-deny", { allow: false })],
      }),
    );
    const d = decideNaive(snap, { deviceId: "d1", at: AT, credential: { credentialNumber: 12345, facilityCode: 17 } });
    expect(d).toMatchObject({ outcome: "denied", reason: "deniedByRule", activeRuleId: "m-deny", holderId: "h1" });
  });

  test("authentication policies: rule cardOnly ∩ device pinOnly = cardAndPin; wrong PIN; duress", () => {
    const base = system({ rules: [rule24x7("r1", { authenticationPolicy: "cardOnly" })] });
    const devices = base.devices as Obj[];
    const snap = load({ ...base, devices: [{ ...devices[0], authenticationPolicy: "pinOnly" }] });
    const card = { credentialNumber: 12345, facilityCode: 17 };
    expect(decideNaive(snap, { deviceId: "d1", at: AT, credential: card })).toMatchObject({
      reason: "pinRequired",
      activeRuleId: "r1",
    });
    expect(decideNaive(snap, { deviceId: "d1", at: AT, pin: "1234" })).toMatchObject({
      reason: "cardRequired",
      credentialId: null,
      holderId: "h1",
    });
    expect(decideNaive(snap, { deviceId: "d1", at: AT, credential: card, pin: "0000" })).toMatchObject({
      reason: "wrongPin",
      duress: false,
    });
    expect(decideNaive(snap, { deviceId: "d1", at: AT, credential: card, pin: "1234" })).toMatchObject({
      reason: "allowed",
      duress: false,
    });
    expect(decideNaive(snap, { deviceId: "d1", at: AT, credential: card, pin: "9999" })).toMatchObject({
      reason: "allowed",
      duress: true,
    });
    // Duress fires on a denial too (E9).
    expect(decideNaive(snap, { deviceId: "d1", at: AT, pin: "9999" })).toMatchObject({
      reason: "cardRequired",
      duress: true,
    });
  });

  test("card + wrong PIN counts as card alone (E10); PIN alone: unknown and ambiguous", () => {
    const base = system();
    const holders = base.holders as Obj[];
    const snap = load({
      ...base,
      holders: [...holders, { id: "h2", firstName: "Bob", lastName: "B", groups: ["g1"], pin: "1234", enabled: false }],
    });
    const card = { credentialNumber: 12345, facilityCode: 17 };
    expectReason(decideNaive(snap, { deviceId: "d1", at: AT, credential: card, pin: "5555" }), "allowed", "allowed");
    expect(decideNaive(snap, { deviceId: "d1", at: AT, pin: "1234" })).toMatchObject({
      reason: "ambiguousPin",
      holderId: null,
      duress: false,
    });
    expectReason(decideNaive(snap, { deviceId: "d1", at: AT, pin: "4321" }), "unknown", "unknownPin");
    expect(decideNaive(snap, { deviceId: "d1", at: AT, pin: "9999" })).toMatchObject({
      reason: "allowed",
      holderId: "h1",
      duress: true,
    });
  });

  test("mobile credentials: pending, BLE, securedReadsOnly", () => {
    const base = system();
    const holders = base.holders as Obj[];
    const devices = base.devices as Obj[];
    const h1 = holders[0]!;
    const snap = load({
      ...base,
      devices: [{ ...devices[0], securedReadsOnly: true }],
      holders: [
        {
          ...h1,
          credentials: [
            ...(h1.credentials as Obj[]),
            { id: "tok", credentialNumber: 900, types: ["touch", "token"] },
            { id: "pend", types: ["token"] },
          ],
        },
      ],
    });
    expect(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { mobile: "token", credentialId: "pend" } }),
    ).toMatchObject({
      reason: "credentialPending",
      holderId: "h1",
      credentialId: "pend",
    });
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { mobile: "touch", credentialId: "tok" } }),
      "denied",
      "bleNotSupported",
    );
    expect(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { mobile: "token", credentialId: "tok" } }),
    ).toMatchObject({
      reason: "allowed",
      credentialId: "tok",
      facilityCode: null,
      credentialNumber: null,
    });
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { mobile: "touch", credentialId: "cr1" } }),
      "unknown",
      "unknownCredential",
    );
    const card = { credentialNumber: 12345, facilityCode: 17 };
    expectReason(decideNaive(snap, { deviceId: "d1", at: AT, credential: card }), "denied", "insecureRead");
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: card, input: "encryptedOsdp" }),
      "allowed",
      "allowed",
    );
  });

  test("offline modes: kill timer, e-card only, 24x7 and any schedule", () => {
    const nightOnly = rule24x7("r2", { startTime: "22:00:00", stopTime: "23:00:00", recurring: ["Mon"] });
    const card = { credentialNumber: 12345, facilityCode: 17 };
    const ecard = { credentialNumber: 4242 };
    const mk = (offlinePolicy: number, rules: Obj[]) =>
      load(system({ rules }, { ecards: [4242], offlinePolicy, killTimer: 300 }));
    const scan = (snap: SystemSnapshot, credential: Obj, node: Obj) =>
      decideNaive(snap, { deviceId: "d1", at: AT, credential, node });

    const p0 = mk(0, [rule24x7("r1")]);
    expectReason(scan(p0, card, { online: false, offlineSeconds: 300 }), "allowed", "allowed");
    expect(scan(p0, card, { online: false, offlineSeconds: 301 })).toMatchObject({
      reason: "offlineEcardOnly",
      holderId: null,
    });
    expect(scan(p0, ecard, { online: false, offlineSeconds: 301 })).toMatchObject({
      reason: "ecard",
      holderId: null,
      credentialNumber: 4242,
    });
    expectReason(scan(p0, card, { online: false, timeKnown: false }), "denied", "offlineEcardOnly");
    expectReason(scan(p0, ecard, { online: true }), "unknown", "unknownCredential");

    const p1 = mk(1, [nightOnly]);
    expect(scan(p1, card, { online: false, timeKnown: false })).toMatchObject({
      reason: "offlineNot24x7",
      holderId: "h1",
      activeRuleId: null,
    });
    expectReason(scan(p1, ecard, { online: false, timeKnown: false }), "allowed", "ecard");
    const p1b = mk(1, [
      nightOnly,
      rule24x7("r9", { startTime: "07:00:00", stopTime: "07:00:00", endDate: "2020-01-01" }),
    ]);
    expect(scan(p1b, card, { online: false, timeKnown: false })).toMatchObject({
      reason: "offline24x7",
      activeRuleId: "r9",
    });

    const p2 = mk(2, [nightOnly]);
    expect(scan(p2, card, { online: false, timeKnown: false })).toMatchObject({
      reason: "offlineAnySchedule",
      activeRuleId: "r2",
    });
    const p2deny = mk(2, [nightOnly, rule24x7("r0", { allow: false, recurring: ["Sun"] })]);
    expect(scan(p2deny, card, { online: false, timeKnown: false })).toMatchObject({
      reason: "deniedByRule",
      activeRuleId: "r0",
    });
  });

  test("elevator reader: floors are the sorted union over accepted rules; door rules elsewhere give []", () => {
    const base = system();
    const devices = base.devices as Obj[];
    const dev = (id: string, port: number, type: string) => ({
      id,
      name: id,
      cloudNode: "n1",
      connection: "c1",
      port,
      type,
    });
    const snap = load({
      ...base,
      devices: [
        ...devices,
        dev("elev", 2, "elevatorReader"),
        dev("f3", 3, "floorRelay"),
        dev("f1", 4, "floorRelay"),
        dev("F2", 5, "floorRelay"),
      ],
      floorGroups: [
        { id: "fgA", name: "Low", readerPort: "elev", floors: ["f3", "f1"] },
        { id: "fgB", name: "High", readerPort: "elev", floors: ["F2", "f1"] },
        { id: "fgC", name: "Pin floors", readerPort: "elev", floors: ["f3"] },
      ],
      rules: [
        rule24x7("r1"),
        {
          id: "e1",
          type: "elevator",
          groupId: "g1",
          floorGroups: ["fgA"],
          startTime: "00:00:00",
          stopTime: "24:00:00",
          recurring: ALL_DAYS,
        },
        {
          id: "e2",
          type: "elevator",
          groupId: "g1",
          floorGroups: ["fgB"],
          startTime: "00:00:00",
          stopTime: "24:00:00",
          recurring: ALL_DAYS,
        },
        {
          id: "e3",
          type: "elevator",
          groupId: "g1",
          floorGroups: ["fgC"],
          startTime: "00:00:00",
          stopTime: "24:00:00",
          recurring: ALL_DAYS,
          authenticationPolicy: "cardAndPin",
        },
      ],
    });
    const card = { credentialNumber: 12345, facilityCode: 17 };
    expect(decideNaive(snap, { deviceId: "elev", at: AT, credential: card })).toMatchObject({
      reason: "allowed",
      activeRuleId: "e1",
      floors: ["F2", "f1", "f3"],
    });
    expect(decideNaive(snap, { deviceId: "d1", at: AT, credential: card })).toMatchObject({
      reason: "allowed",
      activeRuleId: "r1",
      floors: [],
    });
    const onlyPinFloors = load({ ...snap, rules: [(snap.rules as readonly Obj[])[3]] } as Obj);
    expect(decideNaive(onlyPinFloors, { deviceId: "elev", at: AT, credential: card })).toMatchObject({
      reason: "pinRequired",
      activeRuleId: "e3",
      floors: [],
    });
    expect(decideNaive(onlyPinFloors, { deviceId: "elev", at: AT, credential: card, pin: "1234" })).toMatchObject({
      reason: "allowed",
      floors: ["f3"],
    });
  });

  test("step order: input type before read, disabled holder after identification", () => {
    const base = system();
    const devices = base.devices as Obj[];
    const holders = base.holders as Obj[];
    const snap = load({
      ...base,
      devices: [{ ...devices[0], inputTypes: ["encryptedOsdp"] }],
      holders: [{ ...holders[0], enabled: false }],
    });
    expectReason(
      decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: "1".repeat(27) } }),
      "denied",
      "inputTypeNotAllowed",
    );
    expect(
      decideNaive(snap, { deviceId: "d1", at: AT, input: "encryptedOsdp", credential: { wiegand: h10301(17, 12345) } }),
    ).toMatchObject({
      reason: "holderDisabled",
      holderId: "h1",
      credentialId: "cr1",
    });
  });
});

test("keys holding undefined count as absent, as in checkRequest", () => {
  const snap = load(system());
  const d = decideNaive(snap, {
    deviceId: "d1",
    at: AT,
    credential: { wiegand: undefined, credentialNumber: 12345, facilityCode: 17 },
    pin: undefined,
    node: undefined,
  });
  expect(d).toMatchObject({ reason: "allowed", credentialNumber: 12345 });
});

test("never throws, whatever the request", () => {
  const snap = load(system({}, { ecards: [1], offlinePolicy: 2 }));
  const value = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.string(), fc.boolean());
  const request = fc.record(
    {
      deviceId: fc.oneof(fc.constantFrom("d1", "zz"), value),
      at: fc.oneof(
        fc.integer({ min: -1, max: 4_102_444_800_001 }),
        fc.constantFrom(AT, "2026-11-18T12:00Z", "x"),
        value,
      ),
      credential: fc.oneof(
        value,
        fc.record({ wiegand: fc.oneof(fc.stringMatching(/^[01]{9,40}$/), value) }, { requiredKeys: [] }),
        fc.record(
          { credentialNumber: fc.oneof(fc.nat(), value), facilityCode: fc.oneof(fc.nat(255), value) },
          { requiredKeys: [] },
        ),
        fc.record(
          {
            mobile: fc.oneof(fc.constantFrom("touch", "token"), value),
            credentialId: fc.oneof(fc.constantFrom("cr1", "x"), value),
          },
          { requiredKeys: [] },
        ),
      ),
      input: fc.oneof(fc.constantFrom("wiegand", "unencryptedOsdp", "encryptedOsdp"), value),
      pin: fc.oneof(fc.constantFrom("1234", "9999", "0"), value),
      node: fc.oneof(
        value,
        fc.record(
          {
            online: fc.oneof(fc.boolean(), value),
            timeKnown: fc.oneof(fc.boolean(), value),
            offlineSeconds: fc.oneof(fc.nat(), value),
          },
          { requiredKeys: [] },
        ),
      ),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(request, (req) => {
      const d = decideNaive(snap, req);
      expect(d.topic).toBe(`device.request.${d.outcome}`);
    }),
    { numRuns: 2000 },
  );
});

test("H10302 has no facility-code field: ENFORCED matches only a credential with a null code", () => {
  const fmt = { id: "H10302", min_input_bits: 37, max_input_bits: 37 };
  const base = system({}, { cardFormat: [fmt] });
  const holders = base.holders as Obj[];
  const snap = load({
    ...base,
    holders: [
      {
        ...holders[0],
        credentials: [
          { id: "cr1", credentialNumber: 12345, facilityCode: 17, types: ["card"] },
          { id: "cr5", credentialNumber: 5, types: ["card"] },
        ],
      },
    ],
  });
  // Card number 5 in bits 1–35; even parity over 1–18 at 0 (no ones → 0); odd over 18–35 at 36 (two ones → 1).
  const frame5 = `0${"0".repeat(32)}1011`;
  expect(decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: frame5 } })).toMatchObject({
    reason: "allowed",
    credentialId: "cr5",
    facilityCode: null,
    credentialNumber: 5,
  });
  const frame5bad = `${frame5.slice(0, 36)}0`;
  expect(decideNaive(snap, { deviceId: "d1", at: AT, credential: { wiegand: frame5bad } })).toMatchObject({
    reason: "parityError",
    facilityCode: null,
    credentialNumber: 5,
  });
  // The credential with code 17 can never match a read without a facility code.
  expect(decideNaive(snap, { deviceId: "d1", at: AT, credential: { credentialNumber: 12345 } })).toMatchObject({
    outcome: "unknown",
    reason: "facilityCodeMismatch",
  });
});
