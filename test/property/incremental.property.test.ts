// Incremental recompile (issue 13): an engine moved along by Engine.update(next, patches) answers
// exactly as a fresh compile of each snapshot it reaches — every decision field for the generated
// requests and a card scan per current card, RSOP (system-wide and scoped to a node), who can access
// each device and floor group, access windows — after every accepted operation or batch, after undo
// by inverse patches (and redo), and on a replica fed the patches through LiveSystem.applyPatches.
import fc from "fast-check";
import { expect, test } from "vitest";
import { type Engine, createEngine } from "../../src/evaluate/index.js";
import {
  type Operation,
  type OperationResult,
  applySnapshotPatches,
  createLiveSystem,
  seededIds,
} from "../../src/live/index.js";
import { type SystemSnapshot, formatIssues, parseSnapshot } from "../../src/model/index.js";
import {
  type OperationSpec,
  inKeyOrder,
  operationSpecArb,
  resolveOperation,
  snapshotAndRequestsArb,
} from "../arbitraries/index.js";

/**
 * 100 runs by default; RSOP_PROPERTY_RUNS scales it down by 100 (one run compares about 4,000 answers after every change, undo and replay (about 140 ms a run)), so that the
 * 1,000,000-run hunt gives 10,000 runs here.
 */
const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 100
    : Math.max(100, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 100));
const TIMEOUT = 60_000 + NUM_RUNS * 500; // generous: the machine may be shared
const AT = ["2026-04-15T14:15:00Z", "2026-04-18T03:30:00Z", "2026-11-01T06:30:00Z"];
const PERIOD = { from: "2026-03-07T00:00:00Z", to: "2026-03-10T00:00:00Z" };

type Patch = Extract<OperationResult, { patches: unknown }>["patches"][number];

function freshEngine(s: SystemSnapshot): Engine {
  const r = parseSnapshot(s);
  if (!r.ok) throw new Error(`the snapshot does not load:\n${formatIssues(r.issues)}`);
  return createEngine(r.value);
}

/** Requests for this snapshot: the generated ones plus each card (and a PIN) at each device at a few instants. */
function requestsFor(s: SystemSnapshot, generated: readonly unknown[]): unknown[] {
  const out = [...generated];
  const holders = s.holders.length > 8 ? [...s.holders.slice(0, 4), ...s.holders.slice(-4)] : s.holders;
  const cards = holders.flatMap((h) =>
    h.credentials.filter((c) => c.credentialNumber !== null && c.types.includes("card")),
  );
  const pins = holders.flatMap((h) => [h.pin, h.duressPin]).filter((p): p is string => p !== null);
  const mobiles = holders.flatMap((h) => h.credentials.filter((c) => !c.types.includes("card")));
  for (const d of s.devices.slice(0, 5))
    for (const at of AT) {
      for (const c of cards)
        out.push({
          deviceId: d.id,
          at,
          credential: { credentialNumber: c.credentialNumber, facilityCode: c.facilityCode },
        });
      for (const pin of pins) out.push({ deviceId: d.id, at, pin });
      for (const c of mobiles)
        out.push({
          deviceId: d.id,
          at,
          credential: { credentialId: c.id, mobile: c.types.includes("touch") ? "touch" : "token" },
        });
    }
  return out;
}

/** Fields of a thrown QueryError or the answer, so that both sides compare alike. */
function answer<T>(f: () => T): T | { thrown: string } {
  try {
    return f();
  } catch (e) {
    return { thrown: (e as Error).message };
  }
}

/** Compares `engine` with a fresh compile of its snapshot; returns how many answers it compared. */
function assertSame(engine: Engine, requests: readonly unknown[], what: string): number {
  const s = engine.snapshot;
  const fresh = freshEngine(s);
  let compared = 0;
  for (const r of requestsFor(s, requests)) {
    expect({ ...engine.decide(r) }, `${what}: decision for ${JSON.stringify(r)}`).toStrictEqual({ ...fresh.decide(r) });
    compared++;
  }
  const holderIds =
    s.holders.length > 6
      ? [...s.holders.slice(0, 3), ...s.holders.slice(-3)].map((h) => h.id)
      : s.holders.map((h) => h.id);
  const scopes: (string | undefined)[] = [undefined, ...s.cloudNodes.slice(0, 1).map((n) => n.id)];
  for (const at of AT) {
    for (const cloudNodeId of scopes) {
      const options = cloudNodeId === undefined ? { at } : { at, cloudNodeId };
      expect(
        answer(() => engine.rsop(holderIds, options)),
        `${what}: RSOP at ${at} ${cloudNodeId ?? ""}`,
      ).toStrictEqual(answer(() => fresh.rsop(holderIds, options)));
      compared++;
    }
    for (const d of s.devices.slice(0, 6)) {
      expect(
        answer(() => engine.whoCanAccess(d.id, { at })),
        `${what}: who can access ${d.id}`,
      ).toStrictEqual(answer(() => fresh.whoCanAccess(d.id, { at })));
      compared++;
    }
    for (const fg of s.floorGroups.slice(0, 3)) {
      expect(
        answer(() => engine.whoCanAccessFloorGroup(fg.id, { at })),
        `${what}: who can access ${fg.id}`,
      ).toStrictEqual(answer(() => fresh.whoCanAccessFloorGroup(fg.id, { at })));
      compared++;
    }
  }
  for (const h of holderIds.slice(0, 3))
    for (const d of s.devices.slice(0, 3)) {
      expect(
        answer(() => engine.accessWindows(h, d.id, PERIOD)),
        `${what}: access windows of ${h} at ${d.id}`,
      ).toStrictEqual(answer(() => fresh.accessWindows(h, d.id, PERIOD)));
      compared++;
    }
  return compared;
}

