// Incremental recompile: brings a CompiledSystem, in place, to what compileSnapshot(next) gives,
// touching only what the change reaches. The change is read from its patches: keyed patches
// (`[collection, key]` with the whole new element, semantics L21), whose old elements are the
// compiled system's own (the state they were made on may have been changed in place); or immer's
// patches by position (`path[0]` the collection, `path[1]` a position), whose entities at the
// touched positions are compared by id (and by object identity) between the compiled snapshot and
// `next`.
//
// Incremental: holders (create, update, delete, credentials, memberships, activation), groups
// (create, rename, delete), rules (create, update, delete), and fields nothing compiled reads
// (partitions, connections, names and other display fields of devices, floor groups and nodes).
// Everything else — a cloud node's zone, card formats, e-cards or offline settings, a device's
// compiled fields or its creation/removal, floor group readers and floors, the system zone, a
// calendar (rare; its days are one array, docs/semantics.md C3) — falls back to compileSnapshot(next).
import type { Group, Holder, Rule, SystemSnapshot } from "../model/index.js";
import { addHolder, changeHolderBegin, changeHolderEnd, removeHolder } from "./buildHolders.js";
import { linkRule, rebuildDeviceRun } from "./buildReach.js";
import { writeRule } from "./buildRules.js";
import type { CompiledDevice, CompiledRule, CompiledSystem } from "./compiledSystem.js";
import { compileSnapshot } from "./compileSnapshot.js";
import { RULE_STRIDE } from "./compileWindow.js";

/** A patch as immer makes it, as far as this library reads one: only `path`. */
export interface PatchLike {
  readonly path: readonly (string | number)[];
}

/** Device fields no compiled record reads (RSOP reads them from the snapshot). */
const DEVICE_DISPLAY = new Set([
  "name",
  "created",
  "publicIcon",
  "readerType",
  "partition",
  "port",
  "connection",
  "primaryReader",
  "osdpAddress",
  "wirelessAddress",
  "delay",
  "dwell",
  "dps",
]);
const FLOOR_GROUP_DISPLAY = new Set(["name", "partition"]);
const NODE_DISPLAY = new Set(["name", "serialNumber", "locale", "created", "threatLevel", "credentialResetsPerMonth"]);
/** Area fields decide does not compile: the name, and the marks the reset and forgive routes leave for the nodes (AB6). */
const AREA_INERT = new Set(["name", "lastReset", "forgiven"]);
/** Top-level keys nothing compiled reads. */
const INERT = new Set(["partitions", "connections", "customFields", "systemId", "format"]);

/** Which entity changes a set of patches makes, or null when only a full compile will do. */
interface Touched {
  holders: Set<number>;
  groups: Set<number>;
  rules: Set<number>;
}

function touchedPositions(prev: SystemSnapshot, next: SystemSnapshot, patches: readonly PatchLike[]): Touched | null {
  const t: Touched = { holders: new Set(), groups: new Set(), rules: new Set() };
  for (const p of patches) {
    const path = p.path;
    if (path.length === 0) return null;
    const key = path[0] as string;
    if (INERT.has(key)) continue;
    if (key === "holders" || key === "groups" || key === "rules") {
      if (path.length === 1) return null;
      const i = path[1];
      if (typeof i === "number") t[key].add(i);
      else if (i !== "length") {
        const n = Number(i);
        if (!Number.isInteger(n)) return null;
        t[key].add(n);
      }
      continue;
    }
    if (path.length >= 3) {
      const field = path[2] as string;
      if (key === "devices" && DEVICE_DISPLAY.has(field)) continue;
      if (key === "floorGroups" && FLOOR_GROUP_DISPLAY.has(field)) continue;
      if (key === "cloudNodes" && NODE_DISPLAY.has(field)) continue;
      if (key === "areas" && AREA_INERT.has(field)) continue;
    }
    return null;
  }
  // Positions between the two lengths changed too (growth, or a removal's `length` patch).
  for (const key of ["holders", "groups", "rules"] as const) {
    const a = prev[key].length;
    const b = next[key].length;
    for (let i = Math.min(a, b); i < Math.max(a, b); i++) t[key].add(i);
  }
  return t;
}

