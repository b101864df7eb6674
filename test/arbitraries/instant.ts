// Request instants: uniform over 2020–2030, concentrated within ±3 hours of the DST transitions of
// the device's zone, on rule window edges (start/stop ± 1 ms in the node's local time, on ordinary
// days, around DST days and on rule start/end dates) and on holder activation/expiry edges. Each is
// written as epoch ms or as ISO 8601 with Z or with the node's offset in several spellings.
import fc from "fast-check";
import { localDayOf, localInstants, localToInstant, parseClockSeconds, parseDay } from "./localTime.js";
import type { DeviceMeta, HolderMeta, RuleMeta, SnapshotMeta } from "./snapshot.js";
import { WEEKDAYS, dayArb } from "./window.js";
import { SPAN_END, SPAN_START, dstTransitions, dstTransitionsInYear, fastOffsetMinutes } from "./zone.js";

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The instants a request may carry (semantics R3): 1970-01-01T00:00Z to 2100-01-01T00:00Z exclusive. */
const MIN_AT = 0;
const MAX_AT = 4_102_444_800_000;

export type AtSpec =
  | { readonly kind: "uniform"; readonly ms: number }
  /** Anywhere the engine accepts (1970 to 2100), or near a transition of any year in it. */
  | {
      readonly kind: "wide";
      readonly ms: number;
      readonly nearDst: boolean;
      readonly pick: number;
      readonly delta: number;
    }
  | { readonly kind: "inside"; readonly rulePick: number; readonly day: number; readonly fraction: number }
  | { readonly kind: "dst"; readonly pick: number; readonly delta: number }
  | {
      readonly kind: "window";
      readonly rulePick: number;
      readonly anyRule: boolean;
      readonly dayMode: "uniform" | "dst" | "ruleDate";
      readonly day: number;
      readonly dayPick: number;
      readonly dayShift: number;
      readonly edge: "start" | "stop";
      /** Which instant when the wall time occurs twice (fall-back overlap). */
      readonly occurrence: number;
      readonly delta: number;
    }
  | {
      readonly kind: "holder";
      readonly holderPick: number;
      readonly edge: "active" | "expire";
      readonly occurrence: number;
      readonly delta: number;
    };

export type AtFormat = "ms" | "Z" | "offset" | "compactOffset" | "short";

/** Offsets from an edge: mostly the millisecond either side, sometimes a second, a minute, an hour. */
const edgeDeltaArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(-1, 0, 1) },
  { weight: 1, arbitrary: fc.constantFrom(-1000, 1000, -60_000, 60_000, -HOUR, HOUR) },
);

export const atSpecArb: fc.Arbitrary<AtSpec> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("uniform" as const),
      ms: fc.integer({ min: SPAN_START, max: SPAN_END - 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("wide" as const),
      ms: fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: MIN_AT, max: MAX_AT - 1 }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 * DAY }) },
        { weight: 1, arbitrary: fc.integer({ min: MAX_AT - 3 * DAY, max: MAX_AT - 1 }) },
        // The ends of the span, and Pacific/Apia's missing day (2011-12-30 local).
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            MIN_AT,
            MIN_AT + 1,
            MAX_AT - 1,
            MAX_AT - 1000,
            Date.UTC(2011, 11, 30, 10),
            Date.UTC(2011, 11, 29, 9, 59, 59, 999),
          ),
        },
      ),
      nearDst: fc.boolean(),
      pick: fc.nat(),
      delta: fc.integer({ min: -3 * HOUR, max: 3 * HOUR }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("dst" as const),
      pick: fc.nat(),
      delta: fc.oneof(
        fc.integer({ min: -3 * HOUR, max: 3 * HOUR }),
        fc.integer({ min: -180, max: 180 }).map((m) => m * 60_000),
        fc.constantFrom(-1, 0, 1, -30 * 60_000, 30 * 60_000, -HOUR, HOUR),
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("window" as const),
      rulePick: fc.nat(),
      anyRule: fc.boolean(),
      dayMode: fc.constantFrom("uniform" as const, "dst" as const, "ruleDate" as const),
      day: dayArb,
      dayPick: fc.nat(),
      dayShift: fc.integer({ min: -1, max: 1 }),
      edge: fc.constantFrom("start" as const, "stop" as const),
      occurrence: fc.nat(1),
      delta: edgeDeltaArb,
    }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("inside" as const),
      rulePick: fc.nat(),
      day: dayArb,
      fraction: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("holder" as const),
      holderPick: fc.nat(),
      edge: fc.constantFrom("active" as const, "expire" as const),
      occurrence: fc.nat(1),
      delta: edgeDeltaArb,
    }),
  },
);

export const atFormatArb: fc.Arbitrary<AtFormat> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<AtFormat>("ms") },
  { weight: 2, arbitrary: fc.constant<AtFormat>("Z") },
  { weight: 2, arbitrary: fc.constant<AtFormat>("offset") },
  { weight: 1, arbitrary: fc.constantFrom<AtFormat>("compactOffset", "short") },
);

function clampToSpan(ms: number): number {
  return Math.min(Math.max(ms, SPAN_START - DAY), SPAN_END + DAY);
}

/**
 * An instant inside one occurrence of the rule's window: on or after `day`, the first day (within the
 * rule's dates when it has them) whose weekday starts an occurrence, at `fraction` of its length.
 * Lands outside only in a DST gap or when the rule has no weekdays.
 */
