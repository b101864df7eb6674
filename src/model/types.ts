// The normalized snapshot: what parseSnapshot returns once every default is applied and every
// reference is known to resolve. Later layers rely on these guarantees and check nothing again.
import type { z } from "zod";
import type { CardNumber } from "./cardNumber.js";
import type { customFieldSchema } from "./customFields.js";
import type {
  areaSchema,
  calendarSchema,
  cardFormatSchema,
  cloudNodeSchema,
  connectionSchema,
  credentialSchema,
  deviceSchema,
  floorGroupSchema,
  groupSchema,
  holderSchema,
  partitionSchema,
  ruleSchema,
} from "./systemSchema.js";

export type { Weekday } from "./time.js";

/** Which factors a rule or device asks for; null on the entity means no policy. */
export type AuthenticationPolicy = "cardOnly" | "pinOnly" | "cardOrPin" | "cardAndPin";
/** The reader channel a scan arrived on. */
export type InputType = "wiegand" | "unencryptedOsdp" | "encryptedOsdp";
/** How a card format treats facility codes. */
export type FacilityCodePolicy = "ENFORCED" | "FILTER_LIST" | "NOT_ENFORCED";

/** A partition; `users` never null. */
export type Partition = Omit<z.output<typeof partitionSchema>, "users"> & { users: string[] };
/** A group of holders sharing rules. */
export type Group = z.output<typeof groupSchema>;
/** A credential; `holderId` is always filled in. */
export type Credential = Omit<z.output<typeof credentialSchema>, "holderId"> & { holderId: string };
/** A holder; `groups` are group ids. */
export type Holder = Omit<z.output<typeof holderSchema>, "credentials" | "customFields"> & {
  credentials: Credential[];
  customFields: Record<string, unknown>;
};
/** A node card-format entry with the documented defaults applied; `layout` for custom bit layouts. */
export type CardFormat = z.output<typeof cardFormatSchema>;
/** A cloud node; `timezone` is the effective zone (node, else system), `cardFormat` never empty. */
export type CloudNode = Omit<z.output<typeof cloudNodeSchema>, "cardFormat" | "ecards" | "timezone"> & {
  cardFormat: CardFormat[];
  /** E-card numbers, each in its one spelling (CardNumber). */
  ecards: CardNumber[];
  timezone: string;
};
/** A controller attached to a cloud node, with its `cloudNode` id. */
export type Connection = z.output<typeof connectionSchema>;
/** A device; `connection` and `primaryReader` are ids. */
export type Device = Omit<z.output<typeof deviceSchema>, "partition"> & {
  partition: { id: string; name?: string | undefined; default?: boolean | undefined }[];
};
/** A floor group; `readerPort` and `floors` are device ids. */
export type FloorGroup = z.output<typeof floorGroupSchema>;
/** An access rule with defaults applied. */
export type Rule = z.output<typeof ruleSchema>;

/** A calendar of days (docs/semantics.md C1), with `partition`, `dates` and `recurring` defaulted. */
export type Calendar = z.output<typeof calendarSchema>;

/** An area (docs/semantics.md AB1), with `exits`, `antiPassback` and `occupancyLimit` defaulted. */
export type Area = z.output<typeof areaSchema>;

/** A custom field definition of a partition, with `displayName`, `required` and `visibility` defaulted. */
export type CustomField = z.output<typeof customFieldSchema>;

/** A validated `rsop-system/1` snapshot with the documented defaults applied. */
export interface SystemSnapshot {
  readonly format: "rsop-system/1";
  readonly systemId: string;
  readonly timezone: string;
  readonly partitions: readonly Partition[];
  readonly groups: readonly Group[];
  readonly holders: readonly Holder[];
  readonly cloudNodes: readonly CloudNode[];
  readonly connections: readonly Connection[];
  readonly devices: readonly Device[];
  readonly floorGroups: readonly FloorGroup[];
  readonly rules: readonly Rule[];
  readonly customFields: readonly CustomField[];
  readonly calendars: readonly Calendar[];
  readonly areas: readonly Area[];
}
