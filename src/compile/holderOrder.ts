// Holders in id order, for queries that list holders sorted by id (who can access): each holder
// gets its position in id order, so that a query collects positions and reads them back sorted
// instead of comparing strings; and, per group, one record per enabled member (position, dates, its
// other groups), so that a pass over the groups reaching a door reads memory in order instead of
// jumping to each holder's record. Built on first use, not at compile time (a fresh engine pays
// nothing until it is asked); the incremental path only notes what changed (addHolder, removeHolder,
// writeHolder), and the next use splices added holders into the order and rebuilds the member
// records (O(holders + memberships)) — or, when holders were only changed, a few of them, rewrites
// just their records.
import type { Holder } from "../model/index.js";
import {
  type CompiledSystem,
  holderActiveFrom,
  holderExpiresAt,
  holderGroupFrom,
  holderGroupTo,
} from "./compiledSystem.js";
import {
  type HolderOrder,
  M_FROM,
  M_OTHER,
  M_POSITION,
  M_STRIDE,
  M_TO,
  NO_OTHER,
  patchLimit,
} from "./holderOrderState.js";

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The system's holder order and member records, brought up to date with every holder change since their last use. */
export function holderOrder(sys: CompiledSystem): HolderOrder {
  const order = sys.holderOrder_;
  if (!order.stale_) return order;
  const onlyChanged = order.built_ && order.added_.length === 0 && order.removed_ === 0;
  if (onlyChanged && order.changed_.length <= patchLimit(order)) patchMembers(sys, order);
  else {
    if (!order.built_ || order.added_.length * 8 > sys.holderIndex_.size) buildAll(sys, order);
    else if (order.added_.length > 0 || order.removed_ > 0) splice(sys, order);
    buildMembers(sys, order);
  }
  order.changed_ = [];
  order.stale_ = false;
  return order;
}

/** The record fields of an enabled holder other than its other groups. */
function positionAndPin(h: Holder, p: number): number {
  return p * 2 + ((h.pin ?? h.duressPin) === null ? 0 : 1);
}

/** Rewrites the records of the holders changed since the last build (no holder added or removed). */
function patchMembers(sys: CompiledSystem, order: HolderOrder): void {
  const groups = sys.holderGroups_;
  for (const i of new Set(order.changed_)) {
    const h = sys.holders_[i]!;
    const p = order.position_[i]!;
    const had =
      order.regrouped_.get(p) ?? order.recordGroups_.subarray(order.recordFrom_[p]!, order.recordFrom_[p + 1]!);
    for (let j = 0; j < had.length; j++) removeRecord(order, had[j]!, p);
    const now = h.enabled ? groups.slice(holderGroupFrom(sys, i), holderGroupTo(sys, i)) : new Int32Array(0);
    order.regrouped_.set(p, now);
    let others = NO_OTHER;
    if (now.length > 2) {
      if (order.extraEnd_ + 1 + now.length > order.extra_.length) {
        const grown = new Int32Array(Math.max(64, (order.extraEnd_ + 1 + now.length) * 2));
        grown.set(order.extra_.subarray(0, order.extraEnd_));
        order.extra_ = grown;
      }
      others = -2 - order.extraEnd_;
      order.extra_[order.extraEnd_++] = now.length;
      order.extra_.set(now, order.extraEnd_);
      order.extraEnd_ += now.length;
    }
    for (let j = 0; j < now.length; j++) {
      const other = now.length === 2 ? now[1 - j]! : others;
      insertRecord(order, now[j]!, positionAndPin(h, p), holderActiveFrom(sys, i), holderExpiresAt(sys, i), other);
    }
  }
}

