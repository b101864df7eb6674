// Holders in id order, for queries that list holders sorted by id (who can access): each holder
// index gets its position in id order, so that a query marks positions in a bitmap and reads them
// back in order instead of sorting strings. Built on first use, not at compile time (a fresh engine
// pays nothing until it is asked); the incremental path only notes which holder indexes were added
// or removed (addHolder, removeHolder), and the next use splices those in.
import type { CompiledSystem } from "./compileSnapshot.js";

export interface HolderOrder {
  /** False until first use (and after a change too large to splice): the next use sorts every holder. */
  built_: boolean;
  /** Live holder indexes in id order, and their ids side by side (`ids_[p]` is the id of `byId_[p]`). */
  byId_: Int32Array;
  ids_: string[];
  /** Per holder index: its position in `byId_` (meaningful only for live holders once built). */
  position_: Int32Array;
  /** Holder indexes added since the last build (may repeat, may have been removed again). */
  added_: number[];
  /** Holders removed since the last build. */
  removed_: number;
}

export function newHolderOrder(): HolderOrder {
  return { built_: false, byId_: new Int32Array(0), ids_: [], position_: new Int32Array(0), added_: [], removed_: 0 };
}

/** addHolder's note: index `i` now holds a new holder. */
export function noteHolderAdded(order: HolderOrder, i: number): void {
  if (order.built_) order.added_.push(i);
}

/** removeHolder's note: a holder left (its index is free, or will be reused through addHolder). */
export function noteHolderRemoved(order: HolderOrder): void {
  if (order.built_) order.removed_++;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The system's holder order, brought up to date with every holder change since its last use. */
export function holderOrder(sys: CompiledSystem): HolderOrder {
  const order = sys.holderOrder_;
  if (order.built_ && order.added_.length === 0 && order.removed_ === 0) return order;
  const live = sys.holderIndex_.size;
  if (!order.built_ || order.added_.length * 8 > live) buildAll(sys, order);
  else splice(sys, order);
  return order;
}

function finish(sys: CompiledSystem, order: HolderOrder, byId: Int32Array, ids: string[]): void {
  const capacity = sys.holders_.length;
  const position = order.position_.length >= capacity ? order.position_ : new Int32Array(Math.max(capacity, order.position_.length * 2));
  for (let p = 0; p < byId.length; p++) position[byId[p]!] = p;
  order.byId_ = byId;
  order.ids_ = ids;
  order.position_ = position;
  order.added_ = [];
  order.removed_ = 0;
  order.built_ = true;
}

function buildAll(sys: CompiledSystem, order: HolderOrder): void {
  const ids: string[] = [];
  for (const h of sys.holderIndex_.values()) ids.push(h.id);
  // Strings sort by UTF-16 code units without a comparator, as compareIds does, and faster.
  ids.sort();
  const byId = new Int32Array(ids.length);
  for (let p = 0; p < ids.length; p++) byId[p] = sys.holderIndex_.get(ids[p]!)!.index_;
  finish(sys, order, byId, ids);
}

/** Drops removed and re-used indexes from the order and inserts the added holders (binary search each). */
function splice(sys: CompiledSystem, order: HolderOrder): void {
  const holders = sys.holders_;
  const added = new Set<number>();
  for (const i of order.added_) if (sys.holderIndex_.get(holders[i]!.id) === holders[i]) added.add(i);
  const keptIdx: number[] = [];
  const keptIds: string[] = [];
  const old = order.byId_;
  for (let p = 0; p < old.length; p++) {
    const i = old[p]!;
    // Still the same holder at this index: it was neither removed nor its index reused.
    if (!added.has(i) && holders[i] !== undefined && holders[i]!.id === order.ids_[p] && sys.holderIndex_.get(order.ids_[p]!) === holders[i]) {
      keptIdx.push(i);
      keptIds.push(order.ids_[p]!);
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
    byId[at] = sys.holderIndex_.get(id)!.index_;
    ids[at++] = id;
  }
  for (; from < keptIds.length; from++, at++) {
    byId[at] = keptIdx[from]!;
    ids[at] = keptIds[from]!;
  }
  finish(sys, order, byId, ids);
}
