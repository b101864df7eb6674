// "Who can open this door now?": every holder a scan would admit (scanAccess). One pass per door:
// first what the rules of each group reaching the device come to at that instant (a few ints per
// group), then the members of the groups with an open allow rule and no open deny rule, each holder
// combining the entries of its own groups. Allowed holders are collected with their position in id
// order (holderOrder), so the result is sorted by numbers, not strings (docs/semantics.md WA1–WA3).
import {
  type CompiledDevice,
  type CompiledSystem,
  type HolderOrder,
  M_FROM,
  M_OTHER,
  M_POSITION,
  M_STRIDE,
  M_TO,
  NO_OTHER,
  RF_ALLOW,
  RF_THREAT_SHIFT,
  RULE_STRIDE,
  R_FLAGS,
  R_POLICY,
  floorsFor,
  holderOrder,
  offsetAt,
  ruleOpen,
  weekdayOf,
} from "../compile/index.js";
import { type Issue, MS_PER_DAY, QueryError } from "../model/index.js";
import { NONE, floorsOf, newRuleOutcome } from "./ruleWalk.js";
import { isoInstant } from "./formatInstant.js";
import { type AtOptions, queryInstant } from "./rsop.js";
import { minRankReaching, reachesFloorGroup, scanAccess } from "./scanAccess.js";

/** One holder who can get in, and the rule that lets them. */
export interface AccessEntry {
  holderId: string;
  activeRuleId: string;
  /** Elevator readers: the floors the holder's scan enables; empty for doors. */
  floors: readonly string[];
}

/**
 * Who can access one device or floor group at one instant, sorted by holder id.
 */
export interface WhoResult {
  date: string;
  deviceId: string | null;
  floorGroupId: string | null;
  holders: AccessEntry[];
}

/** Card alone, then card + PIN: the factor combinations of policyMask. */
const CARD = 1;
const CARD_AND_PIN = 4;

/**
 * Per compiled system, the buffers of one pass, reused from call to call: per group index what its
 * rules at the device come to (valid where `gStamp` equals the pass's stamp), and the hits.
 */
interface Scratch {
  stamp: number;
  gStamp: Int32Array;
  gDeny: Int32Array;
  /** Smallest accepting allow rank for card alone [g * 2] and card + PIN [g * 2 + 1]. */
  gAccepted: Int32Array;
  /** Floor-group masks of the accepting rules, same layout. */
  gMask: Int32Array;
  /** Floor-group queries: smallest accepting allow rank reaching floor group k, same layout. */
  gReach: Int32Array;
  /** Slots of the groups whose members the pass visits. */
  live: Int32Array;
  /** The allowed holders of a pass: deciding ranks and floor-group masks, by hit number. */
  hitRank: Int32Array;
  hitMask: Int32Array;
  /** Per position in id order: a bit for "allowed" (bitmap words `lowWord … highWord` used), and its hit number. */
  bits: Int32Array;
  hitAt: Int32Array;
  lowWord: number;
  highWord: number;
}

const SCRATCH = new WeakMap<CompiledSystem, Scratch>();

function scratchFor(sys: CompiledSystem, slots: number, positions: number): Scratch {
  let s = SCRATCH.get(sys);
  if (s === undefined) {
    const none = new Int32Array(0);
    s = {
      stamp: 0,
      gStamp: none,
      gDeny: none,
      gAccepted: none,
      gMask: none,
      gReach: none,
      live: none,
      hitRank: none,
      hitMask: none,
      bits: none,
      hitAt: none,
      lowWord: 0,
      highWord: -1,
    };
    SCRATCH.set(sys, s);
  }
  const groups = sys.groups_.length;
  if (s.gStamp.length < groups || s.stamp >= 0x3fffffff) {
    const n = Math.max(groups, s.gStamp.length * 2, 16);
    s.stamp = 0;
    s.gStamp = new Int32Array(n);
    s.gDeny = new Int32Array(n);
    s.gAccepted = new Int32Array(n * 2);
    s.gMask = new Int32Array(n * 2);
    s.gReach = new Int32Array(n * 2);
  }
  if (s.live.length < slots) s.live = new Int32Array(Math.max(slots, s.live.length * 2));
  if (s.hitAt.length < positions) {
    const n = Math.max(positions, s.hitAt.length * 2, 32);
    s.hitAt = new Int32Array(n);
    s.bits = new Int32Array((n >> 5) + 1);
  }
  return s;
}

