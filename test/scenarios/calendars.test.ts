// Calendars (docs/semantics.md C1–C6): a rule's calendar opens or closes the occurrences that start on
// its days, the day being the local calendar day of the rule's device's cloud node, as startDate.
// Both deciders (the engine and the naive reference) answer every scan. The building's system zone is
// America/Chicago here (node-a follows it; node-b is Europe/London).
import { describe, expect, test } from "vitest";
import { renderPictureSvg } from "../../src/adapters/cli/picturePage.js";
import { type TraceRule, createEngine, diffAccess, weeklyPicture } from "../../src/evaluate/index.js";
import type { SystemSnapshot } from "../../src/model/index.js";
import { ALL_DAYS, type Draft, type Expected, IMPLS, building, cardAt, checker } from "./fixture.js";

const BOB = { holderId: "h-bob", credentialId: "c-bob-card", facilityCode: 17, credentialNumber: 1002 } as const;
const ALICE = { holderId: "h-alice", credentialId: "c-alice-card", facilityCode: 17, credentialNumber: 1001 } as const;
const bobIn: Expected = { reason: "allowed", activeRuleId: "r-night-front", ...BOB };
const bobOut: Expected = { reason: "noActiveRule", ...BOB };
const aliceIn: Expected = { reason: "allowed", activeRuleId: "r-staff-front", ...ALICE };
const aliceOut: Expected = { reason: "noActiveRule", ...ALICE };

/** The building in Chicago with `calendars`, edited further by `edit`. */
function chicago(calendars: unknown[], edit: (d: Draft) => void): SystemSnapshot {
  return building((d) => {
    d.raw.timezone = "America/Chicago";
    d.raw.calendars = calendars;
    edit(d);
  });
}

/** The DST days of 2026 in Chicago are holidays. */
const DST_HOLIDAYS = { id: "cal-dst", name: "DST days", dates: ["2026-03-08", "2026-11-01"] };

/** Bob's night rule every night 22:00–06:00, closed on the nights that start on a DST day. */
const nightsExceptDst = chicago([DST_HOLIDAYS], (d) => {
  Object.assign(d.rule("r-night-front"), { recurring: [...ALL_DAYS], calendar: { id: "cal-dst", mode: "exclude" } });
});

/** Alice's 24x7 rule (00:00–24:00 every day, door-front and door-annex) with a calendar. */
function aliceWith(calendar: Record<string, unknown>, mode: "exclude" | "only", edit?: (d: Draft) => void) {
  return chicago([{ id: "cal", name: "Calendar", ...calendar }], (d) => {
    d.rule("r-staff-front").calendar = { id: "cal", mode };
    edit?.(d);
  });
}

