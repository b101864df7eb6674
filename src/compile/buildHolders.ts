// The holders segment: each holder at a stable index (a free list reuses deleted ones), its hot
// fields in `holderData_`, its group indexes in `holderGroups_`, its place in `holdersOfGroup_`, and
// its credentials and PINs (buildCredentials.ts). Each change is noted for the holder order.
import { type Holder, parseLocalDateTime } from "../model/index.js";
import { addCredentials, addPins, removeCredentials, removePins } from "./buildCredentials.js";
import { removeItem } from "./buildReach.js";
import {
  type CompiledSystem,
  HOLDER_STRIDE,
  H_FROM,
  H_GROUP_FROM,
  H_GROUP_TO_ENABLED,
  H_TO,
  holderGroupFrom,
  holderGroupTo,
} from "./compiledSystem.js";
import { noteHolderAdded, noteHolderRemoved, noteHolderWritten } from "./holderOrderState.js";

/** Room for `n` more ints at the end of `holderGroups_`: compacts when half is dead, else grows. */
function reserveHolderGroups(sys: CompiledSystem, n: number): void {
  if (sys.holderGroupsEnd_ + n <= sys.holderGroups_.length) return;
  const live = sys.holderGroupsEnd_ - sys.holderGroupsGarbage_;
  let size = sys.holderGroups_.length;
  while (size < (live + n) * 2) size *= 2;
  const next = new Int32Array(size);
  let at = 0;
  const data = sys.holderData_;
  const holders = sys.holders_;
  for (let i = 0; i < holders.length; i++) {
    const h = holders[i]!;
    if (h === null) continue;
    const from = at;
    const base = i * HOLDER_STRIDE;
    const was = holderGroupFrom(sys, i);
    const count = holderGroupTo(sys, i) - was;
    next.set(sys.holderGroups_.subarray(was, was + count), at);
    at += count;
    data[base + H_GROUP_TO_ENABLED] = at * 2 + (h.enabled ? 1 : 0);
    data[base + H_GROUP_FROM] = from;
  }
  sys.holderGroups_ = next;
  sys.holderGroupsEnd_ = at;
  sys.holderGroupsGarbage_ = 0;
}

/**
 * Writes holder `h`'s record at index `i` (groups already at `from … to - 1` of holderGroups_);
 * `was`, its previous record, lends the parsed dates when they did not change.
 */
function writeHolder(
  sys: CompiledSystem,
  h: Holder,
  i: number,
  from: number,
  to: number,
  was: Holder | null = null,
): void {
  const data = sys.holderData_;
  const base = i * HOLDER_STRIDE;
  const activeFrom =
    was !== null && was.activeDate === h.activeDate
      ? data[base + H_FROM]!
      : h.activeDate === null
        ? -Infinity
        : parseLocalDateTime(h.activeDate);
  const expiresAt =
    was !== null && was.expireDate === h.expireDate
      ? data[base + H_TO]!
      : h.expireDate === null
        ? Infinity
        : parseLocalDateTime(h.expireDate);
  sys.holders_[i] = h;
  sys.holderIndex_.set(h.id, i);
  noteHolderWritten(sys.holderOrder_, i);
  data[base + H_GROUP_TO_ENABLED] = to * 2 + (h.enabled ? 1 : 0);
  data[base + H_FROM] = activeFrom;
  data[base + H_TO] = expiresAt;
  data[base + H_GROUP_FROM] = from;
}

/** Appends holder `i`'s group indexes to holderGroups_; returns where they start. */
function appendGroups(sys: CompiledSystem, h: Holder): number {
  reserveHolderGroups(sys, h.groups.length);
  const from = sys.holderGroupsEnd_;
  const hg = sys.holderGroups_;
  for (const g of h.groups) hg[sys.holderGroupsEnd_++] = sys.groupIndex_.get(g)!;
  return from;
}

