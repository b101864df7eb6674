// `npm run bench`: runs every scenario, prints one table and writes bench/results/latest.json.
//
//   npm run bench                      the whole run (about 8 minutes on this 2-core machine); writes latest.json
//   npm run bench -- --quick           sizes S and M, shorter budgets (1–2 minutes); prints only
//   npm run bench -- --only decide,rsop --sizes S,M     a part (printed, not written unless --out)
//   npm run bench -- --profile --sizes L                decide under `node --cpu-prof`, summarized
//   npm run bench -- --markdown        also print the table as Markdown (for the README)
//   npm run bench -- --scale           only the replicas on PostgreSQL (bench/scale.bench.ts; size M unless
//                                      --sizes names one); writes bench/results/scale.json. Not part of the
//                                      whole run: it needs the PostgreSQL server binaries.
//   RSOP_BENCH_SERVE_NODE_FLAGS="--cpu-prof --cpu-prof-dir=DIR" npm run bench -- --scale
//                                      the same, each served replica under those node flags (stopped by
//                                      SIGTERM then, so that it writes its profile)
//
// Scenarios run in child processes grouped by what they need: decide, memory and rsop share one
// process (started with --expose-gc for the heap measurements, building S, M and L once); handles
// (reader handles and batches, bench/handles.bench.ts) gets its own, also with --expose-gc; compile
// gets a process whose heap holds only the snapshots; the peers (casbin, Cedar wasm) get their own;
// the CLI scenario spawns `node dist/cli.js`; the service scenario runs `node dist/cli.js serve --data`
// in a child process and drives it over 127.0.0.1 from its own process (sizes M and L; S only alone);
// the webhooks scenario does the same with an HTTPS receiver in its own process (size M); the tenants
// scenario serves a service database of 1,000 customers the same way (bench/tenants.bench.ts, no size);
// doorStates (decide with calendars, areas and an access state against the plain fixture, issue 38)
// gets its own process: it holds two engines of each size.
// A child prints its rows as JSON on stdout; progress goes to stderr.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type BatchResult, type Row, fmtNs, fmtOps, log, machine, renderTable } from "./benchUtil.js";
import { run as cli } from "./cli.bench.js";
import { run as compile } from "./compile.bench.js";
import { run as decide } from "./decide.bench.js";
import { run as diff } from "./diff.bench.js";
import { run as doorStates } from "./doorStates.bench.js";
import { run as handles } from "./handles.bench.js";
import { run as incremental } from "./incremental.bench.js";
import type { SizeName } from "./fixtures.js";
import { run as memory } from "./memory.bench.js";
import { run as nodePropagation } from "./nodePropagation.bench.js";
import { run as nodeScans } from "./nodeScans.bench.js";
import { run as peers } from "./peers.bench.js";
import { run as report } from "./report.bench.js";
import { run as rsop } from "./rsop.bench.js";
import { run as scale } from "./scale.bench.js";
import { run as service } from "./service.bench.js";
import { run as tenants } from "./tenants.bench.js";
import { run as webhooks } from "./webhooks.bench.js";
import type { Scenario, ScenarioContext } from "./scenario.js";

const SCENARIOS: Readonly<Record<string, Scenario>> = {
  decide,
  memory,
  rsop,
  handles,
  compile,
  incremental,
  diff,
  peers,
  cli,
  service,
  scale,
  report,
  webhooks,
  tenants,
  nodePropagation,
  nodeScans,
  doorStates,
};

interface Job {
  readonly scenarios: readonly string[];
  readonly nodeFlags: readonly string[];
}

const JOBS: readonly Job[] = [
  { scenarios: ["decide", "memory", "rsop"], nodeFlags: ["--expose-gc"] },
  { scenarios: ["handles"], nodeFlags: ["--expose-gc"] },
  { scenarios: ["compile"], nodeFlags: [] },
  { scenarios: ["incremental"], nodeFlags: ["--expose-gc"] },
  { scenarios: ["diff"], nodeFlags: [] },
  { scenarios: ["peers"], nodeFlags: [] },
  { scenarios: ["cli"], nodeFlags: [] },
  { scenarios: ["service"], nodeFlags: [] },
  { scenarios: ["scale"], nodeFlags: [] },
  { scenarios: ["report"], nodeFlags: [] },
  { scenarios: ["webhooks"], nodeFlags: [] },
  { scenarios: ["tenants"], nodeFlags: [] },
  { scenarios: ["nodePropagation"], nodeFlags: [] },
  { scenarios: ["nodeScans"], nodeFlags: [] },
  { scenarios: ["doorStates"], nodeFlags: [] },
];

