// The answers of the live reads whose shape the API documents field by field (docs/semantics.md L23, L24,
// LP13), declared so that the OpenAPI document, and every test answer checked against it, hold them to it:
// each field of the resource's table is required (null where the table allows it), and a field outside it
// is refused where the system controls every key (2.0, and 1.0 connections and information). A 1.0 panel
// keeps unknown keys a panel file gave, so its persons, devices and attributes are open beyond the table.
import { z } from "zod";
import { reads } from "../../../live/operations/reads.js";
import { panelReads } from "../../../legacy1/live/panelReads.js";

const text = z.string().nullable();
const flag = z.boolean().nullable();

/** The connection table of the 2.0 systems API (the 1.0 connection has the same fields, an integer id). */
function connection(id: z.ZodType) {
  return z
    .strictObject({
      id,
      name: z.string(),
      type: z.string(),
      connected: flag,
      // An ethernet controller's only (S13).
      protocol: z.string().nullable().optional(),
      ipaddress: text,
      ipv6Address: text,
      port: z.number().int().nullable(),
      dhcp: flag,
      netmask: text,
      gateway: text,
      dns: text,
      macAddress: text,
      manufacturer: z.string().nullable().optional(),
    })
    .meta({ description: "A connection: every field of the API's table, null where not known (L23)" });
}

/** The device fields 2.0 and 1.0 share (the 2.0 device table; 1.0 adds its own below). */
function deviceFields(id: z.ZodType) {
  return {
    id,
    name: z.string(),
    connection: z.union([id, z.looseObject({ id })]),
    port: z.number().int(),
    type: z.string(),
    publicIcon: text,
    primaryReader: id.nullable(),
    inputTypes: z.array(z.string()),
    osdpAddress: z.number().int().nullable(),
    wirelessAddress: text,
    readerType: z.string(),
    readerSerialNumber: text,
    supportBleCredentials: z.boolean(),
    securedReadsOnly: z.boolean(),
    delay: z.number().int(),
    dwell: z.number().int(),
    dps: z.boolean(),
    propAlarm: z.boolean(),
    propDelay: z.number().int(),
    rex: z.boolean(),
    forcedAlarm: z.boolean(),
    autoOpenAfterFirstAllow: z.boolean(),
    authenticationPolicy: text,
    hardwareVersion: text,
    serialNumber: text,
    firmwareVersion: text,
    created: text,
  };
}

const DEVICE = z
  .strictObject({
    ...deviceFields(z.string()),
    partition: z.array(z.strictObject({ id: z.string(), name: text, default: z.boolean() })),
  })
  .meta({ description: "A device: the API's device table; no cloudNode (the path names it, L23)" });

const PARTITION = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    users: z.array(z.string()),
    default: z.literal(true).optional(),
    // With `include` (L15).
    devices: z.array(z.looseObject({ id: z.string() })).optional(),
    attributes: z.array(z.looseObject({ id: z.string() })).optional(),
  })
  .meta({ description: "A partition: `default` on the default partition only (L24)" });

const PANEL_CREDENTIAL = z.looseObject({
  id: z.number().int(),
  personId: z.number().int(),
  credentialNumber: z.union([z.number(), z.string()]).nullable(),
  facilityCode: z.number().int().nullable(),
  description: text,
  types: z.array(z.string()),
});

const PERSON = z
  .looseObject({
    id: z.number().int(),
    firstName: z.string(),
    lastName: z.string(),
    email: text,
    photoUrl: text,
    partition: z.number().int(),
    enabled: z.boolean(),
    activeDate: text,
    expireDate: text,
    pin: text,
    duressPin: text,
    customAttributes: z.record(z.string(), z.unknown()).nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    groups: z.array(z.looseObject({ id: z.number().int(), name: z.string() })),
    credentials: z.array(PANEL_CREDENTIAL),
  })
  .meta({ description: "A person: every field of the 1.0 person table (LP13)" });

const PANEL_DEVICE = z
  .looseObject({
    ...deviceFields(z.number().int()),
    partition: z.array(z.looseObject({ id: z.number().int(), name: text })),
    bootloaderVersion: text,
    startupVersion: text,
    metadata: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({ description: "A 1.0 device: the 2.0 device fields with integer ids, and the 1.0-only fields (LP13)" });

const ATTRIBUTE = z
  .looseObject({
    id: z.string(),
    type: z.string(),
    displayName: z.string(),
    required: z.boolean(),
    visibility: z.string(),
  })
  .meta({ description: "A custom field (attribute) with its defaults in effect, no partition (LP13)" });

const INFO = z
  .strictObject({
    online: z.boolean(),
    version: z.string().describe("The software version answering, as `rsop --version` prints it"),
    elevatorsPresent: z.boolean(),
    facilityCodesSupported: z.enum(["supported", "notSupported", "required"]),
  })
  .meta({ description: "The cloud-node information (LP9)" });

/** The declared answer of each of these reads, by its handler: an object, or a list of them. */
export const SEED_ANSWERS: ReadonlyMap<unknown, z.ZodType> = new Map<unknown, z.ZodType>([
  [reads.connection, connection(z.string())],
  [reads.connections, z.array(connection(z.string()))],
  [reads.device, DEVICE],
  [reads.partition, PARTITION],
  [reads.partitions, z.array(PARTITION)],
  [panelReads.connection, connection(z.number().int())],
  [panelReads.connections, z.array(connection(z.number().int()))],
  [panelReads.person, PERSON],
  [panelReads.persons, z.array(PERSON)],
  [panelReads.groupPersons, z.array(PERSON)],
  [panelReads.credential, PANEL_CREDENTIAL],
  [panelReads.personCredentials, z.array(PANEL_CREDENTIAL)],
  [panelReads.device, PANEL_DEVICE],
  [panelReads.devices, z.array(PANEL_DEVICE)],
  [panelReads.attribute, ATTRIBUTE],
  [panelReads.attributes, z.array(ATTRIBUTE)],
  [panelReads.info, INFO],
]);
