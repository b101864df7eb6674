// diffAccess against what the engines answer on their own: for generated snapshots changed by
// generated operations, the diff of A against B lists exactly the holder × door pairs whose allowed
// time (the union of accessWindows) differs, and A's allowed time plus gained minus lost is B's;
// floor groups agree with whoCanAccessFloorGroup inside every gained and lost interval. And
// preview(ops) is the diff of the snapshot before and after apply(ops).
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { expect, test } from "vitest";
import { type AccessDiff, type Engine, createEngine, diffAccess } from "../../src/evaluate/index.js";
import { type Operation, createLiveSystem, seededIds } from "../../src/live/index.js";
import {
  type OperationSpec,
  operationSpecArb,
  resolveOperation,
  snapshotAndRequestsArb,
} from "../arbitraries/index.js";

const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 60
    : Math.max(60, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 10));
/**
 * The suite's run uses a fixed seed: with 60 runs, the counts asserted below (changes that change
 * access, previews whose operations are accepted) can fall short by chance, as a random seed once
 * showed (12 accepted for "more than 12"). Hunts (RSOP_PROPERTY_RUNS) draw a fresh seed;
 * RSOP_PROPERTY_SEED=N replays one.
 */
const SEED =
  process.env.RSOP_PROPERTY_SEED !== undefined
    ? Number(process.env.RSOP_PROPERTY_SEED)
    : process.env.RSOP_PROPERTY_RUNS === undefined
      ? 1
      : undefined;
const RUNS = { numRuns: NUM_RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) };
const TIMEOUT = 120_000 + NUM_RUNS * 200;
/**
 * Counterexamples of earlier hunts, run first every time: a rule that changes which rule decides the
 * scan at an elevator reader takes away a floor group it does not name, and a floor group moved to
 * another reader gives its old reader's other floor group to a holder (docs/semantics.md X4).
 */
const REGRESSIONS = JSON.parse(readFileSync(new URL("./diffRegressions.json", import.meta.url), "utf8")) as never[];
const DAY = 86_400_000;

type Spans = [number, number][];

/** A period: an ordinary stretch of 2020–2030, or a week around a DST change (US, EU). */
const periodArb = fc
  .oneof(
    fc.record({
      from: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2029, 11, 1) }),
      days: fc.integer({ min: 1, max: 7 }),
    }),
    fc.constantFrom(
      { from: Date.UTC(2026, 2, 5, 7), days: 7 },
      { from: Date.UTC(2026, 9, 27, 22), days: 7 },
      { from: Date.UTC(2026, 10, 1), days: 3 },
    ),
  )
  .map(({ from, days }) => ({ from, to: from + days * DAY }));

