// Compiles a validated snapshot into flat, immutable indexes for the evaluate layer. Everything that
// depends only on the rule set is settled here: rule order, windows, policy masks, card formats,
// zone tables, and which rules of which group reach which device.
import {
  ELEVATOR_READER_TYPES,
  type InputType,
  parseLocalDateTime,
  type SystemSnapshot,
} from "../model/index.js";
import { type CompiledFormat, compileCardFormat } from "./compileCardFormat.js";
import { RULE_STRIDE, compileWindowInto } from "./compileWindow.js";
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
}

export interface CompiledRule {
  readonly id: string;
  /** Position in id order: the smallest id has rank 0. */
  readonly rank_: number;
  /** Position in `snapshot.rules`. */
  readonly index_: number;
}

export interface CompiledDevice {
  readonly id: string;
  readonly index_: number;
  readonly node_: CompiledNode;
  readonly inputMask_: number;
  readonly policy_: number;
  readonly ble_: boolean;
  readonly secured_: boolean;
  readonly elevator_: boolean;
  /**
   * Slots `[slotFrom_, slotTo_)` of the system's `slotGroup_`: one per group with enabled rules
   * reaching this device, by ascending group index (see CompiledSystem.pairs_).
   */
  readonly slotFrom_: number;
  readonly slotTo_: number;
  /** More than 31 floor groups at this elevator reader: floor refs index `wideSets_`, not a mask. */
  readonly wide_: boolean;
  readonly wideSets_: readonly Int32Array[];
  /** Elevator readers: the floor groups whose readerPort is this device, and their floors. */
  readonly floorGroups_: readonly string[];
  readonly floorsOf_: readonly (readonly string[])[];
  /** Interned `floors` arrays by floor-group mask, filled on first use (see floorsFor). */
  readonly floorCache_: Map<number, readonly string[]>;
  /** What an e-card enables here (SPEC §3 step 3): every floor of every floor group at this reader, sorted; [] at doors. */
  readonly ecardFloors_: readonly string[];
}