describe.each(IMPLS)("$name", (impl) => {
  describe("C3: a holiday on the day clocks jump forward (Chicago 2026-03-08)", () => {
    test("the night before the holiday stays open past midnight into the holiday, across the jump", () => {
      const at = checker(impl, nightsExceptDst);
      at(cardAt("door-front", "2026-03-07T22:00:00-06:00", 17, 1002), bobIn);
      at(cardAt("door-front", "2026-03-08T00:30:00-06:00", 17, 1002), bobIn);
      at(cardAt("door-front", "2026-03-08T01:59:59-06:00", 17, 1002), bobIn);
      at(cardAt("door-front", "2026-03-08T03:00:00-05:00", 17, 1002), bobIn);
      at(cardAt("door-front", "2026-03-08T05:59:59-05:00", 17, 1002), bobIn);
      at(cardAt("door-front", "2026-03-08T06:00:00-05:00", 17, 1002), bobOut);
    });
    test("the night that starts on the holiday is closed all night, after midnight too", () => {
      const at = checker(impl, nightsExceptDst);
      at(cardAt("door-front", "2026-03-08T22:00:00-05:00", 17, 1002), bobOut);
      at(cardAt("door-front", "2026-03-08T23:59:59-05:00", 17, 1002), bobOut);
      at(cardAt("door-front", "2026-03-09T00:00:00-05:00", 17, 1002), bobOut);
      at(cardAt("door-front", "2026-03-09T05:59:59-05:00", 17, 1002), bobOut);
      at(cardAt("door-front", "2026-03-09T22:00:00-05:00", 17, 1002), bobIn);
    });
    test("an all-day rule is closed for the whole 23-hour holiday and open either side", () => {
      const snap = aliceWith({ dates: ["2026-03-08"] }, "exclude");
      const at = checker(impl, snap);
      at(cardAt("door-front", "2026-03-07T23:59:59-06:00", 17, 1001), aliceIn);
      at(cardAt("door-front", "2026-03-08T00:00:00-06:00", 17, 1001), aliceOut);
      at(cardAt("door-front", "2026-03-08T03:30:00-05:00", 17, 1001), aliceOut);
      at(cardAt("door-front", "2026-03-08T23:59:59-05:00", 17, 1001), aliceOut);
      at(cardAt("door-front", "2026-03-09T00:00:00-05:00", 17, 1001), aliceIn);
    });
  });

  describe("C3: a holiday on the day clocks fall back (Chicago 2026-11-01)", () => {
    test("the night before is open through both 01:30s and until 06:00 CST", () => {
      const at = checker(impl, nightsExceptDst);
      at(cardAt("door-front", "2026-11-01T01:30:00-05:00", 17, 1002), bobIn);
      at(cardAt("door-front", "2026-11-01T01:30:00-06:00", 17, 1002), bobIn);
      at(cardAt("door-front", "2026-11-01T05:59:59-06:00", 17, 1002), bobIn);
      at(cardAt("door-front", "2026-11-01T06:00:00-06:00", 17, 1002), bobOut);
    });
    test("the night that starts on the holiday is closed until 06:00 the next morning", () => {
      const at = checker(impl, nightsExceptDst);
      at(cardAt("door-front", "2026-11-01T22:00:00-06:00", 17, 1002), bobOut);
      at(cardAt("door-front", "2026-11-02T01:00:00-06:00", 17, 1002), bobOut);
      at(cardAt("door-front", "2026-11-02T22:00:00-06:00", 17, 1002), bobIn);
    });
    test("an all-day rule is closed for the whole 25-hour holiday, the repeated hour twice", () => {
      const at = checker(impl, aliceWith({ dates: ["2026-11-01"] }, "exclude"));
      at(cardAt("door-front", "2026-11-01T00:00:00-05:00", 17, 1001), aliceOut);
      at(cardAt("door-front", "2026-11-01T01:30:00-05:00", 17, 1001), aliceOut);
      at(cardAt("door-front", "2026-11-01T01:30:00-06:00", 17, 1001), aliceOut);
      at(cardAt("door-front", "2026-11-01T23:59:59-06:00", 17, 1001), aliceOut);
      at(cardAt("door-front", "2026-10-31T23:59:59-05:00", 17, 1001), aliceIn);
      at(cardAt("door-front", "2026-11-02T00:00:00-06:00", 17, 1001), aliceIn);
    });
  });

  test("C2: `only` opens the rule on the calendar's days alone (overnight: the night that starts on one)", () => {
    const snap = chicago([DST_HOLIDAYS], (d) => {
      Object.assign(d.rule("r-night-front"), { recurring: [...ALL_DAYS], calendar: { id: "cal-dst", mode: "only" } });
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", "2026-03-08T01:00:00-06:00", 17, 1002), bobOut); // started 03-07
    at(cardAt("door-front", "2026-03-08T22:00:00-05:00", 17, 1002), bobIn);
    at(cardAt("door-front", "2026-03-09T05:59:59-05:00", 17, 1002), bobIn); // started 03-08
    at(cardAt("door-front", "2026-03-09T22:00:00-05:00", 17, 1002), bobOut);
    at(cardAt("door-front", "2026-11-01T23:00:00-06:00", 17, 1002), bobIn);
    at(cardAt("door-front", "2026-11-02T23:00:00-06:00", 17, 1002), bobOut);
  });

  test("C2: an empty calendar closes an `only` rule always and leaves an `exclude` rule as it was", () => {
    checker(impl, aliceWith({}, "only"))(cardAt("door-front", "2026-06-01T12:00:00-05:00", 17, 1001), aliceOut);
    checker(impl, aliceWith({}, "exclude"))(cardAt("door-front", "2026-06-01T12:00:00-05:00", 17, 1001), aliceIn);
  });

  test("C1: yearly {month, day} repeat every year; February 29 falls in leap years only", () => {
    const at = checker(
      impl,
      aliceWith(
        {
          recurring: [
            { month: 2, day: 29 },
            { month: 7, day: 4 },
          ],
        },
        "exclude",
      ),
    );
    for (const noon of ["2028-02-29", "2032-02-29", "2096-02-29", "2026-07-04", "2031-07-04", "2099-07-04"])
      at(cardAt("door-front", `${noon}T12:00:00-06:00`, 17, 1001), aliceOut);
    for (const noon of ["2027-02-28", "2027-03-01", "2028-02-28", "2028-03-01", "2026-07-03", "2026-07-05"])
      at(cardAt("door-front", `${noon}T12:00:00-06:00`, 17, 1001), aliceIn);
  });

  test("C1: dates and yearly dates together; `only` on a yearly date", () => {
    const cal = { dates: ["2026-12-24"], recurring: [{ month: 12, day: 25 }] };
    const at = checker(impl, aliceWith(cal, "only"));
    at(cardAt("door-front", "2026-12-24T12:00:00-06:00", 17, 1001), aliceIn);
    at(cardAt("door-front", "2026-12-25T12:00:00-06:00", 17, 1001), aliceIn);
    at(cardAt("door-front", "2027-12-25T12:00:00-06:00", 17, 1001), aliceIn);
    at(cardAt("door-front", "2027-12-24T12:00:00-06:00", 17, 1001), aliceOut);
    at(cardAt("door-front", "2026-12-26T00:00:00-06:00", 17, 1001), aliceOut);
  });

  test("C3: the day is the device's cloud node's: door-annex (London) follows London's date", () => {
    // 2026-12-25T02:00 in London is still 2026-12-24 in Chicago.
    const at = checker(impl, aliceWith({ dates: ["2026-12-25"] }, "exclude"));
    at(cardAt("door-annex", "2026-12-25T02:00:00Z", 17, 1001), aliceOut);
    at(cardAt("door-front", "2026-12-25T02:00:00Z", 17, 1001), aliceIn);
    at(cardAt("door-annex", "2026-12-25T23:59:59Z", 17, 1001), aliceOut);
    at(cardAt("door-annex", "2026-12-26T00:00:00Z", 17, 1001), aliceIn);
    at(cardAt("door-front", "2026-12-26T00:00:00Z", 17, 1001), aliceOut); // 18:00 on the 25th in Chicago
  });

  test("C5: a calendar of another partition applies as any other", () => {
    const snap = aliceWith({ partition: "p-west", dates: ["2026-12-25"] }, "exclude", (d) => {
      d.raw.partitions = [
        { id: "p-east", name: "East" },
        { id: "p-west", name: "West" },
      ];
      d.raw.groups.find((g) => g.id === "g-staff")!.partition = "p-east";
    });
    expect(snap.calendars[0]!.partition).toBe("p-west");
    const at = checker(impl, snap);
    at(cardAt("door-front", "2026-12-25T12:00:00-06:00", 17, 1001), aliceOut);
    at(cardAt("door-front", "2026-12-26T12:00:00-06:00", 17, 1001), aliceIn);
  });

  test("C2: a deny rule with a calendar denies only where the calendar leaves it open", () => {
    const snap = aliceWith({ dates: ["2026-12-25"] }, "exclude", (d) => {
      d.rule("r-staff-front").calendar = undefined;
      d.addRule({
        id: "r-deny",
        groupId: "g-staff",
        devices: ["door-front"],
        allow: false,
        calendar: { id: "cal", mode: "only" },
      });
    });
    const at = checker(impl, snap);
    at(cardAt("door-front", "2026-12-25T12:00:00-06:00", 17, 1001), {
      reason: "deniedByRule",
      activeRuleId: "r-deny",
      ...ALICE,
    });
    at(cardAt("door-front", "2026-12-26T12:00:00-06:00", 17, 1001), aliceIn);
  });

  test("C6: offline with the time unknown, a 24x7 rule passes whatever its calendar (as its dates)", () => {
    const snap = aliceWith(
      { recurring: [{ month: 12, day: 25 }] },
      "only",
      (d) => (d.node("node-a").offlinePolicy = 1),
    );
    const offline = { node: { online: false, offlineSeconds: 10, timeKnown: false } };
    checker(impl, snap)(cardAt("door-front", "2026-06-01T12:00:00-05:00", 17, 1001, offline), {
      reason: "offline24x7",
      activeRuleId: "r-staff-front",
      ...ALICE,
    });
  });
});

describe("C4: every query honours calendars (engine)", () => {
  // Alice's 24x7 rule at door-front closed on Christmas 2026 (a Friday) in Chicago.
  const xmas = aliceWith({ name: "Holidays", dates: ["2026-12-25"] }, "exclude");
  const engine = createEngine(xmas);
  const NOON = "2026-12-25T12:00:00-06:00";

  test("RSOP: the rule is inactive on the holiday, active the day after; devices follow", () => {
    const on = engine.rsop(["h-alice"], { at: NOON }).holders[0]!;
    expect(on.rules.find((r) => r.id === "r-staff-front")!.active).toBe(false);
    expect(on.devices.find((d) => d.id === "door-front")).toMatchObject({ allowed: false, activeRuleId: null });
    const after = engine.rsop(["h-alice"], { at: "2026-12-26T12:00:00-06:00" }).holders[0]!;
    expect(after.rules.find((r) => r.id === "r-staff-front")!.active).toBe(true);
    expect(after.devices.find((d) => d.id === "door-front")).toMatchObject({ allowed: true });
  });

  test("who can access: Alice is not at door-front on the holiday", () => {
    const ids = (at: string) => engine.whoCanAccess("door-front", { at }).holders.map((h) => h.holderId);
    expect(ids(NOON)).not.toContain("h-alice");
    expect(ids("2026-12-24T12:00:00-06:00")).toContain("h-alice");
  });

  test("access windows: the holiday is cut out at local midnights", () => {
    const w = engine.accessWindows("h-alice", "door-front", {
      from: "2026-12-24T00:00:00-06:00",
      to: "2026-12-27T00:00:00-06:00",
    });
    expect(w.windows.map((x) => [x.startLocal, x.endLocal])).toEqual([
      ["2026-12-24T00:00:00.000-06:00", "2026-12-25T00:00:00.000-06:00"],
      ["2026-12-26T00:00:00.000-06:00", "2026-12-27T00:00:00.000-06:00"],
    ]);
  });

  test("explain says the calendar closed the rule", () => {
    const x = engine.explain(cardAt("door-front", NOON, 17, 1001));
    const rules = x.trace.find((s) => s.step === "rules")!;
    const candidates = rules.details.candidates as TraceRule[];
    const front = candidates.find((c) => c.ruleId === "r-staff-front")!;
    expect(front).toMatchObject({ open: false, calendar: { id: "cal", mode: "exclude", closedIt: true } });
    expect(front.window).toContain("except on the days of calendar cal");
    expect(rules.summary).toContain("closed by its calendar: r-staff-front (calendar cal)");
    const open = engine.explain(cardAt("door-front", "2026-12-26T12:00:00-06:00", 17, 1001));
    const c2 = (open.trace.find((s) => s.step === "rules")!.details.candidates as TraceRule[])[0]!;
    expect(c2.calendar).toEqual({ id: "cal", mode: "exclude", closedIt: false });
    // A rule without a calendar has no calendar key (the trace's shape is unchanged for it).
    const plain = createEngine(building()).explain(cardAt("door-front", NOON, 17, 1001));
    for (const c of plain.trace.find((s) => s.step === "rules")!.details.candidates as TraceRule[])
      expect(Object.hasOwn(c, "calendar")).toBe(false);
  });

  test("diff: adding a date to a calendar loses the day for every holder whose rules use it", () => {
    const after = createEngine(aliceWith({ name: "Holidays", dates: ["2026-12-25", "2026-12-31"] }, "exclude"));
    const d = diffAccess(engine, after, { from: "2026-12-21T00:00:00-06:00", to: "2027-01-04T00:00:00-06:00" });
    const alice = d.changes.filter((c) => c.holderId === "h-alice");
    expect(alice.map((c) => c.deviceId)).toEqual(["door-annex", "door-front"]);
    // Each door loses its own node's 31 December: London's at door-annex, Chicago's at door-front.
    expect(alice.map((c) => [c.lost, c.gained])).toEqual([
      [[{ start: "2026-12-31T00:00:00.000Z", end: "2027-01-01T00:00:00.000Z" }], []],
      [[{ start: "2026-12-31T06:00:00.000Z", end: "2027-01-01T06:00:00.000Z" }], []],
    ]);
    expect(alice.map((c) => c.rulesBefore)).toEqual([["r-staff-front"], ["r-staff-front"]]);
  });

  test("weekly picture: the holiday's cells are empty and its day names the calendar; the page marks it", () => {
    const p = weeklyPicture(engine, { holderId: "h-alice", weekOf: "2026-12-25" });
    const row = p.rows.find((r) => r.id === "door-front")!;
    const fri = row.days.findIndex((d) => d.date === "2026-12-25");
    expect(row.days[fri]!.calendars).toEqual([{ id: "cal", name: "Holidays", mode: "exclude" }]);
    expect(row.cells[fri]!.every((v) => v === 0)).toBe(true);
    expect(row.cells[fri - 1]!.every((v) => v === 1)).toBe(true);
    expect(row.days.filter((d) => d.calendars !== undefined).length).toBe(1);
    const svg = renderPictureSvg(p);
    expect(svg).toContain('class="calendar-day"');
    expect(svg).toContain("Holidays (cal): closes its rules");
  });
});
