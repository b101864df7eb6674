// `rsop bench`: how fast this engine decides on the user's own snapshot. Random requests over the
// snapshot's readers and holders' credentials (a seeded PRNG: the same snapshot and seed give the
// same requests), then as many decisions as fit in the time budget, timed in batches.
import cliProgress from "cli-progress";
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { createEngine } from "../../evaluate/index.js";
import { type CardNumber, type Decision, type SystemSnapshot, parseSnapshot } from "../../model/index.js";
import { CliError, type CliIo } from "./io.js";
import { readSnapshotInput } from "./loadSystem.js";
import { mulberry32 } from "./mulberry32.js";

export interface BenchOptions {
  readonly system: string;
  /** How many distinct random requests to generate (the pool the timed loop cycles through). */
  readonly requests: number;
  /** Time budget of the measured phase, seconds. */
  readonly seconds: number;
  readonly seed: number;
  readonly json?: boolean;
}

/** What `rsop bench --json` prints. */
export interface BenchReport {
  system: { id: string; holders: number; devices: number; rules: number };
  /** Milliseconds: validation (parseSnapshot) and compilation (createEngine). */
  validateMs: number;
  compileMs: number;
  requests: { count: number; seed: number; allowed: number; denied: number; unknown: number };
  decisions: number;
  seconds: number;
  decisionsPerSecond: number;
  /** Nanoseconds per decision: percentiles of per-batch means (a batch is `batch` decisions). */
  batch: number;
  p50Ns: number;
  p99Ns: number;
  meanNs: number;
}

/** Decisions per timed batch: long enough for the clock's resolution, short enough for percentiles. */
const BATCH = 256;
/** Requests dated over 2026 (a fixed year, so that the seed alone decides the requests). */
const SPAN_START = Date.UTC(2026, 0, 1);
const SPAN_MS = 365 * 86_400_000;
const READER_TYPES = new Set(["primaryReader", "additionalReader", "elevatorReader", "additionalElevatorReader"]);

/**
 * `count` requests: nine in ten by a holder presenting one of their credentials (a card number with
 * its facility code, or a phone), with their PIN half the time when they have one, or their PIN
 * alone when they hold no credential; one in ten an unissued card number. Devices are the readers
 * (all devices when there are none); instants are uniform over 2026.
 */
export function randomRequests(snapshot: SystemSnapshot, count: number, seed: number): unknown[] {
  const random = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const readers = snapshot.devices.filter((d) => READER_TYPES.has(d.type));
  const devices = readers.length > 0 ? readers : snapshot.devices;
  const holders = snapshot.holders.filter((h) => h.credentials.length > 0 || h.pin !== null);
  const used = new Set<CardNumber>();
  for (const h of snapshot.holders)
    for (const c of h.credentials) if (c.credentialNumber !== null) used.add(c.credentialNumber);
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const device = pick(devices);
    const at = SPAN_START + Math.floor(random() * SPAN_MS);
    const req: Record<string, unknown> = { deviceId: device.id, at };
    if (holders.length === 0 || random() < 0.1) {
      let n: number;
      do n = Math.floor(random() * 1_000_000);
      while (used.has(n));
      req.credential = { credentialNumber: n };
    } else {
      const h = pick(holders);
      if (h.credentials.length > 0) {
        const c = pick(h.credentials);
        if (c.types.includes("card"))
          req.credential = { credentialNumber: c.credentialNumber, facilityCode: c.facilityCode };
        else
          req.credential = {
            mobile: c.types.includes("touch") && random() < 0.5 ? "touch" : "token",
            credentialId: c.id,
          };
        if (h.pin !== null && random() < 0.5) req.pin = h.pin;
      } else req.pin = h.pin;
    }
    out.push(req);
  }
  return out;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** Runs the benchmark and returns its report; progress goes to `progress` (null: none). */
