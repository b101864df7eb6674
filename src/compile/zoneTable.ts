// UTC-offset transition tables, computed once per zone with luxon so that the hot path finds local
// wall time by a binary search and an addition, with no Intl call.
import { IANAZone } from "luxon";
import { MAX_INSTANT, MIN_INSTANT, MS_PER_DAY, die } from "../model/index.js";

/** Offsets of one zone: `offsets_[i]` (ms) holds from `starts_[i]` (epoch ms) until `starts_[i + 1]`. */
export interface ZoneTable {
  readonly zone: string;
  readonly starts_: Float64Array;
  readonly offsets_: Float64Array;
  /** Per BUCKET_MS of time from the epoch on: the last i whose `starts_[i]` is at or before the bucket's start. */
  readonly bucket_: Int32Array;
  /**
   * What offsetAt reads, FAST_STRIDE doubles per bucket in one array (one cache line a lookup where
   * the three arrays above take three): the offset at the bucket's start, the next transition
   * (Infinity: none) and the offset from it, and the transition after that.
   */
  readonly fast_: Float64Array;
}

/** Doubles per bucket in ZoneTable.fast_. */
const FAST_STRIDE = 4;

// The scan starts a little before MIN_INSTANT and ends after MAX_INSTANT so that every local time of
// the supported span is covered. A 7-day step finds every transition that does not undo itself
// within a week (no IANA zone has one since 1970; Morocco's Ramadan suspensions last about a month).
const SCAN_FROM = MIN_INSTANT - 7 * MS_PER_DAY;
const SCAN_TO = MAX_INSTANT + 7 * MS_PER_DAY;
const STEP = 7 * MS_PER_DAY;
const MINUTE = 60_000;

const cache = new Map<string, ZoneTable>();

/** offsetAt finds an instant's bucket of 2^32 ms (about 50 days) and steps over the few transitions in it. */
const BUCKET_MS = 2 ** 32;
/** 1 / BUCKET_MS (a power of two: multiplying by it is exact). */
const PER_BUCKET_MS = 2 ** -32;
/** Buckets from the epoch to the end of the scanned span. */
const BUCKETS = Math.ceil(SCAN_TO / BUCKET_MS);

/**
 * A probe of the zone's offset in ms at an instant: the offset `Intl.DateTimeFormat` names with
 * `timeZoneName: "longOffset"` ("GMT-05:00", "GMT-00:44:30"), about 0.8 µs a call, else (should a
 * runtime word it otherwise) the wall time it formats minus the instant (wallClockProbe, 1.25 µs; both
 * measured on this project's 2-core Node 20 machine). A zone table takes ~10,000 probes.
 */
function offsetProbe(zone: string): (t: number) => number {
  // The seconds are the cheapest field to format with the offset (a third less than the hour).
  const fmt = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset", second: "numeric" });
  const date = new Date(0);
  let wallClock: ((whole: number) => number) | null = null;
  return (t) => {
    const whole = Math.floor(t / 1000) * 1000; // offsets change on whole seconds
    date.setTime(whole);
    const named = namedOffset(fmt.format(date)); // "0 GMT-06:00"
    if (!Number.isNaN(named)) return named;
    wallClock ??= wallClockProbe(zone);
    return wallClock(whole);
  };
}