export interface CompiledHolder {
  readonly id: string;
  readonly index_: number;
  readonly enabled_: boolean;
  /** Local epoch ms bounds (parseLocalDateTime); ±Infinity when unbounded. */
  readonly activeFrom_: number;
  readonly expiresAt_: number;
  readonly pin_: string | null;
  readonly duressPin_: string | null;
  /** The holder's group indexes are `holderGroups_[groupFrom_ … groupTo_ - 1]` of the system. */
  readonly groupFrom_: number;
  readonly groupTo_: number;
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
 * `groupTo_ * 2 + enabled`, activeFrom_, expiresAt_, groupFrom_.
 */
export const HOLDER_STRIDE = 4;
export const H_GROUP_TO_ENABLED = 0;
export const H_FROM = 1;
export const H_TO = 2;
export const H_GROUP_FROM = 3;

/** Float64 slots per card in `cardTable_`: number (-1: empty), facility code (-1: null), holder index, index into `cardIds_` (even). */
export const CARD_STRIDE = 4;

/** The compiled form of one system snapshot. Immutable after compileSnapshot returns. */
export interface CompiledSystem {
  readonly snapshot: SystemSnapshot;
  readonly nodes_: readonly CompiledNode[];
  readonly nodeIndex_: ReadonlyMap<string, CompiledNode>;
  readonly devices_: readonly CompiledDevice[];
  readonly deviceIndex_: ReadonlyMap<string, CompiledDevice>;
  readonly holders_: readonly CompiledHolder[];
  readonly holderIndex_: ReadonlyMap<string, CompiledHolder>;
  /** Per holder index: the fields decide reads of it (HOLDER_STRIDE). */
  readonly holderData_: Float64Array;
  /** Every holder's group indexes, back to back (CompiledHolder.groupFrom_). */
  readonly holderGroups_: Int32Array;
  readonly groupIndex_: ReadonlyMap<string, number>;
  /** Rules in rank (id) order. */
  readonly rules_: readonly CompiledRule[];
  /** Per rank: the rule's id. */
  readonly ruleIds_: readonly string[];
  /** RULE_STRIDE int32 per rank: flags, policy mask and window (compileWindowInto). */
  readonly ruleData_: Int32Array;
  /**
   * Which rules reach which device, flat: slot s (a device and one group) has group `slotGroup_[s]`
   * and the pairs `[rank, floorRef]` at `pairs_[slotPairs_[s] … slotPairs_[s + 1] - 1]`, by
   * ascending rank. At an elevator reader with at most 31 floor groups `floorRef` is a mask with
   * bit k for `floorGroups_[k]`; with more (`wide_`), an index into the device's `wideSets_`.
   */
  readonly slotGroup_: Int32Array;
  readonly slotPairs_: Int32Array;
  readonly pairs_: Int32Array;
  /** Open-addressing table of card credentials by number, CARD_STRIDE slots each (findCard). */
  readonly cardTable_: Float64Array;
  readonly cardMask_: number;
  /** Per card, side by side so that one cache line serves both: its credential id, then its holder's id. */
  readonly cardIds_: readonly string[];
  readonly digitalById_: ReadonlyMap<string, CompiledCredential>;
  /** PIN → holder index, or AMBIGUOUS. */
  readonly pinOwner_: ReadonlyMap<string, number>;
  /** The system time zone (system-wide RSOP evaluates `active` there). */
  readonly systemZone_: ZoneTable;
  /** Per group index: ranks of its enabled rules, ascending. */
  readonly rulesOfGroup_: readonly Int32Array[];
  /** Per group index: indexes of its holders, ascending. */
  readonly holdersOfGroup_: readonly Int32Array[];
  /** Door rules' devices by rank: `ruleDevices_[ruleDeviceFrom_[rank] … ruleDeviceFrom_[rank + 1] - 1]` (device indexes). */
  readonly ruleDeviceFrom_: Int32Array;
  readonly ruleDevices_: Int32Array;
  /** Per device index: its position in device id order, and the devices in that order (RSOP lists devices by id). */
  readonly deviceIdOrder_: Int32Array;
  readonly devicesById_: readonly CompiledDevice[];
  /** Per rule rank: the cloud nodes the rule reaches (through its devices or floor groups). */
  readonly nodesOfRule_: readonly ReadonlySet<string>[];
  readonly floorGroupIndex_: ReadonlyMap<string, number>;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Positions 0…n-1 stably ordered by `keys[order[i]]` (a counting sort; keys in [0, buckets)). */
function countingOrder(keys: readonly number[], order: Int32Array, buckets: number): Int32Array {
  const start = new Int32Array(buckets + 1);
  for (let i = 0; i < order.length; i++) start[keys[order[i]!]! + 1]!++;
  for (let b = 0; b < buckets; b++) start[b + 1]! += start[b]!;
  const out = new Int32Array(order.length);
  for (let i = 0; i < order.length; i++) out[start[keys[order[i]!]!]!++] = order[i]!;
  return out;
}

/** Mixes a card number (a safe integer) into 32 bits. Integer operations only. */
export function cardHash(cn: number): number {
  const lo = cn >>> 0;
  const hi = (cn / 4294967296) >>> 0;
  const h = Math.imul(lo ^ Math.imul(hi, 0x27d4eb2d), 0x9e3779b1);
  return h ^ (h >>> 16);
}

/** The base index in `cardTable_` of the card credential numbered `cn`, or -1. */
export function findCard(sys: CompiledSystem, cn: number): number {
  const table = sys.cardTable_;
  const mask = sys.cardMask_;
  let s = cardHash(cn) & mask;
  for (;;) {
    const base = s * CARD_STRIDE;
    const key = table[base]!;
    if (key === cn) return base;
    if (key < 0) return -1;
    s = (s + 1) & mask;
  }
}

/** The slot of `group` at `device` (see CompiledSystem.slotGroup_), or -1: a binary search. */
export function findSlot(slotGroup: Int32Array, device: CompiledDevice, group: number): number {
  let lo = device.slotFrom_;
  let hi = device.slotTo_ - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const g = slotGroup[mid]!;
    if (g === group) return mid;
    if (g < group) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
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
  }));
  const nodeIndex = new Map(nodes.map((n) => [n.id, n]));

  const groupIndex = new Map(snapshot.groups.map((g, i) => [g.id, i]));
  const deviceNumber = new Map(snapshot.devices.map((d, i) => [d.id, i]));

  const order = snapshot.rules.map((_, i) => i).sort((a, b) => compareIds(snapshot.rules[a]!.id, snapshot.rules[b]!.id));
  const ruleData = new Int32Array(order.length * RULE_STRIDE);
  const rules: CompiledRule[] = order.map((index, rank) => {
    const r = snapshot.rules[index]!;
    compileWindowInto(r, policyMask(r.authenticationPolicy), ruleData, rank * RULE_STRIDE);
    return { id: r.id, rank_: rank, index_: index };
  });

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

  // Every (device, group, rank, floor group k) an enabled rule reaches, emitted in rank order, then
  // ordered by device and group with two stable counting sorts: (device, group, rank) order.
  const eDevice: number[] = [];
  const eGroup: number[] = [];
  const eRank: number[] = [];
  const eK: number[] = [];
  for (const rule of rules) {
    const r = snapshot.rules[rule.index_]!;
    if (!r.enabled) continue; // SPEC §1: a disabled rule is ignored everywhere
    const group = groupIndex.get(r.groupId)!;
    if (r.type === "door")
      for (const d of r.devices) {
        eDevice.push(deviceNumber.get(d)!);
        eGroup.push(group);
        eRank.push(rule.rank_);
        eK.push(-1);
      }
    else
      for (const fgId of r.floorGroups) {
        const at = floorGroupAt.get(fgId)!;
        eDevice.push(at.reader);
        eGroup.push(group);
        eRank.push(rule.rank_);
        eK.push(at.k);
      }
  }
  const identity = new Int32Array(eRank.length);
  for (let i = 0; i < identity.length; i++) identity[i] = i;
  const sorted = countingOrder(eDevice, countingOrder(eGroup, identity, snapshot.groups.length), snapshot.devices.length);

  const deviceWide = snapshot.devices.map((d) => (floorGroupsAt.get(d.id)?.length ?? 0) > 31);
  // Wide readers: per device, the floor-group indexes k of each pair, by floorRef.
  const wideLists: number[][][] = snapshot.devices.map(() => []);
  const slotFrom = new Int32Array(snapshot.devices.length + 1);
  const slotGroup: number[] = [];
  const slotPairs: number[] = [];
  const pairs: number[] = [];
  for (let j = 0, d = 0; j <= sorted.length; j++) {
    const e = j < sorted.length ? sorted[j]! : -1;
    const dev = e < 0 ? snapshot.devices.length : eDevice[e]!;
    while (d < dev) slotFrom[++d] = slotGroup.length;
    if (e < 0) break;
    const group = eGroup[e]!;
    const rank = eRank[e]!;
    const k = eK[e]!;
    const last = slotGroup.length - 1;
    const sameSlot = last >= slotFrom[dev]! && slotGroup[last] === group;
    if (!sameSlot) {
      slotGroup.push(group);
      slotPairs.push(pairs.length);
    }
    const wide = deviceWide[dev]!;
    if (sameSlot && pairs[pairs.length - 2] === rank) {
      // The same rule again at this device: another of its floor groups at this reader.
      if (k < 0) continue;
      if (wide) wideLists[dev]![pairs[pairs.length - 1]!]!.push(k);
      else pairs[pairs.length - 1]! |= 1 << k;
      continue;
    }
    if (wide) {
      pairs.push(rank, wideLists[dev]!.length);
      wideLists[dev]!.push(k < 0 ? [] : [k]);
    } else pairs.push(rank, k < 0 ? 0 : 1 << k);
  }
  slotPairs.push(pairs.length);

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
      slotFrom_: slotFrom[index]!,
      slotTo_: slotFrom[index + 1]!,
      wide_: deviceWide[index]!,
      wideSets_: wideLists[index]!.map((ks) => Int32Array.from(new Set(ks)).sort()),
      floorGroups_: fgs,
      floorsOf_: floorsOf,
      floorCache_: new Map(),
      ecardFloors_: elevator ? Object.freeze([...new Set(floorsOf.flat())].sort()) : NO_ECARD_FLOORS,
    };
  });
  const deviceIndex = new Map(devices.map((d) => [d.id, d]));

  let groupCount = 0;
  for (const h of snapshot.holders) groupCount += h.groups.length;
  const holderGroups = new Int32Array(groupCount);
  let gAt = 0;
  const holders: CompiledHolder[] = snapshot.holders.map((h, index) => {
    const from = gAt;
    for (const g of h.groups) holderGroups[gAt++] = groupIndex.get(g)!;
    return {
      id: h.id,
      index_: index,
      enabled_: h.enabled,
      activeFrom_: h.activeDate === null ? -Infinity : parseLocalDateTime(h.activeDate),
      expiresAt_: h.expireDate === null ? Infinity : parseLocalDateTime(h.expireDate),
      pin_: h.pin,
      duressPin_: h.duressPin,
      groupFrom_: from,
      groupTo_: gAt,
    };
  });
  const holderIndex = new Map(holders.map((h) => [h.id, h]));
  const holderData = new Float64Array(holders.length * HOLDER_STRIDE);
  for (const h of holders) {
    const base = h.index_ * HOLDER_STRIDE;
    holderData[base + H_GROUP_TO_ENABLED] = h.groupTo_ * 2 + (h.enabled_ ? 1 : 0);
    holderData[base + H_FROM] = h.activeFrom_;
    holderData[base + H_TO] = h.expiresAt_;
    holderData[base + H_GROUP_FROM] = h.groupFrom_;
  }

  let cardCount = 0;
  for (const h of snapshot.holders) for (const c of h.credentials) if (c.types.includes("card") && c.credentialNumber !== null) cardCount++;
  let capacity = 8;
  while (capacity < cardCount * 2) capacity *= 2;
  const cardTable = new Float64Array(capacity * CARD_STRIDE).fill(-1);
  const cardMask = capacity - 1;
  const cardIds: string[] = [];
  const digitalById = new Map<string, CompiledCredential>();
  const pinOwner = new Map<string, number>();
  snapshot.holders.forEach((h, i) => {
    for (const c of h.credentials) {
      let types = 0;
      for (const t of c.types) types |= CREDENTIAL_BIT[t];
      if (types & CREDENTIAL_BIT.card) {
        // A card without a number yet (pending) cannot be read, so it is not in the table.
        if (c.credentialNumber === null) continue;
        let s = cardHash(c.credentialNumber) & cardMask;
        while (cardTable[s * CARD_STRIDE]! >= 0) s = (s + 1) & cardMask;
        const base = s * CARD_STRIDE;
        cardTable[base] = c.credentialNumber;
        cardTable[base + 1] = c.facilityCode ?? -1;
        cardTable[base + 2] = i;
        cardTable[base + 3] = cardIds.length;
        cardIds.push(c.id, h.id);
      } else digitalById.set(c.id, { id: c.id, holder_: i, pending_: c.credentialNumber === null, types_: types });
    }
    const pins = h.pin === null ? [] : [h.pin];
    if (h.duressPin !== null) pins.push(h.duressPin);
    for (const p of pins) {
      const owner = pinOwner.get(p);
      pinOwner.set(p, owner === undefined || owner === i ? i : AMBIGUOUS);
    }
  });

  // Per rank (rules are in rank order): its group's list, its door devices, the nodes it reaches.
  const rulesOfGroup = snapshot.groups.map(() => [] as number[]);
  const ruleDeviceFrom = new Int32Array(rules.length + 1);
  const ruleDevices: number[] = [];
  const nodesOfRule = rules.map((rule) => {
    const r = snapshot.rules[rule.index_]!;
    if (r.enabled) rulesOfGroup[groupIndex.get(r.groupId)!]!.push(rule.rank_);
    const reached = new Set<string>();
    for (const d of r.devices) {
      const device = devices[deviceNumber.get(d)!]!;
      ruleDevices.push(device.index_);
      reached.add(device.node_.id);
    }
    ruleDeviceFrom[rule.rank_ + 1] = ruleDevices.length;
    for (const fg of r.floorGroups) reached.add(deviceIndex.get(floorGroupById.get(fg)!.readerPort)!.node_.id);
    return reached;
  });
  const devicesById = [...devices].sort((a, b) => compareIds(a.id, b.id));
  const deviceIdOrder = new Int32Array(devices.length);
  devicesById.forEach((d, position) => {
    deviceIdOrder[d.index_] = position;
  });
  const holdersOfGroup = snapshot.groups.map(() => [] as number[]);
  holders.forEach((h) => {
    for (let j = h.groupFrom_; j < h.groupTo_; j++) holdersOfGroup[holderGroups[j]!]!.push(h.index_);
  });

  return {
    snapshot,
    systemZone_: buildZoneTable(snapshot.timezone),
    rulesOfGroup_: rulesOfGroup.map((l) => Int32Array.from(l)),
    holdersOfGroup_: holdersOfGroup.map((l) => Int32Array.from(l)),
    nodesOfRule_: nodesOfRule,
    ruleDeviceFrom_: ruleDeviceFrom,
    ruleDevices_: Int32Array.from(ruleDevices),
    deviceIdOrder_: deviceIdOrder,
    devicesById_: devicesById,
    floorGroupIndex_: new Map(snapshot.floorGroups.map((fg, i) => [fg.id, i])),
    nodes_: nodes,
    nodeIndex_: nodeIndex,
    devices_: devices,
    deviceIndex_: deviceIndex,
    holders_: holders,
    holderIndex_: holderIndex,
    holderGroups_: holderGroups,
    holderData_: holderData,
    groupIndex_: groupIndex,
    rules_: rules,
    ruleIds_: rules.map((r) => r.id),
    ruleData_: ruleData,
    slotGroup_: Int32Array.from(slotGroup),
    slotPairs_: Int32Array.from(slotPairs),
    pairs_: Int32Array.from(pairs),
    cardTable_: cardTable,
    cardMask_: cardMask,
    cardIds_: cardIds,
    digitalById_: digitalById,
    pinOwner_: pinOwner,
  };
}

/** The e-card floors of a door: none. */
const NO_ECARD_FLOORS: readonly string[] = Object.freeze([]);

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
