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
import { type CompiledWindow, compileWindow } from "./compileWindow.js";
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
  readonly index_: number;
  readonly allow_: boolean;
  readonly policy_: number;
  readonly window_: CompiledWindow;
  /** SPEC §4 24x7: an allow rule whose window covers the whole week. */
  readonly is24x7_: boolean;
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
   * Per group index: pairs `[rank, floorRef, …]` of the enabled rules of that group reaching this
   * device, by ascending rank. At an elevator reader with at most 31 floor groups `floorRef` is a
   * mask with bit k for `floorGroups_[k]`; with more (`wide_`), an index into `wideSets_`.
   */
  readonly rulesByGroup_: ReadonlyMap<number, Int32Array>;
  readonly wide_: boolean;
  readonly wideSets_: readonly Int32Array[];
  /** Elevator readers: the floor groups whose readerPort is this device, and their floors. */
  readonly floorGroups_: readonly string[];
  readonly floorsOf_: readonly (readonly string[])[];
  /** Interned `floors` arrays by floor-group mask, filled on first use (see floorsFor). */
  readonly floorCache_: Map<number, readonly string[]>;
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
  readonly groups_: Int32Array;
}

export interface CompiledCredential {
  readonly id: string;
  readonly holder_: CompiledHolder;
  /** -1 for a null facility code. */
  readonly fc_: number;
  readonly pending_: boolean;
  readonly types_: number;
}

/** The compiled form of one system snapshot. Immutable after compileSnapshot returns. */
export interface CompiledSystem {
  readonly snapshot: SystemSnapshot;
  readonly nodes_: readonly CompiledNode[];
  readonly nodeIndex_: ReadonlyMap<string, CompiledNode>;
  readonly devices_: readonly CompiledDevice[];
  readonly deviceIndex_: ReadonlyMap<string, CompiledDevice>;
  readonly holders_: readonly CompiledHolder[];
  readonly holderIndex_: ReadonlyMap<string, CompiledHolder>;
  readonly groupIndex_: ReadonlyMap<string, number>;
  /** Rules in rank (id) order. */
  readonly rules_: readonly CompiledRule[];
  readonly cardByNumber_: ReadonlyMap<number, CompiledCredential>;
  readonly digitalById_: ReadonlyMap<string, CompiledCredential>;
  /** PIN → holder index, or AMBIGUOUS. */
  readonly pinOwner_: ReadonlyMap<string, number>;
  /** The system time zone (system-wide RSOP evaluates `active` there). */
  readonly systemZone_: ZoneTable;
  /** Per group index: ranks of its enabled rules, ascending. */
  readonly rulesOfGroup_: readonly Int32Array[];
  /** Per group index: indexes of its holders, ascending. */
  readonly holdersOfGroup_: readonly Int32Array[];
  /** Per rule rank: the cloud nodes the rule reaches (through its devices or floor groups). */
  readonly nodesOfRule_: readonly ReadonlySet<string>[];
  readonly floorGroupIndex_: ReadonlyMap<string, number>;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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

  const order = snapshot.rules.map((_, i) => i).sort((a, b) => compareIds(snapshot.rules[a]!.id, snapshot.rules[b]!.id));
  const rules: CompiledRule[] = order.map((index, rank) => {
    const r = snapshot.rules[index]!;
    const window = compileWindow(r);
    return {
      id: r.id,
      rank_: rank,
      index_: index,
      allow_: r.allow,
      policy_: policyMask(r.authenticationPolicy),
      window_: window,
      is24x7_: r.allow && window.always_,
    };
  });

  // Floor groups per elevator reader, in id order so masks are stable.
  const floorGroupsAt = new Map<string, string[]>();
  const floorGroupById = new Map(snapshot.floorGroups.map((fg) => [fg.id, fg]));
  for (const fg of [...snapshot.floorGroups].sort((a, b) => compareIds(a.id, b.id))) {
    const list = floorGroupsAt.get(fg.readerPort) ?? [];
    list.push(fg.id);
    floorGroupsAt.set(fg.readerPort, list);
  }

  // (device, group) → rank → local floor-group indexes reached at that device.
  const reach = new Map<string, Map<number, Map<number, Set<number>>>>();
  const addReach = (deviceId: string, group: number, rank: number, k: number) => {
    let byGroup = reach.get(deviceId);
    if (byGroup === undefined) reach.set(deviceId, (byGroup = new Map()));
    let byRank = byGroup.get(group);
    if (byRank === undefined) byGroup.set(group, (byRank = new Map()));
    let ks = byRank.get(rank);
    if (ks === undefined) byRank.set(rank, (ks = new Set()));
    if (k >= 0) ks.add(k);
  };
  for (const rule of rules) {
    const r = snapshot.rules[rule.index_]!;
    if (!r.enabled) continue; // SPEC §1: a disabled rule is ignored everywhere
    const group = groupIndex.get(r.groupId)!;
    if (r.type === "door") for (const d of r.devices) addReach(d, group, rule.rank_, -1);
    else
      for (const fgId of r.floorGroups) {
        const reader = floorGroupById.get(fgId)!.readerPort;
        addReach(reader, group, rule.rank_, floorGroupsAt.get(reader)!.indexOf(fgId));
      }
  }

