// Who gains or loses what between two versions of a system: for every holder × door and holder ×
// floor group the change can reach, the allowed time of the period on each side (the union of the
// access-window intervals, evaluated as accessWindows does, DST-correct), and the difference.
// Pairs the change cannot reach are never evaluated: a rule change reaches its group's members ×
// its doors and floor groups; a holder change, the holder × everything its groups' rules reach; a
// device, floor group or cloud node change, everyone whose rules reach it (docs/semantics.md X4).
import {
  type CompiledDevice,
  type CompiledSystem,
  HOLDER_STRIDE,
  H_FROM,
  H_GROUP_TO_ENABLED,
  H_TO,
  holderActiveFrom,
  holderExpiresAt,
  holderGroupFrom,
  holderGroupTo,
} from "../compile/index.js";
import { type Issue, MS_PER_DAY, QueryError, type Rule, type SystemSnapshot } from "../model/index.js";
import { MAX_WINDOW_SPAN_DAYS, candidateInstants, windowEdges } from "./accessWindows.js";
import { NONE, newRuleOutcome, ranksReaching } from "./ruleWalk.js";
import type { Engine } from "./engine.js";
import { isoInstant } from "./formatInstant.js";
import { queryInstant } from "./rsop.js";
import { minRankReaching, reachesFloorGroup, scanAccess } from "./scanAccess.js";

/** The period of a diff: `from` inclusive, `to` exclusive (ISO 8601 with Z or an offset, or epoch ms). */
export interface DiffOptions {
  readonly from: string | number;
  readonly to: string | number;
}

/**
 * Bounds of one diff's work and answer (docs/semantics.md HP1, HP2); unset: unbounded, as the CLI's
 * `rsop diff` of two local files is.
 */
export interface DiffLimits {
  /** Most holder × door-or-floor-group pairs the change reaches, times the days of the period (started days count whole). */
  readonly maxCost?: number;
  /** Most changed pairs answered. */
  readonly maxChanges?: number;
}

/** A diff over its bound (DiffLimits), refused before the work: each issue says the bound and what was asked. */
export class DiffBudgetError extends Error {
  override readonly name = "DiffBudgetError";
  constructor(readonly issues: readonly Issue[]) {
    super(issues.map((i) => i.message).join("; "));
  }
}

/** What a diff will evaluate, checked against its bounds before anything is compiled or scanned (planDiff). */
export interface DiffPlan {
  readonly from: number;
  readonly to: number;
  readonly pairs: ReadonlyMap<string, ReadonlySet<string>>;
  readonly maxChanges: number;
}

/** A stretch of time, ISO 8601 UTC instants: `start` inclusive, `end` exclusive. */
export interface TimeSpan {
  start: string;
  end: string;
}

/** How one holder's access to one door (`deviceId`) or floor group (`floorGroupId`) changes in the period. */
export interface AccessChange {
  holderId: string;
  deviceId?: string;
  floorGroupId?: string;
  /** Time allowed after and not before, and the other way round, in time order. */
  gained: TimeSpan[];
  lost: TimeSpan[];
  /** The rules that decided the scan during the changed time, before and after (allow or deny), sorted. */
  rulesBefore: string[];
  rulesAfter: string[];
}

/** What diffAccess returns: every changed pair, by holder id, then door or floor group id. */
export interface AccessDiff {
  from: string;
  to: string;
  changes: AccessChange[];
}

/** A run of one state: allowed or not, and the deciding rule's rank (NONE when no rule decided). */
interface Run {
  start: number;
  end: number;
  allowed: boolean;
  rank: number;
}

type Target = string; // "d:" + device id, or "f:" + floor group id

/** The period, checked as accessWindows checks its own (at most 62 days). */
function period(options: DiffOptions): { from: number; to: number } {
  const issues: Issue[] = [];
  const from = queryInstant(options?.from, "from", issues);
  const to = queryInstant(options?.to, "to", issues);
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
  return { from, to };
}

/**
 * The runs of a holder's Q1 scan at a device (k < 0) or at floor group k of an elevator reader, over
 * [from, to): the state is evaluated at every instant where it may change, as accessWindows does.
 */
