// Architecture 1.0 → 2.0: one panel's entities as an `rsop-system/1` snapshot. The same conversion
// serves two purposes through the id mapper: evaluating a panel directly (ids are the integers as
// strings) and migrating it (ids are UUID v5, see legacy1/migration). Entities keep their order, so
// a 2.0 issue path maps back to the panel path by renaming the collection.
import { wellKnownLayout } from "../model/cardFormats.js";
import type { PanelSnapshot } from "./panelSchema.js";
import type { SystemSnapshotInput } from "../model/systemSchema.js";

/** The entity types of the migration API's id-mapping endpoint that a panel holds. */
export type MappedType =
  | "cardFormat"
  | "connection"
  | "credential"
  | "device"
  | "floorGroup"
  | "group"
  | "holder"
  | "partition"
  | "rule";

/** Gives the 2.0 id of a 1.0 entity. */
export type IdMapper = (type: MappedType, legacyId: number) => string;

/** Something of the panel that has no place in 2.0, reported rather than silently dropped. */
export interface DroppedField {
  readonly type: MappedType | "cloudNode";
  readonly legacyId: number | string;
  readonly field: string;
  readonly reason: string;
}

export interface PanelConversion {
  readonly input: SystemSnapshotInput & { customFields: unknown[] };
  readonly dropped: DroppedField[];
}

type Json = Record<string, unknown>;

const CONNECTION_FIELDS = [
  "name",
  "type",
  "connected",
  "protocol",
  "ipaddress",
  "ipv6Address",
  "port",
  "dhcp",
  "netmask",
  "gateway",
  "dns",
  "macAddress",
  "manufacturer",
];
const DEVICE_FIELDS = [
  "name",
  "port",
  "type",
  "publicIcon",
  "inputTypes",
  "osdpAddress",
  "wirelessAddress",
  "readerType",
  "readerSerialNumber",
  "supportBleCredentials",
  "securedReadsOnly",
  "delay",
  "dwell",
  "dps",
  "propAlarm",
  "propDelay",
  "rex",
  "forcedAlarm",
  "autoOpenAfterFirstAllow",
  "authenticationPolicy",
  "hardwareVersion",
  "serialNumber",
  "firmwareVersion",
  "created",
];
const HOLDER_FIELDS = [
  "firstName",
  "lastName",
  "email",
  "photoUrl",
  "enabled",
  "activeDate",
  "expireDate",
  "pin",
  "duressPin",
];
const CREDENTIAL_FIELDS = ["credentialNumber", "facilityCode", "description", "types"];
const RULE_FIELDS = ["name", "type", "recurring", "allow", "authenticationPolicy", "enabled", "startDate", "endDate"];
/** 1.0-only device fields (the 1.0 panel API Device). */
const DEVICE_ONLY_1_0 = ["bootloaderVersion", "startupVersion"];

function pick(from: Json, fields: readonly string[], into: Json): Json {
  for (const f of fields) if (from[f] !== undefined) into[f] = from[f];
  return into;
}

/** A 1.0 definition (or child) with a `description` wherever it has a `regex` and none: "Must match <regex>." */
function describeRegex(d: Json): Json {
  const out: Json = { ...d };
  if (typeof d.regex === "string" && d.description === undefined) out.description = `Must match ${d.regex}.`;
  if (d.items !== null && typeof d.items === "object" && !Array.isArray(d.items))
    out.items = describeRegex(d.items as Json);
  if (Array.isArray(d.fields))
    out.fields = d.fields.map((f: unknown) =>
      f !== null && typeof f === "object" && !Array.isArray(f) ? describeRegex(f as Json) : f,
    );
  return out;
}

function partitionsOf(panel: PanelSnapshot): { id: number; name: string }[] {
  const names = new Map<number, string>();
  for (const p of panel.partitions) names.set(p.id, p.name);
  for (const d of panel.devices)
    for (const p of d.partition ?? []) if (!names.has(p.id) && p.name !== undefined) names.set(p.id, p.name);
  const used = new Set<number>([...names.keys()]);
  for (const x of [...panel.persons, ...panel.groups, ...panel.floorGroups, ...panel.attributes]) used.add(x.partition);
  for (const d of panel.devices) for (const p of d.partition ?? []) used.add(p.id);
  return [...used]
    .sort((a, b) => a - b)
    .map((id) => ({ id, name: names.get(id) ?? (id === 0 ? "Default" : `Partition ${id}`) }));
}

/**
 * The panel's card format as a migrated 2.0 entry (semantics M7): the mapped `id`, and a `layout` that
 * decodes exactly as the legacy entry did — its own `layout` when it has one, else the well-known name
 * its legacy id is, else none (a raw format). The legacy id becomes the description when it has none.
 */
function migratedCardFormat(legacy: Json, id: string): Json {
  const out: Json = { ...legacy, id };
  if (legacy.layout === undefined || legacy.layout === null) {
    delete out.layout;
    if (typeof legacy.id === "string" && wellKnownLayout(legacy.id) !== undefined) out.layout = legacy.id;
  }
  if ((legacy.description === undefined || legacy.description === null) && typeof legacy.id === "string")
    out.description = legacy.id;
  return out;
}

