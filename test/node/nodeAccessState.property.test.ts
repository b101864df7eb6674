// The node's stateful decisions (SPEC §15, docs/semantics.md AB1–AB7, UF3): for generated snapshots
// with areas (anti-passback hard or soft, occupancy limits) and doors waiting for their first person
// in, random scans, resets, forgives, deletions and restarts, the node's deciding core (the scan
// protocol over its NodeAccessState, its data file, its reconciling of resets) answers every scan
// with the pure decision `decide(request, undefined, stateBefore)` of a fresh engine of the node's
// snapshot, and its state afterwards is `record` applied to a copy of the state before. Resets follow
// a plain model: each area's `lastReset`/`forgiven[h]` compared with the snapshot before the change.
import { join } from "node:path";
import fc from "fast-check";
import { type Patch, enablePatches, produceWithPatches } from "immer";
import { afterAll, describe, expect, test } from "vitest";
import { AccessState, type Engine, createEngine } from "../../src/evaluate/index.js";
import { type SystemSnapshot, type SystemSnapshotInput, parseInstant } from "../../src/model/index.js";
import { ContactState } from "../../src/node/contact.js";
import { EVERYTHING, type NodeAccessState, reconcile, scopeOf } from "../../src/node/nodeAccess.js";
import { NodeStore } from "../../src/node/nodeStore.js";
import { ScanAnswerer, ScanLines } from "../../src/node/scanProtocol.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { NUM_RUNS, REPLAY, TIMEOUT, parseOrFail, plain } from "../property/support.js";

enablePatches();
afterAll(removeTempDirs);

/** One area over the devices of one of the snapshot's nodes, by picks into its device list. */
interface AreaSpec {
  readonly nodePick: number;
  readonly entryPicks: readonly number[];
  readonly exitPicks: readonly number[];
  readonly antiPassback: { readonly mode: "hard" | "soft"; readonly resetSeconds: number } | null;
  readonly occupancyLimit: number | null;
}

const areaSpecArb: fc.Arbitrary<AreaSpec> = fc.record({
  nodePick: fc.nat(),
  entryPicks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
  exitPicks: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }),
  antiPassback: fc.option(
    fc.record({
      mode: fc.constantFrom("hard" as const, "soft" as const),
      resetSeconds: fc.constantFrom(0, 1, 60, 3600),
    }),
  ),
  occupancyLimit: fc.option(fc.constantFrom(1, 1, 2, 3)),
});

/** What is added to a generated snapshot: areas, doors waiting for a first person in, unlock rules. */
interface Extras {
  readonly areas: readonly AreaSpec[];
  readonly autoOpenPicks: readonly number[];
  readonly unlockPicks: readonly number[];
}

const extrasArb: fc.Arbitrary<Extras> = fc.record({
  areas: fc.array(areaSpecArb, { minLength: 1, maxLength: 3 }),
  autoOpenPicks: fc.array(fc.nat(), { maxLength: 3 }),
  unlockPicks: fc.array(fc.nat(), { maxLength: 3 }),
});

type AnyRecord = Record<string, any>;

/**
 * Where the generated requests are allowed without state: each allowed request's device and the other
 * devices of its deciding rule on the same node (the same holder is likely allowed there too), so
 * that areas built on them see holders come in, go out, and be refused for anti-passback or occupancy.
 */
function allowedPlaces(input: SystemSnapshotInput, requests: readonly unknown[]): string[][] {
  const engine = createEngine(parseOrFail(input));
  const snapshot = engine.snapshot;
  const nodeOf = new Map(snapshot.devices.map((d) => [d.id, d.cloudNode]));
  const places: string[][] = [];
  for (const r of requests) {
    if (!isObject(r)) continue;
    const d = engine.decide({ ...r, node: { online: true } });
    if (d.outcome !== "allowed" || d.activeRuleId === null) continue;
    const device = r.deviceId as string;
    const rule = snapshot.rules.find((x) => x.id === d.activeRuleId);
    const others = (rule?.devices ?? []).filter((x) => x !== device && nodeOf.get(x) === nodeOf.get(device));
    places.push([device, ...others]);
  }
  return places;
}

