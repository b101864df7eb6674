// A small building for the live-system scenario tests: two nodes, three connections, doors, an
// elevator with two floor groups, partitions, and rules that make each delete conflict reachable.
import { expect } from "vitest";
import {
  type LiveSystem,
  type Operation,
  type OperationResult,
  createLiveSystem,
  seededIds,
} from "../../src/live/index.js";
import { formatIssues } from "../../src/model/index.js";

export const NOW = Date.parse("2026-04-15T12:00:00Z");
/** A Wednesday noon in the system zone (UTC): every all-week rule is active. */
export const AT = "2026-04-15T12:00:00Z";
const ALL_WEEK = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

export function building(): Record<string, unknown> {
  return {
    format: "rsop-system/1",
    systemId: "sys-1",
    timezone: "UTC",
    partitions: [
      { id: "p-default", name: "Default", default: true },
      { id: "p-east", name: "East Wing", users: ["u-1"] },
    ],
    groups: [
      { id: "g-staff", name: "Staff", partition: "p-default" },
      { id: "g-night", name: "Night Shift", partition: "p-east" },
      { id: "g-empty", name: "Visitors" },
    ],
    holders: [
      {
        id: "h-ann",
        firstName: "Ann",
        lastName: "Lee",
        email: "ann@example.com",
        pin: "1234",
        groups: ["g-staff"],
        credentials: [
          { id: "c-ann", types: ["card"], credentialNumber: 1001, facilityCode: 10, description: "Blue fob" },
        ],
      },
      {
        id: "h-bob",
        firstName: "Bob",
        lastName: "Stone",
        email: "bob@example.org",
        pin: "5678",
        groups: ["g-staff", "g-night"],
        credentials: [
          { id: "c-bob", types: ["card"], credentialNumber: 1002, facilityCode: 20 },
          { id: "c-bob-phone", types: ["touch"], credentialNumber: 5001, description: "iPhone 15" },
        ],
      },
      { id: "h-cy", firstName: "Cy", lastName: "Annand", partition: "p-east", groups: ["g-empty"] },
    ],
    cloudNodes: [
      { id: "n-main", name: "Main Gateway", serialNumber: "SN-0001", description: "Lobby rack" },
      { id: "n-annex", name: "Annex", serialNumber: "SN-0002" },
    ],
    connections: [
      {
        id: "x-eth",
        name: "Controller A",
        type: "ethernet",
        cloudNode: "n-main",
        ipaddress: "10.0.0.5",
        port: 4000,
        protocol: "IPv4",
        manufacturer: "VENDOR_A",
      },
      { id: "x-usb", name: "Onboard", type: "usb", cloudNode: "n-main", port: 1 },
      {
        id: "x-spare",
        name: "Spare",
        type: "ethernet",
        cloudNode: "n-main",
        ipaddress: "10.0.0.6",
        port: 4001,
        manufacturer: "VENDOR_B",
      },
    ],
    devices: [
      {
        id: "d-front",
        name: "Front Door",
        cloudNode: "n-main",
        connection: "x-eth",
        port: 1,
        type: "primaryReader",
        publicIcon: "swingingDoor",
      },
      {
        id: "d-front-out",
        name: "Front Door Exit",
        cloudNode: "n-main",
        connection: "x-eth",
        port: 2,
        type: "additionalReader",
        primaryReader: "d-front",
      },
      { id: "d-lift", name: "Lift", cloudNode: "n-main", connection: "x-eth", port: 3, type: "elevatorReader" },
      { id: "d-floor-1", name: "Floor 1", cloudNode: "n-main", connection: "x-eth", port: 4, type: "floorRelay" },
      { id: "d-floor-2", name: "Floor 2", cloudNode: "n-main", connection: "x-eth", port: 5, type: "floorRelay" },
      {
        id: "d-side",
        name: "Side Gate",
        cloudNode: "n-main",
        connection: "x-usb",
        port: 1,
        type: "primaryReader",
        publicIcon: "swingingGate",
        partition: [{ id: "p-east", name: "East Wing" }],
      },
      {
        id: "d-fan",
        name: "Fan",
        cloudNode: "n-main",
        connection: "x-usb",
        port: 2,
        type: "ioDevice",
        publicIcon: "fan",
      },
    ],
    floorGroups: [
      { id: "f-low", name: "Low Floors", partition: "p-default", readerPort: "d-lift", floors: ["d-floor-1"] },
      { id: "f-high", name: "High Floors", readerPort: "d-lift", floors: ["d-floor-2"] },
    ],
    rules: [
      {
        id: "r-staff-door",
        type: "door",
        groupId: "g-staff",
        devices: ["d-front", "d-side"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: ALL_WEEK,
      },
      {
        id: "r-night-lift",
        type: "elevator",
        groupId: "g-night",
        floorGroups: ["f-low"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: ALL_WEEK,
      },
    ],
  };
}

export function liveOf(input: unknown = building()): LiveSystem {
  const r = createLiveSystem(input, { newId: seededIds(1), now: () => NOW });
  if (!r.ok) throw new Error(`fixture does not load:\n${formatIssues(r.issues)}`);
  return r.value;
}

/** Applies a write that must be accepted with `status`; returns its result (with the created id). */
export function accept(
  live: LiveSystem,
  op: Operation,
  status: 200 | 201 | 204,
): Extract<OperationResult, { patches: unknown }> {
  const r = live.apply(op);
  if (!r.ok) throw new Error(`${op.method} ${op.path} refused ${r.status}:\n${formatIssues(r.issues)}`);
  expect(r.status, `${op.method} ${op.path}`).toBe(status);
  expect("patches" in r, `${op.method} ${op.path} is a write`).toBe(true);
  return r as Extract<OperationResult, { patches: unknown }>;
}

/**
 * Applies an operation that must be refused with `status`; checks that the snapshot is the very same
 * object afterwards (nothing changed) and returns the issues' dotted paths and the issues.
 */
export function refuse(live: LiveSystem, op: Operation, status: 400 | 404 | 405 | 409) {
  const before = live.snapshot;
  const r = live.apply(op);
  if (r.ok) throw new Error(`${op.method} ${op.path} was accepted with ${r.status}, expected ${status}`);
  expect(r.status, `${op.method} ${op.path}: ${formatIssues(r.issues)}`).toBe(status);
  expect(live.snapshot, "a refused operation changes nothing").toBe(before);
  for (const i of r.issues) {
    expect(i.message.length, "each issue says what is wrong").toBeGreaterThan(0);
    expect(Array.isArray(i.path)).toBe(true);
  }
  return { paths: r.issues.map((i) => i.path.join(".")), issues: r.issues };
}

/** A GET that must answer 200; returns body and total. */
export function read(live: LiveSystem, path: string): { body: any; total?: number } {
  const r = live.apply({ method: "GET", path });
  if (!r.ok) throw new Error(`GET ${path} refused ${r.status}:\n${formatIssues(r.issues)}`);
  expect(r.status).toBe(200);
  return r as { body: any; total?: number };
}

/** The outcome and reason of a card scan (credentialNumber/facilityCode) at `deviceId` at AT. */
export function scan(
  live: LiveSystem,
  deviceId: string,
  credentialNumber: number,
  facilityCode?: number,
  at: string = AT,
) {
  const d = live.engine.decide({
    deviceId,
    at,
    credential: facilityCode === undefined ? { credentialNumber } : { credentialNumber, facilityCode },
  });
  return { outcome: d.outcome, reason: d.reason, holderId: d.holderId, activeRuleId: d.activeRuleId, floors: d.floors };
}