export function accessRuns(
  sys: CompiledSystem,
  h: number,
  dev: CompiledDevice,
  k: number,
  from: number,
  to: number,
): Run[] {
  const zone = dev.node_.zone_;
  const local: number[] = [holderActiveFrom(sys, h), holderExpiresAt(sys, h)];
  const ranks = ranksReaching(sys, dev, holderGroupFrom(sys, h), holderGroupTo(sys, h));
  const runs: Run[] = [];
  // No rule of the holder's groups reaches the device: never allowed, no rule decides.
  if (ranks.length === 0) return runs;
  const edges = windowEdges(sys, ranks);
  const points = candidateInstants(zone, local, edges, from, to);
  const outcome = newRuleOutcome();
  for (const t of points) {
    const a = scanAccess(sys, dev, h, t, outcome);
    let allowed = a.allowed;
    let rank = a.rank;
    if (allowed && k >= 0) {
      allowed = reachesFloorGroup(dev, outcome, k);
      rank = allowed ? minRankReaching(sys, dev, h, a.factor, a.local, k) : NONE;
      if (rank === NONE) allowed = false;
    }
    const last = runs.at(-1);
    if (last !== undefined && last.allowed === allowed && last.rank === rank) continue;
    if (last !== undefined) last.end = t;
    runs.push({ start: t, end: to, allowed, rank });
  }
  return runs;
}

/** The allowed time of runs as sorted, disjoint, non-touching intervals. */
function allowedTime(runs: readonly Run[]): [number, number][] {
  const out: [number, number][] = [];
  for (const r of runs) {
    if (!r.allowed) continue;
    const last = out.at(-1);
    if (last !== undefined && last[1] === r.start) last[1] = r.end;
    else out.push([r.start, r.end]);
  }
  return out;
}

/** a minus b, both sorted disjoint interval lists. */
function subtract(a: readonly [number, number][], b: readonly [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let j = 0;
  for (const [s0, e] of a) {
    let s = s0;
    while (j < b.length && b[j]![1] <= s) j++;
    let i = j;
    while (i < b.length && b[i]![0] < e) {
      if (b[i]![0] > s) out.push([s, b[i]![0]]);
      s = Math.max(s, b[i]![1]);
      i++;
    }
    if (s < e) out.push([s, e]);
  }
  return out;
}

/** Ids of the rules deciding during any of `spans` (allow or deny), sorted. */
function rulesDuring(sys: CompiledSystem, runs: readonly Run[], spans: readonly [number, number][]): string[] {
  const ids = new Set<string>();
  for (const r of runs) {
    if (r.rank === NONE) continue;
    if (spans.some(([s, e]) => r.start < e && s < r.end)) ids.add(sys.ruleIds_[r.rank]!);
  }
  return [...ids].sort();
}

/** What a snapshot's rules reach: targets of each group's rules, members of each group, floor groups of each reader. */
class Reach {
  readonly targetsOfGroup = new Map<string, Set<Target>>();
  readonly membersOf = new Map<string, string[]>();
  readonly groupsReaching = new Map<Target, Set<string>>();
  readonly floorGroupsAt = new Map<string, string[]>();
  /** The reader of each floor group. */
  readonly readerOf = new Map<string, string>();
  readonly rules = new Map<string, Rule>();

  constructor(readonly s: SystemSnapshot) {
    for (const r of s.rules) {
      this.rules.set(r.id, r);
      for (const t of ruleTargets(r)) {
        let ts = this.targetsOfGroup.get(r.groupId);
        if (ts === undefined) this.targetsOfGroup.set(r.groupId, (ts = new Set()));
        ts.add(t);
        let gs = this.groupsReaching.get(t);
        if (gs === undefined) this.groupsReaching.set(t, (gs = new Set()));
        gs.add(r.groupId);
      }
    }
    for (const h of s.holders)
      for (const g of h.groups) {
        const m = this.membersOf.get(g);
        if (m === undefined) this.membersOf.set(g, [h.id]);
        else m.push(h.id);
      }
    for (const fg of s.floorGroups) {
      this.readerOf.set(fg.id, fg.readerPort);
      const at = this.floorGroupsAt.get(fg.readerPort);
      if (at === undefined) this.floorGroupsAt.set(fg.readerPort, [fg.id]);
      else at.push(fg.id);
    }
  }
}

function ruleTargets(r: Rule): Target[] {
  return r.type === "elevator" ? r.floorGroups.map((f) => `f:${f}`) : r.devices.map((d) => `d:${d}`);
}

function same(a: unknown, b: unknown): boolean {
  return a === b || (a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b));
}

