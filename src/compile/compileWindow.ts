// Rule windows as integers in one Int32Array, RULE_STRIDE slots per rule rank: milliseconds of the
// local day, a 7-bit weekday mask, and the bounds of the occurrence's start day. `ruleOpen` answers
// Time windows with integer arithmetic only, on a local day number and a time of day that are both small
// integers, so the hot path never boxes a double.
import { MS_PER_DAY, WEEKDAYS, parseClock, parseLocalDate } from "../model/index.js";
import type { Rule } from "../model/index.js";

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
/** Flag bits of R_FLAGS. */
export const RF_ALLOW = 1;
/** 24x7 (docs/semantics.md E4): an allow rule whose window covers the whole week. */
export const RF_24X7 = 2;
/** start ≥ stop: the window crosses midnight (equal: 24 hours). */
export const RF_OVERNIGHT = 4;
/** Unbounded start and end dates (day numbers of real dates stay far inside these). */
export const DAY_MIN = -0x7fffffff;
export const DAY_MAX = 0x7fffffff;

/** Writes one rule's record at `base` of `data`; `policy` is its policyMask. */
export function compileWindowInto(rule: Rule, policy: number, data: Int32Array, base: number): void {
  const start = parseClock(rule.startTime) * 1000;
  const stop = parseClock(rule.stopTime, true) * 1000;
  let days = 0;
  for (const d of rule.recurring) days |= 1 << WEEKDAYS.indexOf(d);
  const always = days === 127 && ((start === 0 && stop === MS_PER_DAY) || start === stop);
  data[base + R_FLAGS] =
    (rule.allow ? RF_ALLOW : 0) | (rule.allow && always ? RF_24X7 : 0) | (start >= stop ? RF_OVERNIGHT : 0);
  data[base + R_POLICY] = policy;
  data[base + R_DAYS] = days;
  data[base + R_START] = start;
  data[base + R_STOP] = stop;
  data[base + R_FIRST_DAY] = rule.startDate === null ? DAY_MIN : parseLocalDate(rule.startDate);
  data[base + R_LAST_DAY] = rule.endDate === null ? DAY_MAX : parseLocalDate(rule.endDate);
}

/** Weekday (0 = Sunday) of a day number; 1970-01-01 was a Thursday. */
export function weekdayOf(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/**
 * Is the window of the rule at `base` open at local day `day` (weekday `wd`), `tod` ms into it?
 * Only integers in, so it inlines into loops without boxing.
 */
export function ruleOpen(data: Int32Array, base: number, day: number, wd: number, tod: number): boolean {
  const days = data[base + R_DAYS]!;
  const start = data[base + R_START]!;
  if ((data[base + R_FLAGS]! & RF_OVERNIGHT) === 0) {
    return (
      ((days >> wd) & 1) === 1 &&
      tod >= start &&
      tod < data[base + R_STOP]! &&
      day >= data[base + R_FIRST_DAY]! &&
      day <= data[base + R_LAST_DAY]!
    );
  }
  if (tod >= start && ((days >> wd) & 1) === 1 && day >= data[base + R_FIRST_DAY]! && day <= data[base + R_LAST_DAY]!)
    return true;
  // The occurrence that started yesterday (wd - 1, wrapping Sunday to Saturday).
  const prev = day - 1;
  return (
    tod < data[base + R_STOP]! &&
    ((days >> (wd === 0 ? 6 : wd - 1)) & 1) === 1 &&
    prev >= data[base + R_FIRST_DAY]! &&
    prev <= data[base + R_LAST_DAY]!
  );
}

/** Does the window of rule `rank` contain local wall time `local` (local epoch ms, see parseLocalDateTime)? */
export function windowContains(data: Int32Array, rank: number, local: number): boolean {
  const day = Math.floor(local / MS_PER_DAY);
  return ruleOpen(data, rank * RULE_STRIDE, day, weekdayOf(day), local - day * MS_PER_DAY);
}
