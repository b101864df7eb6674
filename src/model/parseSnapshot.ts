// Loads an `rsop-system/1` snapshot: schema checks, then every check across entities. All problems
// are collected and returned at once; a snapshot with any problem is refused as a whole.
import { type Issue, type Result, SnapshotError, err, ok } from "./issue.js";
import { DEFAULT_CARD_FORMAT_ID, KNOWN_CARD_FORMATS } from "./cardFormats.js";
import { z } from "zod";
import { type credentialSchema, type holderSchema, systemSnapshotSchema } from "./systemSchema.js";
import type { CardFormat, CloudNode, Credential, Device, Holder, Partition, SystemSnapshot } from "./types.js";
import { fromZodIssues, quote, zodMessage } from "./zodIssues.js";
import { isValidZone } from "./zones.js";
import { isObject } from "./request.js";
import { depthIssues, plainCopy } from "./plainCopy.js";
import {
  type Collection,
  type ParsedCollection,
  type ParsedEntities,
  type ParsedSystem,
  PHASES,
  type Report,
  SCHEMA_ORDER,
  parseEntity,
  rawKey,
  wholeLookups,
} from "./checks/index.js";

export { isValidZone, zoneCacheSize } from "./zones.js";
export { JSON_MAX_DEPTH, plainCopy } from "./plainCopy.js";

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

/** The custom fields of every holder that has none: one frozen empty object, shared. */
const NO_CUSTOM_FIELDS: Record<string, unknown> = Object.freeze({});

function hasNoKeys(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return Object.getOwnPropertyNames(o).length === 0;
}

/** A holder's custom fields as a snapshot keeps them: none (null or empty) is NO_CUSTOM_FIELDS. */
function keptCustomFields(fields: Record<string, unknown> | null): Record<string, unknown> {
  return fields === null || hasNoKeys(fields) ? NO_CUSTOM_FIELDS : fields;
}

/**
 * A credential as a snapshot keeps it: naming its holder (last, whatever the input said).
 * @param c - a credential as its schema parsed it.
 * @param holderId - the holder it sits under.
 * @param intern - gives equal descriptions one string; by default each is kept.
 * @returns the credential with `holderId`.
 * @example
 * normalizeCredential({ id: "c1", credentialNumber: 7, facilityCode: null, description: null, types: ["card"] }, "h1").holderId; //=> "h1"
 */
export function normalizeCredential(
  c: z.output<typeof credentialSchema>,
  holderId: string,
  intern: Intern = same,
): Credential {
  const description = c.description === null ? null : intern(c.description);
  return {
    id: c.id,
    credentialNumber: c.credentialNumber,
    facilityCode: c.facilityCode,
    description,
    types: sharedTypes(c.types),
    holderId,
  };
}

type CredentialTypes = Credential["types"];
/** One frozen array per list of credential types (a handful in practice), shared by the credentials that have it. */
const TYPES = new Map<string, CredentialTypes>();
const TYPES_KEPT = 64;

function sharedTypes(types: CredentialTypes): CredentialTypes {
  const key = types.length === 1 ? types[0]! : types.join(",");
  let shared = TYPES.get(key);
  if (shared === undefined) {
    shared = Object.freeze(types.slice()) as CredentialTypes;
    if (TYPES.size < TYPES_KEPT) TYPES.set(key, shared);
  }
  return shared;
}

/** Gives equal strings one object (a snapshot's references to an id, repeated descriptions). */
export type Intern = (s: string) => string;
const same: Intern = (s) => s;

/** An Intern of its own: the first string of each value is kept, and given back for the others. */
function interner(): Intern {
  const kept = new Map<string, string>();
  return (s) => {
    const k = kept.get(s);
    if (k !== undefined) return k;
    kept.set(s, s);
    return s;
  };
}

/** Puts `intern(x)` in place of each element (the array is the parser's own). */
function internAll(list: string[], intern: Intern): void {
  for (let j = 0; j < list.length; j++) list[j] = intern(list[j]!);
}

/**
 * A holder as a snapshot keeps it: each credential names its holder; no custom fields is an empty
 * object (one shared, frozen). Built as one literal, so that every holder shares one hidden class
 * with its fields in the object itself (spreads made a hidden class per credential: 240 B each).
 * @param h - a holder as its schema parsed it (its `groups` array is kept).
 * @returns the holder.
 * @example
 * normalizeHolder(holderSchema.parse({ id: "h1", firstName: "Ada", lastName: "Byron", customFields: null })).customFields; //=> {}
 */
