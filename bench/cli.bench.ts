// Scenario: `rsop decide` end to end — spawn the built CLI (`node dist/cli.js decide`) on a generated
// snapshot and JSON Lines request file (the M building), output to a file. The wall time includes
// process start, reading and validating the snapshot, compiling, reading and parsing every line,
// checking it (requestIssues), deciding and writing one JSON line per decision. A run with a
// one-line request file measures the fixed cost; the difference gives the per-line rate. Each is the
// fastest of a few runs: on a shared machine the fastest run is the least disturbed one.
//
// The baseline, measured the same way in the same run: a bare loop in its own node process that
// reads the same file, JSON.parses each line and writes a JSON.stringify'd object of the decision's
// shape per line (no snapshot, no deciding): what any JSON Lines tool pays.
//
// Inputs are written to a fresh temporary directory and removed afterwards.
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Row, fmtBytes, fmtMs, log } from "./benchUtil.js";
import { fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

const CLI = resolve("dist/cli.js");

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
  // The M pool twice over (200,000 lines), so that the per-line part outweighs start-up noise.
  const lines = ctx.quick ? 50_000 : 2 * f.set.requests.length;
  const reps = ctx.quick ? 1 : 3;
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

    const bare = join(dir, "bare.mjs");
    writeFileSync(bare, BARE);
    const fixed: number[] = [];
    const full: number[] = [];
    const bareFixed: number[] = [];
    const bareFull: number[] = [];
    for (let i = 0; i < reps; i++) {
      fixed.push(runCli(system, one, output));
      full.push(runCli(system, many, output));
      bareFixed.push(runNode([bare, one], join(dir, "bare-out.jsonl")));
      bareFull.push(runNode([bare, many], join(dir, "bare-out.jsonl")));
    }
    const bareLines = readFileSync(join(dir, "bare-out.jsonl"), "utf8").trimEnd().split("\n").length;
    if (bareLines !== lines) throw new Error(`the bare loop wrote ${bareLines} lines for ${lines}`);
    const out = readFileSync(output, "utf8").trimEnd().split("\n");
    if (out.length !== lines) throw new Error(`rsop decide answered ${out.length} lines for ${lines}`);
    const bad = out.filter((l) => l.startsWith('{"error"')).length;
    if (bad > 0) throw new Error(`rsop decide answered ${bad} lines with an error`);
    const tFixed = Math.min(...fixed);
    const tFull = Math.min(...full);
    const perLine = (tFull - tFixed) / (lines - 1);
    const barePerLine = (Math.min(...bareFull) - Math.min(...bareFixed)) / (lines - 1);
    log(
      `  cli: ${lines} lines in ${tFull.toFixed(0)} ms (fixed ${tFixed.toFixed(0)} ms); bare loop ${Math.min(...bareFull).toFixed(0)} ms (fixed ${Math.min(...bareFixed).toFixed(0)} ms)`,
    );
    const inputs = `${f.spec.holders.toLocaleString("en-US")}-holder snapshot (${fmtBytes(statSync(system).size)}), ${lines.toLocaleString("en-US")} lines (${fmtBytes(statSync(many).size)})`;
    ctx.facts["cli.linesPerSec"] = (lines * 1000) / tFull;
    ctx.facts["cli.marginalLinesPerSec"] = 1000 / perLine;
    ctx.facts["cli.bareLinesPerSec"] = 1000 / barePerLine;
    ctx.facts["cli.ratioToBare"] = barePerLine / perLine;
    return [
      {
        section: "cli",
        size,
        name: "rsop decide, whole run",
        opsPerSec: (lines * 1000) / tFull,
        value: fmtMs(tFull),
        note: `${inputs}; fastest of ${reps}; spawn to exit`,
      },
      {
        section: "cli",
        size,
        name: "rsop decide, per line beyond start-up",
        opsPerSec: 1000 / perLine,
        meanNs: perLine * 1e6,
        note: `(whole run − one-line run) / lines: read, JSON.parse, decide, answer line, write; ${(barePerLine / perLine).toFixed(2)}× the bare loop`,
      },
      {
        section: "cli",
        size,
        name: "bare loop: read, JSON.parse, JSON.stringify a decision-shaped object, write (baseline)",
        opsPerSec: 1000 / barePerLine,
        meanNs: barePerLine * 1e6,
        note: `same file, same run, measured as above (whole − one-line run); fastest of ${reps}`,
      },
      {
        section: "cli",
        size,
        name: "rsop decide, start-up + load (1 line)",
        value: fmtMs(tFixed),
        note: `node start, read + validate + compile the snapshot; fastest of ${reps}`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
