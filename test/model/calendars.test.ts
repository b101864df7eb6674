// Calendars in the snapshot (docs/semantics.md C1, C2): the collection is optional, each calendar and
// each rule's calendar is checked at load, every problem at once with its path.
import { describe, expect, test } from "vitest";
import { CALENDAR_MAX_DATES, parseSnapshot } from "../../src/model/index.js";
import { building, issuesOf, pathsAndCodes, rawBuilding } from "../scenarios/fixture.js";

describe("calendars in rsop-system/1 (C1)", () => {
  test("a snapshot without calendars loads with none, its rules without a calendar key", () => {
    const s = building();
    expect(s.calendars).toEqual([]);
    for (const r of s.rules) expect(Object.hasOwn(r, "calendar")).toBe(false);
  });

  test("a calendar loads with its defaults; a rule names it with a mode", () => {
    const s = building((d) => {
      d.raw.calendars = [{ id: "cal-1", name: "Holidays", dates: ["2026-12-25"] }];
      d.rule("r-staff-lab").calendar = { id: "cal-1", mode: "exclude" };
    });
    expect(s.calendars).toEqual([
      { id: "cal-1", name: "Holidays", partition: null, dates: ["2026-12-25"], recurring: [] },
    ]);
    expect(s.rules.find((r) => r.id === "r-staff-lab")!.calendar).toEqual({ id: "cal-1", mode: "exclude" });
  });

  test("every problem at once: dates, recurring days per month, modes, unknown and duplicate ids", () => {
    const issues = issuesOf((d) => {
      d.raw.partitions = [{ id: "p-1", name: "P1" }];
      d.raw.calendars = [
        {
          id: "cal-1",
          name: "Holidays",
          dates: ["2026-02-29", "2026-13-01", "2024-02-29", "26-01-01"],
          recurring: [
            { month: 2, day: 29 },
            { month: 2, day: 30 },
            { month: 4, day: 31 },
            { month: 13, day: 1 },
            { month: 12, day: 0 },
          ],
        },
        { id: "cal-1", name: "Again", partition: "p-nope" },
        { id: "cal-2", name: "" },
      ];
      d.rule("r-staff-lab").calendar = { id: "cal-none", mode: "exclude" };
      d.rule("r-night-front").calendar = { id: "cal-1", mode: "sometimes" as "only" };
    });
    expect(pathsAndCodes(issues)).toEqual([
      ["calendars.0.dates.0", "invalid"],
      ["calendars.0.dates.1", "invalid"],
      ["calendars.0.dates.3", "invalid"],
      ["calendars.0.recurring.1.day", "invalid"],
      ["calendars.0.recurring.2.day", "invalid"],
      ["calendars.0.recurring.3.month", "tooBig"],
      ["calendars.0.recurring.4.day", "tooSmall"],
      ["calendars.1.id", "duplicateId"],
      ["calendars.1.partition", "unknownReference"],
      ["calendars.2.name", "tooSmall"],
      ["rules.1.calendar.id", "unknownReference"],
      ["rules.2.calendar.mode", "invalidValue"],
    ]);
    const byPath = new Map(issues.map((i) => [i.path.join("."), i.message]));
    expect(byPath.get("calendars.0.recurring.2.day")).toBe("Month 4 has no day 31.");
    expect(byPath.get("rules.1.calendar.id")).toBe('Names calendar "cal-none", which is not in the snapshot.');
  });

  test(`at most ${CALENDAR_MAX_DATES} dates and 366 yearly dates per calendar`, () => {
    const dates = Array.from({ length: CALENDAR_MAX_DATES }, (_, k) =>
      new Date(Date.UTC(2000, 0, 1 + k)).toISOString().slice(0, 10),
    );
    const ok = parseSnapshot(rawBuilding((d) => (d.raw.calendars = [{ id: "c", name: "C", dates }])));
    expect(ok.ok).toBe(true);
    const recurring = Array.from({ length: 367 }, () => ({ month: 1, day: 1 }));
    const issues = issuesOf(
      (d) => (d.raw.calendars = [{ id: "c", name: "C", dates: [...dates, "2099-01-01"], recurring }]),
    );
    expect(pathsAndCodes(issues)).toEqual([
      ["calendars.0.dates", "tooBig"],
      ["calendars.0.recurring", "tooBig"],
    ]);
  });
});
