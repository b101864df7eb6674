// The rule walk (docs/semantics.md steps 6–7 of a decision): the rules of a holder's groups that
// reach a device, read from the device's run of slots (CompiledDevice.slotGroup_), each judged
// against the window, the fallback mode and the factors presented. Every consumer walks rules here:
// decide and reader handles (hot: no sink, nothing allocated, no closure), explain (decide's trace is
// the sink), scanAccess and through it rsop, who, access windows, diffs and the weekly picture.
// Two loops stay outside it by design: who-can-access tables each group's rules at a door once for
// all its members (docs/semantics.md WA1), and RSOP accumulates a holder's rules per device it names
// (WA4) instead of walking each device's run; both are held equal to scanAccess, which walks here,
// by test/property/who.property.test.ts and rsopShape.property.test.ts.
import {
  type CompiledDevice,
  type CompiledSystem,
  RF_24X7,
  RF_ALLOW,
  RF_THREAT_SHIFT,
  RULE_STRIDE,
  R_FLAGS,
  R_POLICY,
  findSlot,
  floorsFor,
  ruleOpen,
  unionFloors,
  weekdayOf,
} from "../compile/index.js";

/** "No such rule" in rank minimums. */
export const NONE = 0x7fffffff;

/** Fallback modes (docs/semantics.md step 3): which windows apply. */
export const MODE_NORMAL = 0;
export const MODE_ECARD = 1;
export const MODE_24X7 = 2;
export const MODE_ANY = 3;

/**
 * A rule's verdict in the walk: its window is closed (normal mode); a deny rule that applies; an
 * allow rule set aside offline because it is not 24x7; an applicable allow rule that does not accept
 * the factors presented; one that accepts them.
 */
export const RULE_CLOSED = 0;
export const RULE_DENIES = 1;
export const RULE_OFF_SCHEDULE = 2;
export const RULE_REFUSES = 3;
export const RULE_ACCEPTS = 4;
/** An allow rule whose window (and the 24x7 filter) let it apply, set aside by the node's threat level (TL2). */
export const RULE_THREAT = 5;

/** Told each rule the walk meets, with its verdict (RULE_*) and its floor ref (see CompiledDevice.pairs_). */
export interface RuleSink {
  rule_(rank: number, floorRef: number, verdict: number): void;
}

/** What the rules applicable to one holder at one device come to (docs/semantics.md steps 6–7). */
export interface RuleOutcome {
  /** Smallest rank of an applicable deny rule, of an applicable allow rule, of an accepting allow rule; NONE if none. */
  minDeny_: number;
  minAllow_: number;
  minAccepted_: number;
  /** Smallest rank of an allow rule set aside only by the threat level (TL2); NONE if none. */
  minThreat_: number;
  /** Elevators: floor groups reached through accepting rules (mask, or wideHits_ beyond 31). */
  mask_: number;
  wideHits_: Set<number> | null;
}

/** A fresh RuleOutcome; decide keeps one in module scope, rsop one per call. */
export function newRuleOutcome(): RuleOutcome {
  return { minDeny_: NONE, minAllow_: NONE, minAccepted_: NONE, minThreat_: NONE, mask_: 0, wideHits_: null };
}

/**
 * Evaluates the rules of a holder's groups (`holderGroups_[groupFrom … groupTo - 1]`) at a device
 * into `out`: windows (when `mode` is normal, at local day `day`, `tod` ms into it), deny rules, the
 * 24x7 filter, and which allow rules accept `factor` (a policyMask bit). `sink`, when given, is told
 * every rule met, through the traced twin of this loop: the untraced loop decides with early
 * `continue`s and no verdict, which measured 0.88–0.90× at L when the two were one loop with a
 * `sink` test per rule (bench/decide.bench.ts; the session note of 2026-11-26).
 */