/** Entities of one list that differ between two snapshots (added, removed or changed), by id. */
function changedIds<T extends { readonly id: string }>(a: readonly T[], b: readonly T[]): string[] {
  if (a === b) return [];
  const before = new Map(a.map((x) => [x.id, x]));
  const out: string[] = [];
  for (const x of b) {
    const y = before.get(x.id);
    before.delete(x.id);
    if (!same(x, y)) out.push(x.id);
  }
  out.push(...before.keys());
  return out;
}

/** Adds every floor group at floor group `f`'s reader, on each side where `f` exists. */
function addAtReaders(sides: readonly Reach[], f: string, targets: Set<Target>): void {
  for (const s of sides) {
    const reader = s.readerOf.get(f);
    if (reader !== undefined) for (const other of s.floorGroupsAt.get(reader) ?? []) targets.add(`f:${other}`);
  }
}

/** Thrown by reachedPairs' `add` past its bound: the walk stops at once (HP1). */
const OVER = Symbol("over");

/**
 * The holder × target pairs a change from `a` to `b` can reach (docs/semantics.md X4); OVER as soon
 * as there are more than `maxPairs`, so the walk's time and memory stay within the bound (HP1).
 */
function reachedPairs(a: Reach, b: Reach, maxPairs = Infinity): Map<string, Set<Target>> | typeof OVER {
  const pairs = new Map<string, Set<Target>>();
  let count = 0;
  const add = (holderId: string, t: Target) => {
    let ts = pairs.get(holderId);
    if (ts === undefined) pairs.set(holderId, (ts = new Set()));
    if (ts.has(t)) return;
    ts.add(t);
    if (++count > maxPairs) throw OVER;
  };
  try {
    reachInto(a, b, add);
  } catch (e) {
    if (e === OVER) return OVER;
    throw e;
  }
  return pairs;
}

/**
 * The rules a change from `a` to `b` reaches: those that differ, and those that use a calendar that
 * differs on either side (docs/semantics.md C4: a calendar's days open and close its rules).
 */
function changedRules(a: Reach, b: Reach): Set<string> {
  const out = new Set(changedIds(a.s.rules, b.s.rules));
  const calendars = new Set(changedIds(a.s.calendars, b.s.calendars));
  if (calendars.size > 0)
    for (const s of [a, b]) for (const r of s.s.rules) if (r.calendar && calendars.has(r.calendar.id)) out.add(r.id);
  return out;
}

/** Calls `add` with every holder × target pair a change from `a` to `b` can reach (X4). */
function reachInto(a: Reach, b: Reach, add: (holderId: string, t: Target) => void): void {
  const sides = [a, b];
  // Rules: their groups' members × their targets, on both sides. An elevator rule reaches every
  // floor group at the readers of its own: one scan at a reader decides all of its floor groups, so
  // a rule that changes which rule decides it (or which factor) can take away or give a floor group
  // the rule does not name.
  for (const id of changedRules(a, b)) {
    const rs = sides.map((s) => s.rules.get(id)).filter((r): r is Rule => r !== undefined);
    const targets = new Set(rs.flatMap(ruleTargets));
    for (const r of rs) for (const f of r.floorGroups) addAtReaders(sides, f, targets);
    for (const r of rs)
      for (const s of sides) for (const h of s.membersOf.get(r.groupId) ?? []) for (const t of targets) add(h, t);
  }
  // Holders: everything their groups' rules reach, on both sides.
  const holderA = new Map(a.s.holders.map((h) => [h.id, h]));
  const holderB = new Map(b.s.holders.map((h) => [h.id, h]));
  for (const id of changedIds(a.s.holders, b.s.holders))
    for (const [s, hs] of [
      [a, holderA],
      [b, holderB],
    ] as const) {
      const h = hs.get(id);
      if (h === undefined) continue;
      for (const g of h.groups) for (const t of s.targetsOfGroup.get(g) ?? []) add(id, t);
    }
  // Devices, floor groups, cloud nodes: everyone whose rules reach them.
  const targets = new Set<Target>();
  const deviceIds = new Set(changedIds(a.s.devices, b.s.devices));
  const nodes = new Set(changedIds(a.s.cloudNodes, b.s.cloudNodes));
  if (nodes.size > 0)
    for (const s of sides) for (const d of s.s.devices) if (nodes.has(d.cloudNode)) deviceIds.add(d.id);
  for (const d of deviceIds) {
    targets.add(`d:${d}`);
    for (const s of sides) for (const f of s.floorGroupsAt.get(d) ?? []) targets.add(`f:${f}`);
  }
  // A floor group changed (moved to another reader, say) changes the scan at its readers: every floor group there.
  for (const f of changedIds(a.s.floorGroups, b.s.floorGroups)) {
    targets.add(`f:${f}`);
    addAtReaders(sides, f, targets);
  }
  for (const t of targets)
    for (const s of sides)
      for (const g of s.groupsReaching.get(t) ?? [])
        for (const side of sides) for (const h of side.membersOf.get(g) ?? []) add(h, t);
}

