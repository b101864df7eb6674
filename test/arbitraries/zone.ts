// Time zones of generated snapshots and their DST transitions. The zones are chosen for their rules:
// America/New_York and Europe/London shift by an hour at different local times, Australia/Lord_Howe
// by 30 minutes (southern hemisphere, so its "summer" spans new year), UTC never shifts,
// America/Santiago shifts at local midnight (Saturday 24:00 becomes Sunday 01:00; Sunday 00:00 falls
// back to Saturday 23:00, so a calendar day repeats an hour of the previous one), and Pacific/Apia
// skipped 2011-12-30 entirely and dropped DST in 2021.
import fc from "fast-check";
import { IANAZone } from "luxon";

export const ZONES = [
  "UTC",
  "America/New_York",
  "Europe/London",
  "Australia/Lord_Howe",
  "America/Santiago",
  "Pacific/Apia",
] as const;
export type Zone = (typeof ZONES)[number];

/** A system or node time zone. */
export const zoneArb: fc.Arbitrary<Zone> = fc.constantFrom(...ZONES);

/** Span of generated instants: 2020-01-01T00:00Z inclusive to 2031-01-01T00:00Z exclusive. */
export const SPAN_START = Date.UTC(2020, 0, 1);
export const SPAN_END = Date.UTC(2031, 0, 1);
const DAY = 86_400_000;
const WEEK = 7 * DAY;

/** Offset of `zone` from UTC at instant `ms`, in minutes. */
export function offsetMinutes(zone: string, ms: number): number {
  return IANAZone.create(zone).offset(ms);
}

interface YearTable {
  /** Offset (minutes) at the start of the UTC year. */
  readonly first: number;
  /** Transition instants in the year, and the offset (minutes) from each on. */
  readonly at: readonly number[];
  readonly offset: readonly number[];
}

const yearCache = new Map<string, YearTable>();

/**
 * Transitions of `zone` in UTC calendar year `year`, stepping a week at a time and bisecting to the
 * ms (no zone of zone.ts changes offset twice within a week).
 */
function yearTable(zone: string, year: number): YearTable {
  const key = `${zone}\u0000${year}`;
  const cached = yearCache.get(key);
  if (cached !== undefined) return cached;
  const z = IANAZone.create(zone);
  const from = Date.UTC(year, 0, 1);
  const to = Date.UTC(year + 1, 0, 1);
  const first = z.offset(from);
  const at: number[] = [];
  const offset: number[] = [];
  let prev = first;
  for (let t = Math.min(from + WEEK, to), last = from; ; last = t, t = Math.min(t + WEEK, to)) {
    const cur = z.offset(t);
    if (cur !== prev) {
      let lo = last; // offset === prev
      let hi = t; // offset === cur
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (z.offset(mid) === prev) lo = mid;
        else hi = mid;
      }
      if (hi < to) {
        at.push(hi);
        offset.push(cur);
      }
      prev = cur;
    }
    if (t === to) break;
  }
  const table = { first, at, offset };
  yearCache.set(key, table);
  return table;
}

/**
 * Instants (epoch ms) at which `zone` changes its UTC offset during UTC calendar year `year`: the
 * first millisecond of the new offset.
 */
export function dstTransitionsInYear(zone: string, year: number): readonly number[] {
  return yearTable(zone, year).at;
}

/**
 * The same as offsetMinutes, from the cached year tables: generators call it for every request,
 * and luxon's Intl path costs several microseconds a call.
 */
export function fastOffsetMinutes(zone: string, ms: number): number {
  const t = yearTable(zone, new Date(ms).getUTCFullYear());
  let o = t.first;
  for (let i = 0; i < t.at.length && t.at[i]! <= ms; i++) o = t.offset[i]!;
  return o;
}

const spanCache = new Map<string, readonly number[]>();

/** The transitions of `zone` from 2020 through 2030 (the span of most generated instants). */
export function dstTransitions(zone: string): readonly number[] {
  let out = spanCache.get(zone);
  if (out === undefined) {
    out = [];
    for (let y = 2020; y <= 2030; y++) out = [...out, ...dstTransitionsInYear(zone, y)];
    spanCache.set(zone, out);
  }
  return out;
}