/** The generated snapshot with the extras: areas valid by construction (AB1's checks). */
function withExtras(input: SystemSnapshotInput, requests: readonly unknown[], extras: Extras): SystemSnapshotInput {
  const s = structuredClone(input) as AnyRecord;
  const devices = (s.devices ?? []) as AnyRecord[];
  const nodes = [...new Set(devices.map((d) => d.cloudNode as string))];
  const places = allowedPlaces(input, requests);
  const areas: AnyRecord[] = [];
  extras.areas.forEach((a, i) => {
    if (nodes.length === 0) return;
    // Around a place where a request is allowed when there is one, else on any node's devices.
    const node = nodes[a.nodePick % nodes.length];
    const place = places.length > 0 ? places[a.nodePick % places.length]! : null;
    const own = place ?? devices.filter((d) => d.cloudNode === node).map((d) => d.id as string);
    const entries = [
      ...new Set([...(place !== null ? [place[0]!] : []), ...a.entryPicks.map((p) => own[p % own.length]!)]),
    ];
    const exits = [...new Set(a.exitPicks.map((p) => own[p % own.length]!))].filter((d) => !entries.includes(d));
    areas.push({
      id: `area-${i}`,
      name: `Area ${i}`,
      entries,
      exits,
      antiPassback: a.antiPassback,
      occupancyLimit: a.occupancyLimit,
    });
  });
  s.areas = areas;
  for (const p of extras.autoOpenPicks)
    if (devices.length > 0) devices[p % devices.length]!.autoOpenAfterFirstAllow = true;
  const doorRules = ((s.rules ?? []) as AnyRecord[]).filter((r) => r.type === "door" && r.allow === true);
  const unlock = new Set(extras.unlockPicks.map((p) => doorRules[p % doorRules.length]).filter((r) => r !== undefined));
  for (const r of unlock) s.rules.push({ ...r, id: `${r.id}-unlock`, action: "unlock" });
  return s as SystemSnapshotInput;
}

/** A scan: generated request `ref`, possibly moved to an area device and later by `shiftMs`. */
interface ScanStep {
  readonly kind: "scan";
  readonly ref: number;
  readonly devicePick: number | null;
  readonly shiftMs: number;
}

type Step =
  | ScanStep
  | { readonly kind: "reset"; readonly areaPick: number; readonly value: number | null }
  | { readonly kind: "forgive"; readonly areaPick: number; readonly holderPick: number; readonly value: number | null }
  | { readonly kind: "deleteHolder"; readonly holderPick: number }
  | { readonly kind: "deleteArea"; readonly areaPick: number }
  | { readonly kind: "redownload" }
  | { readonly kind: "restart" };

