// Threat levels, unlock rules / first person in, and areas with state (SPEC §15; docs/semantics.md
// TL2–TL4, UF1–UF3, AB1–AB5). Every scan is answered by both deciders (the engine and the naive
// reference) with the same state; a sequence decides and then records with each one's own state
// (engine.record on an AccessState, recordNaive on the reference's), and the door states are asked of
// engine.doorState and doorStateNaive. The building is the fixture's (node-a in New York, e-card 4242).
import { describe, expect, test } from "vitest";
import { AccessState, type AccessStateView } from "../../src/evaluate/accessState.js";
import { type Engine, createEngine } from "../../src/evaluate/index.js";
import type { Decision, SystemSnapshot } from "../../src/model/index.js";
import { NaiveAccessState, decideNaive, doorStateNaive, recordNaive } from "../reference/decideNaive.js";
import {
  type Draft,
  ENGINE,
  type Expected,
  IMPLS,
  type Impl,
  REFERENCE,
  T,
  building,
  cardAt,
  check,
  checker,
  pinAt,
} from "./fixture.js";

const ALICE = { holderId: "h-alice", credentialId: "c-alice-card", facilityCode: 17, credentialNumber: 1001 } as const;
const CAROL = { holderId: "h-carol", credentialId: "c-carol-card", facilityCode: 17, credentialNumber: 1003 } as const;
const DAVE = { holderId: "h-dave", credentialId: "c-dave-card", facilityCode: 17, credentialNumber: 1004 } as const;
const aliceIn: Expected = { reason: "allowed", activeRuleId: "r-staff-front", ...ALICE };
const carolIn: Expected = { reason: "allowed", activeRuleId: "r-staff-front", ...CAROL };

const MINUTE = 60_000;
const HOUR = 3_600_000;
/** Wednesday 2026-03-04 12:00 in New York (EST), as epoch ms. */
const NOON = Date.parse(T.WED_NOON);

const alice = (device: string, at: string | number, extra: Record<string, unknown> = {}) =>
  cardAt(device, at, 17, 1001, extra);
const carol = (device: string, at: string | number) => cardAt(device, at, 17, 1003);

/** The fixture building with node-a at `level` (absent when 0 is not asked for) and further edits. */
function atLevel(level: number | undefined, edit?: (d: Draft) => void): SystemSnapshot {
  return building((d) => {
    if (level !== undefined) d.node("node-a").threatLevel = level;
    edit?.(d);
  });
}

// ---------------------------------------------------------------------------------------------
// Deciding, recording and door states through one implementation

interface StatefulImpl {
  readonly impl: Impl;
  newState(): AccessStateView & { toJSON(): unknown };
  record(snapshot: SystemSnapshot, request: unknown, decision: Decision, state: AccessStateView): void;
  doorState(snapshot: SystemSnapshot, deviceId: string, at: number | string, state?: AccessStateView): unknown;
}

const engines = new WeakMap<SystemSnapshot, Engine>();
function engineOf(snapshot: SystemSnapshot): Engine {
  let engine = engines.get(snapshot);
  if (engine === undefined) {
    engine = createEngine(snapshot);
    engines.set(snapshot, engine);
  }
  return engine;
}

const STATEFUL: readonly StatefulImpl[] = [
  {
    impl: ENGINE,
    newState: () => new AccessState(),
    record: (s, r, d, state) => engineOf(s).record(r, d, state as AccessState),
    doorState: (s, id, at, state) => engineOf(s).doorState(id, at, state),
  },
  {
    impl: REFERENCE,
    newState: () => new NaiveAccessState(),
    record: (s, r, d, state) => recordNaive(s, r, d, state as NaiveAccessState),
    doorState: (s, id, at, state) => doorStateNaive(s, id, at, state),
  },
];

/**
 * A scan decided with the implementation's state (checked against `expected` and, for the engine,
 * against the reference) and then recorded into that state.
 */
