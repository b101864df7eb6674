// Scenario (issue #38): decisions per second with calendars and areas in use against the plain
// building, in one run, with the same request pool, at each size ctx.sizes names (L the one the goal
// is about: (b) and (c) at ≥ 0.9× of (a)).
//
// From the size's fixture (bench/fixtures.ts, its output unchanged) a second snapshot "with door
// states" is derived (doorStateBuilding below): two holiday calendars (20 dates + 10 yearly dates
// each), a third of the rules following one with `exclude` and 1 in 100 with `only`, the cloud nodes
// at threat level 0 with a quarter of the allow rules carrying `maxThreatLevel` 1–3, one unlock rule
// per site (a lobby door waiting for its first person in), and areas over about two thirds of each
// site's doors (a perimeter area, then rooms of ~10 readers: primary readers lead in, exit readers
// out; hard and soft anti-passback with and without a reset, occupancy limits). An AccessState is
// filled with a few thousand holders inside (at L), taken from the pool's own allowed entries, so a
// share of the pool's scans meet their holder inside and the limited rooms are full.
//
// (a) baseline: `engine.decide(request, out)` on the plain fixture;
// (b) `engine.decide(request, out)` on the door-state snapshot (calendars, thresholds; no state);
// (c0) diagnosis: (c) with an empty AccessState (the area walk without a holder found or counted);
// (c) `engine.decide(request, out, state)` with the state (areas consulted; the state never moves);
// (d) (c) and `engine.record(request, decision, state)` after each scan, as a node does (on a copy of
//     the state, which moves as the pool cycles).
// Rounds are interleaved (a b c0 c d, b c0 c d a, …) so that a change in the machine's load reaches every
// side alike; each side's ops/s is its median round, each ratio the median of the rounds' ratios to (a).
// No duration is asserted: the rows and the printed log carry the numbers and the ratios.
//
//   npm run bench -- --only doorStates [--quick] [--sizes L] [--out bench/results/doorStates.json]
import {
  AccessState,
  type Decision,
  type Engine,
  type SystemSnapshotInput,
  createEngine,
  parseSnapshot,
} from "../src/index.js";
import { type BatchResult, type Row, batchRow, fmtOps, log, median, sink, timeBatches } from "./benchUtil.js";
import { type Fixture, type SizeName, fixture, mulberry32 } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

const SECTION = "doorStates";
/** Decisions per tinybench sample (as bench/decide.bench.ts). */
const BATCH = 1_000;
/** Holders put inside areas before timing, per size. */
const INSIDE: Readonly<Record<SizeName, number>> = { S: 300, M: 1_500, L: 5_000 };
const HOUR_MS = 3_600_000;

type Json = Record<string, unknown>;

/** An area as this scenario builds it (the snapshot's shape, plus its cap when filling the state). */
interface AreaDef {
  readonly id: string;
  readonly name: string;
  readonly entries: string[];
  readonly exits: string[];
  readonly antiPassback: { mode: "hard" | "soft"; resetSeconds: number } | null;
  readonly occupancyLimit: number | null;
}

/** The derived snapshot and what filling the state needs to know of it. */
interface DoorStateBuilding {
  readonly input: SystemSnapshotInput;
  readonly areas: AreaDef[];
  /** Per entry device id: the areas it leads into. */
  readonly entryAreas: Map<string, AreaDef[]>;
  readonly counts: { calendars: number; exclude: number; only: number; maxThreat: number; unlock: number };
}

