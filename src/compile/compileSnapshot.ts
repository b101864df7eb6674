// Compiles a validated snapshot into flat indexes for the evaluate layer, in segments that can be
// rebuilt on their own (see updateCompiled in updateCompiled.ts): static parts (cloud nodes, devices,
// floor groups), rules (ranks in id order, windows, the groups and devices they reach), per-device
// slot runs (which rules of which group reach the device), and holders (stable indexes with a free
// list, their hot fields in `holderData_`, an open-addressing card table with tombstones).
import {
  ELEVATOR_READER_TYPES,
  type Credential,
  type Group,
  type Holder,
  type InputType,
  parseLocalDateTime,
  type Rule,
  type SystemSnapshot,
} from "../model/index.js";
import { type CompiledFormat, compileCardFormat } from "./compileCardFormat.js";
import { RULE_STRIDE, compileWindowInto } from "./compileWindow.js";
import {
  type HolderOrder,
  newHolderOrder,
  noteHolderAdded,
  noteHolderRemoved,
  noteHolderWritten,
} from "./holderOrder.js";
import { policyMask } from "./policyMask.js";
import { type ZoneTable, buildZoneTable } from "./zoneTable.js";

export const INPUT_BIT: Readonly<Record<InputType, number>> = { wiegand: 1, unencryptedOsdp: 2, encryptedOsdp: 4 };
export const CREDENTIAL_BIT = { card: 1, touch: 2, token: 4 } as const;
/** Marks a PIN shared by two or more holders in `pinOwner_`. */
export const AMBIGUOUS = -2;

export interface CompiledNode {
  readonly id: string;
  readonly index_: number;
  readonly zone_: ZoneTable;
  readonly formats_: readonly CompiledFormat[];
  readonly ecards_: ReadonlySet<number>;
  readonly offlinePolicy_: 0 | 1 | 2;
  readonly killTimer_: number;
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
}

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
  /** Open-addressing table of card credentials by number, CARD_STRIDE slots each (findCard). */
  cardTable_: Float64Array;
  cardMask_: number;
  /** Cards in the table, and slots used (cards and deleted marks): the table is rebuilt when half full. */
  cardLive_: number;
  cardUsed_: number;
  /** Per card, side by side so that one cache line serves both: its credential id, then its holder's id. */
  cardIds_: string[];
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

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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

/** The e-card floors of a door: none. */
const NO_ECARD_FLOORS: readonly string[] = Object.freeze([]);
const EMPTY_RUN = new Int32Array(0);
const EMPTY_SLOT_PAIRS = new Int32Array(1);
const NO_WIDE_SETS: readonly Int32Array[] = Object.freeze([]);
const NO_RANKS = new Int32Array(0);
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