/** Scenarios that run only when named (--only or their own flag), never in the whole run. */
const ON_REQUEST: readonly string[] = ["scale"];

const RESULTS_DIR = resolve("bench/results");

interface Args {
  quick: boolean;
  sizes: SizeName[];
  only: string[] | null;
  child: string[] | null;
  profile: boolean;
  markdown: boolean;
  out: string | null;
  scale: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = {
    quick: false,
    sizes: ["S", "M", "L"],
    only: null,
    child: null,
    profile: false,
    markdown: false,
    out: null,
    scale: false,
  };
  let sizesGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === "--quick") a.quick = true;
    else if (arg === "--profile") a.profile = true;
    else if (arg === "--markdown") a.markdown = true;
    else if (arg === "--sizes") {
      a.sizes = value()
        .split(",")
        .map((s) => s.trim().toUpperCase()) as SizeName[];
      sizesGiven = true;
    } else if (arg === "--only")
      a.only = value()
        .split(",")
        .map((s) => s.trim());
    else if (arg === "--child") a.child = value().split(",");
    else if (arg === "--out") a.out = value();
    else if (arg === "--scale") {
      a.scale = true;
      a.only = ["scale"];
    } else throw new Error(`unknown argument ${arg} (see bench/main.ts)`);
  }
  // --quick leaves out L (its generation and validation alone take half a minute) unless asked for.
  if (a.quick && !sizesGiven && a.child === null) a.sizes = ["S", "M"];
  for (const s of a.sizes) if (!["S", "M", "L"].includes(s)) throw new Error(`unknown size ${s}`);
  for (const s of [...(a.only ?? []), ...(a.child ?? [])])
    if (!(s in SCENARIOS)) throw new Error(`unknown scenario ${s}`);
  return a;
}

interface ChildResult {
  rows: Row[];
  facts: Record<string, unknown>;
}

async function child(args: Args): Promise<void> {
  const ctx: ScenarioContext = { quick: args.quick, sizes: args.sizes, facts: {} };
  const rows: Row[] = [];
  for (const name of args.child!) {
    const t0 = performance.now();
    log(`[${name}] ${args.quick ? "quick, " : ""}sizes ${args.sizes.join(",")}`);
    rows.push(...(await SCENARIOS[name]!(ctx)));
    log(`[${name}] done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const result: ChildResult = { rows, facts: ctx.facts };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function runJob(job: Job, args: Args, extraFlags: readonly string[]): ChildResult | null {
  const scenarios = job.scenarios.filter((s) => (args.only === null ? !ON_REQUEST.includes(s) : args.only.includes(s)));
  if (scenarios.length === 0) return null;
  const argv = [
    ...job.nodeFlags,
    ...extraFlags,
    process.argv[1]!,
    "--child",
    scenarios.join(","),
    "--sizes",
    args.sizes.join(","),
  ];
  if (args.quick) argv.push("--quick");
  const r = spawnSync(process.execPath, argv, { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26 });
  if (r.status !== 0) {
    log(`scenario process ${scenarios.join(",")} failed (exit ${r.status ?? r.signal})`);
    return null;
  }
  const lines = String(r.stdout).trim().split("\n");
  return JSON.parse(lines[lines.length - 1]!) as ChildResult;
}

interface Target {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | null;
}

/** Issue 38: calendars, thresholds and areas in use cost at most a tenth of the decisions/s (reported, never asserted). */
function doorStateTargets(facts: Record<string, unknown>): Target[] {
  const out: Target[] = [];
  for (const [key, label] of [
    ["b", "decide(request, out) with calendars and areas in the snapshot"],
    ["c", "decide(request, out, state) with an access state"],
  ] as const) {
    const r = facts[`doorStates.L.${key}`] as { ratioToA: number; opsPerSec: number } | undefined;
    if (r !== undefined)
      out.push({
        target: `L ${label} ≥ 0.9× the plain fixture's decide(request, out)`,
        measured: `${r.ratioToA.toFixed(3)}× (${fmtOps(r.opsPerSec)})`,
        met: r.ratioToA >= 0.9,
      });
  }
  return out;
}

