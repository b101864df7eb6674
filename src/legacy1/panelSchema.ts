// zod schemas of the architecture 1.0 panel snapshot `rsop-panel/1` (docs/semantics.md M1, the 1.0 panel API): one cloud
// node's entities with integer ids. Only what differs from 2.0 is checked here (integer ids and
// references, `HH:mm` times, metadata size); every other constraint is checked once, by the 2.0
// validator, on the converted snapshot (see parsePanel).
import { z } from "zod";

const legacyId = z.number().int().min(0);
const ref = z.union([legacyId, z.looseObject({ id: legacyId })]).transform((v) => (typeof v === "number" ? v : v.id));
const hhmm = (allow24: boolean) =>
  z.string().regex(allow24 ? /^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)$/ : /^(?:[01][0-9]|2[0-3]):[0-5][0-9]$/, {
    error: allow24 ? "Must be a time HH:mm (00:00 to 24:00)." : "Must be a time HH:mm (00:00 to 23:59).",
  });
/** The 1.0 panel API: user-defined metadata objects are limited to 10 KB. */
export const METADATA_LIMIT_BYTES = 10 * 1024;
const metadata = z
  .record(z.string(), z.unknown())
  .refine((m) => new TextEncoder().encode(JSON.stringify(m)).length <= METADATA_LIMIT_BYTES, {
    error: "Must be at most 10 KB as JSON.",
  })
  .nullable()
  .default(null);

export const panelPartitionSchema = z.looseObject({ id: legacyId, name: z.string().min(1) });
export const panelGroupSchema = z.looseObject({ id: legacyId, partition: legacyId.default(0), metadata });
export const panelCredentialSchema = z.looseObject({ id: legacyId, personId: legacyId.optional() });
export const panelPersonSchema = z.looseObject({
  id: legacyId,
  partition: legacyId.default(0),
  groups: z.array(ref).default([]),
  credentials: z.array(panelCredentialSchema).default([]),
  customAttributes: z.record(z.string(), z.unknown()).nullable().default({}),
  metadata,
});
export const panelConnectionSchema = z.looseObject({ id: legacyId });
export const panelDeviceSchema = z.looseObject({
  id: legacyId,
  connection: ref,
  primaryReader: z.union([ref, z.null()]).default(null),
  partition: z
    .array(z.looseObject({ id: legacyId, name: z.string().optional() }))
    .nullable()
    .default([]),
  // The 1.0 panel API: on create `type` defaults to primaryReader and `publicIcon` to swingingDoor.
  type: z.string().default("primaryReader"),
  publicIcon: z.string().nullable().default("swingingDoor"),
  metadata,
});
export const panelFloorGroupSchema = z.looseObject({
  id: legacyId,
  partition: legacyId.default(0),
  readerPort: ref,
  floors: z.array(ref),
});
export const panelAttributeSchema = z.looseObject({
  id: z.string().min(1),
  type: z.string(),
  partition: legacyId.default(0),
});
export const panelRuleSchema = z.looseObject({
  id: legacyId,
  groupId: legacyId,
  devices: z.array(legacyId).default([]),
  floorGroups: z.array(legacyId).default([]),
  startTime: hhmm(false),
  stopTime: hhmm(true),
});
export const panelConfigSchema = z.looseObject({
  timezone: z.string().default("UTC"),
  logPurgeDays: z.number().int().min(0).optional(),
  locale: z.string().optional(),
  offlinePolicy: z.unknown().optional(),
  killTimer: z.unknown().optional(),
  cardFormat: z.looseObject({}).nullable().default(null),
});

export const panelSnapshotSchema = z.object({
  format: z.literal("rsop-panel/1", { error: 'Must be exactly "rsop-panel/1".' }),
  serialNumber: z.string().min(1),
  name: z.string().min(1).default("Panel"),
  config: panelConfigSchema.default({ timezone: "UTC", cardFormat: null }),
  ecards: z.array(z.unknown()).default([]),
  partitions: z.array(panelPartitionSchema).default([]),
  groups: z.array(panelGroupSchema).default([]),
  persons: z.array(panelPersonSchema).default([]),
  connections: z.array(panelConnectionSchema).default([]),
  devices: z.array(panelDeviceSchema).default([]),
  floorGroups: z.array(panelFloorGroupSchema).default([]),
  attributes: z.array(panelAttributeSchema).default([]),
  rules: z.array(panelRuleSchema).default([]),
  /**
   * The largest integer id each kind of entity has had on this panel (`persons`, `credentials`,
   * `groups`, `connections`, `devices`, `floorGroups`, `rules`), deleted ones included: a create
   * takes one more than this and the largest id in use, so an id is never given twice (LP1). Written
   * by the live panel's creates; optional, so a panel without it loads as before.
   */
  lastIds: z.record(z.string(), legacyId).optional(),
});

/** A panel snapshot after the 1.0 checks (ids resolved to integers, defaults applied). */
export type PanelSnapshot = z.output<typeof panelSnapshotSchema>;
/** The input shape of a panel snapshot (what a JSON file may hold). */
export type PanelSnapshotInput = z.input<typeof panelSnapshotSchema>;