/** Per id at the touched positions: its object before and after (absent: created or deleted). */
function changesById<T extends { readonly id: string }>(
  prev: readonly T[],
  next: readonly T[],
  positions: ReadonlySet<number>,
): Map<string, { old?: T; neu?: T }> {
  const out = new Map<string, { old?: T; neu?: T }>();
  for (const i of positions) {
    const a = prev[i];
    const b = next[i];
    if (a === b) continue;
    if (a !== undefined) {
      const e = out.get(a.id);
      if (e === undefined) out.set(a.id, { old: a });
      else e.old = a;
    }
    if (b !== undefined) {
      const e = out.get(b.id);
      if (e === undefined) out.set(b.id, { neu: b });
      else e.neu = b;
    }
  }
  for (const [id, e] of out) if (e.old === e.neu) out.delete(id); // moved, unchanged
  return out;
}

function insertSorted(list: Int32Array, value: number): Int32Array {
  const out = new Int32Array(list.length + 1);
  let j = 0;
  while (j < list.length && list[j]! < value) out[j] = list[j++]!;
  out[j] = value;
  out.set(list.subarray(j), j + 1);
  return out;
}

function without(list: Int32Array, value: number): Int32Array {
  const j = list.indexOf(value);
  if (j < 0) return list;
  const out = new Int32Array(list.length - 1);
  out.set(list.subarray(0, j));
  out.set(list.subarray(j + 1), j);
  return out;
}

/**
 * Brings `sys` (compiled from its `snapshot`) to what compileSnapshot(next) would give, where
 * `next` is the snapshot after `patches`. Returns `sys`, changed in place, or a fresh compile when
 * the change is of a kind compiled globally (see the head of this file).
 */
export function updateCompiled(
  sys: CompiledSystem,
  next: SystemSnapshot,
  patches: readonly PatchLike[],
): CompiledSystem {
  const prev = sys.snapshot;
  if (prev === next) return sys;
  const byKey = keyedPatches(patches);
  let changes: Changes | null;
  if (byKey !== null) changes = keyedChanges(sys, byKey);
  else {
    const t = touchedPositions(prev, next, patches);
    changes =
      t === null
        ? null
        : {
            holders: changesById<Holder>(prev.holders, next.holders, t.holders),
            groups: changesById<Group>(prev.groups, next.groups, t.groups),
            rules: changesById<Rule>(prev.rules, next.rules, t.rules),
          };
  }
  if (changes === null || prev.timezone !== next.timezone) return compileSnapshot(next);
  // Threat levels (TL1) are the one node field changed in place: a lockdown reaches the doors at once.
  // Only a change that reached the cloud nodes can have moved one.
  if (patches.some((p) => p.path[0] === "cloudNodes"))
    for (const n of next.cloudNodes) {
      const node = sys.nodeIndex_.get(n.id);
      if (node !== undefined) node.threatLevel_ = n.threatLevel ?? 0;
    }
  applyChanges(sys, changes);
  sys.snapshot = next;
  return sys;
}

/** Per id of the holders, groups and rules a change reached: the object before and after (absent: created or deleted). */
interface Changes {
  readonly holders: Map<string, { old?: Holder; neu?: Holder }>;
  readonly groups: Map<string, { old?: Group; neu?: Group }>;
  readonly rules: Map<string, { old?: Rule; neu?: Rule }>;
}

/** A keyed patch (semantics L21): an element of a collection, by its key, with its whole new value. */
interface KeyedPatch {
  readonly op: "add" | "replace" | "remove";
  readonly c: string;
  readonly key: string;
  readonly value: unknown;
}

/** The patches as keyed patches, or null when one is not (addressed by position, a field, a top-level value). */
function keyedPatches(patches: readonly PatchLike[]): KeyedPatch[] | null {
  const out: KeyedPatch[] = [];
  for (const p of patches as readonly (PatchLike & { op?: unknown; value?: unknown })[]) {
    const [c, key] = p.path;
    if (p.path.length !== 2 || typeof c !== "string" || typeof key !== "string") return null;
    if (p.op !== "add" && p.op !== "replace" && p.op !== "remove") return null;
    out.push({ op: p.op, c, key, value: p.value });
  }
  return out;
}

/**
 * What keyed patches change, the old objects read from the compiled system itself (the state they
 * were made on may have been changed in place); null when a change needs a full compile: a cloud
 * node, device or floor group that comes or goes or changes beyond its display fields.
 */
