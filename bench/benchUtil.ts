// A thin tinybench wrapper: time a batch function, turn per-batch samples into per-operation numbers,
// collect rows, print one table and write bench/results/latest.json.
//
// Why batches: one decision takes a few hundred nanoseconds, close to the cost and resolution of the
// timer itself, so every sample times `batch` operations and per-operation latency is the sample
// divided by `batch`. Percentiles (p50, p99) are therefore percentiles of per-batch means, not of
// single operations: a p99 says "the slowest 1% of batches averaged this much per operation".
import { availableParallelism, cpus, loadavg } from "node:os";
import { Bench } from "tinybench";

/** One line of the results table. Latencies are per operation, in nanoseconds. */
export interface Row {
  readonly section: string;
  readonly size: string;
  readonly name: string;
  /** Operations per second, from the median batch. */
  readonly opsPerSec?: number;
  /**
   * Operations per second of process CPU time (user + system, all threads, GC included) over the
   * measured phase, and the CPU share the process got (CPU time / wall time). On a shared machine a
   * share well below 1 means the wall-clock numbers are inflated by waiting for a core.
   */
  readonly opsPerCpuSec?: number;
  readonly cpuShare?: number;
  readonly meanNs?: number;
  readonly p50Ns?: number;
  readonly p99Ns?: number;
  /** Another measured quantity, formatted (bytes per decision, milliseconds, agreement …). */
  readonly value?: string;
  readonly note?: string;
}

export interface BatchResult {
  readonly opsPerSec: number;
  /** With several rounds: the slowest and fastest round's ops/s (the result is the median round). */
  readonly roundsOpsPerSec?: readonly number[];
  readonly opsPerCpuSec: number;
  readonly cpuShare: number;
  readonly meanNs: number;
  readonly p50Ns: number;
  readonly p99Ns: number;
  /** Number of batch samples. */
  readonly samples: number;
  readonly batch: number;
}

export interface TimeOptions {
  /** Time budget of the measured phase, ms (tinybench `time`). */
  readonly timeMs: number;
  readonly warmupMs?: number;
  /** Minimum number of batch samples. */
  readonly minSamples?: number;
}

/**
 * Times `fn`, which performs `batch` operations per call, with tinybench; returns per-operation
 * statistics. Throughput comes from the median batch (robust to the noise of a shared machine).
 */
export async function timeBatches(
  name: string,
  fn: () => void,
  batch: number,
  opts: TimeOptions,
): Promise<BatchResult> {
  let calls = 0;
  let cpu0 = process.cpuUsage();
  let wall0 = performance.now();
  let cpuMs = 0;
  let wallMs = 0;
  let measuredCalls = 0;
  const bench = new Bench({
    name,
    setup: (_task, mode) => {
      if (mode !== "run") return;
      calls = 0;
      cpu0 = process.cpuUsage();
      wall0 = performance.now();
    },
    teardown: (_task, mode) => {
      if (mode !== "run") return;
      const d = process.cpuUsage(cpu0);
      cpuMs = (d.user + d.system) / 1000;
      wallMs = performance.now() - wall0;
      measuredCalls = calls;
    },
    time: opts.timeMs,
    iterations: opts.minSamples ?? 10,
    warmup: true,
    warmupTime: opts.warmupMs ?? Math.min(500, opts.timeMs / 3),
    warmupIterations: 5,
  });
  bench.add(name, () => {
    calls++;
    fn();
  });
  await bench.run();
  const task = bench.tasks[0]!;
  const r = task.result;
  if (r.state !== "completed")
    throw new Error(`benchmark "${name}" did not complete: ${r.state}${"error" in r ? `: ${String(r.error)}` : ""}`);
  const perOp = 1e6 / batch; // ms per batch → ns per operation
  return {
    opsPerSec: (batch * 1000) / r.latency.p50,
    opsPerCpuSec: (measuredCalls * batch * 1000) / cpuMs,
    cpuShare: cpuMs / wallMs,
    meanNs: r.latency.mean * perOp,
    p50Ns: r.latency.p50 * perOp,
    p99Ns: r.latency.p99 * perOp,
    samples: r.latency.samplesCount,
    batch,
  };
}

/**
 * Like timeBatches, split into `rounds` rounds of `timeMs / rounds` each; returns the median round
 * (by ops/s) with every round's ops/s. On a shared machine interference comes in bursts: the median
 * round is what a quiet moment looks like without picking the luckiest one.
 */