function scanner(si: StatefulImpl, snapshot: SystemSnapshot, state: AccessStateView) {
  return (request: unknown, expected: Expected) => {
    check(si.impl, snapshot, request, expected, state);
    const decision =
      si.impl.name === "engine"
        ? engineOf(snapshot).decide(request, undefined, state)
        : decideNaive(snapshot, request, state);
    si.record(snapshot, request, { ...decision, floors: [...decision.floors] }, state);
  };
}

/** The door state the implementation answers, compared with the expected one. */
function door(si: StatefulImpl, snapshot: SystemSnapshot, state?: AccessStateView) {
  return (
    deviceId: string,
    at: string | number,
    want: { unlocked: boolean; ruleId: string | null; waiting?: boolean },
  ) =>
    expect
      .soft(si.doorState(snapshot, deviceId, at, state), `${si.impl.name}: doorState(${deviceId}, ${at})`)
      .toEqual({ deviceId, unlocked: want.unlocked, ruleId: want.ruleId, waitingForFirstAllow: want.waiting ?? false });
}

/** A state with holders inside areas since the given instants, in the implementation's own class. */
function stateWith(
  si: StatefulImpl,
  inside: [area: string, holder: string, since: number][],
): ReturnType<StatefulImpl["newState"]> {
  const s = si.newState() as AccessState | NaiveAccessState;
  for (const [a, h, at] of inside) s.enter(a, h, at);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Threat levels

describe.each(IMPLS)("$name", (impl) => {
  describe("TL2–TL4: threat levels", () => {
    test("TL2: the level raised mid-window: the same scan, allowed at 0, is denied/threatLevel at 1 with the rule set aside", () => {
      checker(impl, atLevel(undefined))(alice("door-front", T.WED_NOON), aliceIn);
      checker(impl, atLevel(0))(alice("door-front", T.WED_NOON), aliceIn);
      checker(impl, atLevel(1))(alice("door-front", T.WED_NOON), {
        reason: "threatLevel",
        activeRuleId: "r-staff-front",
        ...ALICE,
      });
      // Only node-a is raised: the same rule still opens node-b's door.
      checker(impl, atLevel(1))(alice("door-annex", T.WED_NOON), aliceIn);
    });

    test("TL2: a rule with maxThreatLevel 1 still allows at 1, not at 2; another rule with a higher max decides instead", () => {
      const maxOne = (level: number) => atLevel(level, (d) => (d.rule("r-staff-front").maxThreatLevel = 1));
      checker(impl, maxOne(1))(alice("door-front", T.WED_NOON), aliceIn);
      checker(impl, maxOne(2))(alice("door-front", T.WED_NOON), {
        reason: "threatLevel",
        activeRuleId: "r-staff-front",
        ...ALICE,
      });
      const crisis = atLevel(2, (d) =>
        d.addRule({ id: "r-z-crisis", groupId: "g-staff", devices: ["door-front"], maxThreatLevel: 3 }),
      );
      checker(impl, crisis)(alice("door-front", T.WED_NOON), {
        reason: "allowed",
        activeRuleId: "r-z-crisis",
        ...ALICE,
      });
    });

    test("TL2: among rules set aside only by the level, the smallest id is named; a closed window is not one of them", () => {
      const snap = atLevel(1, (d) => {
        d.addRule({ id: "r-a-day", groupId: "g-staff", devices: ["door-front"] });
        // Its window is closed at noon, so it was not set aside by the level.
        d.addRule({
          id: "r-0-night",
          groupId: "g-staff",
          devices: ["door-front"],
          startTime: "22:00:00",
          stopTime: "23:00:00",
        });
      });
      checker(impl, snap)(alice("door-front", T.WED_NOON), {
        reason: "threatLevel",
        activeRuleId: "r-a-day",
        ...ALICE,
      });
      // A holder with no rule at all is still noActiveRule.
      checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1004), { reason: "noActiveRule", ...DAVE });
    });

    test("TL3: a deny rule denies at every level", () => {
      for (const level of [0, 1, 7, 255]) {
        const snap = atLevel(level, (d) =>
          d.addRule({ id: "r-deny", groupId: "g-staff", devices: ["door-front"], allow: false }),
        );
        checker(impl, snap)(alice("door-front", T.WED_NOON), {
          reason: "deniedByRule",
          activeRuleId: "r-deny",
          ...ALICE,
        });
      }
    });

    test("TL4: an e-card is allowed/ecard while the level is above 0 (online), and is an unknown card at level 0", () => {
      const ecard = cardAt("door-front", T.WED_NOON, 17, 4242);
      checker(impl, atLevel(0))(ecard, { reason: "unknownCredential", facilityCode: 17, credentialNumber: 4242 });
      checker(impl, atLevel(1))(ecard, { reason: "ecard", facilityCode: 17, credentialNumber: 4242 });
      // At an elevator reader it opens every floor of the reader's floor groups (E13).
      checker(impl, atLevel(2))(cardAt("elev-1", T.WED_NOON, 17, 4242), {
        reason: "ecard",
        facilityCode: 17,
        credentialNumber: 4242,
        floors: ["floor-1", "floor-2", "floor-3"],
      });
      // Even where a deny rule would refuse everyone else.
      const denied = atLevel(1, (d) =>
        d.addRule({ id: "r-deny", groupId: "g-staff", devices: ["door-front"], allow: false }),
      );
      checker(impl, denied)(ecard, { reason: "ecard", facilityCode: 17, credentialNumber: 4242 });
    });

    test("TL2, E3: offline with the time unknown (policy 1), a 24x7 rule set aside by the level is threatLevel, not offlineNot24x7", () => {
      const offline = { node: { online: false, offlineSeconds: 10, timeKnown: false } };
      const snap = (level: number) => atLevel(level, (d) => (d.node("node-a").offlinePolicy = 1));
      checker(impl, snap(0))(alice("door-front", T.WED_NOON, offline), {
        reason: "offline24x7",
        activeRuleId: "r-staff-front",
        ...ALICE,
      });
      checker(impl, snap(1))(alice("door-front", T.WED_NOON, offline), {
        reason: "threatLevel",
        activeRuleId: "r-staff-front",
        ...ALICE,
      });
    });

    test("UF1: an unlock rule never allows, denies or names itself in a decision", () => {
      const snap = building((d) => {
        d.addRule({ id: "r-unlock", groupId: "g-contractors", devices: ["door-front"], action: "unlock" });
      });
      checker(impl, snap)(cardAt("door-front", T.WED_NOON, 17, 1004), { reason: "noActiveRule", ...DAVE });
      // It does not stand in for Alice's own rule either, nor set her aside at a raised level.
      checker(impl, snap)(alice("door-front", T.WED_NOON), aliceIn);
      // At a raised level the unlock rule (smaller id, open, set aside by the level) is not the one named.
      const raised = building((d) => {
        d.node("node-a").threatLevel = 1;
        d.addRule({ id: "r-0-unlock", groupId: "g-staff", devices: ["door-front"], action: "unlock" });
      });
      checker(impl, raised)(alice("door-front", T.WED_NOON), {
        reason: "threatLevel",
        activeRuleId: "r-staff-front",
        ...ALICE,
      });
    });
  });
});

