// Scenario fixture: a small, readable base building, edited per scenario and always loaded through
// parseSnapshot; and a checker that runs one request through both deciders (the fast engine and
// the naive reference) and compares each, field by field, with the decision the scenario expects.
//
// The base building (system zone America/New_York):
//
//   node-a "HQ"     (zone: system's, default card format H10301, e-card 4242)
//     conn-a: door-front (primaryReader, port 1), door-side (additionalReader of door-front, port 2),
//             door-lab (primaryReader, port 3), elev-1 (elevatorReader, port 4),
//             floor-1, floor-2, floor-3 (floorRelay, ports 5–7)
//     floor groups: fg-low = elev-1 → [floor-1, floor-2]; fg-high = elev-1 → [floor-3]
//   node-b "Annex"  (zone Europe/London)
//     conn-b: door-annex (primaryReader, port 1)
//
//   groups g-staff, g-night, g-contractors
//   h-alice  g-staff  pin 1234, duress 9999; card c-alice-card 17/1001; phone c-alice-phone (touch+token, 5001)
//   h-bob    g-night  pin 5678;              card c-bob-card 17/1002
//   h-carol  g-staff  no PIN;                card c-carol-card 17/1003; phone c-carol-phone (token, pending)
//   h-dave   g-contractors pin 4321;         card c-dave-card 17/1004 (no rule at all)
//
//   r-staff-front  door      g-staff  [door-front, door-annex]  00:00:00–24:00:00 every day (24x7)
//   r-staff-lab    door      g-staff  [door-lab]   08:00:00–18:00:00 Mon–Fri, cardAndPin
//   r-night-front  door      g-night  [door-front] 22:00:00–06:00:00 Fri (overnight)
//   r-staff-low    elevator  g-staff  [fg-low]     00:00:00–24:00:00 every day (24x7)
//   r-staff-high   elevator  g-staff  [fg-high]    08:00:00–18:00:00 Mon–Fri
import { expect } from "vitest";
import type { z } from "zod";
import { type AccessStateView, createEngine } from "../../src/evaluate/index.js";
import {
  type Decision,
  type Issue,
  type Reason,
  type SystemSnapshot,
  type cloudNodeSchema,
  type connectionSchema,
  type deviceSchema,
  type floorGroupSchema,
  formatIssues,
  type groupSchema,
  type holderSchema,
  outcomeOf,
  parseSnapshot,
  type partitionSchema,
  type ruleSchema,
} from "../../src/model/index.js";
import { decideNaive } from "../reference/decideNaive.js";

// ---------------------------------------------------------------------------------------------
// Snapshot builder

export type PartitionIn = z.input<typeof partitionSchema>;
export type GroupIn = z.input<typeof groupSchema>;
export type HolderIn = z.input<typeof holderSchema>;
export type CredentialIn = NonNullable<HolderIn["credentials"]>[number];
export type CloudNodeIn = z.input<typeof cloudNodeSchema>;
export type CardFormatIn = NonNullable<CloudNodeIn["cardFormat"]>[number];
export type ConnectionIn = z.input<typeof connectionSchema>;
export type DeviceIn = z.input<typeof deviceSchema>;
export type FloorGroupIn = z.input<typeof floorGroupSchema>;
export type RuleIn = z.input<typeof ruleSchema>;

/** The raw (JSON-shaped) snapshot a scenario edits before it is loaded. */
export interface RawSnapshot {
  format: string;
  systemId: string;
  timezone: string;
  partitions: PartitionIn[];
  groups: GroupIn[];
  holders: HolderIn[];
  cloudNodes: CloudNodeIn[];
  connections: ConnectionIn[];
  devices: DeviceIn[];
  floorGroups: FloorGroupIn[];
  rules: RuleIn[];
  [extra: string]: unknown;
}

export const ALL_DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
export const WEEKDAYS_MON_FRI = ["Mon", "Tue", "Wed", "Thu", "Fri"] as const;