/** The offset in ms that text ending "GMT", "GMT±H:MM", "GMT±HH:MM" or "GMT±HH:MM:SS" names; NaN for any other text. */
function namedOffset(text: string): number {
  const g = text.lastIndexOf("GMT");
  if (g < 0) return Number.NaN;
  let i = g + 3;
  const n = text.length;
  if (i === n) return 0;
  const sign = text.charCodeAt(i);
  if (sign !== 0x2b && sign !== 0x2d && sign !== 0x2212) return Number.NaN;
  i++;
  // Hours (one or two digits), then minutes and optional seconds of two digits, each after a colon.
  const parts = [0, 0, 0];
  for (let k = 0; k < 3 && i < n; k++) {
    if (k > 0) {
      if (text.charCodeAt(i) !== 0x3a) return Number.NaN;
      i++;
    }
    const start = i;
    let v = 0;
    while (i < n && i - start < 2) {
      const d = text.charCodeAt(i) - 0x30;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
      i++;
    }
    if (i === start || (k > 0 && i - start !== 2)) return Number.NaN;
    parts[k] = v;
  }
  if (i !== n) return Number.NaN;
  const ms = ((parts[0]! * 60 + parts[1]!) * 60 + parts[2]!) * 1000;
  return sign === 0x2b ? ms : -ms;
}

/**
 * The offset as the wall time `Intl.DateTimeFormat#format` gives at a whole second, minus that
 * second: parsing its output is about 4× cheaper than luxon's `formatToParts` path.
 */
function wallClockProbe(zone: string): (whole: number) => number {
  const fmt = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
  const date = new Date(0);
  const nums = [0, 0, 0, 0, 0, 0];
  return (whole) => {
    date.setTime(whole);
    const text = fmt.format(date); // "4/15/2026, 09:15:00"
    let k = 0;
    let v = -1;
    for (let i = 0; i <= text.length; i++) {
      const c = i < text.length ? text.charCodeAt(i) - 48 : -1;
      if (c >= 0 && c <= 9) v = v < 0 ? c : v * 10 + c;
      else if (v >= 0) {
        nums[k++] = v;
        v = -1;
      }
    }
    if (k !== 6) die("intlOutput", text, zone);
    const [month, day, year, hour, minute, second] = nums as [number, number, number, number, number, number];
    const wall = Date.UTC(year, month - 1, day, hour % 24, minute, second);
    return wall - whole;
  };
}

/**
 * The instant in (`from`, `to`] at which the offset stops being `prevO` (to the second), found by
 * a binary search of the first minute with another offset (transitions since 1970 fall on whole
 * minutes), then stepping back second by second only if the minute boundary is not exact. Given
 * one transition in the span (the 7-day scan's premise), the predicate "still prevO" is monotone.
 */
function searchedTransition(offsetMs: (t: number) => number, from: number, to: number, prevO: number): number {
  let lo = Math.floor(from / MINUTE);
  let hi = Math.ceil(to / MINUTE);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetMs(mid * MINUTE) === prevO) lo = mid;
    else hi = mid;
  }
  let first = hi * MINUTE;
  while (offsetMs(first - 1000) !== prevO) first -= 1000;
  return first;
}

/**
 * The same instant as searchedTransition, found in two probes when it is where the transition
 * between the same two offsets a year before (`last`) predicts: 52 or 53 weeks on (rules by
 * weekday: "last Sunday of March"), or 365 or 366 days (rules by date). A candidate in the span
 * whose second before still has `prevO` and which itself has not is the instant the search finds
 * (the predicate is monotone in the span); null when no candidate is.
 */
function predictedTransition(
  offsetMs: (t: number) => number,
  last: number,
  from: number,
  to: number,
  prevO: number,
): number | null {
  for (const days of PREDICTED_DAYS) {
    const c = last + days * MS_PER_DAY;
    if (c > from && c <= to && offsetMs(c) !== prevO && offsetMs(c - 1000) === prevO) return c;
  }
  return null;
}

const PREDICTED_DAYS: readonly number[] = [364, 371, 365, 366];

