// The compiled layout: what compileSnapshot builds and the evaluate layer reads, segment by segment
// (static parts, rules, per-device runs, holders, credentials, the holder order), with the accessors
// that read it. The builders live one per segment (buildNodes, buildRules, buildReach, buildHolders,
// buildCredentials, holderOrder); this file imports none of them.
import type { CardNumber, Group, Holder, InputType, Rule, SystemSnapshot } from "../model/index.js";
import type { CompiledFormat } from "./compileCardFormat.js";
import type { HolderOrder } from "./holderOrderState.js";
import type { ZoneTable } from "./zoneTable.js";

export const INPUT_BIT: Readonly<Record<InputType, number>> = { wiegand: 1, unencryptedOsdp: 2, encryptedOsdp: 4 };
export const CREDENTIAL_BIT = { card: 1, touch: 2, token: 4 } as const;
/** Marks a PIN shared by two or more holders in `pinOwner_`. */
export const AMBIGUOUS = -2;

export interface CompiledNode {
  readonly id: string;
  readonly index_: number;
  readonly zone_: ZoneTable;
  readonly formats_: readonly CompiledFormat[];
  /** E-card numbers in their one spelling (a wide one is its decimal string, CN1). */
  readonly ecards_: ReadonlySet<CardNumber>;
  readonly offlinePolicy_: 0 | 1 | 2;
  readonly killTimer_: number;
  /**
   * The node's threat level (docs/semantics.md TL1; 0 normal): changed in place by updateCompiled,
   * since a lockdown must reach the doors without a full compile.
   */
  threatLevel_: number;
  /** The set of this node's id alone: what most rules reach (nodesOfRule_ shares it). */
  readonly alone_: ReadonlySet<string>;
}

/** One rule; the object stays the same while its id exists (rank and snapshot object follow changes). */
export interface CompiledRule {
  readonly id: string;
  /** Position in id order: the smallest id has rank 0. */
  rank_: number;
  /** The rule in the current snapshot. */
  rule_: Rule;
  /** Its group's (stable) index. */
  group_: number;
}

export interface CompiledDevice {
  readonly id: string;
  /** Position in `snapshot.devices` (device changes recompile everything, so it is stable). */
  readonly index_: number;
  readonly node_: CompiledNode;
  readonly inputMask_: number;
  readonly policy_: number;
  readonly ble_: boolean;
  readonly secured_: boolean;
  readonly elevator_: boolean;
  /**
   * This device's run of slots, one per group with enabled rules reaching it, by ascending group
   * index: slot s has group `slotGroup_[s]` and the pairs `[rank, floorRef]` at
   * `pairs_[slotPairs_[s] … slotPairs_[s + 1] - 1]`, by ascending rank. At an elevator reader with at
   * most 31 floor groups `floorRef` is a mask with bit k for `floorGroups_[k]`; with more (`wide_`),
   * an index into `wideSets_`. Rebuilt on its own (rebuildDeviceRun) when a rule reaching it changes.
   */
  slotGroup_: Int32Array;
  slotPairs_: Int32Array;
  pairs_: Int32Array;
  /**
   * The run's slots by group index, where that is dense enough (the device's largest group index is
   * below DENSE_SLOTS times its slot count): `slotOf_[g]` is the slot of group g or -1, and groups
   * beyond its end have none. null: findSlot searches `slotGroup_`. Rebuilt with the run.
   */
  slotOf_: Int32Array | null;
  /**
   * The same run in one array, what decide's rule walk reads (one array header and neighbouring
   * cache lines, where the four arrays above are four of each): `slotOf_` (its `runDense_`
   * entries; none when null), then `slotGroup_` (`runSlots_` entries), `slotPairs_` and `pairs_`.
   * Those four are views of it, so that a change made through them (rank renumbering) is its too.
   */
  run_: Int32Array;
  runDense_: number;
  runSlots_: number;
  /** More than 31 floor groups at this elevator reader: floor refs index `wideSets_`, not a mask. */
  readonly wide_: boolean;
  wideSets_: readonly Int32Array[];
  /** Elevator readers: the floor groups whose readerPort is this device, and their floors. */
  readonly floorGroups_: readonly string[];
  readonly floorsOf_: readonly (readonly string[])[];
  /** Interned `floors` arrays by floor-group mask, filled on first use (see floorsFor). */
  readonly floorCache_: Map<number, readonly string[]>;
  /** What an e-card enables here: every floor of every floor group at this reader, sorted; [] at doors. */
  readonly ecardFloors_: readonly string[];
  /** The enabled rules naming this device or one of its floor groups, once each, unordered (what its run is built from). */
  readonly rulesHere_: CompiledRule[];
  /** The enabled unlock rules naming this device (docs/semantics.md UF1), unordered: no scan reads them, doorState does. */
  readonly unlockHere_: CompiledRule[];
  /** Whether the device waits for its first allowed scan before an unlock rule opens it (UF2). */
  readonly autoOpen_: boolean;
  /** The areas this device leads into and out of, in id order (docs/semantics.md AB1); empty mostly. */
  entryOf_: readonly CompiledArea[];
  exitOf_: readonly CompiledArea[];
}