/**
 * One pass over the holders who could scan at `device` at `at`: collects every holder whose scan is
 * allowed (and, with `k` ≥ 0, reaches local floor group `k` of the reader), with its position in id
 * order, the deciding rank (for `k`, the smallest accepting rule reaching it) and the floor-group mask.
 * The device has at most 31 floor groups (not `wide_`). Returns the number of hits in the scratch's hit lists.
 */
function markAllowed(
  sys: CompiledSystem,
  device: CompiledDevice,
  at: number,
  k: number,
  s: Scratch,
  order: HolderOrder,
): number {
  const local = at + offsetAt(device.node_.zone_, at);
  const stamp = ++s.stamp;
  const nLive = tableGroups(sys, device, local, k, s, stamp);
  const { gStamp, gDeny, gAccepted, gMask, gReach, live } = s;
  const slotGroup = device.slotGroup_;
  const elevator = device.elevator_;

  if (k < 0 && !elevator) return collectAtDoor(s, order, slotGroup, nLive, local, stamp);

  // The members of those groups, each once: a holder in several of them is taken at the first
  // (smallest group index), with the entries of all its groups here. Each group's member records
  // (holderOrder) are read in order; an allowed holder is appended to the hit lists.
  const extra = order.extra_;
  const { bits, hitAt } = s;
  let lowWord = bits.length;
  let highWord = -1;
  let n = 0;
  for (let j = 0; j < nLive; j++) {
    const g = slotGroup[live[j]!]!;
    const records = order.members_[g];
    if (records === undefined) continue;
    for (let base = 0; base < records.length; base += M_STRIDE) {
      if (local < records[base + M_FROM]! || local >= records[base + M_TO]!) continue;
      let acc1 = gAccepted[g * 2]!;
      let acc4 = gAccepted[g * 2 + 1]!;
      let m1 = gMask[g * 2]!;
      let m4 = gMask[g * 2 + 1]!;
      let r1 = gReach[g * 2]!;
      let r4 = gReach[g * 2 + 1]!;
      const other = records[base + M_OTHER]!;
      if (other !== NO_OTHER) {
        // One other group inline, or several in `extra`.
        let gi = 0;
        let end = 1;
        if (other < 0) {
          gi = -2 - other;
          end = gi + 1 + extra[gi]!;
          gi++;
        }
        let skip = false;
        for (; gi < end; gi++) {
          const g2 = other >= 0 ? other : extra[gi]!;
          if (g2 === g || gStamp[g2] !== stamp) continue;
          // An open deny rule in another group denies; a smaller live group took this holder already.
          if (gDeny[g2] !== NONE || g2 < g) {
            skip = true;
            break;
          }
          if (gAccepted[g2 * 2]! < acc1) acc1 = gAccepted[g2 * 2]!;
          if (gAccepted[g2 * 2 + 1]! < acc4) acc4 = gAccepted[g2 * 2 + 1]!;
          m1 |= gMask[g2 * 2]!;
          m4 |= gMask[g2 * 2 + 1]!;
          if (gReach[g2 * 2]! < r1) r1 = gReach[g2 * 2]!;
          if (gReach[g2 * 2 + 1]! < r4) r4 = gReach[g2 * 2 + 1]!;
        }
        if (skip) continue;
      }
      const positionAndPin = records[base + M_POSITION]!;
      // Card alone; if no rule accepts it, card + PIN for a holder who has a PIN (scanAccess).
      let rank = acc1;
      let mask = m1;
      let reach = r1;
      if (rank === NONE) {
        if (positionAndPin % 2 === 0) continue;
        rank = acc4;
        mask = m4;
        reach = r4;
        if (rank === NONE) continue;
      }
      if (k >= 0) {
        if (((mask >> k) & 1) === 0 || reach === NONE) continue;
        rank = reach;
      }
      if (n === s.hitRank.length) growHits(s);
      s.hitRank[n] = rank;
      s.hitMask[n] = mask;
      const p = positionAndPin >> 1;
      const w = p >> 5;
      bits[w]! |= 1 << (p & 31);
      hitAt[p] = n++;
      if (w < lowWord) lowWord = w;
      if (w > highWord) highWord = w;
    }
  }
  s.lowWord = lowWord;
  s.highWord = highWord;
  return n;
}

