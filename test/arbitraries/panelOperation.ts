// Random 1.0 panel operations (seed 002 routes, plus the ★ credential, rule and config routes) for
// the live panel. A spec is plain picks; `resolvePanelOperation` turns it into an operation against
// the panel it is applied to, so ids usually exist (and sometimes do not), bodies are usually valid
// (and sometimes broken in one named way).
import fc from "fast-check";
import type { Operation } from "../../src/live/index.js";
import type { PanelSnapshot } from "../../src/legacy1/index.js";
import { cardFormatBody } from "./operation.js";

export const PANEL_OPERATION_KINDS = [
  "createPerson",
  "updatePerson",
  "deletePerson",
  "updatePhoto",
  "createCard",
  "createDigital",
  "updateCredential",
  "deleteCredential",
  "activateCredential",
  "createGroup",
  "updateGroup",
  "deleteGroup",
  "replaceGroupPersons",
  "replacePersonGroups",
  "removeMembership",
  "createRule",
  "updateRule",
  "deleteRule",
  "createConnection",
  "updateConnection",
  "deleteConnection",
  "configureConnection",
  "createDevice",
  "updateDevice",
  "deleteDevice",
  "createAttribute",
  "updateAttribute",
  "deleteAttribute",
  "replaceAttributes",
  "createFloorGroup",
  "updateFloorGroup",
  "deleteFloorGroup",
  "updateConfig",
  "read",
  "garbage",
] as const;
export type PanelOperationKind = (typeof PANEL_OPERATION_KINDS)[number];

