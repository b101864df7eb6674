// UTC offsets as query results print them (accessWindows' startLocal/endLocal): every offset an IANA
// zone takes inside 1970–2100 prints as ISO 8601 wants it, seconds included (Africa/Monrovia was
// −00:44:30 until 1972-01-07). The expected text comes from Intl's `longOffset` ("GMT-00:44:30",
// seconds-precision) and luxon's local wall time; luxon's own ISO offset drops the seconds ("-00:44"),
// so only its wall time is used.
import { DateTime } from "luxon";
import { describe, expect, test } from "vitest";
import { buildZoneTable, offsetAt } from "../../src/compile/zoneTable.js";
import { createEngine } from "../../src/evaluate/index.js";
import { isoLocal, isoOffset } from "../../src/evaluate/formatInstant.js";
import { building } from "./fixture.js";

const FROM = Date.UTC(1970, 0, 1);
const TO = Date.UTC(2100, 0, 1);

/** Intl's offset of `zone` at `at`, as ISO 8601 text (`GMT` alone is `+00:00`). */
function intlOffset(fmt: Intl.DateTimeFormat, at: number): string {
  const text = fmt.format(at);
  const m = /GMT([+-]\d\d:\d\d(?::\d\d)?)?$/.exec(text);
  if (m === null) throw new Error(`unexpected Intl output "${text}"`);
  return m[1] ?? "+00:00";
}

/** The offset text as ms. */
function offsetMs(text: string): number {
  const [h, m, s = "0"] = text.slice(1).split(":");
  return (text[0] === "-" ? -1 : 1) * ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000;
}

/** What `isoLocal` must print: luxon's wall time (ms precision) and Intl's offset with seconds. */
function expected(zone: string, at: number, offset: string): string {
  const wall = DateTime.fromMillis(at, { zone }).toISO({ includeOffset: false, suppressMilliseconds: false });
  return `${wall}${offset}`;
}

function longOffset(zone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
}

describe("isoOffset / isoLocal", () => {
  test("Africa/Monrovia before 1972-01-07 is −00:44:30, after it +00:00", () => {
    expect(isoOffset(-2_670_000)).toBe("-00:44:30");
    expect(isoLocal(Date.UTC(1971, 5, 7, 8, 44, 30), -2_670_000)).toBe("1971-06-07T08:00:00.000-00:44:30");
    const monrovia = buildZoneTable("Africa/Monrovia");
    const before = Date.UTC(1971, 5, 7, 8, 44, 30);
    expect(isoLocal(before, offsetAt(monrovia, before))).toBe("1971-06-07T08:00:00.000-00:44:30");
    const after = Date.UTC(1972, 5, 7, 8);
    expect(isoLocal(after, offsetAt(monrovia, after))).toBe("1972-06-07T08:00:00.000+00:00");
  });

  test("whole-minute offsets keep ±HH:mm; zero is +00:00; seconds only when present", () => {
    expect(isoOffset(0)).toBe("+00:00");
    expect(isoOffset(-0)).toBe("+00:00");
    expect(isoOffset(19_800_000)).toBe("+05:30");
    expect(isoOffset(-34_200_000)).toBe("-09:30");
    expect(isoOffset(45_900_000)).toBe("+12:45");
    expect(isoOffset(50_400_000)).toBe("+14:00");
    expect(isoOffset(-1_000)).toBe("-00:00:01");
    expect(isoOffset(3_599_000)).toBe("+00:59:59");
  });

  test("accessWindows prints Monrovia's 1971 wall times with −00:44:30", () => {
    const snap = building((d) => {
      d.node("node-a").timezone = "Africa/Monrovia";
      d.keepRules("r-staff-front");
      Object.assign(d.rule("r-staff-front"), { startTime: "08:00:00", stopTime: "17:00:00", recurring: ["Mon"] });
    });
    const engine = createEngine(snap);
    const { windows } = engine.accessWindows("h-alice", "door-front", {
      from: "1971-06-07T00:00:00Z",
      to: "1971-06-08T00:00:00Z",
    });
    expect(windows).toEqual([
      {
        start: "1971-06-07T08:44:30.000Z",
        end: "1971-06-07T17:44:30.000Z",
        startLocal: "1971-06-07T08:00:00.000-00:44:30",
        endLocal: "1971-06-07T17:00:00.000-00:44:30",
        activeRuleId: "r-staff-front",
      },
    ]);
  });

  // Every zone, probed on the 1st and 16th of every month 1970–2039 and quarterly after (tz rules
  // past 2037 only repeat). Checked once offline against the engine's zone tables of all 418 zones
  // (~9 s to build, too slow here): that cadence finds every offset they hold in 1970–2100,
  // including short-lived ones such as America/Argentina/Rio_Gallegos' −04:00 of 2004 and
  // America/Montevideo's −01:30. Each distinct (zone, offset) is checked once against Intl/luxon.
  test("every IANA zone at every offset it takes inside 1970–2100 prints like Intl/luxon", () => {
    const zones = Intl.supportedValuesOf("timeZone");
    expect(zones.length).toBeGreaterThan(300);
    let checked = 0;
    const withSeconds = new Set<string>();
    for (const zone of zones) {
      const fmt = longOffset(zone);
      const seen = new Set<string>();
      for (let y = 1970; y < 2100; y++)
        for (let m = 0; m < 12; m += y < 2040 ? 1 : 3)
          for (let day = 1; day <= 16; day += y < 2040 ? 15 : 99) {
            const at = Date.UTC(y, m, day, 12, 34, 56, 789);
            const offset = intlOffset(fmt, at);
            if (seen.has(offset)) continue;
            seen.add(offset);
            if (offset.length > 6) withSeconds.add(`${zone} ${offset}`);
            expect(isoLocal(at, offsetMs(offset)), `${zone} at ${new Date(at).toISOString()}`).toBe(
              expected(zone, at, offset),
            );
            checked++;
          }
    }
    expect(withSeconds).toContain("Africa/Monrovia -00:44:30");
    expect(checked).toBeGreaterThan(zones.length);
  }, 60_000);

  // The engine's own tables for the zones with unusual offsets: every segment that overlaps
  // 1970–2100, formatted at its first instant inside the span, against Intl and luxon.
  test.each([
    "Africa/Monrovia",
    "America/Montevideo",
    "America/Argentina/Rio_Gallegos",
    "Asia/Kathmandu",
    "Asia/Kolkata",
    "Australia/Eucla",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "Pacific/Kiritimati",
    "America/St_Johns",
    "Africa/Casablanca",
  ])("%s: every segment of its zone table inside 1970–2100", (zone) => {
    const table = buildZoneTable(zone);
    const fmt = longOffset(zone);
    let segments = 0;
    for (let i = 0; i < table.starts_.length; i++) {
      const at = Math.max(table.starts_[i]!, FROM);
      const end = i + 1 < table.starts_.length ? table.starts_[i + 1]! : Infinity;
      if (at >= TO || end <= FROM) continue;
      const offset = intlOffset(fmt, at);
      expect(offsetMs(offset), `${zone} at ${new Date(at).toISOString()}`).toBe(table.offsets_[i]);
      expect(isoLocal(at, offsetAt(table, at))).toBe(expected(zone, at, offset));
      segments++;
    }
    expect(segments).toBeGreaterThan(0);
  });
});
