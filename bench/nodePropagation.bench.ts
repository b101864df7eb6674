// Scenario: change-to-node propagation (docs/semantics.md N14–N17, N53–N56) — how long after a write's
// answer a cloud node decides by it, with the service idle and under write load, in one run.
//
// The service is `rsop serve --data FILE.db` (the built CLI, `node dist/cli.js serve`, in a child
// process on 127.0.0.1 with RSOP_TOKEN, as the tenants scenario runs it) on a temporary SQLite
// service database; a customer with examples/building.json imported (300 holders) and a token of
// its cloud node node-chicago-main, made over HTTP as an operator would. The node is a CloudNode
// (src/node/cloudNode.ts) in this process, with its own temporary data file: it downloads the
// system and follows the change feed, storing every change it applies.
//
// A marker is `PUT /{system}/holders/{id}` of one holder kept for markers, with a new last name; its
// propagation time runs from the marker's 2xx answer (as this client saw it) to the moment the
// node's engine holds that last name (polled every millisecond: the resolution is about 1 ms). The
// change applies whole (engine, status().revision and the data file together), so that is the moment
// the node's revision reached the marker's. Markers are sent one at a time, 5–20 ms apart after the
// last one arrived, from their own keep-alive connection:
//
// - idle: nothing else writes.
// - saturated: WRITERS clients PUT other holders (a new first name each), each its next write as
//   soon as the last is answered; the write rate achieved during the markers is reported.
// - steady: the same clients at half the rate the saturated phase achieved, evenly spaced.
//
// The writers and the marker client share this process with the node: their HTTP work competes with
// the node's on one event loop (on a 2-core machine the service child takes the other core).
// Temporary files are removed and the service and node are stopped at the end, also on failure.
//
//   npm run bench -- --only nodePropagation [--quick] [--out bench/results/nodes.json]
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CloudNode } from "../src/node/cloudNode.js";
import { type Row, fmtMs, log, quantile } from "./benchUtil.js";
import { type Reply, call as serviceCall } from "./service.bench.js";
import type { ScenarioContext } from "./scenario.js";

const CLI = resolve("dist/cli.js");
const SECTION = "nodes";
/** The root organization's admin token of the bench's service. */
const TOKEN = "bench-nodes-root-admin-0123456789";
/** The cloud node of examples/building.json the benches run as. */
export const NODE_ID = "node-chicago-main";
/** Concurrent writer clients of the loaded phases. */
const WRITERS = 8;

/** One request with the admin's bearer token over a keep-alive agent, the body as JSON. */
export function call(agent: Agent, url: URL, method: string, path: string, body?: unknown): Promise<Reply> {
  return serviceCall(agent, url, method, path, body === undefined ? undefined : JSON.stringify(body), TOKEN);
}

/** A call that must answer 2xx (a benchmark counting refusals measures the wrong thing); its parsed body. */
export async function callOk(agent: Agent, url: URL, method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await call(agent, url, method, path, body);
  if (r.status < 200 || r.status > 299)
    throw new Error(`${method} ${path} answered ${r.status}: ${r.body.slice(0, 500)}`);
  return r.body === "" ? undefined : (JSON.parse(r.body) as unknown);
}

/** A running service child with a customer system and a node token, and the temporary directory of the run. */
export interface NodeService {
  readonly dir: string;
  readonly url: URL;
  /** The bench's own keep-alive connections (setup, markers). */
  readonly agent: Agent;
  readonly systemId: string;
  readonly nodeToken: string;
  /** Stops (SIGKILL) every process started for it and removes the directory. */
  close(): Promise<void>;
}

/** Ends a child process (SIGKILL unless it already exited) and waits for its exit. */
export function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once("exit", () => done());
    child.kill("SIGKILL");
  });
}