/** Compiles a validated snapshot (from parseSnapshot) into indexes for decide, rsop and who. */
export function compileSnapshot(snapshot: SystemSnapshot): CompiledSystem {
  const nodes: CompiledNode[] = snapshot.cloudNodes.map((n, index) => ({
    id: n.id,
    index_: index,
    zone_: buildZoneTable(n.timezone),
    formats_: n.cardFormat.map(compileCardFormat),
    ecards_: new Set(n.ecards),
    offlinePolicy_: n.offlinePolicy,
    killTimer_: n.killTimer,
    alone_: new Set([n.id]),
  }));
  const nodeIndex = new Map(nodes.map((n) => [n.id, n]));
  const deviceNumber = new Map(snapshot.devices.map((d, i) => [d.id, i]));

  // Floor groups per elevator reader, in id order so masks are stable; each floor group's reader and
  // local index k there.
  const floorGroupsAt = new Map<string, string[]>();
  const floorGroupById = new Map(snapshot.floorGroups.map((fg) => [fg.id, fg]));
  const floorGroupAt = new Map<string, { reader: number; k: number }>();
  for (const fg of [...snapshot.floorGroups].sort((a, b) => compareIds(a.id, b.id))) {
    const list = floorGroupsAt.get(fg.readerPort) ?? [];
    floorGroupAt.set(fg.id, { reader: deviceNumber.get(fg.readerPort)!, k: list.length });
    list.push(fg.id);
    floorGroupsAt.set(fg.readerPort, list);
  }

  const devices: CompiledDevice[] = snapshot.devices.map((d, index) => {
    let inputMask = 0;
    for (const t of d.inputTypes) inputMask |= INPUT_BIT[t];
    const fgs = floorGroupsAt.get(d.id) ?? [];
    const elevator = ELEVATOR_READER_TYPES.includes(d.type);
    const floorsOf = fgs.map((id) => floorGroupById.get(id)!.floors);
    return {
      id: d.id,
      index_: index,
      node_: nodeIndex.get(d.cloudNode)!,
      inputMask_: inputMask,
      policy_: policyMask(d.authenticationPolicy),
      ble_: d.supportBleCredentials,
      secured_: d.securedReadsOnly,
      elevator_: elevator,
      slotGroup_: EMPTY_RUN,
      slotPairs_: EMPTY_SLOT_PAIRS,
      pairs_: EMPTY_RUN,
      slotOf_: null,
      wide_: fgs.length > 31,
      wideSets_: NO_WIDE_SETS,
      floorGroups_: fgs,
      floorsOf_: floorsOf,
      floorCache_: new Map(),
      ecardFloors_: elevator ? Object.freeze([...new Set(floorsOf.flat())].sort()) : NO_ECARD_FLOORS,
      rulesHere_: [],
    };
  });
  const devicesById = [...devices].sort((a, b) => compareIds(a.id, b.id));
  const deviceIdOrder = new Int32Array(devices.length);
  devicesById.forEach((d, position) => {
    deviceIdOrder[d.index_] = position;
  });

  let groupCount = 0;
  for (const h of snapshot.holders) groupCount += h.groups.length;
  let cardCount = 0;
  for (const h of snapshot.holders)
    for (const c of h.credentials) if (c.types.includes("card") && c.credentialNumber !== null) cardCount++;
  let capacity = 8;
  while (capacity < cardCount * 2) capacity *= 2;

  const sys: CompiledSystem = {
    snapshot,
    nodes_: nodes,
    nodeIndex_: nodeIndex,
    devices_: devices,
    deviceIndex_: new Map(devices.map((d) => [d.id, d])),
    holders_: [],
    holderIndex_: new Map(),
    freeHolders_: [],
    holderData_: new Float64Array(Math.max(1, snapshot.holders.length) * HOLDER_STRIDE),
    holderGroups_: new Int32Array(Math.max(8, groupCount)),
    holderGroupsEnd_: 0,
    holderGroupsGarbage_: 0,
    groupIndex_: new Map(snapshot.groups.map((g, i) => [g.id, i])),
    groups_: [...snapshot.groups],
    freeGroups_: [],
    rules_: [],
    ruleIndex_: new Map(),
    ruleIds_: [],
    ruleData_: new Int32Array(snapshot.rules.length * RULE_STRIDE),
    cardTable_: new Float64Array(capacity * CARD_STRIDE).fill(CARD_EMPTY),
    cardMask_: capacity - 1,
    cardLive_: 0,
    cardUsed_: 0,
    cardIds_: [],
    digitalById_: new Map(),
    pinOwner_: new Map(),
    pinShared_: new Map(),
    systemZone_: buildZoneTable(snapshot.timezone),
    rulesOfGroup_: snapshot.groups.map(() => NO_RANKS),
    holdersOfGroup_: snapshot.groups.map(() => [] as number[]),
    ruleDevices_: [],
    deviceIdOrder_: deviceIdOrder,
    devicesById_: devicesById,
    nodesOfRule_: [],
    floorGroupIndex_: new Map(snapshot.floorGroups.map((fg, i) => [fg.id, i])),
    floorGroupAt_: floorGroupAt,
    holderOrder_: newHolderOrder(),
  };

  // Rules in id order: ranks, records, and what each reaches; then every device's run.
  const order = [...snapshot.rules].sort((a, b) => compareIds(a.id, b.id));
  const ofGroup: number[][] = snapshot.groups.map(() => []);
  order.forEach((r, rank) => {
    const rule: CompiledRule = { id: r.id, rank_: rank, rule_: r, group_: -1 };
    sys.rules_.push(rule);
    sys.ruleIds_.push(r.id);
    sys.ruleDevices_.push(NO_DEVICES);
    sys.nodesOfRule_.push(NO_NODES);
    sys.ruleIndex_.set(r.id, rule);
    writeRule(sys, rule);
    if (r.enabled) ofGroup[sys.groupIndex_.get(r.groupId)!]!.push(rank);
    linkRule(sys, rule, null);
  });
  ofGroup.forEach((ranks, g) => {
    if (ranks.length > 0) sys.rulesOfGroup_[g] = Int32Array.from(ranks);
  });
  for (const d of devices) rebuildDeviceRun(sys, d);

  for (const h of snapshot.holders) addHolder(sys, h);
  return sys;
}

const NO_NODES: ReadonlySet<string> = new Set();
const NO_DEVICES: readonly number[] = Object.freeze([]);

/** Writes rule `rule`'s rank-indexed records (window, door devices, nodes reached) from `rule.rule_`. */
export function writeRule(sys: CompiledSystem, rule: CompiledRule): void {
  const r = rule.rule_;
  const rank = rule.rank_;
  compileWindowInto(r, policyMask(r.authenticationPolicy), sys.ruleData_, rank * RULE_STRIDE);
  rule.group_ = sys.groupIndex_.get(r.groupId)!;
  sys.rules_[rank] = rule;
  sys.ruleIds_[rank] = r.id;
  const devices = r.devices.map((d) => sys.deviceIndex_.get(d)!);
  const nodes = devices.map((d) => d.node_);
  for (const fg of r.floorGroups) nodes.push(sys.devices_[sys.floorGroupAt_.get(fg)!.reader]!.node_);
  sys.ruleDevices_[rank] = devices.length === 0 ? NO_DEVICES : devices.map((d) => d.index_);
  sys.nodesOfRule_[rank] =
    nodes.length === 0
      ? NO_NODES
      : nodes.every((n) => n === nodes[0])
        ? nodes[0]!.alone_
        : new Set(nodes.map((n) => n.id));
}

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
  device.slotGroup_ = slotGroup;
  device.slotPairs_ = slotPairs;
  device.pairs_ = pairs;
  device.slotOf_ = denseSlots(slotGroup);
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

