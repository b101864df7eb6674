// Scenario: decisions per second and per-decision latency at each size, with a fresh decision object
// per call and with a caller-supplied `out`; at the largest size also per request kind.
import type { Decision, Engine } from "../src/index.js";
import { type BatchResult, type Row, batchRow, fmtOps, log, sink, timeBatches, timeRounds } from "./benchUtil.js";
import { type RequestKind, type SizeName, fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

/** Decisions per tinybench sample. */
export const DECIDE_BATCH = 1_000;

/** A tinybench batch: DECIDE_BATCH decisions over `pool`, cycled, into `out` when one is given. */
function decideBatch(engine: Engine, pool: readonly unknown[], out?: Decision): () => void {
  let k = 0;
  return () => {
    let acc = 0;
    for (let i = 0; i < DECIDE_BATCH; i++) {
      acc += engine.decide(pool[k], out).reason.length;
      if (++k === pool.length) k = 0;
    }
    sink.value += acc;
  };
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  for (const size of ctx.sizes) {
    const f = fixture(size);
    const engine = f.engine;
    const pool = f.set.requests;
    const n = pool.length;
    const freshBatch = decideBatch(engine, pool);
    const outBatch = decideBatch(engine, pool, engine.decide(pool[0]));
    const timing = { timeMs: ctx.quick ? 700 : 2_400, warmupMs: ctx.quick ? 200 : 300 };
    const rounds = ctx.quick ? 1 : 3;
    const note = (r: BatchResult) =>
      `${n.toLocaleString("en-US")} requests cycled; batches of ${DECIDE_BATCH}${r.roundsOpsPerSec === undefined || rounds === 1 ? "" : `; median of ${rounds} rounds (${r.roundsOpsPerSec.map((x) => fmtOps(x)).join(", ")})`}`;
    const fresh = await timeRounds(`decide ${size}`, freshBatch, DECIDE_BATCH, timing, rounds);
    log(`  decide ${size}: ${fresh.opsPerSec.toFixed(0)} decisions/s (fresh decision)`);
    rows.push(batchRow("decide", size, "decide(request)", fresh, note(fresh)));
    ctx.facts[`decide.${size}.fresh`] = fresh;
    const reused = await timeRounds(`decide ${size} out`, outBatch, DECIDE_BATCH, timing, rounds);
    log(`  decide ${size}: ${reused.opsPerSec.toFixed(0)} decisions/s (caller-supplied out)`);
    rows.push(batchRow("decide", size, "decide(request, out)", reused, note(reused)));
    ctx.facts[`decide.${size}.out`] = reused;
  }
  if (!ctx.quick && ctx.sizes.includes("L")) {
    rows.push(...(await byKind("L", ctx)));
    rows.push(await warmPool("L", ctx));
  }
  return rows;
}

/** Requests in a cycled pool of the warm-pool row: small enough that they and the indexes they touch stay in cache. */
const WARM_POOL = 1_000;

/**
 * The same decisions with a small pool: the rows above cycle 200,000 requests, so most reads of a
 * request, its strings and the indexes miss the CPU caches (as in a busy gateway serving a large
 * building); this row shows the cost of the work itself.
 */
async function warmPool(size: SizeName, ctx: ScenarioContext): Promise<Row> {
  const engine = fixture(size).engine;
  // Fresh copies, so the pool's objects sit together in memory like freshly parsed requests.
  const pool = fixture(size)
    .set.requests.slice(0, WARM_POOL)
    .map((r) => JSON.parse(JSON.stringify(r)) as unknown);
  const r = await timeRounds(
    `decide ${size} warm`,
    decideBatch(engine, pool, engine.decide(pool[0])),
    DECIDE_BATCH,
    { timeMs: 1_500, warmupMs: 300 },
    3,
  );
  log(`  decide ${size}: ${r.opsPerSec.toFixed(0)} decisions/s (warm ${WARM_POOL}-request pool)`);
  ctx.facts[`decide.${size}.warm`] = r;
  return batchRow(
    "decide",
    size,
    `decide(request, out), ${WARM_POOL.toLocaleString("en-US")}-request pool`,
    r,
    `the first ${WARM_POOL.toLocaleString("en-US")} requests cycled (caches warm); median of 3 rounds`,
  );
}

/** Per request kind at one size, with a caller-supplied `out`: where the time goes by request shape. */
async function byKind(size: SizeName, ctx: ScenarioContext): Promise<Row[]> {
  const f = fixture(size);
  const engine = f.engine;
  const rows: Row[] = [];
  const kinds = [...new Set(f.set.kinds)].sort() as RequestKind[];
  for (const kind of kinds) {
    const pool = f.set.requests.filter((_, i) => f.set.kinds[i] === kind);
    const n = pool.length;
    const r = await timeBatches(
      `decide ${size} ${kind}`,
      decideBatch(engine, pool, engine.decide(pool[0])),
      DECIDE_BATCH,
      { timeMs: ctx.quick ? 300 : 700, warmupMs: 150 },
    );
    rows.push(batchRow("decide by kind", size, kind, r, `${n.toLocaleString("en-US")} requests; with out`));
  }
  return rows;
}
