// Rule windows as integers in one Int32Array, RULE_STRIDE slots per rule rank: milliseconds of the
// local day, a 7-bit weekday mask, the bounds of the occurrence's start day and the calendar that
// opens or closes that day (docs/semantics.md C3), read from `calendarData_` (calendarAt). `ruleOpen` answers
// Time windows with integer arithmetic only, on a local day number and a time of day that are both small
// integers, so the hot path never boxes a double.
import { MS_PER_DAY, THREAT_LEVEL_MAX, WEEKDAYS, monthDayOf, parseClock, parseLocalDate } from "../model/index.js";
import type { Calendar, Rule } from "../model/index.js";

/** Int32 slots per rule in `ruleData_`. Eight keeps one rule within one 32-byte half cache line. */
export const RULE_STRIDE = 8;
/** Slot offsets within a rule's record. */
export const R_FLAGS = 0;
export const R_POLICY = 1;
export const R_DAYS = 2;
export const R_START = 3;
export const R_STOP = 4;
export const R_FIRST_DAY = 5;
export const R_LAST_DAY = 6;
/** 0: no calendar; else the calendar's offset in `calendarData_` shifted left once, the low bit set for `only`. */
export const R_CALENDAR = 7;
/** Flag bits of R_FLAGS. */
export const RF_ALLOW = 1;
/** 24x7 (docs/semantics.md E4): an allow rule whose window covers the whole week. */
export const RF_24X7 = 2;
/** start ≥ stop: the window crosses midnight (equal: 24 hours). */
export const RF_OVERNIGHT = 4;
/** An unlock rule (docs/semantics.md UF1): never in a run, so the rule walk never meets one. */
export const RF_UNLOCK = 8;
/** R_FLAGS bits 8–15: the rule's maxThreatLevel (docs/semantics.md TL2), read as `flags >>> RF_THREAT_SHIFT`. */
export const RF_THREAT_SHIFT = 8;
/** Unbounded start and end dates (day numbers of real dates stay far inside these). */
export const DAY_MIN = -0x7fffffff;
export const DAY_MAX = 0x7fffffff;

/**
 * Writes one rule's record at `base` of `data`; `policy` is its policyMask, `calendar` the offset of
 * its calendar in `calendarData_` (0 when it has none).
 */
export function compileWindowInto(rule: Rule, policy: number, data: Int32Array, base: number, calendar = 0): void {
  const start = parseClock(rule.startTime) * 1000;
  const stop = parseClock(rule.stopTime, true) * 1000;
  let days = 0;
  for (const d of rule.recurring) days |= 1 << WEEKDAYS.indexOf(d);
  const always = days === 127 && ((start === 0 && stop === MS_PER_DAY) || start === stop);
  data[base + R_FLAGS] =
    (rule.allow ? RF_ALLOW : 0) |
    (rule.allow && always ? RF_24X7 : 0) |
    (start >= stop ? RF_OVERNIGHT : 0) |
    (rule.action === "unlock" ? RF_UNLOCK : 0) |
    // A deny rule applies at every level (TL3): its maximum is the highest there is.
    ((rule.allow ? (rule.maxThreatLevel ?? 0) : THREAT_LEVEL_MAX) << RF_THREAT_SHIFT);
  data[base + R_POLICY] = policy;
  data[base + R_DAYS] = days;
  data[base + R_START] = start;
  data[base + R_STOP] = stop;
  data[base + R_FIRST_DAY] = rule.startDate === null ? DAY_MIN : parseLocalDate(rule.startDate);
  data[base + R_LAST_DAY] = rule.endDate === null ? DAY_MAX : parseLocalDate(rule.endDate);
  data[base + R_CALENDAR] =
    calendar === 0 || rule.calendar === undefined || rule.calendar === null
      ? 0
      : (calendar << 1) | (rule.calendar.mode === "only" ? 1 : 0);
}

/**
 * `calendarData_` from the calendars, and each calendar's offset in it (docs/semantics.md C3). Word 0
 * is unused, so that offset 0 means "no calendar". A calendar at offset `o`: 12 month masks (bit d of
 * word `o + m - 1` for day d of month m, every year), the count of its dates, then its dates as
 * sorted distinct day numbers: a binary search and integer arithmetic answer a day, nothing allocated.
 */
export function compileCalendars(calendars: readonly Calendar[]): {
  data: Int32Array;
  at: Map<string, number>;
} {
  const at = new Map<string, number>();
  const days = calendars.map((c) => [...new Set(c.dates.map(parseLocalDate))].sort((a, b) => a - b));
  let size = 1;
  for (const d of days) size += CAL_HEADER + d.length;
  const data = new Int32Array(size);
  let o = 1;
  calendars.forEach((c, k) => {
    at.set(c.id, o);
    for (const r of c.recurring) data[o + r.month - 1]! |= 1 << r.day;
    const list = days[k]!;
    data[o + 12] = list.length;
    data.set(list, o + CAL_HEADER);
    o += CAL_HEADER + list.length;
  });
  return { data, at };
}

