// The change events of one accepted write: which entities its patches reached, and for each whether
// it was added, modified or removed, found by comparing the snapshot before and after by id. A
// holder's (1.0: person's) credentials are entities of their own; a holder added or removed brings
// its credentials' events along (docs/semantics.md W6).
import type { PatchLike } from "../compile/index.js";
import { THREAT_LEVEL_TOPIC } from "./topics.js";
import type { ChangeEvent, EntityType, ThreatLevelEvent } from "./types.js";

export type { PatchLike };

/** The input of changeEvents. */
export interface ChangeInput {
  /** The snapshot before the write (2.0 system or 1.0 panel, as the live system holds it). */
  readonly before: unknown;
  /** The snapshot after it. */
  readonly after: unknown;
  /** The write's patches (they say where to look; the snapshots say what changed). */
  readonly patches: readonly PatchLike[];
  /**
   * The write's inverse patches. When the patches address entities by key (a 2.0 live system's,
   * semantics L21), they and these say what changed, and the snapshots are read for the system id
   * only (a 2.0 live system's `current` will do: nothing is copied).
   */
  readonly inversePatches?: readonly PatchLike[];
  /** When the write was accepted (ISO 8601). */
  readonly occurredAt: string;
  /** Event ids; default random UUIDs. */
  readonly newId?: () => string;
}

interface Collection {
  readonly key: string;
  readonly type: EntityType;
  /** The entity's key within the collection (a custom field's id is unique within its partition only). */
  readonly keyOf: (e: Record<string, unknown>) => string;
  /** Whether its entities carry `credentials` that are entities of their own. */
  readonly credentials?: boolean;
}

const byId = (e: Record<string, unknown>) => String(e.id);
const byPartitionAndId = (e: Record<string, unknown>) => `${String(e.partition)}\u0000${String(e.id)}`;

const SYSTEM: readonly Collection[] = [
  { key: "partitions", type: "partition", keyOf: byId },
  { key: "customFields", type: "customField", keyOf: byPartitionAndId },
  { key: "cloudNodes", type: "cloudNode", keyOf: byId },
  { key: "connections", type: "connection", keyOf: byId },
  { key: "devices", type: "device", keyOf: byId },
  { key: "floorGroups", type: "floorGroup", keyOf: byId },
  { key: "groups", type: "group", keyOf: byId },
  { key: "holders", type: "holder", keyOf: byId, credentials: true },
  { key: "rules", type: "rule", keyOf: byId },
  { key: "calendars", type: "calendar", keyOf: byId },
  { key: "areas", type: "area", keyOf: byId },
];
const PANEL: readonly Collection[] = [
  { key: "partitions", type: "partition", keyOf: byId },
  { key: "attributes", type: "customField", keyOf: byPartitionAndId },
  { key: "connections", type: "connection", keyOf: byId },
  { key: "devices", type: "device", keyOf: byId },
  { key: "floorGroups", type: "floorGroup", keyOf: byId },
  { key: "groups", type: "group", keyOf: byId },
  { key: "persons", type: "holder", keyOf: byId, credentials: true },
  { key: "rules", type: "rule", keyOf: byId },
];
/** The top-level fields of a 1.0 panel that describe the cloud node itself. */
const PANEL_NODE_FIELDS = new Set(["name", "config", "ecards", "serialNumber"]);

type Entity = Record<string, unknown>;
const isObject = (x: unknown): x is Entity => typeof x === "object" && x !== null && !Array.isArray(x);

