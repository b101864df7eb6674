// Every check across entities, one file per collection, in the order parseSnapshot reports them.
// Each check looks at one valid element against Lookups, so the same functions validate a whole
// snapshot (lookups over every element) and one changed element (lookups over maintained indexes).
import type { z } from "zod";
import type { CardNumber } from "../cardNumber.js";
import type { Issue } from "../issue.js";
import {
  areaSchema,
  calendarSchema,
  cloudNodeSchema,
  connectionSchema,
  deviceSchema,
  floorGroupSchema,
  groupSchema,
  holderSchema,
  partitionSchema,
  ruleSchema,
} from "../systemSchema.js";
import { fromZodIssues, zodMessage } from "../zodIssues.js";
import { customFieldSchema } from "../customFields.js";
import {
  DECLINED,
  fastConnection,
  fastDevice,
  fastFloorGroup,
  fastGroup,
  fastHolder,
  fastPartition,
  fastRule,
} from "../fastParse.js";
import { checkCustomFieldId, checkCustomFieldRefs, checkHolderCustomFields } from "./customFields.js";
import { checkCloudNodeId, checkCloudNodeOwn } from "./cloudNodes.js";
import { checkConnectionId, checkConnectionLocks, checkConnectionRefs } from "./connections.js";
import { checkDeviceId, checkDeviceName, checkDeviceRefs } from "./devices.js";
import { checkFloorGroupId, checkFloorGroupName, checkFloorGroupRefs } from "./floorGroups.js";
import { checkGroupId, checkGroupName, checkGroupRefs } from "./groups.js";
import { checkHolderGroups, checkHolderId, checkHolderRefs } from "./holders.js";

export { checkHolderGroups, checkHolderRefs };
import {
  type Check,
  type Collection,
  type CredentialAt,
  type Lookups,
  type NamedCollection,
  type ParsedEntities,
  entityKey,
} from "./lookups.js";
import { checkPartitionId, checkPartitionName } from "./partitions.js";
import { checkRuleId, checkRuleRefs } from "./rules.js";
import { checkCalendarId, checkCalendarRefs } from "./calendars.js";
import { checkAreaId, checkAreaRefs } from "./areas.js";

export * from "./lookups.js";

/** The schema of one element of each collection. */
export const ENTITY_SCHEMAS: { readonly [C in Collection]: z.ZodType<ParsedEntities[C]> } = {
  partitions: partitionSchema,
  groups: groupSchema,
  holders: holderSchema,
  cloudNodes: cloudNodeSchema,
  connections: connectionSchema,
  devices: deviceSchema,
  floorGroups: floorGroupSchema,
  rules: ruleSchema,
  customFields: customFieldSchema,
  calendars: calendarSchema,
  areas: areaSchema,
};

/** The collections with a fast path (fastParse.ts): what it answers equals what the schema would. */
const FAST_PATHS: { readonly [C in Collection]?: (raw: unknown) => ParsedEntities[C] | typeof DECLINED } = {
  holders: fastHolder,
  rules: fastRule,
  devices: fastDevice,
  groups: fastGroup,
  partitions: fastPartition,
  floorGroups: fastFloorGroup,
  connections: fastConnection,
};

/** Parses element `i` of `coll`: its value, or its schema issues (at `coll[i]…`). */
export function parseEntity<C extends Collection>(
  coll: C,
  raw: unknown,
  i: number,
): { ok: true; v: ParsedEntities[C] } | { ok: false; issues: Issue[] } {
  const fast = FAST_PATHS[coll];
  if (fast !== undefined) {
    const v = fast(raw);
    if (v !== DECLINED) return { ok: true, v: v as ParsedEntities[C] };
  }
  const r = ENTITY_SCHEMAS[coll].safeParse(raw, { error: zodMessage });
  return r.success ? { ok: true, v: r.data } : { ok: false, issues: fromZodIssues(r.error.issues, [coll, i]) };
}

export interface Phase<C extends Collection = Collection> {
  readonly coll: C;
  readonly check: Check<C>;
}
function phase<C extends Collection>(coll: C, check: Check<C>): Phase {
  return { coll, check } as unknown as Phase;
}

/**
 * The checks across entities in report order: each phase runs over the valid elements of its
 * collection in snapshot order. (Schema issues come first, collection by collection.)
 */
export const PHASES: readonly Phase[] = [
  phase("partitions", checkPartitionId),
  phase("partitions", checkPartitionName),
  phase("groups", checkGroupId),
  phase("groups", checkGroupName),
  phase("groups", checkGroupRefs),
  phase("cloudNodes", checkCloudNodeOwn),
  phase("cloudNodes", checkCloudNodeId),
  phase("connections", checkConnectionId),
  phase("connections", checkConnectionRefs),
  phase("connections", checkConnectionLocks),
  phase("devices", checkDeviceId),
  phase("devices", checkDeviceName),
  phase("devices", checkDeviceRefs),
  phase("floorGroups", checkFloorGroupId),
  phase("floorGroups", checkFloorGroupName),
  phase("floorGroups", checkFloorGroupRefs),
  phase("holders", checkHolderId),
  phase("holders", checkHolderRefs),
  phase("holders", checkHolderCustomFields),
  phase("rules", checkRuleId),
  phase("rules", checkRuleRefs),
  phase("customFields", checkCustomFieldId),
  phase("customFields", checkCustomFieldRefs),
  phase("calendars", checkCalendarId),
  phase("calendars", checkCalendarRefs),
  phase("areas", checkAreaId),
  phase("areas", checkAreaRefs),
];