/** Words of a calendar's record before its dates: 12 month masks and the count. */
const CAL_HEADER = 13;

/** Is local day `day` one of the calendar at offset `o` of `cal` (a date, or a month-day of any year)? */
export function calendarHas(cal: Int32Array, o: number, day: number): boolean {
  let lo = o + CAL_HEADER;
  let hi = lo + cal[o + 12]! - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = cal[mid]!;
    if (v === day) return true;
    if (v < day) lo = mid + 1;
    else hi = mid - 1;
  }
  const md = monthDayOf(day);
  return ((cal[o + (md >> 5) - 1]! >>> (md & 31)) & 1) === 1;
}

/**
 * May an occurrence of the rule at `base` start on local day `day`: within its dates, and on a day
 * its calendar leaves open (`calendar`: the R_CALENDAR word, or 0 to ask without the calendar)?
 */
function startDayOk(data: Int32Array, cal: Int32Array, base: number, calendar: number, day: number): boolean {
  if (day < data[base + R_FIRST_DAY]! || day > data[base + R_LAST_DAY]!) return false;
  return calendar === 0 || calendarHas(cal, calendar >> 1, day) === ((calendar & 1) === 1);
}

/** Weekday (0 = Sunday) of a day number; 1970-01-01 was a Thursday. */
export function weekdayOf(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/**
 * Is the window of the rule at `base` open at local day `day` (weekday `wd`), `tod` ms into it? `cal`
 * is `calendarData_`. Only integers in, so it inlines into loops without boxing.
 */
export function ruleOpen(
  data: Int32Array,
  cal: Int32Array,
  base: number,
  day: number,
  wd: number,
  tod: number,
): boolean {
  return windowOpen(data, cal, base, data[base + R_CALENDAR]!, day, wd, tod);
}

/** ruleOpen as if the rule had no calendar: explain tells a calendar's closing apart (C4). */
export function ruleOpenWithoutCalendar(
  data: Int32Array,
  cal: Int32Array,
  base: number,
  day: number,
  wd: number,
  tod: number,
): boolean {
  return windowOpen(data, cal, base, 0, day, wd, tod);
}

function windowOpen(
  data: Int32Array,
  cal: Int32Array,
  base: number,
  calendar: number,
  day: number,
  wd: number,
  tod: number,
): boolean {
  const days = data[base + R_DAYS]!;
  const start = data[base + R_START]!;
  if ((data[base + R_FLAGS]! & RF_OVERNIGHT) === 0)
    return (
      ((days >> wd) & 1) === 1 &&
      tod >= start &&
      tod < data[base + R_STOP]! &&
      startDayOk(data, cal, base, calendar, day)
    );
  if (tod >= start && ((days >> wd) & 1) === 1 && startDayOk(data, cal, base, calendar, day)) return true;
  // The occurrence that started yesterday (wd - 1, wrapping Sunday to Saturday).
  return (
    tod < data[base + R_STOP]! &&
    ((days >> (wd === 0 ? 6 : wd - 1)) & 1) === 1 &&
    startDayOk(data, cal, base, calendar, day - 1)
  );
}

/**
 * The local start (local epoch ms) of the occurrence of the rule at `base` that is open at local day
 * `day` (weekday `wd`), `tod` ms into it: today's, or, for an overnight window past midnight,
 * yesterday's — the one ruleOpen found (docs/semantics.md UF2). Only asked of an open rule.
 */
export function occurrenceStart(
  data: Int32Array,
  cal: Int32Array,
  base: number,
  day: number,
  wd: number,
  tod: number,
): number {
  const start = data[base + R_START]!;
  if ((data[base + R_FLAGS]! & RF_OVERNIGHT) === 0) return day * MS_PER_DAY + start;
  const today =
    tod >= start &&
    ((data[base + R_DAYS]! >> wd) & 1) === 1 &&
    startDayOk(data, cal, base, data[base + R_CALENDAR]!, day);
  return (today ? day : day - 1) * MS_PER_DAY + start;
}

/** Does the window of rule `rank` contain local wall time `local` (local epoch ms, see parseLocalDateTime)? */
export function windowContains(data: Int32Array, cal: Int32Array, rank: number, local: number): boolean {
  const day = Math.floor(local / MS_PER_DAY);
  return ruleOpen(data, cal, rank * RULE_STRIDE, day, weekdayOf(day), local - day * MS_PER_DAY);
}
