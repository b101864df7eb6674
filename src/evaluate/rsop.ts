// Resultant set of policy: per holder, the rules of its groups and every door and floor
// group they reach, each with what decide would answer for a scan at that instant (scanAccess).
// The cost of one holder grows with the rules that reach it, not with the size of the system.
import {
  type CompiledSystem,
  RF_ALLOW,
  RF_THREAT_SHIFT,
  RULE_STRIDE,
  R_FLAGS,
  R_POLICY,
  holderActiveFrom,
  holderExpiresAt,
  holderGroupFrom,
  holderGroupTo,
  offsetAt,
  ruleOpen,
  weekdayOf,
  windowContains,
} from "../compile/index.js";
import { type Issue, MAX_INSTANT, MIN_INSTANT, MS_PER_DAY, QueryError, parseInstant } from "../model/index.js";
import type { AuthenticationPolicy, CloudNode, Device, Holder, Rule, SystemSnapshot, Weekday } from "../model/index.js";
import { NONE, type RuleOutcome, newRuleOutcome } from "./ruleWalk.js";
import { isoInstant } from "./formatInstant.js";
import { minRankReaching, scanAccess } from "./scanAccess.js";

/** A cloud node as RSOP shows it. */
export interface RsopNodeRef {
  id: string;
  serialNumber: string | null;
  name: string;
}

/** One rule of an RSOP holder. */
export interface RsopRule {
  type: "door" | "elevator";
  id: string;
  startTime: string;
  stopTime: string;
  recurring: Weekday[];
  allow: boolean;
  authenticationPolicy: AuthenticationPolicy | null;
  groupId: string;
  /** Its window contains the instant (system zone for system-wide RSOP, the node's when scoped). */
  active: boolean;
}

/** One door of an RSOP holder. */
export interface RsopDevice {
  id: string;
  name: string;
  created: string | null;
  type: string;
  publicIcon: string | null;
  readerType: string;
  cloudNode: RsopNodeRef;
  allowed: boolean;
  activeRuleId: string | null;
}

/** One floor group of an RSOP holder. */
export interface RsopFloorGroup {
  id: string;
  name: string;
  readerPort: { id: string; name: string; cloudNode: RsopNodeRef };
  floors: { id: string; name: string; type: string }[];
  allowed: boolean;
  activeRuleId: string | null;
}

/** One holder of an RSOP result. */
export interface RsopHolder {
  id: string;
  enabled: boolean;
  groups: { id: string; name: string }[];
  rules: RsopRule[];
  devices: RsopDevice[];
  floorGroups: RsopFloorGroup[];
}

/**
 * An RSOP result, in the 2.0 API's shape.
 */
export interface RsopResult {
  date: string;
  holders: RsopHolder[];
}

/** Options of an RSOP or who-can-access query. */
export interface AtOptions {
  /** The instant: ISO 8601 with Z or an offset, or epoch milliseconds. */
  readonly at: string | number;
}

/** Options of an RSOP query. */
export interface RsopOptions extends AtOptions {
  /** Scope the result to one cloud node's devices, floor groups and the rules that reach them. */
  readonly cloudNodeId?: string;
}

/** Parses a query instant or pushes an issue at `path`. */
export function queryInstant(at: unknown, path: string, issues: Issue[]): number {
  const t = parseInstant(at);
  if (Number.isNaN(t))
    issues.push({
      code: "invalid",
      path: [path],
      message: "Must be an ISO 8601 instant with Z or an offset, or epoch milliseconds.",
    });
  else if (t < MIN_INSTANT || t >= MAX_INSTANT)
    issues.push({
      code: "invalid",
      path: [path],
      message: "Must lie between 1970-01-01T00:00:00Z and 2100-01-01T00:00:00Z.",
    });
  return t;
}

/**
 * A device's fields as RSOP lists them, read once from the snapshot's device object and kept while
 * that object is the snapshot's (a live change to a display field gives the device a new object).
 */
interface DeviceRecord {
  readonly src: Device;
  /** The last snapshot `src` was found in (the check is made once per snapshot). */
  checked: SystemSnapshot;
  readonly id: string;
  readonly name: string;
  readonly created: string | null;
  readonly type: string;
  readonly publicIcon: string | null;
  readonly readerType: string;
  /** The UTF-8 JSON of an entry of this device up to `"allowed":` (rsopJsonBytes), made with the node object `jsonNode`. */
  json: Uint8Array | null;
  jsonNode: CloudNode | null;
  jsonIndent: number;
}

/** A rule's fields as RSOP lists them, kept while `src` is the rule's snapshot object. */
interface RuleRecord {
  readonly src: Rule;
  readonly type: "door" | "elevator";
  readonly id: string;
  readonly startTime: string;
  readonly stopTime: string;
  readonly recurring: readonly Weekday[];
  readonly allow: boolean;
  readonly authenticationPolicy: AuthenticationPolicy | null;
  readonly groupId: string;
  /** The UTF-8 JSON of an entry of this rule up to `"active":` (rsopJsonBytes) for indentation `jsonIndent`, made when first needed. */
  json: Uint8Array | null;
  jsonIndent: number;
}

/** A floor group's entry as UTF-8 JSON up to `"allowed":` (rsopJsonBytes), made once per snapshot. */
interface FloorGroupJson {
  readonly checked: SystemSnapshot;
  readonly indent: number;
  readonly bytes: Uint8Array;
}

