// Time windows (SPEC §4) at the node's wall clock: overnight windows, millisecond edges, DST gaps
// and overlaps, 30-minute DST shifts, per-node zones, rule dates (E15) and holder dates (E14).
// Bob (g-night, card 17/1002) is the subject; his rule r-night-front at door-front (node-a,
// America/New_York) is reshaped per scenario.
import { describe, test } from "vitest";
import type { SystemSnapshot } from "../../src/model/index.js";
import { type Draft, type Expected, type Impl, type RuleIn, IMPLS, building, cardAt, checker } from "./fixture.js";

const BOB = { holderId: "h-bob", credentialId: "c-bob-card", facilityCode: 17, credentialNumber: 1002 } as const;
const ALICE = { holderId: "h-alice", credentialId: "c-alice-card", facilityCode: 17, credentialNumber: 1001 } as const;

/** Bob allowed by `ruleId`. */
function bobIn(ruleId = "r-night-front"): Expected {
  return { reason: "allowed", activeRuleId: ruleId, ...BOB };
}
const BOB_OUT: Expected = { reason: "noActiveRule", ...BOB };

/** The base building with Bob's rule reshaped (and other edits). */
function withNightRule(fields: Partial<RuleIn>, edit?: (d: Draft) => void): SystemSnapshot {
  return building((d) => {
    Object.assign(d.rule("r-night-front"), fields);
    edit?.(d);
  });
}

/** Bob's card at `device` at each instant, expecting `expected`. */
function scan(impl: Impl, snap: SystemSnapshot, device: string, cases: [string | number, Expected][]): void {
  const at = checker(impl, snap);
  for (const [instant, expected] of cases) at(cardAt(device, instant, 17, 1002), expected);
}

