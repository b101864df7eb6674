// UTC-offset transition tables, computed once per zone with luxon so that the hot path finds local
// wall time by a binary search and an addition, with no Intl call.
import { IANAZone } from "luxon";
import { MAX_INSTANT, MIN_INSTANT, MS_PER_DAY } from "../model/index.js";

/** Offsets of one zone: `offsets_[i]` (ms) holds from `starts_[i]` (epoch ms) until `starts_[i + 1]`. */
export interface ZoneTable {
  readonly zone: string;
  readonly starts_: Float64Array;
  readonly offsets_: Float64Array;
}

// The scan starts a little before MIN_INSTANT and ends after MAX_INSTANT so that every local time of
// the supported span is covered. A 2-day step finds every transition since 1970 that does not undo
// itself within two days (no IANA zone has one in that span).
const SCAN_FROM = MIN_INSTANT - 7 * MS_PER_DAY;
const SCAN_TO = MAX_INSTANT + 7 * MS_PER_DAY;
const STEP = 2 * MS_PER_DAY;

const cache = new Map<string, ZoneTable>();

/** Builds (or returns the cached) offset table of an IANA zone. Throws on an invalid zone. */
export function buildZoneTable(zone: string): ZoneTable {
  const hit = cache.get(zone);
  if (hit !== undefined) return hit;
  const z = IANAZone.create(zone);
  if (!z.isValid) throw new Error(`invalid time zone "${zone}"`);
  const offsetMs = (t: number) => z.offset(t) * 60_000;
  const starts: number[] = [-Infinity];
  const offsets: number[] = [offsetMs(SCAN_FROM)];
  let prevT = SCAN_FROM;
  let prevO = offsets[0]!;
  for (let t = SCAN_FROM + STEP; ; t += STEP) {
    const at = Math.min(t, SCAN_TO);
    const o = offsetMs(at);
    if (o !== prevO) {
      // Binary search the first millisecond with the new offset.
      let lo = prevT;
      let hi = at;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (offsetMs(mid) === prevO) lo = mid;
        else hi = mid;
      }
      starts.push(hi);
      offsets.push(o);
      prevO = o;
    }
    prevT = at;
    if (at === SCAN_TO) break;
  }
  const table: ZoneTable = { zone, starts_: Float64Array.from(starts), offsets_: Float64Array.from(offsets) };
  cache.set(zone, table);
  return table;
}

/** The zone's UTC offset in milliseconds at epoch-ms `at` (binary search, no allocation). */
export function offsetAt(table: ZoneTable, at: number): number {
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