describe("UF1: unlock rules are not seen by RSOP or who-can-access (engine)", () => {
  const snap = building((d) => {
    d.addRule({ id: "r-unlock", groupId: "g-contractors", devices: ["door-lab"], action: "unlock" });
  });
  const engine = createEngine(snap);
  test("Dave's RSOP lists no rule and no device; whoCanAccess(door-lab) does not name him", () => {
    const dave = engine.rsop(["h-dave"], { at: T.WED_NOON }).holders[0]!;
    expect({ rules: dave.rules.map((r) => r.id), devices: dave.devices.map((d) => d.id) }).toEqual({
      rules: [],
      devices: [],
    });
    expect(engine.whoCanAccess("door-lab", { at: T.WED_NOON }).holders.map((h) => h.holderId)).not.toContain("h-dave");
  });
});

// ---------------------------------------------------------------------------------------------
// Areas

/** The lobby: in through door-front, out through door-side (Alice's and Carol's 24x7 rule reaches both). */
function lobby(area: Record<string, unknown>, edit?: (d: Draft) => void): SystemSnapshot {
  return building((d) => {
    d.rule("r-staff-front").devices = ["door-front", "door-side", "door-annex"];
    d.raw.areas = [
      {
        id: "lobby",
        name: "Lobby",
        entries: ["door-front"],
        exits: ["door-side"],
        antiPassback: null,
        occupancyLimit: null,
        ...area,
      },
    ];
    edit?.(d);
  });
}

