// When is a holder allowed at a device during a period? The answer only changes where some rule
// window opens or closes, a date bound or holder date passes, or the zone's offset changes, so the
// state is evaluated once at each such candidate instant and holds until the next one.
import {
  type CompiledSystem,
  RULE_STRIDE,
  R_START,
  R_STOP,
  holderActiveFrom,
  holderExpiresAt,
  holderGroupFrom,
  holderGroupTo,
  localCandidates,
  offsetAt,
  transitionsBetween,
} from "../compile/index.js";
import { type Issue, MS_PER_DAY, QueryError } from "../model/index.js";
import { NONE, newRuleOutcome, ranksReaching } from "./ruleWalk.js";
import { isoInstant, isoLocal } from "./formatInstant.js";
import { queryInstant } from "./rsop.js";
import { scanAccess } from "./scanAccess.js";

/** The longest period accessWindows answers for. */
export const MAX_WINDOW_SPAN_DAYS = 62;

/** Options of an accessWindows query. */
export interface PeriodOptions {
  /** Start of the period, inclusive: ISO 8601 with Z or an offset, or epoch ms. */
  readonly from: string | number;
  /** End of the period, exclusive. */
  readonly to: string | number;
}

/** One stretch of time in which the holder is allowed, by one deciding rule. */
export interface AccessInterval {
  /** Instants, ISO 8601 UTC: allowed from `start` inclusive to `end` exclusive. */
  start: string;
  end: string;
  /** The same instants as wall times of the device's node, with their UTC offset. */
  startLocal: string;
  endLocal: string;
  activeRuleId: string;
}

/**
 * The intervals of a period in which a holder's scan at a device is allowed.
 */
export interface AccessWindowsResult {
  holderId: string;
  deviceId: string;
  from: string;
  to: string;
  windows: AccessInterval[];
}

/**
 * The times of day (ms after local midnight) where the rules `ranks` open or close, and midnight
 * (date bounds): where a holder's access at a device may change within a day.
 */
export function windowEdges(sys: CompiledSystem, ranks: readonly number[]): Set<number> {
  const edges = new Set<number>([0]);
  for (const rank of ranks) {
    const base = rank * RULE_STRIDE;
    edges.add(sys.ruleData_[base + R_START]!);
    edges.add(sys.ruleData_[base + R_STOP]! % MS_PER_DAY);
  }
  return edges;
}

/** Computes the allowed intervals. Throws QueryError on unknown ids, bad instants or too long a period. */
/**
 * The instants in [from, to) where a holder's access to a device can change, in order: `from`, the
 * zone's offset transitions, and the instants of the local wall times `local` (a holder's activation
 * and expiry) and of each `edges` time of day (ms after local midnight: rule starts and stops) on every
 * local day of the period.
 */
export function candidateInstants(
  zone: Parameters<typeof offsetAt>[0],
  local: number[],
  edges: ReadonlySet<number>,
  from: number,
  to: number,
): number[] {
  const firstDay = Math.floor((from + offsetAt(zone, from)) / MS_PER_DAY) - 1;
  const lastDay = Math.floor((to + offsetAt(zone, to)) / MS_PER_DAY) + 1;
  for (let day = firstDay; day <= lastDay; day++) for (const e of edges) local.push(day * MS_PER_DAY + e);
  const cands: number[] = [from, ...transitionsBetween(zone, from, to)];
  for (const l of local) if (Number.isFinite(l)) localCandidates(zone, l, cands);
  return [...new Set(cands.filter((t) => t >= from && t < to))].sort((a, b) => a - b);
}

export function accessWindows(
  sys: CompiledSystem,
  holderId: string,
  deviceId: string,
  options: PeriodOptions,
): AccessWindowsResult {
  const issues: Issue[] = [];
  const from = queryInstant(options.from, "from", issues);
  const to = queryInstant(options.to, "to", issues);
  const holder = sys.holderIndex_.get(holderId);
  const device = sys.deviceIndex_.get(deviceId);
  if (holder === undefined)
    issues.push({ code: "unknownId", path: ["holderId"], message: `Unknown holder id "${holderId}".` });
  if (device === undefined)
    issues.push({ code: "unknownId", path: ["deviceId"], message: `Unknown device id "${deviceId}".` });
  if (!Number.isNaN(from) && !Number.isNaN(to)) {
    if (to <= from) issues.push({ code: "invalidRange", path: ["to"], message: "Must be after from." });
    else if (to - from > MAX_WINDOW_SPAN_DAYS * MS_PER_DAY)
      issues.push({
        code: "invalidRange",
        path: ["to"],
        message: `The period may span at most ${MAX_WINDOW_SPAN_DAYS} days.`,
      });
  }
  if (issues.length > 0) throw new QueryError(issues);
  const h = holder!;
  const dev = device!;
  const zone = dev.node_.zone_;

  // Local wall times where something may change: every window edge of the holder's rules at the
  // device on every local day of the period (and the day before), every local midnight (date
  // bounds), and the holder's active/expire times; each turned into candidate instants.
  const local: number[] = [holderActiveFrom(sys, h), holderExpiresAt(sys, h)];
  const edges = windowEdges(sys, ranksReaching(sys, dev, holderGroupFrom(sys, h), holderGroupTo(sys, h)));
  const points = candidateInstants(zone, local, edges, from, to);

  const outcome = newRuleOutcome();
  const windows: AccessInterval[] = [];
  let openAt = NaN;
  let openRank = NONE;
  const close = (end: number) => {
    windows.push({
      start: isoInstant(openAt),
      end: isoInstant(end),
      startLocal: isoLocal(openAt, offsetAt(zone, openAt)),
      endLocal: isoLocal(end, offsetAt(zone, end)),
      activeRuleId: sys.rules_[openRank]!.id,
    });
  };
  for (const t of points) {
    const a = scanAccess(sys, dev, h, t, outcome);
    const rank = a.allowed ? a.rank : NONE;
    if (rank === openRank) continue;
    if (openRank !== NONE) close(t);
    openAt = t;
    openRank = rank;
  }
  if (openRank !== NONE) close(to);
  return { holderId: sys.holders_[h]!.id, deviceId: dev.id, from: isoInstant(from), to: isoInstant(to), windows };
}