export interface PanelOperationSpec {
  readonly kind: PanelOperationKind;
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

export const panelOperationSpecArb: fc.Arbitrary<PanelOperationSpec> = fc.record({
  kind: fc.constantFrom(...PANEL_OPERATION_KINDS),
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

type Json = Record<string, any>;
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const pad = (n: number): string => String(n).padStart(2, "0");
const UNKNOWN = 987_654;

function pick<T>(list: readonly T[], i: number): T | undefined {
  return list.length === 0 ? undefined : list[i % list.length];
}

function idOf(list: readonly { id: number }[], i: number, unknown: boolean): number {
  return unknown ? UNKNOWN : (pick(list, i)?.id ?? UNKNOWN);
}

/** The entities nothing references, or all of them when every one is referenced (so the pick still exists). */
function unreferenced<T extends { id: number }>(list: readonly T[], used: (id: number) => boolean): readonly T[] {
  const free = list.filter((x) => !used(x.id));
  return free.length > 0 ? free : list;
}

function subset<T>(list: readonly T[], mask: number): T[] {
  return list.filter((_, j) => (mask >> j) & 1);
}

function ruleBody(s: PanelSnapshot, spec: PanelOperationSpec): Json {
  const elevator = spec.mask % 5 === 0 && s.floorGroups.length > 0;
  const doors = s.devices.filter(
    (d) => d.type !== "floorRelay" && d.type !== "elevatorReader" && d.type !== "additionalElevatorReader",
  );
  const body: Json = {
    name: `Rule ${spec.number}`,
    type: elevator ? "elevator" : "door",
    groupId: idOf(s.groups, spec.a, spec.unknownId),
    startTime: `${pad(spec.window.start)}:00`,
    stopTime: `${pad(spec.window.stop)}:00`,
    recurring: DAYS.filter((_, j) => (spec.window.days >> j) & 1),
    allow: spec.mask % 7 !== 3 || elevator,
    authenticationPolicy: [null, "cardOnly", "pinOnly", "cardOrPin", "cardAndPin"][spec.mask % 5],
  };
  if (elevator) body.floorGroups = subset(s.floorGroups, spec.b | 1).map((f) => f.id);
  else body.devices = subset(doors, spec.b | 1).map((d) => d.id);
  if (spec.defect === 1) body.startTime = "25:00";
  if (spec.defect === 2) delete body.type;
  if (spec.defect === 3) body.recurring = ["Mon", "Mon"];
  return body;
}

/** Values for the partition's custom fields (one of each fitting type); defect 4 gives a number a string. */
function customValues(s: PanelSnapshot, partition: unknown, spec: PanelOperationSpec): Json {
  const out: Json = {};
  for (const a of s.attributes.filter((x) => x.partition === partition).slice(0, 3)) {
    if (a.type === "string") out[a.id] = `v${spec.number}`;
    else if (a.type === "number") out[a.id] = spec.defect === 4 ? "many" : spec.number % 100;
    else if (a.type === "boolean") out[a.id] = spec.mask % 2 === 0;
  }
  return out;
}

function personRefs(s: PanelSnapshot, id: number): boolean {
  return s.rules.some((r) => r.groupId === id);
}

/** The operation a spec names against panel `s`. */
export function resolvePanelOperation(s: PanelSnapshot, spec: PanelOperationSpec): Operation {
  const person = pick(s.persons, spec.a) as Json | undefined;
  const personId = idOf(s.persons, spec.a, spec.unknownId);
  const groupId = idOf(s.groups, spec.b, spec.unknownId);
  switch (spec.kind) {
    case "createPerson": {
      const body: Json = {
        firstName: spec.defect === 1 ? "" : "Ann",
        lastName: spec.defect === 2 ? "L".repeat(36) : "Lee",
        pin: spec.mask % 3 === 0 ? String(1000 + spec.number) : null,
        ...(spec.mask % 4 === 0
          ? { metadata: { note: spec.defect === 3 ? "x".repeat(10 * 1024) : "badge printed" } }
          : {}),
        ...(spec.mask % 4 === 1 ? { customAttributes: customValues(s, 0, spec) } : {}),
      };
      if (spec.defect === 4) body.enabled = "yes";
      return { method: "POST", path: "/api/persons", body };
    }
    case "updatePerson": {
      const body: Json = {
        firstName: person?.firstName ?? "Bo",
        lastName: spec.name === "" ? "Renamed" : spec.name.slice(0, 35),
        partition: person?.partition ?? 0,
        enabled: spec.mask % 4 !== 0,
        activeDate: spec.mask % 8 === 1 ? "2026-04-10T00:00:00" : null,
        expireDate: spec.mask % 8 === 2 ? "2026-04-16T00:00:00" : null,
        pin: spec.mask % 3 === 0 ? String(2000 + spec.number) : null,
        duressPin: null,
      };
      if (spec.defect === 1) delete body.enabled;
      if (spec.defect === 2) body.pin = "12ab";
      if (spec.defect === 3) body.partition = -1;
      if (spec.mask % 4 === 1) body.customAttributes = customValues(s, body.partition, spec);
      return { method: "PUT", path: `/api/persons/${personId}`, body };
    }
    case "deletePerson":
      return { method: "DELETE", path: `/api/persons/${personId}` };
    case "updatePhoto":
      return {
        method: "PUT",
        path: `/api/persons/${personId}/photo`,
        body: spec.defect === 1 ? { base64: "not a data url" } : { base64: "data:image/png;base64,iVBORw0KGgo=" },
      };
    case "createCard": {
      const body: Json = {
        types: ["card"],
        credentialNumber: spec.number,
        facilityCode: spec.mask % 2 === 0 ? 17 : null,
      };
      if (spec.defect === 1) delete body.credentialNumber;
      if (spec.defect === 2) body.credentialNumber = -1;
      return { method: "POST", path: `/api/persons/${personId}/credentials`, body };
    }
    case "createDigital": {
      const body: Json = { types: spec.mask % 2 === 0 ? ["touch"] : ["token", "touch"] };
      if (spec.defect === 1) body.credentialNumber = 5;
      if (spec.defect === 2) body.types = [];
      return { method: "POST", path: `/api/persons/${personId}/credentials`, body };
    }
    case "updateCredential":
    case "deleteCredential":
    case "activateCredential": {
      const creds = (person?.credentials ?? []) as { id: number }[];
      const pending = s.persons.flatMap((p) =>
        p.credentials
          .filter((c) => c.credentialNumber === null || c.credentialNumber === undefined)
          .map((c) => ({ p, c })),
      );
      if (spec.kind === "activateCredential" && spec.mask % 4 !== 0 && pending.length > 0 && !spec.unknownId) {
        const { p, c } = pick(pending, spec.b)!;
        return {
          method: "POST",
          path: `/api/persons/${p.id}/credentials/${c.id}/activate`,
          body: { credentialNumber: spec.defect === 1 ? "x" : spec.number, description: "Phone X" },
        };
      }
      const path = `/api/persons/${personId}/credentials/${idOf(creds, spec.b, spec.unknownId)}`;
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
        path: "/api/groups",
        body: {
          name: spec.name,
          ...(spec.defect === 1 ? { partition: "main" } : {}),
          ...(spec.mask % 3 === 0 ? { metadata: { colour: "blue" } } : {}),
        },
      };
    case "updateGroup":
      return {
        method: "PUT",
        path: `/api/groups/${groupId}`,
        body: spec.defect === 1 ? { name: spec.name } : { name: spec.name, partition: 0 },
      };
    case "deleteGroup":
      return {
        method: "DELETE",
        path: `/api/groups/${
          spec.mask % 4 === 0
            ? groupId
            : idOf(
                unreferenced(s.groups, (id) => personRefs(s, id)),
                spec.b,
                spec.unknownId,
              )
        }`,
      };
    case "replaceGroupPersons":
      return {
        method: "PUT",
        path: `/api/groups/${groupId}/persons`,
        body: {
          persons: subset(s.persons, spec.mask)
            .map((p) => p.id)
            .concat(spec.defect === 1 ? [UNKNOWN] : []),
        },
      };
    case "replacePersonGroups":
      return {
        method: "PUT",
        path: `/api/persons/${personId}/groups`,
        body: {
          groups: subset(s.groups, spec.mask)
            .map((g) => g.id)
            .concat(spec.defect === 1 ? [UNKNOWN] : []),
        },
      };
    case "removeMembership": {
      const memberships = s.persons.flatMap((p) => p.groups.map((g) => ({ p: p.id, g })));
      if (spec.mask % 4 !== 0 && memberships.length > 0 && !spec.unknownId) {
        const m = pick(memberships, spec.b)!;
        return { method: "DELETE", path: `/api/persons/${m.p}/groups/${m.g}` };
      }
      return { method: "DELETE", path: `/api/persons/${personId}/groups/${groupId}` };
    }
    case "createRule":
      return { method: "POST", path: "/api/rules", body: ruleBody(s, spec) };
    case "updateRule":
      return { method: "PUT", path: `/api/rules/${idOf(s.rules, spec.a, spec.unknownId)}`, body: ruleBody(s, spec) };
    case "deleteRule":
      return { method: "DELETE", path: `/api/rules/${idOf(s.rules, spec.a, spec.unknownId)}` };
    case "createConnection":
    case "updateConnection":
    case "deleteConnection":
    case "configureConnection": {
      const vendorA = s.connections.filter((c) => (c as Json).manufacturer === "VENDOR_A");
      const conn =
        spec.kind === "configureConnection" && spec.mask % 4 !== 0 && vendorA.length > 0
          ? pick(vendorA, spec.b)
          : spec.kind === "deleteConnection" && spec.mask % 4 !== 0
            ? pick(
                unreferenced(s.connections, (id) => s.devices.some((d) => d.connection === id)),
                spec.b,
              )
            : pick(s.connections, spec.b);
      const connId = spec.unknownId ? UNKNOWN : (conn?.id ?? UNKNOWN);
      const type = (["ethernet", "usb", "lockhub", "wirelessCoordinator", "wirelessGateway"] as const)[spec.mask % 5]!;
      const body: Json = { name: `Controller ${spec.number}`, type };
      if (type !== "lockhub") body.port = 4000 + (spec.number % 1000);
      if (type === "lockhub") body.macaddress = "00:1B:2C:4A:11:09";
      if (type === "ethernet" || type === "wirelessGateway") body.ipaddress = "10.0.0.9";
      if (type === "ethernet" && spec.number % 2 === 0) body.manufacturer = "VENDOR_A";
      if (spec.defect === 1) delete body.port;
      if (spec.defect === 2) body.ipv6Address = type === "ethernet" ? "::1" : "fe80::1";
      if (spec.defect === 3) delete body.name;
      if (spec.defect === 4) body.type = "serial";
      if (spec.kind === "createConnection") return { method: "POST", path: "/api/connections", body };
      const path = `/api/connections/${connId}`;
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
      const referenced = (id: number): boolean =>
        s.rules.some((r) => r.devices.includes(id)) ||
        s.floorGroups.some((f) => f.readerPort === id || f.floors.includes(id)) ||
        s.devices.some((d) => d.primaryReader === id);
      const device = pick(
        spec.kind === "deleteDevice" && spec.mask % 4 !== 0 ? unreferenced(s.devices, referenced) : s.devices,
        spec.a,
      ) as Json | undefined;
      const conn = pick(s.connections, spec.b);
      const type = (["primaryReader", "ioDevice", "floorRelay", "elevatorReader", "primaryReader"] as const)[
        spec.mask % 5
      ]!;
      const body: Json = {
        name: spec.name === "" ? `Door ${spec.number}` : spec.name,
        type,
        connection: conn?.id ?? UNKNOWN,
        port: spec.number % 64,
        delay: 0,
        dwell: spec.defect === 1 ? 0 : 30,
        dps: spec.mask % 2 === 0,
        rex: false,
        autoOpenAfterFirstAllow: false,
        authenticationPolicy: [null, "cardOnly", "pinOnly", "cardOrPin", "cardAndPin"][spec.mask % 5],
        supportBleCredentials: spec.mask % 3 === 0,
        securedReadsOnly: spec.mask % 11 === 0,
        publicIcon: type === "primaryReader" || type === "ioDevice" ? "swingingDoor" : "other",
      };
      if (spec.kind === "createDevice") {
        // seed 002: only name, connection and port are required on create; type and publicIcon default.
        if (spec.mask % 3 === 1) delete body.type;
        if (spec.mask % 3 === 1) delete body.publicIcon;
        if (spec.defect === 2) delete body.port;
        return { method: "POST", path: "/api/devices", body };
      }
      if (spec.defect === 2) delete body.publicIcon;
      if (spec.defect === 3) delete body.dwell;
      const path = `/api/devices/${spec.unknownId ? UNKNOWN : (device?.id ?? UNKNOWN)}`;
      if (spec.kind === "updateDevice") {
        if (device !== undefined && spec.mask % 2 === 1)
          Object.assign(body, {
            type: device.type,
            connection: device.connection,
            port: device.port,
            publicIcon: device.publicIcon,
          });
        return { method: "PUT", path, body };
      }
      return { method: "DELETE", path };
    }
    case "createAttribute":
    case "updateAttribute":
    case "deleteAttribute":
    case "replaceAttributes": {
      const attribute = pick(s.attributes, spec.a);
      const partition =
        spec.kind === "createAttribute" || spec.kind === "replaceAttributes"
          ? (pick(s.persons, spec.b)?.partition ?? 0)
          : (attribute?.partition ?? 0);
      const base = `/api/partitions/${partition}/attributes`;
      const def = (id: string): Json => {
        const d: Json = { id, type: spec.mask % 2 === 0 ? "string" : "number", displayName: `Field ${id}` };
        if (spec.defect === 1) delete d.type;
        if (spec.defect === 2) d.description = "1.0 has none";
        return d;
      };
      if (spec.kind === "createAttribute")
        return {
          method: "POST",
          path: `${base}/single`,
          body: def(spec.mask % 4 === 0 && attribute !== undefined ? attribute.id : `f${spec.number}`),
        };
      if (spec.kind === "replaceAttributes")
        return {
          method: "POST",
          path: `${base}/all`,
          body: subset(
            s.attributes.filter((a) => a.partition === partition),
            spec.mask,
          )
            .map((a) => def(a.id))
            .concat([def(`f${spec.number}`)]),
        };
      const path = `${base}/${spec.unknownId || attribute === undefined ? "no-such-field" : encodeURIComponent(attribute.id)}`;
      if (spec.kind === "deleteAttribute") return { method: "DELETE", path };
      // Keeping the field's type usually keeps the persons' values valid.
      return {
        method: "PUT",
        path,
        body: {
          ...def(attribute?.id ?? "x"),
          ...(spec.mask % 4 !== 0 && attribute !== undefined && spec.defect !== 1 ? { type: attribute.type } : {}),
        },
      };
    }
    case "createFloorGroup":
    case "updateFloorGroup":
    case "deleteFloorGroup": {
      if (spec.kind === "deleteFloorGroup") {
        const used = (id: number): boolean => s.rules.some((r) => r.floorGroups.includes(id));
        return {
          method: "DELETE",
          path: `/api/floor_groups/${idOf(spec.mask % 4 === 0 ? s.floorGroups : unreferenced(s.floorGroups, used), spec.a, spec.unknownId)}`,
        };
      }
      const readers = s.devices.filter((d) => d.type === "elevatorReader" || d.type === "additionalElevatorReader");
      const relays = s.devices.filter((d) => d.type === "floorRelay");
      const body: Json = {
        name: spec.name === "" ? `Floors ${spec.number}` : spec.name,
        readerPort:
          spec.defect === 1 ? (pick(s.devices, spec.a)?.id ?? UNKNOWN) : (pick(readers, spec.a)?.id ?? UNKNOWN),
        floors: subset(relays, spec.mask | 1).map((d) => d.id),
      };
      if (spec.defect === 2) delete body.floors;
      if (spec.kind === "createFloorGroup") return { method: "POST", path: "/api/floor_groups", body };
      return { method: "PUT", path: `/api/floor_groups/${idOf(s.floorGroups, spec.b, spec.unknownId)}`, body };
    }
    case "updateConfig": {
      const body: Json = {};
      if (spec.mask % 2 === 0) body.offlinePolicy = spec.mask % 3;
      if (spec.mask % 4 < 2) body.killTimer = spec.defect === 1 ? 299 : 300 + spec.number;
      if (spec.mask % 8 === 3) body.timezone = spec.defect === 2 ? "Mars/Olympus" : "Europe/London";
      if (spec.mask % 16 === 5) body.cardFormat = cardFormatBody({ ...spec, mask: spec.mask >> 1 });
      if (spec.defect === 4) body.colour = "red";
      return { method: "PUT", path: "/api/config", body };
    }
    case "read": {
      const reads = [
        "/api/persons",
        `/api/persons/${personId}`,
        `/api/groups/${groupId}/persons`,
        `/api/persons/${personId}/groups`,
        "/api/groups?page=1&per_page=2",
        "/api/devices",
        "/api/connections",
        "/api/floor_groups",
        "/api/rules",
        "/api/config",
        "/api/info",
        "/api/search?q=a",
        `/api/rsop/persons?ids=${personId}&at=2026-04-15T14:15:00Z`,
      ];
      return { method: "GET", path: reads[spec.mask % reads.length]! };
    }
    case "garbage": {
      const garbage: Operation[] = [
        { method: "POST", path: "/api/people", body: {} },
        { method: "PATCH" as "PUT", path: "/api/persons" },
        { method: "POST", path: "/api/persons", body: [1, 2] },
        { method: "PUT", path: "/api/persons/abc", body: {} },
        { method: "DELETE", path: "/api/groups" },
        { method: "POST", path: "/holders", body: { firstName: "A", lastName: "B" } },
      ];
      return garbage[spec.mask % garbage.length]!;
    }
  }
}