/**
 * Per compiled system, what RSOP reuses from call to call: device and rule records, per device its
 * node index and policy (fixed for the compiled system's life: a device change recompiles), and the
 * per-device accumulators of one holder (valid where their stamp equals the holder's stamp).
 */
interface RsopScratch {
  readonly deviceRecords: (DeviceRecord | undefined)[];
  ruleRecords: (RuleRecord | undefined)[];
  readonly deviceNode: Int32Array;
  readonly devicePolicy: Int32Array;
  /** 1 where the device is the reader of a floor group (rules reach it through floor groups too). */
  readonly deviceReader: Uint8Array;
  counter: number;
  /** Per device index, D_STRIDE ints side by side (one cache line serves a device): the holder's stamp and its minimums. */
  readonly acc: Int32Array;
  ruleStamp: Int32Array;
  /** A bit per position in device id order: the devices one holder's rules reach (cleared after use). */
  readonly idOrderBits: Int32Array;
  /** Per position in device id order: the device's index. */
  readonly indexById: Int32Array;
  /** One holder's reached devices, as positions in id order. */
  byIdOrder: Int32Array;
  /** Per floor group (position in `snapshot.floorGroups`): its reader's device index, its index k there, its floors' device indexes, its rank in id order; and the positions by rank. */
  readonly fgReader: Int32Array;
  readonly fgK: Int32Array;
  readonly fgFloors: readonly Int32Array[];
  readonly fgIdRank: Int32Array;
  readonly fgById: Int32Array;
  /** One holder's floor groups (stamps by position, found ranks). */
  readonly fgStamp: Int32Array;
  readonly fgFound: Int32Array;
  /** Per reader device index, for one holder: its scan's outcome (valid where readerStamp is the holder's stamp). */
  readonly readerStamp: Int32Array;
  readonly readerAllowed: Uint8Array;
  readonly readerFactor: Int32Array;
  readonly readerMask: Int32Array;
  readonly readerLocal: Float64Array;
  /** The floor groups reached at the last scanned reader with more than 31 of them. */
  lastWide: Set<number> | null;
  /** One holder's result, for a builder: its devices (index, allowed, deciding rank) in id order, and its floor groups (position, allowed, rank) in id order. */
  readonly resDevice: Int32Array;
  readonly resAllowed: Uint8Array;
  readonly resRank: Int32Array;
  readonly resFg: Int32Array;
  readonly resFgAllowed: Uint8Array;
  readonly resFgRank: Int32Array;
  /** rsopJsonBytes's pieces: per floor group position, per rank the JSON of the rule's id (with the id it was made of). */
  readonly fgJson: (FloorGroupJson | undefined)[];
  readonly rankJson: ({ readonly id: string; readonly indent: number; readonly bytes: Uint8Array } | undefined)[];
  /** Per node index, at the instant of a call: local time, day, weekday and time of day. */
  readonly nodeLocal: Float64Array;
  readonly nodeDay: Int32Array;
  readonly nodeWd: Int32Array;
  readonly nodeTod: Int32Array;
}

const RSOP_SCRATCH = new WeakMap<CompiledSystem, RsopScratch>();

/** Slots per device in `acc`: stamp, smallest open deny, open allow, allow accepting card alone, accepting card + PIN. */
const D_STRIDE = 8;
const D_STAMP = 0;
const D_DENY = 1;
const D_ALLOW = 2;
const D_CARD = 3;
const D_CARD_PIN = 4;
/** The smallest allow rule set aside only by the node's threat level (TL2): the rank a denial names. */
const D_THREAT = 5;

function rsopScratch(sys: CompiledSystem): RsopScratch {
  let s = RSOP_SCRATCH.get(sys);
  if (s === undefined) {
    const n = sys.devices_.length;
    s = {
      deviceRecords: new Array(n),
      ruleRecords: [],
      deviceNode: Int32Array.from(sys.devices_, (d) => d.node_.index_),
      devicePolicy: Int32Array.from(sys.devices_, (d) => d.policy_),
      deviceReader: Uint8Array.from(sys.devices_, (d) => (d.floorGroups_.length > 0 ? 1 : 0)),
      counter: 0,
      acc: new Int32Array(n * D_STRIDE),
      ruleStamp: new Int32Array(0),
      idOrderBits: new Int32Array((n >> 5) + 1),
      indexById: Int32Array.from(sys.devicesById_, (d) => d.index_),
      byIdOrder: new Int32Array(0),
      nodeLocal: new Float64Array(sys.nodes_.length),
      nodeDay: new Int32Array(sys.nodes_.length),
      nodeWd: new Int32Array(sys.nodes_.length),
      nodeTod: new Int32Array(sys.nodes_.length),
      ...floorGroupTables(sys),
      fgStamp: new Int32Array(sys.snapshot.floorGroups.length),
      fgFound: new Int32Array(sys.snapshot.floorGroups.length),
      readerStamp: new Int32Array(n),
      readerAllowed: new Uint8Array(n),
      readerFactor: new Int32Array(n),
      readerMask: new Int32Array(n),
      readerLocal: new Float64Array(n),
      lastWide: null,
      resDevice: new Int32Array(n),
      resAllowed: new Uint8Array(n),
      resRank: new Int32Array(n),
      resFg: new Int32Array(sys.snapshot.floorGroups.length),
      resFgAllowed: new Uint8Array(sys.snapshot.floorGroups.length),
      resFgRank: new Int32Array(sys.snapshot.floorGroups.length),
      fgJson: [],
      rankJson: [],
    };
    RSOP_SCRATCH.set(sys, s);
  }
  // A new array holds no stamp: the counter goes on (the device stamps still hold earlier ones).
  if (s.ruleStamp.length < sys.rules_.length)
    s.ruleStamp = new Int32Array(Math.max(sys.rules_.length, s.ruleStamp.length * 2));
  if (s.counter >= 0x3fffffff) {
    s.counter = 0;
    s.acc.fill(0);
    s.ruleStamp.fill(0);
  }
  return s;
}