function keyedChanges(sys: CompiledSystem, patches: readonly KeyedPatch[]): Changes | null {
  const out: Changes = { holders: new Map(), groups: new Map(), rules: new Map() };
  const last = new Map<string, KeyedPatch>();
  for (const p of patches) last.set(`${p.c}\u0000${p.key}`, p);
  for (const p of last.values()) {
    const neu = p.op === "remove" ? undefined : p.value;
    if (p.c === "holders") {
      const i = sys.holderIndex_.get(p.key);
      out.holders.set(p.key, { old: i === undefined ? undefined : sys.holders_[i]!, neu: neu as Holder | undefined });
    } else if (p.c === "groups") {
      const g = sys.groupIndex_.get(p.key);
      out.groups.set(p.key, { old: g === undefined ? undefined : sys.groups_[g]!, neu: neu as Group | undefined });
    } else if (p.c === "rules")
      out.rules.set(p.key, { old: sys.ruleIndex_.get(p.key)?.rule_, neu: neu as Rule | undefined });
    else if (p.c === "cloudNodes" || p.c === "devices" || p.c === "floorGroups" || p.c === "areas") {
      const display =
        p.c === "devices"
          ? DEVICE_DISPLAY
          : p.c === "floorGroups"
            ? FLOOR_GROUP_DISPLAY
            : p.c === "areas"
              ? AREA_INERT
              : NODE_DISPLAY;
      const old = sys.statics_[p.c].get(p.key);
      if (old === undefined || neu === undefined || !onlyDiffer(old, neu as object, display)) return null;
      sys.statics_[p.c].set(p.key, neu as object);
    } else if (!INERT.has(p.c)) return null;
  }
  for (const m of [out.holders, out.groups, out.rules] as Map<string, { old?: unknown; neu?: unknown }>[])
    for (const [id, e] of m) if (e.old === undefined && e.neu === undefined) m.delete(id);
  return out;
}

/** Whether `a` and `b` differ at most in `fields` (compared by reference: entities share what did not change). */
function onlyDiffer(a: object, b: object, fields: ReadonlySet<string>): boolean {
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (const k of Object.keys(x)) if (!fields.has(k) && x[k] !== y[k] && !sameJson(x[k], y[k])) return false;
  for (const k of Object.keys(y)) if (!fields.has(k) && !Object.hasOwn(x, k)) return false;
  return true;
}

function sameJson(a: unknown, b: unknown): boolean {
  return typeof a === "object" && typeof b === "object" && JSON.stringify(a) === JSON.stringify(b);
}

/** Brings `sys` to the change: what the holders, groups and rules in `changes` make of it. */
function applyChanges(sys: CompiledSystem, changes: Changes): void {
  const { holders, groups, rules } = changes;

  // 1. Take out what changed, while the old group indexes still hold: deleted holders, and the
  // credentials and PINs changed holders give up (before anyone may take them).
  for (const [id, e] of holders) {
    if (e.old === undefined) continue;
    const i = sys.holderIndex_.get(id)!;
    if (e.neu === undefined) removeHolder(sys, i);
    else changeHolderBegin(sys, i, e.neu);
  }
  const dirty = new Set<CompiledDevice>();
  let reorder = false;
  for (const [id, e] of rules) {
    if (e.old === undefined) {
      reorder = true;
      continue;
    }
    const rule = sys.ruleIndex_.get(id)!;
    linkRule(sys, rule, dirty, true);
    if (e.old.enabled && e.old.action !== "unlock") {
      const g = sys.groupIndex_.get(e.old.groupId)!;
      sys.rulesOfGroup_[g] = without(sys.rulesOfGroup_[g]!, rule.rank_);
    }
    if (e.neu === undefined) {
      reorder = true;
      sys.ruleIndex_.delete(id);
      rule.rank_ = -1; // marks it deleted for renumberRules
    }
  }

  // 2. Groups: stable indexes, a free list (an index freed here is reused only by a later change,
  // so that a changed holder's old and new group indexes never name two groups).
  const freed: number[] = [];
  for (const [id, e] of groups) {
    if (e.neu === undefined) {
      const g = sys.groupIndex_.get(id)!;
      sys.groupIndex_.delete(id);
      sys.groups_[g] = null;
      freed.push(g);
    } else if (e.old === undefined) {
      const g = sys.freeGroups_.length > 0 ? sys.freeGroups_.pop()! : sys.groups_.length;
      sys.groupIndex_.set(id, g);
      sys.groups_[g] = e.neu;
      sys.rulesOfGroup_[g] = new Int32Array(0);
      sys.holdersOfGroup_[g] = [];
    } else sys.groups_[sys.groupIndex_.get(id)!] = e.neu;
  }
  sys.freeGroups_.push(...freed);

  // 3. Rules: when ids come or go, ranks are renumbered (a monotone map, so every run keeps its
  // order); then the changed rules are written and linked, and the runs they reach rebuilt.
  if (reorder) renumberRules(sys, rules);
  for (const [id, e] of rules) {
    if (e.neu === undefined) continue;
    const rule = sys.ruleIndex_.get(id)!;
    rule.rule_ = e.neu;
    writeRule(sys, rule);
    linkRule(sys, rule, dirty);
    if (e.neu.enabled && e.neu.action !== "unlock") {
      const g = sys.groupIndex_.get(e.neu.groupId)!;
      sys.rulesOfGroup_[g] = insertSorted(sys.rulesOfGroup_[g]!, rule.rank_);
    }
  }
  for (const d of dirty) rebuildDeviceRun(sys, d);

  // 4. Holders, against the new group indexes.
  for (const [id, e] of holders) {
    if (e.neu === undefined) continue;
    if (e.old === undefined) addHolder(sys, e.neu);
    else changeHolderEnd(sys, sys.holderIndex_.get(id)!, e.neu);
  }
}