export function evaluateRules(
  sys: CompiledSystem,
  device: CompiledDevice,
  groupFrom: number,
  groupTo: number,
  factor: number,
  mode: number,
  day: number,
  tod: number,
  out: RuleOutcome,
  sink?: RuleSink,
): void {
  if (sink !== undefined) {
    walkTraced(sys, device, groupFrom, groupTo, factor, mode, day, tod, out, sink);
    return;
  }
  // The run's one array (CompiledDevice.run_): the dense table, the slot groups, slotPairs, pairs.
  const data = sys.ruleData_;
  const cal = sys.calendarData_;
  const run = device.run_;
  const dense = device.runDense_;
  const slots = device.runSlots_;
  const slotPairs = dense + slots;
  const pairs = slotPairs + slots + 1;
  const groups = sys.holderGroups_;
  const elevator = device.elevator_;
  const accepts = device.policy_ & factor;
  const level = device.node_.threatLevel_;
  const wd = weekdayOf(day);
  let minDeny = NONE;
  let minAllow = NONE;
  let minAccepted = NONE;
  let minThreat = NONE;
  let mask = 0;
  let wideHits: Set<number> | null = null;
  const last = slots === 0 ? 0 : groupTo;
  for (let gi = groupFrom; gi < last; gi++) {
    const group = groups[gi]!;
    let slot = -1;
    if (dense > 0) {
      if (group < dense) slot = run[group]!;
    } else {
      // findSlot's binary search over the slot groups, which start run_ when it has no dense table.
      let lo = 0;
      let hi = slots - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const g = run[mid]!;
        if (g === group) {
          slot = mid;
          break;
        }
        if (g < group) lo = mid + 1;
        else hi = mid - 1;
      }
    }
    if (slot < 0) continue;
    const end = pairs + run[slotPairs + slot + 1]!;
    for (let k = pairs + run[slotPairs + slot]!; k < end; k += 2) {
      const rank = run[k]!;
      const base = rank * RULE_STRIDE;
      if (mode === MODE_NORMAL && !ruleOpen(data, cal, base, day, wd, tod)) continue;
      const flags = data[base + R_FLAGS]!;
      if ((flags & RF_ALLOW) === 0) {
        if (rank < minDeny) minDeny = rank;
        continue;
      }
      if (mode === MODE_24X7 && (flags & RF_24X7) === 0) continue;
      if (flags >>> RF_THREAT_SHIFT < level) {
        if (rank < minThreat) minThreat = rank;
        continue;
      }
      if (rank < minAllow) minAllow = rank;
      if ((data[base + R_POLICY]! & accepts) === 0) continue;
      if (rank < minAccepted) minAccepted = rank;
      if (!elevator) continue;
      if (!device.wide_) mask |= run[k + 1]!;
      else wideHits = addWide(device, run[k + 1]!, wideHits);
    }
  }
  out.minDeny_ = minDeny;
  out.minAllow_ = minAllow;
  out.minAccepted_ = minAccepted;
  out.minThreat_ = minThreat;
  out.mask_ = mask;
  out.wideHits_ = wideHits;
}

/** More than 31 floor groups at one reader: rare, so a Set is acceptable here. */
function addWide(device: CompiledDevice, ref: number, hits: Set<number> | null): Set<number> {
  const set = hits ?? new Set<number>();
  const ks = device.wideSets_[ref]!;
  for (let j = 0; j < ks.length; j++) set.add(ks[j]!);
  return set;
}