/** An area as decide reads it (docs/semantics.md AB2–AB3). */
export interface CompiledArea {
  readonly id: string;
  /** AP_NONE, AP_HARD or AP_SOFT. */
  readonly antiPassback_: number;
  /** resetSeconds × 1000; 0: never resets by time. */
  readonly resetMs_: number;
  /** The occupancy limit; -1: none. */
  readonly limit_: number;
}
export const AP_NONE = 0;
export const AP_HARD = 1;
export const AP_SOFT = 2;
export const NO_AREAS: readonly CompiledArea[] = Object.freeze([]);

/** A mobile credential (cards live in the system's `cardTable_`). */
export interface CompiledCredential {
  readonly id: string;
  /** Index into `holders_`. */
  readonly holder_: number;
  readonly pending_: boolean;
  readonly types_: number;
}

/**
 * Float64 slots per holder in `holderData_`, what decide reads of a holder in one 32-byte record:
 * `groupTo * 2 + enabled`, activeFrom, expiresAt, groupFrom. A holder has no compiled object of its
 * own: `holders_[i]` is its snapshot record, these slots are the rest (see holderGroupFrom and the
 * functions after it).
 */
export const HOLDER_STRIDE = 4;
export const H_GROUP_TO_ENABLED = 0;
export const H_FROM = 1;
export const H_TO = 2;
export const H_GROUP_FROM = 3;

/**
 * A card whose number is past 2^53−1 (CN4): kept apart from `cardTable_`, keyed by the number's
 * decimal string in `wideCards_`, so that the numeric table and its probe stay as they are.
 */
export interface WideCard {
  /** Facility code, -1 for null. */
  readonly fc_: number;
  /** Index into `holders_`. */
  readonly holder_: number;
  readonly id_: string;
  readonly holderId_: string;
}

/** Float64 slots per card in `cardTable_`: number (-1: never used, -2: deleted), facility code (-1: null), holder index, index into `cardIds_` (even). */
export const CARD_STRIDE = 4;
export const CARD_EMPTY = -1;
export const CARD_DELETED = -2;

/**
 * The compiled form of one system snapshot. Immutable to the evaluate layer; updateCompiled changes
 * it in place, segment by segment, to what compileSnapshot would build for the next snapshot.
 */