/** Builds (or returns the cached) offset table of an IANA zone; the zone is a validated one (die otherwise). */
export function buildZoneTable(zone: string): ZoneTable {
  const hit = cache.get(zone);
  if (hit !== undefined) return hit;
  if (!IANAZone.isValidZone(zone)) die("invalidZone", zone);
  const offsetMs = offsetProbe(zone);
  const starts: number[] = [-Infinity];
  const offsets: number[] = [offsetMs(SCAN_FROM)];
  // The last transition from one offset to another ("from>to"): a year on, the next one is mostly
  // at a time it predicts (see predictedTransition).
  const lastOf = new Map<string, number>();
  let prevT = SCAN_FROM;
  let prevO = offsets[0]!;
  for (let t = SCAN_FROM + STEP; ; t += STEP) {
    const at = Math.min(t, SCAN_TO);
    const o = offsetMs(at);
    if (o !== prevO) {
      const pair = `${prevO}>${o}`;
      const last = lastOf.get(pair);
      const first =
        (last === undefined ? null : predictedTransition(offsetMs, last, prevT, at, prevO)) ??
        searchedTransition(offsetMs, prevT, at, prevO);
      lastOf.set(pair, first);
      starts.push(first);
      offsets.push(o);
      prevO = o;
    }
    prevT = at;
    if (at === SCAN_TO) break;
  }
  const bucket = new Int32Array(BUCKETS);
  for (let b = 0, i = 0; b < BUCKETS; b++) {
    while (i + 1 < starts.length && starts[i + 1]! <= b * BUCKET_MS) i++;
    bucket[b] = i;
  }
  const fast = new Float64Array(BUCKETS * FAST_STRIDE);
  for (let b = 0; b < BUCKETS; b++) {
    const i = bucket[b]!;
    const k = b * FAST_STRIDE;
    fast[k] = offsets[i]!;
    fast[k + 1] = i + 1 < starts.length ? starts[i + 1]! : Infinity;
    fast[k + 2] = i + 1 < starts.length ? offsets[i + 1]! : offsets[i]!;
    fast[k + 3] = i + 2 < starts.length ? starts[i + 2]! : Infinity;
  }
  const table: ZoneTable = {
    zone,
    starts_: Float64Array.from(starts),
    offsets_: Float64Array.from(offsets),
    bucket_: bucket,
    fast_: fast,
  };
  cache.set(zone, table);
  return table;
}

/**
 * The zone's UTC offset in milliseconds at epoch-ms `at`, no allocation: from its bucket's entry in
 * `fast_` (the bucket's first two transitions; beyond them, which no zone has had since 1970 as
 * transitions are weeks apart, stepping on through `starts_`); a binary search outside the buckets
 * (before the epoch, after the span, NaN).
 */
export function offsetAt(table: ZoneTable, at: number): number {
  const b = at * PER_BUCKET_MS;
  if (b >= 0 && b < BUCKETS) {
    const fast = table.fast_;
    const k = (b | 0) * FAST_STRIDE;
    if (at < fast[k + 1]!) return fast[k]!;
    if (at < fast[k + 3]!) return fast[k + 2]!;
    const starts = table.starts_;
    let i = table.bucket_[b | 0]! + 2;
    while (i + 1 < starts.length && starts[i + 1]! <= at) i++;
    return table.offsets_[i]!;
  }
  const starts = table.starts_;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return table.offsets_[lo]!;
}

/**
 * Every instant whose local wall time may be `local` (local epoch ms), as candidates: `local − o`
 * for each offset `o` the zone has within a day of it. A skipped local time yields instants that are
 * not exactly it, a repeated one yields both; callers that evaluate state at each candidate and at
 * the zone's transitions (transitionsBetween) lose nothing.
 */
export function localCandidates(table: ZoneTable, local: number, out: number[]): void {
  const seen = new Set<number>();
  for (const probe of [local - MS_PER_DAY, local, local + MS_PER_DAY]) {
    const o = offsetAt(table, probe);
    if (!seen.has(o)) {
      seen.add(o);
      out.push(local - o);
    }
  }
}

/** The zone's transition instants in [from, to). */
export function transitionsBetween(table: ZoneTable, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = 1; i < table.starts_.length; i++) {
    const t = table.starts_[i]!;
    if (t >= from && t < to) out.push(t);
  }
  return out;
}