/**
 * markAllowed's first half: what each group's rules at `device` come to at local time `local`
 * (evaluateRules per group; docs/semantics.md WA1), written to the scratch's per-group entries under
 * `stamp`; the slots of the groups whose members may be allowed (an open allow rule, no open deny
 * rule) go to `live`. Returns their number.
 */
function tableGroups(
  sys: CompiledSystem,
  device: CompiledDevice,
  local: number,
  k: number,
  s: Scratch,
  stamp: number,
): number {
  const day = Math.floor(local / MS_PER_DAY);
  const tod = local - day * MS_PER_DAY;
  const wd = weekdayOf(day);
  const { gStamp, gDeny, gAccepted, gMask, gReach, live } = s;
  const data = sys.ruleData_;
  const cal = sys.calendarData_;
  const slotGroup = device.slotGroup_;
  const slotPairs = device.slotPairs_;
  const pairs = device.pairs_;
  const policy = device.policy_;
  const elevator = device.elevator_;
  const level = device.node_.threatLevel_;

  let nLive = 0;
  for (let slot = 0; slot < slotGroup.length; slot++) {
    let deny = NONE;
    let allow = NONE;
    let acc1 = NONE;
    let acc4 = NONE;
    let m1 = 0;
    let m4 = 0;
    let r1 = NONE;
    let r4 = NONE;
    const end = slotPairs[slot + 1]!;
    for (let i = slotPairs[slot]!; i < end; i += 2) {
      const rank = pairs[i]!;
      const base = rank * RULE_STRIDE;
      if (!ruleOpen(data, cal, base, day, wd, tod)) continue;
      const flags = data[base + R_FLAGS]!;
      if ((flags & RF_ALLOW) === 0) {
        if (rank < deny) deny = rank;
        continue;
      }
      if (flags >>> RF_THREAT_SHIFT < level) continue; // set aside by the node's threat level (TL2)
      if (rank < allow) allow = rank;
      const accepts = data[base + R_POLICY]! & policy;
      const ref = elevator ? pairs[i + 1]! : 0;
      const reaches = k >= 0 && ((ref >> k) & 1) === 1;
      if ((accepts & CARD) !== 0) {
        if (rank < acc1) acc1 = rank;
        m1 |= ref;
        if (reaches && rank < r1) r1 = rank;
      }
      if ((accepts & CARD_AND_PIN) !== 0) {
        if (rank < acc4) acc4 = rank;
        m4 |= ref;
        if (reaches && rank < r4) r4 = rank;
      }
    }
    // A group with no open rule here changes no member's outcome: it stays out of the table.
    if (deny === NONE && allow === NONE) continue;
    const g = slotGroup[slot]!;
    gStamp[g] = stamp;
    gDeny[g] = deny;
    gAccepted[g * 2] = acc1;
    gAccepted[g * 2 + 1] = acc4;
    gMask[g * 2] = m1;
    gMask[g * 2 + 1] = m4;
    gReach[g * 2] = r1;
    gReach[g * 2 + 1] = r4;
    // Members of a group with an open deny rule are all denied; no allow rule, none is allowed through it.
    if (deny === NONE) live[nLive++] = slot;
  }

  return nLive;
}

/**
 * markAllowed's second half at a door (no floors, no floor group asked): the same walk over the
 * live groups' member records, reading only the accepting ranks.
 */