/**
 * Everything of holder `h` its runs at any target depend on (accessRuns, scanAccess,
 * minRankReaching): enabled, active and expiry times, whether it has a PIN, and its groups in
 * order. Holders with one key have the same runs everywhere, so each target is scanned once per key
 * (HP1: the cost of a diff is what it reaches, not a scan per holder).
 */
function holderKey(sys: CompiledSystem, h: number): string {
  const hd = sys.holderData_;
  const hb = h * HOLDER_STRIDE;
  const holder = sys.holders_[h]!;
  let key = `${hd[hb + H_GROUP_TO_ENABLED]! % 2}|${hd[hb + H_FROM]}|${hd[hb + H_TO]}|${(holder.pin ?? holder.duressPin) === null ? 0 : 1}`;
  for (let gi = holderGroupFrom(sys, h), end = holderGroupTo(sys, h); gi < end; gi++)
    key += `|${sys.holderGroups_[gi]}`;
  return key;
}

/** Runs of one system, shared between holders of one key (holderKey). */
class RunMemo {
  readonly #runs = new Map<string, Run[]>();
  constructor(
    readonly sys: CompiledSystem,
    readonly from: number,
    readonly to: number,
  ) {}

  /** The runs of a pair; none when the holder or target does not exist here. */
  runs(holderId: string, key: string | undefined, t: Target): Run[] {
    const h = this.sys.holderIndex_.get(holderId);
    if (h === undefined || key === undefined) return [];
    const k = `${t}#${key}`;
    let runs = this.#runs.get(k);
    if (runs === undefined) this.#runs.set(k, (runs = runsOf(this.sys, h, t, this.from, this.to)));
    return runs;
  }

  /** The key of a holder here, or undefined when it does not exist here. */
  key(holderId: string): string | undefined {
    const h = this.sys.holderIndex_.get(holderId);
    return h === undefined ? undefined : holderKey(this.sys, h);
  }
}

/** The runs of a pair in one system, holder `h` being its index; none when the target does not exist there. */
function runsOf(sys: CompiledSystem, h: number, t: Target, from: number, to: number): Run[] {
  if (t.startsWith("d:")) {
    const dev = sys.deviceIndex_.get(t.slice(2));
    return dev === undefined || dev.elevator_ ? [] : accessRuns(sys, h, dev, -1, from, to);
  }
  const at = sys.floorGroupAt_.get(t.slice(2));
  if (at === undefined) return [];
  return accessRuns(sys, h, sys.devices_[at.reader]!, at.k, from, to);
}

function spans(list: readonly [number, number][]): TimeSpan[] {
  return list.map(([s, e]) => ({ start: isoInstant(s), end: isoInstant(e) }));
}

