// Conversions between instants and the local wall-clock strings of the snapshot format, used by the
// arbitraries to place generated instants on rule and holder boundaries.
import { fastOffsetMinutes } from "./zone.js";

const DAY = 86_400_000;

/** `YYYY-MM-DD` of a day number (days since 1970-01-01). */
export function formatDay(day: number): string {
  return new Date(day * DAY).toISOString().slice(0, 10);
}

/** Day number of `YYYY-MM-DD`. */
export function parseDay(s: string): number {
  return Math.floor(Date.parse(`${s}T00:00:00Z`) / DAY);
}

/** `HH:mm:ss` of seconds since midnight (86400 gives `24:00:00`). */
export function formatClock(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}`;
}

/** Seconds since midnight of `HH:mm:ss`. */
export function parseClockSeconds(s: string): number {
  return Number(s.slice(0, 2)) * 3600 + Number(s.slice(3, 5)) * 60 + Number(s.slice(6, 8));
}

/** `YYYY-MM-DDTHH:mm:ss` of a day number and seconds since midnight. */
export function formatLocalDateTime(day: number, seconds: number): string {
  return `${formatDay(day)}T${formatClock(seconds)}`;
}

/**
 * Every instant at which the wall clock of `zone` shows `day` + `seconds` (seconds may reach 86400,
 * the next midnight): two in a fall-back overlap, one usually, and in a spring-forward gap one just
 * after the gap.
 */
export function localInstants(zone: string, day: number, seconds: number): number[] {
  const wall = day * DAY + seconds * 1000;
  const out: number[] = [];
  for (const probe of [wall - DAY, wall, wall + DAY]) {
    const candidate = wall - fastOffsetMinutes(zone, probe) * 60_000;
    if (candidate + fastOffsetMinutes(zone, candidate) * 60_000 === wall && !out.includes(candidate))
      out.push(candidate);
  }
  // A skipped wall time: read it with the offset before the gap, which lands after the gap.
  if (out.length === 0) out.push(wall - fastOffsetMinutes(zone, wall - DAY) * 60_000);
  return out.sort((a, b) => a - b);
}

/** The first instant at which the wall clock of `zone` shows `day` + `seconds` (see localInstants). */
export function localToInstant(zone: string, day: number, seconds: number): number {
  return localInstants(zone, day, seconds)[0]!;
}

/** The local day number that `ms` falls on in `zone`. */
export function localDayOf(zone: string, ms: number): number {
  return Math.floor((ms + fastOffsetMinutes(zone, ms) * 60_000) / DAY);
}