/** The record of the device at `index` (position in `snapshot.devices`), checked against the current snapshot once per snapshot. */
/** Floor groups, readers and floors are fixed for a compiled system's life (changing them recompiles). */
function floorGroupTables(sys: CompiledSystem) {
  const fgs = sys.snapshot.floorGroups;
  const fgReader = new Int32Array(fgs.length);
  const fgK = new Int32Array(fgs.length);
  const fgFloors: Int32Array[] = [];
  fgs.forEach((fg, i) => {
    const at = sys.floorGroupAt_.get(fg.id)!;
    fgReader[i] = at.reader;
    fgK[i] = at.k;
    fgFloors.push(Int32Array.from(fg.floors, (f) => sys.deviceIndex_.get(f)!.index_));
  });
  const byId = fgs.map((_, i) => i).sort((a, b) => (fgs[a]!.id < fgs[b]!.id ? -1 : fgs[a]!.id > fgs[b]!.id ? 1 : 0));
  const fgIdRank = new Int32Array(fgs.length);
  byId.forEach((position, rank) => {
    fgIdRank[position] = rank;
  });
  return { fgReader, fgK, fgFloors, fgIdRank, fgById: Int32Array.from(byId) };
}

function deviceRecord(sys: CompiledSystem, s: RsopScratch, index: number): DeviceRecord {
  const known = s.deviceRecords[index];
  const snap = sys.snapshot;
  if (known !== undefined) {
    if (known.checked === snap) return known;
    if (known.src === snap.devices[index]) {
      known.checked = snap;
      return known;
    }
  }
  const d = snap.devices[index]!;
  const made: DeviceRecord = {
    src: d,
    checked: snap,
    id: d.id,
    name: d.name,
    created: d.created,
    type: d.type,
    publicIcon: d.publicIcon,
    readerType: d.readerType,
    json: null,
    jsonNode: null,
    jsonIndent: 0,
  };
  s.deviceRecords[index] = made;
  return made;
}

function ruleRecord(sys: CompiledSystem, s: RsopScratch, rank: number): RuleRecord {
  const r = sys.rules_[rank]!.rule_;
  const known = s.ruleRecords[rank];
  if (known !== undefined && known.src === r) return known;
  const made: RuleRecord = {
    src: r,
    type: r.type,
    id: r.id,
    startTime: r.startTime,
    stopTime: r.stopTime,
    recurring: r.recurring,
    allow: r.allow,
    authenticationPolicy: r.authenticationPolicy,
    groupId: r.groupId,
    json: null,
    jsonIndent: 0,
  };
  s.ruleRecords[rank] = made;
  return made;
}

/** Per call: a cloud node's reference, one object per node shared by every entry of the result. */
function nodeRefs(sys: CompiledSystem): (index: number) => RsopNodeRef {
  const made: (RsopNodeRef | undefined)[] = new Array(sys.nodes_.length);
  return (index) => {
    let ref = made[index];
    if (ref === undefined) {
      const n = sys.snapshot.cloudNodes[index]!;
      ref = { id: n.id, serialNumber: n.serialNumber, name: n.name };
      made[index] = ref;
    }
    return ref;
  };
}

/** Card alone, then card + PIN: the factor combinations of policyMask. */
const CARD = 1;
const CARD_AND_PIN = 4;

/** What the holders of one call share: the instant, the scope, the scratch (with each node's local time filled in). */
interface RsopCall {
  readonly sys: CompiledSystem;
  readonly s: RsopScratch;
  readonly at: number;
  readonly ids: readonly string[];
  readonly scope: string | undefined;
  readonly scopeIndex: number;
  /** The instant in the zone rules are `active` in: the system's, or the scope node's. */
  readonly activeLocal: number;
  readonly outcome: RuleOutcome;
}

