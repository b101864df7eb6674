// Rule windows as numbers: milliseconds of the local day, a 7-bit weekday mask, and the bounds of
// the occurrence's start day. `windowContains` answers SPEC §4 with integer arithmetic only.
import { MS_PER_DAY, WEEKDAYS, parseClock, parseLocalDate } from "../model/index.js";
import type { Rule } from "../model/index.js";

export interface CompiledWindow {
  readonly start_: number;
  readonly stop_: number;
  /** Bit d set when the window starts on weekday d (0 = Sunday). */
  readonly days_: number;
  /** start ≥ stop: the window crosses midnight (equal: 24 hours). */
  readonly overnight_: boolean;
  /** First and last local day (days since 1970-01-01) on which an occurrence may start. */
  readonly firstDay_: number;
  readonly lastDay_: number;
  /** SPEC §4: every local time of the week, dates aside. */
  readonly always_: boolean;
}

export function compileWindow(rule: Rule): CompiledWindow {
  const start = parseClock(rule.startTime) * 1000;
  const stop = parseClock(rule.stopTime, true) * 1000;
  let days = 0;
  for (const d of rule.recurring) days |= 1 << WEEKDAYS.indexOf(d);
  return {
    start_: start,
    stop_: stop,
    days_: days,
    overnight_: start >= stop,
    firstDay_: rule.startDate === null ? -Infinity : parseLocalDate(rule.startDate),
    lastDay_: rule.endDate === null ? Infinity : parseLocalDate(rule.endDate),
    always_: days === 127 && ((start === 0 && stop === MS_PER_DAY) || start === stop),
  };
}

/** Weekday (0 = Sunday) of a day number; 1970-01-01 was a Thursday. */
export function weekdayOf(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** Does the window contain local wall time `local` (local epoch ms, see parseLocalDateTime)? */
export function windowContains(w: CompiledWindow, local: number): boolean {
  const day = Math.floor(local / MS_PER_DAY);
  const tod = local - day * MS_PER_DAY;
  const wd = weekdayOf(day);
  if (!w.overnight_) {
    return ((w.days_ >> wd) & 1) === 1 && tod >= w.start_ && tod < w.stop_ && day >= w.firstDay_ && day <= w.lastDay_;
  }
  if (tod >= w.start_ && ((w.days_ >> wd) & 1) === 1 && day >= w.firstDay_ && day <= w.lastDay_) return true;
  const prev = day - 1;
  return tod < w.stop_ && ((w.days_ >> weekdayOf(prev)) & 1) === 1 && prev >= w.firstDay_ && prev <= w.lastDay_;
}