export function normalizeHolder(h: z.output<typeof holderSchema>): Holder {
  const given = h.credentials;
  const credentials: Credential[] = new Array(given.length);
  for (let j = 0; j < given.length; j++) credentials[j] = normalizeCredential(given[j]!, h.id);
  return {
    id: h.id,
    firstName: h.firstName,
    lastName: h.lastName,
    email: h.email,
    photoUrl: h.photoUrl,
    partition: h.partition,
    enabled: h.enabled,
    activeDate: h.activeDate,
    expireDate: h.expireDate,
    pin: h.pin,
    duressPin: h.duressPin,
    customFields: keptCustomFields(h.customFields),
    groups: h.groups,
    credentials,
  };
}

/**
 * normalizeHolder for a holder object the caller owns and no one else sees (parseSnapshot's own,
 * just parsed): its fields are set in place, which spares a second object per holder at load. The
 * parsed object has the snapshot holder's keys in the same order.
 */
function adoptHolder(h: z.output<typeof holderSchema>, intern: Intern): Holder {
  const creds = h.credentials;
  for (let j = 0; j < creds.length; j++)
    (creds as unknown as Credential[])[j] = normalizeCredential(creds[j]!, h.id, intern);
  internAll(h.groups, intern);
  const m = h as { -readonly [K in keyof Holder]: Holder[K] };
  if (m.partition !== null) m.partition = intern(m.partition);
  if (m.activeDate !== null) m.activeDate = intern(m.activeDate);
  if (m.expireDate !== null) m.expireDate = intern(m.expireDate);
  m.customFields = keptCustomFields(h.customFields);
  return m;
}

/** The snapshot's own fields and its collections, each element still unparsed. @internal */
export const headerSchema = z.object({
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
  customFields: z.array(z.unknown()).default([]),
  calendars: z.array(z.unknown()).default([]),
  areas: z.array(z.unknown()).default([]),
});

type Head = z.output<typeof headerSchema>;

/**
 * The header as headerSchema parses it, when it plainly passes (the collections, only read, are
 * the input's own arrays); undefined when the schema must look. Spares a pass of the schema over
 * every element of every collection. @internal
 */
export function fastHead(data: unknown): Head | undefined {
  if (!isObject(data) || data.format !== "rsop-system/1") return undefined;
  const { systemId } = data;
  const timezone = data.timezone === undefined ? "UTC" : data.timezone;
  if (typeof systemId !== "string" || systemId.length === 0 || typeof timezone !== "string") return undefined;
  const lists = {} as Record<Collection, unknown[]>;
  for (const coll of SCHEMA_ORDER) {
    const v = data[coll];
    if (v !== undefined && !Array.isArray(v)) return undefined;
    lists[coll] = v === undefined ? [] : v;
  }
  return { format: "rsop-system/1", systemId, timezone, ...lists };
}

/** Parses each element of `coll`: the valid ones with their index, ids of the others; schema issues to `issues`. */
function parseEach<C extends Collection>(issues: Issue[], coll: C, raw: readonly unknown[]): ParsedCollection<C> {
  const items: { i: number; v: ParsedEntities[C] }[] = [];
  const broken = new Set<string>();
  // Every index, a hole as undefined, as the header schema's copy of the array has it.
  for (let i = 0; i < raw.length; i++) {
    const el = raw[i];
    const r = parseEntity(coll, el, i);
    if (r.ok) items.push({ i, v: r.v });
    else {
      issues.push(...r.issues);
      const key = rawKey(coll, el);
      if (key !== undefined) broken.add(key);
    }
  }
  return { items, broken };
}

/** Options of parseSnapshot. */
export interface ParseSnapshotOptions {
  /**
   * The input is what `JSON.parse` made (plain objects and arrays, no getters or Proxies, nothing
   * shared or cyclic) and nothing changes it during the call: it is read as it is, without the
   * defensive copy that guards against those (a fifth of the time at 100,000 holders). Default false.
   */
  readonly plainJson?: boolean;
  /**
   * With `plainJson`: the input is known to nest at most JSON_MAX_DEPTH arrays and objects (HJ1),
   * as when the text it was parsed from was checked for that (the adapters' parseJson does), so it
   * is not walked again for it. Default false.
   */
  readonly depthChecked?: boolean;
}