function same(a: unknown, b: unknown): boolean {
  // Unchanged entities are shared between snapshot versions (immer): compare references first.
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function list(snapshot: Entity, key: string): readonly Entity[] {
  const v = snapshot[key];
  return Array.isArray(v) ? (v as Entity[]) : [];
}

/**
 * The `entity.added|modified|removed` events of one accepted write.
 * @param input - the snapshots before and after the write, its patches, when it was accepted.
 * @returns the events, removals of a collection before its additions and modifications; empty
 *   when the write changed nothing.
 * @example
 * const before = live.snapshot;
 * const r = live.apply({ method: "POST", path: "/groups", body: { name: "Night" } });
 * changeEvents({ before, after: live.snapshot, patches: r.patches, occurredAt: new Date().toISOString() })
 *   .map((e) => `${e.topic} ${e.entityType}`); //=> ["entity.added group"]
 */
export function changeEvents(input: ChangeInput): ChangeEvent[] {
  if (!isObject(input.before) || !isObject(input.after)) return [];
  const before = input.before;
  const after = input.after;
  const panel = after.format === "rsop-panel/1";
  const systemId = String(panel ? after.serialNumber : after.systemId);
  const newId = input.newId ?? (() => crypto.randomUUID());
  const collections = panel ? PANEL : SYSTEM;
  const events: ChangeEvent[] = [];
  const emit = (topic: ChangeEvent["topic"], entityType: EntityType, entity: Entity) =>
    events.push({
      topic,
      id: newId(),
      occurredAt: input.occurredAt,
      systemId,
      entityType,
      entityId: entity.id as string | number,
      data: entity,
    });

  const keyed = !panel && input.inversePatches !== undefined ? keyedReach(input.patches, input.inversePatches) : null;
  if (keyed !== null) {
    for (const c of collections) {
      const reach = keyed.get(c.key);
      if (reach !== undefined) compareCollection(c, [...reach.keys()], (k) => reach.get(k)!, emit);
    }
    return events;
  }
  // Where the patches reach: per collection, the indexes they name (before and after), or all.
  const touched = new Map<string, Set<number> | "all">();
  let panelNode = false;
  for (const p of input.patches) {
    const [head, index] = p.path;
    if (typeof head !== "string") continue;
    if (panel && PANEL_NODE_FIELDS.has(head)) {
      panelNode = true;
      continue;
    }
    if (typeof index !== "number") touched.set(head, "all");
    else {
      const seen = touched.get(head);
      if (seen === "all") continue;
      if (seen === undefined) touched.set(head, new Set([index]));
      else seen.add(index);
    }
  }

  for (const c of collections) {
    const reach = touched.get(c.key);
    if (reach === undefined) continue;
    const was = list(before, c.key);
    const now = list(after, c.key);
    // The keys to compare, in the order the patches name them.
    const keys: string[] = [];
    const seen = new Set<string>();
    const consider = (e: Entity | undefined) => {
      if (!isObject(e)) return;
      const k = c.keyOf(e);
      if (!seen.has(k)) {
        seen.add(k);
        keys.push(k);
      }
    };
    if (reach === "all") {
      was.forEach(consider);
      now.forEach(consider);
    } else
      for (const i of reach) {
        consider(was[i]);
        consider(now[i]);
      }
    const find = (xs: readonly Entity[], k: string) => xs.find((e) => isObject(e) && c.keyOf(e) === k);
    compareCollection(c, keys, (k) => ({ was: find(was, k), now: find(now, k) }), emit);
  }
  if (panelNode) {
    const node = (s: Entity): Entity => ({
      id: s.serialNumber,
      serialNumber: s.serialNumber,
      name: s.name,
      config: s.config,
      ecards: s.ecards,
    });
    const a = node(before);
    const b = node(after);
    if (!same(a, b)) emit("entity.modified", "cloudNode", b);
  }
  return events;
}

/**
 * The `cloudNode.threatLevel.changed` events of one accepted write of a 2.0 system (TL1): one per
 * cloud node whose `threatLevel` (absent: 0) differs before and after it. A node added or removed
 * has no such event (its `entity.added`/`removed` says it all).
 * @example
 * const before = live.snapshot;
 * const r = live.apply({ method: "PUT", path: "/cloud-nodes/n-main/threat-level", body: { level: 3 } });
 * threatLevelEvents({ before, after: live.snapshot, patches: r.patches, inversePatches: r.inversePatches, occurredAt: "t" })
 *   .map((e) => [e.level, e.previous]); //=> [[3, 0]]
 */
export function threatLevelEvents(input: ChangeInput): ThreatLevelEvent[] {
  if (!isObject(input.before) || !isObject(input.after) || input.after.format === "rsop-panel/1") return [];
  const systemId = String(input.after.systemId);
  const newId = input.newId ?? (() => crypto.randomUUID());
  const pairs: { was: Entity | undefined; now: Entity | undefined }[] = [];
  const keyed = input.inversePatches !== undefined ? keyedReach(input.patches, input.inversePatches) : null;
  if (keyed !== null) pairs.push(...(keyed.get("cloudNodes")?.values() ?? []));
  else if (input.patches.some((p) => p.path[0] === "cloudNodes")) {
    const was = new Map(list(input.before, "cloudNodes").map((n) => [String(n.id), n]));
    for (const now of list(input.after, "cloudNodes")) pairs.push({ was: was.get(String(now.id)), now });
  }
  const level = (n: Entity): number => (typeof n.threatLevel === "number" ? n.threatLevel : 0);
  const out: ThreatLevelEvent[] = [];
  for (const { was, now } of pairs)
    if (was !== undefined && now !== undefined && level(was) !== level(now))
      out.push({
        topic: THREAT_LEVEL_TOPIC,
        id: newId(),
        occurredAt: input.occurredAt,
        systemId,
        cloudNodeId: String(now.id),
        level: level(now),
        previous: level(was),
      });
  return out;
}

type Emit = (topic: ChangeEvent["topic"], entityType: EntityType, entity: Entity) => void;

/** The events of one collection: per key, the entity before and after the write. */
function compareCollection(
  c: Collection,
  keys: readonly string[],
  at: (k: string) => { readonly was: Entity | undefined; readonly now: Entity | undefined },
  emit: Emit,
): void {
  const removed: Entity[] = [];
  const added: Entity[] = [];
  const modified: [Entity, Entity][] = [];
  for (const k of keys) {
    const { was: a, now: b } = at(k);
    if (a !== undefined && b === undefined) removed.push(a);
    else if (a === undefined && b !== undefined) added.push(b);
    else if (a !== undefined && b !== undefined && a !== b) modified.push([a, b]);
  }
  for (const e of removed) {
    if (c.credentials) for (const cr of credentialsOf(e)) emit("entity.removed", "credential", cr);
    emit("entity.removed", c.type, e);
  }
  for (const e of added) {
    emit("entity.added", c.type, e);
    if (c.credentials) for (const cr of credentialsOf(e)) emit("entity.added", "credential", cr);
  }
  for (const [a, b] of modified) {
    if (!c.credentials) {
      if (!same(a, b)) emit("entity.modified", c.type, b);
      continue;
    }
    const { credentials: ca, ...restA } = a;
    const { credentials: cb, ...restB } = b;
    if (!same(restA, restB)) emit("entity.modified", c.type, b);
    if (ca !== cb) credentialChanges(credentialsOf(a), credentialsOf(b), emit);
  }
}

/**
 * Per collection and key, the entity before and after keyed patches (L21): after, from the last
 * patch naming it; before, from the last inverse patch naming it (inverse patches run backwards, so
 * that one restores what was there first). Null when a patch is not keyed.
 */
function keyedReach(
  patches: readonly PatchLike[],
  inverse: readonly PatchLike[],
): Map<string, Map<string, { was: Entity | undefined; now: Entity | undefined }>> | null {
  const out = new Map<string, Map<string, { was: Entity | undefined; now: Entity | undefined }>>();
  const entry = (p: PatchLike) => {
    const [c, k] = p.path as readonly unknown[];
    if (p.path.length !== 2 || typeof c !== "string" || typeof k !== "string") return null;
    let m = out.get(c);
    if (m === undefined) out.set(c, (m = new Map()));
    let e = m.get(k);
    if (e === undefined) m.set(k, (e = { was: undefined, now: undefined }));
    return e;
  };
  const entityOf = (p: PatchLike): Entity | undefined => {
    const v = (p as { op?: unknown; value?: unknown }).value;
    return (p as { op?: unknown }).op === "remove" || !isObject(v) ? undefined : v;
  };
  for (const p of patches) {
    const e = entry(p);
    if (e === null) return null;
    e.now = entityOf(p);
  }
  const seen = new Set<object>();
  for (const p of inverse) {
    const e = entry(p);
    if (e === null) return null;
    e.was = entityOf(p);
    seen.add(e);
  }
  // A key the inverse patches do not name was not there before (an add undone by no patch: none).
  for (const m of out.values()) for (const e of m.values()) if (!seen.has(e)) e.was = undefined;
  return out;
}

function credentialsOf(holder: Entity): Entity[] {
  return Array.isArray(holder.credentials) ? (holder.credentials as unknown[]).filter(isObject) : [];
}

function credentialChanges(was: Entity[], now: Entity[], emit: Emit): void {
  const before = new Map(was.map((c) => [String(c.id), c]));
  const after = new Map(now.map((c) => [String(c.id), c]));
  for (const [id, c] of before) if (!after.has(id)) emit("entity.removed", "credential", c);
  for (const [id, c] of after) {
    const old = before.get(id);
    if (old === undefined) emit("entity.added", "credential", c);
    else if (!same(old, c)) emit("entity.modified", "credential", c);
  }
}
