// Random operations (seed routes) for the live system. A spec is plain picks; `resolveOperation`
// turns it into an operation against the snapshot it is applied to, so ids usually exist (and
// sometimes do not), bodies are usually valid (and sometimes broken in one named way).
import fc from "fast-check";
import type { SystemSnapshot } from "../../src/model/index.js";
import type { Operation } from "../../src/live/index.js";
import { CUSTOM_FIELDS } from "./snapshot.js";

export const OPERATION_KINDS = [
  "createHolder",
  "updateHolder",
  "deleteHolder",
  "createCard",
  "createDigital",
  "updateCredential",
  "deleteCredential",
  "activateCredential",
  "createGroup",
  "updateGroup",
  "deleteGroup",
  "addMembership",
  "removeMembership",
  "replaceHolderGroups",
  "replaceGroupHolders",
  "createRule",
  "updateRule",
  "deleteRule",
  "createCloudNode",
  "updateCloudNode",
  "deleteCloudNode",
  "createConnection",
  "updateConnection",
  "deleteConnection",
  "configureConnection",
  "createDevice",
  "updateDevice",
  "deleteDevice",
  "createPartition",
  "updatePartition",
  "deletePartition",
  "replacePartitionDevices",
  "removePartitionDevice",
  "createFloorGroup",
  "updateFloorGroup",
  "deleteFloorGroup",
  "createCustomField",
  "updateCustomField",
  "deleteCustomField",
  "replaceCustomFields",
  "read",
  "garbage",
] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export interface OperationSpec {
  readonly kind: OperationKind;
  /** Picks among existing entities (taken modulo the count; a count of 0 gives an unknown id). */
  readonly a: number;
  readonly b: number;
  readonly mask: number;
  /** 0 = a valid body; 1..4 = one named defect. */
  readonly defect: number;
  readonly unknownId: boolean;
  readonly number: number;
  readonly name: string;
  readonly window: { readonly start: number; readonly stop: number; readonly days: number };
}

export const operationSpecArb: fc.Arbitrary<OperationSpec> = fc.record({
  kind: fc.constantFrom(...OPERATION_KINDS),
  a: fc.nat({ max: 50 }),
  b: fc.nat({ max: 50 }),
  mask: fc.nat({ max: 255 }),
  defect: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) }),
  unknownId: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  number: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 1_000_000 })),
  name: fc.constantFrom("Night", "Day", "Ward 3", "Pharmacy", "Cleaners", "x".repeat(71), ""),
  window: fc.record({
    start: fc.integer({ min: 0, max: 23 }),
    stop: fc.integer({ min: 0, max: 24 }),
    days: fc.integer({ min: 0, max: 127 }),
  }),
});

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const pad = (n: number): string => String(n).padStart(2, "0");

function pick<T>(list: readonly T[], i: number): T | undefined {
  return list.length === 0 ? undefined : list[i % list.length];
}

function idOf(list: readonly { id: string }[], i: number, unknown: boolean): string {
  return unknown ? "no-such-id" : (pick(list, i)?.id ?? "no-such-id");
}

/** The entities nothing references, or all of them when every one is referenced (so the pick still exists). */
function unreferenced<T extends { id: string }>(list: readonly T[], used: (id: string) => boolean): readonly T[] {
  const free = list.filter((x) => !used(x.id));
  return free.length > 0 ? free : list;
}

function subset<T>(list: readonly T[], mask: number): T[] {
  return list.filter((_, j) => (mask >> j) & 1);
}

/**
 * A node's card format in a write (SPEC §5): an old-style well-known id, a layout name under another
 * id, or a raw format; defect 3 gives a bit range that does not suit it, defect 4 an unknown layout name.
 */
export function cardFormatBody(spec: {
  readonly mask: number;
  readonly number: number;
  readonly defect: number;
}): Record<string, unknown> {
  const facility_code = spec.mask % 16 < 8 ? "ENFORCED" : "NOT_ENFORCED";
  switch (spec.number % 3) {
    case 0:
      return { id: "H10301", min_input_bits: 26, max_input_bits: spec.defect === 3 ? 8 : 26, facility_code };
    case 1:
      return {
        id: "lobby",
        min_input_bits: 34,
        max_input_bits: spec.defect === 3 ? 35 : 34,
        layout: spec.defect === 4 ? "H10036" : "H10306",
        facility_code,
      };
    default:
      return { id: "site-raw", min_input_bits: 26, max_input_bits: spec.defect === 3 ? 8 : 40, facility_code };
  }
}