/** New ranks in id order after rules were created or deleted (`changes`), applied everywhere ranks are kept. */
function renumberRules(sys: CompiledSystem, changes: ReadonlyMap<string, { old?: Rule; neu?: Rule }>): void {
  const oldRules = sys.rules_;
  const created: CompiledRule[] = [];
  for (const [id, e] of changes) {
    if (e.old !== undefined || e.neu === undefined) continue;
    const rule: CompiledRule = { id, rank_: -1, rule_: e.neu, group_: -1 };
    sys.ruleIndex_.set(id, rule);
    created.push(rule);
  }
  created.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // Merge the surviving rules (in rank order) with the created ones.
  const map = new Int32Array(oldRules.length).fill(-1);
  const rules: CompiledRule[] = [];
  const ruleIds: string[] = [];
  const ruleDevices: (readonly number[])[] = [];
  const nodesOfRule: ReadonlySet<string>[] = [];
  const data = new Int32Array(sys.ruleIndex_.size * RULE_STRIDE);
  const oldData = sys.ruleData_;
  let c = 0;
  for (let rank = 0; rank <= oldRules.length; rank++) {
    const survivor = rank < oldRules.length && oldRules[rank]!.rank_ >= 0 ? oldRules[rank]! : null;
    if (rank < oldRules.length && survivor === null) continue;
    while (c < created.length && (survivor === null || created[c]!.id < survivor.id)) {
      const rule = created[c++]!;
      rule.rank_ = rules.length;
      rules.push(rule);
      ruleIds.push(rule.id);
      ruleDevices.push([]);
      nodesOfRule.push(new Set());
    }
    if (survivor === null) break;
    const to = rules.length;
    map[rank] = to;
    for (let j = 0; j < RULE_STRIDE; j++) data[to * RULE_STRIDE + j] = oldData[rank * RULE_STRIDE + j]!;
    survivor.rank_ = to;
    rules.push(survivor);
    ruleIds.push(survivor.id);
    ruleDevices.push(sys.ruleDevices_[rank]!);
    nodesOfRule.push(sys.nodesOfRule_[rank]!);
  }
  sys.rules_ = rules;
  sys.ruleIds_ = ruleIds;
  sys.ruleDevices_ = ruleDevices;
  sys.nodesOfRule_ = nodesOfRule;
  sys.ruleData_ = data;
  for (const d of sys.devices_) {
    const pairs = d.pairs_;
    for (let k = 0; k < pairs.length; k += 2) pairs[k] = map[pairs[k]!]!;
  }
  for (let g = 0; g < sys.rulesOfGroup_.length; g++) {
    const ranks = sys.rulesOfGroup_[g]!;
    for (let j = 0; j < ranks.length; j++) ranks[j] = map[ranks[j]!]!;
  }
}
