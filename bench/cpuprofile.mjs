#!/usr/bin/env node
// Summarizes a V8 .cpuprofile (from `node --cpu-prof`): self time per function, largest first, and
// the inclusive ("total") time of the same functions.
//
//   node bench/cpuprofile.mjs FILE.cpuprofile [--top N] [--match TEXT] [--lines FUNCTION]
//
// --match keeps only the time spent under (inclusive of) the first frame whose function name or URL
// contains TEXT, so the share of each function is of that subtree (e.g. --match Batch).
// --lines prints the hottest source lines of the functions named FUNCTION (V8 position ticks), with
// the text of each line as it is in the profiled script (the bench bundle keeps the source's names).
import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--"));
if (file === undefined) {
  process.stderr.write("usage: node bench/cpuprofile.mjs FILE.cpuprofile [--top N] [--match TEXT]\n");
  process.exit(2);
}
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const top = Number(opt("--top", "25"));
const match = opt("--match", null);
const linesOf = opt("--lines", null);

const profile = JSON.parse(readFileSync(file, "utf8"));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Sample durations: timeDeltas[i] is the time before sample i; attribute it to sample i.
const selfTime = new Map();
const deltas = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  const dt = deltas[i + 1] ?? 0;
  selfTime.set(id, (selfTime.get(id) ?? 0) + dt);
}

const label = (n) => {
  const f = n.callFrame;
  const name = f.functionName || "(anonymous)";
  if (f.url === "") return name;
  return `${name} ${basename(f.url)}:${f.lineNumber + 1}`;
};
const matches = (n) =>
  match === null || (n.callFrame.functionName ?? "").includes(match) || (n.callFrame.url ?? "").includes(match);

/** True when node id has an ancestor-or-self that matches. */
const underMatch = new Map();
const isUnder = (id) => {
  if (match === null) return true;
  if (underMatch.has(id)) return underMatch.get(id);
  const n = nodes.get(id);
  const r = matches(n) || (parent.has(id) ? isUnder(parent.get(id)) : false);
  underMatch.set(id, r);
  return r;
};

const self = new Map();
const total = new Map();
let sum = 0;
for (const [id, t] of selfTime) {
  if (!isUnder(id)) continue;
  const n = nodes.get(id);
  const key = label(n);
  if (key === "(idle)" || key === "(program)") {
    if (match !== null) continue;
  }
  sum += t;
  self.set(key, (self.get(key) ?? 0) + t);
  // Inclusive time: count once per distinct function on the stack.
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const k = label(nodes.get(cur));
    if (seen.has(k)) continue;
    seen.add(k);
    total.set(k, (total.get(k) ?? 0) + t);
    if (match !== null && matches(nodes.get(cur))) break;
  }
}

const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
const pct = (t) => `${((100 * t) / sum).toFixed(1).padStart(5)}%`;
process.stdout.write(`${file}: ${(sum / 1000).toFixed(0)} ms sampled${match === null ? "" : ` under "${match}"`}\n`);
process.stdout.write(`${"self".padStart(6)}  ${"total".padStart(6)}  function\n`);
for (const [k, t] of rows) process.stdout.write(`${pct(t)}  ${pct(total.get(k) ?? t)}  ${k}\n`);

if (linesOf !== null) {
  const ticks = new Map();
  let all = 0;
  let url = "";
  for (const n of profile.nodes) {
    if (n.callFrame.functionName !== linesOf) continue;
    url = n.callFrame.url;
    for (const { line, ticks: t } of n.positionTicks ?? []) {
      ticks.set(line, (ticks.get(line) ?? 0) + t);
      all += t;
    }
  }
  const path = url.startsWith("file:") ? fileURLToPath(url) : url;
  const text = existsSync(path) ? readFileSync(path, "utf8").split("\n") : [];
  process.stdout.write(`\nhot lines of ${linesOf} (${all} self ticks) in ${basename(path)}:\n`);
  for (const [line, t] of [...ticks.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(
      `${((100 * t) / all).toFixed(1).padStart(5)}%  ${String(line).padStart(5)}  ${(text[line - 1] ?? "").trim().slice(0, 150)}\n`,
    );
  }
}