function collectAtDoor(
  s: Scratch,
  order: HolderOrder,
  slotGroup: Int32Array,
  nLive: number,
  local: number,
  stamp: number,
): number {
  const { gStamp, gDeny, gAccepted, live, bits, hitAt } = s;
  const extra = order.extra_;
  let lowWord = bits.length;
  let highWord = -1;
  let n = 0;
  for (let j = 0; j < nLive; j++) {
    const g = slotGroup[live[j]!]!;
    const records = order.members_[g];
    if (records === undefined) continue;
    const ownAcc1 = gAccepted[g * 2]!;
    const ownAcc4 = gAccepted[g * 2 + 1]!;
    for (let base = 0; base < records.length; base += M_STRIDE) {
      if (local < records[base + M_FROM]! || local >= records[base + M_TO]!) continue;
      let acc1 = ownAcc1;
      let acc4 = ownAcc4;
      const other = records[base + M_OTHER]!;
      if (other !== NO_OTHER) {
        let gi = 0;
        let end = 1;
        if (other < 0) {
          gi = -2 - other;
          end = gi + 1 + extra[gi]!;
          gi++;
        }
        let skip = false;
        for (; gi < end; gi++) {
          const g2 = other >= 0 ? other : extra[gi]!;
          if (g2 === g || gStamp[g2] !== stamp) continue;
          if (gDeny[g2] !== NONE || g2 < g) {
            skip = true;
            break;
          }
          if (gAccepted[g2 * 2]! < acc1) acc1 = gAccepted[g2 * 2]!;
          if (gAccepted[g2 * 2 + 1]! < acc4) acc4 = gAccepted[g2 * 2 + 1]!;
        }
        if (skip) continue;
      }
      const positionAndPin = records[base + M_POSITION]!;
      let rank = acc1;
      if (rank === NONE) {
        if (positionAndPin % 2 === 0) continue;
        rank = acc4;
        if (rank === NONE) continue;
      }
      if (n === s.hitRank.length) growHits(s);
      s.hitRank[n] = rank;
      const p = positionAndPin >> 1;
      const w = p >> 5;
      bits[w]! |= 1 << (p & 31);
      hitAt[p] = n++;
      if (w < lowWord) lowWord = w;
      if (w > highWord) highWord = w;
    }
  }
  s.lowWord = lowWord;
  s.highWord = highWord;
  return n;
}

function growHits(s: Scratch): void {
  const n = Math.max(64, s.hitRank.length * 2);
  const grow = (a: Int32Array) => {
    const b = new Int32Array(n);
    b.set(a);
    return b;
  };
  s.hitRank = grow(s.hitRank);
  s.hitMask = grow(s.hitMask);
}

/**
 * The hits of markAllowed as entries, in holder id order: the bitmap's set bits read word by word
 * (and cleared), each position's hit from `hitAt` (a holder listed twice in a group comes out once).
 */
function entries(
  sys: CompiledSystem,
  s: Scratch,
  order: HolderOrder,
  n: number,
  floors: (mask: number) => readonly string[],
): AccessEntry[] {
  if (n === 0) return [];
  // Sized once: n is the number of hits, one per holder unless a holder is listed twice in a group.
  const out: AccessEntry[] = new Array(n);
  let count = 0;
  const ids = order.ids_;
  const ruleIds = sys.ruleIds_;
  const { bits, hitAt, hitRank, hitMask } = s;
  for (let w = s.lowWord; w <= s.highWord; w++) {
    let b = bits[w]!;
    if (b === 0) continue;
    bits[w] = 0;
    while (b !== 0) {
      const low = b & -b;
      b ^= low;
      const p = (w << 5) + (31 - Math.clz32(low));
      const hit = hitAt[p]!;
      out[count++] = { holderId: ids[p]!, activeRuleId: ruleIds[hitRank[hit]!]!, floors: floors(hitMask[hit]!) };
    }
  }
  if (count < n) out.length = count;
  return out;
}

