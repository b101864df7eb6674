// What the checks across entities ask of a system: entities by id, and who owns each unique key
// (name, device port, credential number and id). parseSnapshot answers from the whole snapshot;
// the live system answers from indexes it maintains, overlaid with the change being validated.
import type { z } from "zod";
import type { CardNumber } from "../cardNumber.js";
import type { IssueCode } from "../issue.js";
import type { customFieldSchema } from "../customFields.js";
import type {
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

export type Path = (string | number)[];

/** Each collection's elements as their schema parses them (before parseSnapshot's normalization). */
export interface ParsedEntities {
  partitions: z.output<typeof partitionSchema>;
  groups: z.output<typeof groupSchema>;
  holders: z.output<typeof holderSchema>;
  cloudNodes: z.output<typeof cloudNodeSchema>;
  connections: z.output<typeof connectionSchema>;
  devices: z.output<typeof deviceSchema>;
  floorGroups: z.output<typeof floorGroupSchema>;
  rules: z.output<typeof ruleSchema>;
  customFields: z.output<typeof customFieldSchema>;
  calendars: z.output<typeof calendarSchema>;
  areas: z.output<typeof areaSchema>;
}

export type Collection = keyof ParsedEntities;
/** The collections whose names are unique within a system. */
export type NamedCollection = "partitions" | "groups" | "devices" | "floorGroups";

export const COLLECTIONS: readonly Collection[] = [
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
export const NAMED_COLLECTIONS: readonly NamedCollection[] = ["partitions", "groups", "devices", "floorGroups"];

/**
 * The key an element of `coll` is known by in `has`, `get` and `idOwner`: its id, except a custom
 * field's, whose id is unique within its partition only (semantics S15): partition and id.
 */
export function entityKey(coll: Collection, v: { readonly id: string; readonly partition?: unknown }): string {
  return coll === "customFields" ? customFieldKey(v.partition as string, v.id) : v.id;
}

/** The key of an element as given (before its schema): undefined when it has no usable key. */
export function rawKey(coll: Collection, raw: unknown): string | undefined {
  const v = raw as { id?: unknown; partition?: unknown } | null;
  if (typeof v?.id !== "string") return undefined;
  if (coll !== "customFields") return v.id;
  return typeof v.partition === "string" ? customFieldKey(v.partition, v.id) : undefined;
}

/** The key of custom field `id` of partition `partition`. */
export function customFieldKey(partition: string, id: string): string {
  return `${partition}\u0000${id}`;
}

/** Where a credential sits: `holders[i].credentials[j]`. */
export interface CredentialAt {
  readonly i: number;
  readonly j: number;
}

/**
 * The answers the checks need, about the system being validated. "First" is snapshot order
 * (index, then credential index); only elements that passed their schema own keys.
 */
export interface Lookups {
  /** True when some element of `coll` has this key (entityKey), valid or not: a reference to it is not unknown. */
  has(coll: Collection, id: string): boolean;
  /** The first valid element of `coll` with this id; undefined when none, or when an invalid element has it. */
  get<C extends Collection>(coll: C, id: string): ParsedEntities[C] | undefined;
  /** Index of the element that keeps this id (the first valid one), or -1 when an invalid element has it. */
  idOwner(coll: Collection, id: string): number;
  /** Index of the first valid element of `coll` with this name. */
  nameOwner(coll: NamedCollection, name: string): number;
  /** Index of the first valid device on this port of this connection. */
  portOwner(connection: string, port: number): number;
  /** How many valid devices name this connection. */
  devicesOn(connection: string): number;
  /** The first credential (of a valid holder) with this number. */
  credentialNumberOwner(n: CardNumber): CredentialAt;
  /** The first credential (of a valid holder) with this id. */
  credentialIdOwner(id: string): CredentialAt;
  /** The custom fields of a partition that `get` answers (valid, the first of each id), in snapshot order. */
  customFieldsOf(partition: string): readonly ParsedEntities["customFields"][];
  /**
   * True when no two credentials share an id or a number: each credential is the owner of both
   * (the checks then skip those two lookups). Lookups that do not know say nothing.
   */
  readonly credentialsUnique?: boolean;
  /**
   * Per collection, true when its valid elements have distinct keys and no element that failed its
   * schema has one of them: each element owns its key (the id checks then skip their lookup).
   */
  readonly uniqueKeys?: { readonly [C in Collection]?: boolean };
}

/** Collects one issue. */
export type Report = (code: IssueCode, path: Path, message: string) => void;

/** A check of one valid element at index `i`, against the lookups. */
export type Check<C extends Collection> = (v: ParsedEntities[C], i: number, L: Lookups, add: Report) => void;
