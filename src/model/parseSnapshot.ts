// Loads an `rsop-system/1` snapshot: schema checks, then every check across entities. All problems
// are collected and returned at once; a snapshot with any problem is refused as a whole.
import { IANAZone } from "luxon";
import { type Issue, type IssueCode, type Result, SnapshotError, err, ok } from "./issue.js";
import { DEFAULT_CARD_FORMAT_ID, KNOWN_CARD_FORMATS } from "./cardFormats.js";
import { validateCardFormat } from "./validateCardFormat.js";
import { z } from "zod";
import {
  ELEVATOR_READER_TYPES,
  cloudNodeSchema,
  connectionSchema,
  deviceSchema,
  floorGroupSchema,
  groupSchema,
  holderSchema,
  partitionSchema,
  ruleSchema,
  systemSnapshotSchema,
} from "./systemSchema.js";
import type { CardFormat, CloudNode, Device, Holder, Partition, SystemSnapshot } from "./types.js";
import { fromZodIssues, quote, zodMessage } from "./zodIssues.js";

type Path = (string | number)[];

/** The format a node uses when it lists none: the standard 26-bit format. */
export function defaultCardFormat(): CardFormat {
  const known = KNOWN_CARD_FORMATS[DEFAULT_CARD_FORMAT_ID]!;
  return {
    id: known.id,
    description: known.description,
    min_input_bits: known.bits,
    max_input_bits: known.bits,
    facility_code: "ENFORCED",
    allowed_facility_codes: [],
    enforce_parity: true,
    layout: null,
  };
}

/** Answers of isValidZone, oldest first; at most ZONE_CACHE_SIZE names, each at most MAX_ZONE_NAME long. */
const zoneValidity = new Map<string, boolean>();
const ZONE_CACHE_SIZE = 1024;
/** Longer than any IANA zone name (the longest has 32 characters): such a string is no zone. */
const MAX_ZONE_NAME = 64;

/**
 * True when `zone` is an IANA zone name luxon (ICU) knows. Cached (luxon builds an Intl formatter
 * per call), in a cache of bounded size that keeps no long string.
 */
export function isValidZone(zone: string): boolean {
  if (zone.length > MAX_ZONE_NAME) return false;
  let valid = zoneValidity.get(zone);
  if (valid === undefined) {
    valid = IANAZone.isValidZone(zone);
    if (zoneValidity.size >= ZONE_CACHE_SIZE) zoneValidity.delete(zoneValidity.keys().next().value as string);
    zoneValidity.set(zone, valid);
  }
  return valid;
}

/** How many answers isValidZone holds (internal: for tests of the bound). */
export function zoneCacheSize(): number {
  return zoneValidity.size;
}

/** Levels of the input plainCopy copies: far below them lie only opaque `customFields` values. */
const COPY_DEPTH = 32;

/**
 * A plain copy of JSON-shaped input, each own enumerable property of every object and each element
 * of every array read exactly once: a getter or Proxy can then neither throw from inside the checks
 * nor answer differently on a second read. A read that throws (a throwing getter or trap, a revoked
 * Proxy) becomes an issue at its path. An object met twice (shared or cyclic) is copied once; below
 * COPY_DEPTH levels values are kept as they are.
 */
export function plainCopy(input: unknown, issues: Issue[]): unknown {
  const copies = new Map<object, unknown>();
  const path: Path = [];
  const unreadable = () => issues.push({ code: "unreadable", path: [...path], message: "Could not be read: reading it threw an error." });
  /** The value of `v[k]`, read once and copied, or undefined (with an issue) when reading throws. */
  const copyOf = (v: Record<string | number, unknown>, k: string | number): unknown => {
    path.push(k);
    let value: unknown;
    try {
      value = v[k];
    } catch {
      unreadable();
      path.pop();
      return undefined;
    }
    const c = copy(value);
    path.pop();
    return c;
  };
  const copy = (v: unknown): unknown => {
    if (typeof v !== "object" || v === null || path.length >= COPY_DEPTH) return v;
    const done = copies.get(v);
    if (done !== undefined) return done;
    let n = 0;
    let keys: string[] | null = null;
    try {
      // Array.isArray and Object.keys throw on a revoked Proxy; length and ownKeys may be traps.
      if (Array.isArray(v)) n = (v as unknown[]).length;
      else keys = Object.keys(v);
    } catch {
      unreadable();
      return undefined;
    }
    if (keys === null) {
      const arr: unknown[] = [];
      copies.set(v, arr);
      for (let i = 0; i < n; i++) arr.push(copyOf(v as Record<number, unknown>, i));
      return arr;
    }
    const obj: Record<string, unknown> = {};
    copies.set(v, obj);
    for (const k of keys) {
      const value = copyOf(v as Record<string, unknown>, k);
      if (k === "__proto__") Object.defineProperty(obj, k, { value, enumerable: true, writable: true, configurable: true });
      else obj[k] = value;
    }
    return obj;
  };
  return copy(input);
}