/** Checks a call's arguments (QueryError naming every unknown id or bad option) and readies the scratch. */
function startCall(sys: CompiledSystem, holderIds: readonly string[], options: RsopOptions): RsopCall {
  const issues: Issue[] = [];
  const at = queryInstant(options.at, "at", issues);
  const scope = options.cloudNodeId;
  const scopeNode = scope === undefined ? undefined : sys.nodeIndex_.get(scope);
  if (scope !== undefined && scopeNode === undefined)
    issues.push({ code: "unknownId", path: ["cloudNodeId"], message: `Unknown cloud node id "${scope}".` });
  // A plain copy: the loop below runs no caller code, so the buffers reused across calls stay this call's.
  const ids = Array.from(holderIds);
  ids.forEach((id, i) => {
    if (!sys.holderIndex_.has(id))
      issues.push({ code: "unknownId", path: ["ids", i], message: `Unknown holder id "${id}".` });
  });
  if (issues.length > 0) throw new QueryError(issues);

  const activeZone = scopeNode === undefined ? sys.systemZone_ : scopeNode.zone_;
  const s = rsopScratch(sys);
  // The local day, weekday and time of day at each node, for the windows of the rules of its devices.
  const { nodeLocal, nodeDay, nodeWd, nodeTod } = s;
  for (let n = 0; n < sys.nodes_.length; n++) {
    const local = at + offsetAt(sys.nodes_[n]!.zone_, at);
    const day = Math.floor(local / MS_PER_DAY);
    nodeLocal[n] = local;
    nodeDay[n] = day;
    nodeWd[n] = weekdayOf(day);
    nodeTod[n] = local - day * MS_PER_DAY;
  }
  return {
    sys,
    s,
    at,
    ids,
    scope,
    scopeIndex: scopeNode === undefined ? -1 : scopeNode.index_,
    activeLocal: at + offsetAt(activeZone, at),
    outcome: newRuleOutcome(),
  };
}

/** One holder's RSOP as indexes: its rules' ranks (sorted); its devices and floor groups in the scratch's `res…` arrays. */
interface HolderCore {
  readonly index: number;
  readonly h: Holder;
  readonly sorted: readonly number[];
  readonly devices: number;
  readonly floorGroups: number;
}

/** Sorts the first `count` numbers of `a`: an insertion sort (a holder has tens of rules, and this beats a sort with a comparator there). */
function sortAscending(a: number[] | Int32Array, count: number): void {
  for (let i = 1; i < count; i++) {
    const v = a[i]!;
    let j = i - 1;
    while (j >= 0 && a[j]! > v) {
      a[j + 1] = a[j]!;
      j--;
    }
    a[j + 1] = v;
  }
}

/** The RSOP of holder `id` as indexes (HolderCore), valid until the next holder's. */
function holderCore(call: RsopCall, id: string): HolderCore {
  const { sys, s } = call;
  const index = sys.holderIndex_.get(id)!;
  const h = sys.holders_[index]!;
  const stamp = ++s.counter;
  const sorted = holderRanks(call, index, stamp);
  const reachedCount = accumulateDevices(call, sorted, stamp);
  const fgCount = collectFloorGroups(call, sorted, stamp);
  devicesInIdOrder(call, reachedCount);
  resolveDevices(call, index, h, reachedCount);
  resolveFloorGroups(call, index, fgCount, stamp);
  return { index, h, sorted, devices: reachedCount, floorGroups: fgCount };
}

/** The ranks of the rules of holder `index`'s groups (within the scope), each once, ascending. */
function holderRanks(call: RsopCall, index: number, stamp: number): number[] {
  const { sys, s, scope } = call;
  const ruleStamp = s.ruleStamp;
  const sorted: number[] = [];
  for (let gi = holderGroupFrom(sys, index), end = holderGroupTo(sys, index); gi < end; gi++)
    for (const rank of sys.rulesOfGroup_[sys.holderGroups_[gi]!]!) {
      if (ruleStamp[rank] === stamp || (scope !== undefined && !sys.nodesOfRule_[rank]!.has(scope))) continue;
      ruleStamp[rank] = stamp;
      sorted.push(rank);
    }
  sortAscending(sorted, sorted.length);
  return sorted;
}

/**
 * Devices of the holder's door rules, once each: their minimums in `acc` and their positions in id
 * order marked in `idOrderBits` (within the scope). The rules come in rank order, so the first
 * applicable rule of each kind a device meets is its smallest (evaluateRules per device, over the
 * holder's rules instead of the device's run). Returns the number of devices marked.
 */
function accumulateDevices(call: RsopCall, sorted: readonly number[], stamp: number): number {
  const { sys, s, scopeIndex } = call;
  const data = sys.ruleData_;
  const cal = sys.calendarData_;
  const { deviceNode, devicePolicy, acc, nodeDay, nodeWd, nodeTod } = s;
  const order = s.idOrderBits;
  const idOrder = sys.deviceIdOrder_;
  let reachedCount = 0;
  for (let i = 0; i < sorted.length; i++) {
    const rank = sorted[i]!;
    const base = rank * RULE_STRIDE;
    const flags = data[base + R_FLAGS]!;
    const isAllow = (flags & RF_ALLOW) !== 0;
    const maxLevel = flags >>> RF_THREAT_SHIFT;
    const policy = data[base + R_POLICY]!;
    const devices = sys.ruleDevices_[rank]!;
    // A rule's devices mostly share one node: its window is read once per run of them.
    let openAt = -1;
    let open = false;
    for (let j = 0; j < devices.length; j++) {
      const d = devices[j]!;
      const n = deviceNode[d]!;
      const a = d * D_STRIDE;
      if (acc[a + D_STAMP] !== stamp) {
        acc[a + D_STAMP] = stamp;
        acc[a + D_DENY] = NONE;
        acc[a + D_ALLOW] = NONE;
        acc[a + D_CARD] = NONE;
        acc[a + D_CARD_PIN] = NONE;
        acc[a + D_THREAT] = NONE;
        if (scopeIndex < 0 || n === scopeIndex) {
          const position = idOrder[d]!;
          order[position >> 5]! |= 1 << (position & 31);
          reachedCount++;
        }
      }
      if (n !== openAt) {
        openAt = n;
        open = ruleOpen(data, cal, base, nodeDay[n]!, nodeWd[n]!, nodeTod[n]!);
      }
      if (!open) continue;
      if (!isAllow) {
        if (acc[a + D_DENY] === NONE) acc[a + D_DENY] = rank;
        continue;
      }
      if (maxLevel < sys.nodes_[n]!.threatLevel_) {
        if (acc[a + D_THREAT] === NONE) acc[a + D_THREAT] = rank;
        continue;
      }
      if (acc[a + D_ALLOW] === NONE) acc[a + D_ALLOW] = rank;
      const accepts = policy & devicePolicy[d]!;
      if ((accepts & CARD) !== 0 && acc[a + D_CARD] === NONE) acc[a + D_CARD] = rank;
      if ((accepts & CARD_AND_PIN) !== 0 && acc[a + D_CARD_PIN] === NONE) acc[a + D_CARD_PIN] = rank;
    }
  }
  return reachedCount;
}