const deniedAlice = (reason: "antiPassback" | "occupancyLimit"): Expected => ({ reason, ...ALICE });

describe.each(STATEFUL)("$impl.name", (si) => {
  describe("AB2: anti-passback", () => {
    const hard = lobby({ antiPassback: { mode: "hard", resetSeconds: 3600 } });

    test("hard: a second entry is denied (holder kept, no rule, no floors) until resetSeconds have passed", () => {
      const state = stateWith(si, [["lobby", "h-alice", NOON]]);
      const at = checker(si.impl, hard, state);
      at(alice("door-front", NOON + 10 * MINUTE), deniedAlice("antiPassback"));
      at(alice("door-front", NOON + HOUR - 1), deniedAlice("antiPassback"));
      at(alice("door-front", NOON + HOUR), aliceIn); // at − t ≥ resetSeconds·1000
      // Exits pass (AB4), and someone not inside enters.
      at(alice("door-side", NOON + MINUTE), aliceIn);
      at(carol("door-front", NOON + MINUTE), carolIn);
      // Without a state the areas are not consulted.
      checker(si.impl, hard)(alice("door-front", NOON + MINUTE), aliceIn);
    });

    test("hard: in, denied again, out, in again (decide + record)", () => {
      const state = si.newState();
      const scan = scanner(si, hard, state);
      scan(alice("door-front", NOON), aliceIn);
      scan(alice("door-front", NOON + MINUTE), deniedAlice("antiPassback"));
      scan(alice("door-side", NOON + 2 * MINUTE), aliceIn);
      expect(state.toJSON()).toEqual({ areas: {}, firstAllow: {} });
      scan(alice("door-front", NOON + 3 * MINUTE), aliceIn);
      expect(state.toJSON()).toEqual({ areas: { lobby: { "h-alice": NOON + 3 * MINUTE } }, firstAllow: {} });
    });

    test("resetSeconds 0 never resets by time; offline with the time unknown, no reset by time either", () => {
      const never = lobby({ antiPassback: { mode: "hard", resetSeconds: 0 } });
      checker(
        si.impl,
        never,
        stateWith(si, [["lobby", "h-alice", NOON]]),
      )(alice("door-front", NOON + 400 * 24 * HOUR), deniedAlice("antiPassback"));
      const offline = lobby(
        { antiPassback: { mode: "hard", resetSeconds: 60 } },
        (d) => (d.node("node-a").offlinePolicy = 1),
      );
      const unknownTime = { node: { online: false, offlineSeconds: 10, timeKnown: false } };
      const at = checker(si.impl, offline, stateWith(si, [["lobby", "h-alice", NOON]]));
      at(alice("door-front", NOON + 24 * HOUR, unknownTime), deniedAlice("antiPassback"));
      // With the time known (within the kill timer), the reset counts.
      at(alice("door-front", NOON + 24 * HOUR, { node: { online: false, offlineSeconds: 10 } }), aliceIn);
    });

    test("soft: the second entry is allowed/antiPassbackSoft with the rule, and moves the entry instant", () => {
      const soft = lobby({ antiPassback: { mode: "soft", resetSeconds: 3600 } });
      const state = si.newState();
      const scan = scanner(si, soft, state);
      scan(alice("door-front", NOON), aliceIn);
      scan(alice("door-front", NOON + MINUTE), { reason: "antiPassbackSoft", activeRuleId: "r-staff-front", ...ALICE });
      expect(state.toJSON()).toEqual({ areas: { lobby: { "h-alice": NOON + MINUTE } }, firstAllow: {} });
      scan(alice("door-front", NOON + MINUTE + HOUR), aliceIn);
    });

    test("AB5: areas in id order, a hard denial before a soft flag", () => {
      const two = building((d) => {
        d.raw.areas = [
          { id: "a-soft", name: "Soft", entries: ["door-front"], antiPassback: { mode: "soft", resetSeconds: 0 } },
          { id: "b-hard", name: "Hard", entries: ["door-front"], antiPassback: { mode: "hard", resetSeconds: 0 } },
        ];
      });
      const inBoth = stateWith(si, [
        ["a-soft", "h-alice", NOON],
        ["b-hard", "h-alice", NOON],
      ]);
      checker(si.impl, two, inBoth)(alice("door-front", NOON + MINUTE), deniedAlice("antiPassback"));
      const softOnly = stateWith(si, [["a-soft", "h-alice", NOON]]);
      checker(
        si.impl,
        two,
        softOnly,
      )(alice("door-front", NOON + MINUTE), {
        reason: "antiPassbackSoft",
        activeRuleId: "r-staff-front",
        ...ALICE,
      });
    });
  });

  describe("AB3, AB4: occupancy", () => {
    const one = lobby({ occupancyLimit: 1 });

    test("a full area refuses the next holder's entry and lets the first one out; then the second enters", () => {
      const state = si.newState();
      const scan = scanner(si, one, state);
      scan(alice("door-front", NOON), aliceIn);
      scan(carol("door-front", NOON + MINUTE), { reason: "occupancyLimit", ...CAROL });
      // A holder already inside is never refused by the limit.
      scan(alice("door-front", NOON + 2 * MINUTE), aliceIn);
      scan(alice("door-side", NOON + 3 * MINUTE), aliceIn);
      scan(carol("door-front", NOON + 4 * MINUTE), carolIn);
      expect(state.toJSON()).toEqual({ areas: { lobby: { "h-carol": NOON + 4 * MINUTE } }, firstAllow: {} });
    });

    test("e-cards are not counted and never refused by an area", () => {
      const raised = lobby(
        { occupancyLimit: 1, antiPassback: { mode: "hard", resetSeconds: 0 } },
        (d) => (d.node("node-a").threatLevel = 1),
      );
      const state = stateWith(si, [["lobby", "h-carol", NOON]]);
      const scan = scanner(si, raised, state);
      scan(cardAt("door-front", NOON + MINUTE, 17, 4242), {
        reason: "ecard",
        facilityCode: 17,
        credentialNumber: 4242,
      });
      scan(cardAt("door-front", NOON + 2 * MINUTE, 17, 4242), {
        reason: "ecard",
        facilityCode: 17,
        credentialNumber: 4242,
      });
      expect(state.toJSON()).toEqual({ areas: { lobby: { "h-carol": NOON } }, firstAllow: {} });
    });

    test("a denied scan moves no one", () => {
      const state = si.newState();
      const scan = scanner(si, one, state);
      scan(cardAt("door-front", NOON, 17, 1004), { reason: "noActiveRule", ...DAVE });
      expect(state.toJSON()).toEqual({ areas: {}, firstAllow: {} });
    });
  });

  // -------------------------------------------------------------------------------------------
  // First person in

  describe("UF2, UF3: unlock rules and first person in", () => {
    /** door-lab waits for its first person in; an unlock rule holds it open 08:00–18:00 Mon–Fri. */
    const lab = (edit?: (d: Draft) => void) =>
      building((d) => {
        d.device("door-lab").autoOpenAfterFirstAllow = true;
        d.addRule({
          id: "r-open-lab",
          groupId: "g-contractors",
          devices: ["door-lab"],
          action: "unlock",
          startTime: "08:00:00",
          stopTime: "18:00:00",
          recurring: ["Mon", "Tue", "Wed", "Thu", "Fri"],
        });
        edit?.(d);
      });

    test("waiting before the first allowed scan, unlocked after it; a new occurrence the next day waits again", () => {
      const snap = lab();
      const state = si.newState();
      const at = door(si, snap, state);
      const scan = scanner(si, snap, state);
      at("door-lab", "2026-03-04T07:59:59.999-05:00", { unlocked: false, ruleId: null });
      at("door-lab", "2026-03-04T08:30:00-05:00", { unlocked: false, ruleId: "r-open-lab", waiting: true });
      // A denied scan (Dave has no access rule) does not start it.
      scan(cardAt("door-lab", "2026-03-04T08:40:00-05:00", 17, 1004), { reason: "noActiveRule", ...DAVE });
      at("door-lab", "2026-03-04T08:45:00-05:00", { unlocked: false, ruleId: "r-open-lab", waiting: true });
      // Alice's lab rule asks for card and PIN.
      scan(alice("door-lab", "2026-03-04T09:00:00-05:00", { pin: "1234" }), {
        reason: "allowed",
        activeRuleId: "r-staff-lab",
        ...ALICE,
      });
      expect(state.toJSON()).toEqual({
        areas: {},
        firstAllow: { "door-lab": Date.parse("2026-03-04T09:00:00-05:00") },
      });
      at("door-lab", "2026-03-04T08:59:59.999-05:00", { unlocked: false, ruleId: "r-open-lab", waiting: true });
      at("door-lab", "2026-03-04T09:00:00-05:00", { unlocked: true, ruleId: "r-open-lab" });
      at("door-lab", "2026-03-04T17:59:59.999-05:00", { unlocked: true, ruleId: "r-open-lab" });
      at("door-lab", "2026-03-04T18:00:00-05:00", { unlocked: false, ruleId: null });
      at("door-lab", "2026-03-05T08:00:00-05:00", { unlocked: false, ruleId: "r-open-lab", waiting: true });
      // A second allowed scan the same day changes nothing; the first one the next day starts it again.
      scan(alice("door-lab", "2026-03-04T10:00:00-05:00", { pin: "1234" }), {
        reason: "allowed",
        activeRuleId: "r-staff-lab",
        ...ALICE,
      });
      expect(state.toJSON()).toEqual({
        areas: {},
        firstAllow: { "door-lab": Date.parse("2026-03-04T09:00:00-05:00") },
      });
      scan(alice("door-lab", "2026-03-05T08:15:00-05:00", { pin: "1234" }), {
        reason: "allowed",
        activeRuleId: "r-staff-lab",
        ...ALICE,
      });
      at("door-lab", "2026-03-05T08:15:00-05:00", { unlocked: true, ruleId: "r-open-lab" });
    });

    // Found by the property test: in a fall-back hour the first allowed scan and an occurrence's start
    // are compared as instants, the start being the first pass of its wall time (UF2).
    test("UF2 in a repeated hour: a first person in after the occurrence began (first pass of 23:30) unlocks it", () => {
      const snap = building((d) => {
        d.node("node-a").timezone = "America/Santiago"; // 2020-04-05 03:00Z: 00:00 −03 back to 23:00 −04
        d.keepRules("r-staff-front");
        d.rule("r-staff-front").devices = ["door-lab"];
        d.device("door-lab").autoOpenAfterFirstAllow = true;
        d.addRule({
          id: "u1",
          groupId: "g-contractors",
          devices: ["door-lab"],
          action: "unlock",
          startTime: "23:30:00",
          stopTime: "06:00:00",
          recurring: ["Sat"],
        });
        d.addRule({
          id: "u2",
          groupId: "g-contractors",
          devices: ["door-lab"],
          action: "unlock",
          startTime: "22:00:00",
          stopTime: "23:59:00",
          recurring: ["Sat"],
        });
      });
      const state = si.newState();
      const scan = scanner(si, snap, state);
      scan(cardAt("door-lab", "2020-04-05T03:10:00Z", 17, 1001), {
        reason: "allowed",
        activeRuleId: "r-staff-front",
        ...ALICE,
      });
      door(si, snap, state)("door-lab", "2020-04-05T05:00:00Z", { unlocked: true, ruleId: "u1" });
      door(si, snap, state)("door-lab", "2020-04-05T03:35:00Z", { unlocked: true, ruleId: "u1" });
    });

    test("without a state the door waits; a device without autoOpen is unlocked the whole window; unknown device → null", () => {
      const snap = lab((d) =>
        d.addRule({
          id: "r-open-front",
          groupId: "g-contractors",
          devices: ["door-front"],
          action: "unlock",
          startTime: "08:00:00",
          stopTime: "18:00:00",
        }),
      );
      const at = door(si, snap);
      at("door-lab", "2026-03-04T12:00:00-05:00", { unlocked: false, ruleId: "r-open-lab", waiting: true });
      at("door-front", "2026-03-04T08:00:00-05:00", { unlocked: true, ruleId: "r-open-front" });
      at("door-front", "2026-03-07T17:59:59-05:00", { unlocked: true, ruleId: "r-open-front" });
      at("door-front", "2026-03-07T18:00:00-05:00", { unlocked: false, ruleId: null });
      expect(si.doorState(snap, "no-such-door", "2026-03-04T12:00:00-05:00")).toBeNull();
    });

    test("a threat level above the unlock rule's max keeps the door locked", () => {
      const front = (level: number, max?: number) =>
        building((d) => {
          d.node("node-a").threatLevel = level;
          d.addRule({
            id: "r-open-front",
            groupId: "g-contractors",
            devices: ["door-front"],
            action: "unlock",
            ...(max === undefined ? {} : { maxThreatLevel: max }),
          });
        });
      door(si, front(1))("door-front", T.WED_NOON, { unlocked: false, ruleId: null });
      door(si, front(1, 1))("door-front", T.WED_NOON, { unlocked: true, ruleId: "r-open-front" });
      door(si, front(2, 1))("door-front", T.WED_NOON, { unlocked: false, ruleId: null });
    });

    test("an overnight unlock window started by a scan before midnight stays unlocked after it", () => {
      const snap = lab((d) =>
        Object.assign(d.rule("r-open-lab"), { startTime: "22:00:00", stopTime: "06:00:00", recurring: ["Fri"] }),
      );
      const state = si.newState();
      const scan = scanner(si, snap, state);
      // UF3: any allowed scan starts it, an e-card too (here the node is offline past its kill timer).
      const ecardOnly = { node: { online: false, offlineSeconds: 999_999 } };
      scan(cardAt("door-lab", "2026-03-06T23:00:00-05:00", 17, 4242, ecardOnly), {
        reason: "ecard",
        facilityCode: 17,
        credentialNumber: 4242,
      });
      const at = door(si, snap, state);
      at("door-lab", "2026-03-07T02:00:00-05:00", { unlocked: true, ruleId: "r-open-lab" });
      at("door-lab", "2026-03-07T06:00:00-05:00", { unlocked: false, ruleId: null });
      at("door-lab", "2026-03-13T22:00:00-04:00", { unlocked: false, ruleId: "r-open-lab", waiting: true });
    });
  });
});

test("engine and reference end each sequence in the same state", () => {
  const snap = lobby({ occupancyLimit: 2, antiPassback: { mode: "soft", resetSeconds: 60 } });
  const states = STATEFUL.map((si) => {
    const state = si.newState();
    const scan = scanner(si, snap, state);
    scan(alice("door-front", NOON), aliceIn);
    scan(carol("door-front", NOON + 1000), carolIn);
    scan(pinAt("door-front", NOON + 2000, "1234"), {
      reason: "antiPassbackSoft",
      activeRuleId: "r-staff-front",
      holderId: "h-alice",
    });
    scan(carol("door-side", NOON + 3000), carolIn);
    return state.toJSON();
  });
  expect(states[0]).toEqual(states[1]);
  expect(states[0]).toEqual({ areas: { lobby: { "h-alice": NOON + 2000 } }, firstAllow: {} });
});