class Checker {
  readonly issues: Issue[] = [];
  add(code: IssueCode, path: Path, message: string): void {
    this.issues.push({ code, path, message });
  }
  /**
   * Indexes parsed elements by id and reports duplicate ids. Ids of elements that failed their
   * schema map to undefined: a reference to them is not an unknown reference.
   */
  index<T extends { id: string }, U>(parsed: Parsed<T>, coll: string, norm: (v: T) => U): Map<string, U | undefined> {
    const map = new Map<string, U | undefined>();
    for (const id of parsed.broken) map.set(id, undefined);
    for (const { i, v } of parsed.items) {
      if (map.has(v.id)) this.add("duplicateId", [coll, i, "id"], `Id ${quote(v.id)} is used twice in ${coll}.`);
      else map.set(v.id, norm(v));
    }
    return map;
  }
  uniqueNames(items: readonly { i: number; v: { name: string } }[], coll: string, what: string): void {
    const seen = new Map<string, number>();
    for (const { i, v } of items) {
      const first = seen.get(v.name);
      if (first !== undefined)
        this.add("duplicateName", [coll, i, "name"], `${what} name ${quote(v.name)} is already used by ${coll}[${first}]; names are unique within a system.`);
      else seen.set(v.name, i);
    }
  }
  ref(map: Map<string, unknown>, id: string | null, path: Path, what: string): boolean {
    if (id === null || map.has(id)) return true;
    this.add("unknownReference", path, `Names ${what} ${quote(id)}, which is not in the snapshot.`);
    return false;
  }
}

const headerSchema = z.object({
  format: systemSnapshotSchema.shape.format,
  systemId: systemSnapshotSchema.shape.systemId,
  timezone: systemSnapshotSchema.shape.timezone,
  partitions: z.array(z.unknown()).default([]),
  groups: z.array(z.unknown()).default([]),
  holders: z.array(z.unknown()).default([]),
  cloudNodes: z.array(z.unknown()).default([]),
  connections: z.array(z.unknown()).default([]),
  devices: z.array(z.unknown()).default([]),
  floorGroups: z.array(z.unknown()).default([]),
  rules: z.array(z.unknown()).default([]),
});

/** Elements that passed their schema, with their position in the input; ids of the others. */
interface Parsed<T> {
  readonly items: { readonly i: number; readonly v: T }[];
  /** Ids of elements that failed their schema: references to them are not reported again. */
  readonly broken: Set<string>;
}

function parseEach<T>(c: Checker, coll: string, raw: readonly unknown[], schema: z.ZodType<T>): Parsed<T> {
  const items: { i: number; v: T }[] = [];
  const broken = new Set<string>();
  raw.forEach((el, i) => {
    const r = schema.safeParse(el, { error: zodMessage });
    if (r.success) items.push({ i, v: r.data });
    else {
      c.issues.push(...fromZodIssues(r.error.issues, [coll, i]));
      const id = (el as { id?: unknown } | null)?.id;
      if (typeof id === "string") broken.add(id);
    }
  });
  return { items, broken };
}

/**
 * Validates and normalizes an `rsop-system/1` snapshot (SPEC §1). Each entity is checked on its
 * own, then every reference and uniqueness rule across entities, so one call reports every problem.
 * Never throws: the input is read once into a plain copy first, and a value that cannot be read (a
 * throwing getter or Proxy trap, a revoked Proxy) is an `unreadable` issue at its path.
 * @param input - parsed JSON of any shape.
 * @returns every problem with its JSON path, or the snapshot with seed defaults applied.
 * @example
 * const r = parseSnapshot({ format: "rsop-system/1", systemId: "s1", timezone: "Mars/Olympus" });
 * r.ok; //=> false
 * r.ok ? [] : r.issues.map((i) => formatPath(i.path)); //=> ["timezone"]
 */
