import { IANAZone } from "luxon";
import fc from "fast-check";
import { expect, test } from "vitest";
import { MAX_INSTANT, MIN_INSTANT } from "../model/index.js";
import { buildZoneTable, offsetAt } from "./zoneTable.js";

const ZONES = [
  "UTC",
  "America/New_York",
  "America/Chicago",
  "Europe/London",
  "Australia/Lord_Howe",
  "Asia/Kolkata",
  "America/St_Johns",
  "Pacific/Apia",
  "Africa/Casablanca",
  "Asia/Tehran",
  "Pacific/Chatham",
];
const runs = Number(process.env.RSOP_PROPERTY_RUNS ?? 2000);

test.each(ZONES)("%s: the table agrees with luxon at random instants and around every transition", (zone) => {
  const table = buildZoneTable(zone);
  const z = IANAZone.create(zone);
  const luxon = (t: number) => z.offset(t) * 60_000;
  fc.assert(
    fc.property(fc.integer({ min: MIN_INSTANT, max: MAX_INSTANT - 1 }), (t) => offsetAt(table, t) === luxon(t)),
    { numRuns: runs },
  );
  for (let i = 1; i < table.starts_.length; i++) {
    const s = table.starts_[i]!;
    for (const t of [s - 1, s, s + 1, s - 60_000, s + 3_600_000]) expect(offsetAt(table, t)).toBe(luxon(t));
  }
});

test.each(ZONES)(
  "%s: just outside the span (a day before 1970, days after 2100) the table still agrees with luxon",
  (zone) => {
    const table = buildZoneTable(zone);
    const z = IANAZone.create(zone);
    for (const t of [
      MIN_INSTANT - 86_400_000,
      MIN_INSTANT - 1,
      MIN_INSTANT,
      MAX_INSTANT - 1,
      MAX_INSTANT,
      MAX_INSTANT + 86_400_000,
      MAX_INSTANT + 6 * 86_400_000,
    ])
      expect(offsetAt(table, t)).toBe(z.offset(t) * 60_000);
  },
);

test("tables are cached per zone", () => {
  expect(buildZoneTable("Europe/London")).toBe(buildZoneTable("Europe/London"));
});