function targets(facts: Record<string, unknown>): Target[] {
  const out: Target[] = [];
  const num = (k: string) => (typeof facts[k] === "number" ? (facts[k] as number) : undefined);
  const batch = (k: string) => facts[k] as BatchResult | undefined;
  for (const [k, label] of [
    ["decide.L.fresh", "decide(request)"],
    ["decide.L.out", "decide(request, out)"],
    ["decide.L.warm", "decide(request, out), warm 1,000-request pool"],
  ] as const) {
    const r = batch(k);
    if (r === undefined) continue;
    out.push({ target: `L ${label} ≥ 5,000,000 decisions/s`, measured: fmtOps(r.opsPerSec), met: r.opsPerSec >= 5e6 });
    out.push({ target: `L ${label} p99 ≤ 1 µs (per-batch p99)`, measured: fmtNs(r.p99Ns), met: r.p99Ns <= 1000 });
  }
  const objectBytes = num("alloc.objectBytes");
  const fresh = num("alloc.L.decide(request)");
  const reused = num("alloc.L.decide(request, out)");
  if (fresh !== undefined && objectBytes !== undefined)
    out.push({
      target: "L ≤ 1 object allocated per decision",
      measured: `${fresh.toFixed(2)} B (${(fresh / objectBytes).toFixed(2)} objects)`,
      met: fresh <= objectBytes * 1.05,
    });
  if (reused !== undefined)
    out.push({
      target: "L 0 allocations with a caller-supplied out",
      measured: `${reused.toFixed(2)} B/decision`,
      met: reused < 1,
    });
  const warm = num("compile.L.warmMs");
  const first = num("compile.L.firstMs");
  if (warm !== undefined)
    out.push({
      target: "L compile ≤ 1 s (createEngine, warm median)",
      measured: `${warm.toFixed(0)} ms (first in process ${first?.toFixed(0)} ms)`,
      met: warm <= 1000,
    });
  const heapIndex = num("heap.L.indexPerHolder");
  const heapTotal = num("heap.L.totalPerHolder");
  if (heapIndex !== undefined)
    out.push({
      target: "L retained heap ≤ 500 B/holder (compiled indexes)",
      measured: `${heapIndex.toFixed(0)} B/holder`,
      met: heapIndex <= 500,
    });
  if (heapTotal !== undefined)
    out.push({
      target: "L retained heap ≤ 500 B/holder (snapshot + indexes)",
      measured: `${heapTotal.toFixed(0)} B/holder`,
      met: heapTotal <= 500,
    });
  for (const key of ["narrow", "wide"]) {
    const ns = num(`rsop.L.${key}.ns`);
    if (ns === undefined) continue;
    const what = `${num(`rsop.L.${key}.rules`)} rules → ${num(`rsop.L.${key}.devices`)} devices`;
    out.push({
      target: `L RSOP of one holder with ~50 rules over 5k devices ≤ 50 µs (${key === "narrow" ? "single-door rules" : "area rules"})`,
      measured: `${fmtNs(ns)} (${what})`,
      met: ns <= 50_000,
    });
  }
  // A write costs what it changes: live.apply at L against S, and the bounds on the large changes.
  for (const [key, what] of [
    ["holderCreate", "holder create (a card, two groups)"],
    ["membershipAdd", "membership add"],
    ["credentialAdd", "credential add"],
    ["holderUpdate", "holder update"],
  ] as const) {
    const l = num(`incremental.L.apply.${key}.ms`);
    const sm = num(`incremental.S.apply.${key}.ms`);
    if (l === undefined) continue;
    out.push({
      target: `L live.apply ${what} ≤ 50 µs${sm === undefined ? "" : " and ≤ 1.5× S"}`,
      measured: `${(l * 1000).toFixed(1)} µs${sm === undefined ? "" : ` (${(l / sm).toFixed(2)}× S's ${(sm * 1000).toFixed(1)} µs)`}`,
      met: l <= 0.05 && (sm === undefined || l <= 1.5 * sm),
    });
  }
  const groupDelete = num("incremental.L.apply.groupDelete.ms");
  if (groupDelete !== undefined)
    out.push({
      target: "L live.apply group delete (2,000 members) ≤ 20 ms",
      measured: `${groupDelete.toFixed(1)} ms`,
      met: groupDelete <= 20,
    });
  const batchCreate = num("incremental.L.apply.batchCreate.ms");
  if (batchCreate !== undefined)
    out.push({
      target: "L live.apply 10,000 creates in one batch ≤ 0.5 s",
      measured: `${(batchCreate / 1000).toFixed(2)} s`,
      met: batchCreate <= 500,
    });
  const replay = num("incremental.L.replay999.ratio");
  if (replay !== undefined)
    out.push({
      target: "L replay of 999 logged changes ≤ 999 × the median apply",
      measured: `${replay.toFixed(2)}×`,
      met: replay <= 1,
    });
  // Issue 19's targets.
  const rate = (k: string) => batch(k)?.opsPerSec;
  const handle = rate("handles.L.reader");
  const whole = rate("handles.L.batch");
  if (handle !== undefined)
    out.push({
      target: "L reader handle (pre-resolved arrays) ≥ 3,000,000 decisions/s",
      measured: fmtOps(handle),
      met: handle >= 3e6,
    });
  if (whole !== undefined)
    out.push({ target: "L columnar batch ≥ 5,000,000 decisions/s", measured: fmtOps(whole), met: whole >= 5e6 });
  for (const [k, what] of [
    ["handles.L.handleBytes", "reader handle"],
    ["handles.L.batchBytes", "columnar batch"],
  ] as const) {
    const b = num(k);
    if (b !== undefined)
      out.push({ target: `L ${what}: 0 B allocated per decision`, measured: `${b.toFixed(2)} B/decision`, met: b < 1 });
  }
  const peer = num("handles.peer.ratio");
  if (peer !== undefined)
    out.push({
      target: "peer world: reader handle (Map.get per call) ≥ 2× the plain Map + loop floor",
      measured: `${peer.toFixed(2)}×`,
      met: peer >= 2,
    });
  const cliRatio = num("cli.ratioToBare");
  if (cliRatio !== undefined)
    out.push({
      target: "M rsop decide, whole process with the snapshot load, ≥ 0.5× the bare JSON Lines process",
      measured: `${cliRatio.toFixed(2)}×`,
      met: cliRatio >= 0.5,
    });
  const wide = num("rsop.L.wide.ns");
  if (wide !== undefined)
    out.push({
      target: "L RSOP of one holder whose rules reach 414 devices ≤ 20 µs",
      measured: fmtNs(wide),
      met: wide <= 20_000,
    });
  for (const [k, label, limit] of [
    ["who.L.busiest.ns", "busiest door", 1e6],
    ["who.L.median.ns", "median door", 2e5],
  ] as const) {
    const ns = num(k);
    if (ns !== undefined)
      out.push({ target: `L whoCanAccess, ${label} ≤ ${fmtNs(limit)}`, measured: fmtNs(ns), met: ns <= limit });
  }
  const loadMs = num("load.L.ms");
  if (loadMs !== undefined)
    out.push({
      target: "L load (JSON.parse + validation + compile) ≤ 1 s",
      measured: `${loadMs.toFixed(0)} ms`,
      met: loadMs <= 1000,
    });
  if (heapTotal !== undefined)
    out.push({
      target: "L retained heap ≤ 1,000 B/holder with the snapshot kept",
      measured: `${heapTotal.toFixed(0)} B/holder`,
      met: heapTotal <= 1000,
    });
  out.push(...doorStateTargets(facts));
  const e = num("peers.engineOps");
  const plain = num("peers.plainOps");
  const naive = num("peers.naiveOps");
  const best = Math.max(num("peers.casbinOps") ?? 0, num("peers.cedarOps") ?? 0);
  if (e !== undefined && naive !== undefined)
    out.push({
      target: "S beat the naive floor (scan all rules)",
      measured: `${(e / naive).toFixed(1)}×`,
      met: e > naive,
    });
  if (e !== undefined && plain !== undefined)
    out.push({ target: "S beat plain JS (rules per device)", measured: `${(e / plain).toFixed(2)}×`, met: e > plain });
  if (e !== undefined && best > 0)
    out.push({
      target: "S ratio to the best peer (printed)",
      measured: `${Math.round(e / best).toLocaleString("en-US")}×`,
      met: null,
    });
  return out;
}

function summarizeProfiles(dir: string): void {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  for (const f of files) {
    log(`profile: ${join(dir, f)}`);
    spawnSync(process.execPath, [resolve("bench/cpuprofile.mjs"), join(dir, f), "--match", "Batch", "--top", "20"], {
      stdio: "inherit",
    });
  }
}

async function orchestrate(args: Args): Promise<number> {
  const started = Date.now();
  const before = machine();
  const rows: Row[] = [];
  const facts: Record<string, unknown> = {};
  let failed = false;
  if (args.profile) {
    const dir = join(RESULTS_DIR, `profile-${new Date(started).toISOString().replace(/[:.]/g, "-")}`);
    mkdirSync(dir, { recursive: true });
    const r = runJob({ scenarios: ["decide"], nodeFlags: [] }, { ...args, only: ["decide"] }, [
      "--cpu-prof",
      `--cpu-prof-dir=${dir}`,
    ]);
    if (r === null) return 1;
    process.stdout.write(`${renderTable(r.rows)}\n`);
    summarizeProfiles(dir);
    return 0;
  }
  for (const job of JOBS) {
    const r = runJob(job, args, []);
    if (r === null) {
      // A job with nothing to run (its scenarios are run on request only) is no failure.
      if (job.scenarios.some((s) => (args.only === null ? !ON_REQUEST.includes(s) : args.only.includes(s))))
        failed = true;
      continue;
    }
    rows.push(...r.rows);
    Object.assign(facts, r.facts);
  }
  const after = machine();
  const seconds = (Date.now() - started) / 1000;
  // Only a whole, full-length run replaces bench/results/latest.json (the committed reference).
  const complete = args.only === null && args.sizes.length === 3 && !args.quick && !failed;
  // The command as given, so that a partial run's header and file say which part it was.
  const given = process.argv.slice(2);
  const command = given.length === 0 ? "npm run bench" : `npm run bench -- ${given.join(" ")}`;
  const header = [
    `rsop-engine benchmarks — ${command}`,
    `machine: ${before.cpus} CPUs (${before.cpuModel}), ${before.platform}, Node ${before.node} (V8 ${before.v8})`,
    `load average at start ${before.loadavg.join(" ")}, at end ${after.loadavg.join(" ")}; run took ${seconds.toFixed(0)} s`,
    "latencies are per operation: each sample times a batch (see 'note'); p50/p99 are percentiles of batch means; ops/s is from the median batch",
  ];
  const tgts = targets(facts);
  const targetLines = tgts.map(
    (t) => `  ${t.met === null ? "·" : t.met ? "met   " : "MISSED"}  ${t.target}: ${t.measured}`,
  );
  process.stdout.write(`${header.join("\n")}\n\n${renderTable(rows)}\n\ntargets:\n${targetLines.join("\n")}\n`);
  if (facts.agreement !== undefined) {
    const ag = facts.agreement as Record<string, { agree: number; total: number; rate: number }>;
    process.stdout.write(
      `\nagreement with the engine on allow/deny (S): ${Object.entries(ag)
        .map(([k, v]) => `${k} ${(100 * v.rate).toFixed(2)}% (${v.agree}/${v.total})`)
        .join(", ")}\n`,
    );
  }
  if (args.markdown) process.stdout.write(`\n${renderTable(rows, true)}\n`);
  const outPath =
    args.out ??
    (complete
      ? join(RESULTS_DIR, "latest.json")
      : args.scale && !args.quick && !failed
        ? join(RESULTS_DIR, "scale.json")
        : null);
  if (outPath !== null) {
    mkdirSync(resolve(outPath, ".."), { recursive: true });
    const doc = {
      command,
      quick: args.quick,
      date: new Date(started).toISOString(),
      seconds: Math.round(seconds),
      machine: { ...before, loadavgAtEnd: after.loadavg },
      notes: header.slice(3),
      rows,
      targets: tgts,
      agreement: facts.agreement ?? null,
      facts,
    };
    writeFileSync(outPath, `${JSON.stringify(doc, null, 2)}\n`);
    process.stdout.write(`\nwrote ${outPath}\n`);
  } else
    process.stdout.write(
      "\n(quick or partial run: bench/results/latest.json left as it was; pass --out FILE to keep these results)\n",
    );
  return failed ? 1 : 0;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.child !== null) {
    await child(args);
    return;
  }
  process.exitCode = await orchestrate(args);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