export function parseSnapshot(input: unknown): Result<SystemSnapshot> {
  const unreadable: Issue[] = [];
  const data = plainCopy(input, unreadable);
  if (unreadable.length > 0) return err(unreadable);
  const head = headerSchema.safeParse(data, { error: zodMessage });
  if (!head.success) return err(fromZodIssues(head.error.issues));
  const raw = head.data;
  const c = new Checker();

  if (!isValidZone(raw.timezone)) c.add("invalidTimezone", ["timezone"], `${quote(raw.timezone)} is not an IANA time zone.`);

  const pPartitions = parseEach(c, "partitions", raw.partitions, partitionSchema);
  const pGroups = parseEach(c, "groups", raw.groups, groupSchema);
  const pHolders = parseEach(c, "holders", raw.holders, holderSchema);
  const pNodes = parseEach(c, "cloudNodes", raw.cloudNodes, cloudNodeSchema);
  const pConnections = parseEach(c, "connections", raw.connections, connectionSchema);
  const pDevices = parseEach(c, "devices", raw.devices, deviceSchema);
  const pFloorGroups = parseEach(c, "floorGroups", raw.floorGroups, floorGroupSchema);
  const pRules = parseEach(c, "rules", raw.rules, ruleSchema);

  const partitions: Partition[] = pPartitions.items.map(({ v }) => ({ ...v, users: v.users ?? [] }));
  const partitionById = c.index(pPartitions, "partitions", (v) => v);
  c.uniqueNames(pPartitions.items, "partitions", "Partition");

  const groupById = c.index(pGroups, "groups", (v) => v);
  c.uniqueNames(pGroups.items, "groups", "Group");
  for (const { i, v: g } of pGroups.items) c.ref(partitionById, g.partition, ["groups", i, "partition"], "partition");

  const nodes: CloudNode[] = pNodes.items.map(({ i, v: n }) => {
    const timezone = n.timezone ?? raw.timezone;
    if (n.timezone !== null && !isValidZone(n.timezone))
      c.add("invalidTimezone", ["cloudNodes", i, "timezone"], `${quote(n.timezone)} is not an IANA time zone.`);
    const formats = n.cardFormat === null || n.cardFormat.length === 0 ? [defaultCardFormat()] : n.cardFormat;
    if (n.cardFormat !== null)
      n.cardFormat.forEach((f, j) => {
        for (const issue of validateCardFormat(f)) c.add(issue.code, ["cloudNodes", i, "cardFormat", j, ...issue.path], issue.message);
      });
    return { ...n, timezone, ecards: n.ecards ?? [], cardFormat: formats };
  });
  const nodeById = c.index(pNodes, "cloudNodes", (v) => v);

  const connectionById = c.index(pConnections, "connections", (v) => v);
  for (const { i, v: x } of pConnections.items) c.ref(nodeById, x.cloudNode, ["connections", i, "cloudNode"], "cloud node");

  const devices: Device[] = pDevices.items.map(({ v: d }) => ({ ...d, partition: d.partition ?? [] }));
  const deviceById = c.index(pDevices, "devices", (d) => ({ ...d, partition: d.partition ?? [] }) as Device);
  c.uniqueNames(pDevices.items, "devices", "Device");
  const portOwner = new Map<string, number>();
  for (const { i, v } of pDevices.items) {
    const d = v as Device;
    const base = ["devices", i];
    c.ref(nodeById, d.cloudNode, [...base, "cloudNode"], "cloud node");
    (d.partition ?? []).forEach((p, j) => c.ref(partitionById, p.id, [...base, "partition", j, "id"], "partition"));
    if (c.ref(connectionById, d.connection, [...base, "connection"], "connection")) {
      const conn = connectionById.get(d.connection);
      if (conn !== undefined) {
        if (conn.cloudNode !== d.cloudNode)
          c.add("inconsistentReference", [...base, "cloudNode"], `Device sits on cloud node ${quote(d.cloudNode)} but its connection ${quote(conn.id)} belongs to ${quote(conn.cloudNode)}.`);
        if (d.wirelessAddress !== null && conn.type !== "wirelessCoordinator")
          c.add("invalid", [...base, "wirelessAddress"], "A wirelessAddress is only used on a wirelessCoordinator connection.");
      }
      const key = `${d.connection}\u0000${d.port}`;
      const owner = portOwner.get(key);
      if (owner !== undefined)
        c.add("portInUse", [...base, "port"], `Port ${d.port} of connection ${quote(d.connection)} is already used by devices[${owner}].`);
      else portOwner.set(key, i);
    }
    if (d.primaryReader !== null && c.ref(deviceById, d.primaryReader, [...base, "primaryReader"], "device")) {
      const primary = deviceById.get(d.primaryReader);
      if (primary !== undefined && primary.type !== "primaryReader")
        c.add("invalidReference", [...base, "primaryReader"], `Device ${quote(primary.id)} is a ${primary.type}, not a primaryReader.`);
    }
  }

  const floorGroupById = c.index(pFloorGroups, "floorGroups", (v) => v);
  c.uniqueNames(pFloorGroups.items, "floorGroups", "Floor group");
  for (const { i, v: fg } of pFloorGroups.items) {
    const base = ["floorGroups", i];
    c.ref(partitionById, fg.partition, [...base, "partition"], "partition");
    let reader: Device | undefined;
    if (c.ref(deviceById, fg.readerPort, [...base, "readerPort"], "device")) {
      reader = deviceById.get(fg.readerPort);
      if (reader !== undefined && !ELEVATOR_READER_TYPES.includes(reader.type))
        c.add("invalidReference", [...base, "readerPort"], `Device ${quote(reader.id)} is a ${reader.type}; a readerPort is an elevatorReader or additionalElevatorReader.`);
    }
    fg.floors.forEach((f, j) => {
      if (!c.ref(deviceById, f, [...base, "floors", j], "device")) return;
      const floor = deviceById.get(f);
      if (floor === undefined) return;
      if (floor.type !== "floorRelay")
        c.add("invalidReference", [...base, "floors", j], `Device ${quote(floor.id)} is a ${floor.type}, not a floorRelay.`);
      else if (reader !== undefined && floor.cloudNode !== reader.cloudNode)
        c.add("inconsistentReference", [...base, "floors", j], `Floor relay ${quote(floor.id)} is on another cloud node than the reader ${quote(reader.id)}.`);
    });
    if (new Set(fg.floors).size !== fg.floors.length) c.add("invalid", [...base, "floors"], "Names a floor twice.");
  }

  const holders: Holder[] = pHolders.items.map(({ v: h }) => ({
    ...h,
    customFields: h.customFields ?? {},
    credentials: h.credentials.map(({ holderId: _ignored, ...cred }) => ({ ...cred, holderId: h.id })),
  }));
  c.index(pHolders, "holders", (v) => v);
  const credentialIds = new Set<string>();
  // Credentials sync to every cloud node of a system, so a number unique per node is unique system-wide.
  const numberOwner = new Map<number, string>();
  pHolders.items.forEach(({ i }, k) => {
    const h = holders[k]!;
    const base = ["holders", i];
    c.ref(partitionById, h.partition, [...base, "partition"], "partition");
    h.groups.forEach((g, j) => c.ref(groupById, g, [...base, "groups", j], "group"));
    if (new Set(h.groups).size !== h.groups.length) c.add("invalid", [...base, "groups"], "Names a group twice.");
    h.credentials.forEach((cred, j) => {
      if (credentialIds.has(cred.id)) c.add("duplicateId", [...base, "credentials", j, "id"], `Credential id ${quote(cred.id)} is used twice.`);
      credentialIds.add(cred.id);
      if (cred.credentialNumber !== null) {
        const owner = numberOwner.get(cred.credentialNumber);
        if (owner !== undefined)
          c.add("duplicateCredentialNumber", [...base, "credentials", j, "credentialNumber"], `Credential number ${cred.credentialNumber} is already used by ${owner}; numbers are unique on a cloud node.`);
        else numberOwner.set(cred.credentialNumber, `holders[${i}].credentials[${j}]`);
      }
    });
  });

  c.index(pRules, "rules", (v) => v);
  for (const { i, v: r } of pRules.items) {
    const base = ["rules", i];
    c.ref(groupById, r.groupId, [...base, "groupId"], "group");
    r.devices.forEach((d, j) => {
      if (!c.ref(deviceById, d, [...base, "devices", j], "device")) return;
      const dev = deviceById.get(d);
      if (dev !== undefined && (ELEVATOR_READER_TYPES.includes(dev.type) || dev.type === "floorRelay"))
        c.add("invalidReference", [...base, "devices", j], `Device ${quote(d)} is a ${dev.type}; elevators are reached through floor groups in elevator rules.`);
    });
    r.floorGroups.forEach((f, j) => c.ref(floorGroupById, f, [...base, "floorGroups", j], "floor group"));
  }

  if (c.issues.length > 0) return err(c.issues);
  return ok({
    format: raw.format,
    systemId: raw.systemId,
    timezone: raw.timezone,
    partitions,
    groups: pGroups.items.map((x) => x.v),
    holders,
    cloudNodes: nodes,
    connections: pConnections.items.map((x) => x.v),
    devices,
    floorGroups: pFloorGroups.items.map((x) => x.v),
    rules: pRules.items.map((x) => x.v),
  });
}

/**
 * Like parseSnapshot, but throws a SnapshotError carrying every issue.
 * @param input - parsed JSON of any shape.
 * @returns the snapshot with seed defaults applied.
 * @throws SnapshotError when the snapshot has any problem.
 * @example
 * parseSnapshotOrThrow({ format: "rsop-system/1", systemId: "s1" }).timezone; //=> "UTC"
 */
export function parseSnapshotOrThrow(input: unknown): SystemSnapshot {
  const r = parseSnapshot(input);
  if (!r.ok) throw new SnapshotError(r.issues);
  return r.value;
}
