// Scenario: scans per second at a cloud node (N45–N58), in one run, three ways over the same scans —
// the example requests (examples/requests.jsonl, 23 lines, `node` removed as a scan must have it,
// each at its fixed instant), cycled:
//
// (a) baseline: in-process `engine.decide(request, out)` on an engine of examples/building.json —
//     the decisions alone, no line protocol, no events.
// (a′) diagnosis: the line protocol alone (ScanLines + ScanAnswerer over that engine, an online
//     contact state), chunked as (b): what parsing, filling in `node` and writing answers add to (a).
// (b) the node in process: CloudNode.scanStream (src/node/cloudNode.ts) fed the JSON Lines text in
//     64 KiB chunks (a pipe's), yielding to the event loop between chunks as a stream does: per
//     chunk the lines are parsed, `node` filled in from the contact state, decided, each decision's
//     access event queued in the node's SQLite file (one transaction per chunk, N56), and the answer
//     lines written (counted here). The node uploads the queue meanwhile, as it does in service.
// (c) end to end: `rsop node` (the built CLI, `node dist/cli.js node`) in a child process, the scans
//     written to its stdin and its answers read from its stdout: from the first byte written to the
//     last answer line read (so the pipes both ways are in it).
//
// (b) and (c) run against a real service (`rsop serve --data`, the built CLI in a child process on
// 127.0.0.1, the example building imported as a customer, the node's token; see
// nodePropagation.bench.ts), as node-chicago-main, one after the other, each with a new data file,
// after a warm-up of a few thousand scans. Rounds: 3 (1 with --quick), scans/s is the median round.
// Every answer line is counted and none may be an error line (that would measure the wrong thing).
// Temporary files are removed and every process started is stopped at the end, also on failure.
//
//   npm run bench -- --only nodeScans [--quick] [--out bench/results/nodes.json]
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { type Decision, type Engine, loadEngineOrThrow } from "../src/index.js";
import type { CloudNode } from "../src/node/cloudNode.js";
import { ContactState } from "../src/node/contact.js";
import { ScanAnswerer, ScanLines } from "../src/node/scanProtocol.js";
import { type BatchResult, type Row, batchRow, fmtMs, fmtOps, log, median, sink, timeRounds } from "./benchUtil.js";
import { NODE_ID, type NodeService, kill, startNode, startNodeService } from "./nodePropagation.bench.js";
import type { ScenarioContext } from "./scenario.js";

const CLI = resolve("dist/cli.js");
const SECTION = "nodes";
/** Bytes of scan input per push: what a read from a pipe hands over at most. */
const CHUNK = 64 * 1024;
const WARM_UP = 5_000;
/** Decisions per tinybench sample of the baseline. */
const BATCH = 1_000;

/** The example requests as scans: each without `node` (the node fills it in, N46). */
function exampleScans(): Record<string, unknown>[] {
  return readFileSync(resolve("examples/requests.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const r = JSON.parse(l) as Record<string, unknown>;
      delete r.node;
      return r;
    });
}

/** `n` scan lines, the examples cycled, as bytes. */
function scanText(scans: readonly Record<string, unknown>[], n: number): Buffer {
  const lines = scans.map((s) => JSON.stringify(s));
  return Buffer.from(`${Array.from({ length: n }, (_, i) => lines[i % lines.length]).join("\n")}\n`);
}

/** Counts answer lines and error lines in the answer text as it comes, in pieces of any size. */
class AnswerCount {
  lines = 0;
  errors = 0;
  #waiting: { target: number; resolve: (t: number) => void } | null = null;

  take(text: string): void {
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.lines++;
    // An answer line is `{"line":n,"outcome":…}`; an error line `{"line":n,"error":{…}}` (N49).
    for (let i = text.indexOf(',"error":{'); i !== -1; i = text.indexOf(',"error":{', i + 1)) this.errors++;
    const w = this.#waiting;
    if (w !== null && this.lines >= w.target) {
      this.#waiting = null;
      w.resolve(performance.now());
    }
  }

  /** Resolves with performance.now() when `target` lines have come. */
  reach(target: number): Promise<number> {
    if (this.lines >= target) return Promise.resolve(performance.now());
    return new Promise((resolveAt) => {
      this.#waiting = { target, resolve: resolveAt };
    });
  }
}