export interface CompiledSystem {
  snapshot: SystemSnapshot;
  /**
   * The cloud nodes, devices and floor groups compiled, by id: what a keyed patch replaces is
   * compared with them to tell a display field's change (nothing to recompile) from another.
   */
  readonly statics_: {
    readonly cloudNodes: Map<string, object>;
    readonly devices: Map<string, object>;
    readonly floorGroups: Map<string, object>;
    readonly areas: Map<string, object>;
  };
  readonly nodes_: readonly CompiledNode[];
  readonly nodeIndex_: ReadonlyMap<string, CompiledNode>;
  readonly devices_: readonly CompiledDevice[];
  readonly deviceIndex_: ReadonlyMap<string, CompiledDevice>;
  /**
   * The holder at each stable index (into holderData_, cardTable_, holdersOfGroup_; reused after a
   * delete): its record in the current snapshot, null while the index is free.
   */
  readonly holders_: (Holder | null)[];
  /** Holder id → stable index. */
  readonly holderIndex_: Map<string, number>;
  readonly freeHolders_: number[];
  /** Per holder index: the fields decide reads of it (HOLDER_STRIDE). Grows by doubling. */
  holderData_: Float64Array;
  /** Holders' group indexes, each holder's back to back (holderGroupFrom); `holderGroupsEnd_` used, `holderGroupsGarbage_` of it dead. */
  holderGroups_: Int32Array;
  holderGroupsEnd_: number;
  holderGroupsGarbage_: number;
  /** Group id → stable group index; `groups_` the group objects by index (null: free). */
  readonly groupIndex_: Map<string, number>;
  readonly groups_: (Group | null)[];
  readonly freeGroups_: number[];
  /** Rules in rank (id) order. */
  rules_: CompiledRule[];
  readonly ruleIndex_: Map<string, CompiledRule>;
  /** Per rank: the rule's id. */
  ruleIds_: string[];
  /** RULE_STRIDE int32 per rank: flags, policy mask and window (compileWindowInto). */
  ruleData_: Int32Array;
  /** The calendars' days (compileCalendars), and each calendar's offset in it by id; rebuilt by a full compile. */
  readonly calendarData_: Int32Array;
  readonly calendarAt_: ReadonlyMap<string, number>;
  /** Open-addressing table of card credentials by number, CARD_STRIDE slots each (findCard). */
  cardTable_: Float64Array;
  cardMask_: number;
  /** Cards in the table, and slots used (cards and deleted marks): the table is rebuilt when half full. */
  cardLive_: number;
  cardUsed_: number;
  /** Per card, side by side so that one cache line serves both: its credential id, then its holder's id. */
  cardIds_: string[];
  /** Cards numbered past 2^53−1, by the number's decimal string (CN4). */
  readonly wideCards_: Map<string, WideCard>;
  readonly digitalById_: Map<string, CompiledCredential>;
  /** PIN → holder index, or AMBIGUOUS; `pinShared_` the holders of each ambiguous PIN. */
  readonly pinOwner_: Map<string, number>;
  readonly pinShared_: Map<string, Set<number>>;
  /** The system time zone (system-wide RSOP evaluates `active` there). */
  readonly systemZone_: ZoneTable;
  /** Per group index: ranks of its enabled rules, ascending. */
  readonly rulesOfGroup_: Int32Array[];
  /** Per group index: indexes of its holders, unordered (a removal moves the last into the gap). */
  readonly holdersOfGroup_: number[][];
  /** Per rule rank: its door devices (device indexes, as listed; small arrays of small integers, not typed arrays, which cost 180 B each). */
  ruleDevices_: (readonly number[])[];
  /** Per device index: its position in device id order, and the devices in that order (RSOP lists devices by id). */
  readonly deviceIdOrder_: Int32Array;
  readonly devicesById_: readonly CompiledDevice[];
  /** Per rule rank: the cloud nodes the rule reaches (through its devices or floor groups); a rule within one node shares the node's `alone_`. */
  nodesOfRule_: ReadonlySet<string>[];
  readonly floorGroupIndex_: ReadonlyMap<string, number>;
  /** Floor group id → its reader's device index and its local index k there. */
  readonly floorGroupAt_: ReadonlyMap<string, { readonly reader: number; readonly k: number }>;
  /** Holders in id order, built on first use (holderOrder); addHolder and removeHolder note changes. */
  readonly holderOrder_: HolderOrder;
}