/** Floor groups of the holder's elevator rules (within the scope), once each, as ranks in floor-group id order in `fgFound`; returns their count. */
function collectFloorGroups(call: RsopCall, sorted: readonly number[], stamp: number): number {
  const { sys, s, scopeIndex } = call;
  const { fgStamp, fgFound, deviceNode } = s;
  let fgCount = 0;
  for (let i = 0; i < sorted.length; i++) {
    const r = sys.rules_[sorted[i]!]!.rule_;
    for (const fg of r.floorGroups) {
      const position = sys.floorGroupIndex_.get(fg)!;
      if (fgStamp[position] === stamp) continue;
      fgStamp[position] = stamp;
      if (scopeIndex < 0 || deviceNode[s.fgReader[position]!] === scopeIndex)
        fgFound[fgCount++] = s.fgIdRank[position]!;
    }
  }
  return fgCount;
}

/** The reached devices in id order into `byIdOrder`: their positions' bits, read back word by word (and cleared). */
function devicesInIdOrder(call: RsopCall, reachedCount: number): void {
  const { sys, s } = call;
  const order = s.idOrderBits;
  if (s.byIdOrder.length < reachedCount) s.byIdOrder = new Int32Array(sys.devices_.length);
  const byIdOrder = s.byIdOrder;
  for (let w = 0, k = 0; k < reachedCount; w++) {
    let b = order[w]!;
    if (b === 0) continue;
    order[w] = 0;
    while (b !== 0) {
      const low = b & -b;
      b ^= low;
      byIdOrder[k++] = (w << 5) + (31 - Math.clz32(low));
    }
  }
}

/** Each reached device's answer (allowed, deciding rank) into `resDevice`, `resAllowed`, `resRank`. */
function resolveDevices(call: RsopCall, index: number, h: Holder, reachedCount: number): void {
  const { sys, s, at, outcome } = call;
  const { deviceNode, acc, nodeLocal, byIdOrder } = s;
  const hasPin = (h.pin ?? h.duressPin) !== null;
  const enabled = h.enabled;
  const from = holderActiveFrom(sys, index);
  const to = holderExpiresAt(sys, index);
  const { resDevice, resAllowed, resRank } = s;
  for (let i = 0; i < reachedCount; i++) {
    const d = s.indexById[byIdOrder[i]!]!;
    let allowed = false;
    let rank = NONE;
    if (s.deviceReader[d] === 1) {
      // Elevator rules reach a floor group's reader too: its own run decides (rare for door rules).
      const access = scanAccess(sys, sys.devices_[d]!, index, at, outcome);
      allowed = access.allowed;
      rank = access.rank;
    } else {
      // scanAccess's steps on the accumulated minimums.
      const local = nodeLocal[deviceNode[d]!]!;
      if (enabled && local >= from && local < to) {
        const a = d * D_STRIDE;
        if (acc[a + D_DENY] !== NONE) rank = acc[a + D_DENY]!;
        else if (acc[a + D_ALLOW] !== NONE) {
          if (acc[a + D_CARD] !== NONE) {
            allowed = true;
            rank = acc[a + D_CARD]!;
          } else if (!hasPin) rank = acc[a + D_ALLOW]!;
          else {
            allowed = true;
            rank = acc[a + D_CARD_PIN]!;
          }
        } else rank = acc[a + D_THREAT]!;
      }
    }
    resDevice[i] = d;
    resAllowed[i] = allowed ? 1 : 0;
    resRank[i] = rank;
  }
}