/** The holders of the groups whose rules reach the device, once each (the one-holder-at-a-time path). */
function candidates(sys: CompiledSystem, device: CompiledDevice): number[] {
  const seen = new Set<number>();
  for (let slot = 0; slot < device.slotGroup_.length; slot++)
    for (const h of sys.holdersOfGroup_[device.slotGroup_[slot]!]!) seen.add(h);
  return [...seen];
}

function byHolderId(a: AccessEntry, b: AccessEntry): number {
  return a.holderId < b.holderId ? -1 : a.holderId > b.holderId ? 1 : 0;
}

/** Every holder whose scan at `deviceId` would be allowed at `at`. Throws QueryError on unknown ids. */
export function whoCanAccess(sys: CompiledSystem, deviceId: string, options: AtOptions): WhoResult {
  const issues: Issue[] = [];
  const at = queryInstant(options.at, "at", issues);
  const device = sys.deviceIndex_.get(deviceId);
  if (device === undefined)
    issues.push({ code: "unknownId", path: ["deviceId"], message: `Unknown device id "${deviceId}".` });
  if (issues.length > 0) throw new QueryError(issues);
  const dev = device!;
  const outcome = newRuleOutcome();
  let holders: AccessEntry[];
  if (!dev.wide_) {
    const order = holderOrder(sys);
    const s = scratchFor(sys, dev.slotGroup_.length, order.byId_.length);
    const n = markAllowed(sys, dev, at, -1, s, order);
    const none = floorsOf(dev, outcome);
    holders = entries(sys, s, order, n, dev.elevator_ ? (mask) => floorsFor(dev, mask) : () => none);
  } else {
    // More than 31 floor groups at one reader (rare): one holder at a time, floors as sets.
    holders = [];
    for (const h of candidates(sys, dev)) {
      const holder = sys.holders_[h]!;
      const access = scanAccess(sys, dev, h, at, outcome);
      if (!access.allowed) continue;
      holders.push({ holderId: holder.id, activeRuleId: sys.rules_[access.rank]!.id, floors: floorsOf(dev, outcome) });
    }
    holders.sort(byHolderId);
  }
  return { date: isoInstant(at), deviceId: dev.id, floorGroupId: null, holders };
}

/** Every holder whose scan at the floor group's reader would enable that floor group at `at`. */
export function whoCanAccessFloorGroup(sys: CompiledSystem, floorGroupId: string, options: AtOptions): WhoResult {
  const issues: Issue[] = [];
  const at = queryInstant(options.at, "at", issues);
  const index = sys.floorGroupIndex_.get(floorGroupId);
  if (index === undefined)
    issues.push({ code: "unknownId", path: ["floorGroupId"], message: `Unknown floor group id "${floorGroupId}".` });
  if (issues.length > 0) throw new QueryError(issues);
  const fg = sys.snapshot.floorGroups[index!]!;
  const reader = sys.deviceIndex_.get(fg.readerPort)!;
  const k = reader.floorGroups_.indexOf(fg.id);
  let holders: AccessEntry[];
  if (!reader.wide_) {
    const order = holderOrder(sys);
    const s = scratchFor(sys, reader.slotGroup_.length, order.byId_.length);
    const n = markAllowed(sys, reader, at, k, s, order);
    holders = entries(sys, s, order, n, () => fg.floors);
  } else {
    const outcome = newRuleOutcome();
    holders = [];
    for (const h of candidates(sys, reader)) {
      const holder = sys.holders_[h]!;
      const access = scanAccess(sys, reader, h, at, outcome);
      if (!access.allowed || !reachesFloorGroup(reader, outcome, k)) continue;
      const rank = minRankReaching(sys, reader, h, access.factor, access.local, k);
      if (rank === NONE) continue;
      holders.push({ holderId: holder.id, activeRuleId: sys.rules_[rank]!.id, floors: fg.floors });
    }
    holders.sort(byHolderId);
  }
  return { date: isoInstant(at), deviceId: null, floorGroupId: fg.id, holders };
}