function ruleBody(s: SystemSnapshot, spec: OperationSpec): Record<string, unknown> {
  const elevator = spec.mask % 5 === 0 && s.floorGroups.length > 0;
  const doors = s.devices.filter(
    (d) => d.type !== "floorRelay" && d.type !== "elevatorReader" && d.type !== "additionalElevatorReader",
  );
  const body: Record<string, unknown> = {
    type: elevator ? "elevator" : "door",
    groupId: idOf(s.groups, spec.a, spec.unknownId),
    startTime: `${pad(spec.window.start)}:00:00`,
    stopTime: `${pad(spec.window.stop)}:00:00`,
    recurring: DAYS.filter((_, j) => (spec.window.days >> j) & 1),
    allow: spec.mask % 7 !== 3 || elevator,
    authenticationPolicy: [null, "cardOnly", "pinOnly", "cardOrPin", "cardAndPin"][spec.mask % 5],
  };
  if (elevator) body.floorGroups = subset(s.floorGroups, spec.b | 1).map((f) => f.id);
  else body.devices = subset(doors, spec.b | 1).map((d) => d.id);
  if (spec.defect === 1) body.startTime = "25:00:00";
  if (spec.defect === 2) delete body.type;
  if (spec.defect === 3) body.recurring = ["Mon", "Mon"];
  return body;
}

/** A custom field definition body: template `k`, sometimes required, sometimes broken in one named way. */
function customFieldBody(spec: OperationSpec, k: number): Record<string, unknown> {
  const body: Record<string, unknown> = { ...CUSTOM_FIELDS[k % CUSTOM_FIELDS.length]!.def };
  if (spec.mask % 3 === 0) body.required = true;
  if (spec.defect === 1) body.type = "date";
  if (spec.defect === 2) Object.assign(body, { type: "number", min: 5, max: 1 });
  if (spec.defect === 3) Object.assign(body, { type: "string", regex: "[a-", description: "broken" });
  if (spec.defect === 4) Object.assign(body, { type: "string", regex: "^x", description: undefined });
  return body;
}

/** Custom field values for a holder of `partition`: fitting ones for about half its fields, or one named defect. */
function customValues(s: SystemSnapshot, partition: string | null, spec: OperationSpec): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  s.customFields
    .filter((d) => d.partition === partition)
    .forEach((d, k) => {
      const template = CUSTOM_FIELDS.find((f) => f.def.id === d.id && f.def.type === d.type);
      if (template !== undefined && (d.required || (spec.mask >> k) & 1)) values[d.id] = template.value(spec.number);
    });
  if (spec.defect === 3) values.nope = 1;
  if (spec.defect === 4) values[s.customFields.find((d) => d.partition === partition)?.id ?? "badge"] = { wrong: true };
  return values;
}