/** Floor groups in id order; one scan per reader (its outcome kept for the reader's other floor groups). */
function resolveFloorGroups(call: RsopCall, index: number, fgCount: number, stamp: number): void {
  const { sys, s, at, outcome } = call;
  const fgFound = s.fgFound;
  sortAscending(fgFound, fgCount);
  for (let i = 0; i < fgCount; i++) {
    const position = s.fgById[fgFound[i]!]!;
    const readerIndex = s.fgReader[position]!;
    const reader = sys.devices_[readerIndex]!;
    if (reader.wide_ || s.readerStamp[readerIndex] !== stamp) {
      const access = scanAccess(sys, reader, index, at, outcome);
      s.readerStamp[readerIndex] = stamp;
      s.readerAllowed[readerIndex] = access.allowed ? 1 : 0;
      s.readerFactor[readerIndex] = access.factor;
      s.readerLocal[readerIndex] = access.local;
      s.readerMask[readerIndex] = outcome.mask_;
      s.lastWide = reader.wide_ ? outcome.wideHits_ : null;
    }
    const k = s.fgK[position]!;
    const reaches = reader.wide_
      ? s.lastWide !== null && s.lastWide.has(k)
      : ((s.readerMask[readerIndex]! >> k) & 1) === 1;
    const allowed = s.readerAllowed[readerIndex] === 1 && reaches;
    s.resFg[i] = position;
    s.resFgAllowed[i] = allowed ? 1 : 0;
    s.resFgRank[i] = allowed
      ? minRankReaching(sys, reader, index, s.readerFactor[readerIndex]!, s.readerLocal[readerIndex]!, k)
      : NONE;
  }
}

/** The `groups` of an RSOP holder: each of its groups' id and name, in the holder's order. */
function holderGroups(sys: CompiledSystem, h: Holder): { id: string; name: string }[] {
  return h.groups.map((g) => ({ id: g, name: sys.groups_[sys.groupIndex_.get(g)!]!.name }));
}

/** The RSOP holder object of a HolderCore. */
function holderObject(call: RsopCall, core: HolderCore, nodeRef: (index: number) => RsopNodeRef): RsopHolder {
  const { sys, s, activeLocal } = call;
  const { sorted, h } = core;
  const snap = sys.snapshot;
  const rules: RsopRule[] = new Array(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    const rank = sorted[i]!;
    const r = ruleRecord(sys, s, rank);
    rules[i] = {
      type: r.type,
      id: r.id,
      startTime: r.startTime,
      stopTime: r.stopTime,
      recurring: r.recurring.slice(),
      allow: r.allow,
      authenticationPolicy: r.authenticationPolicy,
      groupId: r.groupId,
      active: windowContains(sys.ruleData_, sys.calendarData_, rank, activeLocal),
    };
  }
  const devices: RsopDevice[] = new Array(core.devices);
  for (let i = 0; i < core.devices; i++) {
    const d = s.resDevice[i]!;
    const rec = deviceRecord(sys, s, d);
    const rank = s.resRank[i]!;
    devices[i] = {
      id: rec.id,
      name: rec.name,
      created: rec.created,
      type: rec.type,
      publicIcon: rec.publicIcon,
      readerType: rec.readerType,
      cloudNode: nodeRef(s.deviceNode[d]!),
      allowed: s.resAllowed[i] === 1,
      activeRuleId: rank === NONE ? null : sys.ruleIds_[rank]!,
    };
  }
  const floorGroups: RsopFloorGroup[] = new Array(core.floorGroups);
  for (let i = 0; i < core.floorGroups; i++) {
    const position = s.resFg[i]!;
    const fg = snap.floorGroups[position]!;
    const readerIndex = s.fgReader[position]!;
    const readerDevice = deviceRecord(sys, s, readerIndex);
    const floorIndexes = s.fgFloors[position]!;
    const floors: { id: string; name: string; type: string }[] = new Array(floorIndexes.length);
    for (let f = 0; f < floorIndexes.length; f++) {
      const dev = deviceRecord(sys, s, floorIndexes[f]!);
      floors[f] = { id: dev.id, name: dev.name, type: dev.type };
    }
    const rank = s.resFgRank[i]!;
    floorGroups[i] = {
      id: fg.id,
      name: fg.name,
      readerPort: { id: readerDevice.id, name: readerDevice.name, cloudNode: nodeRef(s.deviceNode[readerIndex]!) },
      floors,
      allowed: s.resFgAllowed[i] === 1,
      activeRuleId: rank === NONE ? null : sys.ruleIds_[rank]!,
    };
  }
  return { id: h.id, enabled: h.enabled, groups: holderGroups(sys, h), rules, devices, floorGroups };
}

/** Computes RSOP. Throws QueryError naming every unknown id or bad option. */
export function computeRsop(sys: CompiledSystem, holderIds: readonly string[], options: RsopOptions): RsopResult {
  const call = startCall(sys, holderIds, options);
  const nodeRef = nodeRefs(sys);
  const holders = call.ids.map((id) => holderObject(call, holderCore(call, id), nodeRef));
  return { date: isoInstant(call.at), holders };
}

/** UTF-8 of the JSON text made here (JSON.stringify escapes lone surrogates). */
const UTF8 = new TextEncoder();

/**
 * Bytes of the JSON of an RSOP answer, appended piece by piece to one array kept from call to call
 * (no caller code runs while it is filled); the answer is a copy of what was written.
 */
class JsonBytes {
  buf = new Uint8Array(1 << 16);
  n = 0;

  /** Appends bytes: short pieces byte by byte, longer ones with one copy. */
  put(b: Uint8Array): void {
    const length = b.length;
    const n = this.n;
    if (n + length > this.buf.length) this.grow(length);
    const buf = this.buf;
    if (length > 24) buf.set(b, n);
    else for (let i = 0; i < length; i++) buf[n + i] = b[i]!;
    this.n = n + length;
  }