const stepArb = fc.oneof(
  { weight: 6, arbitrary: operationSpecArb.map((s) => [s]) },
  { weight: 1, arbitrary: fc.array(operationSpecArb, { minLength: 2, maxLength: 4 }) },
);

test(
  "an engine updated by patches equals a fresh compile after every change, after undo and on a replica",
  () => {
    const counts = { updates: 0, incremental: 0, undos: 0, replays: 0, compared: 0 };
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 6 }),
        fc.array(stepArb, { minLength: 5, maxLength: 40 }),
        fc.nat(),
        ({ snapshot: input, requests }, steps, seed) => {
          const made = createLiveSystem(input, { newId: seededIds(seed) });
          const replica = createLiveSystem(input);
          if (!made.ok || !replica.ok) throw new Error("generated snapshot refused");
          const live = made.value;
          // An engine of its own, moved only by update (the live system's engine is checked alongside).
          const engine = createEngine(live.snapshot);
          for (const specs of steps) {
            const ops: Operation[] = specs.map((spec: OperationSpec) => resolveOperation(live.snapshot, spec));
            const result = ops.length > 1 ? live.apply(ops) : live.apply(ops[0]!);
            if (!result.ok) continue;
            const results: OperationResult[] = "results" in result ? [...result.results] : [result as OperationResult];
            const writes = results.filter((r): r is Extract<OperationResult, { patches: unknown }> => "patches" in r);
            if (writes.length === 0) continue;
            const what = JSON.stringify(ops);
            const patches: Patch[] = writes.flatMap((w) => [...w.patches]);
            const before = engine.snapshot;
            const compiledBefore = engine.compiled_;
            engine.update(live.snapshot, patches);
            counts.updates++;
            if (engine.compiled_ === compiledBefore) counts.incremental++;
            expect(engine.snapshot).toBe(live.snapshot);
            counts.compared += assertSame(engine, requests, what);
            counts.compared += assertSame(live.engine, requests, `${what} (live engine)`);

            // Undo by inverse patches, last write first; then redo.
            const inverse: Patch[] = [...writes].reverse().flatMap((w) => [...w.inversePatches]);
            const undone = applySnapshotPatches(live.snapshot, inverse);
            engine.update(undone, inverse);
            counts.undos++;
            // Its elements exactly; a removed one comes back at the end of its list (L21).
            expect(inKeyOrder(engine.snapshot)).toStrictEqual(inKeyOrder(before));
            counts.compared += assertSame(engine, requests, `undo of ${what}`);
            engine.update(live.snapshot, patches);
            counts.compared += assertSame(engine, requests, `redo of ${what}`);

            // Replay on a replica.
            for (const w of writes) {
              const r = replica.value.applyPatches(w.patches);
              if (!r.ok) throw new Error(`replica refused the patches of ${what}:\n${formatIssues(r.issues)}`);
            }
            counts.replays++;
            counts.compared += assertSame(replica.value.engine, requests, `replay of ${what}`);
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
    // RSOP_PROPERTY_VERBOSE=1 prints what the property compared.
    if (process.env.RSOP_PROPERTY_VERBOSE === "1")
      process.stderr.write(`incremental property: ${NUM_RUNS} runs, ${JSON.stringify(counts)}\n`);
    expect(counts.updates).toBeGreaterThan(NUM_RUNS);
    // Most changes take the incremental path (node, device and floor-group changes recompile everything).
    expect(counts.incremental).toBeGreaterThan(counts.updates / 2);
    expect(counts.compared).toBeGreaterThan(counts.updates * 10);
  },
  TIMEOUT,
);