function byId(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Who gains or loses access between two versions of a system over a period: every holder × door
 * (by `deviceId`) or floor group (by `floorGroupId`) whose allowed time differs, with the gained and
 * lost intervals (DST-correct, as accessWindows computes them) and the rules deciding during the
 * changed time on each side. Only the pairs the change can reach are evaluated.
 * @param before - the engine of the system as it is.
 * @param after - the engine of the system as it would be.
 * @param options - `from` (inclusive) and `to` (exclusive), at most 62 days apart; optional bounds (DiffLimits).
 * @returns `{ from, to, changes }`, changes sorted by holder id, then door or floor group id.
 * @throws QueryError for a bad instant or period; DiffBudgetError over a bound.
 * @example
 * // after: the example building with rule-nurses-day-weekdays closing at 18:00 instead of 19:30
 * diffAccess(engine, after, { from: "2026-04-13T05:00:00Z", to: "2026-04-20T05:00:00Z" }).changes.find((c) => c.deviceId === "door-ward-3");
 * //=> { holderId: "holder-0001", deviceId: "door-ward-3", gained: [], lost: [{ start: "2026-04-13T23:00:00.000Z", end: "2026-04-14T00:30:00.000Z" }, …],
 * //     rulesBefore: ["rule-nurses-day-weekdays"], rulesAfter: [] }
 */
export function diffAccess(before: Engine, after: Engine, options: DiffOptions & DiffLimits): AccessDiff {
  return runDiff(before, after, planDiff(before.compiled_.snapshot, after.compiled_.snapshot, options));
}

/**
 * Checks the period and the cost of a diff between two snapshots before anything is compiled or
 * scanned (HP1): the pairs the change reaches, times the days of the period, must be at most
 * `maxCost`. The walk stops as soon as it passes the bound, so a refusal costs no more than the bound.
 * @throws QueryError for a bad instant or period; DiffBudgetError over `maxCost`.
 */
export function planDiff(before: SystemSnapshot, after: SystemSnapshot, options: DiffOptions & DiffLimits): DiffPlan {
  const { from, to } = period(options);
  const days = Math.ceil((to - from) / MS_PER_DAY);
  const maxCost = options.maxCost ?? Infinity;
  const pairs = reachedPairs(new Reach(before), new Reach(after), Math.floor(maxCost / days));
  if (pairs === OVER) {
    const over = (Math.floor(maxCost / days) + 1) * days;
    throw new DiffBudgetError([
      {
        code: "tooBig",
        path: ["operations"],
        message: `The change reaches more than ${Math.floor(maxCost / days)} holder × door-or-floor-group pairs over ${days} days, at least ${over} pair-days; the bound is ${maxCost} (holder × door-or-floor-group × day). Preview fewer operations, or a shorter period.`,
      },
    ]);
  }
  return { from, to, pairs, maxChanges: options.maxChanges ?? Infinity };
}

/**
 * The diff a plan (planDiff) describes. Pairs are evaluated holder by holder; the runs of holders
 * with the same key (holderKey) are scanned once per target.
 * @throws DiffBudgetError when more pairs change than the plan's `maxChanges` (HP2).
 */
export function runDiff(before: Engine, after: Engine, plan: DiffPlan): AccessDiff {
  const { from, to, pairs, maxChanges } = plan;
  const a = new RunMemo(before.compiled_, from, to);
  const b = new RunMemo(after.compiled_, from, to);
  const changes: AccessChange[] = [];
  for (const holderId of [...pairs.keys()].sort(byId)) {
    const targets = [...pairs.get(holderId)!].sort((x, y) => byId(x.slice(2), y.slice(2)) || byId(x, y));
    const ka = a.key(holderId);
    const kb = b.key(holderId);
    for (const t of targets) {
      const ra = a.runs(holderId, ka, t);
      const rb = b.runs(holderId, kb, t);
      const ta = allowedTime(ra);
      const tb = allowedTime(rb);
      const gained = subtract(tb, ta);
      const lost = subtract(ta, tb);
      if (gained.length === 0 && lost.length === 0) continue;
      if (changes.length >= maxChanges)
        throw new DiffBudgetError([
          {
            code: "tooBig",
            path: ["operations"],
            message: `The change makes more than ${maxChanges} holder × door-or-floor-group changes, the most one answer holds. Preview fewer operations, or a shorter period.`,
          },
        ]);
      const changed = [...gained, ...lost];
      changes.push({
        holderId,
        ...(t.startsWith("d:") ? { deviceId: t.slice(2) } : { floorGroupId: t.slice(2) }),
        gained: spans(gained),
        lost: spans(lost),
        rulesBefore: rulesDuring(a.sys, ra, changed),
        rulesAfter: rulesDuring(b.sys, rb, changed),
      });
    }
  }
  return { from: isoInstant(from), to: isoInstant(to), changes };
}