/** evaluateRules with every rule met told to `sink` with its verdict (explain, scanAccess). */
function walkTraced(
  sys: CompiledSystem,
  device: CompiledDevice,
  groupFrom: number,
  groupTo: number,
  factor: number,
  mode: number,
  day: number,
  tod: number,
  out: RuleOutcome,
  sink: RuleSink,
): void {
  const data = sys.ruleData_;
  const cal = sys.calendarData_;
  const slotPairs = device.slotPairs_;
  const pairs = device.pairs_;
  const groups = sys.holderGroups_;
  const elevator = device.elevator_;
  const accepts = device.policy_ & factor;
  const level = device.node_.threatLevel_;
  const wd = weekdayOf(day);
  let minDeny = NONE;
  let minAllow = NONE;
  let minAccepted = NONE;
  let minThreat = NONE;
  let mask = 0;
  let wideHits: Set<number> | null = null;
  const last = device.slotGroup_.length === 0 ? 0 : groupTo;
  for (let gi = groupFrom; gi < last; gi++) {
    const slot = findSlot(device, groups[gi]!);
    if (slot < 0) continue;
    const end = slotPairs[slot + 1]!;
    for (let k = slotPairs[slot]!; k < end; k += 2) {
      const rank = pairs[k]!;
      const base = rank * RULE_STRIDE;
      let verdict = RULE_ACCEPTS;
      if (mode === MODE_NORMAL && !ruleOpen(data, cal, base, day, wd, tod)) verdict = RULE_CLOSED;
      else {
        const flags = data[base + R_FLAGS]!;
        if ((flags & RF_ALLOW) === 0) {
          if (rank < minDeny) minDeny = rank;
          verdict = RULE_DENIES;
        } else if (mode === MODE_24X7 && (flags & RF_24X7) === 0) verdict = RULE_OFF_SCHEDULE;
        else if (flags >>> RF_THREAT_SHIFT < level) {
          if (rank < minThreat) minThreat = rank;
          verdict = RULE_THREAT;
        } else {
          if (rank < minAllow) minAllow = rank;
          if ((data[base + R_POLICY]! & accepts) === 0) verdict = RULE_REFUSES;
          else {
            if (rank < minAccepted) minAccepted = rank;
            if (elevator) {
              if (!device.wide_) mask |= pairs[k + 1]!;
              else wideHits = addWide(device, pairs[k + 1]!, wideHits);
            }
          }
        }
      }
      sink.rule_(rank, pairs[k + 1]!, verdict);
    }
  }
  out.minDeny_ = minDeny;
  out.minAllow_ = minAllow;
  out.minAccepted_ = minAccepted;
  out.minThreat_ = minThreat;
  out.mask_ = mask;
  out.wideHits_ = wideHits;
}

/** The shared empty `floors` of every non-elevator decision. */
export const NO_FLOORS: readonly string[] = Object.freeze([]);

/** The sorted floors an accepted outcome enables at a device: interned per floor-group mask; [] at doors. */
export function floorsOf(device: CompiledDevice, outcome: RuleOutcome): readonly string[] {
  if (!device.elevator_) return NO_FLOORS;
  return outcome.wideHits_ !== null ? unionFloors(device, outcome.wideHits_) : floorsFor(device, outcome.mask_);
}

/** Collects the ranks a walk meets (ranksReaching). */
class RankList implements RuleSink {
  readonly ranks_: number[] = [];
  rule_(rank: number): void {
    this.ranks_.push(rank);
  }
}

/**
 * The ranks of every rule of holder groups `holderGroups_[groupFrom … groupTo - 1]` that reaches the
 * device, whatever its window, in walk order (by group, then rank); empty when none reaches it.
 */
export function ranksReaching(
  sys: CompiledSystem,
  device: CompiledDevice,
  groupFrom: number,
  groupTo: number,
): number[] {
  const list = new RankList();
  evaluateRules(sys, device, groupFrom, groupTo, 0, MODE_ANY, 0, 0, newRuleOutcome(), list);
  return list.ranks_;
}

/** Finds the smallest accepting rank reaching one floor group (minRankReaching); one per module, reused. */
class FloorGroupReach implements RuleSink {
  device_: CompiledDevice | null = null;
  k_ = -1;
  best_ = NONE;
  rule_(rank: number, floorRef: number, verdict: number): void {
    if (verdict !== RULE_ACCEPTS || rank >= this.best_) return;
    const device = this.device_!;
    const k = this.k_;
    if (device.wide_ ? device.wideSets_[floorRef]!.includes(k) : ((floorRef >> k) & 1) === 1) this.best_ = rank;
  }
}

const REACH = new FloorGroupReach();
const REACH_OUTCOME = newRuleOutcome();

/**
 * The smallest rank among the accepting allow rules of holder groups `holderGroups_[groupFrom …
 * groupTo - 1]` that reach local floor group `k` of an elevator reader, windows at local day `day`
 * and `tod` ms into it, factors `factor`; NONE when none does.
 */
export function minRankReachingAt(
  sys: CompiledSystem,
  device: CompiledDevice,
  groupFrom: number,
  groupTo: number,
  factor: number,
  day: number,
  tod: number,
  k: number,
): number {
  REACH.device_ = device;
  REACH.k_ = k;
  REACH.best_ = NONE;
  evaluateRules(sys, device, groupFrom, groupTo, factor, MODE_NORMAL, day, tod, REACH_OUTCOME, REACH);
  REACH.device_ = null;
  return REACH.best_;
}