/** Rebuilds the card table with room to spare (every card again, deleted marks gone, cardIds_ compacted). */
function rebuildCardTable(sys: CompiledSystem, extra: number): void {
  const old = sys.cardTable_;
  const oldIds = sys.cardIds_;
  let capacity = 8;
  while (capacity < (sys.cardLive_ + extra) * 2) capacity *= 2;
  const table = new Float64Array(capacity * CARD_STRIDE).fill(CARD_EMPTY);
  const mask = capacity - 1;
  const ids: string[] = [];
  for (let base = 0; base < old.length; base += CARD_STRIDE) {
    const cn = old[base]!;
    if (cn < 0) continue;
    let s = cardHash(cn) & mask;
    while (table[s * CARD_STRIDE]! >= 0) s = (s + 1) & mask;
    const b = s * CARD_STRIDE;
    table[b] = cn;
    table[b + 1] = old[base + 1]!;
    table[b + 2] = old[base + 2]!;
    table[b + 3] = ids.length;
    const i = old[base + 3]!;
    ids.push(oldIds[i]!, oldIds[i + 1]!);
  }
  sys.cardTable_ = table;
  sys.cardMask_ = mask;
  sys.cardUsed_ = sys.cardLive_;
  sys.cardIds_ = ids;
}

function addPin(sys: CompiledSystem, pin: string, h: number): void {
  const owner = sys.pinOwner_.get(pin);
  if (owner === undefined) sys.pinOwner_.set(pin, h);
  else if (owner === AMBIGUOUS) sys.pinShared_.get(pin)!.add(h);
  else if (owner !== h) {
    sys.pinOwner_.set(pin, AMBIGUOUS);
    sys.pinShared_.set(pin, new Set([owner, h]));
  }
}

function removePin(sys: CompiledSystem, pin: string, h: number): void {
  const owner = sys.pinOwner_.get(pin);
  if (owner === h) sys.pinOwner_.delete(pin);
  else if (owner === AMBIGUOUS) {
    const shared = sys.pinShared_.get(pin)!;
    shared.delete(h);
    if (shared.size === 1) {
      sys.pinOwner_.set(pin, shared.values().next().value!);
      sys.pinShared_.delete(pin);
    }
  }
}

/** Adds cards (to the table) and mobile credentials of holder `i` (id `holderId`). */
function addCredentials(sys: CompiledSystem, i: number, holderId: string, credentials: readonly Credential[]): void {
  for (const c of credentials) {
    let types = 0;
    for (const t of c.types) types |= CREDENTIAL_BIT[t];
    if (types & CREDENTIAL_BIT.card) {
      // A card without a number yet (pending) cannot be read, so it is not in the table.
      if (c.credentialNumber === null) continue;
      if ((sys.cardUsed_ + 1) * 2 > sys.cardMask_ + 1) rebuildCardTable(sys, 1 + (sys.cardLive_ >> 1));
      const table = sys.cardTable_;
      const mask = sys.cardMask_;
      let s = cardHash(c.credentialNumber) & mask;
      while (table[s * CARD_STRIDE]! >= 0) s = (s + 1) & mask;
      const b = s * CARD_STRIDE;
      if (table[b] === CARD_EMPTY) sys.cardUsed_++;
      sys.cardLive_++;
      table[b] = c.credentialNumber;
      table[b + 1] = c.facilityCode ?? -1;
      table[b + 2] = i;
      table[b + 3] = sys.cardIds_.length;
      sys.cardIds_.push(c.id, holderId);
    } else sys.digitalById_.set(c.id, { id: c.id, holder_: i, pending_: c.credentialNumber === null, types_: types });
  }
}

/** Takes holder `i`'s `credentials` out of the card table (deleted marks) and the mobile map. */
function removeCredentials(sys: CompiledSystem, i: number, credentials: readonly Credential[]): void {
  for (const c of credentials) {
    if (c.types.includes("card")) {
      if (c.credentialNumber === null) continue;
      const b = findCard(sys, c.credentialNumber);
      if (b < 0 || sys.cardTable_[b + 2] !== i) continue;
      sys.cardTable_[b] = CARD_DELETED;
      sys.cardLive_--;
    } else if (sys.digitalById_.get(c.id)?.holder_ === i) sys.digitalById_.delete(c.id);
  }
}

function addPins(sys: CompiledSystem, h: Holder, i: number): void {
  if (h.pin !== null) addPin(sys, h.pin, i);
  if (h.duressPin !== null) addPin(sys, h.duressPin, i);
}

function removePins(sys: CompiledSystem, h: Holder, i: number): void {
  if (h.pin !== null) removePin(sys, h.pin, i);
  if (h.duressPin !== null) removePin(sys, h.duressPin, i);
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
