// The live system's differential property: after every accepted operation the live engine equals a
// fresh load of the resulting snapshot (decisions, RSOP, who-can-access); a refused operation
// changes nothing; inverse patches restore the previous snapshot exactly; replaying the patches on
// a second live system reaches the same state.
import fc from "fast-check";
import { expect, test } from "vitest";
import { type Engine, createEngine } from "../../src/evaluate/index.js";
import {
  type LiveSystem,
  type Operation,
  type OperationResult,
  applySnapshotPatches,
  createLiveSystem,
  seededIds,
} from "../../src/live/index.js";
import { type SystemSnapshot, formatIssues, parseSnapshot } from "../../src/model/index.js";
import {
  OPERATION_KINDS,
  type OperationSpec,
  inKeyOrder,
  operationSpecArb,
  resolveOperation,
  snapshotAndRequestsArb,
} from "../arbitraries/index.js";

/**
 * 100 runs by default; RSOP_PROPERTY_RUNS scales it down by 20 (one run replays up to 50 operations and compares every answer (about 11 ms a run)), so that the
 * 1,000,000-run hunt gives 50,000 runs here.
 */
const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 100
    : Math.max(100, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 20));
const TIMEOUT = 60_000 + NUM_RUNS * 60; // generous: the machine may be shared
const AT = ["2026-04-15T14:15:00Z", "2026-04-18T03:30:00Z", "2026-11-01T06:30:00Z"];

function fresh(s: SystemSnapshot): { snapshot: SystemSnapshot; engine: Engine } {
  const r = parseSnapshot(s);
  if (!r.ok) throw new Error(`the live snapshot does not load:\n${formatIssues(r.issues)}`);
  return { snapshot: r.value, engine: createEngine(r.value) };
}

/** Requests for this snapshot: the generated ones plus each card at each door at a few instants. */
function requestsFor(s: SystemSnapshot, generated: readonly unknown[]): unknown[] {
  const out = [...generated];
  const cards = s.holders
    .flatMap((h) => h.credentials.filter((c) => c.credentialNumber !== null && c.types.includes("card")))
    .slice(0, 6);
  for (const d of s.devices.slice(0, 4))
    for (const c of cards)
      for (const at of AT)
        out.push({
          deviceId: d.id,
          at,
          credential: { credentialNumber: c.credentialNumber, facilityCode: c.facilityCode },
        });
  return out;
}

function assertSameAnswers(live: LiveSystem, requests: readonly unknown[], what: string): number {
  const { snapshot, engine } = fresh(live.snapshot);
  expect(live.snapshot, `${what}: the live snapshot is what a fresh load normalizes it to`).toStrictEqual(snapshot);
  let compared = 0;
  for (const r of requests) {
    expect({ ...live.engine.decide(r) }, `${what}: decision for ${JSON.stringify(r)}`).toStrictEqual({
      ...engine.decide(r),
    });
    compared++;
  }
  const ids = snapshot.holders.map((h) => h.id).slice(0, 4);
  for (const at of AT) {
    expect(live.engine.rsop(ids, { at }), `${what}: RSOP at ${at}`).toStrictEqual(engine.rsop(ids, { at }));
    for (const d of snapshot.devices.slice(0, 3))
      expect(live.engine.whoCanAccess(d.id, { at }), `${what}: who can access ${d.id}`).toStrictEqual(
        engine.whoCanAccess(d.id, { at }),
      );
    compared++;
  }
  return compared;
}

const stepArb = fc.oneof(
  { weight: 6, arbitrary: operationSpecArb.map((s) => [s]) },
  { weight: 1, arbitrary: fc.array(operationSpecArb, { minLength: 2, maxLength: 3 }) },
);

test(
  "live system equals a fresh load after every operation; refusals change nothing; patches undo and replay",
  () => {
    const counts = { accepted: 0, refused: 0, reads: 0, batches: 0, compared: 0 };
    const acceptedKinds = new Set<string>();
    const refusedKinds = new Set<string>();
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 6 }),
        fc.array(stepArb, { minLength: 1, maxLength: 50 }),
        fc.nat(),
        ({ snapshot: input, requests }, steps, seed) => {
          const made = createLiveSystem(input, { newId: seededIds(seed) });
          const replica = createLiveSystem(input);
          if (!made.ok || !replica.ok) throw new Error("generated snapshot refused");
          const live = made.value;
          for (const specs of steps) {
            const before = live.snapshot;
            const engineBefore = live.engine;
            const ops: Operation[] = specs.map((spec: OperationSpec) => resolveOperation(live.snapshot, spec));
            const batch = ops.length > 1;
            const result = batch ? live.apply(ops) : live.apply(ops[0]!);
            const what = JSON.stringify(batch ? ops : ops[0]);
            if (!batch) (result.ok ? acceptedKinds : refusedKinds).add(specs[0]!.kind);
            if (!result.ok) {
              counts.refused++;
              expect(live.snapshot, `${what} was refused (${JSON.stringify(result)}) but changed the snapshot`).toBe(
                before,
              );
              expect(live.engine, `${what} was refused but changed the engine`).toBe(engineBefore);
              expect(result.issues.length, `${what}: a refusal names its problems`).toBeGreaterThan(0);
              continue;
            }
            const results: OperationResult[] = batch
              ? [...(result as { readonly results: readonly OperationResult[] }).results]
              : [result as OperationResult];
            if (batch) counts.batches++;
            const writes = results.filter((r): r is Extract<OperationResult, { patches: unknown }> => "patches" in r);
            if (writes.length === 0) {
              counts.reads++;
              expect(live.snapshot).toBe(before);
              continue;
            }
            counts.accepted++;
            counts.compared += assertSameAnswers(live, requestsFor(live.snapshot, requests), what);
            // Undo: inverse patches, last write first, restore the previous snapshot exactly (its
            // elements; a removed one comes back at the end of its list, L21).
            let undone: SystemSnapshot = live.snapshot;
            for (const w of [...writes].reverse()) undone = applySnapshotPatches(undone, [...w.inversePatches]);
            expect(inKeyOrder(undone), `${what}: inverse patches restore the snapshot`).toStrictEqual(
              inKeyOrder(before),
            );
            // Replay on the replica.
            for (const w of writes) {
              const r = replica.value.applyPatches(w.patches);
              if (!r.ok) throw new Error(`replica refused the patches of ${what}:\n${formatIssues(r.issues)}`);
            }
            expect(replica.value.snapshot, `${what}: the replica reaches the same snapshot`).toStrictEqual(
              live.snapshot,
            );
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
    // The property compared something of every kind.
    expect(counts.accepted).toBeGreaterThan(NUM_RUNS / 2);
    expect(counts.refused).toBeGreaterThan(NUM_RUNS / 4);
    expect(counts.reads).toBeGreaterThan(0);
    expect(counts.batches).toBeGreaterThan(0);
    expect(counts.compared).toBeGreaterThan(NUM_RUNS);
    if (NUM_RUNS >= 300) {
      // Every kind of operation was both accepted and refused at least once.
      const writes = OPERATION_KINDS.filter((k) => k !== "garbage");
      expect(
        writes.filter((k) => !acceptedKinds.has(k)),
        "kinds never accepted",
      ).toEqual([]);
      expect(
        OPERATION_KINDS.filter((k) => k !== "read" && !refusedKinds.has(k)),
        "kinds never refused",
      ).toEqual([]);
    }
  },
  TIMEOUT,
);
