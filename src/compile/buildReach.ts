// The reach segment: which enabled rules reach each device (`rulesHere_`), and each device's run of
// slots built from them (CompiledDevice.slotGroup_), rebuilt on its own when a rule reaching the
// device changes.
import {
  type CompiledDevice,
  type CompiledRule,
  type CompiledSystem,
  EMPTY_DEVICE_RUN,
  EMPTY_RUN,
  EMPTY_SLOT_PAIRS,
  NO_WIDE_SETS,
} from "./compiledSystem.js";

/**
 * Adds (or, with `remove`, takes away) an enabled rule at the devices it reaches, collecting those
 * devices in `dirty` (whose runs then need rebuildDeviceRun). A disabled rule reaches nothing.
 */
export function linkRule(
  sys: CompiledSystem,
  rule: CompiledRule,
  dirty: Set<CompiledDevice> | null,
  remove = false,
): void {
  const r = rule.rule_;
  if (!r.enabled) return;
  if (r.action === "unlock") {
    // An unlock rule reaches no run: it grants no access (docs/semantics.md UF1); doorState reads it.
    for (const id of new Set(r.devices)) {
      const device = sys.deviceIndex_.get(id)!;
      if (remove) removeItem(device.unlockHere_, rule);
      else device.unlockHere_.push(rule);
    }
    return;
  }
  const reached: CompiledDevice[] = [];
  for (const d of r.devices) reached.push(sys.deviceIndex_.get(d)!);
  for (const fg of r.floorGroups) reached.push(sys.devices_[sys.floorGroupAt_.get(fg)!.reader]!);
  for (let j = 0; j < reached.length; j++) {
    const device = reached[j]!;
    if (reached.indexOf(device) !== j) continue; // named twice (several floor groups at one reader)
    if (remove) removeItem(device.rulesHere_, rule);
    else device.rulesHere_.push(rule);
    dirty?.add(device);
  }
}

/** Removes one `item` from an unordered list, moving the last element into its place. */
export function removeItem<T>(list: T[], item: T): void {
  const j = list.indexOf(item);
  if (j < 0) return;
  const last = list.pop()!;
  if (j < list.length) list[j] = last;
}

/** Rebuilds one device's run of slots from the enabled rules reaching it. */
export function rebuildDeviceRun(sys: CompiledSystem, device: CompiledDevice): void {
  if (device.rulesHere_.length === 0) {
    device.slotGroup_ = EMPTY_RUN;
    device.slotPairs_ = EMPTY_SLOT_PAIRS;
    device.pairs_ = EMPTY_RUN;
    device.slotOf_ = null;
    device.run_ = EMPTY_DEVICE_RUN;
    device.runDense_ = 0;
    device.runSlots_ = 0;
    device.wideSets_ = NO_WIDE_SETS;
    return;
  }
  // One entry per rule (a rule has one group), keyed group * RANK_SPAN + rank: sorting the keys
  // orders the run by group, then rank.
  const keys = new Float64Array(device.rulesHere_.length);
  const withFloors = device.floorGroups_.length > 0;
  const byRank = withFloors ? new Map<number, CompiledRule>() : null;
  let n = 0;
  for (const rule of device.rulesHere_) {
    keys[n++] = rule.group_ * RANK_SPAN + rule.rank_;
    byRank?.set(rule.rank_, rule);
  }
  keys.sort();
  const wide = device.wide_;
  let slots = 0;
  for (let i = 0; i < n; i++)
    if (i === 0 || Math.floor(keys[i]! / RANK_SPAN) !== Math.floor(keys[i - 1]! / RANK_SPAN)) slots++;
  const slotGroup = new Int32Array(slots);
  const slotPairs = new Int32Array(slots + 1);
  const pairs = new Int32Array(n * 2);
  const wideSets: Int32Array[] = [];
  let slot = -1;
  for (let i = 0; i < n; i++) {
    const group = Math.floor(keys[i]! / RANK_SPAN);
    const rank = keys[i]! - group * RANK_SPAN;
    if (slot < 0 || slotGroup[slot] !== group) {
      slotGroup[++slot] = group;
      slotPairs[slot] = i * 2;
    }
    pairs[i * 2] = rank;
    // The rule's floor groups at this reader: a mask of local indexes k, or (wide) their list.
    let mask = 0;
    const ks: number[] = [];
    if (byRank !== null)
      for (const fg of byRank.get(rank)!.rule_.floorGroups) {
        const at = sys.floorGroupAt_.get(fg)!;
        if (at.reader !== device.index_) continue;
        if (wide) ks.push(at.k);
        else mask |= 1 << at.k;
      }
    if (wide) {
      pairs[i * 2 + 1] = wideSets.length;
      wideSets.push(Int32Array.from(new Set(ks)).sort());
    } else pairs[i * 2 + 1] = mask;
  }
  slotPairs[slots] = n * 2;
  const dense = denseSlots(slotGroup);
  const d = dense === null ? 0 : dense.length;
  const run = new Int32Array(d + 2 * slots + 1 + 2 * n);
  if (dense !== null) run.set(dense, 0);
  run.set(slotGroup, d);
  run.set(slotPairs, d + slots);
  run.set(pairs, d + 2 * slots + 1);
  device.run_ = run;
  device.runDense_ = d;
  device.runSlots_ = slots;
  device.slotOf_ = dense === null ? null : run.subarray(0, d);
  device.slotGroup_ = run.subarray(d, d + slots);
  device.slotPairs_ = run.subarray(d + slots, d + 2 * slots + 1);
  device.pairs_ = run.subarray(d + 2 * slots + 1);
  device.wideSets_ = wide ? wideSets : NO_WIDE_SETS;
}

/**
 * A device's table of slots by group index (CompiledDevice.slotOf_) holds at most this many entries
 * per slot: at most 4× the run's `slotGroup_`, so a device whose groups are few among many (most
 * devices of a large site) keeps the binary search.
 */
const DENSE_SLOTS = 4;

/** The dense table of a run's slots by group (`slotGroup` ascending, not empty), or null when too sparse. @internal */
export function denseSlots(slotGroup: Int32Array): Int32Array | null {
  const size = slotGroup[slotGroup.length - 1]! + 1;
  if (size > DENSE_SLOTS * slotGroup.length) return null;
  const table = new Int32Array(size).fill(-1);
  for (let s = 0; s < slotGroup.length; s++) table[slotGroup[s]!] = s;
  return table;
}

/** Sort keys of a device run: group * RANK_SPAN + rank (exact in a double for any realistic count). */
const RANK_SPAN = 1 << 22;