function baseRaw(): RawSnapshot {
  const reader = (id: string, name: string, port: number, extra: Partial<DeviceIn> = {}): DeviceIn => ({
    id,
    name,
    cloudNode: "node-a",
    connection: "conn-a",
    port,
    type: "primaryReader",
    publicIcon: "swingingDoor",
    ...extra,
  });
  return {
    format: "rsop-system/1",
    systemId: "sys-1",
    timezone: "America/New_York",
    partitions: [],
    groups: [
      { id: "g-staff", name: "Staff" },
      { id: "g-night", name: "Night shift" },
      { id: "g-contractors", name: "Contractors" },
    ],
    holders: [
      {
        id: "h-alice",
        firstName: "Alice",
        lastName: "Archer",
        pin: "1234",
        duressPin: "9999",
        groups: ["g-staff"],
        credentials: [
          { id: "c-alice-card", credentialNumber: 1001, facilityCode: 17, types: ["card"] },
          { id: "c-alice-phone", credentialNumber: 5001, types: ["touch", "token"] },
        ],
      },
      {
        id: "h-bob",
        firstName: "Bob",
        lastName: "Baker",
        pin: "5678",
        groups: ["g-night"],
        credentials: [{ id: "c-bob-card", credentialNumber: 1002, facilityCode: 17, types: ["card"] }],
      },
      {
        id: "h-carol",
        firstName: "Carol",
        lastName: "Cole",
        groups: [{ id: "g-staff", name: "Staff", partition: null }],
        credentials: [
          { id: "c-carol-card", credentialNumber: 1003, facilityCode: 17, types: ["card"] },
          { id: "c-carol-phone", credentialNumber: null, types: ["token"] },
        ],
      },
      {
        id: "h-dave",
        firstName: "Dave",
        lastName: "Dunn",
        pin: "4321",
        groups: ["g-contractors"],
        credentials: [{ id: "c-dave-card", credentialNumber: 1004, facilityCode: 17, types: ["card"] }],
      },
    ],
    cloudNodes: [
      { id: "node-a", name: "HQ", ecards: [4242] },
      { id: "node-b", name: "Annex", timezone: "Europe/London" },
    ],
    connections: [
      { id: "conn-a", name: "HQ hub", type: "lockhub", cloudNode: "node-a", macAddress: "00:1B:2C:4A:10:01" },
      { id: "conn-b", name: "Annex hub", type: "lockhub", cloudNode: "node-b", macAddress: "00:1B:2C:4A:10:02" },
    ],
    devices: [
      reader("door-front", "Front door", 1),
      reader("door-side", "Side reader", 2, {
        type: "additionalReader",
        publicIcon: null,
        primaryReader: "door-front",
      }),
      reader("door-lab", "Lab door", 3),
      reader("elev-1", "Elevator", 4, { type: "elevatorReader", publicIcon: null }),
      reader("floor-1", "Floor 1", 5, { type: "floorRelay", publicIcon: null }),
      reader("floor-2", "Floor 2", 6, { type: "floorRelay", publicIcon: null }),
      reader("floor-3", "Floor 3", 7, { type: "floorRelay", publicIcon: null }),
      reader("door-annex", "Annex door", 1, { cloudNode: "node-b", connection: "conn-b" }),
    ],
    floorGroups: [
      { id: "fg-low", name: "Low floors", readerPort: "elev-1", floors: ["floor-2", "floor-1"] },
      { id: "fg-high", name: "High floors", readerPort: { id: "elev-1" }, floors: [{ id: "floor-3" }] },
    ],
    rules: [
      {
        id: "r-staff-front",
        type: "door",
        groupId: "g-staff",
        devices: ["door-front", "door-annex"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: [...ALL_DAYS],
      },
      {
        id: "r-staff-lab",
        type: "door",
        groupId: "g-staff",
        devices: ["door-lab"],
        startTime: "08:00:00",
        stopTime: "18:00:00",
        recurring: [...WEEKDAYS_MON_FRI],
        authenticationPolicy: "cardAndPin",
      },
      {
        id: "r-night-front",
        type: "door",
        groupId: "g-night",
        devices: ["door-front"],
        startTime: "22:00:00",
        stopTime: "06:00:00",
        recurring: ["Fri"],
      },
      {
        id: "r-staff-low",
        type: "elevator",
        groupId: "g-staff",
        floorGroups: ["fg-low"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: [...ALL_DAYS],
      },
      {
        id: "r-staff-high",
        type: "elevator",
        groupId: "g-staff",
        floorGroups: ["fg-high"],
        startTime: "08:00:00",
        stopTime: "18:00:00",
        recurring: [...WEEKDAYS_MON_FRI],
      },
    ],
  };
}

function byId<T extends { id: string }>(items: T[], id: string, what: string): T {
  const found = items.find((x) => x.id === id);
  if (found === undefined) throw new Error(`fixture: no ${what} "${id}"`);
  return found;
}

/** A raw snapshot plus finders, handed to a scenario's edit function. */
export class Draft {
  readonly raw: RawSnapshot = baseRaw();
  node(id: string): CloudNodeIn {
    return byId(this.raw.cloudNodes, id, "cloud node");
  }
  device(id: string): DeviceIn {
    return byId(this.raw.devices, id, "device");
  }
  holder(id: string): HolderIn {
    return byId(this.raw.holders, id, "holder");
  }
  credential(id: string): CredentialIn {
    for (const h of this.raw.holders) for (const c of h.credentials ?? []) if (c.id === id) return c;
    throw new Error(`fixture: no credential "${id}"`);
  }
  rule(id: string): RuleIn {
    return byId(this.raw.rules, id, "rule");
  }
  floorGroup(id: string): FloorGroupIn {
    return byId(this.raw.floorGroups, id, "floor group");
  }
  /** Adds a door rule (every day, all day, allow) unless the fields say otherwise. */
  addRule(rule: Partial<RuleIn> & { id: string; groupId: string }): RuleIn {
    const full: RuleIn = {
      type: "door",
      startTime: "00:00:00",
      stopTime: "24:00:00",
      recurring: [...ALL_DAYS],
      ...rule,
    };
    this.raw.rules.push(full);
    return full;
  }
  addGroup(id: string, name = id): GroupIn {
    const g = { id, name };
    this.raw.groups.push(g);
    return g;
  }
  /** Adds a holder with the given groups and credentials; names are filled in. */
  addHolder(holder: Partial<HolderIn> & { id: string }): HolderIn {
    const full: HolderIn = { firstName: "Test", lastName: holder.id, ...holder };
    this.raw.holders.push(full);
    return full;
  }
  /** Adds a device on node-a / conn-a unless the fields say otherwise. */
  addDevice(device: Partial<DeviceIn> & { id: string; port: number }): DeviceIn {
    const full: DeviceIn = {
      name: device.id,
      cloudNode: "node-a",
      connection: "conn-a",
      type: "primaryReader",
      publicIcon: "swingingDoor",
      ...device,
    };
    this.raw.devices.push(full);
    return full;
  }
  /** Removes every rule but the named ones (to make a scenario self-contained). */
  keepRules(...ids: string[]): void {
    this.raw.rules = this.raw.rules.filter((r) => ids.includes(r.id));
  }
}

/** The raw base building after `edit`: for tests of parseSnapshot itself. */
export function rawBuilding(edit?: (d: Draft) => void): RawSnapshot {
  const d = new Draft();
  edit?.(d);
  return d.raw;
}

/**
 * The base building after `edit`, loaded through parseSnapshot.
 * @throws Error listing every issue when the edited snapshot is invalid (a broken fixture).
 */
export function building(edit?: (d: Draft) => void): SystemSnapshot {
  const r = parseSnapshot(rawBuilding(edit));
  if (!r.ok) throw new Error(`fixture snapshot is invalid:\n${formatIssues(r.issues)}`);
  return r.value;
}

/** The issues of an edited base building that must fail to load. */
export function issuesOf(edit: (d: Draft) => void): readonly Issue[] {
  const r = parseSnapshot(rawBuilding(edit));
  if (r.ok) throw new Error("expected the edited snapshot to be refused, but it loaded");
  return r.issues;
}

/** Issues as `[path, code]` pairs, the path written `holders.1.pin`, sorted (report order is not a contract). */
export function pathsAndCodes(issues: readonly Issue[]): [string, string][] {
  return issues
    .map((i): [string, string] => [i.path.join("."), i.code])
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Wiegand frames

/** `value` as `length` bits, MSB first. */
export function bitsOf(value: number | bigint, length: number): string {
  const v = BigInt(value);
  if (v < 0n || v >= 1n << BigInt(length)) throw new Error(`fixture: ${value} does not fit in ${length} bits`);
  return v.toString(2).padStart(length, "0");
}

function ones(s: string): number {
  let n = 0;
  for (const c of s) if (c === "1") n++;
  return n;
}

/**
 * A standard 26-bit H10301 frame: even parity (bit 0) over bits 1–12, facility code bits 1–8,
 * card number bits 9–24, odd parity (bit 25) over bits 13–24.
 * `flip` inverts the bits at those positions afterwards (to break parity or a field).
 */
export function h10301(facilityCode: number, cardNumber: number, flip: number[] = []): string {
  const body = bitsOf(facilityCode, 8) + bitsOf(cardNumber, 16);
  const first = body.slice(0, 12);
  const second = body.slice(12);
  const even = ones(first) % 2 === 0 ? "0" : "1";
  const odd = ones(second) % 2 === 0 ? "1" : "0";
  const bits = [...(even + body + odd)];
  for (const p of flip) bits[p] = bits[p] === "1" ? "0" : "1";
  return bits.join("");
}

// ---------------------------------------------------------------------------------------------
// Running both deciders

export interface Impl {
  readonly name: "engine" | "reference";
  /** `state`: the areas' state (docs/semantics.md AB2–AB5), when the scenario has one. */
  decide(snapshot: SystemSnapshot, request: unknown, state?: AccessStateView): Decision;
}

const engines = new WeakMap<SystemSnapshot, ReturnType<typeof createEngine>>();

/** A plain copy, so a decider that reuses its result object cannot change a decision already read. */
function copy(d: Decision): Decision {
  return { ...d, floors: [...d.floors] };
}

export const ENGINE: Impl = {
  name: "engine",
  decide(snapshot, request, state) {
    let engine = engines.get(snapshot);
    if (engine === undefined) {
      engine = createEngine(snapshot);
      engines.set(snapshot, engine);
    }
    return copy(engine.decide(request, undefined, state));
  },
};

export const REFERENCE: Impl = {
  name: "reference",
  decide(snapshot, request, state) {
    return copy(decideNaive(snapshot, request, state));
  },
};

export const IMPLS: readonly Impl[] = [ENGINE, REFERENCE];

/** What a scenario expects: the reason always; every field not given is null / false / []. */
export interface Expected {
  reason: Reason;
  holderId?: string | null;
  credentialId?: string | null;
  activeRuleId?: string | null;
  duress?: boolean;
  floors?: string[];
  facilityCode?: number | null;
  credentialNumber?: number | string | null;
}

/** Reasons some scenario expected in this test file (reasons.test.ts checks it covers REASONS). */
export const expectedReasons = new Set<Reason>();

/** The whole decision a scenario expects: outcome and topic follow from the reason. */
export function fullDecision(e: Expected): Decision {
  const outcome = outcomeOf(e.reason);
  return {
    outcome,
    topic: `device.request.${outcome}`,
    reason: e.reason,
    holderId: e.holderId ?? null,
    credentialId: e.credentialId ?? null,
    activeRuleId: e.activeRuleId ?? null,
    duress: e.duress ?? false,
    floors: e.floors ?? [],
    facilityCode: e.facilityCode ?? null,
    credentialNumber: e.credentialNumber ?? null,
  } as Decision; // outcome and topic follow from the reason, so this is one of the three shapes
}

function describeRequest(request: unknown): string {
  try {
    return JSON.stringify(request);
  } catch {
    return String(request);
  }
}

/**
 * Decides `request` with `impl` and asserts the whole decision equals the expected one. On the
 * engine pass it also asserts that the engine and the reference return equal decisions.
 * Soft assertions: every check of a test is reported, not only the first failing one.
 */
export function check(
  impl: Impl,
  snapshot: SystemSnapshot,
  request: unknown,
  expected: Expected,
  state?: AccessStateView,
): void {
  expectedReasons.add(expected.reason);
  const want = fullDecision(expected);
  const label = `${impl.name} on ${describeRequest(request)}`;
  let got: Decision;
  try {
    got = impl.decide(snapshot, request, state);
  } catch (e) {
    // A decider never throws on a request (SPEC §2): report the exception as the decision.
    expect.soft(`threw ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`, label).toEqual(want);
    return;
  }
  expect.soft(got, label).toEqual(want);
  if (impl.name === "engine") {
    let other: Decision | undefined;
    try {
      other = REFERENCE.decide(snapshot, request, state);
    } catch {
      other = undefined; // the reference pass reports its own exception
    }
    if (other !== undefined)
      expect.soft(got, `engine and reference disagree on ${describeRequest(request)}`).toEqual(other);
  }
}

/** A checker bound to one implementation and snapshot: `at(request, expected)`. */
export function checker(
  impl: Impl,
  snapshot: SystemSnapshot,
  state?: AccessStateView,
): (request: unknown, expected: Expected) => void {
  return (request, expected) => check(impl, snapshot, request, expected, state);
}

// ---------------------------------------------------------------------------------------------
// Requests

/** A card read at `deviceId`: the standard 26-bit frame of `facilityCode`/`cardNumber`. */
export function cardAt(
  deviceId: string,
  at: string | number,
  facilityCode: number,
  cardNumber: number,
  extra: Record<string, unknown> = {},
) {
  return { deviceId, at, credential: { wiegand: h10301(facilityCode, cardNumber) }, ...extra };
}

/** A PIN typed alone at `deviceId`. */
export function pinAt(deviceId: string, at: string | number, pin: string, extra: Record<string, unknown> = {}) {
  return { deviceId, at, pin, ...extra };
}

/** A phone presented at `deviceId`. */
export function mobileAt(
  deviceId: string,
  at: string | number,
  mobile: "touch" | "token",
  credentialId: string,
  extra: Record<string, unknown> = {},
) {
  return { deviceId, at, credential: { mobile, credentialId }, ...extra };
}

/** Well-known instants (node-a is America/New_York, node-b Europe/London). */
export const T = {
  /** Wednesday 2026-03-04 12:00 in New York (EST). */
  WED_NOON: "2026-03-04T12:00:00-05:00",
  /** Wednesday 2026-03-04 10:00 in New York (EST). */
  WED_10: "2026-03-04T10:00:00-05:00",
  /** Wednesday 2026-03-04 20:00 in New York (EST), outside office hours. */
  WED_20: "2026-03-04T20:00:00-05:00",
  /** Saturday 2026-03-07 12:00 in New York (EST). */
  SAT_NOON: "2026-03-07T12:00:00-05:00",
} as const;