  /** Appends the UTF-8 of `text`. */
  text(text: string): void {
    this.put(UTF8.encode(text));
  }

  grow(more: number): void {
    const grown = new Uint8Array(Math.max(this.n + more, this.buf.length * 2));
    grown.set(this.buf.subarray(0, this.n));
    this.buf = grown;
  }
}

const BYTES = new JsonBytes();
/** The most room JsonBytes keeps between calls. */
const KEPT_BYTES = 1 << 22;

/**
 * The pieces of RSOP's JSON around its entries for one indentation (0: compact), as
 * `JSON.stringify(result, null, indent)` lays them out: the nesting of an RSOP result is fixed, so
 * each entry's place (depth) is known and its pieces can be made once.
 */
interface Layout {
  readonly indent: number;
  /** A line break and the padding of depth d ("" when compact). */
  readonly nl: readonly string[];
  /** After a key's colon: " ", or "" when compact. */
  readonly sp: string;
  /** Before each entry of a holder's rules, devices and floor groups (depth 4), and each holder (depth 2). */
  readonly entrySep: Uint8Array;
  readonly firstEntry: Uint8Array;
  readonly holderSep: Uint8Array;
  readonly firstHolder: Uint8Array;
  /** A rule's `active` value and the end of its entry. */
  readonly active: Uint8Array;
  readonly inactive: Uint8Array;
  /** A device's or floor group's `allowed` value up to the `activeRuleId` value. */
  readonly allowed: Uint8Array;
  readonly notAllowed: Uint8Array;
  /** `activeRuleId` null, and the end of the entry. */
  readonly nullClose: Uint8Array;
  /** The end of the entry after an `activeRuleId` value. */
  readonly close: string;
  /** The end of a holder's list of entries (depth 3), after none or after some. */
  readonly endEmpty: Uint8Array;
  readonly endList: Uint8Array;
  readonly devices: string;
  readonly floorGroups: string;
  readonly holderEnd: Uint8Array;
}

const LAYOUTS = new Map<number, Layout>();

/** The layout of `indent` spaces per level, as JSON.stringify takes it (clamped to 0 … 10). */
function layoutOf(indent: number): Layout {
  const known = LAYOUTS.get(indent);
  if (known !== undefined) return known;
  const nl = Array.from({ length: 7 }, (_, d) => (indent === 0 ? "" : `\n${" ".repeat(d * indent)}`));
  const sp = indent === 0 ? "" : " ";
  const made: Layout = {
    indent,
    nl,
    sp,
    entrySep: UTF8.encode(`,${nl[4]}`),
    firstEntry: UTF8.encode(nl[4]!),
    holderSep: UTF8.encode(`,${nl[2]}`),
    firstHolder: UTF8.encode(nl[2]!),
    active: UTF8.encode(`true${nl[4]}}`),
    inactive: UTF8.encode(`false${nl[4]}}`),
    allowed: UTF8.encode(`true,${nl[5]}"activeRuleId":${sp}`),
    notAllowed: UTF8.encode(`false,${nl[5]}"activeRuleId":${sp}`),
    nullClose: UTF8.encode(`null${nl[4]}}`),
    close: `${nl[4]}}`,
    endEmpty: UTF8.encode("]"),
    endList: UTF8.encode(`${nl[3]}]`),
    devices: `,${nl[3]}"devices":${sp}[`,
    floorGroups: `,${nl[3]}"floorGroups":${sp}[`,
    holderEnd: UTF8.encode(`${nl[2]}}`),
  };
  LAYOUTS.set(indent, made);
  return made;
}

/** `JSON.stringify(value, null, indent)` placed at depth `depth` of the layout (its line breaks padded). */
function placed(value: unknown, L: Layout, depth: number): string {
  const json = JSON.stringify(value, null, L.indent);
  return L.indent === 0 ? json : json.replaceAll("\n", L.nl[depth]!);
}

/**
 * The bytes of an entry at depth 4 (a holder's rule, device or floor group) up to the value of its
 * member `key`, which comes after `value`'s members: the entry's JSON, open for `key`.
 */
function entryUpTo(value: object, L: Layout, key: string): Uint8Array {
  const json = placed(value, L, 4);
  // Without its closing brace (and the line break before it): the object is never empty.
  const body = json.slice(0, json.length - 1 - L.nl[4]!.length);
  return UTF8.encode(`${body},${L.nl[5]}${JSON.stringify(key)}:${L.sp}`);
}

/** The JSON of `activeRuleId` for a deciding rank (NONE: null) and the entry's end, kept per rank while the rank names the same id. */
function ruleIdJson(sys: CompiledSystem, s: RsopScratch, L: Layout, rank: number): Uint8Array {
  if (rank === NONE) return L.nullClose;
  const id = sys.ruleIds_[rank]!;
  let made = s.rankJson[rank];
  if (made === undefined || made.id !== id || made.indent !== L.indent) {
    made = { id, indent: L.indent, bytes: UTF8.encode(`${JSON.stringify(id)}${L.close}`) };
    s.rankJson[rank] = made;
  }
  return made.bytes;
}

/** Appends a list of `count` entries at depth 4, each written by `entry`, and the list's end. */
function entries(out: JsonBytes, L: Layout, count: number, entry: (i: number) => void): void {
  for (let i = 0; i < count; i++) {
    out.put(i === 0 ? L.firstEntry : L.entrySep);
    entry(i);
  }
  out.put(count === 0 ? L.endEmpty : L.endList);
}

