// RSOP, with its rules accumulated per device and its device and rule records reused across calls
// (docs/semantics.md WA4–WA5), equals the entry-by-entry evaluation (test/reference/rsopOneByOne.ts:
// scanAccess per device and floor group, every entry built from the snapshot's objects) field for
// field: system-wide and scoped to each node, on fresh engines and on a live system's engine after
// every accepted change (display fields of devices and nodes included); and rsopJsonBytes is exactly the
// UTF-8 of JSON.stringify of that result each time.
import fc from "fast-check";
import { expect, test } from "vitest";
import { type Engine, createEngine } from "../../src/evaluate/index.js";
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
import { rsopOneByOne } from "../reference/rsopOneByOne.js";

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
  devices: number;
  allowed: number;
  floorGroups: number;
}

/** RSOP of every holder, system-wide and per node, twice (the second call reuses the records). */
function assertRsopMatches(engine: Engine, at: number, seen: Seen, what: string): void {
  const snap = engine.snapshot;
  if (snap.holders.length === 0) return;
  const ids = snap.holders.map((h) => h.id);
  for (const cloudNodeId of [undefined, ...snap.cloudNodes.map((n) => n.id)]) {
    const options = cloudNodeId === undefined ? { at } : { at, cloudNodeId };
    const expected = rsopOneByOne(engine.compiled_, ids, options);
    for (let round = 0; round < 2; round++)
      expect(
        engine.rsop(ids, options),
        `${what}: RSOP ${cloudNodeId ?? ""} at ${new Date(at).toISOString()}`,
      ).toStrictEqual(expected);
    // The JSON bytes are JSON.stringify's text of the result, compact and indented, key order
    // included (the second call reuses its pieces; another indentation remakes them).
    const result = engine.rsop(ids, options);
    for (const indent of [0, 2, 0, 3])
      expect(
        new TextDecoder().decode(engine.rsopJsonBytes(ids, options, indent)),
        `${what}: RSOP JSON ${cloudNodeId ?? ""} indent ${indent}`,
      ).toBe(JSON.stringify(result, null, indent));
    for (const h of expected.holders) {
      seen.devices += h.devices.length;
      seen.allowed += h.devices.filter((d) => d.allowed).length;
      seen.floorGroups += h.floorGroups.length;
    }
  }
}

function instantFor(built: BuiltSnapshot, spec: Parameters<typeof resolveAt>[0], pick: number): number {
  const devices = built.meta.devices;
  const device = devices.length === 0 ? null : devices[pick % devices.length]!;
  return resolveAt(spec, built.meta, device);
}

test(
  "RSOP equals the entry-by-entry evaluation, system-wide and per node",
  () => {
    const seen: Seen = { devices: 0, allowed: 0, floorGroups: 0 };
    fc.assert(
      fc.property(
        builtSnapshotArb,
        fc.array(fc.tuple(atSpecArb, fc.nat()), { minLength: 1, maxLength: 3 }),
        (built, ats) => {
          const engine = createEngine(parseOrFail(built.input));
          for (const [spec, pick] of ats)
            assertRsopMatches(engine, instantFor(built, spec, pick), seen, "fresh engine");
        },
      ),
      { numRuns: NUM_RUNS },
    );
    expect(seen.devices).toBeGreaterThan(NUM_RUNS);
    expect(seen.allowed).toBeGreaterThan(NUM_RUNS / 5);
    expect(seen.floorGroups).toBeGreaterThan(NUM_RUNS / 10);
  },
  TIMEOUT,
);

const stepArb = fc.oneof(
  { weight: 6, arbitrary: operationSpecArb.map((s) => [s]) },
  { weight: 1, arbitrary: fc.array(operationSpecArb, { minLength: 2, maxLength: 4 }) },
);

test(
  "after every change to a live system, its engine's RSOP equals the entry-by-entry evaluation",
  () => {
    const seen: Seen = { devices: 0, allowed: 0, floorGroups: 0 };
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
          assertRsopMatches(live.engine, at, seen, "before any change");
          for (const specs of steps) {
            const ops: Operation[] = specs.map((spec) => resolveOperation(live.snapshot, spec));
            const result = ops.length > 1 ? live.apply(ops) : live.apply(ops[0]!);
            if (!result.ok) continue;
            changes++;
            assertRsopMatches(live.engine, at, seen, JSON.stringify(ops));
          }
        },
      ),
      { numRuns: LIVE_RUNS },
    );
    expect(changes).toBeGreaterThan(LIVE_RUNS * 2);
    expect(seen.devices).toBeGreaterThan(LIVE_RUNS);
  },
  TIMEOUT,
);