export async function timeRounds(
  name: string,
  fn: () => void,
  batch: number,
  opts: TimeOptions,
  rounds: number,
): Promise<BatchResult> {
  const results: BatchResult[] = [];
  for (let i = 0; i < rounds; i++)
    results.push(await timeBatches(`${name} #${i + 1}`, fn, batch, { ...opts, timeMs: opts.timeMs / rounds }));
  const sorted = [...results].sort((a, b) => a.opsPerSec - b.opsPerSec);
  return { ...sorted[(sorted.length - 1) >> 1]!, roundsOpsPerSec: results.map((r) => r.opsPerSec) };
}

/** Runs an expensive operation `runs` times (each after `setup`), returns the durations in ms, sorted. */
export function timeRuns<T>(runs: number, setup: () => T, fn: (input: T) => unknown): number[] {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const input = setup();
    const t0 = performance.now();
    fn(input);
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

/** The `q` quantile of ascending `sorted` (nearest rank, rounded down); NaN when it is empty. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

// ---------------------------------------------------------------------------------------------------
// Formatting

export function fmtNs(ns: number | undefined): string {
  if (ns === undefined || !Number.isFinite(ns)) return "";
  if (ns < 1_000) return `${ns.toFixed(ns < 10 ? 2 : ns < 100 ? 1 : 0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(ns < 10_000 ? 2 : ns < 100_000 ? 1 : 0)} µs`;
  if (ns < 1_000_000_000) return `${(ns / 1_000_000).toFixed(ns < 10_000_000 ? 2 : ns < 100_000_000 ? 1 : 0)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

export function fmtOps(ops: number | undefined): string {
  if (ops === undefined || !Number.isFinite(ops)) return "";
  if (ops >= 1e6) return `${(ops / 1e6).toFixed(2)} M/s`;
  if (ops >= 1e3) return `${(ops / 1e3).toFixed(ops >= 1e5 ? 0 : 1)} k/s`;
  return `${ops.toFixed(ops >= 100 ? 0 : 1)} /s`;
}

export function fmtBytes(b: number): string {
  if (Math.abs(b) < 1024) return `${b.toFixed(Math.abs(b) < 10 ? 2 : 0)} B`;
  if (Math.abs(b) < 1024 * 1024) return `${(b / 1024).toFixed(1)} KiB`;
  return `${(b / 1024 / 1024).toFixed(1)} MiB`;
}

export function fmtMs(ms: number): string {
  return fmtNs(ms * 1e6);
}

/** A row from a batch result. */
export function batchRow(section: string, size: string, name: string, r: BatchResult, note?: string): Row {
  return {
    section,
    size,
    name,
    opsPerSec: r.opsPerSec,
    opsPerCpuSec: r.opsPerCpuSec,
    cpuShare: r.cpuShare,
    meanNs: r.meanNs,
    p50Ns: r.p50Ns,
    p99Ns: r.p99Ns,
    ...(note === undefined ? {} : { note }),
  };
}

/** Renders rows as one plain-text table (GitHub-flavoured Markdown when `markdown`). */
export function renderTable(rows: readonly Row[], markdown = false): string {
  const head = [
    "scenario",
    "size",
    "what",
    "ops/s (median)",
    "mean",
    "p50",
    "p99",
    "ops/CPU-s",
    "CPU",
    "value",
    "note",
  ];
  const body = rows.map((r) => [
    r.section,
    r.size,
    r.name,
    fmtOps(r.opsPerSec),
    fmtNs(r.meanNs),
    fmtNs(r.p50Ns),
    fmtNs(r.p99Ns),
    fmtOps(r.opsPerCpuSec),
    r.cpuShare === undefined ? "" : `${Math.round(100 * r.cpuShare)}%`,
    r.value ?? "",
    r.note ?? "",
  ]);
  const all = [head, ...body];
  const widths = head.map((_, c) => Math.max(...all.map((line) => line[c]!.length)));
  const right = new Set([3, 4, 5, 6, 7, 8]);
  const cell = (s: string, c: number) => (right.has(c) ? s.padStart(widths[c]!) : s.padEnd(widths[c]!));
  if (markdown) {
    const line = (cells: string[]) => `| ${cells.map(cell).join(" | ")} |`;
    const rule = `|${widths.map((w, c) => (right.has(c) ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
    return [line(head), rule, ...body.map(line)].join("\n");
  }
  const line = (cells: string[]) => cells.map(cell).join("  ").trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly v8: string;
  readonly platform: string;
  readonly loadavg: number[];
}

export function machine(): Machine {
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? "unknown",
    node: process.version,
    v8: process.versions.v8,
    platform: `${process.platform} ${process.arch}`,
    loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

/** Progress to stderr (stdout of a child carries its results). */
export function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Keeps measured results observable so that no benchmark loop can be optimized away. */
export const sink = { value: 0 };
