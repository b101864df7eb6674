// Whole `rsop-system/1` snapshots. The arbitrary draws a spec of plain picks (counts, masks, indexes)
// and `buildSnapshot` resolves it into valid snapshot JSON, so fast-check shrinks every part on its
// own without ever producing an invalid reference. Snapshots are small (1–3 nodes, ≤ 6 holders,
// ≤ 4 groups, ≤ 7 devices, ≤ 8 rules) but dense: every holder, rule and device meets the others.
import fc from "fast-check";
import type { SystemSnapshotInput } from "../../src/model/index.js";
import { type CardFormatInput, effectiveFormats } from "./cardFormat.js";
import { type CloudNodeSpec, DEFAULT_KILL_TIMER, cloudNodeSpecArb } from "./cloudNode.js";
import { type DoorSpec, type ElevatorBankSpec, doorSpecArb, elevatorBankSpecArb } from "./device.js";
import { type CredentialKind, type HolderSpec, PIN_POOL, holderSpecArb } from "./holder.js";
import { formatLocalDateTime } from "./localTime.js";
import { RULE_IDS, type RuleSpec, ruleSpecArb } from "./rule.js";
import { type CalendarSpec, type RuleCalendarSpec, buildCalendar, calendarsArb, ruleCalendarArb } from "./calendar.js";
import type { WindowInput } from "./window.js";
import { type Zone, zoneArb } from "./zone.js";

export interface SnapshotSpec {
  readonly systemTimezone: Zone | undefined;
  readonly withPartition: boolean;
  readonly nodes: CloudNodeSpec[];
  readonly groupCount: number;
  readonly holders: HolderSpec[];
  readonly doors: DoorSpec[];
  readonly bank: ElevatorBankSpec | null;
  readonly rules: RuleSpec[];
  /** Which CUSTOM_FIELDS the partition defines (bit k: template k), and which of them are required. */
  readonly customFieldMask: number;
  readonly requiredMask: number;
  /** Calendars (calendar.ts), and per rule (by position) the calendar it follows; absent: none. */
  readonly calendars?: CalendarSpec[];
  readonly ruleCalendars?: (RuleCalendarSpec | null)[];
}

/**
 * Custom field templates of the partition, each with a value that fits it: every type, bounds,
 * a regex (with its description), enum values, array items and object children.
 */
export const CUSTOM_FIELDS: readonly {
  readonly def: Record<string, unknown>;
  readonly value: (i: number) => unknown;
}[] = [
  { def: { id: "badge", type: "string", regex: "^B-[0-9]+$", description: "B- and digits" }, value: (i) => `B-${i}` },
  { def: { id: "level", type: "number", min: 0, max: 10, decimals: 1 }, value: (i) => (i % 10) + 0.5 },
  {
    def: { id: "colour", type: "enum", values: [{ id: "red" }, { id: "blue", displayName: "Blue" }] },
    value: (i) => (i % 2 === 0 ? "red" : "blue"),
  },
  {
    def: { id: "tags", type: "array", items: { type: "string" }, minLength: 1, maxLength: 3 },
    value: (i) => [`t${i}`],
  },
  {
    def: {
      id: "address",
      type: "object",
      displayName: "Address",
      fields: [
        { id: "city", type: "string" },
        { id: "floor", type: "number", min: 0 },
      ],
    },
    value: (i) => ({ city: "Lyon", floor: i }),
  },
  { def: { id: "vip", type: "boolean", visibility: "readonly" }, value: (i) => i % 3 === 0 },
];

export const snapshotSpecArb: fc.Arbitrary<SnapshotSpec> = fc.record({
  systemTimezone: fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: zoneArb }),
  withPartition: fc.boolean(),
  nodes: fc.array(cloudNodeSpecArb, { minLength: 1, maxLength: 3 }),
  groupCount: fc.integer({ min: 1, max: 4 }),
  holders: fc.array(holderSpecArb, { minLength: 2, maxLength: 6 }),
  doors: fc.array(doorSpecArb, { minLength: 1, maxLength: 3 }),
  bank: fc.option(elevatorBankSpecArb, { nil: null, freq: 2 }),
  rules: fc.array(ruleSpecArb, { minLength: 1, maxLength: 8 }),
  customFieldMask: fc.nat(63),
  requiredMask: fc.nat(63),
});