/** (a): engine.decide over the scans at their instants, a reused decision (as the node's answerer reuses one). */
async function baseline(
  engine: Engine,
  scans: readonly Record<string, unknown>[],
  quick: boolean,
): Promise<BatchResult> {
  const out: Decision = engine.decide(scans[0]);
  let k = 0;
  const batch = () => {
    let acc = 0;
    for (let i = 0; i < BATCH; i++) {
      acc += engine.decide(scans[k], out).reason.length;
      if (++k === scans.length) k = 0;
    }
    sink.value += acc;
  };
  const timing = { timeMs: quick ? 700 : 2_400, warmupMs: quick ? 200 : 300 };
  return timeRounds("node scans baseline", batch, BATCH, timing, quick ? 1 : 3);
}

/**
 * The diagnosis between (a) and (b): the line protocol alone (ScanLines and ScanAnswerer over the
 * engine, an online contact state), chunked as (b) is, with no events queued and no service.
 */
async function protocolRound(engine: Engine, text: Buffer, lines: number): Promise<number> {
  const count = new AnswerCount();
  const contact = new ContactState();
  contact.contact();
  let out: string[] = [];
  const scan = new ScanLines(new ScanAnswerer(engine, contact), (a) => out.push(a));
  const settle = () => {
    if (out.length > 0) count.take(`${out.join("\n")}\n`);
    out = [];
  };
  const t0 = performance.now();
  for (let at = 0; at < text.length; at += CHUNK) {
    scan.push(text.subarray(at, at + CHUNK));
    settle();
    await nextTurn();
  }
  scan.end();
  settle();
  const t1 = await count.reach(lines);
  if (count.errors > 0 || count.lines !== lines)
    throw new Error(`the line protocol answered ${count.lines} lines (${count.errors} errors) for ${lines}`);
  return t1 - t0;
}

/** (b), one round: `text` pushed into a new scan stream in CHUNK pieces; ms from the first push to the last answer. */
async function inProcessRound(node: CloudNode, text: Buffer, lines: number): Promise<number> {
  const count = new AnswerCount();
  const stream = node.scanStream((answers) => count.take(answers));
  const t0 = performance.now();
  for (let at = 0; at < text.length; at += CHUNK) {
    stream.push(text.subarray(at, at + CHUNK));
    await nextTurn();
  }
  stream.end();
  const t1 = await count.reach(lines);
  if (count.errors > 0 || count.lines !== lines)
    throw new Error(`the node answered ${count.lines} lines (${count.errors} errors) for ${lines}`);
  return t1 - t0;
}

/** `rsop node` on `svc` over stdin/stdout; its answers counted as they come. */
function nodeChild(svc: NodeService, dataFile: string): { child: ChildProcess; count: AnswerCount; log: () => string } {
  const args = ["node", "--service", svc.url.origin, "--system", svc.systemId, "--node", NODE_ID, "--data", dataFile];
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, RSOP_NODE_TOKEN: svc.nodeToken },
  });
  const count = new AnswerCount();
  let text = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (s: string) => count.take(s));
  child.stderr!.on("data", (b: Buffer) => {
    text = (text + b.toString("utf8")).slice(-4000);
  });
  // A child that exits early leaves its stdin broken: the write errors are answered by the exit below.
  child.stdin!.on("error", () => undefined);
  return { child, count, log: () => text };
}

/** Resolves `p`, or rejects when the child exits first or `ms` pass. */
function racing<T>(p: Promise<T>, child: ChildProcess, ms: number, what: string, log: () => string): Promise<T> {
  return new Promise((resolveIt, reject) => {
    const fail = (why: string) => reject(new Error(`rsop node: ${why} waiting for ${what}: ${log()}`));
    const timer = setTimeout(() => fail(`no answer in ${ms / 1000} s`), ms);
    const onExit = (code: number | null) => fail(`exited (${code})`);
    child.once("exit", onExit);
    p.then(
      (v) => {
        clearTimeout(timer);
        child.off("exit", onExit);
        resolveIt(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        child.off("exit", onExit);
        reject(e);
      },
    );
  });
}

/** (c): a warm-up, then `rounds` rounds on one `rsop node` process's stdin; ms per round. */
async function processRounds(svc: NodeService, text: Buffer, lines: number, warm: Buffer, rounds: number) {
  const { child, count, log: childLog } = nodeChild(svc, join(svc.dir, "node-child.db"));
  try {
    child.stdin!.write(warm);
    let expected = WARM_UP;
    // The first answers come once the node has downloaded its system and heard from the service (N57).
    await racing(count.reach(expected), child, 120_000, "the warm-up answers", childLog);
    const times: number[] = [];
    for (let r = 0; r < rounds; r++) {
      expected += lines;
      const t0 = performance.now();
      child.stdin!.write(text);
      const t1 = await racing(count.reach(expected), child, 300_000, `round ${r + 1}`, childLog);
      times.push(t1 - t0);
    }
    if (count.errors > 0) throw new Error(`rsop node answered ${count.errors} error lines: ${childLog()}`);
    // The end of stdin: the node uploads what it can for up to 10 s and exits 0; not timed.
    child.stdin!.end();
    await new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      const timer = setTimeout(done, 60_000);
      child.once("exit", () => {
        clearTimeout(timer);
        done();
      });
    });
    return times;
  } finally {
    await kill(child);
  }
}