/**
 * Converts a checked panel to 2.0 snapshot input. `forEvaluation` drops a `propDelay` set without
 * `propAlarm` (1.0 tolerates it, 2.0 does not, and it never affects access); migration keeps it
 * and preflight reports it. Migration also gives the card format its mapped id (evaluation keeps the
 * panel's entry as it is).
 */
export function panelToSystem(
  panel: PanelSnapshot,
  systemId: string,
  cloudNodeId: string,
  id: IdMapper,
  forEvaluation: boolean,
): PanelConversion {
  const dropped: DroppedField[] = [];
  const drop = (type: DroppedField["type"], legacyId: number | string, field: string, reason: string) =>
    dropped.push({ type, legacyId, field, reason });
  const partitions = partitionsOf(panel).map((p) => ({
    id: id("partition", p.id),
    name: p.name,
    ...(p.id === 0 ? { default: true } : {}),
  }));
  const config = panel.config as Json;
  const node: Json = { id: cloudNodeId, name: panel.name, serialNumber: panel.serialNumber };
  pick({ ecards: panel.ecards, ...config }, ["ecards", "offlinePolicy", "killTimer", "timezone", "locale"], node);
  const format = panel.config.cardFormat;
  node.cardFormat = format === null ? [] : [forEvaluation ? format : migratedCardFormat(format, id("cardFormat", 0))];
  if (config.logPurgeDays !== undefined)
    drop("cloudNode", panel.serialNumber, "config.logPurgeDays", "2.0 cloud nodes have no log purge setting.");

  const groups = panel.groups.map((g) => {
    if (g.metadata !== null) drop("group", g.id, "metadata", "2.0 groups have no metadata.");
    return { id: id("group", g.id), name: (g as Json).name, partition: id("partition", g.partition) };
  });
  const holders = panel.persons.map((p) => {
    if (p.metadata !== null) drop("holder", p.id, "metadata", "2.0 holders have no metadata.");
    const h = pick(p, HOLDER_FIELDS, { id: id("holder", p.id) });
    h.partition = id("partition", p.partition);
    h.customFields = p.customAttributes ?? {};
    h.groups = p.groups.map((g) => id("group", g));
    h.credentials = p.credentials.map((c) => pick(c, CREDENTIAL_FIELDS, { id: id("credential", c.id) }));
    return h;
  });
  const connections = panel.connections.map((c) => {
    const out = pick(c, CONNECTION_FIELDS, { id: id("connection", c.id), cloudNode: cloudNodeId });
    // The 2.0 systems API: the request field is spelled `macaddress`; the resource field `macAddress`.
    if (out.macAddress === undefined && (c as Json).macaddress !== undefined) out.macAddress = (c as Json).macaddress;
    return out;
  });
  const devices = panel.devices.map((d) => {
    if (d.metadata !== null) drop("device", d.id, "metadata", "2.0 devices have no metadata.");
    for (const f of DEVICE_ONLY_1_0)
      if ((d as Json)[f] !== undefined) drop("device", d.id, f, `2.0 devices have no ${f}.`);
    const out = pick(d, DEVICE_FIELDS, {
      id: id("device", d.id),
      cloudNode: cloudNodeId,
      connection: id("connection", d.connection),
    });
    out.type = d.type;
    out.publicIcon = d.publicIcon;
    out.partition = (d.partition ?? []).map((p) => ({
      id: id("partition", p.id),
      ...(p.name !== undefined ? { name: p.name } : {}),
    }));
    if (d.primaryReader !== null) out.primaryReader = id("device", d.primaryReader);
    if (forEvaluation && out.propAlarm !== true) delete out.propDelay;
    return out;
  });
  const floorGroups = panel.floorGroups.map((f) => ({
    id: id("floorGroup", f.id),
    name: (f as Json).name,
    partition: id("partition", f.partition),
    readerPort: id("device", f.readerPort),
    floors: f.floors.map((x) => id("device", x)),
  }));
  const rules = panel.rules.map((r) =>
    pick(r, RULE_FIELDS, {
      id: id("rule", r.id),
      groupId: id("group", r.groupId),
      devices: r.devices.map((d) => id("device", d)),
      floorGroups: r.floorGroups.map((f) => id("floorGroup", f)),
      startTime: `${r.startTime}:00`,
      stopTime: `${r.stopTime}:00`,
    }),
  );
  // Attributes become 2.0 custom fields (the engine does not read them); a 2.0 regex needs the
  // description 1.0 has no place for (semantics M5).
  const customFields = panel.attributes.map((a) => ({ ...describeRegex(a), partition: id("partition", a.partition) }));
  const input = {
    format: "rsop-system/1" as const,
    systemId,
    timezone: panel.config.timezone,
    partitions,
    groups,
    holders,
    cloudNodes: [node],
    connections,
    devices,
    floorGroups,
    rules,
    customFields,
  } as unknown as PanelConversion["input"];
  return { input, dropped };
}
