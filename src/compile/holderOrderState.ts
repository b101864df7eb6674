// The state of the holder order (a query index: holders in id order and per-group member records,
// see holderOrder.ts) and the notes the holder builder leaves in it on each change. Apart from the
// compiled layout so that the layout, the holder builder and the order's own build share it without
// an import cycle.

/**
 * Float64 slots per member record in `members_[g]`: the holder's position in id order times two,
 * plus one when it has a PIN or duress PIN; its activeFrom and expiresAt (local epoch ms, ±Infinity when unbounded), and its other groups: NO_OTHER
 * when it has none, the other group's index when it has one more, else `-2 - offset` with the count
 * and the group indexes at `extra_[offset …]`.
 */
export const M_STRIDE = 4;
export const M_POSITION = 0;
export const M_FROM = 1;
export const M_TO = 2;
export const M_OTHER = 3;
export const NO_OTHER = -1;

export interface HolderOrder {
  /** False until first use (and after a change too large to splice): the next use sorts every holder. */
  built_: boolean;
  /** Live holder indexes in id order, and their ids side by side (`ids_[p]` is the id of `byId_[p]`). */
  byId_: Int32Array;
  ids_: string[];
  /** Holder indexes added since the order was built (may repeat, may have been removed again). */
  added_: number[];
  /** Holders removed since the order was built. */
  removed_: number;
  /** A holder was added, changed or removed since `members_` was built. */
  stale_: boolean;
  /** Per group index: its enabled members' records (M_STRIDE), by ascending position; undefined for a group newer than the build. */
  members_: Float64Array[];
  /** Group lists of holders with three or more groups: count, then the group indexes (`extraEnd_` used). */
  extra_: Int32Array;
  extraEnd_: number;
  /** Per holder index: its position in `byId_` (meaningful for live holders once built). */
  position_: Int32Array;
  /** Holder indexes written (changed) since `members_` was built or patched. */
  changed_: number[];
  /** The groups each position has records in: `recordGroups_[recordFrom_[p] … recordFrom_[p + 1] - 1]`, or `regrouped_` once patched. */
  recordGroups_: Int32Array;
  recordFrom_: Int32Array;
  regrouped_: Map<number, Int32Array>;
}

export function newHolderOrder(): HolderOrder {
  const none = new Int32Array(0);
  return {
    built_: false,
    byId_: none,
    ids_: [],
    added_: [],
    removed_: 0,
    stale_: true,
    members_: [],
    extra_: none,
    extraEnd_: 0,
    position_: none,
    changed_: [],
    recordGroups_: none,
    recordFrom_: none,
    regrouped_: new Map(),
  };
}

/** addHolder's note: index `i` now holds a new holder. */
export function noteHolderAdded(order: HolderOrder, i: number): void {
  if (order.built_) {
    order.added_.push(i);
    // Past an eighth of the holders the next use sorts them all again: nothing more to remember.
    if (order.added_.length > (order.byId_.length >> 3) + 1) {
      order.built_ = false;
      order.added_ = [];
      order.removed_ = 0;
      order.changed_ = [];
    }
  }
  order.stale_ = true;
}

/** removeHolder's note: a holder left (its index is free, or will be reused through addHolder). */
export function noteHolderRemoved(order: HolderOrder): void {
  if (order.built_) order.removed_++;
  order.stale_ = true;
}

/** writeHolder's note: holder `i`'s record (groups, dates, enabled, PINs) was written. */
export function noteHolderWritten(order: HolderOrder, i: number): void {
  // Beyond what patchMembers would take, the next use rebuilds the records: the list stops growing.
  if (order.built_ && order.changed_.length <= patchLimit(order)) order.changed_.push(i);
  order.stale_ = true;
}

/** At most this many changed holders are patched (about 25 µs each at L, against 30 ms for a rebuild). @internal */
export function patchLimit(order: HolderOrder): number {
  return Math.max(64, order.byId_.length >> 7);
}