/** Appends the JSON of a HolderCore's holder at depth 2: what JSON.stringify gives for holderObject's object. */
function holderJson(
  call: RsopCall,
  core: HolderCore,
  nodeRef: (index: number) => RsopNodeRef,
  L: Layout,
  out: JsonBytes,
): void {
  const { sys, s, activeLocal } = call;
  const { sorted, h } = core;
  const snap = sys.snapshot;
  const { nl, sp } = L;
  out.text(
    `{${nl[3]}"id":${sp}${JSON.stringify(h.id)},${nl[3]}"enabled":${sp}${h.enabled},${nl[3]}"groups":${sp}${placed(holderGroups(sys, h), L, 3)},${nl[3]}"rules":${sp}[`,
  );
  entries(out, L, sorted.length, (i) => {
    const rank = sorted[i]!;
    const r = ruleRecord(sys, s, rank);
    if (r.json === null || r.jsonIndent !== L.indent) {
      const { type, id, startTime, stopTime, recurring, allow, authenticationPolicy, groupId } = r;
      r.json = entryUpTo(
        { type, id, startTime, stopTime, recurring, allow, authenticationPolicy, groupId },
        L,
        "active",
      );
      r.jsonIndent = L.indent;
    }
    out.put(r.json);
    out.put(windowContains(sys.ruleData_, sys.calendarData_, rank, activeLocal) ? L.active : L.inactive);
  });
  out.text(L.devices);
  entries(out, L, core.devices, (i) => {
    const d = s.resDevice[i]!;
    const rec = deviceRecord(sys, s, d);
    const n = s.deviceNode[d]!;
    const node = snap.cloudNodes[n]!;
    if (rec.json === null || rec.jsonNode !== node || rec.jsonIndent !== L.indent) {
      const { id, name, created, type, publicIcon, readerType } = rec;
      rec.json = entryUpTo({ id, name, created, type, publicIcon, readerType, cloudNode: nodeRef(n) }, L, "allowed");
      rec.jsonNode = node;
      rec.jsonIndent = L.indent;
    }
    out.put(rec.json);
    out.put(s.resAllowed[i] === 1 ? L.allowed : L.notAllowed);
    out.put(ruleIdJson(sys, s, L, s.resRank[i]!));
  });
  out.text(L.floorGroups);
  entries(out, L, core.floorGroups, (i) => {
    const position = s.resFg[i]!;
    let made = s.fgJson[position];
    if (made === undefined || made.checked !== snap || made.indent !== L.indent) {
      // Its floor group, reader, floors and node may each have changed: made again once per snapshot.
      const fg = snap.floorGroups[position]!;
      const readerIndex = s.fgReader[position]!;
      const reader = deviceRecord(sys, s, readerIndex);
      const floors = Array.from(s.fgFloors[position]!, (f) => {
        const dev = deviceRecord(sys, s, f);
        return { id: dev.id, name: dev.name, type: dev.type };
      });
      const readerPort = { id: reader.id, name: reader.name, cloudNode: nodeRef(s.deviceNode[readerIndex]!) };
      made = {
        checked: snap,
        indent: L.indent,
        bytes: entryUpTo({ id: fg.id, name: fg.name, readerPort, floors }, L, "allowed"),
      };
      s.fgJson[position] = made;
    }
    out.put(made.bytes);
    out.put(s.resFgAllowed[i] === 1 ? L.allowed : L.notAllowed);
    out.put(ruleIdJson(sys, s, L, s.resFgRank[i]!));
  });
  out.put(L.holderEnd);
}

/**
 * RSOP as the UTF-8 bytes of its JSON: exactly `JSON.stringify(computeRsop(sys, holderIds, options),
 * null, indent)`, encoded, built from each device's, rule's and floor group's JSON made once and kept
 * (records follow the snapshot's objects, as computeRsop's do) instead of serializing every entry of
 * every call.
 */
export function computeRsopJsonBytes(
  sys: CompiledSystem,
  holderIds: readonly string[],
  options: RsopOptions,
  indent = 0,
): Uint8Array {
  const call = startCall(sys, holderIds, options);
  // As JSON.stringify reads its space argument.
  const L = layoutOf(Math.max(0, Math.min(10, Math.floor(Number.isFinite(indent) ? indent : 0))));
  const nodeRef = nodeRefs(sys);
  const out = BYTES;
  out.n = 0;
  const { nl, sp } = L;
  out.text(`{${nl[1]}"date":${sp}${JSON.stringify(isoInstant(call.at))},${nl[1]}"holders":${sp}[`);
  for (let i = 0; i < call.ids.length; i++) {
    out.put(i === 0 ? L.firstHolder : L.holderSep);
    holderJson(call, holderCore(call, call.ids[i]!), nodeRef, L, out);
  }
  out.text(call.ids.length === 0 ? `]${nl[0]}}` : `${nl[1]}]${nl[0]}}`);
  const answer = out.buf.slice(0, out.n);
  // A very large answer's room is not kept for the next ones.
  if (out.buf.length > KEPT_BYTES) out.buf = new Uint8Array(1 << 16);
  return answer;
}