/** The operation a spec names against snapshot `s`. */
export function resolveOperation(s: SystemSnapshot, spec: OperationSpec): Operation {
  const holder = pick(s.holders, spec.a);
  const holderId = idOf(s.holders, spec.a, spec.unknownId);
  const groupId = idOf(s.groups, spec.b, spec.unknownId);
  switch (spec.kind) {
    case "createHolder": {
      const body: Record<string, unknown> = {
        firstName: spec.defect === 1 ? "" : "Ann",
        lastName: spec.defect === 2 ? "L".repeat(36) : "Lee",
        groups: subset(s.groups, spec.mask)
          .map((g) => g.id)
          .concat(spec.defect === 3 ? ["no-such-group"] : []),
        pin: spec.mask % 3 === 0 ? String(1000 + spec.number) : null,
        credentials:
          spec.mask % 2 === 0
            ? [{ types: ["card"], credentialNumber: spec.number, facilityCode: spec.mask % 4 === 0 ? 17 : null }]
            : [],
      };
      if (spec.mask % 8 === 3 && s.partitions.length > 0) {
        body.partition = idOf(s.partitions, spec.b, false);
        body.customFields = customValues(s, body.partition as string, spec);
      }
      if (spec.defect === 4) body.enabled = "yes";
      return { method: "POST", path: "/holders", body };
    }
    case "updateHolder": {
      const body: Record<string, unknown> = {
        firstName: holder?.firstName ?? "Bo",
        lastName: spec.name === "" ? "Renamed" : spec.name.slice(0, 35),
        partition: holder?.partition ?? null,
        enabled: spec.mask % 4 !== 0,
        activeDate: spec.mask % 8 === 1 ? "2026-04-10T00:00:00" : null,
        expireDate: spec.mask % 8 === 2 ? "2026-04-16T00:00:00" : null,
        pin: spec.mask % 3 === 0 ? String(2000 + spec.number) : null,
        duressPin: null,
      };
      if (spec.defect === 1) delete body.enabled;
      if (spec.defect === 2) body.pin = "12ab";
      // Sometimes a move to another partition, sometimes new custom field values (L2: else kept).
      if (spec.mask % 16 === 5) body.partition = idOf(s.partitions, spec.b, false);
      if (spec.mask % 4 === 1 || spec.defect >= 3)
        body.customFields = customValues(s, body.partition as string | null, spec);
      return { method: "PUT", path: `/holders/${holderId}`, body };
    }
    case "deleteHolder":
      return { method: "DELETE", path: `/holders/${holderId}` };
    case "createCard": {
      const body: Record<string, unknown> = {
        types: ["card"],
        credentialNumber: spec.number,
        facilityCode: spec.mask % 2 === 0 ? 17 : null,
      };
      if (spec.defect === 1) delete body.credentialNumber;
      if (spec.defect === 2) body.credentialNumber = -1;
      if (spec.defect === 3) body.sendEmail = false;
      return { method: "POST", path: `/holders/${holderId}/credentials`, body };
    }
    case "createDigital": {
      const body: Record<string, unknown> = { types: spec.mask % 2 === 0 ? ["touch"] : ["token", "touch"] };
      if (spec.defect === 1) body.credentialNumber = 5;
      if (spec.defect === 2) body.types = [];
      return { method: "POST", path: `/holders/${holderId}/credentials`, body };
    }
    case "updateCredential":
    case "deleteCredential":
    case "activateCredential": {
      const creds = holder?.credentials ?? [];
      // Activation mostly targets a pending digital credential of any holder, when there is one.
      const pending = s.holders.flatMap((h) =>
        h.credentials.filter((c) => c.credentialNumber === null).map((c) => ({ h, c })),
      );
      if (spec.kind === "activateCredential" && spec.mask % 4 !== 0 && pending.length > 0 && !spec.unknownId) {
        const { h, c } = pick(pending, spec.b)!;
        return {
          method: "POST",
          path: `/holders/${h.id}/credentials/${c.id}/activate`,
          body: { credentialNumber: spec.defect === 1 ? "x" : spec.number, description: "Phone X" },
        };
      }
      const credId = idOf(creds, spec.b, spec.unknownId);
      const path = `/holders/${holderId}/credentials/${credId}`;
      if (spec.kind === "deleteCredential") return { method: "DELETE", path };
      if (spec.kind === "updateCredential")
        return { method: "PUT", path, body: { types: spec.defect === 1 ? ["card"] : ["touch"] } };
      return {
        method: "POST",
        path: `${path}/activate`,
        body: { credentialNumber: spec.defect === 1 ? "x" : spec.number, description: "Phone X" },
      };
    }
    case "createGroup":
      return {
        method: "POST",
        path: "/groups",
        body: { name: spec.name, ...(spec.defect === 1 ? { partition: "no-such-partition" } : {}) },
      };
    case "updateGroup":
      return {
        method: "PUT",
        path: `/groups/${groupId}`,
        body: spec.defect === 1 ? { name: spec.name } : { name: spec.name, partition: null },
      };
    case "deleteGroup":
      return {
        method: "DELETE",
        path: `/groups/${
          spec.mask % 4 === 0
            ? groupId
            : idOf(
                unreferenced(s.groups, (id) => s.rules.some((r) => r.groupId === id)),
                spec.b,
                spec.unknownId,
              )
        }`,
      };
    case "addMembership":
      return { method: "PUT", path: `/holders/${holderId}/groups/${groupId}` };
    case "removeMembership":
      return { method: "DELETE", path: `/holders/${holderId}/groups/${groupId}` };
    case "replaceHolderGroups":
      return {
        method: "PUT",
        path: `/holders/${holderId}/groups`,
        body: {
          groups: subset(s.groups, spec.mask)
            .map((g) => g.id)
            .concat(spec.defect === 1 ? ["nope"] : []),
        },
      };
    case "replaceGroupHolders":
      return {
        method: "PUT",
        path: `/groups/${groupId}/holders`,
        body: { holders: subset(s.holders, spec.mask).map((h) => h.id) },
      };
    case "createRule":
      return { method: "POST", path: "/rules", body: ruleBody(s, spec) };
    case "updateRule":
      return { method: "PUT", path: `/rules/${idOf(s.rules, spec.a, spec.unknownId)}`, body: ruleBody(s, spec) };
    case "deleteRule":
      return { method: "DELETE", path: `/rules/${idOf(s.rules, spec.a, spec.unknownId)}` };
    case "createCloudNode":
    case "updateCloudNode": {
      const body: Record<string, unknown> = {
        name: spec.name === "" ? "Node" : spec.name,
        offlinePolicy: spec.mask % 3,
        killTimer: spec.defect === 1 ? 299 : 300 + spec.number,
        ecards: spec.mask % 2 === 0 ? [spec.number] : [],
        ...(spec.mask % 4 === 0 ? { timezone: spec.defect === 2 ? "Mars/Olympus" : "Europe/London" } : {}),
        ...(spec.mask % 8 === 3 ? { cardFormat: [cardFormatBody(spec)] } : {}),
      };
      if (spec.kind === "createCloudNode") return { method: "POST", path: "/cloud-nodes", body };
      return { method: "PUT", path: `/cloud-nodes/${idOf(s.cloudNodes, spec.a, spec.unknownId)}`, body };
    }
    case "deleteCloudNode": {
      const used = (id: string): boolean =>
        s.connections.some((c) => c.cloudNode === id) || s.devices.some((d) => d.cloudNode === id);
      return {
        method: "DELETE",
        path: `/cloud-nodes/${idOf(spec.mask % 4 === 0 ? s.cloudNodes : unreferenced(s.cloudNodes, used), spec.a, spec.unknownId)}`,
      };
    }
    case "createConnection":
    case "updateConnection":
    case "deleteConnection":
    case "configureConnection": {
      const vendorA = s.connections.filter((c) => c.manufacturer === "VENDOR_A");
      const conn =
        spec.kind === "configureConnection" && spec.mask % 4 !== 0 && vendorA.length > 0
          ? pick(vendorA, spec.b)
          : spec.kind === "deleteConnection" && spec.mask % 4 !== 0
            ? pick(
                unreferenced(s.connections, (id) => s.devices.some((d) => d.connection === id)),
                spec.b,
              )
            : pick(s.connections, spec.b);
      const nodeId =
        spec.kind === "createConnection"
          ? idOf(s.cloudNodes, spec.a, spec.unknownId)
          : (conn?.cloudNode ?? "no-such-node");
      const connId = spec.unknownId ? "no-such-connection" : (conn?.id ?? "no-such-connection");
      const type = (["ethernet", "usb", "lockhub", "wirelessCoordinator", "wirelessGateway"] as const)[spec.mask % 5]!;
      const body: Record<string, unknown> = { name: `Controller ${spec.number}`, type };
      if (type !== "lockhub") body.port = 4000 + (spec.number % 1000);
      if (type === "lockhub") body.macaddress = "00:1B:2C:4A:11:09";
      if (type === "ethernet" || type === "wirelessGateway") body.ipaddress = "10.0.0.9";
      if (type === "ethernet" && spec.number % 2 === 0) body.manufacturer = "VENDOR_A";
      if (spec.defect === 1) delete body.port;
      if (spec.defect === 2) body.ipv6Address = type === "ethernet" ? "::1" : "fe80::1";
      if (spec.kind === "createConnection") return { method: "POST", path: `/cloud-nodes/${nodeId}/connections`, body };
      const path = `/cloud-nodes/${nodeId}/connections/${connId}`;
      if (spec.kind === "updateConnection") return { method: "PUT", path, body };
      if (spec.kind === "deleteConnection") return { method: "DELETE", path };
      return {
        method: "POST",
        path: `${path}/configure`,
        body: spec.defect === 1 ? { netmask: "255.0.0.0" } : { dhcp: spec.mask % 2 === 0, netmask: "255.255.255.0" },
      };
    }
    case "createDevice":
    case "updateDevice":
    case "deleteDevice": {
      const referenced = (id: string): boolean =>
        s.rules.some((r) => r.devices.includes(id)) ||
        s.floorGroups.some((f) => f.readerPort === id || f.floors.includes(id)) ||
        s.devices.some((d) => d.primaryReader === id);
      const device = pick(
        spec.kind === "deleteDevice" && spec.mask % 4 !== 0 ? unreferenced(s.devices, referenced) : s.devices,
        spec.a,
      );
      const conn = pick(s.connections, spec.b);
      const nodeId =
        spec.kind === "createDevice" ? (conn?.cloudNode ?? "no-such-node") : (device?.cloudNode ?? "no-such-node");
      const type = (["primaryReader", "ioDevice", "floorRelay", "elevatorReader", "primaryReader"] as const)[
        spec.mask % 5
      ]!;
      const body: Record<string, unknown> = {
        name: spec.name === "" ? `Door ${spec.number}` : spec.name,
        type,
        connection: conn?.id ?? "no-such-connection",
        port: spec.number % 64,
        delay: 0,
        dwell: spec.defect === 1 ? 0 : 30,
        dps: spec.mask % 2 === 0,
        rex: false,
        autoOpenAfterFirstAllow: false,
        authenticationPolicy: [null, "cardOnly", "pinOnly", "cardOrPin", "cardAndPin"][spec.mask % 5],
        supportBleCredentials: spec.mask % 3 === 0,
        securedReadsOnly: spec.mask % 11 === 0,
      };
      if (type === "primaryReader" || type === "ioDevice") body.publicIcon = "swingingDoor";
      if (spec.defect === 2) delete body.publicIcon;
      if (spec.defect === 3) delete body.dwell;
      if (spec.kind === "createDevice") return { method: "POST", path: `/cloud-nodes/${nodeId}/devices`, body };
      const path = `/cloud-nodes/${nodeId}/devices/${spec.unknownId ? "no-such-device" : (device?.id ?? "no-such-device")}`;
      if (spec.kind === "updateDevice") {
        if (device !== undefined && spec.mask % 2 === 1)
          Object.assign(body, {
            type: device.type,
            connection: device.connection,
            port: device.port,
            publicIcon: device.publicIcon ?? undefined,
          });
        return { method: "PUT", path, body };
      }
      return { method: "DELETE", path };
    }
    case "createPartition":
      return {
        method: "POST",
        path: "/partitions",
        body: { name: spec.name, users: spec.defect === 1 ? "admin" : ["user-1"] },
      };
    case "updatePartition":
      return {
        method: "PUT",
        path: `/partitions/${idOf(s.partitions, spec.a, spec.unknownId)}`,
        body: spec.defect === 1 ? { name: spec.name } : { name: spec.name, users: null },
      };
    case "deletePartition": {
      const used = (id: string): boolean =>
        s.holders.some((h) => h.partition === id) ||
        s.groups.some((g) => g.partition === id) ||
        s.floorGroups.some((f) => f.partition === id) ||
        s.devices.some((d) => d.partition.some((p) => p.id === id)) ||
        s.customFields.some((f) => f.partition === id);
      return {
        method: "DELETE",
        path: `/partitions/${idOf(spec.mask % 4 === 0 ? s.partitions : unreferenced(s.partitions, used), spec.a, spec.unknownId)}`,
      };
    }
    case "replacePartitionDevices":
      return {
        method: "PUT",
        path: `/partitions/${idOf(s.partitions, spec.a, spec.unknownId)}/devices`,
        body: {
          devices: subset(s.devices, spec.mask)
            .map((d) => d.id)
            .concat(spec.defect === 1 ? ["no-such-device"] : []),
        },
      };
    case "removePartitionDevice": {
      const memberships = s.devices.flatMap((d) => d.partition.map((p) => ({ d: d.id, p: p.id })));
      if (spec.mask % 4 !== 0 && memberships.length > 0 && !spec.unknownId) {
        const m = pick(memberships, spec.b)!;
        return { method: "DELETE", path: `/partitions/${m.p}/devices/${m.d}` };
      }
      const partitionId = idOf(s.partitions, spec.a, spec.unknownId);
      const members = s.devices.filter((d) => d.partition.some((p) => p.id === partitionId));
      return {
        method: "DELETE",
        path: `/partitions/${partitionId}/devices/${idOf(spec.mask % 4 === 0 || members.length === 0 ? s.devices : members, spec.b, false)}`,
      };
    }
    case "createFloorGroup":
    case "updateFloorGroup": {
      const readers = s.devices.filter((d) => d.type === "elevatorReader" || d.type === "additionalElevatorReader");
      const relays = s.devices.filter((d) => d.type === "floorRelay");
      const reader = pick(readers, spec.a);
      const body: Record<string, unknown> = {
        name: spec.name === "" ? `Floors ${spec.number}` : spec.name,
        readerPort: spec.defect === 1 ? idOf(s.devices, spec.b, false) : (reader?.id ?? "no-such-device"),
        floors: subset(
          relays.filter((r) => reader === undefined || r.cloudNode === reader.cloudNode),
          spec.mask | 1,
        ).map((d) => d.id),
      };
      if (spec.defect === 2) body.floors = [];
      if (spec.kind === "createFloorGroup") return { method: "POST", path: "/floor_groups", body };
      return { method: "PUT", path: `/floor_groups/${idOf(s.floorGroups, spec.b, spec.unknownId)}`, body };
    }
    case "deleteFloorGroup": {
      const used = (id: string): boolean => s.rules.some((r) => r.floorGroups.includes(id));
      return {
        method: "DELETE",
        path: `/floor_groups/${idOf(spec.mask % 4 === 0 ? s.floorGroups : unreferenced(s.floorGroups, used), spec.a, spec.unknownId)}`,
      };
    }
    case "createCustomField":
    case "updateCustomField":
    case "deleteCustomField":
    case "replaceCustomFields": {
      const field = pick(s.customFields, spec.a);
      const partitionId = spec.unknownId
        ? "no-such-partition"
        : spec.kind === "createCustomField" || spec.kind === "replaceCustomFields" || field === undefined
          ? idOf(s.partitions, spec.a, false)
          : field.partition;
      const base = `/partitions/${partitionId}/custom-fields`;
      if (spec.kind === "createCustomField")
        return { method: "POST", path: `${base}/single`, body: customFieldBody(spec, spec.b) };
      if (spec.kind === "replaceCustomFields")
        return {
          method: "POST",
          path: `${base}/all`,
          body: subset(
            CUSTOM_FIELDS.map((_, k) => k),
            spec.b,
          ).map((k, j) => customFieldBody({ ...spec, defect: j === 0 ? spec.defect : 0 }, k)),
        };
      const path = `${base}/${field?.id ?? "no-such-field"}`;
      if (spec.kind === "deleteCustomField") return { method: "DELETE", path };
      // An update keeps the field's own template (its values fit) or takes another type's.
      const own = CUSTOM_FIELDS.findIndex((f) => f.def.id === field?.id);
      const { id: _id, ...body } = customFieldBody(spec, spec.mask % 2 === 0 && own >= 0 ? own : spec.b);
      return { method: "PUT", path, body };
    }
    case "read": {
      const partitionId = idOf(s.partitions, spec.a, spec.unknownId);
      const fieldId = pick(s.customFields, spec.b)?.id ?? "no-such-field";
      const paths = [
        `/partitions/${partitionId}/custom-fields`,
        `/partitions/${partitionId}/custom-fields/${fieldId}`,
        "/partitions?include=attributes",
        "/cloud-nodes",
        "/connections?per_page=100",
        "/partitions",
        "/floor_groups",
        "/holders?per_page=100",
        `/holders/${holderId}`,
        "/groups",
        `/groups/${groupId}/holders`,
        `/holders/${holderId}/groups`,
        "/credentials",
        "/rules?page=1&per_page=2",
        "/credentials/facility-codes",
      ];
      return { method: "GET", path: paths[spec.mask % paths.length]! };
    }
    case "garbage": {
      const ops: Operation[] = [
        { method: "PATCH" as never, path: "/holders" },
        { method: "POST", path: "/nowhere" },
        { method: "POST", path: "/holders", body: [] },
        { method: "DELETE", path: "/holders" },
      ];
      return ops[spec.mask % ops.length]!;
    }
  }
}
