// What the differential property suites share: how many runs (RSOP_PROPERTY_RUNS), their time limit,
// replaying a reported failure, the decision's fields, and the generated snapshot parsed or failed.
import fc from "fast-check";
import type { AccessStateJson } from "../../src/evaluate/accessState.js";
import type { Decision, SystemSnapshot, SystemSnapshotInput } from "../../src/model/index.js";
import { formatIssues, parseInstant, parseSnapshot } from "../../src/model/index.js";
import {
  type BuiltSnapshot,
  type SnapshotAndRequests,
  buildRequest,
  buildSnapshot,
  calendarSnapshotSpecArb,
  requestSpecArb,
  snapshotSpecArb,
  type WindowInput,
  windowArb,
} from "../arbitraries/index.js";

export const NUM_RUNS = Number(process.env.RSOP_PROPERTY_RUNS ?? 300);
/** A run costs a few milliseconds; long hunts (RSOP_PROPERTY_RUNS=100000) get the time they need. */
export const TIMEOUT = 60_000 + NUM_RUNS * 20;
/**
 * Replays a reported failure: fast-check prints `{ seed, path }`; run with RSOP_PROPERTY_SEED=<seed>
 * RSOP_PROPERTY_PATH=<path> to get the same shrunk counterexample again.
 */
export const REPLAY =
  process.env.RSOP_PROPERTY_SEED === undefined
    ? {}
    : {
        seed: Number(process.env.RSOP_PROPERTY_SEED),
        ...(process.env.RSOP_PROPERTY_PATH ? { path: process.env.RSOP_PROPERTY_PATH } : {}),
      };

/** Every field of a decision, compared one by one. */
export const FIELDS = [
  "outcome",
  "topic",
  "reason",
  "holderId",
  "credentialId",
  "activeRuleId",
  "duress",
  "floors",
  "facilityCode",
  "credentialNumber",
] as const;

/** A plain copy, so internal classes, frozen or reused arrays never decide the comparison. */
export function plain(d: Decision): Decision {
  return { ...d, floors: [...d.floors] };
}

/** A filled-in decision, as a caller reusing one object would pass it. */
export function staleDecision(): Decision {
  return {
    outcome: "allowed",
    topic: "device.request.allowed",
    reason: "ecard",
    holderId: "stale-holder",
    credentialId: "stale-credential",
    activeRuleId: "stale-rule",
    duress: true,
    floors: ["stale-floor"],
    facilityCode: 999,
    credentialNumber: 999,
  };
}

/** The generated snapshot, validated; a generator that made an invalid one fails the run. */
export function parseOrFail(input: unknown): SystemSnapshot {
  const r = parseSnapshot(input);
  if (!r.ok) throw new Error(`generated snapshot refused:\n${formatIssues(r.issues)}\n${JSON.stringify(input)}`);
  return r.value;
}

// ---------------------------------------------------------------------------------------------
// Threat levels, unlock rules, areas and their state (docs/semantics.md TL, UF, AB): opt-in, so the
// suites that draw `snapshotAndRequestsArb` without it get exactly what they got before.
// ---------------------------------------------------------------------------------------------

/** Per rule position: its maxThreatLevel (allow rules only) and whether a door allow rule becomes an unlock rule. */
interface RuleExtraSpec {
  readonly maxThreatLevel: number | undefined;
  readonly unlock: boolean;
}
/** An area over devices of one node: masks over that node's devices. */
interface AreaSpec {
  readonly nodePick: number;
  readonly entryMask: number;
  readonly exitMask: number;
  readonly antiPassback: null | { readonly mode: "hard" | "soft"; readonly resetSeconds: number };
  readonly occupancyLimit: number | null;
}
/** An instant near one of the case's request instants: an entry or a first allowed scan. */
interface NearSpec {
  readonly requestPick: number;
  readonly delta: number;
}
export interface DoorStatesSpec {
  readonly levels: number[];
  readonly rules: RuleExtraSpec[];
  readonly autoOpenMask: number;
  readonly areas: AreaSpec[];
  readonly inside: (NearSpec & { readonly areaPick: number; readonly holderPick: number })[];
  readonly firstAllows: (NearSpec & { readonly devicePick: number })[];
  /** An access rule of one group at every door, all day, so that scans get through to the areas. */
  readonly open: null | { readonly groupPick: number; readonly maxThreatLevel: number | undefined };
  /** An unlock rule at some doors with a random window. */
  readonly unlock: null | {
    readonly window: WindowInput;
    readonly deviceMask: number;
    readonly maxThreatLevel: number | undefined;
  };
}

