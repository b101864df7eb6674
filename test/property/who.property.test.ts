// Who can access, evaluated in one pass per door (docs/semantics.md WA1–WA3), equals the
// one-holder-at-a-time definition (test/reference/whoOneByOne.ts: scanAccess per holder, sorted by
// comparing ids) for every device and floor group: on fresh engines, and on a live system's engine
// after every accepted change (holders added, changed, removed; groups and rules changed), where the
// holder order and member records are patched or rebuilt rather than built from scratch.
import fc from "fast-check";
import { expect, test } from "vitest";
import type { Engine } from "../../src/evaluate/index.js";
import { createEngine } from "../../src/evaluate/index.js";
import { type Operation, createLiveSystem, seededIds } from "../../src/live/index.js";
import { type SystemSnapshot, formatIssues, parseSnapshot } from "../../src/model/index.js";
import {
  type BuiltSnapshot,
  atSpecArb,
  builtSnapshotArb,
  operationSpecArb,
  resolveAt,
  resolveOperation,
  snapshotAndRequestsArb,
} from "../arbitraries/index.js";
import { whoFloorGroupOneByOne, whoOneByOne } from "../reference/whoOneByOne.js";

const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 150
    : Math.max(150, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 50));
const LIVE_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 60
    : Math.max(60, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 200));
const TIMEOUT = 60_000 + NUM_RUNS * 300; // generous: the machine may be shared
const AT = ["2026-04-15T14:15:00Z", "2026-04-18T03:30:00Z", "2026-11-01T06:30:00Z"];

function parseOrFail(input: unknown): SystemSnapshot {
  const r = parseSnapshot(input);
  if (!r.ok) throw new Error(`generated snapshot refused:\n${formatIssues(r.issues)}`);
  return r.value;
}

interface Seen {
  entries: number;
  multiGroup: number;
  pinOnly: number;
  floors: number;
}

/** Compares every device and floor group of `engine` at `at` with the oracle; counts what it saw. */
function assertWhoMatches(engine: Engine, at: number, seen: Seen, what: string): void {
  const snap = engine.snapshot;
  const sys = engine.compiled_;
  const groupsOf = new Map(snap.holders.map((h) => [h.id, h.groups.length]));
  for (const d of snap.devices) {
    const got = engine.whoCanAccess(d.id, { at }).holders;
    expect(got, `${what}: who can access ${d.id} at ${new Date(at).toISOString()}`).toStrictEqual(
      whoOneByOne(sys, d.id, at),
    );
    seen.entries += got.length;
    for (const e of got) {
      if (groupsOf.get(e.holderId)! > 1) seen.multiGroup++;
      if (e.floors.length > 0) seen.floors++;
    }
    // Holders the card alone does not admit but card + PIN does: the second factor combination.
    const policies = new Set(
      snap.rules.filter((r) => got.some((e) => e.activeRuleId === r.id)).map((r) => r.authenticationPolicy),
    );
    if (policies.has("cardAndPin") || d.authenticationPolicy === "cardAndPin" || d.authenticationPolicy === "pinOnly")
      seen.pinOnly++;
  }
  for (const fg of snap.floorGroups) {
    const got = engine.whoCanAccessFloorGroup(fg.id, { at }).holders;
    expect(got, `${what}: who can access ${fg.id} at ${new Date(at).toISOString()}`).toStrictEqual(
      whoFloorGroupOneByOne(sys, fg.id, at),
    );
    seen.entries += got.length;
  }
}

function instantFor(built: BuiltSnapshot, spec: Parameters<typeof resolveAt>[0], pick: number): number {
  const devices = built.meta.devices;
  const device = devices.length === 0 ? null : devices[pick % devices.length]!;
  return resolveAt(spec, built.meta, device);
}

test(
  "whoCanAccess and whoCanAccessFloorGroup equal the one-holder-at-a-time answer on every device and floor group",
  () => {
    const seen: Seen = { entries: 0, multiGroup: 0, pinOnly: 0, floors: 0 };
    fc.assert(
      fc.property(
        builtSnapshotArb,
        fc.array(fc.tuple(atSpecArb, fc.nat()), { minLength: 1, maxLength: 3 }),
        (built, ats) => {
          const engine = createEngine(parseOrFail(built.input));
          for (const [spec, pick] of ats) assertWhoMatches(engine, instantFor(built, spec, pick), seen, "fresh engine");
        },
      ),
      { numRuns: NUM_RUNS },
    );
    // Not vacuous: allowed holders, some through several groups, some by card + PIN, some with floors.
    expect(seen.entries).toBeGreaterThan(NUM_RUNS);
    expect(seen.multiGroup).toBeGreaterThan(NUM_RUNS / 10);
    expect(seen.pinOnly).toBeGreaterThan(NUM_RUNS / 10);
    expect(seen.floors).toBeGreaterThan(NUM_RUNS / 20);
  },
  TIMEOUT,
);

const stepArb = fc.oneof(
  { weight: 6, arbitrary: operationSpecArb.map((s) => [s]) },
  { weight: 1, arbitrary: fc.array(operationSpecArb, { minLength: 2, maxLength: 4 }) },
);

test(
  "after every change to a live system, its engine's who-can-access equals the one-holder-at-a-time answer",
  () => {
    const seen: Seen = { entries: 0, multiGroup: 0, pinOnly: 0, floors: 0 };
    let changes = 0;
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 1 }),
        fc.array(stepArb, { minLength: 3, maxLength: 25 }),
        fc.nat(),
        fc.constantFrom(...AT),
        ({ snapshot: input }, steps, seed, atIso) => {
          const made = createLiveSystem(input, { newId: seededIds(seed) });
          if (!made.ok) throw new Error("generated snapshot refused");
          const live = made.value;
          const at = Date.parse(atIso);
          // Asked once before any change, so that the order exists and later changes patch it.
          assertWhoMatches(live.engine, at, seen, "before any change");
          for (const specs of steps) {
            const ops: Operation[] = specs.map((spec) => resolveOperation(live.snapshot, spec));
            const result = ops.length > 1 ? live.apply(ops) : live.apply(ops[0]!);
            if (!result.ok) continue;
            changes++;
            assertWhoMatches(live.engine, at, seen, JSON.stringify(ops));
          }
        },
      ),
      { numRuns: LIVE_RUNS },
    );
    expect(changes).toBeGreaterThan(LIVE_RUNS * 2);
    expect(seen.entries).toBeGreaterThan(LIVE_RUNS);
  },
  TIMEOUT,
);