/** Compiles a new holder of the current snapshot into its records at a free index; returns the index. */
export function addHolder(sys: CompiledSystem, h: Holder): number {
  const i = sys.freeHolders_.length > 0 ? sys.freeHolders_.pop()! : sys.holders_.length;
  if (i === sys.holders_.length) sys.holders_.push(null);
  if ((i + 1) * HOLDER_STRIDE > sys.holderData_.length) {
    const grown = new Float64Array(Math.max(sys.holderData_.length * 2, (i + 1) * HOLDER_STRIDE));
    grown.set(sys.holderData_);
    sys.holderData_ = grown;
  }
  const from = appendGroups(sys, h);
  for (let gi = from; gi < sys.holderGroupsEnd_; gi++) sys.holdersOfGroup_[sys.holderGroups_[gi]!]!.push(i);
  writeHolder(sys, h, i, from, sys.holderGroupsEnd_);
  addCredentials(sys, i, h.id, h.credentials);
  addPins(sys, h, i);
  noteHolderAdded(sys.holderOrder_, i);
  return i;
}

/** Takes the deleted holder at index `i` out of every table and frees its index. */
export function removeHolder(sys: CompiledSystem, i: number): void {
  const h = sys.holders_[i]!;
  const from = holderGroupFrom(sys, i);
  const to = holderGroupTo(sys, i);
  for (let gi = from; gi < to; gi++) removeItem(sys.holdersOfGroup_[sys.holderGroups_[gi]!]!, i);
  sys.holderGroupsGarbage_ += to - from;
  removeCredentials(sys, i, h.credentials);
  removePins(sys, h, i);
  sys.holderIndex_.delete(h.id);
  sys.holders_[i] = null;
  const data = sys.holderData_;
  const base = i * HOLDER_STRIDE;
  data[base + H_GROUP_TO_ENABLED] = 0;
  data[base + H_GROUP_FROM] = 0;
  sys.freeHolders_.push(i);
  noteHolderRemoved(sys.holderOrder_);
}

/**
 * A holder that changed, first half (before any holder is added): takes out its credentials and
 * PINs that `next` no longer has (credentials are compared by object: immer shares unchanged ones),
 * so that a card number or PIN passing to another holder in the same change is free for it.
 */
export function changeHolderBegin(sys: CompiledSystem, i: number, next: Holder): void {
  const h = sys.holders_[i]!;
  if (h.credentials !== next.credentials) {
    const kept = new Set(next.credentials);
    removeCredentials(
      sys,
      i,
      h.credentials.filter((c) => !kept.has(c)),
    );
  }
  if (h.pin !== next.pin || h.duressPin !== next.duressPin) removePins(sys, h, i);
}

/** A holder that changed, second half (after group changes): its groups, record, new credentials and PINs. */
export function changeHolderEnd(sys: CompiledSystem, i: number, next: Holder): void {
  const h = sys.holders_[i]!;
  let from = holderGroupFrom(sys, i);
  let to = holderGroupTo(sys, i);
  if (h.groups !== next.groups) {
    const old = sys.holderGroups_.slice(from, to);
    sys.holderGroupsGarbage_ += to - from;
    from = appendGroups(sys, next);
    to = sys.holderGroupsEnd_;
    const now = sys.holderGroups_.subarray(from, to);
    // A deleted group's list goes with it (its index is not reused within this change).
    for (const g of old) if (sys.groups_[g] !== null && !now.includes(g)) removeItem(sys.holdersOfGroup_[g]!, i);
    for (const g of now) if (!old.includes(g)) sys.holdersOfGroup_[g]!.push(i);
  }
  writeHolder(sys, next, i, from, to, h);
  if (h.credentials !== next.credentials) {
    const had = new Set(h.credentials);
    addCredentials(
      sys,
      i,
      next.id,
      next.credentials.filter((c) => !had.has(c)),
    );
  }
  if (h.pin !== next.pin || h.duressPin !== next.duressPin) addPins(sys, next, i);
}