function scansRow(name: string, times: readonly number[], lines: number, base: number, note: string): Row {
  const rates = times.map((t) => (lines * 1000) / t);
  const rate = median(rates);
  return {
    section: SECTION,
    size: "",
    name,
    opsPerSec: rate,
    meanNs: 1e9 / rate,
    value: `${(rate / base).toFixed(3)}× (a)`,
    note: `${lines.toLocaleString("en-US")} scans per round, median of ${times.length} (${rates.map((x) => fmtOps(x)).join(", ")}); ${note}`,
  };
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  if (!existsSync(CLI))
    return [{ section: SECTION, size: "", name: "node scans", note: "skipped: dist/cli.js missing" }];
  const scans = exampleScans();
  const lines = ctx.quick ? 20_000 : 50_000;
  const rounds = ctx.quick ? 1 : 3;
  const text = scanText(scans, lines);
  const warm = scanText(scans, WARM_UP);
  const engine = loadEngineOrThrow(JSON.parse(readFileSync(resolve("examples/building.json"), "utf8")));
  const a = await baseline(engine, scans, ctx.quick);
  log(`  nodes: (a) engine.decide ${fmtOps(a.opsPerSec)}`);
  await protocolRound(engine, warm, WARM_UP);
  const protocol: number[] = [];
  for (let r = 0; r < rounds; r++) protocol.push(await protocolRound(engine, text, lines));
  const svc = await startNodeService("node-scans");
  let node: CloudNode | undefined;
  try {
    node = await startNode(svc, "node-in-process.db", []);
    await inProcessRound(node, warm, WARM_UP);
    const inProcess: number[] = [];
    for (let r = 0; r < rounds; r++) inProcess.push(await inProcessRound(node, text, lines));
    const pending = node.status().pendingEvents;
    const f0 = performance.now();
    await node.flush();
    const flushMs = performance.now() - f0;
    await node.close();
    node = undefined;
    log(`  nodes: (b) scanStream ${fmtOps((lines * 1000) / median(inProcess))}`);
    const child = await processRounds(svc, text, lines, warm, rounds);
    log(`  nodes: (c) rsop node ${fmtOps((lines * 1000) / median(child))}`);
    const b = scansRow(
      "(b) scans, CloudNode.scanStream in process",
      inProcess,
      lines,
      a.opsPerSec,
      `64 KiB chunks, events queued in SQLite per chunk, uploads running; ${pending.toLocaleString("en-US")} events still queued after the last round, uploaded in ${fmtMs(flushMs)}`,
    );
    const c = scansRow(
      "(c) scans, rsop node child process (stdin → stdout)",
      child,
      lines,
      a.opsPerSec,
      "first byte written to the last answer line read; one process, rounds one after the other",
    );
    ctx.facts["nodes.scans.decidePerSec"] = a.opsPerSec;
    ctx.facts["nodes.scans.inProcessPerSec"] = b.opsPerSec;
    ctx.facts["nodes.scans.processPerSec"] = c.opsPerSec;
    ctx.facts["nodes.scans.inProcessRatio"] = b.opsPerSec! / a.opsPerSec;
    ctx.facts["nodes.scans.processRatio"] = c.opsPerSec! / a.opsPerSec;
    return [
      batchRow(
        SECTION,
        "",
        "(a) scans, engine.decide in process (baseline)",
        a,
        `the ${scans.length} example requests without node, at their instants, cycled; a reused decision; batches of ${BATCH}`,
      ),
      scansRow(
        "(a′) scans, the line protocol alone in process (diagnosis)",
        protocol,
        lines,
        a.opsPerSec,
        "ScanLines + ScanAnswerer over (a)'s engine, online, chunked as (b); no events, no service",
      ),
      b,
      c,
    ];
  } finally {
    await node?.close();
    await svc.close();
  }
}
