// Scenario: load time of a snapshot — validation (parseSnapshot, zod) and compilation (createEngine) —
// first in the process (compiling also builds the zone tables of zones not seen before) and warm
// (median of several runs); and the whole load of a file's text as the CLI and the server do it:
// JSON.parse, parseSnapshot with `plainJson` (no defensive copy of what JSON.parse just made), createEngine.
import { createEngine, loadEngine, parseSnapshot } from "../src/index.js";
import { type Row, fmtMs, log, median, timeRuns } from "./benchUtil.js";
import { type SizeName, fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

const RUNS: Record<SizeName, { parse: number; compile: number }> = {
  S: { parse: 10, compile: 20 },
  M: { parse: 3, compile: 5 },
  L: { parse: 2, compile: 3 },
};

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  for (const size of ctx.sizes) {
    const f = fixture(size);
    const runs = RUNS[size];
    const parseRuns = ctx.quick ? Math.min(2, runs.parse) : runs.parse;
    const compileRuns = ctx.quick ? Math.min(3, runs.compile) : runs.compile;
    const holders = f.spec.holders;

    const parse = timeRuns(
      parseRuns,
      () => JSON.parse(f.json) as unknown,
      (input) => {
        if (!parseSnapshot(input).ok) throw new Error("invalid");
      },
    );
    const load = timeRuns(
      parseRuns,
      () => f.json,
      (text) => {
        if (!loadEngine(JSON.parse(text), { plainJson: true }).ok) throw new Error("invalid");
      },
    );
    const snapshot = f.engine.snapshot;
    const compile = timeRuns(
      compileRuns,
      () => snapshot,
      (s) => createEngine(s),
    );
    const m = median(compile);
    log(
      `  compile ${size}: first ${f.compileMs.toFixed(0)} ms, median ${m.toFixed(0)} ms; parse median ${median(parse).toFixed(0)} ms`,
    );
    rows.push({
      section: "compile",
      size,
      name: "createEngine, first in process",
      value: fmtMs(f.compileMs),
      note: "builds the zone tables of its zones",
    });
    rows.push({
      section: "compile",
      size,
      name: "createEngine, warm",
      value: `${fmtMs(m)} (${((m * 1e6) / holders).toFixed(0)} ns/holder)`,
      note: `median of ${compileRuns}; min ${fmtMs(compile[0]!)}, max ${fmtMs(compile[compile.length - 1]!)}`,
    });
    rows.push({
      section: "compile",
      size,
      name: "parseSnapshot (validation)",
      value: fmtMs(median(parse)),
      note: `median of ${parseRuns} (first in process ${fmtMs(f.parseMs)}); JSON.parse not included`,
    });
    ctx.facts[`compile.${size}.firstMs`] = f.compileMs;
    ctx.facts[`compile.${size}.warmMs`] = m;
    rows.push({
      section: "compile",
      size,
      name: "load: JSON.parse + parseSnapshot (plainJson) + createEngine",
      value: fmtMs(median(load)),
      note: `median of ${parseRuns}; what rsop decide and rsop serve pay for a file's text`,
    });
    ctx.facts[`parse.${size}.ms`] = median(parse);
    ctx.facts[`load.${size}.ms`] = median(load);
  }
  return rows;
}