/** The index (in records) of the first record of `list` whose position is at least `p`. */
function recordAt(list: Float64Array, p: number): number {
  let lo = 0;
  let hi = list.length / M_STRIDE;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (Math.floor(list[mid * M_STRIDE + M_POSITION]! / 2) < p) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function removeRecord(order: HolderOrder, g: number, p: number): void {
  const list = order.members_[g];
  if (list === undefined) return;
  const r = recordAt(list, p);
  if (r * M_STRIDE >= list.length || Math.floor(list[r * M_STRIDE + M_POSITION]! / 2) !== p) return;
  const next = new Float64Array(list.length - M_STRIDE);
  next.set(list.subarray(0, r * M_STRIDE));
  next.set(list.subarray((r + 1) * M_STRIDE), r * M_STRIDE);
  order.members_[g] = next;
}

function insertRecord(order: HolderOrder, g: number, key: number, from: number, to: number, other: number): void {
  const list = order.members_[g] ?? new Float64Array(0);
  const r = recordAt(list, Math.floor(key / 2));
  const next = new Float64Array(list.length + M_STRIDE);
  next.set(list.subarray(0, r * M_STRIDE));
  next.set(list.subarray(r * M_STRIDE), (r + 1) * M_STRIDE);
  const base = r * M_STRIDE;
  next[base + M_POSITION] = key;
  next[base + M_FROM] = from;
  next[base + M_TO] = to;
  next[base + M_OTHER] = other;
  order.members_[g] = next;
}

/** Each group's member records, from the order and the holder records. */
function buildMembers(sys: CompiledSystem, order: HolderOrder): void {
  const byId = order.byId_;
  const n = byId.length;
  const groups = sys.holderGroups_;
  const counts = new Int32Array(sys.groups_.length);
  let extra = 0;
  for (let p = 0; p < n; p++) {
    const i = byId[p]!;
    if (!sys.holders_[i]!.enabled) continue;
    const from = holderGroupFrom(sys, i);
    const to = holderGroupTo(sys, i);
    if (to - from > 2) extra += 1 + to - from;
    for (let gi = from; gi < to; gi++) counts[groups[gi]!]!++;
  }
  const members: Float64Array[] = new Array(counts.length);
  let memberships = 0;
  for (let g = 0; g < counts.length; g++) {
    members[g] = new Float64Array(counts[g]! * M_STRIDE);
    memberships += counts[g]!;
  }
  const extraGroups = new Int32Array(extra);
  const recordGroups = new Int32Array(memberships);
  const recordFrom = new Int32Array(n + 1);
  let recorded = 0;
  counts.fill(0);
  extra = 0;
  // Positions ascending, so each list comes out sorted.
  for (let p = 0; p < n; p++) {
    const i = byId[p]!;
    const h = sys.holders_[i]!;
    recordFrom[p] = recorded;
    if (!h.enabled) continue;
    const from = holderGroupFrom(sys, i);
    const to = holderGroupTo(sys, i);
    const count = to - from;
    const activeFrom = holderActiveFrom(sys, i);
    const expiresAt = holderExpiresAt(sys, i);
    let others = NO_OTHER;
    if (count > 2) {
      others = -2 - extra;
      extraGroups[extra++] = count;
      for (let gi = from; gi < to; gi++) extraGroups[extra++] = groups[gi]!;
    }
    for (let gi = from; gi < to; gi++) {
      const g = groups[gi]!;
      const list = members[g]!;
      const base = counts[g]!++ * M_STRIDE;
      recordGroups[recorded++] = g;
      list[base + M_POSITION] = positionAndPin(h, p);
      list[base + M_FROM] = activeFrom;
      list[base + M_TO] = expiresAt;
      list[base + M_OTHER] = count === 2 ? groups[gi === from ? from + 1 : from]! : others;
    }
  }
  recordFrom[n] = recorded;
  order.members_ = members;
  order.extra_ = extraGroups;
  order.extraEnd_ = extra;
  order.recordGroups_ = recordGroups;
  order.recordFrom_ = recordFrom;
  order.regrouped_ = new Map();
}

function finish(sys: CompiledSystem, order: HolderOrder, byId: Int32Array, ids: string[]): void {
  const capacity = sys.holders_.length;
  if (order.position_.length < capacity)
    order.position_ = new Int32Array(Math.max(capacity, order.position_.length * 2));
  for (let p = 0; p < byId.length; p++) order.position_[byId[p]!] = p;
  order.byId_ = byId;
  order.ids_ = ids;
  order.added_ = [];
  order.removed_ = 0;
  order.built_ = true;
}

function buildAll(sys: CompiledSystem, order: HolderOrder): void {
  const ids: string[] = [];
  for (const id of sys.holderIndex_.keys()) ids.push(id);
  // Strings sort by UTF-16 code units without a comparator, as compareIds does, and faster.
  ids.sort();
  const byId = new Int32Array(ids.length);
  for (let p = 0; p < ids.length; p++) byId[p] = sys.holderIndex_.get(ids[p]!)!;
  finish(sys, order, byId, ids);
}

/** Drops removed and reused indexes from the order and inserts the added holders (a binary search each). */
function splice(sys: CompiledSystem, order: HolderOrder): void {
  const holders = sys.holders_;
  const added = new Set<number>();
  for (const i of order.added_) {
    const h = holders[i];
    if (h !== null && h !== undefined && sys.holderIndex_.get(h.id) === i) added.add(i);
  }
  const keptIdx: number[] = [];
  const keptIds: string[] = [];
  const old = order.byId_;
  for (let p = 0; p < old.length; p++) {
    const i = old[p]!;
    const id = order.ids_[p]!;
    // Still the same holder at this index: it was neither removed nor its index reused.
    const h = holders[i];
    if (!added.has(i) && h !== null && h !== undefined && h.id === id && sys.holderIndex_.get(id) === i) {
      keptIdx.push(i);
      keptIds.push(id);
    }
  }
  const adds = [...added].map((i) => holders[i]!.id).sort(compareIds);
  const n = keptIds.length + adds.length;
  const byId = new Int32Array(n);
  const ids: string[] = new Array(n);
  let from = 0;
  let at = 0;
  for (const id of adds) {
    let lo = from;
    let hi = keptIds.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keptIds[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    for (; from < lo; from++, at++) {
      byId[at] = keptIdx[from]!;
      ids[at] = keptIds[from]!;
    }
    byId[at] = sys.holderIndex_.get(id)!;
    ids[at++] = id;
  }
  for (; from < keptIds.length; from++, at++) {
    byId[at] = keptIdx[from]!;
    ids[at] = keptIds[from]!;
  }
  finish(sys, order, byId, ids);
}
