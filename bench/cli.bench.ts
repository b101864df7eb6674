// Scenario: `rsop decide` end to end, as a user runs it — spawn the built CLI (`node dist/cli.js
// decide`) on a generated snapshot and a JSON Lines request file (the M building, 200,000 lines),
// output to a file. The wall time is the whole process: node's start, reading, validating and
// compiling the snapshot, reading and parsing every line, checking and deciding it and writing one
// JSON line per decision, to exit.
//
// The floor, measured the same way in the same run: a bare loop in its own node process that reads
// the same file, JSON.parses each line and writes a JSON.stringify'd object of the decision's shape
// per line (no snapshot, no deciding): what any JSON Lines tool pays, start-up included. The ratio
// is floor time / CLI time (throughput relative to the floor), of runs made back to back, in turn.
// One-line runs of both give the fixed costs (start-up, and the snapshot's load for the CLI) and,
// by difference, the per-line rates: the diagnosis, not the target.
//
// RSOP_BENCH_CLI names another built cli.js (default dist/cli.js). Inputs are written to a fresh
// temporary directory and removed afterwards.
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Row, fmtBytes, fmtMs, fmtNs, log } from "./benchUtil.js";
import { fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

const CLI = resolve(process.env.RSOP_BENCH_CLI ?? "dist/cli.js");

/** The bare loop (see above), written to a file of the run's directory. */
const BARE = `import { readFileSync, writeSync } from "node:fs";
const text = readFileSync(process.argv[2], "utf8");
let out = [];
let n = 0;
for (const line of text.split("\\n")) {
  if (line === "") continue;
  const r = JSON.parse(line);
  n++;
  out.push(JSON.stringify({ line: n, outcome: "allowed", topic: "device.request.allowed", reason: "allowed", holderId: r.deviceId, credentialId: null,
    activeRuleId: null, duress: false, floors: [], facilityCode: null, credentialNumber: null }));
  if (out.length >= 4096) { writeSync(1, out.join("\\n") + "\\n"); out = []; }
}
if (out.length > 0) writeSync(1, out.join("\\n") + "\\n");
`;

/** Runs `node args…` with stdout going straight to `output`; returns the wall time in ms. */
function runNode(args: readonly string[], output: string): number {
  const fd = openSync(output, "w");
  try {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { stdio: ["ignore", fd, "pipe"] });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${String(r.stderr).slice(0, 500)}`);
    return ms;
  } finally {
    closeSync(fd);
  }
}

/** Runs the CLI with stdout going straight to `output`; returns the wall time in ms. */
function runCli(system: string, requests: string, output: string): number {
  return runNode([CLI, "decide", "--system", system, "--request", requests], output);
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  if (!existsSync(CLI))
    return [
      {
        section: "cli",
        size: "M",
        name: "rsop decide (JSON Lines)",
        note: "skipped: dist/cli.js missing (npm run build)",
      },
    ];
  const size = "M";
  const f = fixture(size);
  // The M pool twice over (200,000 lines).
  const lines = ctx.quick ? 50_000 : 2 * f.set.requests.length;
  const reps = ctx.quick ? 1 : 5;
  const dir = mkdtempSync(join(tmpdir(), "rsop-bench-cli-"));
  try {
    const system = join(dir, "system.json");
    writeFileSync(system, f.json);
    const many = join(dir, "requests.jsonl");
    const pool = f.set.requests;
    const text = `${Array.from({ length: lines }, (_, i) => JSON.stringify(pool[i % pool.length])).join("\n")}\n`;
    writeFileSync(many, text);
    const one = join(dir, "one.jsonl");
    writeFileSync(one, `${JSON.stringify(f.set.requests[0])}\n`);
    const output = join(dir, "out.jsonl");
    const bareOutput = join(dir, "bare-out.jsonl");

    const bare = join(dir, "bare.mjs");
    writeFileSync(bare, BARE);
    const fixed: number[] = [];
    const full: number[] = [];
    const bareFixed: number[] = [];
    const bareFull: number[] = [];
    // In turn, the order alternating, so that a change in the machine's load reaches both alike.
    for (let i = 0; i < reps; i++) {
      if (i % 2 === 0) {
        full.push(runCli(system, many, output));
        bareFull.push(runNode([bare, many], bareOutput));
      } else {
        bareFull.push(runNode([bare, many], bareOutput));
        full.push(runCli(system, many, output));
      }
      fixed.push(runCli(system, one, output));
      bareFixed.push(runNode([bare, one], bareOutput));
    }
    const bareLines = readFileSync(bareOutput, "utf8").trimEnd().split("\n").length;
    if (bareLines !== 1) throw new Error(`the bare loop wrote ${bareLines} lines for 1`);
    runNode([bare, many], bareOutput);
    const bareManyLines = readFileSync(bareOutput, "utf8").trimEnd().split("\n").length;
    if (bareManyLines !== lines) throw new Error(`the bare loop wrote ${bareManyLines} lines for ${lines}`);
    runCli(system, many, output);
    const out = readFileSync(output, "utf8").trimEnd().split("\n");
    if (out.length !== lines) throw new Error(`rsop decide answered ${out.length} lines for ${lines}`);
    const bad = out.filter((l) => l.startsWith('{"error"') || l.includes('"error":')).length;
    if (bad > 0) throw new Error(`rsop decide answered ${bad} lines with an error`);
    const tFull = Math.min(...full);
    const tBare = Math.min(...bareFull);
    const tFixed = Math.min(...fixed);
    const tBareFixed = Math.min(...bareFixed);
    const ratio = tBare / tFull;
    const pairs = full.map((t, i) => bareFull[i]! / t);
    const perLine = (tFull - tFixed) / (lines - 1);
    const barePerLine = (tBare - tBareFixed) / (lines - 1);
    log(
      `  cli: ${lines} lines in ${tFull.toFixed(0)} ms (1 line: ${tFixed.toFixed(0)} ms); floor ${tBare.toFixed(0)} ms (1 line: ${tBareFixed.toFixed(0)} ms); ratio ${ratio.toFixed(2)}× (runs ${pairs.map((x) => x.toFixed(2)).join(", ")})`,
    );
    const inputs = `${f.spec.holders.toLocaleString("en-US")}-holder snapshot (${fmtBytes(statSync(system).size)}), ${lines.toLocaleString("en-US")} lines (${fmtBytes(statSync(many).size)})`;
    ctx.facts["cli.linesPerSec"] = (lines * 1000) / tFull;
    ctx.facts["cli.marginalLinesPerSec"] = 1000 / perLine;
    ctx.facts["cli.bareLinesPerSec"] = (lines * 1000) / tBare;
    ctx.facts["cli.ratioToBare"] = ratio;
    ctx.facts["cli.perLineRatioToBare"] = barePerLine / perLine;
    const runs = (ts: number[]) => ts.map((t) => t.toFixed(0)).join(", ");
    return [
      {
        section: "cli",
        size,
        name: "rsop decide, whole process",
        opsPerSec: (lines * 1000) / tFull,
        value: fmtMs(tFull),
        note: `${inputs}; spawn to exit, snapshot load included; fastest of ${reps} (${runs(full)} ms)`,
      },
      {
        section: "cli",
        size,
        name: "floor: node process reading the file, JSON.parse + JSON.stringify a decision-shaped object per line",
        opsPerSec: (lines * 1000) / tBare,
        value: fmtMs(tBare),
        note: `same file, same run, spawn to exit; fastest of ${reps} (${runs(bareFull)} ms)`,
      },
      {
        section: "cli",
        size,
        name: "ratio rsop decide / floor, whole process",
        value: `${ratio.toFixed(2)}×`,
        note: `floor time / rsop decide time, fastest of each; run by run ${pairs.map((x) => x.toFixed(2)).join(", ")}`,
      },
      {
        section: "cli",
        size,
        name: "rsop decide, start-up + load (1 line)",
        value: fmtMs(tFixed),
        note: `node start, read + validate + compile the snapshot; floor's start-up ${fmtMs(tBareFixed)}; fastest of ${reps}`,
      },
      {
        section: "cli",
        size,
        name: "rsop decide, per line beyond start-up",
        opsPerSec: 1000 / perLine,
        meanNs: perLine * 1e6,
        note: `(whole run − one-line run) / lines; the floor's ${fmtNs(barePerLine * 1e6)}: ${(barePerLine / perLine).toFixed(2)}× (diagnosis, not the target)`,
      },
      {
        section: "cli",
        size: "-",
        name: "target: M rsop decide, whole process ≥ 0.5× the floor",
        value: `${ratio.toFixed(2)}×`,
        note: ratio >= 0.5 ? "met" : "MISSED",
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