function union(spans: Spans): Spans {
  const out: Spans = [];
  for (const [s, e] of [...spans].sort((a, b) => a[0] - b[0])) {
    const last = out.at(-1);
    if (last !== undefined && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

function minus(a: Spans, b: Spans): Spans {
  let out = union(a);
  for (const [bs, be] of b)
    out = out.flatMap(
      ([s, e]): Spans =>
        be <= s || e <= bs
          ? [[s, e]]
          : (
              [
                [s, Math.min(e, bs)],
                [Math.max(s, be), e],
              ] as Spans
            ).filter(([x, y]) => x < y),
    );
  return out;
}

function allowedTime(engine: Engine, holderId: string, deviceId: string, p: { from: number; to: number }): Spans {
  const s = engine.snapshot;
  if (!s.holders.some((h) => h.id === holderId) || !s.devices.some((d) => d.id === deviceId)) return [];
  return union(
    engine.accessWindows(holderId, deviceId, p).windows.map((w) => [Date.parse(w.start), Date.parse(w.end)]),
  );
}

const ms = (spans: readonly { start: string; end: string }[]): Spans =>
  spans.map((x) => [Date.parse(x.start), Date.parse(x.end)]);

const ELEVATOR = new Set(["elevatorReader", "additionalElevatorReader", "floorRelay"]);

/** Checks a diff against the engines' own answers. */
function checkDiff(a: Engine, b: Engine, diff: AccessDiff, p: { from: number; to: number }): number {
  const holders = [...new Set([...a.snapshot.holders, ...b.snapshot.holders].map((h) => h.id))];
  const doors = [
    ...new Set([...a.snapshot.devices, ...b.snapshot.devices].filter((d) => !ELEVATOR.has(d.type)).map((d) => d.id)),
  ];
  const byPair = new Map(
    diff.changes.filter((c) => c.deviceId !== undefined).map((c) => [`${c.holderId} ${c.deviceId}`, c]),
  );
  let changed = 0;
  for (const h of holders)
    for (const d of doors) {
      const ta = allowedTime(a, h, d, p);
      const tb = allowedTime(b, h, d, p);
      const change = byPair.get(`${h} ${d}`);
      const same = JSON.stringify(ta) === JSON.stringify(tb);
      if (same) {
        expect(change, `${h} at ${d}: no change in allowed time, yet the diff lists one`).toBeUndefined();
        continue;
      }
      changed++;
      expect(
        change,
        `${h} at ${d}: allowed time differs (${JSON.stringify(ta)} → ${JSON.stringify(tb)}), the diff lists nothing`,
      ).toBeDefined();
      const gained = ms(change!.gained);
      const lost = ms(change!.lost);
      expect(union(minus([...ta, ...gained], lost)), `${h} at ${d}: A + gained − lost is B`).toEqual(tb);
      expect(gained.concat(lost).every(([s, e]) => s < e && s >= p.from && e <= p.to)).toBe(true);
      expect(minus(gained, tb), "gained time is allowed after").toEqual([]);
      expect(minus(lost, ta), "lost time was allowed before").toEqual([]);
      expect(change!.rulesBefore.length + change!.rulesAfter.length).toBeGreaterThan(0);
    }
  // Floor groups: inside every gained interval the holder reaches it after and not before; lost, the reverse.
  for (const c of diff.changes) {
    if (c.floorGroupId === undefined) continue;
    changed++;
    const reaches = (e: Engine, at: number) =>
      e.snapshot.floorGroups.some((f) => f.id === c.floorGroupId) &&
      e.whoCanAccessFloorGroup(c.floorGroupId!, { at }).holders.some((x) => x.holderId === c.holderId);
    for (const [s, e] of ms(c.gained))
      for (const at of [s, Math.floor((s + e) / 2), e - 1])
        expect([reaches(a, at), reaches(b, at)]).toEqual([false, true]);
    for (const [s, e] of ms(c.lost))
      for (const at of [s, Math.floor((s + e) / 2), e - 1])
        expect([reaches(a, at), reaches(b, at)]).toEqual([true, false]);
  }
  // And at instants through the period, for every holder × floor group: reached after and not
  // before exactly inside gained time, the reverse exactly inside lost time (a pair the diff missed
  // shows up here as time it should have listed).
  const floorGroups = [...new Set([...a.snapshot.floorGroups, ...b.snapshot.floorGroups].map((f) => f.id))];
  const reachers = (e: Engine, fg: string, at: number) =>
    e.snapshot.floorGroups.some((f) => f.id === fg)
      ? new Set(e.whoCanAccessFloorGroup(fg, { at }).holders.map((x) => x.holderId))
      : new Set<string>();
  for (const fg of floorGroups)
    for (let at = p.from + 17 * 60_000; at < p.to; at += 3 * 3_600_000) {
      const ra = reachers(a, fg, at);
      const rb = reachers(b, fg, at);
      for (const h of holders) {
        const c = diff.changes.find((x) => x.holderId === h && x.floorGroupId === fg);
        const inside = (spans: Spans) => spans.some(([s, e]) => s <= at && at < e);
        expect(
          [ra.has(h) && !rb.has(h), !ra.has(h) && rb.has(h)],
          `${h} at floor group ${fg}, ${new Date(at).toISOString()}`,
        ).toEqual([c !== undefined && inside(ms(c.lost)), c !== undefined && inside(ms(c.gained))]);
      }
    }
  if (changed === 0) expect(diff.changes).toEqual([]);
  return changed;
}

test(
  "diffAccess(A, B) is empty iff every pair's allowed time is equal; A's allowed time + gained − lost is B's",
  () => {
    let nonEmpty = 0;
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 1 }),
        fc.array(operationSpecArb, { minLength: 1, maxLength: 6 }),
        periodArb,
        ({ snapshot: input }, specs, p) => {
          const made = createLiveSystem(input, { newId: seededIds(1) });
          if (!made.ok) throw new Error("generated snapshot refused");
          const live = made.value;
          const before = createEngine(live.snapshot);
          for (const spec of specs) live.apply(resolveOperation(live.snapshot, spec));
          const b = createEngine(live.snapshot);
          const diff = diffAccess(before, b, p);
          expect(diff.from).toBe(new Date(p.from).toISOString());
          if (checkDiff(before, b, diff, p) > 0) nonEmpty++;
          // Against itself: nothing.
          expect(diffAccess(b, b, p).changes).toEqual([]);
        },
      ),
      { ...RUNS, examples: REGRESSIONS },
    );
    // The generated changes do change access, in a good share of runs.
    expect(nonEmpty).toBeGreaterThan(NUM_RUNS / 10);
  },
  TIMEOUT,
);

test(
  "preview(ops) equals the diff of the snapshot before and after apply(ops), and changes nothing",
  () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 1 }),
        fc.array(operationSpecArb, { minLength: 1, maxLength: 4 }),
        periodArb,
        fc.nat(),
        ({ snapshot: input }, specs, p, seed) => {
          const made = createLiveSystem(input, { newId: seededIds(seed), now: () => Date.UTC(2026, 3, 15) });
          if (!made.ok) throw new Error("generated snapshot refused");
          const live = made.value;
          const snapshot = live.snapshot;
          const engine = live.engine;
          const ops: Operation[] = specs.map((spec: OperationSpec) => resolveOperation(snapshot, spec));
          const preview = live.preview(ops, p);
          expect(live.snapshot, "preview changes nothing").toBe(snapshot);
          expect(live.engine).toBe(engine);
          const applied = live.apply(ops);
          expect(applied.ok).toBe(preview.ok);
          if (!preview.ok || !applied.ok) {
            if (!preview.ok && !applied.ok) expect(preview.index).toBe(applied.index);
            return;
          }
          accepted++;
          expect(preview.results).toEqual(applied.results);
          expect(preview.diff).toEqual(diffAccess(createEngine(snapshot), createEngine(live.snapshot), p));
        },
      ),
      RUNS,
    );
    expect(accepted).toBeGreaterThan(NUM_RUNS / 5);
  },
  TIMEOUT,
);
