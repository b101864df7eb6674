// Writes examples/panel.json: the Chicago node of the example building as an architecture 1.0
// panel (`rsop-panel/1`, SPEC §8) — integer ids, `HH:mm` rule times, person metadata and custom
// attributes — so the README can show its migration to 2.0. Deterministic: it reads only
// examples/building.json. Usage: node examples/generatePanel.mjs [outPath]
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const building = JSON.parse(readFileSync(here("./building.json"), "utf8"));
const node = building.cloudNodes.find((n) => n.name === "Chicago Main");

/** 1, 2, 3… in the building's order, per collection. */
function numbering(items) {
  return new Map(items.map((x, i) => [x.id, i + 1]));
}
const hhmm = (t) => {
  if (!t.endsWith(":00")) throw new Error(`rule time ${t} has seconds; 1.0 rules use HH:mm`);
  return t.slice(0, 5);
};
const refId = (g) => (typeof g === "string" ? g : g.id);

const connections = building.connections.filter((c) => c.cloudNode === node.id);
const devices = building.devices.filter((d) => d.cloudNode === node.id);
const deviceIds = new Set(devices.map((d) => d.id));
const floorGroups = building.floorGroups.filter((f) => deviceIds.has(refId(f.readerPort)));
const floorGroupIds = new Set(floorGroups.map((f) => f.id));
const rules = building.rules
  .map((r) => ({ ...r, devices: (r.devices ?? []).filter((d) => deviceIds.has(d)), floorGroups: (r.floorGroups ?? []).filter((f) => floorGroupIds.has(f)) }))
  .filter((r) => r.devices.length > 0 || r.floorGroups.length > 0);
const groupIds = new Set(rules.map((r) => r.groupId));
const groups = building.groups.filter((g) => groupIds.has(g.id));
const persons = building.holders.filter((h) => h.groups.some((g) => groupIds.has(refId(g))));
const partitionIds = new Set([...groups, ...persons, ...floorGroups].map((x) => x.partition).filter((p) => p));
for (const d of devices) for (const p of d.partition ?? []) partitionIds.add(p.id);
const partitions = building.partitions.filter((p) => partitionIds.has(p.id));

const nConn = numbering(connections);
const nDev = numbering(devices);
const nFg = numbering(floorGroups);
const nGroup = numbering(groups);
const nPerson = numbering(persons);
const nRule = numbering(rules);
// Partition 0 is the default partition of 1.0 (seed 002: groups default to partition 0).
const nPart = new Map(partitions.map((p, i) => [p.id, p.default ? 0 : i + 1]));
let credentialId = 0;

const panel = {
  format: "rsop-panel/1",
  serialNumber: node.serialNumber,
  name: node.name,
  config: {
    timezone: node.timezone ?? building.timezone,
    logPurgeDays: 90,
    cardFormat: { id: "H10301", description: "HID H10301 standard 26-bit", min_input_bits: 26, max_input_bits: 26, facility_code: "ENFORCED" },
    locale: node.locale ?? "en",
    offlinePolicy: node.offlinePolicy,
    killTimer: node.killTimer,
  },
  ecards: node.ecards,
  partitions: partitions.map((p) => ({ id: nPart.get(p.id), name: p.name })),
  // Custom fields belong to a partition: each partition with persons defines the same two.
  attributes: [...new Set([0, ...persons.map((h) => nPart.get(h.partition) ?? 0)])]
    .sort((a, b) => a - b)
    .flatMap((partition) => [
      { id: "badgeColour", type: "enum", displayName: "Badge colour", partition, values: [{ id: "blue" }, { id: "red" }, { id: "green" }] },
      { id: "employeeNumber", type: "string", displayName: "Employee number", partition },
    ]),
  groups: groups.map((g) => ({ id: nGroup.get(g.id), name: g.name, partition: nPart.get(g.partition) ?? 0, metadata: { source: "HR sync" } })),
  persons: persons.map((h, i) => {
    const id = nPerson.get(h.id);
    return {
      id,
      firstName: h.firstName,
      lastName: h.lastName,
      email: h.email,
      partition: nPart.get(h.partition) ?? 0,
      enabled: h.enabled,
      activeDate: h.activeDate ?? null,
      expireDate: h.expireDate ?? null,
      pin: h.pin ?? null,
      duressPin: h.duressPin ?? null,
      customAttributes: { badgeColour: ["blue", "red", "green"][i % 3], employeeNumber: `E${String(10_000 + id)}` },
      metadata: i % 10 === 0 ? { payrollId: `P-${id}` } : null,
      groups: h.groups.map(refId).filter((g) => groupIds.has(g)).map((g) => nGroup.get(g)),
      credentials: (h.credentials ?? []).map((c) => ({
        id: ++credentialId,
        personId: id,
        credentialNumber: c.credentialNumber ?? null,
        facilityCode: c.facilityCode ?? null,
        description: c.description ?? null,
        types: c.types,
      })),
    };
  }),
  connections: connections.map(({ id, cloudNode: _n, ...rest }) => ({ id: nConn.get(id), ...rest })),
  devices: devices.map(({ id, cloudNode: _n, connection, primaryReader, partition, ...rest }) => ({
    id: nDev.get(id),
    ...rest,
    connection: nConn.get(refId(connection)),
    ...(primaryReader ? { primaryReader: nDev.get(refId(primaryReader)) } : {}),
    partition: (partition ?? []).map((p) => ({ id: nPart.get(p.id), name: partitions.find((x) => x.id === p.id).name })),
  })),
  floorGroups: floorGroups.map((f) => ({
    id: nFg.get(f.id),
    name: f.name,
    partition: nPart.get(f.partition) ?? 0,
    readerPort: nDev.get(refId(f.readerPort)),
    floors: f.floors.map((x) => nDev.get(refId(x))),
  })),
  rules: rules.map((r) => ({
    id: nRule.get(r.id),
    ...(r.name ? { name: r.name } : {}),
    type: r.type,
    groupId: nGroup.get(r.groupId),
    devices: r.devices.map((d) => nDev.get(d)),
    floorGroups: r.floorGroups.map((f) => nFg.get(f)),
    startTime: hhmm(r.startTime),
    stopTime: hhmm(r.stopTime),
    recurring: r.recurring,
    allow: r.allow ?? true,
    authenticationPolicy: r.authenticationPolicy ?? null,
    enabled: r.enabled ?? true,
    ...(r.startDate ? { startDate: r.startDate } : {}),
    ...(r.endDate ? { endDate: r.endDate } : {}),
  })),
};

writeFileSync(process.argv[2] ?? here("./panel.json"), `${JSON.stringify(panel, null, 2)}\n`);