/** A few instants only, so that a reset or forgive often writes a value it had before (no change). */
const MARKS = ["2026-04-15T14:00:00.000Z", "2026-04-15T15:00:00.000Z", "2026-04-16T09:00:00.000Z"];

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant("scan" as const),
      ref: fc.nat(),
      devicePick: fc.option(fc.nat(), { freq: 3 }),
      shiftMs: fc.constantFrom(0, 0, 1000, 59_000, 60_000, 3_600_000, 86_400_000),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("reset" as const),
      areaPick: fc.nat(),
      value: fc.option(fc.nat({ max: MARKS.length - 1 }), { freq: 5 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("forgive" as const),
      areaPick: fc.nat(),
      holderPick: fc.nat(),
      value: fc.option(fc.nat({ max: MARKS.length - 1 }), { freq: 5 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deleteHolder" as const), holderPick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deleteArea" as const), areaPick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "redownload" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
);

const CLOCK = Date.parse("2026-03-04T17:00:00Z");

/** How often each case came up across the runs: each must, or the property proves little. */
const seen = {
  antiPassback: 0,
  antiPassbackSoft: 0,
  occupancyLimit: 0,
  entered: 0,
  exited: 0,
  firstAllow: 0,
  resetEmptied: 0,
  forgiveLetOut: 0,
  holderDropped: 0,
  areaDropped: 0,
  sameValue: 0,
};
const isObject = (v: unknown): v is AnyRecord => typeof v === "object" && v !== null && !Array.isArray(v);
const copy = (s: AccessState) => AccessState.fromJSON(s.toJSON());

/** The node's deciding core over a data file, beside the plain reading of SPEC §15. */
class Run {
  snapshot: SystemSnapshot;
  readonly source: { engine: Engine; state: NodeAccessState };
  readonly contact = new ContactState({ now: () => CLOCK });
  readonly answers: string[] = [];
  readonly lines: ScanLines;
  lineNo = 0;
  readonly scans: unknown[];

  constructor(
    snapshot: SystemSnapshot,
    requests: readonly unknown[],
    public store: NodeStore,
    readonly file: string,
  ) {
    this.snapshot = snapshot;
    const state = store.load().access;
    this.source = { engine: createEngine(snapshot), state };
    this.contact.contact(CLOCK);
    this.lines = new ScanLines(new ScanAnswerer(this.source, this.contact), (a) => this.answers.push(a));
    this.scans = requests.map((r) => {
      try {
        const text = JSON.stringify(r);
        return text === undefined ? null : JSON.parse(text);
      } catch {
        return null;
      }
    });
    reconcile(snapshot, state, EVERYTHING);
    store.saveAccess(state.takeChanges());
  }

  get state(): NodeAccessState {
    return this.source.state;
  }

  async step(step: Step): Promise<void> {
    if (step.kind === "scan") this.scan(step);
    else if (step.kind === "redownload") this.redownload();
    else if (step.kind === "restart") await this.restart();
    else this.change(step);
  }

  /** The scan as a line carries it: the generated request, moved, without `node` (N47). */
  built(step: ScanStep): unknown {
    const generated = this.scans[step.ref % this.scans.length];
    if (!isObject(generated)) return generated;
    const { node: _, ...scan } = generated;
    const areaDevices = this.snapshot.areas.flatMap((a) => [...a.entries, ...a.exits]);
    if (step.devicePick !== null && areaDevices.length > 0)
      scan.deviceId = areaDevices[step.devicePick % areaDevices.length];
    const atMs = parseInstant(scan.at);
    if (step.shiftMs > 0 && !Number.isNaN(atMs)) scan.at = new Date(atMs + step.shiftMs).toISOString();
    return scan;
  }

  scan(step: ScanStep): void {
    const built = this.built(step);
    if (built === null) return;
    const text = JSON.stringify(built);
    const scan: unknown = JSON.parse(text);
    const line = ++this.lineNo;
    const before = copy(this.state);
    this.answers.length = 0;
    this.lines.push(new TextEncoder().encode(`${text}\n`));
    // The node stores what the scan changed (with its event, in CloudNode) before the answer leaves.
    this.store.enqueue([], this.state.takeChanges());
    expect(this.answers).toHaveLength(1);
    const answer = JSON.parse(this.answers[0]!) as AnyRecord;
    let req: unknown = scan;
    if (isObject(scan)) {
      const at = Object.hasOwn(scan, "at") ? scan.at : CLOCK;
      req = { ...scan, at, ...(Number.isNaN(parseInstant(at)) ? {} : { node: { online: true } }) };
    }
    // A fresh engine of the node's snapshot, with the state as it was before the scan.
    const fresh = createEngine(this.snapshot);
    const d = plain(fresh.decide(req, undefined, copy(before)));
    const why = `scan ${text}, answer ${this.answers[0]}, state before ${JSON.stringify(before.toJSON())}`;
    if (d.reason === "badRequest") expect(answer, why).toMatchObject({ line, error: { message: "invalid request" } });
    else expect(answer, why).toStrictEqual({ line, ...d });
    const after = copy(before);
    fresh.record(req, d, after);
    expect(this.state.toJSON(), why).toEqual(after.toJSON());
    this.count(d.reason, before, after);
  }

  count(reason: string, before: AccessState, after: AccessState): void {
    if (reason === "antiPassback" || reason === "antiPassbackSoft" || reason === "occupancyLimit") seen[reason]++;
    const b = before.toJSON();
    const a = after.toJSON();
    const pairs = (j: typeof a) =>
      Object.entries(j.areas).flatMap(([area, x]) => Object.keys(x).map((h) => `${area} ${h}`));
    const [was, is] = [new Set(pairs(b)), new Set(pairs(a))];
    if ([...is].some((p) => !was.has(p))) seen.entered++;
    if ([...was].some((p) => !is.has(p))) seen.exited++;
    if (JSON.stringify(a.firstAllow) !== JSON.stringify(b.firstAllow)) seen.firstAllow++;
  }

  /** A write of the service (AB6): the node applies its patches, then reconciles by their scope. */
  change(step: Exclude<Step, ScanStep | { kind: "redownload" } | { kind: "restart" }>): void {
    const previous = this.snapshot;
    // Mostly a holder inside some area (a deletion or a forgive of anyone else changes nothing).
    const exists = new Set(previous.holders.map((h) => h.id));
    const inside = [...new Set(this.state.areaIds().flatMap((a) => [...this.state.inside(a).keys()]))];
    const candidates = inside.filter((h) => exists.has(h) && (step as { holderPick: number }).holderPick % 4 !== 0);
    const [next, patches] = produceWithPatches(previous, (draft) => {
      const areas = draft.areas as AnyRecord[];
      const holders = draft.holders as AnyRecord[];
      const holderAt = (pick: number) =>
        candidates.length > 0
          ? holders.findIndex((h) => h.id === candidates[pick % candidates.length])
          : pick % holders.length;
      if (step.kind === "deleteHolder") {
        if (holders.length > 0) holders.splice(holderAt(step.holderPick), 1);
        return;
      }
      if (areas.length === 0) return;
      const i = step.areaPick % areas.length;
      if (step.kind === "deleteArea") areas.splice(i, 1);
      else if (step.kind === "reset") areas[i]!.lastReset = step.value === null ? null : MARKS[step.value];
      else if (holders.length > 0) {
        const h = holders[holderAt(step.holderPick)]!.id as string;
        const forgiven = { ...(areas[i]!.forgiven ?? {}) };
        if (step.value === null) delete forgiven[h];
        else forgiven[h] = MARKS[step.value];
        areas[i]!.forgiven = forgiven;
      }
    });
    this.snapshot = next;
    this.source.engine = createEngine(next);
    const expected = copy(this.state);
    const occupied = expected.areaIds().length;
    applyByModel(previous, next, expected);
    if (JSON.stringify(expected.toJSON()) !== JSON.stringify(this.state.toJSON())) {
      if (step.kind === "reset") seen.resetEmptied++;
      if (step.kind === "forgive") seen.forgiveLetOut++;
      if (step.kind === "deleteHolder") seen.holderDropped++;
      if (step.kind === "deleteArea" && expected.areaIds().length < occupied) seen.areaDropped++;
    } else if (step.kind === "reset" || step.kind === "forgive") seen.sameValue++;
    reconcile(next, this.state, scopeOf(patches as Patch[]));
    this.store.saveAccess(this.state.takeChanges());
    expect(this.state.toJSON(), `after ${JSON.stringify(step)}`).toEqual(expected.toJSON());
    this.checkApplied();
  }

  /** A whole download of the same snapshot changes nothing: resets go by value, not by event. */
  redownload(): void {
    const before = this.state.toJSON();
    reconcile(this.snapshot, this.state, EVERYTHING);
    expect(this.state.takeChanges()).toEqual([]);
    expect(this.state.toJSON()).toEqual(before);
  }

  /** The data file closed and opened again: the state and the resets applied read back (AB7). */
  async restart(): Promise<void> {
    const before = this.state.toJSON();
    const applied = this.state.applied;
    this.store.close();
    this.store = await NodeStore.open(this.file, IDENTITY);
    this.source.state = this.store.load().access;
    expect(this.state.toJSON()).toEqual(before);
    expect(this.state.applied).toEqual(applied);
    this.redownload();
  }

  /** The resets applied are the snapshot's values, area by area. */
  checkApplied(): void {
    for (const a of this.snapshot.areas) {
      const applied = this.state.applied.get(a.id);
      expect(applied?.lastReset ?? null).toBe(a.lastReset ?? null);
      expect(Object.fromEntries(applied?.forgiven ?? [])).toEqual({ ...(a.forgiven ?? {}) });
    }
    const ids = new Set(this.snapshot.areas.map((a) => a.id));
    for (const id of this.state.applied.keys()) expect(ids.has(id)).toBe(true);
  }
}

/**
 * AB6 read plainly from two consecutive snapshots: a `lastReset` set to a new value empties the
 * area, a `forgiven[h]` with a new value lets h out, an area gone empties, a holder gone leaves all.
 */
function applyByModel(previous: SystemSnapshot, next: SystemSnapshot, state: AccessState): void {
  const before = new Map(previous.areas.map((a) => [a.id, a]));
  for (const a of next.areas) {
    const old = before.get(a.id);
    if (a.lastReset != null && a.lastReset !== old?.lastReset) state.resetArea(a.id);
    for (const [h, at] of Object.entries(a.forgiven ?? {})) if (old?.forgiven?.[h] !== at) state.forgive(a.id, h);
  }
  const areas = new Set(next.areas.map((a) => a.id));
  for (const a of previous.areas) if (!areas.has(a.id)) state.resetArea(a.id);
  const holders = new Set(next.holders.map((h) => h.id));
  for (const h of previous.holders) if (!holders.has(h.id)) for (const a of state.areaIds()) state.exit(a, h.id);
}

const IDENTITY = { service: "http://127.0.0.1:1", systemId: "sys", nodeId: "node" };

/**
 * Scans of the example building: a few of its enabled nurses at the doors of their weekday rule,
 * inside its window, so that nearly every scan is allowed by the rules and the areas built on those
 * doors fill, empty and overflow.
 */
const BUILDING = BUILDING_JSON as AnyRecord;
const WARD_DOORS = (BUILDING.rules as AnyRecord[]).find((r) => r.id === "rule-nurses-day-weekdays")!
  .devices as string[];
const NURSE_CARDS = (BUILDING.holders as AnyRecord[]).flatMap((h) => {
  const c = (h.credentials as AnyRecord[]).find((x) => x.types.includes("card") && x.credentialNumber != null);
  const ok = h.enabled !== false && h.groups.includes("grp-nurses") && h.activeDate == null && h.expireDate == null;
  return ok && c !== undefined ? [{ credentialNumber: c.credentialNumber, facilityCode: c.facilityCode }] : [];
});
/** Monday 2026-04-13, 00:00 at Chicago (CDT). */
const MONDAY = Date.parse("2026-04-13T00:00:00-05:00");

const buildingCaseArb: fc.Arbitrary<{ snapshot: SystemSnapshotInput; requests: unknown[] }> = fc
  .tuple(
    fc.uniqueArray(fc.nat({ max: NURSE_CARDS.length - 1 }), { minLength: 2, maxLength: 5 }),
    fc.array(
      fc.record({
        holder: fc.nat(),
        device: fc.nat(),
        day: fc.nat({ max: 4 }),
        // 06:30–17:30: a scan moved by up to an hour stays inside the nurses' 06:30–19:30 window.
        minute: fc.integer({ min: 6 * 60 + 30, max: 17 * 60 + 30 }),
      }),
      { minLength: 2, maxLength: 10 },
    ),
  )
  .map(([pool, scans]) => ({
    snapshot: BUILDING_JSON as SystemSnapshotInput,
    requests: scans.map((x) => ({
      deviceId: WARD_DOORS[x.device % WARD_DOORS.length],
      at: new Date(MONDAY + x.day * 86_400_000 + x.minute * 60_000).toISOString(),
      credential: NURSE_CARDS[pool[x.holder % pool.length]!],
    })),
  }));

/** The property over cases of `cases`, each run on its own data file in `dir`. */
async function property(
  cases: fc.Arbitrary<{ snapshot: SystemSnapshotInput; requests: readonly unknown[] }>,
  runs: number,
): Promise<void> {
  const dir = tempDir();
  let n = 0;
  await fc.assert(
    fc.asyncProperty(
      cases,
      extrasArb,
      fc.array(stepArb, { minLength: 1, maxLength: 30 }),
      async ({ snapshot: input, requests }, extras, steps) => {
        const file = join(dir, `node-${++n}.db`);
        const store = await NodeStore.open(file, IDENTITY);
        const run = new Run(parseOrFail(withExtras(input, requests, extras)), requests, store, file);
        try {
          for (const step of steps) await run.step(step);
          // And read back at the end of every run: each change must have reached the file (AB7).
          await run.restart();
        } finally {
          run.store.close();
        }
      },
    ),
    { numRuns: runs, ...REPLAY },
  );
}

describe("a node's stateful decisions (differential against decide and record with the state before each scan)", () => {
  test(
    "every answer is decide with the state before; the state after is record on a copy; resets by value; all of it read back from the data file",
    async () => {
      await property(snapshotAndRequestsArb({ minRequests: 1, maxRequests: 8 }), NUM_RUNS);
      // The example building's holders at its doors, where most scans are allowed.
      await property(buildingCaseArb, Math.ceil(NUM_RUNS / 3));
      // Every case must come up: a property that never denies for anti-passback checks nothing of it.
      if (NUM_RUNS >= 100)
        for (const [what, count] of Object.entries(seen))
          expect(count, `${what} in ${JSON.stringify(seen)}`).toBeGreaterThan(0);
    },
    TIMEOUT * 2,
  );
});