// Two holiday calendars in the pool's year: public holidays and a plant's shutdown days.
const CALENDARS: readonly Json[] = [
  {
    id: "cal-holidays-a",
    name: "Public holidays",
    dates: [
      "2026-01-01",
      "2026-01-19",
      "2026-02-16",
      "2026-04-03",
      "2026-04-06",
      "2026-05-25",
      "2026-06-19",
      "2026-07-03",
      "2026-09-07",
      "2026-10-12",
      "2026-11-11",
      "2026-11-26",
      "2026-11-27",
      "2026-12-24",
      "2026-12-25",
      "2026-12-31",
      "2027-01-01",
      "2027-01-18",
      "2027-02-15",
      "2027-05-31",
    ],
    recurring: [
      { month: 1, day: 1 },
      { month: 5, day: 1 },
      { month: 7, day: 4 },
      { month: 10, day: 3 },
      { month: 11, day: 1 },
      { month: 11, day: 11 },
      { month: 12, day: 24 },
      { month: 12, day: 25 },
      { month: 12, day: 26 },
      { month: 12, day: 31 },
    ],
  },
  {
    id: "cal-holidays-b",
    name: "Plant shutdown days",
    dates: Array.from({ length: 20 }, (_, i) => {
      const day = 10 + i * 17; // every 17 days from January 11
      return new Date(Date.UTC(2026, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
    }),
    recurring: [
      { month: 1, day: 2 },
      { month: 3, day: 17 },
      { month: 4, day: 30 },
      { month: 6, day: 24 },
      { month: 8, day: 15 },
      { month: 8, day: 16 },
      { month: 10, day: 31 },
      { month: 12, day: 27 },
      { month: 12, day: 28 },
      { month: 12, day: 29 },
    ],
  },
];

/** Calendars, thresholds and unlock rules on the fixture's rules (mutates `rules`, `devices`). */
function decorateRules(snap: Json, f: Fixture): DoorStateBuilding["counts"] {
  const rules = snap.rules as Json[];
  const counts = { calendars: CALENDARS.length, exclude: 0, only: 0, maxThreat: 0, unlock: 0 };
  rules.forEach((r, i) => {
    if (i % 100 === 50) {
      r.calendar = { id: "cal-holidays-b", mode: "only" };
      counts.only++;
    } else if (i % 3 === 0) {
      r.calendar = { id: i % 2 === 0 ? "cal-holidays-a" : "cal-holidays-b", mode: "exclude" };
      counts.exclude++;
    }
    if (r.allow !== false && i % 4 === 1) {
      r.maxThreatLevel = 1 + (i % 3);
      counts.maxThreat++;
    }
  });
  for (const n of snap.cloudNodes as Json[]) n.threatLevel = 0;
  // One lobby per site held unlocked in office hours once the first person is in (UF1–UF3).
  const devices = new Map((snap.devices as Json[]).map((d) => [d.id as string, d]));
  f.meta.sites.forEach((site, s) => {
    const lobby = site.doors.filter((d) => devices.get(d)?.type === "primaryReader").slice(0, 2);
    if (lobby.length === 0 || site.groups.length === 0) return;
    devices.get(lobby[0]!)!.autoOpenAfterFirstAllow = true;
    rules.push({
      id: `rule-unlock-${String(s + 1).padStart(2, "0")}`,
      name: `Site ${s + 1} lobby unlocked`,
      type: "door",
      action: "unlock",
      groupId: `grp-${String(site.groups[0]! + 1).padStart(4, "0")}`,
      devices: lobby,
      startTime: "08:00:00",
      stopTime: "18:00:00",
      recurring: ["Mon", "Tue", "Wed", "Thu", "Fri"],
      allow: true,
      startDate: null,
      endDate: null,
      calendar: { id: "cal-holidays-a", mode: "exclude" },
    });
    counts.unlock++;
  });
  return counts;
}

/** What each room area refuses, in turn: the mix of anti-passback modes and occupancy limits. */
const ROOM_KINDS: readonly Pick<AreaDef, "antiPassback" | "occupancyLimit">[] = [
  { antiPassback: { mode: "hard", resetSeconds: 8 * 3600 }, occupancyLimit: null },
  { antiPassback: { mode: "soft", resetSeconds: 3600 }, occupancyLimit: null },
  { antiPassback: null, occupancyLimit: 25 },
  { antiPassback: { mode: "hard", resetSeconds: 0 }, occupancyLimit: 40 },
  { antiPassback: { mode: "soft", resetSeconds: 0 }, occupancyLimit: null },
  { antiPassback: null, occupancyLimit: null },
];

/**
 * Areas over each site's doors in generation order (the fixture's own areas of ~10 readers): the
 * first 6 readers a perimeter area, then rooms of 10, two rooms of every three covered. Primary
 * readers lead in, exit readers (additionalReader) out.
 */
function buildAreas(snap: Json, f: Fixture): AreaDef[] {
  const type = new Map((snap.devices as Json[]).map((d) => [d.id as string, d.type as string]));
  const areas: AreaDef[] = [];
  let kind = 0;
  f.meta.sites.forEach((site, s) => {
    const chunks: string[][] = [site.doors.slice(0, 6)];
    for (let i = 6; i < site.doors.length; i += 10) chunks.push(site.doors.slice(i, i + 10));
    chunks.forEach((chunk, c) => {
      if (c > 0 && c % 3 === 2) return;
      const entries = chunk.filter((d) => type.get(d) === "primaryReader");
      const exits = chunk.filter((d) => type.get(d) === "additionalReader");
      if (entries.length === 0) return;
      const id = `area-${String(s + 1).padStart(2, "0")}-${String(c).padStart(3, "0")}`;
      const perimeter = c === 0;
      const rule = perimeter
        ? {
            antiPassback: { mode: "soft" as const, resetSeconds: 12 * 3600 },
            occupancyLimit: Math.max(50, Math.round(f.spec.holders / f.meta.sites.length / 4)),
          }
        : ROOM_KINDS[kind++ % ROOM_KINDS.length]!;
      areas.push({
        id,
        name: perimeter ? `Site ${s + 1} building` : `Site ${s + 1} room ${c}`,
        entries,
        exits,
        ...rule,
      });
    });
  });
  return areas;
}

/** The fixture's building with calendars, thresholds, unlock rules and areas (the fixture is untouched). */
function doorStateBuilding(f: Fixture): DoorStateBuilding {
  const snap = JSON.parse(f.json) as Json;
  snap.calendars = CALENDARS.map((c) => structuredClone(c));
  const counts = decorateRules(snap, f);
  const areas = buildAreas(snap, f);
  snap.areas = areas;
  const entryAreas = new Map<string, AreaDef[]>();
  for (const a of areas)
    for (const d of a.entries) {
      const list = entryAreas.get(d) ?? [];
      list.push(a);
      entryAreas.set(d, list);
    }
  return { input: snap as unknown as SystemSnapshotInput, areas, entryAreas, counts };
}

function compile(size: SizeName, input: SystemSnapshotInput): Engine {
  const parsed = parseSnapshot(input);
  if (!parsed.ok)
    throw new Error(
      `door-state ${size} building is invalid: ${parsed.issues
        .slice(0, 5)
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
    );
  return createEngine(parsed.value);
}

function instantOf(at: unknown): number {
  return typeof at === "number" ? at : Date.parse(at as string);
}

/**
 * A state with about `target` holders inside, taken from the pool's allowed scans at area entries (as
 * the door-state engine decides them without state), each inside since 0–2 hours before its scan:
 * those scans then meet their holder inside. Every other limited area is filled up to its limit
 * first (full rooms, where the pool has enough holders for them), then every area gets an even share.
 */
function fillState(engine: Engine, b: DoorStateBuilding, pool: readonly unknown[], target: number): AccessState {
  const state = new AccessState();
  const rng = mulberry32(0x0a7e_5ea7);
  const share = Math.max(2, Math.ceil(target / b.areas.length));
  const limited = b.areas.filter((a) => a.occupancyLimit !== null);
  const full = new Set(limited.filter((_, i) => i % 2 === 0));
  const out = engine.decide(pool[0]);
  let inside = 0;
  for (const pass of [0, 1])
    for (let i = 0; i < pool.length && inside < target; i++) {
      const req = pool[i] as { deviceId: string; at: unknown };
      const areas = b.entryAreas.get(req.deviceId);
      if (areas === undefined) continue;
      const a = areas[0]!;
      const cap = pass === 0 ? (full.has(a) ? a.occupancyLimit! : 0) : Math.min(share, a.occupancyLimit ?? share);
      if (state.occupancy(a.id) >= cap) continue;
      const d = engine.decide(req, out);
      if (d.outcome !== "allowed" || d.holderId === null || state.enteredAt(a.id, d.holderId) !== undefined) continue;
      state.enter(a.id, d.holderId, instantOf(req.at) - Math.floor(rng() * 2 * HOUR_MS));
      inside++;
    }
  return state;
}

/** Shares of the pool: allowed decisions and each reason the areas and levels give, for a side's notes. */
function outcomeMix(pool: readonly unknown[], engine: Engine, state?: AccessState): string {
  const out = engine.decide(pool[0]);
  const counts = new Map<string, number>();
  let allowed = 0;
  for (const r of pool) {
    const d = engine.decide(r, out, state);
    if (d.outcome === "allowed") allowed++;
    counts.set(d.reason, (counts.get(d.reason) ?? 0) + 1);
  }
  const pct = (n: number) => `${((100 * n) / pool.length).toFixed(1)}%`;
  const areaReasons = ["antiPassback", "antiPassbackSoft", "occupancyLimit", "threatLevel"]
    .filter((k) => counts.has(k))
    .map((k) => `${k} ${pct(counts.get(k)!)}`);
  return [`allowed ${pct(allowed)}`, ...areaReasons].join(", ");
}

interface Side {
  readonly key: string;
  readonly name: string;
  readonly run: () => void;
  readonly results: BatchResult[];
}

/** A batch function: BATCH scans of `pool`, cycled, through `step`. */
function batchOf(pool: readonly unknown[], step: (request: unknown) => Decision): () => void {
  let k = 0;
  return () => {
    let acc = 0;
    for (let i = 0; i < BATCH; i++) {
      acc += step(pool[k]).reason.length;
      if (++k === pool.length) k = 0;
    }
    sink.value += acc;
  };
}

/** The sides of one size over the same pool. */
function sidesOf(plain: Engine, doors: Engine, pool: readonly unknown[], state: AccessState): Side[] {
  const outA = plain.decide(pool[0]);
  const outB = doors.decide(pool[0]);
  const outC = doors.decide(pool[0]);
  const outD = doors.decide(pool[0]);
  const outE = doors.decide(pool[0]);
  const moving = AccessState.fromJSON(state.toJSON());
  // A diagnosis of (c): the same area walk over a state with nobody inside (every lookup misses on
  // the area id, the holder's id is never hashed), so (c0) − (b) is the walk and (c) − (c0) the lookups.
  const empty = new AccessState();
  const side = (key: string, name: string, step: (r: unknown) => Decision): Side => ({
    key,
    name,
    run: batchOf(pool, step),
    results: [],
  });
  // Named steps, so that a CPU profile of the run (bench/cpuprofile.mjs --match sideC) tells the sides apart.
  const sideA = (r: unknown) => plain.decide(r, outA);
  const sideB = (r: unknown) => doors.decide(r, outB);
  const sideEmpty = (r: unknown) => doors.decide(r, outE, empty);
  const sideC = (r: unknown) => doors.decide(r, outC, state);
  const sideD = (r: unknown) => {
    const d = doors.decide(r, outD, moving);
    doors.record(r, d, moving);
    return d;
  };
  return [
    side("a", "(a) plain: decide(request, out)", sideA),
    side("b", "(b) door states: decide(request, out)", sideB),
    side("c0", "(c0) door states: decide(request, out, empty state)", sideEmpty),
    side("c", "(c) door states: decide(request, out, state)", sideC),
    side("d", "(d) door states: decide(request, out, state) + record", sideD),
  ];
}

async function timeSides(sides: readonly Side[], size: SizeName, quick: boolean): Promise<number> {
  const rounds = quick ? 2 : 8;
  const opts = { timeMs: quick ? 350 : 1_000, warmupMs: quick ? 100 : 200 };
  for (let i = 0; i < rounds; i++)
    for (let j = 0; j < sides.length; j++) {
      const s = sides[(i + j) % sides.length]!;
      s.results.push(await timeBatches(`${SECTION} ${size} ${s.key} #${i + 1}`, s.run, BATCH, opts));
    }
  return rounds;
}

async function runSize(size: SizeName, ctx: ScenarioContext): Promise<Row[]> {
  const f = fixture(size);
  const pool = f.set.requests;
  const t0 = performance.now();
  const b = doorStateBuilding(f);
  const doors = compile(size, b.input);
  const state = fillState(doors, b, pool, INSIDE[size]);
  const areaDevices = b.areas.reduce((n, a) => n + a.entries.length + a.exits.length, 0);
  const atAreaEntry = pool.filter((r) => b.entryAreas.has((r as { deviceId: string }).deviceId)).length;
  const occupied = b.areas.reduce((n, a) => n + state.occupancy(a.id), 0);
  const full = b.areas.filter((a) => a.occupancyLimit !== null && state.occupancy(a.id) >= a.occupancyLimit).length;
  const setup =
    `${b.counts.calendars} calendars; ${b.counts.exclude.toLocaleString("en-US")} rules exclude, ${b.counts.only} only, ` +
    `${b.counts.maxThreat.toLocaleString("en-US")} with maxThreatLevel, ${b.counts.unlock} unlock rules; ` +
    `${b.areas.length} areas over ${areaDevices.toLocaleString("en-US")} devices (${((100 * atAreaEntry) / pool.length).toFixed(0)}% of the pool at an area entry); ` +
    `${occupied.toLocaleString("en-US")} holders inside, ${full} limited areas full`;
  log(`  ${SECTION} ${size}: built in ${((performance.now() - t0) / 1000).toFixed(1)} s — ${setup}`);
  const sides = sidesOf(f.engine, doors, pool, state);
  const mixes = [
    outcomeMix(pool, f.engine),
    outcomeMix(pool, doors),
    outcomeMix(pool, doors, new AccessState()),
    outcomeMix(pool, doors, state),
    "state moves as the pool cycles",
  ];
  const rounds = await timeSides(sides, size, ctx.quick);
  const base = sides[0]!.results;
  const mid = (rs: BatchResult[]) => [...rs].sort((x, y) => x.opsPerSec - y.opsPerSec)[(rs.length - 1) >> 1]!;
  const rows: Row[] = [];
  sides.forEach((s, i) => {
    const m = mid(s.results);
    const ratio = median(s.results.map((r, k) => r.opsPerSec / base[k]!.opsPerSec));
    const cpuRatio = median(s.results.map((r, k) => r.opsPerCpuSec / base[k]!.opsPerCpuSec));
    ctx.facts[`doorStates.${size}.${s.key}`] = { ...m, ratioToA: ratio, cpuRatioToA: cpuRatio };
    const roundsNote = `median of ${rounds} interleaved rounds (${s.results.map((r) => fmtOps(r.opsPerSec)).join(", ")})`;
    const note = `${pool.length.toLocaleString("en-US")} requests cycled, batches of ${BATCH}; ${mixes[i]}; ${roundsNote}${i === 0 ? `; door-state snapshot: ${setup}` : ""}`;
    rows.push({ ...batchRow(SECTION, size, s.name, m, note), value: `${ratio.toFixed(3)}× (a)` });
    log(
      `  ${SECTION} ${size} ${s.name}: ${fmtOps(m.opsPerSec)} decisions/s, ${ratio.toFixed(3)}× (a) (CPU-time ratio ${cpuRatio.toFixed(3)}×)`,
    );
  });
  return rows;
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  for (const size of ctx.sizes) rows.push(...(await runSize(size, ctx)));
  return rows;
}
