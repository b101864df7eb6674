// One scenario (at least) per reason code of SPEC §3, each run through the engine and the reference.
// The last test checks that the scenarios, together, expect every code of REASONS.
import { describe, expect, test } from "vitest";
import { AccessState, createEngine, newDecision } from "../../src/evaluate/index.js";
import { REASONS } from "../../src/model/index.js";
import { decideNaive } from "../reference/decideNaive.js";
import { IMPLS, T, building, cardAt, checker, expectedReasons, h10301, mobileAt, pinAt } from "./fixture.js";

const base = building();
const KILL = 259_200;

describe.each(IMPLS)("$name", (impl) => {
  // --- allowed -------------------------------------------------------------------------------

  test("allowed: a staff card at the front door (24x7 rule)", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("allowed: an already-decoded card number", () => {
    const at = checker(impl, base);
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 1001, facilityCode: 17 } },
      {
        reason: "allowed",
        holderId: "h-alice",
        credentialId: "c-alice-card",
        activeRuleId: "r-staff-front",
        facilityCode: 17,
        credentialNumber: 1001,
      },
    );
  });

  test("allowed: a phone (token) and a PIN alone", () => {
    const at = checker(impl, base);
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
  });

  test("allowed: a card and the right PIN at the cardAndPin lab door", () => {
    const at = checker(impl, base);
    at(cardAt("door-lab", T.WED_10, 17, 1001, { pin: "1234" }), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-lab",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("allowed: the elevator opens the floors of every accepting rule, sorted", () => {
    const at = checker(impl, base);
    // Weekday office hours: r-staff-high and r-staff-low both accept; "r-staff-high" < "r-staff-low".
    at(cardAt("elev-1", T.WED_10, 17, 1001), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-high",
      floors: ["floor-1", "floor-2", "floor-3"],
      facilityCode: 17,
      credentialNumber: 1001,
    });
    // Saturday: only the 24x7 low floors.
    at(cardAt("elev-1", T.SAT_NOON, 17, 1001), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-low",
      floors: ["floor-1", "floor-2"],
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("allowed: offline for exactly killTimer seconds still evaluates normally", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { node: { online: false, offlineSeconds: KILL } }), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1001,
    });
    // ... including the schedule: Bob's night rule is not active on a Wednesday.
    at(cardAt("door-front", T.WED_NOON, 17, 1002, { node: { online: false, offlineSeconds: 60 } }), {
      reason: "noActiveRule",
      holderId: "h-bob",
      credentialId: "c-bob-card",
      facilityCode: 17,
      credentialNumber: 1002,
    });
  });

  // --- e-cards and fallback modes -------------------------------------------------------------

  test("ecard: past the kill timer an e-card opens", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_NOON, 17, 4242, { node: { online: false, offlineSeconds: KILL + 1 } }), {
      reason: "ecard",
      facilityCode: 17,
      credentialNumber: 4242,
    });
  });

  test("ecard: time unknown with offlinePolicy 0 is e-card only", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_NOON, 17, 4242, { node: { online: false, timeKnown: false } }), {
      reason: "ecard",
      facilityCode: 17,
      credentialNumber: 4242,
    });
  });

  test("ecard: e-cards also pass under offlinePolicy 1 and 2", () => {
    for (const policy of [1, 2] as const) {
      const snap = building((d) => {
        d.node("node-a").offlinePolicy = policy;
      });
      checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 4242, { node: { online: false, timeKnown: false } }), {
        reason: "ecard",
        facilityCode: 17,
        credentialNumber: 4242,
      });
    }
  });

  test("offlineEcardOnly: past the kill timer a holder's card is refused", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { node: { online: false, offlineSeconds: KILL + 1 } }), {
      reason: "offlineEcardOnly",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("offline24x7: time unknown, policy 1, a holder with a 24x7 rule", () => {
    const snap = building((d) => {
      d.node("node-a").offlinePolicy = 1;
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1001, { node: { online: false, timeKnown: false } }), {
      reason: "offline24x7",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("offlineNot24x7: time unknown, policy 1, a holder with only a scheduled rule", () => {
    const snap = building((d) => {
      d.node("node-a").offlinePolicy = 1;
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1002, { node: { online: false, timeKnown: false } }), {
      reason: "offlineNot24x7",
      holderId: "h-bob",
      credentialId: "c-bob-card",
      facilityCode: 17,
      credentialNumber: 1002,
    });
  });

  test("offlineAnySchedule: time unknown, policy 2, any enabled allow rule for the device", () => {
    const snap = building((d) => {
      d.node("node-a").offlinePolicy = 2;
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1002, { node: { online: false, timeKnown: false } }), {
      reason: "offlineAnySchedule",
      holderId: "h-bob",
      credentialId: "c-bob-card",
      activeRuleId: "r-night-front",
      facilityCode: 17,
      credentialNumber: 1002,
    });
  });

  // --- request and device ---------------------------------------------------------------------

  test("badRequest: an instant without an offset", () => {
    checker(impl, base)(pinAt("door-front", "2026-03-04T12:00:00", "1234"), { reason: "badRequest" });
  });

  test("badRequest: not an object", () => {
    const at = checker(impl, base);
    at(null, { reason: "badRequest" });
    at("door-front", { reason: "badRequest" });
    at([], { reason: "badRequest" });
  });

  test("unknownDevice", () => {
    checker(impl, base)(cardAt("door-nowhere", T.WED_NOON, 17, 1001), { reason: "unknownDevice" });
  });

  test("inputTypeNotAllowed: a wiegand read at an OSDP-only reader", () => {
    const snap = building((d) => {
      d.device("door-lab").inputTypes = ["encryptedOsdp"];
    });
    const at = checker(impl, snap);
    at(cardAt("door-lab", T.WED_10, 17, 1001, { pin: "1234" }), { reason: "inputTypeNotAllowed" });
    at(cardAt("door-lab", T.WED_10, 17, 1001, { pin: "1234", input: "unencryptedOsdp" }), {
      reason: "inputTypeNotAllowed",
    });
    at(cardAt("door-lab", T.WED_10, 17, 1001, { pin: "1234", input: "encryptedOsdp" }), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-lab",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  // --- read -----------------------------------------------------------------------------------

  test("unknownCardFormat: a 30-bit frame at a node with only the 26-bit format", () => {
    checker(impl, base)(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: "1".repeat(30) } },
      { reason: "unknownCardFormat" },
    );
  });

  test("parityError: either parity bit wrong", () => {
    const at = checker(impl, base);
    for (const bit of [0, 25]) {
      at(
        { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 1001, [bit]) } },
        {
          reason: "parityError",
          facilityCode: 17,
          credentialNumber: 1001,
        },
      );
    }
  });

  test("parityError: not raised when the format does not enforce parity", () => {
    const snap = building((d) => {
      d.node("node-a").cardFormat = [{ id: "H10301", min_input_bits: 26, max_input_bits: 26, enforce_parity: false }];
    });
    checker(impl, snap)(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 1001, [0, 25]) } },
      {
        reason: "allowed",
        holderId: "h-alice",
        credentialId: "c-alice-card",
        activeRuleId: "r-staff-front",
        facilityCode: 17,
        credentialNumber: 1001,
      },
    );
  });

  test("facilityCodeNotAllowed: FILTER_LIST without the card's facility code", () => {
    const snap = building((d) => {
      d.node("node-a").cardFormat = [
        {
          id: "H10301",
          min_input_bits: 26,
          max_input_bits: 26,
          facility_code: "FILTER_LIST",
          allowed_facility_codes: [20],
        },
      ];
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "facilityCodeNotAllowed",
      facilityCode: 17,
      credentialNumber: 1001,
    });
    // A decoded request takes the policy of the node's first format; a missing facility code is never listed.
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 1001 } },
      {
        reason: "facilityCodeNotAllowed",
        credentialNumber: 1001,
      },
    );
    // A listed facility code passes, and FILTER_LIST does not compare the credential's own code.
    at(cardAt("door-front", T.WED_NOON, 20, 1001), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 20,
      credentialNumber: 1001,
    });
  });

  test("read: candidate formats in list order, the first one that admits the length decodes", () => {
    const snap = building((d) => {
      d.node("node-a").cardFormat = [
        // 34-bit layout (H10306-like): FC 1–16, CN 17–32, even parity at 0 over 1–16, odd at 33 over 17–32.
        {
          id: "SITE34",
          min_input_bits: 34,
          max_input_bits: 34,
          layout: {
            facilityCode: { offset: 1, length: 16 },
            cardNumber: { offset: 17, length: 16 },
            parity: [
              { position: 0, type: "even", range: { offset: 1, length: 16 } },
              { position: 33, type: "odd", mask: `0${"0".repeat(16)}${"1".repeat(16)}0` },
            ],
          },
        },
        // A parity-free 26-bit reading listed before H10301: it wins for 26-bit frames.
        {
          id: "RAW26",
          min_input_bits: 26,
          max_input_bits: 26,
          layout: { facilityCode: { offset: 1, length: 8 }, cardNumber: { offset: 9, length: 16 } },
        },
        { id: "H10301", min_input_bits: 26, max_input_bits: 26 },
      ];
    });
    const at = checker(impl, snap);
    const frame34 = (fc: number, cn: number, flip: number[] = []) => {
      const body = fc.toString(2).padStart(16, "0") + cn.toString(2).padStart(16, "0");
      const ones = (x: string) => [...x].filter((c) => c === "1").length;
      const bits = [
        ...((ones(body.slice(0, 16)) % 2 === 0 ? "0" : "1") + body + (ones(body.slice(16)) % 2 === 0 ? "1" : "0")),
      ];
      for (const p of flip) bits[p] = bits[p] === "1" ? "0" : "1";
      return { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: bits.join("") } };
    };
    const alice = { holderId: "h-alice", credentialId: "c-alice-card", activeRuleId: "r-staff-front" };
    at(frame34(17, 1001), { reason: "allowed", ...alice, facilityCode: 17, credentialNumber: 1001 });
    at(frame34(17, 1001, [0]), { reason: "parityError", facilityCode: 17, credentialNumber: 1001 });
    at(frame34(17, 1001, [33]), { reason: "parityError", facilityCode: 17, credentialNumber: 1001 });
    // RAW26 decodes first and checks no parity, so a frame H10301 would refuse is read.
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: h10301(17, 1001, [0, 25]) } },
      {
        reason: "allowed",
        ...alice,
        facilityCode: 17,
        credentialNumber: 1001,
      },
    );
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: "1".repeat(30) } },
      { reason: "unknownCardFormat" },
    );
  });

  test("read: the decoding format's facility-code policy applies; a decoded request takes the first format's", () => {
    const snap = building((d) => {
      d.node("node-a").cardFormat = [
        {
          id: "WIDE30",
          min_input_bits: 30,
          max_input_bits: 30,
          facility_code: "FILTER_LIST",
          allowed_facility_codes: [99],
          layout: { facilityCode: { offset: 1, length: 8 }, cardNumber: { offset: 9, length: 16 } },
        },
        { id: "H10301", min_input_bits: 26, max_input_bits: 26 },
      ];
    });
    const at = checker(impl, snap);
    // 26-bit: H10301 decodes, ENFORCED.
    at(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1001,
    });
    // 30-bit: WIDE30 decodes, FILTER_LIST [99].
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { wiegand: `${h10301(17, 1001)}0000` } },
      { reason: "facilityCodeNotAllowed", facilityCode: 17, credentialNumber: 1001 },
    );
    // Decoded: the first format's policy (FILTER_LIST [99]) applies.
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 1001, facilityCode: 17 } },
      { reason: "facilityCodeNotAllowed", facilityCode: 17, credentialNumber: 1001 },
    );
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 1001, facilityCode: 99 } },
      {
        reason: "allowed",
        holderId: "h-alice",
        credentialId: "c-alice-card",
        activeRuleId: "r-staff-front",
        facilityCode: 99,
        credentialNumber: 1001,
      },
    );
  });

  test("read: ENFORCED matches a credential without a facility code only when none was read", () => {
    const snap = building((d) => {
      d.credential("c-dave-card").facilityCode = null;
      d.addRule({ id: "r-contractors", groupId: "g-contractors", devices: ["door-front"] });
    });
    const at = checker(impl, snap);
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 1004 } },
      {
        reason: "allowed",
        holderId: "h-dave",
        credentialId: "c-dave-card",
        activeRuleId: "r-contractors",
        credentialNumber: 1004,
      },
    );
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 1004, facilityCode: null } },
      {
        reason: "allowed",
        holderId: "h-dave",
        credentialId: "c-dave-card",
        activeRuleId: "r-contractors",
        credentialNumber: 1004,
      },
    );
    at(cardAt("door-front", T.WED_NOON, 0, 1004), {
      reason: "facilityCodeMismatch",
      facilityCode: 0,
      credentialNumber: 1004,
    });
  });

  // --- credential -----------------------------------------------------------------------------

  test("unknownCredential: a card number no holder has", () => {
    checker(impl, base)(cardAt("door-front", T.WED_NOON, 17, 7777), {
      reason: "unknownCredential",
      facilityCode: 17,
      credentialNumber: 7777,
    });
  });

  test("facilityCodeMismatch: ENFORCED (the default) and another facility code", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_NOON, 18, 1001), {
      reason: "facilityCodeMismatch",
      facilityCode: 18,
      credentialNumber: 1001,
    });
    // A decoded request without a facility code matches only a credential whose code is null.
    at(
      { deviceId: "door-front", at: T.WED_NOON, credential: { credentialNumber: 1001 } },
      {
        reason: "facilityCodeMismatch",
        credentialNumber: 1001,
      },
    );
  });

  test("facilityCodeMismatch: NOT_ENFORCED does not compare the credential's code", () => {
    const snap = building((d) => {
      d.node("node-a").cardFormat = [
        { id: "H10301", min_input_bits: 26, max_input_bits: 26, facility_code: "NOT_ENFORCED" },
      ];
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 18, 1001), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 18,
      credentialNumber: 1001,
    });
  });

  test("unknownPin: a PIN no holder has", () => {
    checker(impl, base)(pinAt("door-front", T.WED_NOON, "0000"), { reason: "unknownPin" });
  });

  test("ambiguousPin: two holders share the PIN", () => {
    const snap = building((d) => {
      d.holder("h-bob").pin = "1234";
    });
    checker(impl, snap)(pinAt("door-front", T.WED_NOON, "1234"), { reason: "ambiguousPin" });
  });

  test("credentialPending: a digital credential not yet activated", () => {
    checker(impl, base)(mobileAt("door-front", T.WED_NOON, "token", "c-carol-phone"), {
      reason: "credentialPending",
      holderId: "h-carol",
      credentialId: "c-carol-phone",
    });
  });

  test("bleNotSupported: touch at a reader without BLE", () => {
    const at = checker(impl, base);
    at(mobileAt("door-front", T.WED_NOON, "touch", "c-alice-phone"), {
      reason: "bleNotSupported",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
    });
    const ble = building((d) => {
      d.device("door-front").supportBleCredentials = true;
    });
    checker(impl, ble)(mobileAt("door-front", T.WED_NOON, "touch", "c-alice-phone"), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
      activeRuleId: "r-staff-front",
    });
  });

  test("insecureRead: a wiegand card read at a securedReadsOnly reader", () => {
    const snap = building((d) => {
      d.device("door-front").securedReadsOnly = true;
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "insecureRead",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("inputTypeNotAllowed: a phone at an OSDP-only reader, request input defaulting to wiegand", () => {
    const snap = building((d) => {
      d.device("door-front").inputTypes = ["encryptedOsdp"];
    });
    const at = checker(impl, snap);
    at(mobileAt("door-front", T.WED_NOON, "token", "c-alice-phone"), { reason: "inputTypeNotAllowed" });
    at(mobileAt("door-front", T.WED_NOON, "token", "c-alice-phone", { input: "encryptedOsdp" }), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-phone",
      activeRuleId: "r-staff-front",
    });
  });

  test("a holder's groups may be given as seed objects", () => {
    checker(impl, base)(cardAt("door-front", T.WED_NOON, 17, 1003), {
      reason: "allowed",
      holderId: "h-carol",
      credentialId: "c-carol-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1003,
    });
  });

  test("a holder in two groups gets the rules of both", () => {
    const snap = building((d) => {
      d.holder("h-bob").groups = ["g-night", "g-staff"];
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1002), {
      reason: "allowed",
      holderId: "h-bob",
      credentialId: "c-bob-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1002,
    });
  });

  test("a custom killTimer; e-cards mean nothing while the node still trusts its schedule", () => {
    const snap = building((d) => {
      d.node("node-a").killTimer = 300;
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { node: { online: false, offlineSeconds: 300 } }), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1001,
    });
    at(cardAt("door-front", T.WED_NOON, 17, 4242, { node: { online: false, offlineSeconds: 300 } }), {
      reason: "unknownCredential",
      facilityCode: 17,
      credentialNumber: 4242,
    });
    at(cardAt("door-front", T.WED_NOON, 17, 1001, { node: { online: false, offlineSeconds: 301 } }), {
      reason: "offlineEcardOnly",
      facilityCode: 17,
      credentialNumber: 1001,
    });
    at(cardAt("door-front", T.WED_NOON, 17, 4242, { node: { online: false, offlineSeconds: 301 } }), {
      reason: "ecard",
      facilityCode: 17,
      credentialNumber: 4242,
    });
  });

  test("offline, time unknown: a PIN alone under policies 1 and 2", () => {
    for (const [policy, reason] of [
      [1, "offline24x7"],
      [2, "offlineAnySchedule"],
    ] as const) {
      const snap = building((d) => {
        d.node("node-a").offlinePolicy = policy;
      });
      checker(impl, snap)(pinAt("door-front", T.WED_NOON, "1234", { node: { online: false, timeKnown: false } }), {
        reason,
        holderId: "h-alice",
        activeRuleId: "r-staff-front",
      });
    }
  });

  // --- holder ---------------------------------------------------------------------------------

  test("holderDisabled", () => {
    const snap = building((d) => {
      d.holder("h-alice").enabled = false;
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "holderDisabled",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("holderNotYetActive", () => {
    const snap = building((d) => {
      d.holder("h-alice").activeDate = "2026-03-05T00:00:00";
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "holderNotYetActive",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("holderExpired: at the expiry instant itself", () => {
    const snap = building((d) => {
      d.holder("h-alice").expireDate = "2026-03-04T12:00:00";
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "holderExpired",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  // --- rules ----------------------------------------------------------------------------------

  test("noActiveRule: a rule outside its window, and no rule at all", () => {
    const at = checker(impl, base);
    at(cardAt("door-front", T.WED_NOON, 17, 1002), {
      reason: "noActiveRule",
      holderId: "h-bob",
      credentialId: "c-bob-card",
      facilityCode: 17,
      credentialNumber: 1002,
    });
    at(cardAt("door-front", T.WED_NOON, 17, 1004), {
      reason: "noActiveRule",
      holderId: "h-dave",
      credentialId: "c-dave-card",
      facilityCode: 17,
      credentialNumber: 1004,
    });
    // Office hours are over at the lab.
    at(cardAt("door-lab", T.WED_20, 17, 1001, { pin: "1234" }), {
      reason: "noActiveRule",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("noActiveRule: a disabled rule is ignored", () => {
    const snap = building((d) => {
      d.rule("r-staff-front").enabled = false;
    });
    checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "noActiveRule",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("deniedByRule: an active deny rule beats an allow rule", () => {
    const snap = building((d) => {
      d.addRule({
        id: "r-lunch-lock",
        groupId: "g-staff",
        devices: ["door-front"],
        allow: false,
        startTime: "12:00:00",
        stopTime: "13:00:00",
      });
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "deniedByRule",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-lunch-lock",
      facilityCode: 17,
      credentialNumber: 1001,
    });
    at(cardAt("door-front", T.WED_10, 17, 1001), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  // --- authentication policy ------------------------------------------------------------------

  test("wrongPin: a card and a PIN that is neither of the holder's", () => {
    checker(impl, base)(cardAt("door-lab", T.WED_10, 17, 1001, { pin: "0000" }), {
      reason: "wrongPin",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-lab",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("pinRequired: a card alone at a cardAndPin rule", () => {
    checker(impl, base)(cardAt("door-lab", T.WED_10, 17, 1001), {
      reason: "pinRequired",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-lab",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("wrongPin / pinRequired for a holder without any PIN", () => {
    const at = checker(impl, base);
    const carol = {
      holderId: "h-carol",
      credentialId: "c-carol-card",
      activeRuleId: "r-staff-lab",
      facilityCode: 17,
      credentialNumber: 1003,
    };
    at(cardAt("door-lab", T.WED_10, 17, 1003, { pin: "1234" }), { reason: "wrongPin", ...carol });
    at(cardAt("door-lab", T.WED_10, 17, 1003), { reason: "pinRequired", ...carol });
  });

  test("cardRequired: device cardOnly ∩ rule cardOrPin refuses a PIN alone", () => {
    const snap = building((d) => {
      d.device("door-front").authenticationPolicy = "cardOnly";
      d.rule("r-staff-front").authenticationPolicy = "cardOrPin";
    });
    const at = checker(impl, snap);
    at(pinAt("door-front", T.WED_NOON, "1234"), {
      reason: "cardRequired",
      holderId: "h-alice",
      activeRuleId: "r-staff-front",
    });
    at(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "allowed",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  test("cardRequired: a PIN alone at a cardAndPin rule", () => {
    checker(impl, base)(pinAt("door-lab", T.WED_10, "1234"), {
      reason: "cardRequired",
      holderId: "h-alice",
      activeRuleId: "r-staff-lab",
    });
  });
});

describe.each(IMPLS)("$name: door states (SPEC §15)", (impl) => {
  // TL2: the node's threat level sets aside an allow rule whose maxThreatLevel is below it.
  test("threatLevel: the only open rule is set aside by the node's level", () => {
    const raised = building((d) => {
      d.node("node-a").threatLevel = 1;
    });
    checker(impl, raised)(cardAt("door-front", T.WED_NOON, 17, 1001), {
      reason: "threatLevel",
      holderId: "h-alice",
      credentialId: "c-alice-card",
      activeRuleId: "r-staff-front",
      facilityCode: 17,
      credentialNumber: 1001,
    });
  });

  // AB2, AB3: an area whose entry is the front door; the state says who is inside.
  const withArea = (antiPassback: "hard" | "soft" | null, occupancyLimit: number | null) =>
    building((d) => {
      d.raw.areas = [
        {
          id: "area-hq",
          name: "HQ",
          entries: ["door-front"],
          exits: ["door-lab"],
          antiPassback: antiPassback === null ? null : { mode: antiPassback, resetSeconds: 3600 },
          occupancyLimit,
        },
      ];
    });
  const aliceInside = new AccessState();
  aliceInside.enter("area-hq", "h-alice", Date.parse(T.WED_10));
  const alice = {
    holderId: "h-alice",
    credentialId: "c-alice-card",
    facilityCode: 17,
    credentialNumber: 1001,
  } as const;

  test("antiPassback: a second entry before an exit or the reset (hard)", () => {
    checker(
      impl,
      withArea("hard", null),
      aliceInside,
    )(cardAt("door-front", "2026-03-04T10:30:00-05:00", 17, 1001), {
      reason: "antiPassback",
      ...alice,
    });
  });

  test("antiPassbackSoft: a second entry is allowed and flagged (soft)", () => {
    checker(
      impl,
      withArea("soft", null),
      aliceInside,
    )(cardAt("door-front", "2026-03-04T10:30:00-05:00", 17, 1001), {
      reason: "antiPassbackSoft",
      activeRuleId: "r-staff-front",
      ...alice,
    });
  });

  test("occupancyLimit: the area is full", () => {
    const full = new AccessState();
    full.enter("area-hq", "h-someone", Date.parse(T.WED_10));
    checker(
      impl,
      withArea(null, 1),
      full,
    )(cardAt("door-front", "2026-03-04T10:30:00-05:00", 17, 1001), {
      reason: "occupancyLimit",
      ...alice,
    });
  });
});

test("engine: one reused `out` object carries nothing from one scan to the next", () => {
  const snap = building((d) => {
    d.holder("h-bob").enabled = false;
  });
  const engine = createEngine(snap);
  const out = newDecision();
  const requests: unknown[] = [
    cardAt("elev-1", T.WED_10, 17, 1001, { pin: "9999" }), // allowed, floors, duress
    cardAt("door-front", T.WED_NOON, 17, 7777), // unknownCredential
    pinAt("door-front", T.WED_NOON, "0000"), // unknownPin
    cardAt("door-front", T.WED_NOON, 17, 1002), // holderDisabled
    mobileAt("door-front", T.WED_NOON, "token", "c-alice-phone"), // allowed, no card numbers
    { deviceId: "door-front" }, // badRequest
    cardAt("door-lab", T.WED_10, 17, 1001), // pinRequired
  ];
  for (const request of requests) {
    const fresh = engine.decide(request);
    const reused = engine.decide(request, out);
    expect({ ...reused, floors: [...reused.floors] }).toEqual({ ...fresh, floors: [...fresh.floors] });
    expect({ ...reused, floors: [...reused.floors] }).toEqual(decideNaive(snap, request));
  }
});

test("every reason code has a scenario", () => {
  expect([...expectedReasons].sort()).toEqual([...REASONS].sort());
});