function insideWindow(zone: string, rule: RuleMeta, day: number, fraction: number): number {
  const start = parseClockSeconds(rule.startTime);
  const stop = parseClockSeconds(rule.stopTime);
  const length = stop > start ? stop - start : stop + 86_400 - start;
  let d = day;
  const first = typeof rule.startDate === "string" ? parseDay(rule.startDate) : null;
  const last = typeof rule.endDate === "string" ? parseDay(rule.endDate) : null;
  if (first !== null && last !== null) d = first + (day % (last - first + 1));
  else if (first !== null) d = Math.max(d, first);
  else if (last !== null) d = Math.min(d, last);
  for (let k = 0; k < 7; k++) {
    if (rule.recurring.includes(WEEKDAYS[(((d + k + 4) % 7) + 7) % 7]!)) {
      d += k;
      break;
    }
  }
  const intoMs = Math.floor(fraction * length * 1000);
  return localToInstant(zone, d, start + Math.floor(intoMs / 1000)) + (intoMs % 1000);
}

/**
 * Epoch ms of an instant spec, for a request at `device` (null: an unknown device, zone UTC).
 * `focus` is the rule the request is aimed at, if any: window and inside instants use it.
 */
export function resolveAt(
  spec: AtSpec,
  meta: SnapshotMeta,
  device: DeviceMeta | null,
  focus: RuleMeta | null = null,
): number {
  const zone = device?.node.zone ?? meta.nodes[0]!.zone;
  // A zone without DST (UTC) borrows New York's transition instants: still ordinary instants there.
  const own = dstTransitions(zone);
  const transitions = own.length > 0 ? own : dstTransitions("America/New_York");
  switch (spec.kind) {
    case "uniform":
      return spec.ms;
    case "wide": {
      if (!spec.nearDst) return spec.ms;
      const year = new Date(spec.ms).getUTCFullYear();
      const inYear = dstTransitionsInYear(own.length > 0 ? zone : "America/New_York", year);
      if (inYear.length === 0) return spec.ms;
      return Math.min(Math.max(inYear[spec.pick % inYear.length]! + spec.delta, MIN_AT), MAX_AT - 1);
    }
    case "dst":
      return transitions[spec.pick % transitions.length]! + spec.delta;
    case "inside": {
      const rules = device === null || device.rules.length === 0 ? meta.rules : device.rules;
      const rule = focus ?? rules[spec.rulePick % Math.max(1, rules.length)];
      if (rule === undefined) return spec.day * DAY + Math.floor(spec.fraction * DAY);
      return clampToSpan(insideWindow(zone, rule, spec.day, spec.fraction));
    }
    case "window": {
      const rules = spec.anyRule || device === null || device.rules.length === 0 ? meta.rules : device.rules;
      if (rules.length === 0) return spec.day * DAY + ((spec.dayPick * 1000) % DAY);
      const rule = focus ?? rules[spec.rulePick % rules.length]!;
      let day = spec.day;
      if (spec.dayMode === "dst") day = localDayOf(zone, transitions[spec.dayPick % transitions.length]!);
      if (spec.dayMode === "ruleDate") {
        const dates = [rule.startDate, rule.endDate].filter((d): d is string => typeof d === "string");
        if (dates.length > 0) day = parseDay(dates[spec.dayPick % dates.length]!);
      }
      const seconds = parseClockSeconds(spec.edge === "start" ? rule.startTime : rule.stopTime);
      const all = localInstants(zone, day + spec.dayShift, seconds);
      return clampToSpan(all[spec.occurrence % all.length]! + spec.delta);
    }
    case "holder": {
      const holders = meta.holders.filter((h) => h.activeDate !== null || h.expireDate !== null);
      if (holders.length === 0) return SPAN_START + spec.holderPick * 1000;
      const h: HolderMeta = holders[spec.holderPick % holders.length]!;
      const edge = (spec.edge === "active" ? h.activeDate : h.expireDate) ?? h.activeDate ?? h.expireDate!;
      const all = localInstants(zone, parseDay(edge.slice(0, 10)), parseClockSeconds(edge.slice(11)));
      return clampToSpan(all[spec.occurrence % all.length]! + spec.delta);
    }
  }
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

/** Writes an instant as the request's `at`: epoch ms, or ISO 8601 with Z or the zone's offset. */
export function formatAt(ms: number, format: AtFormat, zone: string): string | number {
  if (format === "ms") return ms;
  if (format === "Z") return new Date(ms).toISOString();
  if (format === "short") {
    // Drop zero milliseconds and seconds: `…T10:00Z`, `…T10:00:05Z`.
    const iso = new Date(ms).toISOString();
    if (ms % 60_000 === 0) return `${iso.slice(0, 16)}Z`;
    if (ms % 1000 === 0) return `${iso.slice(0, 19)}Z`;
    return iso;
  }
  const off = fastOffsetMinutes(zone, ms);
  const local = new Date(ms + off * 60_000).toISOString().slice(0, 23);
  const sign = off < 0 ? "-" : "+";
  const abs = Math.abs(off);
  const hh = pad2(Math.floor(abs / 60));
  const mm = pad2(abs % 60);
  if (format === "offset") return `${local}${sign}${hh}:${mm}`;
  return abs % 60 === 0 ? `${local}${sign}${hh}` : `${local}${sign}${hh}${mm}`;
}