/** Spawns `rsop serve --data db --port 0` with RSOP_TOKEN; resolves once it listens. Its log is read and dropped. */
function serve(db: string): Promise<{ child: ChildProcess; url: URL }> {
  const child = spawn(process.execPath, [CLI, "serve", "--data", db, "--port", "0"], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, RSOP_TOKEN: TOKEN },
  });
  let text = "";
  let listening = false;
  return new Promise((resolveServer, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve did not start in 120 s: ${text.slice(0, 2000)}`));
    }, 120_000);
    child.stderr!.on("data", (b: Buffer) => {
      if (listening) return;
      text += b.toString("utf8");
      const m = / on (http:\/\/127\.0\.0\.1:\d+)\s/.exec(text);
      if (m === null) return;
      listening = true;
      clearTimeout(timer);
      resolveServer({ child, url: new URL(m[1]!) });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (!listening) reject(new Error(`serve exited (${code ?? signal}) before listening: ${text.slice(0, 2000)}`));
    });
  });
}

/**
 * A service child on a new database in a new temporary directory, a customer under a dealer with
 * examples/building.json imported (as test/nodes/nodeSupport.ts importSystem makes it), and a token of
 * NODE_ID. On failure everything started is stopped and removed before the error is thrown.
 */
export async function startNodeService(name: string): Promise<NodeService> {
  if (!existsSync(CLI)) throw new Error("dist/cli.js missing (npm run build)");
  const dir = mkdtempSync(join(tmpdir(), `rsop-bench-${name}-`));
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  let child: ChildProcess | undefined;
  const close = async () => {
    agent.destroy();
    if (child !== undefined) await kill(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const served = await serve(join(dir, "service.db"));
    child = served.child;
    const url = served.url;
    const mine = (await callOk(agent, url, "GET", "/api/organizations/mine")) as { id: string }[];
    const dealer = (await callOk(agent, url, "POST", `/api/organizations/${mine[0]!.id}/children`, {
      name: "Dealer",
    })) as {
      id: string;
    };
    const building = JSON.parse(readFileSync(resolve("examples/building.json"), "utf8")) as object;
    const customer = (await callOk(agent, url, "POST", `/api/organizations/${dealer.id}/children`, {
      name: "Customer",
      import: { ...building, systemId: randomUUID() },
    })) as { systemId: string };
    const systemId = customer.systemId;
    const made = (await callOk(agent, url, "POST", `/${systemId}/cloud-nodes/${NODE_ID}/token`)) as { token: string };
    return { dir, url, agent, systemId, nodeToken: made.token, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Starts the in-process node on `svc` with a data file in its directory; resolves once it is ready (N57). */
export async function startNode(svc: NodeService, file: string, logLines: string[]): Promise<CloudNode> {
  const node = await CloudNode.start({
    service: svc.url.origin,
    systemId: svc.systemId,
    nodeId: NODE_ID,
    token: svc.nodeToken,
    dataFile: join(svc.dir, file),
    log: (line) => logLines.push(line),
  });
  await node.ready();
  return node;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves with performance.now() once `check` holds, polled every millisecond; throws after `ms`. */
async function when(check: () => boolean, ms: number, what: string): Promise<number> {
  const end = performance.now() + ms;
  for (;;) {
    if (check()) return performance.now();
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(1);
  }
}

/** A holder as `PUT /{system}/holders/{id}` takes it (the fields of its GET, as the node feed test sends them). */
type HolderBody = Record<string, unknown> & { firstName: string; lastName: string };

async function holderBodies(svc: NodeService): Promise<{ id: string; body: HolderBody }[]> {
  const fields = ["partition", "enabled", "activeDate", "expireDate", "pin", "duressPin", "email", "customFields"];
  const out: { id: string; body: HolderBody }[] = [];
  for (let page = 0; ; page++) {
    const got = (await callOk(
      svc.agent,
      svc.url,
      "GET",
      `/${svc.systemId}/holders?per_page=100&page=${page}`,
    )) as Record<string, unknown>[];
    for (const h of got) {
      const body = Object.fromEntries(fields.filter((f) => f in h).map((f) => [f, h[f]]));
      out.push({ id: String(h.id), body: { ...body, firstName: String(h.firstName), lastName: String(h.lastName) } });
    }
    if (got.length < 100) return out;
  }
}

interface Spread {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
  readonly n: number;
}

function spread(xs: readonly number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { p50: quantile(s, 0.5), p99: quantile(s, 0.99), max: s[s.length - 1]!, mean, n: s.length };
}

/** The writer load: WRITERS clients PUTting holders, as fast as answered or at `rate` writes/s overall. */
class WriteLoad {
  readonly latencies: number[] = [];
  acks = 0;
  #stopped = false;
  readonly #agent = new Agent({ keepAlive: true, maxSockets: WRITERS });
  readonly #done: Promise<void>;

  constructor(svc: NodeService, holders: readonly { id: string; body: HolderBody }[], rate: number | null) {
    const t0 = performance.now();
    let slot = 0;
    let n = 0;
    const client = async (j: number) => {
      const mine = holders.filter((_, i) => i % WRITERS === j);
      for (let k = 0; !this.#stopped; k++) {
        if (rate !== null) {
          // Evenly spaced: write number `slot` is due at t0 + slot / rate, whoever sends it.
          const due = t0 + (slot++ * 1000) / rate;
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          if (this.#stopped) return;
        }
        const h = mine[k % mine.length]!;
        const s = performance.now();
        await callOk(this.#agent, svc.url, "PUT", `/${svc.systemId}/holders/${h.id}`, {
          ...h.body,
          firstName: `w${n++}`,
        });
        this.latencies.push(performance.now() - s);
        this.acks++;
      }
    };
    this.#done = Promise.all(Array.from({ length: WRITERS }, (_, j) => client(j))).then(() => undefined);
    // Handled here so that a failed write can't end the process before stop() reports it (and the
    // finally blocks stop the service and the node).
    this.#done.catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    try {
      await this.#done;
    } finally {
      this.#agent.destroy();
    }
  }
}

interface MarkerRun {
  readonly propagation: Spread;
  readonly write: Spread;
  /** Wall time of the markers, ms. */
  readonly ms: number;
}

/** `count` markers, one at a time: each PUT's answer to the node's engine holding it. */
async function markers(
  svc: NodeService,
  node: CloudNode,
  marker: { id: string; body: HolderBody },
  count: number,
  tag: string,
): Promise<MarkerRun> {
  const lastName = () => node.engine?.snapshot.holders.find((h) => h.id === marker.id)?.lastName;
  const propagation: number[] = [];
  const write: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const name = `${tag}-${i}`;
    const s = performance.now();
    await callOk(svc.agent, svc.url, "PUT", `/${svc.systemId}/holders/${marker.id}`, {
      ...marker.body,
      lastName: name,
    });
    const answered = performance.now();
    write.push(answered - s);
    const seen = await when(() => lastName() === name, 60_000, `marker ${name} at the node`);
    propagation.push(seen - answered);
    await sleep(5 + Math.random() * 15);
  }
  return { propagation: spread(propagation), write: spread(write), ms: performance.now() - t0 };
}

function propagationRow(name: string, r: MarkerRun, load: string): Row {
  const p = r.propagation;
  return {
    section: SECTION,
    size: "",
    name,
    meanNs: p.mean * 1e6,
    p50Ns: p.p50 * 1e6,
    p99Ns: p.p99 * 1e6,
    value: `max ${fmtMs(p.max)}`,
    note: `${p.n} markers (PUT /holders/{id}), answer → node engine holds it, polled every 1 ms; marker write p50 ${fmtMs(r.write.p50)}, p99 ${fmtMs(r.write.p99)}; ${load}`,
  };
}

interface Phase {
  readonly run: MarkerRun;
  readonly rate: number;
  readonly writes: Spread;
}

/** Markers with a write load running (started a second before, stopped after); the node catches up after. */
async function loaded(
  svc: NodeService,
  node: CloudNode,
  holders: readonly { id: string; body: HolderBody }[],
  marker: { id: string; body: HolderBody },
  rate: number | null,
  count: number,
  tag: string,
): Promise<Phase> {
  const load = new WriteLoad(svc, holders, rate);
  let run: MarkerRun;
  let acks: number;
  try {
    await sleep(1000);
    const before = load.acks;
    const from = load.latencies.length;
    run = await markers(svc, node, marker, count, tag);
    acks = load.acks - before;
    const writes = spread(load.latencies.slice(from));
    await load.stop();
    // One more marker, untimed: the node has taken every write of the phase before the next one starts.
    await markers(svc, node, marker, 1, `${tag}-settle`);
    return { run, rate: (acks * 1000) / run.ms, writes };
  } finally {
    await load.stop();
  }
}

function loadRow(name: string, p: Phase): Row {
  return {
    section: SECTION,
    size: "",
    name,
    opsPerSec: p.rate,
    p50Ns: p.writes.p50 * 1e6,
    p99Ns: p.writes.p99 * 1e6,
    note: `${WRITERS} clients, PUT /holders/{id} (a new first name), acknowledged writes/s during the markers; latency per write`,
  };
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  if (!existsSync(CLI))
    return [{ section: SECTION, size: "", name: "change-to-node propagation", note: "skipped: dist/cli.js missing" }];
  const count = ctx.quick ? 50 : 200;
  const svc = await startNodeService("node-propagation");
  const logLines: string[] = [];
  let node: CloudNode | undefined;
  try {
    node = await startNode(svc, "node.db", logLines);
    const holders = await holderBodies(svc);
    const marker = holders[holders.length - 1]!;
    const others = holders.slice(0, -1);
    await markers(svc, node, marker, 10, "warm-up");
    const idle = await markers(svc, node, marker, count, "idle");
    log(`  nodes: propagation idle p50 ${fmtMs(idle.propagation.p50)}, p99 ${fmtMs(idle.propagation.p99)}`);
    const full = await loaded(svc, node, others, marker, null, count, "saturated");
    log(
      `  nodes: under ${full.rate.toFixed(0)} writes/s: propagation p50 ${fmtMs(full.run.propagation.p50)}, p99 ${fmtMs(full.run.propagation.p99)}`,
    );
    const half = await loaded(svc, node, others, marker, full.rate / 2, count, "steady");
    log(
      `  nodes: under ${half.rate.toFixed(0)} writes/s: propagation p50 ${fmtMs(half.run.propagation.p50)}, p99 ${fmtMs(half.run.propagation.p99)}`,
    );
    const downloads = logLines.filter((l) => l.startsWith("downloaded the system")).length;
    const fact = (r: MarkerRun, rate?: number) => ({
      p50Ms: r.propagation.p50,
      p99Ms: r.propagation.p99,
      maxMs: r.propagation.max,
      markers: r.propagation.n,
      ...(rate === undefined ? {} : { writesPerSec: rate }),
    });
    ctx.facts["nodes.propagation.idle"] = fact(idle);
    ctx.facts["nodes.propagation.saturated"] = fact(full.run, full.rate);
    ctx.facts["nodes.propagation.steady"] = fact(half.run, half.rate);
    ctx.facts["nodes.propagation.downloads"] = downloads;
    const extra = downloads > 1 ? `; the node downloaded the system ${downloads} times (N61)` : "";
    return [
      propagationRow("change → node, idle service (baseline)", idle, `no other writes${extra}`),
      loadRow("write load, saturated (as fast as answered)", full),
      propagationRow("change → node, saturated write load", full.run, `during ${full.rate.toFixed(0)} writes/s`),
      loadRow("write load, steady (half the saturated rate)", half),
      propagationRow("change → node, steady write load", half.run, `during ${half.rate.toFixed(0)} writes/s`),
    ];
  } finally {
    await node?.close();
    await svc.close();
  }
}