describe.each(IMPLS)("$name", (impl) => {
  describe("night shift Fri 22:00:00 → Sat 06:00:00, recurring [Fri]", () => {
    const snap = building(); // r-night-front is exactly this rule

    test("allowed until Saturday 05:59:59.999, denied from 06:00:00", () => {
      scan(impl, snap, "door-front", [
        ["2026-03-07T05:59:00-05:00", bobIn()],
        ["2026-03-07T05:59:59.999-05:00", bobIn()],
        [Date.UTC(2026, 2, 7, 10, 59, 59, 999), bobIn()],
        ["2026-03-07T06:00:00-05:00", BOB_OUT],
        ["2026-03-07T06:00:00.000-05:00", BOB_OUT],
        [Date.UTC(2026, 2, 7, 11, 0, 0, 0), BOB_OUT],
      ]);
    });

    test("denied Friday 21:59:59, allowed from Friday 22:00", () => {
      scan(impl, snap, "door-front", [
        ["2026-03-06T21:59:59-05:00", BOB_OUT],
        ["2026-03-06T21:59:59.999-05:00", BOB_OUT],
        ["2026-03-06T22:00:00-05:00", bobIn()],
        ["2026-03-06T23:59:59.999-05:00", bobIn()],
        ["2026-03-07T00:00:00-05:00", bobIn()],
      ]);
    });

    test("the window starts on Friday only: Saturday night and Sunday morning are closed", () => {
      scan(impl, snap, "door-front", [
        ["2026-03-07T22:30:00-05:00", BOB_OUT],
        ["2026-03-08T01:00:00-05:00", BOB_OUT],
        ["2026-03-05T23:00:00-05:00", BOB_OUT], // Thursday night
        ["2026-03-06T05:00:00-05:00", BOB_OUT], // Friday morning: Thursday is not in recurring
      ]);
    });
  });

  describe("America/New_York spring forward, Sun 2026-03-08 02:00 EST → 03:00 EDT", () => {
    test("window 01:30–02:30: open until the jump, closed at 03:00 EDT (02:xx never happens)", () => {
      const snap = withNightRule({ startTime: "01:30:00", stopTime: "02:30:00", recurring: ["Sun"] });
      scan(impl, snap, "door-front", [
        ["2026-03-08T06:29:59Z", BOB_OUT], // 01:29:59 EST
        ["2026-03-08T06:30:00Z", bobIn()], // 01:30 EST
        ["2026-03-08T06:59:59.999Z", bobIn()], // 01:59:59.999 EST
        ["2026-03-08T07:00:00Z", BOB_OUT], // 03:00 EDT
        ["2026-03-08T07:29:59Z", BOB_OUT], // 03:29:59 EDT
      ]);
    });

    test("window 02:15–02:45 never occurs that day, but does the next Sunday", () => {
      const snap = withNightRule({ startTime: "02:15:00", stopTime: "02:45:00", recurring: ["Sun"] });
      scan(impl, snap, "door-front", [
        ["2026-03-08T06:45:00Z", BOB_OUT], // 01:45 EST
        ["2026-03-08T06:59:59.999Z", BOB_OUT], // 01:59:59.999 EST
        ["2026-03-08T07:00:00Z", BOB_OUT], // 03:00 EDT
        ["2026-03-08T07:15:00Z", BOB_OUT], // 03:15 EDT (02:15 EST would be this instant)
        ["2026-03-08T07:30:00Z", BOB_OUT], // 03:30 EDT
        ["2026-03-15T02:30:00-04:00", bobIn()], // the following Sunday, 02:30 EDT
      ]);
    });
  });

  describe("America/New_York fall back, Sun 2026-11-01 01:00–02:00 twice", () => {
    test("window 01:15–01:45 is open in both occurrences of the hour", () => {
      const snap = withNightRule({ startTime: "01:15:00", stopTime: "01:45:00", recurring: ["Sun"] });
      scan(impl, snap, "door-front", [
        ["2026-11-01T05:10:00Z", BOB_OUT], // 01:10 EDT
        ["2026-11-01T05:30:00Z", bobIn()], // 01:30 EDT
        ["2026-11-01T05:50:00Z", BOB_OUT], // 01:50 EDT
        ["2026-11-01T06:10:00Z", BOB_OUT], // 01:10 EST
        ["2026-11-01T06:30:00Z", bobIn()], // 01:30 EST
        ["2026-11-01T06:45:00Z", BOB_OUT], // 01:45 EST
      ]);
    });

    test("window 01:00–02:00 covers two real hours", () => {
      const snap = withNightRule({ startTime: "01:00:00", stopTime: "02:00:00", recurring: ["Sun"] });
      scan(impl, snap, "door-front", [
        ["2026-11-01T04:59:59Z", BOB_OUT], // 00:59:59 EDT
        ["2026-11-01T05:00:00Z", bobIn()], // 01:00 EDT
        ["2026-11-01T06:00:00Z", bobIn()], // 01:00 EST
        ["2026-11-01T06:59:59.999Z", bobIn()], // 01:59:59.999 EST
        ["2026-11-01T07:00:00Z", BOB_OUT], // 02:00 EST
      ]);
    });
  });

  test("Europe/London: summer time is applied at the annex (node-b)", () => {
    const snap = building((d) => {
      d.addRule({
        id: "r-night-annex",
        groupId: "g-night",
        devices: ["door-annex"],
        startTime: "08:00:00",
        stopTime: "18:00:00",
        recurring: ["Mon", "Tue", "Wed", "Thu", "Fri"],
      });
      d.addRule({
        id: "r-night-annex-sun",
        groupId: "g-night",
        devices: ["door-annex"],
        startTime: "01:00:00",
        stopTime: "02:00:00",
        recurring: ["Sun"],
      });
    });
    scan(impl, snap, "door-annex", [
      ["2026-06-01T07:30:00Z", bobIn("r-night-annex")], // Mon 08:30 BST
      ["2026-06-01T06:59:59Z", BOB_OUT], // Mon 07:59:59 BST
      ["2026-06-01T16:59:59Z", bobIn("r-night-annex")], // Mon 17:59:59 BST
      ["2026-06-01T17:00:00Z", BOB_OUT], // Mon 18:00 BST
      ["2026-03-02T07:30:00Z", BOB_OUT], // Mon 07:30 GMT (winter)
      ["2026-03-02T08:00:00Z", bobIn("r-night-annex")], // Mon 08:00 GMT
      // Sun 2026-03-29: 01:00 GMT jumps to 02:00 BST, so 01:00–02:00 never happens.
      ["2026-03-29T00:59:59Z", BOB_OUT], // 00:59:59 GMT
      ["2026-03-29T01:00:00Z", BOB_OUT], // 02:00 BST
      ["2026-03-29T01:30:00Z", BOB_OUT], // 02:30 BST
      ["2026-04-05T00:30:00Z", bobIn("r-night-annex-sun")], // next Sunday 01:30 BST
    ]);
  });

  test("Australia/Lord_Howe: the 30-minute shift (+10:30 → +11:00 on Sun 2026-10-04, back on Sun 2026-04-05)", () => {
    const snap = building((d) => {
      d.node("node-b").timezone = "Australia/Lord_Howe";
      d.addRule({
        id: "r-lh-spring",
        groupId: "g-night",
        devices: ["door-annex"],
        startTime: "02:40:00",
        stopTime: "03:00:00",
        recurring: ["Sun"],
      });
      d.addRule({
        id: "r-lh-autumn",
        groupId: "g-night",
        devices: ["door-annex"],
        startTime: "01:40:00",
        stopTime: "01:50:00",
        recurring: ["Sun"],
      });
    });
    scan(impl, snap, "door-annex", [
      // Spring: 02:00 +10:30 becomes 02:30 +11:00.
      ["2026-10-03T15:29:59Z", BOB_OUT], // 01:59:59 +10:30
      ["2026-10-03T15:39:59Z", BOB_OUT], // 02:39:59 +11:00
      ["2026-10-03T15:45:00Z", bobIn("r-lh-spring")], // 02:45 +11:00 (a fixed +10:30 would say 02:15)
      ["2026-10-03T15:59:59.999Z", bobIn("r-lh-spring")], // 02:59:59.999 +11:00
      ["2026-10-03T16:00:00Z", BOB_OUT], // 03:00 +11:00
      // Autumn: 02:00 +11:00 becomes 01:30 +10:30; 01:30–02:00 happens twice.
      ["2026-04-04T14:45:00Z", bobIn("r-lh-autumn")], // 01:45 +11:00
      ["2026-04-04T14:55:00Z", BOB_OUT], // 01:55 +11:00
      ["2026-04-04T15:15:00Z", bobIn("r-lh-autumn")], // 01:45 +10:30
      ["2026-04-04T15:25:00Z", BOB_OUT], // 01:55 +10:30
    ]);
  });

  test("the same instant answers differently at nodes in different zones", () => {
    const snap = withNightRule({
      devices: ["door-front", "door-annex"],
      startTime: "09:00:00",
      stopTime: "17:00:00",
      recurring: ["Mon", "Tue", "Wed", "Thu", "Fri"],
    });
    const at = checker(impl, snap);
    // Mon 2026-06-01 18:00Z: 14:00 EDT in New York (open), 19:00 BST in London (closed).
    at(cardAt("door-front", "2026-06-01T18:00:00Z", 17, 1002), bobIn());
    at(cardAt("door-annex", "2026-06-01T18:00:00Z", 17, 1002), BOB_OUT);
    // Mon 2026-06-01 08:30Z: 04:30 EDT in New York (closed), 09:30 BST in London (open).
    at(cardAt("door-front", "2026-06-01T08:30:00Z", 17, 1002), BOB_OUT);
    at(cardAt("door-annex", "2026-06-01T08:30:00Z", 17, 1002), bobIn());
    // Sat 2026-06-06 02:00Z is still Friday 22:00 EDT in New York, Saturday 03:00 BST in London.
    const fri = withNightRule({
      devices: ["door-front", "door-annex"],
      startTime: "22:00:00",
      stopTime: "23:00:00",
      recurring: ["Fri"],
    });
    checker(impl, fri)(cardAt("door-front", "2026-06-06T02:00:00Z", 17, 1002), bobIn());
    checker(impl, fri)(cardAt("door-annex", "2026-06-06T02:00:00Z", 17, 1002), BOB_OUT);
  });

  describe("E15 rule startDate/endDate bound the start day of an overnight occurrence", () => {
    test("endDate = the Friday: the Saturday-morning tail of that Friday's shift is still open", () => {
      const snap = withNightRule({ endDate: "2026-03-06" });
      scan(impl, snap, "door-front", [
        ["2026-03-06T22:30:00-05:00", bobIn()], // Fri 03-06
        ["2026-03-07T05:00:00-05:00", bobIn()], // Sat 03-07, occurrence of Fri 03-06
        ["2026-03-13T23:00:00-04:00", BOB_OUT], // Fri 03-13 (EDT from 03-08 on)
        ["2026-03-14T05:00:00-04:00", BOB_OUT], // Sat 03-14, occurrence of Fri 03-13
      ]);
    });

    test("startDate = the Saturday: the shift that started Friday night is not open on Saturday morning", () => {
      const snap = withNightRule({ startDate: "2026-03-07" });
      scan(impl, snap, "door-front", [
        ["2026-03-07T05:00:00-05:00", BOB_OUT], // occurrence of Fri 03-06, before startDate
        ["2026-03-13T23:00:00-04:00", bobIn()], // Fri 03-13
        ["2026-03-14T05:00:00-04:00", bobIn()], // occurrence of Fri 03-13
      ]);
    });

    test("startDate = endDate = the Friday: one whole occurrence", () => {
      const snap = withNightRule({ startDate: "2026-03-06", endDate: "2026-03-06" });
      scan(impl, snap, "door-front", [
        ["2026-02-28T05:00:00-05:00", BOB_OUT], // occurrence of Fri 02-27
        ["2026-03-06T21:59:59-05:00", BOB_OUT],
        ["2026-03-06T22:00:00-05:00", bobIn()],
        ["2026-03-07T05:59:59.999-05:00", bobIn()],
        ["2026-03-13T22:00:00-04:00", BOB_OUT],
      ]);
    });

    test("a same-day window is bounded by its own day", () => {
      const snap = withNightRule({
        startTime: "09:00:00",
        stopTime: "17:00:00",
        recurring: ["Wed", "Thu"],
        startDate: "2026-03-05",
        endDate: "2026-03-05",
      });
      scan(impl, snap, "door-front", [
        ["2026-03-04T12:00:00-05:00", BOB_OUT], // Wed 03-04
        ["2026-03-05T12:00:00-05:00", bobIn()], // Thu 03-05
        ["2026-03-11T12:00:00-04:00", BOB_OUT], // Wed 03-11
      ]);
    });
  });

  describe("E14 holder activeDate/expireDate in the node's local time", () => {
    const snap = building((d) => {
      const alice = d.holder("h-alice");
      alice.activeDate = "2026-03-04T09:00:00";
      alice.expireDate = "2026-03-04T17:00:00";
    });
    const ok = (ruleId: string): Expected => ({ reason: "allowed", activeRuleId: ruleId, ...ALICE });

    test("edges at door-front (New York, EST)", () => {
      const at = checker(impl, snap);
      at(cardAt("door-front", "2026-03-04T08:59:59.999-05:00", 17, 1001), { reason: "holderNotYetActive", ...ALICE });
      at(cardAt("door-front", "2026-03-04T09:00:00-05:00", 17, 1001), ok("r-staff-front"));
      at(cardAt("door-front", "2026-03-04T16:59:59.999-05:00", 17, 1001), ok("r-staff-front"));
      at(cardAt("door-front", "2026-03-04T17:00:00-05:00", 17, 1001), { reason: "holderExpired", ...ALICE });
    });

    test("the same instant at node-a (New York) and node-b (London)", () => {
      const at = checker(impl, snap);
      // 09:00Z = 04:00 EST, 09:00 GMT.
      at(cardAt("door-front", "2026-03-04T09:00:00Z", 17, 1001), { reason: "holderNotYetActive", ...ALICE });
      at(cardAt("door-annex", "2026-03-04T09:00:00Z", 17, 1001), ok("r-staff-front"));
      // 17:00Z = 12:00 EST, 17:00 GMT.
      at(cardAt("door-front", "2026-03-04T17:00:00Z", 17, 1001), ok("r-staff-front"));
      at(cardAt("door-annex", "2026-03-04T17:00:00Z", 17, 1001), { reason: "holderExpired", ...ALICE });
    });

    test("an activeDate inside the spring-forward gap starts at the jump", () => {
      const gap = building((d) => {
        d.holder("h-alice").activeDate = "2026-03-08T02:30:00";
      });
      const at = checker(impl, gap);
      at(cardAt("door-front", "2026-03-08T06:59:59.999Z", 17, 1001), { reason: "holderNotYetActive", ...ALICE }); // 01:59:59.999 EST
      at(cardAt("door-front", "2026-03-08T07:00:00Z", 17, 1001), ok("r-staff-front")); // 03:00 EDT
    });

    test("fall-back hour: the wall clock counts, so 01:15 EST is before an expiry at 01:30", () => {
      const fall = building((d) => {
        d.holder("h-alice").expireDate = "2026-11-01T01:30:00";
      });
      const at = checker(impl, fall);
      at(cardAt("door-front", "2026-11-01T05:15:00Z", 17, 1001), ok("r-staff-front")); // 01:15 EDT
      at(cardAt("door-front", "2026-11-01T05:45:00Z", 17, 1001), { reason: "holderExpired", ...ALICE }); // 01:45 EDT
      at(cardAt("door-front", "2026-11-01T06:15:00Z", 17, 1001), ok("r-staff-front")); // 01:15 EST
      at(cardAt("door-front", "2026-11-01T06:30:00Z", 17, 1001), { reason: "holderExpired", ...ALICE }); // 01:30 EST
    });
  });

  describe("week, year and calendar boundaries", () => {
    test("a Saturday-night window runs into Sunday (the week wraps)", () => {
      const snap = withNightRule({ recurring: ["Sat"] });
      scan(impl, snap, "door-front", [
        ["2026-02-28T21:59:59-05:00", BOB_OUT], // Sat
        ["2026-02-28T22:00:00-05:00", bobIn()],
        ["2026-03-01T05:59:59.999-05:00", bobIn()], // Sun
        ["2026-03-01T06:00:00-05:00", BOB_OUT],
        ["2026-03-01T22:30:00-05:00", BOB_OUT], // Sun night
      ]);
    });

    test("an overnight window across the spring-forward night ends at 06:00 EDT", () => {
      const snap = withNightRule({ recurring: ["Sat"] });
      scan(impl, snap, "door-front", [
        ["2026-03-08T06:59:59Z", bobIn()], // Sun 01:59:59 EST
        ["2026-03-08T07:00:00Z", bobIn()], // Sun 03:00 EDT
        ["2026-03-08T09:59:59.999Z", bobIn()], // Sun 05:59:59.999 EDT
        ["2026-03-08T10:00:00Z", BOB_OUT], // Sun 06:00 EDT
      ]);
    });

    test("an overnight window across the fall-back night ends at 06:00 EST", () => {
      const snap = withNightRule({ recurring: ["Sat"] });
      scan(impl, snap, "door-front", [
        ["2026-11-01T01:59:59Z", BOB_OUT], // Sat 21:59:59 EDT
        ["2026-11-01T02:00:00Z", bobIn()], // Sat 22:00 EDT
        ["2026-11-01T10:59:59.999Z", bobIn()], // Sun 05:59:59.999 EST
        ["2026-11-01T11:00:00Z", BOB_OUT], // Sun 06:00 EST
      ]);
    });

    test("an overnight occurrence across New Year keeps its Thursday start day (E15)", () => {
      const ends = withNightRule({ recurring: ["Thu"], endDate: "2026-12-31" });
      scan(impl, ends, "door-front", [
        ["2026-12-31T22:00:00-05:00", bobIn()], // Thu
        ["2027-01-01T05:00:00-05:00", bobIn()], // Fri, new year
        ["2027-01-07T22:00:00-05:00", BOB_OUT],
      ]);
      const starts = withNightRule({ recurring: ["Thu"], startDate: "2027-01-01" });
      scan(impl, starts, "door-front", [
        ["2027-01-01T05:00:00-05:00", BOB_OUT],
        ["2027-01-07T22:00:00-05:00", bobIn()],
        ["2027-01-08T05:00:00-05:00", bobIn()],
      ]);
    });

    test("rule dates on a leap day", () => {
      const snap = withNightRule({
        startTime: "09:00:00",
        stopTime: "17:00:00",
        recurring: ["Tue"],
        startDate: "2028-02-29",
        endDate: "2028-02-29",
      });
      scan(impl, snap, "door-front", [
        ["2028-02-22T12:00:00-05:00", BOB_OUT],
        ["2028-02-29T12:00:00-05:00", bobIn()],
        ["2028-03-07T12:00:00-05:00", BOB_OUT],
      ]);
    });

    test("a rule with no weekday is never open", () => {
      const snap = withNightRule({ recurring: [] });
      scan(impl, snap, "door-front", [
        ["2026-03-06T23:00:00-05:00", BOB_OUT],
        ["2026-03-07T05:00:00-05:00", BOB_OUT],
      ]);
    });

    test("Asia/Kathmandu (+05:45)", () => {
      const snap = building((d) => {
        d.node("node-b").timezone = "Asia/Kathmandu";
        d.addRule({
          id: "r-ktm",
          groupId: "g-night",
          devices: ["door-annex"],
          startTime: "05:45:00",
          stopTime: "06:00:00",
          recurring: ["Mon"],
        });
      });
      scan(impl, snap, "door-annex", [
        ["2026-05-31T23:59:59.999Z", BOB_OUT], // Mon 05:44:59.999
        ["2026-06-01T00:00:00Z", bobIn("r-ktm")], // Mon 05:45
        ["2026-06-01T00:14:59.999Z", bobIn("r-ktm")],
        ["2026-06-01T00:15:00Z", BOB_OUT], // Mon 06:00
      ]);
    });

    test("Pacific/Apia skipped Friday 2011-12-30: a Friday rule never opens, a Thursday-night window stops at the jump", () => {
      const snap = building((d) => {
        d.node("node-b").timezone = "Pacific/Apia";
        d.addRule({ id: "r-apia-fri", groupId: "g-night", devices: ["door-annex"], recurring: ["Fri"] });
        d.addRule({
          id: "r-apia-thu",
          groupId: "g-night",
          devices: ["door-annex"],
          startTime: "22:00:00",
          stopTime: "06:00:00",
          recurring: ["Thu"],
        });
      });
      scan(impl, snap, "door-annex", [
        ["2011-12-30T08:00:00Z", bobIn("r-apia-thu")], // Thu 2011-12-29 22:00 -10:00
        ["2011-12-30T09:59:59.999Z", bobIn("r-apia-thu")], // Thu 23:59:59.999 -10:00
        // Next wall time is Sat 2011-12-31 00:00 +14:00: the day before Saturday is Friday (SPEC §4),
        // which is neither the Thursday the night window starts on nor a day that occurred.
        ["2011-12-30T10:00:00Z", BOB_OUT],
        ["2011-12-30T15:00:00Z", BOB_OUT], // Sat 05:00 +14:00
        ["2012-01-05T10:00:00Z", bobIn("r-apia-fri")], // Fri 2012-01-06 00:00 +14:00 (a Friday that happened; "r-apia-fri" < "r-apia-thu")
      ]);
    });
  });

  describe("24-hour windows", () => {
    test("start = stop (08:00:00–08:00:00, [Mon]) is open Monday 08:00 to Tuesday 08:00", () => {
      const snap = withNightRule({ startTime: "08:00:00", stopTime: "08:00:00", recurring: ["Mon"] });
      scan(impl, snap, "door-front", [
        ["2026-03-02T07:59:59.999-05:00", BOB_OUT], // Mon
        ["2026-03-02T08:00:00-05:00", bobIn()],
        ["2026-03-02T23:59:59-05:00", bobIn()],
        ["2026-03-03T07:59:59.999-05:00", bobIn()], // Tue
        ["2026-03-03T08:00:00-05:00", BOB_OUT],
      ]);
    });

    test("00:00:00–24:00:00 [Wed] is all of Wednesday and nothing else", () => {
      const snap = withNightRule({ startTime: "00:00:00", stopTime: "24:00:00", recurring: ["Wed"] });
      scan(impl, snap, "door-front", [
        ["2026-03-03T23:59:59.999-05:00", BOB_OUT], // Tue
        ["2026-03-04T00:00:00-05:00", bobIn()], // Wed
        ["2026-03-04T23:59:59.999-05:00", bobIn()],
        ["2026-03-05T00:00:00-05:00", BOB_OUT], // Thu
      ]);
    });

    test("00:00:00–00:00:00 [Wed] (start = stop) is the same day", () => {
      const snap = withNightRule({ startTime: "00:00:00", stopTime: "00:00:00", recurring: ["Wed"] });
      scan(impl, snap, "door-front", [
        ["2026-03-03T23:59:59.999-05:00", BOB_OUT],
        ["2026-03-04T00:00:00-05:00", bobIn()],
        ["2026-03-04T23:59:59.999-05:00", bobIn()],
        ["2026-03-05T00:00:00-05:00", BOB_OUT],
      ]);
    });

    test("22:00:00–24:00:00 [Fri] ends at midnight", () => {
      const snap = withNightRule({ startTime: "22:00:00", stopTime: "24:00:00", recurring: ["Fri"] });
      scan(impl, snap, "door-front", [
        ["2026-03-06T22:00:00-05:00", bobIn()],
        ["2026-03-06T23:59:59.999-05:00", bobIn()],
        ["2026-03-07T00:00:00-05:00", BOB_OUT],
      ]);
    });

    test("a 24-hour window on the 23-hour spring-forward day and the 25-hour fall-back day", () => {
      const spring = withNightRule({ startTime: "00:00:00", stopTime: "24:00:00", recurring: ["Sun"] });
      scan(impl, spring, "door-front", [
        ["2026-03-08T04:59:59Z", BOB_OUT], // Sat 23:59:59 EST
        ["2026-03-08T05:00:00Z", bobIn()], // Sun 00:00 EST
        ["2026-03-09T03:59:59.999Z", bobIn()], // Sun 23:59:59.999 EDT
        ["2026-03-09T04:00:00Z", BOB_OUT], // Mon 00:00 EDT
        ["2026-11-01T04:00:00Z", bobIn()], // Sun 00:00 EDT
        ["2026-11-02T04:59:59.999Z", bobIn()], // Sun 23:59:59.999 EST
        ["2026-11-02T05:00:00Z", BOB_OUT], // Mon 00:00 EST
      ]);
    });
  });
});