/** Mixes a card number (a safe integer) into 32 bits. Integer operations only. */
export function cardHash(cn: number): number {
  const lo = cn >>> 0;
  const hi = (cn / 4294967296) >>> 0;
  const h = Math.imul(lo ^ Math.imul(hi, 0x27d4eb2d), 0x9e3779b1);
  return h ^ (h >>> 16);
}

/** The base index in `cardTable_` of the card credential numbered `cn`, or -1. Deleted slots are stepped over. */
export function findCard(sys: CompiledSystem, cn: number): number {
  const table = sys.cardTable_;
  const mask = sys.cardMask_;
  let s = cardHash(cn) & mask;
  for (;;) {
    const base = s * CARD_STRIDE;
    const key = table[base]!;
    if (key === cn) return base;
    if (key === CARD_EMPTY) return -1;
    s = (s + 1) & mask;
  }
}

/**
 * The slot of `group` in `device`'s run (see CompiledDevice.slotGroup_), or -1: one load where the run
 * has a dense table (`slotOf_`), else a binary search.
 */
export function findSlot(device: CompiledDevice, group: number): number {
  const direct = device.slotOf_;
  if (direct !== null) return group < direct.length ? direct[group]! : -1;
  const slotGroup = device.slotGroup_;
  let lo = 0;
  let hi = slotGroup.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const g = slotGroup[mid]!;
    if (g === group) return mid;
    if (g < group) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The run of a device no enabled rule reaches (see CompiledDevice.slotGroup_). */
export const EMPTY_RUN = new Int32Array(0);
export const EMPTY_SLOT_PAIRS = new Int32Array(1);
/** run_ of a device no enabled rule reaches: no dense table, no slot, slotPairs_ [0]. */
export const EMPTY_DEVICE_RUN = new Int32Array(1);
export const NO_WIDE_SETS: readonly Int32Array[] = Object.freeze([]);

/** Holder `i`'s group indexes are `holderGroups_[holderGroupFrom(sys, i) … holderGroupTo(sys, i) - 1]`. */
export function holderGroupFrom(sys: CompiledSystem, i: number): number {
  return sys.holderData_[i * HOLDER_STRIDE + H_GROUP_FROM]!;
}

/** The end of holder `i`'s group indexes (see holderGroupFrom). */
export function holderGroupTo(sys: CompiledSystem, i: number): number {
  return Math.floor(sys.holderData_[i * HOLDER_STRIDE + H_GROUP_TO_ENABLED]! / 2);
}

/** Holder `i`'s activeDate as local epoch ms (parseLocalDateTime); -Infinity when unbounded. */
export function holderActiveFrom(sys: CompiledSystem, i: number): number {
  return sys.holderData_[i * HOLDER_STRIDE + H_FROM]!;
}

/** Holder `i`'s expireDate as local epoch ms; Infinity when unbounded. */
export function holderExpiresAt(sys: CompiledSystem, i: number): number {
  return sys.holderData_[i * HOLDER_STRIDE + H_TO]!;
}

/**
 * The sorted floors of the floor groups in `mask` at an elevator reader (at most 31 floor groups),
 * interned per mask so that repeated decisions share one frozen array and allocate nothing.
 */
export function floorsFor(device: CompiledDevice, mask: number): readonly string[] {
  const hit = device.floorCache_.get(mask);
  if (hit !== undefined) return hit;
  const ks: number[] = [];
  for (let k = 0; k < device.floorsOf_.length; k++) if ((mask >> k) & 1) ks.push(k);
  const out = unionFloors(device, ks);
  device.floorCache_.set(mask, out);
  return out;
}

/** The sorted, de-duplicated floors of the floor groups `ks` (local indexes) at a reader. */
export function unionFloors(device: CompiledDevice, ks: Iterable<number>): readonly string[] {
  const set = new Set<string>();
  for (const k of ks) for (const f of device.floorsOf_[k]!) set.add(f);
  return Object.freeze([...set].sort());
}