/** The order schema issues are reported in: collection by collection. */
export const SCHEMA_ORDER: readonly Collection[] = [
  "partitions",
  "groups",
  "holders",
  "cloudNodes",
  "connections",
  "devices",
  "floorGroups",
  "rules",
  "customFields",
  "calendars",
  "areas",
];

/** Valid elements with their index, and ids of the elements that failed their schema. */
export interface ParsedCollection<C extends Collection> {
  readonly items: readonly { readonly i: number; readonly v: ParsedEntities[C] }[];
  readonly broken: ReadonlySet<string>;
}
export type ParsedSystem = { readonly [C in Collection]: ParsedCollection<C> };

const NONE: CredentialAt = { i: -1, j: -1 };

/** Lookups over a whole parsed snapshot. */
export function wholeLookups(p: ParsedSystem): Lookups {
  type Item = { readonly i: number; readonly v: unknown };
  const byId = new Map<Collection, Map<string, Item>>();
  const uniqueKeys: { [C in Collection]?: boolean } = {};
  // Each map is filled from the last element to the first, so that the first element with a key
  // keeps it (one `set` per element instead of a `has` and a `set`).
  for (const coll of Object.keys(p) as Collection[]) {
    const m = new Map<string, Item>();
    const items = p[coll].items;
    for (let k = items.length - 1; k >= 0; k--) {
      const item = items[k]!;
      m.set(coll === "customFields" ? entityKey(coll, item.v) : item.v.id, item);
    }
    byId.set(coll, m);
    uniqueKeys[coll] = p[coll].broken.size === 0 && m.size === items.length;
  }
  /** True when an element of `coll` that failed its schema has this key (most snapshots have none). */
  const isBroken = (coll: Collection, id: string) => {
    const broken = p[coll].broken;
    return broken.size !== 0 && broken.has(id);
  };
  const fieldsOf = new Map<string, ParsedEntities["customFields"][]>();
  for (const { i, v } of p.customFields.items) {
    const key = entityKey("customFields", v);
    if (byId.get("customFields")!.get(key)!.i !== i || isBroken("customFields", key)) continue;
    const list = fieldsOf.get(v.partition);
    if (list === undefined) fieldsOf.set(v.partition, [v]);
    else list.push(v);
  }
  const names = new Map<NamedCollection, Map<string, number>>();
  for (const coll of ["partitions", "groups", "devices", "floorGroups"] as const) {
    const m = new Map<string, number>();
    const items = p[coll].items;
    for (let k = items.length - 1; k >= 0; k--) m.set(items[k]!.v.name, items[k]!.i);
    names.set(coll, m);
  }
  const ports = new Map<string, number>();
  const onConnection = new Map<string, number>();
  for (let k = p.devices.items.length - 1; k >= 0; k--) {
    const { i, v } = p.devices.items[k]!;
    ports.set(`${v.connection}\u0000${v.port}`, i);
    onConnection.set(v.connection, (onConnection.get(v.connection) ?? 0) + 1);
  }
  // Credential ids and numbers map to the position of their first holder in `holders.items` (a
  // number, not an object per credential); which of its credentials is found when asked.
  const holderItems = p.holders.items;
  const numbers = new Map<CardNumber, number>();
  const credentialIds = new Map<string, number>();
  let credentialCount = 0;
  let numberCount = 0;
  for (let k = holderItems.length - 1; k >= 0; k--) {
    const creds = holderItems[k]!.v.credentials;
    for (let j = creds.length - 1; j >= 0; j--) {
      const c = creds[j]!;
      credentialIds.set(c.id, k);
      credentialCount++;
      if (c.credentialNumber !== null) {
        numbers.set(c.credentialNumber, k);
        numberCount++;
      }
    }
  }
  const credentialAt = (
    k: number | undefined,
    matches: (c: ParsedEntities["holders"]["credentials"][number]) => boolean,
  ): CredentialAt => {
    if (k === undefined) return NONE;
    const { i, v } = holderItems[k]!;
    return { i, j: v.credentials.findIndex(matches) };
  };
  return {
    has: (coll, id) => byId.get(coll)!.has(id) || isBroken(coll, id),
    get: <C extends Collection>(coll: C, id: string) =>
      isBroken(coll, id) ? undefined : (byId.get(coll)!.get(id)?.v as ParsedEntities[C] | undefined),
    idOwner: (coll, id) => (isBroken(coll, id) ? -1 : (byId.get(coll)!.get(id)?.i ?? -1)),
    nameOwner: (coll, name) => names.get(coll)!.get(name) ?? -1,
    portOwner: (connection, port) => ports.get(`${connection}\u0000${port}`) ?? -1,
    devicesOn: (connection) => onConnection.get(connection) ?? 0,
    credentialNumberOwner: (n) => credentialAt(numbers.get(n), (c) => c.credentialNumber === n),
    credentialIdOwner: (id) => credentialAt(credentialIds.get(id), (c) => c.id === id),
    customFieldsOf: (partition) => fieldsOf.get(partition) ?? [],
    credentialsUnique: credentialIds.size === credentialCount && numbers.size === numberCount,
    uniqueKeys,
  };
}