const RESET_SECONDS = [0, 1, 60, 3600, 86_400] as const;
/** How long ago an entry was: exactly a reset period (AB2's `≥`), a millisecond either side, or anything in two days. */
const agoArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom(...RESET_SECONDS), fc.constantFrom(-1, 0, 1))
      .map(([s, ms]) => -(s * 1000) + ms),
  },
  { weight: 2, arbitrary: fc.integer({ min: -2 * 86_400_000, max: 3_600_000 }) },
);
const levelArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(0) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 3 }) },
);

export const doorStatesSpecArb: fc.Arbitrary<DoorStatesSpec> = fc.record({
  levels: fc.array(levelArb, { minLength: 3, maxLength: 3 }),
  rules: fc.array(
    fc.record({
      maxThreatLevel: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined, freq: 3 }),
      unlock: fc.boolean().chain((b) => (b ? fc.boolean() : fc.constant(false))), // about a quarter
    }),
    { minLength: 8, maxLength: 8 },
  ),
  autoOpenMask: fc.nat(15),
  areas: fc.array(
    fc.record({
      nodePick: fc.nat(),
      entryMask: fc.integer({ min: 1, max: 255 }),
      exitMask: fc.nat(255),
      antiPassback: fc.option(
        fc.record({
          mode: fc.constantFrom("hard" as const, "soft" as const),
          resetSeconds: fc.constantFrom(...RESET_SECONDS),
        }),
        { nil: null, freq: 4 },
      ),
      occupancyLimit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null, freq: 3 }),
    }),
    { maxLength: 3 },
  ),
  inside: fc.array(fc.record({ areaPick: fc.nat(), holderPick: fc.nat(), requestPick: fc.nat(), delta: agoArb }), {
    maxLength: 6,
  }),
  open: fc.option(
    fc.record({
      groupPick: fc.nat(),
      maxThreatLevel: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
    }),
    { nil: null, freq: 4 },
  ),
  unlock: fc.option(
    fc.record({
      window: windowArb,
      deviceMask: fc.integer({ min: 1, max: 7 }),
      maxThreatLevel: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
    }),
    { nil: null, freq: 4 },
  ),
  firstAllows: fc.array(
    fc.record({
      devicePick: fc.nat(),
      requestPick: fc.nat(),
      delta: fc.oneof(fc.constantFrom(-1, 0, 1), fc.integer({ min: -86_400_000, max: 3_600_000 })),
    }),
    { maxLength: 3 },
  ),
});

type Json = Record<string, unknown>;

/** The instant of a request (what it carries), or a fixed instant for a malformed one. */
function instantOf(request: unknown): number {
  const at = (request as { at?: unknown } | null)?.at;
  const ms = typeof at === "number" || typeof at === "string" ? parseInstant(at) : Number.NaN;
  return Number.isFinite(ms) ? ms : Date.UTC(2026, 10, 21, 12);
}

/**
 * Adds the spec's threat levels, maxThreatLevels, unlock rules, autoOpen devices and areas to a built
 * snapshot (a deep copy), and draws the state: holders inside areas and first allowed scans near the
 * request instants.
 */
