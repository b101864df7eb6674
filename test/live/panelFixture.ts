// A small 1.0 panel for the live panel scenarios, and helpers that apply operations with the
// expected status (a refused operation must leave the panel and its engine untouched).
import { expect } from "vitest";
import type { Operation } from "../../src/live/index.js";
import { type PanelLiveSystem, type PanelOperationResult, createPanelLiveSystem } from "../../src/legacy1/index.js";
import { formatIssues } from "../../src/model/index.js";

/** Wednesday 15 April 2026, 14:15 in Paris. */
export const AT = "2026-04-15T12:15:00Z";

const ALL_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

export function smallPanel(): Record<string, any> {
  return {
    format: "rsop-panel/1",
    serialNumber: "SN-TEST-1",
    name: "Annex",
    config: {
      timezone: "Europe/Paris",
      logPurgeDays: 30,
      cardFormat: {
        id: "H10301",
        description: "HID H10301 standard 26-bit",
        min_input_bits: 26,
        max_input_bits: 26,
        facility_code: "ENFORCED",
      },
      locale: "en",
      offlinePolicy: 1,
      killTimer: 259200,
    },
    partitions: [{ id: 0, name: "Main" }],
    attributes: [{ id: "badge", type: "string", displayName: "Badge", partition: 0 }],
    groups: [
      { id: 1, name: "Staff", partition: 0, metadata: { source: "HR" } },
      { id: 2, name: "Night", partition: 0 },
    ],
    persons: [
      {
        id: 1,
        firstName: "Ann",
        lastName: "Lee",
        partition: 0,
        enabled: true,
        pin: "2468",
        customAttributes: { badge: "B-1" },
        groups: [1],
        credentials: [
          { id: 1, personId: 1, credentialNumber: 1001, facilityCode: 17, description: "Card", types: ["card"] },
        ],
      },
      {
        id: 2,
        firstName: "Bob",
        lastName: "Roy",
        partition: 0,
        groups: [2],
        credentials: [
          { id: 2, personId: 2, credentialNumber: null, facilityCode: null, description: "Pending", types: ["touch"] },
        ],
      },
    ],
    connections: [
      { id: 1, name: "On-board", type: "usb", port: 1 },
      {
        id: 2,
        name: "Lift controller",
        type: "ethernet",
        protocol: "IPv4",
        ipaddress: "10.0.0.2",
        port: 4050,
        manufacturer: "VENDOR_A",
      },
    ],
    devices: [
      { id: 1, name: "Front door", connection: 1, port: 1, type: "primaryReader", publicIcon: "swingingDoor" },
      { id: 2, name: "Front door exit", connection: 1, port: 2, type: "additionalReader", primaryReader: 1 },
      { id: 3, name: "Back door", connection: 1, port: 3 },
      { id: 4, name: "Lift reader", connection: 2, port: 1, type: "elevatorReader", publicIcon: "other" },
      { id: 5, name: "Floor 1", connection: 2, port: 2, type: "floorRelay" },
      { id: 6, name: "Floor 2", connection: 2, port: 3, type: "floorRelay" },
    ],
    floorGroups: [{ id: 1, name: "Lower floors", partition: 0, readerPort: 4, floors: [5, 6] }],
    rules: [
      {
        id: 1,
        name: "Staff front door",
        type: "door",
        groupId: 1,
        devices: [1],
        startTime: "00:00",
        stopTime: "24:00",
        recurring: ALL_DAYS,
        allow: true,
        enabled: true,
      },
      {
        id: 2,
        name: "Staff lift",
        type: "elevator",
        groupId: 1,
        floorGroups: [1],
        startTime: "00:00",
        stopTime: "24:00",
        recurring: ALL_DAYS,
        allow: true,
        enabled: true,
      },
    ],
  };
}

export function panelLive(input: unknown = smallPanel()): PanelLiveSystem {
  const r = createPanelLiveSystem(input);
  if (!r.ok) throw new Error(`panel fixture does not load:\n${formatIssues(r.issues)}`);
  return r.value;
}

type Write = Extract<PanelOperationResult, { patches: unknown }>;

export function accept(live: PanelLiveSystem, op: Operation, status: 200 | 204): Write {
  const r = live.apply(op);
  if (!r.ok) throw new Error(`${op.method} ${op.path} refused (${r.status}):\n${formatIssues(r.issues)}`);
  expect(r.status).toBe(status);
  expect("patches" in r).toBe(true);
  return r as Write;
}

export function refuse(live: PanelLiveSystem, op: Operation, status: 400 | 404 | 405 | 409) {
  const before = live.snapshot;
  const engine = live.engine;
  const r = live.apply(op);
  expect(r.ok, `${op.method} ${op.path} was accepted`).toBe(false);
  if (r.ok) throw new Error("unreachable");
  expect(r.status, formatIssues(r.issues)).toBe(status);
  expect(r.issues.length).toBeGreaterThan(0);
  for (const i of r.issues) expect(i.message).toMatch(/\.$/);
  expect(live.snapshot).toBe(before);
  expect(live.engine).toBe(engine);
  return r.issues;
}

export function read(live: PanelLiveSystem, path: string): { body: any; total?: number } {
  const r = live.apply({ method: "GET", path });
  if (!r.ok) throw new Error(`GET ${path} refused (${r.status}):\n${formatIssues(r.issues)}`);
  if ("patches" in r) throw new Error("a read made patches");
  return r;
}

/** A card scan at a 1.0 device. */
export function scan(
  live: PanelLiveSystem,
  deviceId: number,
  credentialNumber: number,
  facilityCode = 17,
  at: string = AT,
) {
  return live.engine.decide({ deviceId, at, credential: { credentialNumber, facilityCode } });
}