  const devices: CompiledDevice[] = snapshot.devices.map((d, index) => {
    let inputMask = 0;
    for (const t of d.inputTypes) inputMask |= INPUT_BIT[t];
    const fgs = floorGroupsAt.get(d.id) ?? [];
    const wide = fgs.length > 31;
    const wideSets: Int32Array[] = [];
    const rulesByGroup = new Map<number, Int32Array>();
    for (const [group, byRank] of reach.get(d.id) ?? []) {
      const ranks = [...byRank.keys()].sort((a, b) => a - b);
      const pairs = new Int32Array(ranks.length * 2);
      ranks.forEach((rank, i) => {
        const ks = [...byRank.get(rank)!].sort((a, b) => a - b);
        pairs[2 * i] = rank;
        if (wide) {
          pairs[2 * i + 1] = wideSets.length;
          wideSets.push(Int32Array.from(ks));
        } else pairs[2 * i + 1] = ks.reduce((m, k) => m | (1 << k), 0);
      });
      rulesByGroup.set(group, pairs);
    }
    return {
      id: d.id,
      index_: index,
      node_: nodeIndex.get(d.cloudNode)!,
      inputMask_: inputMask,
      policy_: policyMask(d.authenticationPolicy),
      ble_: d.supportBleCredentials,
      secured_: d.securedReadsOnly,
      elevator_: ELEVATOR_READER_TYPES.includes(d.type),
      rulesByGroup_: rulesByGroup,
      wide_: wide,
      wideSets_: wideSets,
      floorGroups_: fgs,
      floorsOf_: fgs.map((id) => floorGroupById.get(id)!.floors),
      floorCache_: new Map(),
    };
  });
  const deviceIndex = new Map(devices.map((d) => [d.id, d]));

  const holders: CompiledHolder[] = snapshot.holders.map((h, index) => ({
    id: h.id,
    index_: index,
    enabled_: h.enabled,
    activeFrom_: h.activeDate === null ? -Infinity : parseLocalDateTime(h.activeDate),
    expiresAt_: h.expireDate === null ? Infinity : parseLocalDateTime(h.expireDate),
    pin_: h.pin,
    duressPin_: h.duressPin,
    groups_: Int32Array.from(h.groups.map((g) => groupIndex.get(g)!)),
  }));
  const holderIndex = new Map(holders.map((h) => [h.id, h]));

  const cardByNumber = new Map<number, CompiledCredential>();
  const digitalById = new Map<string, CompiledCredential>();
  const pinOwner = new Map<string, number>();
  snapshot.holders.forEach((h, i) => {
    const holder = holders[i]!;
    for (const c of h.credentials) {
      let types = 0;
      for (const t of c.types) types |= CREDENTIAL_BIT[t];
      const compiled: CompiledCredential = {
        id: c.id,
        holder_: holder,
        fc_: c.facilityCode ?? -1,
        pending_: c.credentialNumber === null,
        types_: types,
      };
      if (types & CREDENTIAL_BIT.card) cardByNumber.set(c.credentialNumber!, compiled);
      else digitalById.set(c.id, compiled);
    }
    const pins = h.pin === null ? [] : [h.pin];
    if (h.duressPin !== null) pins.push(h.duressPin);
    for (const p of pins) {
      const owner = pinOwner.get(p);
      pinOwner.set(p, owner === undefined || owner === i ? i : AMBIGUOUS);
    }
  });

  const rulesOfGroup = snapshot.groups.map(() => [] as number[]);
  const nodesOfRule = rules.map((rule) => {
    const r = snapshot.rules[rule.index_]!;
    if (r.enabled) rulesOfGroup[groupIndex.get(r.groupId)!]!.push(rule.rank_);
    const reached = new Set<string>();
    for (const d of r.devices) reached.add(deviceIndex.get(d)!.node_.id);
    for (const fg of r.floorGroups) reached.add(deviceIndex.get(floorGroupById.get(fg)!.readerPort)!.node_.id);
    return reached;
  });
  const holdersOfGroup = snapshot.groups.map(() => [] as number[]);
  holders.forEach((h) => {
    for (const g of h.groups_) holdersOfGroup[g]!.push(h.index_);
  });

  return {
    snapshot,
    systemZone_: buildZoneTable(snapshot.timezone),
    rulesOfGroup_: rulesOfGroup.map((l) => Int32Array.from(l)),
    holdersOfGroup_: holdersOfGroup.map((l) => Int32Array.from(l)),
    nodesOfRule_: nodesOfRule,
    floorGroupIndex_: new Map(snapshot.floorGroups.map((fg, i) => [fg.id, i])),
    nodes_: nodes,
    nodeIndex_: nodeIndex,
    devices_: devices,
    deviceIndex_: deviceIndex,
    holders_: holders,
    holderIndex_: holderIndex,
    groupIndex_: groupIndex,
    rules_: rules,
    cardByNumber_: cardByNumber,
    digitalById_: digitalById,
    pinOwner_: pinOwner,
  };
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