/** snapshotSpecArb with calendars and rules that follow them (docs/semantics.md C1, C2). */
export const calendarSnapshotSpecArb: fc.Arbitrary<SnapshotSpec> = fc
  .tuple(snapshotSpecArb, calendarsArb, fc.array(ruleCalendarArb, { minLength: 8, maxLength: 8 }))
  .map(([spec, calendars, ruleCalendars]) => ({ ...spec, calendars, ruleCalendars }));

/** What request generation needs to know about a built snapshot. */
export interface NodeMeta {
  readonly id: string;
  /** The effective zone: the node's, else the system's, else UTC. */
  readonly zone: string;
  readonly killTimer: number;
  readonly offlinePolicy: 0 | 1 | 2;
  readonly formats: readonly CardFormatInput[];
  readonly ecards: readonly (number | string)[];
}
export interface CredentialMeta {
  readonly id: string;
  readonly holderId: string;
  /** A number, or the decimal string of one past 2^53−1 (CN1). */
  readonly number: number | string | null;
  readonly facilityCode: number | null;
  readonly card: boolean;
  readonly types: readonly string[];
}
export interface HolderMeta {
  readonly id: string;
  readonly groups: readonly string[];
  readonly pin: string | null;
  readonly duressPin: string | null;
  readonly activeDate: string | null;
  readonly expireDate: string | null;
  readonly credentials: readonly CredentialMeta[];
}
export interface DeviceMeta {
  readonly id: string;
  readonly type: string;
  /** Effective input types (all three when the device lists none). */
  readonly inputTypes: readonly string[];
  readonly securedReadsOnly: boolean;
  readonly node: NodeMeta;
  /** Rules that reach this device (door rules naming it, elevator rules through its floor groups). */
  readonly rules: readonly RuleMeta[];
}
export interface RuleMeta extends WindowInput {
  readonly id: string;
  readonly groupId: string;
  readonly enabled: boolean;
  /** Devices the rule reaches: door devices it names, or the readers of its floor groups. */
  readonly deviceIds: readonly string[];
}
export interface SnapshotMeta {
  readonly nodes: readonly NodeMeta[];
  readonly devices: readonly DeviceMeta[];
  readonly holders: readonly HolderMeta[];
  readonly cards: readonly CredentialMeta[];
  readonly digital: readonly CredentialMeta[];
  readonly rules: readonly RuleMeta[];
}

export interface BuiltSnapshot {
  /** Plain JSON, valid `rsop-system/1` input. */
  readonly input: SystemSnapshotInput;
  readonly meta: SnapshotMeta;
}

const CREDENTIAL_TYPES: Record<CredentialKind, ("card" | "touch" | "token")[]> = {
  card: ["card"],
  cardTouch: ["card", "touch"],
  touch: ["touch"],
  token: ["token"],
  touchToken: ["touch", "token"],
  pendingTouch: ["touch"],
  pendingToken: ["token"],
};

/** Floor relays are named so that string order differs from creation order. */
const RELAY_IDS = ["fl-2", "fl-10", "fl-1b"];

type Json = Record<string, unknown>;

/** Resolves a spec into valid snapshot JSON plus the facts requests are built from. */
/**
 * A node's connection as the service describes it (seed 001 "Connection body"): an ipaddress for
 * ethernet and wirelessGateway, a port unless lockhub (a hub sometimes states one), a MAC address for a
 * lockhub; ethernet alone sometimes states its protocol, IPv6 address and manufacturer (else the
 * defaults IPv6 and VENDOR_B apply).
 */
function connectionOf(n: CloudNodeSpec, nodeId: string, i: number): Json {
  const o = n.connectionOptions;
  const c: Json = { id: `conn-${nodeId}`, name: `Connection ${i + 1}`, type: n.connectionType, cloudNode: nodeId };
  if (n.connectionType !== "lockhub" || o % 2 === 1) c.port = n.connectionType === "usb" ? 1 : 4000 + i;
  if (n.connectionType === "lockhub") c.macAddress = `00:1B:2C:4A:20:${String(10 + i).padStart(2, "0")}`;
  if (n.connectionType === "ethernet" || n.connectionType === "wirelessGateway")
    c.ipaddress = `10.0.${i}.${10 + (o % 4)}`;
  if (n.connectionType === "ethernet") {
    if (o % 4 < 2) c.manufacturer = (o >> 2) % 2 === 0 ? "VENDOR_A" : "VENDOR_B";
    if ((o >> 3) % 2 === 1) c.protocol = o % 2 === 0 ? "IPv4" : "IPv6";
    if (o % 3 === 0) c.ipv6Address = `fd00::${i + 1}`;
  }
  return c;
}