export function runBench(
  snapshot: SystemSnapshot,
  opts: BenchOptions,
  validateMs: number,
  progress: cliProgress.SingleBar | null,
): BenchReport {
  const t0 = performance.now();
  const engine = createEngine(snapshot);
  const compileMs = performance.now() - t0;
  const pool = randomRequests(snapshot, opts.requests, opts.seed);
  const out: Decision = engine.decide(pool[0]);
  // One pass to warm up (optimized code, interned floors) and to describe the mix.
  const outcomes = { allowed: 0, denied: 0, unknown: 0 };
  for (const r of pool) outcomes[engine.decide(r, out).outcome]++;

  const budgetMs = opts.seconds * 1000;
  const samples: number[] = [];
  let k = 0;
  let decisions = 0;
  let sinkLength = 0;
  progress?.start(100, 0, { decisions: "0" });
  let nextUpdate = 0;
  const start = performance.now();
  let now = start;
  do {
    const b0 = performance.now();
    for (let i = 0; i < BATCH; i++) {
      sinkLength += engine.decide(pool[k], out).reason.length;
      if (++k === pool.length) k = 0;
    }
    now = performance.now();
    samples.push(now - b0);
    decisions += BATCH;
    if (progress !== null && now >= nextUpdate) {
      progress.update(Math.min(100, Math.floor((100 * (now - start)) / budgetMs)), {
        decisions: decisions.toLocaleString("en-US"),
      });
      nextUpdate = now + 100;
    }
  } while (now - start < budgetMs);
  const elapsedMs = now - start;
  progress?.update(100, { decisions: decisions.toLocaleString("en-US") });
  progress?.stop();
  if (sinkLength < 0) throw new Error("unreachable");

  const sorted = Float64Array.from(samples).sort();
  const toNs = 1e6 / BATCH;
  return {
    system: {
      id: snapshot.systemId,
      holders: snapshot.holders.length,
      devices: snapshot.devices.length,
      rules: snapshot.rules.length,
    },
    validateMs,
    compileMs,
    requests: { count: pool.length, seed: opts.seed, ...outcomes },
    decisions,
    seconds: elapsedMs / 1000,
    decisionsPerSecond: (decisions * 1000) / elapsedMs,
    batch: BATCH,
    p50Ns: percentile(sorted, 50) * toNs,
    p99Ns: percentile(sorted, 99) * toNs,
    meanNs: (elapsedMs / decisions) * 1e6,
  };
}

const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)} ms`;
const ns = (v: number) => (v < 10_000 ? `${v.toFixed(0)} ns` : `${(v / 1000).toFixed(1)} µs`);
const pct = (n: number, of: number) => `${Math.round((100 * n) / of)}%`;
const int = (n: number) => Math.round(n).toLocaleString("en-US");

function textReport(r: BenchReport): string {
  const n = r.requests.count;
  return [
    `system ${r.system.id}: ${int(r.system.holders)} holders, ${int(r.system.devices)} devices, ${int(r.system.rules)} rules`,
    `load: validate ${ms(r.validateMs)}, compile ${ms(r.compileMs)}`,
    `requests: ${int(n)} random (seed ${r.requests.seed}): ${pct(r.requests.allowed, n)} allowed, ${pct(r.requests.denied, n)} denied, ${pct(r.requests.unknown, n)} unknown`,
    `decide: ${int(r.decisionsPerSecond)} decisions/s (${int(r.decisions)} decisions in ${r.seconds.toFixed(2)} s, one thread)`,
    `latency per decision: p50 ${ns(r.p50Ns)}, p99 ${ns(r.p99Ns)}, mean ${ns(r.meanNs)} (percentiles of batches of ${r.batch})`,
  ].join("\n");
}

function positiveInteger(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(n) || n < 1)
      throw new InvalidArgumentError(`${name} must be a positive integer.`);
    return n;
  };
}

function seconds(v: string): number {
  const n = Number(v);
  if (!/^[0-9]*\.?[0-9]+$/.test(v) || !(n > 0) || n > 3600)
    throw new InvalidArgumentError("--seconds must be a number of seconds above 0, at most 3600.");
  return n;
}

/** Registers `rsop bench`. */
export function registerBenchCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("bench")
    .description(
      "Benchmark decisions on a snapshot: random requests over its readers and holders; prints decisions/s, p50/p99 latency and load times.",
    )
    .requiredOption("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option(
      "--requests <n>",
      "distinct random requests to generate and cycle through",
      positiveInteger("--requests"),
      10_000,
    )
    .option("--seconds <s>", "how long to measure", seconds, 3)
    .option("--seed <n>", "seed of the random requests", positiveInteger("--seed"), 1)
    .option("--json", "print the report as JSON")
    .action(async (opts: BenchOptions) => {
      const json = await readSnapshotInput(opts.system, "system", io);
      const t0 = performance.now();
      const parsed = parseSnapshot(json);
      const validateMs = performance.now() - t0;
      if (!parsed.ok)
        throw new CliError(
          `${opts.system}: ${parsed.issues.length} problem${parsed.issues.length === 1 ? "" : "s"}`,
          parsed.issues,
        );
      const stderr = io.stderr as { isTTY?: boolean };
      const bar =
        stderr.isTTY === true
          ? new cliProgress.SingleBar(
              {
                stream: io.stderr as NodeJS.WriteStream,
                format: "measuring [{bar}] {percentage}% | {decisions} decisions",
                hideCursor: true,
                clearOnComplete: true,
              },
              cliProgress.Presets.shades_classic,
            )
          : null;
      const report = runBench(parsed.value, opts, validateMs, bar);
      io.stdout.write(opts.json === true ? `${JSON.stringify(report, null, 2)}\n` : `${textReport(report)}\n`);
      setCode(0);
    });
}