/**
 * Validates and normalizes an `rsop-system/1` snapshot. Each entity is checked on its
 * own, then every reference and uniqueness rule across entities, so one call reports every problem.
 * Never throws: the input is read once into a plain copy first (unless `options.plainJson`), and a
 * value that cannot be read (a throwing getter or Proxy trap, a revoked Proxy) is an `unreadable`
 * issue at its path; a value nested deeper than JSON_MAX_DEPTH (64) arrays and objects, or one that
 * contains itself, is a `tooBig` issue at its path (HJ2).
 * @param input - parsed JSON of any shape.
 * @param options - `plainJson`: skip the defensive copy of input that `JSON.parse` just made.
 * @returns every problem with its JSON path, or the snapshot with the documented defaults applied.
 * @example
 * const r = parseSnapshot({ format: "rsop-system/1", systemId: "s1", timezone: "Mars/Olympus" });
 * r.ok; //=> false
 * r.ok ? [] : r.issues.map((i) => formatPath(i.path)); //=> ["timezone"]
 */
export function parseSnapshot(input: unknown, options: ParseSnapshotOptions = {}): Result<SystemSnapshot> {
  // Too deep is refused before any check walks a value (HJ2); plain JSON is only walked, not copied.
  const unreadable: Issue[] = [];
  const data = options.plainJson === true ? input : plainCopy(input, unreadable);
  if (options.plainJson === true && options.depthChecked !== true) unreadable.push(...depthIssues(input));
  if (unreadable.length > 0) return err(unreadable);
  let raw = fastHead(data);
  if (raw === undefined) {
    const head = headerSchema.safeParse(data, { error: zodMessage });
    if (!head.success) return err(fromZodIssues(head.error.issues));
    raw = head.data;
  }
  const issues: Issue[] = [];
  const add: Report = (code, path, message) => issues.push({ code, path, message });

  if (!isValidZone(raw.timezone))
    add("invalidTimezone", ["timezone"], `${quote(raw.timezone)} is not an IANA time zone.`);

  const parsed = {} as { [C in Collection]: ParsedCollection<C> };
  for (const coll of SCHEMA_ORDER)
    (parsed as Record<Collection, ParsedCollection<Collection>>)[coll] = parseEach(issues, coll, raw[coll]);
  const system: ParsedSystem = parsed;

  // Every check across entities, phase by phase, each over the valid elements in snapshot order.
  const lookups = wholeLookups(system);
  for (const { coll, check } of PHASES) for (const { i, v } of system[coll].items) check(v as never, i, lookups, add);

  if (issues.length > 0) return err(issues);
  const partitions: Partition[] = parsed.partitions.items.map(({ v }) => ({ ...v, users: v.users ?? [] }));
  const nodes: CloudNode[] = parsed.cloudNodes.items.map(({ v: n }) => {
    const formats = n.cardFormat === null || n.cardFormat.length === 0 ? [defaultCardFormat()] : n.cardFormat;
    return { ...n, timezone: n.timezone ?? raw.timezone, ecards: n.ecards ?? [], cardFormat: formats };
  });
  const devices: Device[] = parsed.devices.items.map(({ v: d }) => ({ ...d, partition: d.partition ?? [] }));
  // References share the string of the id they name, and repeated values one string: at 100,000
  // holders the rules' 367,000 device references alone were 11 MB of equal strings.
  const intern = interner();
  for (const c of ["partitions", "groups", "devices", "floorGroups"] as const)
    for (const { v } of parsed[c].items) intern(v.id);
  const holders: Holder[] = parsed.holders.items.map(({ v: h }) => adoptHolder(h, intern));
  for (const { v: r } of parsed.rules.items) {
    r.groupId = intern(r.groupId);
    internAll(r.devices, intern);
    internAll(r.floorGroups, intern);
  }
  return ok({
    format: raw.format,
    systemId: raw.systemId,
    timezone: raw.timezone,
    partitions,
    groups: parsed.groups.items.map((x) => x.v),
    holders,
    cloudNodes: nodes,
    connections: parsed.connections.items.map((x) => x.v),
    devices,
    floorGroups: parsed.floorGroups.items.map((x) => x.v),
    rules: parsed.rules.items.map((x) => x.v),
    customFields: parsed.customFields.items.map((x) => x.v),
    calendars: parsed.calendars.items.map((x) => x.v),
    areas: parsed.areas.items.map((x) => x.v),
  });
}

/**
 * Like parseSnapshot, but throws a SnapshotError carrying every issue.
 * @param input - parsed JSON of any shape.
 * @returns the snapshot with the documented defaults applied.
 * @throws SnapshotError when the snapshot has any problem.
 * @example
 * parseSnapshotOrThrow({ format: "rsop-system/1", systemId: "s1" }).timezone; //=> "UTC"
 */
export function parseSnapshotOrThrow(input: unknown): SystemSnapshot {
  const r = parseSnapshot(input);
  if (!r.ok) throw new SnapshotError(r.issues);
  return r.value;
}