export function buildSnapshot(spec: SnapshotSpec): BuiltSnapshot {
  const systemZone = spec.systemTimezone ?? "UTC";
  const partitionId = spec.withPartition ? "p1" : null;

  const groups: Json[] = [];
  for (let g = 0; g < spec.groupCount; g++) {
    const group: Json = { id: `g${g + 1}`, name: `Group ${g + 1}` };
    if (partitionId !== null && g % 2 === 0) group.partition = partitionId;
    groups.push(group);
  }

  // Holders first: e-cards pick among their card numbers.
  const usedNumbers = new Set<number | string>();
  const holders: Json[] = [];
  const holderMetas: HolderMeta[] = [];
  spec.holders.forEach((h, i) => {
    const id = `h${i + 1}`;
    const credentials: Json[] = [];
    const credMetas: CredentialMeta[] = [];
    h.credentials.forEach((c, j) => {
      const types = CREDENTIAL_TYPES[c.kind];
      const card = types.includes("card");
      const pending = c.kind === "pendingTouch" || c.kind === "pendingToken";
      const number = pending ? null : c.number;
      if (number !== null) {
        if (usedNumbers.has(number)) return; // numbers are unique system-wide
        usedNumbers.add(number);
      }
      const facilityCode = card ? c.facilityCode : null;
      const credId = `${id}-c${j + 1}`;
      const cred: Json = { id: credId, types: [...types] };
      // Null fields are sometimes written out, sometimes left to the seed default (null).
      if (number !== null || j % 2 === 0) cred.credentialNumber = number;
      if (facilityCode !== null || (card && j % 2 === 0)) cred.facilityCode = facilityCode;
      if (c.withHolderId) cred.holderId = id;
      credentials.push(cred);
      credMetas.push({ id: credId, holderId: id, number, facilityCode, card, types });
    });
    const pin = h.pin === null || h.pin === undefined ? null : PIN_POOL[h.pin]!;
    let duress = h.duressPin === null || h.duressPin === undefined ? null : PIN_POOL[h.duressPin]!;
    if (duress !== null && duress === pin) duress = PIN_POOL[(h.duressPin! + 1) % PIN_POOL.length]!;
    // Mask bits beyond the group count would mostly give holders no group: fold them back in.
    let memberOf = groups.filter((_, g) => (h.groupMask >> g) & 1);
    if (memberOf.length === 0 && h.groupMask !== 0) memberOf = [groups[h.groupMask % groups.length]!];
    const holder: Json = {
      id,
      firstName: `First${i + 1}`,
      lastName: `Last${i + 1}`,
      groups: memberOf.map((g) => (h.groupsAsObjects ? { ...g } : g.id)),
      credentials,
    };
    if (h.enabled !== undefined) holder.enabled = h.enabled;
    const activeDate = h.activeDate ? formatLocalDateTime(h.activeDate.day, h.activeDate.seconds) : h.activeDate;
    const expireDate = h.expireDate ? formatLocalDateTime(h.expireDate.day, h.expireDate.seconds) : h.expireDate;
    if (activeDate !== undefined) holder.activeDate = activeDate;
    if (expireDate !== undefined) holder.expireDate = expireDate;
    if (h.pin !== undefined) holder.pin = pin;
    if (h.duressPin !== undefined) holder.duressPin = duress;
    if (partitionId !== null && i % 3 === 1) {
      holder.partition = partitionId;
      // Values for the partition's custom fields: every required one, about half of the others.
      const values: Json = {};
      CUSTOM_FIELDS.forEach((f, k) => {
        if ((spec.customFieldMask >> k) & 1 && ((spec.requiredMask >> k) & 1 || (i + k) % 2 === 0))
          values[f.def.id as string] = f.value(i);
      });
      if (Object.keys(values).length > 0 || i % 2 === 0) holder.customFields = values;
    }
    holders.push(holder);
    holderMetas.push({
      id,
      groups: memberOf.map((g) => g.id as string),
      pin,
      duressPin: duress,
      activeDate: activeDate ?? null,
      expireDate: expireDate ?? null,
      credentials: credMetas,
    });
  });
  const allCreds = holderMetas.flatMap((h) => h.credentials);
  const cards = allCreds.filter((c) => c.card);
  const digital = allCreds.filter((c) => !c.card);

  const cloudNodes: Json[] = [];
  const connections: Json[] = [];
  const nodeMetas: NodeMeta[] = spec.nodes.map((n, i) => {
    const id = `n${i + 1}`;
    const ecards =
      n.ecards === null || n.ecards === undefined
        ? n.ecards
        : n.ecards.flatMap((e) =>
            "number" in e ? [e.number] : cards.length === 0 ? [] : [cards[e.holderCard % cards.length]!.number!],
          );
    const node: Json = { id, name: `Node ${i + 1}` };
    if (n.timezone !== undefined) node.timezone = n.timezone;
    if (n.offlinePolicy !== undefined) node.offlinePolicy = n.offlinePolicy;
    if (n.killTimer !== undefined) node.killTimer = n.killTimer;
    if (n.cardFormat !== undefined) node.cardFormat = n.cardFormat;
    if (ecards !== undefined) node.ecards = ecards;
    cloudNodes.push(node);
    connections.push(connectionOf(n, id, i));
    return {
      id,
      zone: n.timezone ?? systemZone,
      killTimer: n.killTimer ?? DEFAULT_KILL_TIMER,
      offlinePolicy: n.offlinePolicy ?? 0,
      formats: effectiveFormats(n.cardFormat),
      ecards: ecards ?? [],
    };
  });
  const nextPort = new Map<string, number>();
  const place = (nodePick: number, asObject: boolean): Json => {
    const node = nodeMetas[nodePick % nodeMetas.length]!;
    const conn = `conn-${node.id}`;
    const port = nextPort.get(conn) ?? 1;
    nextPort.set(conn, port + 1);
    return { cloudNode: node.id, connection: asObject ? { id: conn } : conn, port };
  };
  const readerOptions = (o: DoorSpec | ElevatorBankSpec["readers"][number]): Json => {
    const out: Json = {};
    if (o.inputTypes !== undefined) out.inputTypes = o.inputTypes;
    if (o.securedReadsOnly !== undefined) out.securedReadsOnly = o.securedReadsOnly;
    if (o.supportBleCredentials !== undefined) out.supportBleCredentials = o.supportBleCredentials;
    if (o.authenticationPolicy !== undefined) out.authenticationPolicy = o.authenticationPolicy;
    return out;
  };

  const devices: Json[] = [];
  const doorIds: string[] = [];
  const primaries: string[] = [];
  spec.doors.forEach((d, i) => {
    const id = `d${i + 1}`;
    let type: string = d.type;
    const dev: Json = { id, name: `Door ${i + 1}`, ...place(d.nodePick, d.connectionAsObject), ...readerOptions(d) };
    if (type === "additionalReader") {
      if (primaries.length === 0) type = "primaryReader";
      else dev.primaryReader = primaries[d.primaryPick % primaries.length];
    }
    dev.type = type;
    if (type !== "additionalReader") dev.publicIcon = type === "primaryReader" ? "swingingDoor" : "light";
    if (type === "primaryReader") primaries.push(id);
    if (partitionId !== null && i % 2 === 0) dev.partition = [{ id: partitionId, name: "Main" }];
    devices.push(dev);
    doorIds.push(id);
  });

  const floorGroups: Json[] = [];
  const floorGroupReader: string[] = [];
  if (spec.bank !== null) {
    const bank = spec.bank;
    const readerIds = bank.readers.map((r, k) => {
      const id = `e${k + 1}`;
      devices.push({
        id,
        name: `Elevator ${k + 1}`,
        type: k === 0 ? "elevatorReader" : "additionalElevatorReader",
        ...place(bank.nodePick, false),
        ...readerOptions(r),
      });
      return id;
    });
    const relayIds = RELAY_IDS.slice(0, bank.relayCount);
    for (const id of relayIds)
      devices.push({ id, name: `Floor ${id}`, type: "floorRelay", ...place(bank.nodePick, false) });
    const extra: typeof bank.floorGroups = [];
    for (let k = 0; k < bank.extraFloorGroups; k++)
      extra.push({ readerPick: 0, relayMask: (k % 7) + 1, refsAsObjects: false });
    [...bank.floorGroups, ...extra].forEach((fg, k) => {
      const reader = readerIds[fg.readerPick % readerIds.length]!;
      let floors = relayIds.filter((_, r) => (fg.relayMask >> r) & 1);
      if (floors.length === 0) floors = [relayIds[0]!];
      const group: Json = {
        id: `fg${k + 1}`,
        name: `Floors ${k + 1}`,
        readerPort: fg.refsAsObjects ? { id: reader, name: "reader" } : reader,
        floors: fg.refsAsObjects ? floors.map((f) => ({ id: f })) : floors,
      };
      if (partitionId !== null && k === 0) group.partition = partitionId;
      floorGroups.push(group);
      floorGroupReader.push(reader);
    });
  }

  const usedRuleIds = new Set<string>();
  const rules: Json[] = [];
  const ruleMetas: RuleMeta[] = [];
  const reach = new Map<string, RuleMeta[]>();
  const calendars = (spec.calendars ?? []).map((c, k) => buildCalendar(c, k, partitionId));
  for (const [position, r] of spec.rules.entries()) {
    let k = r.idPick;
    while (usedRuleIds.has(RULE_IDS[k % RULE_IDS.length]!)) k++;
    const id = RULE_IDS[k % RULE_IDS.length]!;
    usedRuleIds.add(id);
    const elevator = r.elevator && floorGroups.length > 0;
    const rule: Json = {
      id,
      type: elevator ? "elevator" : "door",
      groupId: groups[r.groupPick % groups.length]!.id,
      ...r.window,
    };
    let reached: string[];
    if (elevator) {
      const picked = [...new Set(r.floorGroupPicks.map((p) => p % floorGroups.length))];
      rule.floorGroups = picked.map((j) => floorGroups[j]!.id as string);
      reached = picked.map((j) => floorGroupReader[j]!);
    } else {
      reached = doorIds.filter((_, j) => (r.deviceMask >> j) & 1);
      if (reached.length === 0 && r.deviceMask !== 0) reached = [doorIds[r.deviceMask % doorIds.length]!];
      rule.devices = reached;
      if (r.allow !== undefined) rule.allow = r.allow;
    }
    if (r.authenticationPolicy !== undefined) rule.authenticationPolicy = r.authenticationPolicy;
    if (r.enabled !== undefined) rule.enabled = r.enabled;
    if (r.named) rule.name = `Rule ${id}`;
    const follows = spec.ruleCalendars?.[position];
    if (follows && calendars.length > 0)
      rule.calendar = { id: calendars[follows.pick % calendars.length]!.id, mode: follows.mode };
    rules.push(rule);
    const meta: RuleMeta = {
      id,
      groupId: rule.groupId as string,
      enabled: r.enabled !== false,
      deviceIds: [...new Set(reached)],
      ...r.window,
    };
    ruleMetas.push(meta);
    for (const d of new Set(reached)) reach.set(d, [...(reach.get(d) ?? []), meta]);
  }

  const input: Json = { format: "rsop-system/1", systemId: "sys-1" };
  if (spec.systemTimezone !== undefined) input.timezone = spec.systemTimezone;
  if (partitionId !== null) input.partitions = [{ id: partitionId, name: "Main" }];
  Object.assign(input, { groups, holders, cloudNodes, connections, devices, rules });
  if (floorGroups.length > 0) input.floorGroups = floorGroups;
  if (calendars.length > 0) input.calendars = calendars;
  if (partitionId !== null && spec.customFieldMask !== 0)
    input.customFields = CUSTOM_FIELDS.flatMap((f, k) =>
      (spec.customFieldMask >> k) & 1
        ? [{ ...f.def, partition: partitionId, ...((spec.requiredMask >> k) & 1 ? { required: true } : {}) }]
        : [],
    );

  const deviceMetas: DeviceMeta[] = devices.map((d) => ({
    id: d.id as string,
    type: d.type as string,
    inputTypes: (d.inputTypes as string[] | undefined) ?? ["wiegand", "unencryptedOsdp", "encryptedOsdp"],
    securedReadsOnly: d.securedReadsOnly === true,
    node: nodeMetas.find((n) => n.id === d.cloudNode)!,
    rules: reach.get(d.id as string) ?? [],
  }));
  return {
    input: input as unknown as SystemSnapshotInput,
    meta: { nodes: nodeMetas, devices: deviceMetas, holders: holderMetas, cards, digital, rules: ruleMetas },
  };
}

/** Valid snapshot JSON with the facts about it. */
export const builtSnapshotArb: fc.Arbitrary<BuiltSnapshot> = snapshotSpecArb.map(buildSnapshot);

/** Valid snapshot JSON. */
export const snapshotInputArb: fc.Arbitrary<SystemSnapshotInput> = builtSnapshotArb.map((b) => b.input);