export function withDoorStates(
  built: BuiltSnapshot,
  spec: DoorStatesSpec,
  requests: readonly unknown[],
): { snapshot: SystemSnapshotInput; state: AccessStateJson } {
  const input = structuredClone(built.input) as unknown as Json;
  const nodes = input.cloudNodes as Json[];
  nodes.forEach((n, i) => {
    const level = spec.levels[i % spec.levels.length]!;
    // Absent and 0 mean the same (TL1): write 0 out on some nodes only.
    if (level > 0 || i % 2 === 1) n.threatLevel = level;
  });
  (input.rules as Json[]).forEach((r, i) => {
    const extra = spec.rules[i % spec.rules.length]!;
    if (r.allow === false) return; // TL3: a deny rule carries no maxThreatLevel
    if (extra.maxThreatLevel !== undefined) r.maxThreatLevel = extra.maxThreatLevel;
    if (extra.unlock && r.type === "door") r.action = "unlock";
    else if (i % 3 === 0) r.action = "access";
  });
  const devices = input.devices as Json[];
  const doors = devices.filter((d) => (d.id as string).startsWith("d")).map((d) => d.id as string);
  const groups = input.groups as Json[];
  const level = (max: number | undefined) => (max === undefined ? {} : { maxThreatLevel: max });
  if (spec.open !== null)
    (input.rules as Json[]).push({
      id: "z-open",
      type: "door",
      // Half the time the first holder's group, so that the sequences have someone going in and out.
      groupId:
        spec.open.groupPick % 2 === 0 && (built.meta.holders[0]?.groups.length ?? 0) > 0
          ? built.meta.holders[0]!.groups[0]
          : groups[spec.open.groupPick % groups.length]!.id,
      devices: doors,
      startTime: "00:00:00",
      stopTime: "24:00:00",
      recurring: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"],
      ...level(spec.open.maxThreatLevel),
    });
  const unlockSpec = spec.unlock;
  if (unlockSpec !== null)
    (input.rules as Json[]).push({
      id: "u-open",
      type: "door",
      action: "unlock",
      groupId: groups[0]!.id,
      devices: doors.filter((_, j) => (unlockSpec.deviceMask >> (j % 3)) & 1),
      ...unlockSpec.window,
      ...level(unlockSpec.maxThreatLevel),
    });
  devices.forEach((d, i) => {
    if ((spec.autoOpenMask >> (i % 4)) & 1) d.autoOpenAfterFirstAllow = true;
  });
  const areas: Json[] = [];
  spec.areas.forEach((a, k) => {
    const node = nodes[a.nodePick % nodes.length]!.id;
    const here = devices.filter((d) => d.cloudNode === node && d.type !== "floorRelay").map((d) => d.id as string);
    if (here.length === 0) return;
    let entries = here.filter((_, j) => (a.entryMask >> (j % 8)) & 1);
    if (entries.length === 0) entries = [here[a.entryMask % here.length]!];
    const exits = here.filter((d, j) => (a.exitMask >> (j % 8)) & 1 && !entries.includes(d));
    // A node has few doors: an area whose entries took them all gives one back as its exit, half the time.
    if (exits.length === 0 && entries.length > 1 && a.exitMask % 2 === 1) exits.push(entries.pop()!);
    // Ids whose string order differs from creation order (AB5 checks areas in id order).
    areas.push({ id: ["area-b", "area-10", "area-a"][k]!, name: `Area ${k + 1}`, entries, exits, ...a });
  });
  for (const a of areas) {
    delete a.nodePick;
    delete a.entryMask;
    delete a.exitMask;
  }
  if (areas.length > 0) input.areas = areas;

  const state = { areas: {} as Record<string, Record<string, number>>, firstAllow: {} as Record<string, number> };
  const holders = built.meta.holders;
  const near = (s: NearSpec) =>
    (requests.length === 0 ? Date.UTC(2026, 10, 21, 12) : instantOf(requests[s.requestPick % requests.length])) +
    s.delta;
  if (areas.length > 0 && holders.length > 0)
    for (const s of spec.inside) {
      const area = areas[s.areaPick % areas.length]!.id as string;
      const inside = (state.areas[area] ??= {});
      inside[holders[s.holderPick % holders.length]!.id] = near(s);
    }
  for (const s of spec.firstAllows) state.firstAllow[devices[s.devicePick % devices.length]!.id as string] = near(s);
  return { snapshot: input as unknown as SystemSnapshotInput, state };
}

/** One case of the door-state properties: a snapshot, requests for it and a state to decide them with. */
export interface StateCase extends SnapshotAndRequests {
  readonly state: AccessStateJson;
  readonly built: BuiltSnapshot;
}

/**
 * `snapshotAndRequestsArb` with options: `calendars` as there, and `doorStates` adding threat levels,
 * maxThreatLevels, unlock rules, autoOpen devices, areas and a random state. Without `doorStates` the
 * snapshot and requests are exactly those of `snapshotAndRequestsArb` and the state is empty.
 */
export const stateCaseArb = (
  opts: { minRequests?: number; maxRequests?: number; calendars?: boolean; doorStates?: boolean } = {},
): fc.Arbitrary<StateCase> =>
  fc
    .tuple(
      opts.calendars === true ? calendarSnapshotSpecArb : snapshotSpecArb,
      fc.array(requestSpecArb, { minLength: opts.minRequests ?? 1, maxLength: opts.maxRequests ?? 12 }),
      opts.doorStates === true ? doorStatesSpecArb.map((s): DoorStatesSpec | null => s) : fc.constant(null),
    )
    .map(([spec, reqs, doorStates]) => {
      const built = buildSnapshot(spec);
      const requests = reqs.map((r) => buildRequest(built.meta, r));
      if (doorStates === null) return { snapshot: built.input, requests, state: { areas: {}, firstAllow: {} }, built };
      const { snapshot, state } = withDoorStates(built, doorStates, requests);
      return { snapshot, requests, state, built };
    });

/** Reasons that say the presented credential or read was not one the device accepts (steps 1, 2, 4): a presentation RSOP does not describe. */
export const NOT_ACCEPTED = new Set([
  "inputTypeNotAllowed",
  "unknownCardFormat",
  "parityError",
  "facilityCodeNotAllowed",
  "unknownCredential",
  "facilityCodeMismatch",
  "credentialPending",
  "bleNotSupported",
  "insecureRead",
]);
