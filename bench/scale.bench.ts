// Scenario `--scale`: three replicas of `rsop serve --store postgres://…` (the built CLI, each in its
// own process) on one throwaway PostgreSQL cluster started from the machine's binaries
// (test/support/postgresCluster.ts), driven over 127.0.0.1 by 16 keep-alive clients in this process.
// Measured (size M unless --sizes names one):
//
// - baseline: bare PostgreSQL commits per second, 16 connections each committing one INSERT of a
//   change-sized row plus pg_notify, the shape of one append (what the database alone can take);
// - acknowledged writes per second through the 3 replicas (holder creates with a card, each client
//   writing to one replica in turn; every write stored in the log before its 2xx), latency p50/p99,
//   and how many races for the next sequence number replicas lost;
// - propagation: one client (the probe) writes on a replica and at once asks each other replica for
//   `GET /healthz` with `X-Rsop-Min-Revision` of that write; the delay from the acknowledgement to
//   that answer is an upper bound of the time until the change is visible there (it includes one
//   HTTP round trip), p50/p99 over every probe: first with the probe's writes alone, then while the
//   writes above flow;
// - decisions per second of one replica (batches of 100 through `POST /decisions`) with no writes
//   anywhere, then while 8 clients write to the two other replicas, then (control) while 8 clients
//   write to two replicas of another database, which it does not follow: per CPU-second of the
//   deciding replica, quiet against busy is the criterion; control against quiet is what the
//   machine's contention alone takes (2 cores shared with the writing replicas, PostgreSQL, clients).
//
// Every process started is stopped and the cluster removed at the end, also on failure.
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { findPostgres, startPostgresCluster } from "../test/support/postgresCluster.js";
import { type Row, fmtOps, log, quantile } from "./benchUtil.js";
import { killRunning, serveCli } from "./service.bench.js";
import { type SizeName, fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

const CLI = resolve("dist/cli.js");
const CLIENTS = 16;
const BATCH = 100;

interface Replica {
  readonly child: ChildProcess;
  readonly url: URL;
}

/** Starts a replica, `rsop serve --store URL …`, and resolves once it listens. */
function serve(store: string, extra: readonly string[]): Promise<Replica> {
  return serveCli(["--store", store], extra);
}

interface Reply {
  readonly status: number;
  readonly body: string;
  readonly revision: string | undefined;
}

function call(
  agent: Agent,
  url: URL,
  method: string,
  path: string,
  body?: string,
  extra: Record<string, string> = {},
): Promise<Reply> {
  return new Promise((resolveReply, reject) => {
    const headers: Record<string, string | number> = {
      ...extra,
      "content-length": body === undefined ? 0 : Buffer.byteLength(body),
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    const req = httpRequest({ agent, host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolveReply({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString("utf8"),
          revision: res.headers["x-rsop-revision"] as string | undefined,
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** User + system CPU seconds a child process has used so far (Linux /proc; NaN elsewhere). */
function cpuSeconds(child: ChildProcess): number {
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s on Linux)
  } catch {
    return Number.NaN;
  }
}

interface Load {
  /** Every latency, sorted (ms). */
  readonly latencies: readonly number[];
  readonly opsPerSec: number;
  readonly count: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** `clients` clients until `until` (ms, performance.now()); each answer must be 2xx. */
async function load(
  clients: number,
  until: number,
  next: (i: number, k: number) => { url: URL; method: string; path: string; body?: string },
  perRequest = 1,
): Promise<Load> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients * 3 });
  const latencies: number[] = [];
  let sent = 0;
  const t0 = performance.now();
  const client = async (k: number) => {
    while (performance.now() < until) {
      const op = next(sent++, k);
      const s = performance.now();
      const r = await call(agent, op.url, op.method, op.path, op.body);
      latencies.push(performance.now() - s);
      if (r.status < 200 || r.status > 299)
        throw new Error(`${op.method} ${op.path} answered ${r.status}: ${r.body.slice(0, 500)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: clients }, (_, k) => client(k)));
  } finally {
    agent.destroy();
  }
  const wall = (performance.now() - t0) / 1000;
  const sorted = latencies.sort((a, b) => a - b);
  return {
    latencies: sorted,
    opsPerSec: (latencies.length * perRequest) / wall,
    count: latencies.length,
    seconds: wall,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
  };
}

/** Loads of several phases as one: their operations over their summed time, the percentiles of all latencies. */
function pooled(loads: readonly Load[], perRequest: number): Load {
  const latencies = loads.flatMap((l) => l.latencies).sort((a, b) => a - b);
  const seconds = loads.reduce((s, l) => s + l.seconds, 0);
  const count = latencies.length;
  return {
    latencies,
    opsPerSec: (count * perRequest) / seconds,
    count,
    seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  };
}

interface Phase {
  readonly decided: Load;
  readonly written: Load | null;
  readonly cpu: number;
}

/** Bare commits/s: `clients` connections, each committing one change-sized INSERT + pg_notify at a time. */
async function bareCommits(url: string, clients: number, seconds: number): Promise<number> {
  const pg = (await import("pg")).default;
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(
    "CREATE TABLE bench_commits (seq bigserial PRIMARY KEY, time text NOT NULL, operation text NOT NULL, patches text NOT NULL)",
  );
  await setup.end();
  const operation = JSON.stringify({
    method: "POST",
    path: "/holders",
    body: {
      firstName: "Service",
      lastName: "Bench",
      credentials: [{ types: ["card"], credentialNumber: 910000000000, facilityCode: 1 }],
    },
  });
  const patches = JSON.stringify([
    {
      op: "add",
      path: ["holders", 10000],
      value: {
        id: "x".repeat(36),
        firstName: "Service",
        lastName: "Bench",
        credentials: [{ id: "y".repeat(36), types: ["card"], credentialNumber: 910000000000, facilityCode: 1 }],
      },
    },
  ]);
  let n = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        while (performance.now() < end) {
          await c.query(
            "WITH added AS (INSERT INTO bench_commits (time, operation, patches) VALUES ($1, $2, $3) RETURNING seq) SELECT pg_notify('bench', seq::text) FROM added",
            [new Date().toISOString(), operation, patches],
          );
          n++;
        }
      } finally {
        await c.end();
      }
    }),
  );
  return (n * 1000) / (performance.now() - t0);
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  if (!existsSync(CLI))
    return [
      { section: "scale", size: "", name: "rsop serve --store", note: "skipped: dist/cli.js missing (npm run build)" },
    ];
  const bins = findPostgres();
  if (!bins.ok) return [{ section: "scale", size: "", name: "rsop serve --store", note: `skipped: ${bins.why}` }];
  const size: SizeName = ctx.sizes.length === 3 ? "M" : ctx.sizes[0]!;
  const writeSeconds = ctx.quick ? 3 : 8;
  // Three rounds of three phases of decisions (see run): 27 s, where one round of 5 s phases was noisier.
  const decideSeconds = ctx.quick ? 2 : 3;
  const rounds = ctx.quick ? 1 : 3;
  const dir = mkdtempSync(join(tmpdir(), "rsop-bench-scale-"));
  const cluster = await startPostgresCluster(bins);
  try {
    const commits = await bareCommits(await cluster.createDatabase("bench_bare"), CLIENTS, ctx.quick ? 1.5 : 3);
    log(`  scale: bare PostgreSQL commits (INSERT + pg_notify, ${CLIENTS} connections): ${commits.toFixed(0)}/s`);
    rows.push({
      section: "scale",
      size: "",
      name: "baseline: bare PostgreSQL commits",
      opsPerSec: commits,
      note: `${CLIENTS} connections, one change-sized INSERT + pg_notify per transaction (fsync on, synchronous_commit on)`,
    });
    ctx.facts["scale.bareCommitsPerSec"] = commits;

    const f = fixture(size);
    const system = join(dir, "system.json");
    writeFileSync(system, f.json);
    const store = await cluster.createDatabase("bench_scale");
    // The first imports; the others then load what it imported.
    const first = await serve(store, ["--system", system]);
    const replicas = [first, ...(await Promise.all([serve(store, []), serve(store, [])]))];
    const otherStore = await cluster.createDatabase("bench_scale_control");
    const others = [await serve(otherStore, ["--system", system])];
    others.push(await serve(otherStore, []));
    const parsed = JSON.parse(f.json) as { systemId: string };
    const sys = `/${parsed.systemId}`;
    let cardNumber = 920_000_000_000;
    const create = (i: number) =>
      JSON.stringify({
        firstName: "Scale",
        lastName: `Bench${i}`,
        credentials: [{ types: ["card"], credentialNumber: cardNumber++, facilityCode: 1 }],
      });

    // Decisions on replica 0 with no writes anywhere (baseline), then with writes to replicas 1 and 2.
    const pool = f.set.requests;
    const bodies = pool.slice(0, 20_000).map((r) => JSON.stringify(r));
    const batches: string[] = [];
    for (let k = 0; k + BATCH <= bodies.length && batches.length < 200; k += BATCH)
      batches.push(`[${bodies.slice(k, k + BATCH).join(",")}]`);
    const decide = (i: number) => ({
      url: replicas[0]!.url,
      method: "POST",
      path: `${sys}/decisions`,
      body: batches[i % batches.length]!,
    });
    await load(CLIENTS, performance.now() + 1000, decide, BATCH); // warm-up
    // One phase of decisions on replica 0 while 8 clients write to `writeTo` (none: quiet), and the
    // CPU-seconds replica 0 used meanwhile.
    const phase = async (writeTo: readonly Replica[]) => {
      const until = performance.now() + decideSeconds * 1000;
      const cpu0 = cpuSeconds(replicas[0]!.child);
      const [decided, written] = await Promise.all([
        load(CLIENTS, until, decide, BATCH),
        writeTo.length === 0
          ? null
          : load(8, until, (i) => ({
              url: writeTo[i % writeTo.length]!.url,
              method: "POST",
              path: `${sys}/holders`,
              body: create(i),
            })),
      ]);
      return { decided, written, cpu: cpuSeconds(replicas[0]!.child) - cpu0 };
    };
    // Rounds of quiet, busy (writes to the replicas it follows) and control (the same write load on
    // two replicas of another database, which it does not follow: the machine's contention alone),
    // interleaved so that whatever else runs on the machine weighs on the three alike; pooled.
    const phases = { quiet: [] as Phase[], busy: [] as Phase[], control: [] as Phase[] };
    for (let round = 0; round < rounds; round++) {
      phases.quiet.push(await phase([]));
      phases.busy.push(await phase(replicas.slice(1)));
      phases.control.push(await phase(others));
    }
    const quiet = pooled(
      phases.quiet.map((p) => p.decided),
      BATCH,
    );
    const busy = pooled(
      phases.busy.map((p) => p.decided),
      BATCH,
    );
    const during = pooled(
      phases.busy.map((p) => p.written!),
      1,
    );
    const controlWrites = pooled(
      phases.control.map((p) => p.written!),
      1,
    );
    const perCpu = (ps: readonly Phase[]) =>
      (ps.reduce((n, p) => n + p.decided.count, 0) * BATCH) / ps.reduce((c, p) => c + p.cpu, 0);
    const roundRatios = phases.busy.map((p, i) => {
      const q = phases.quiet[i]!;
      return ((p.decided.count / p.cpu) * q.cpu) / q.decided.count;
    });
    const quietCpu = phases.quiet.reduce((c, p) => c + p.cpu, 0);
    const busyCpu = phases.busy.reduce((c, p) => c + p.cpu, 0);
    log(`  scale ${size}: decisions on one replica, no writes: ${quiet.opsPerSec.toFixed(0)}/s`);
    // Per CPU-second of the deciding replica: what it spends on applying the others' changes, apart
    // from the cores the writing replicas, PostgreSQL and the clients take from it on this machine.
    const quietPerCpu = perCpu(phases.quiet);
    const busyPerCpu = perCpu(phases.busy);
    const controlPerCpu = perCpu(phases.control);
    log(
      `  scale ${size}: per CPU-second of the deciding replica: ${quietPerCpu.toFixed(0)} quiet, ${busyPerCpu.toFixed(0)} with writes (${(busyPerCpu / quietPerCpu).toFixed(2)}×; rounds ${roundRatios.map((r) => r.toFixed(2)).join(", ")})`,
    );
    log(
      `  scale ${size}: decisions on one replica while ${during.opsPerSec.toFixed(0)} writes/s go to the others: ${busy.opsPerSec.toFixed(0)}/s (${(busy.opsPerSec / quiet.opsPerSec).toFixed(2)}×)`,
    );
    log(
      `  scale ${size}: control, ${controlWrites.opsPerSec.toFixed(0)} writes/s to replicas of another database: ${controlPerCpu.toFixed(0)} per CPU-second (${(controlPerCpu / quietPerCpu).toFixed(2)}× quiet; with writes to its own ${(busyPerCpu / controlPerCpu).toFixed(2)}× this)`,
    );

    // Writes through all three, with a probe measuring propagation to the other two.
    const probeAgent = new Agent({ keepAlive: true, maxSockets: 8 });
    const probe = async (until: number, delays: number[]) => {
      for (let i = 0; performance.now() < until; i++) {
        const w = i % 3;
        const r = await call(probeAgent, replicas[w]!.url, "POST", `${sys}/holders`, create(1e9 + i));
        if (r.status !== 201) throw new Error(`probe write answered ${r.status}: ${r.body}`);
        const acked = performance.now();
        await Promise.all(
          [0, 1, 2]
            .filter((o) => o !== w)
            .map(async (o) => {
              const seen = await call(probeAgent, replicas[o]!.url, "GET", "/healthz", undefined, {
                "x-rsop-min-revision": r.revision!,
              });
              if (seen.status !== 200) throw new Error(`probe read answered ${seen.status}: ${seen.body}`);
              delays.push(performance.now() - acked);
            }),
        );
      }
    };
    // First the probe alone (the delay of following the log itself), then under the write load.
    const lone: number[] = [];
    await probe(performance.now() + (ctx.quick ? 2 : 5) * 1000, lone);
    const sortedLone = lone.sort((a, b) => a - b);
    log(
      `  scale ${size}: propagation with the probe's writes only: p50 ${quantile(sortedLone, 0.5).toFixed(1)} ms, p99 ${quantile(sortedLone, 0.99).toFixed(1)} ms over ${lone.length} probes`,
    );
    const until = performance.now() + writeSeconds * 1000;
    const delays: number[] = [];
    const [writes] = await Promise.all([
      load(CLIENTS - 1, until, (i, k) => ({
        url: replicas[k % 3]!.url,
        method: "POST",
        path: `${sys}/holders`,
        body: create(i),
      })),
      probe(until, delays),
    ]);
    probeAgent.destroy();
    const sortedDelays = delays.sort((a, b) => a - b);
    const healths = await Promise.all(
      replicas.map(
        async (r) =>
          JSON.parse((await call(new Agent(), r.url, "GET", "/healthz")).body) as {
            revision: number;
            racesLost: number;
          },
      ),
    );
    const racesLost = healths.reduce((s, h) => s + h.racesLost, 0);
    const revision = Math.max(...healths.map((h) => h.revision));
    log(
      `  scale ${size}: writes through 3 replicas ${writes.opsPerSec.toFixed(0)}/s (p50 ${writes.p50Ms.toFixed(1)} ms, p99 ${writes.p99Ms.toFixed(1)} ms); propagation p50 ${quantile(sortedDelays, 0.5).toFixed(1)} ms, p99 ${quantile(sortedDelays, 0.99).toFixed(1)} ms over ${delays.length} probes; races lost ${racesLost}`,
    );

    rows.push({
      section: "scale",
      size,
      name: "writes through 3 replicas: POST /holders (a card)",
      opsPerSec: writes.opsPerSec,
      p50Ns: writes.p50Ms * 1e6,
      p99Ns: writes.p99Ms * 1e6,
      note: `${writes.count} acknowledged in ${writes.seconds.toFixed(1)} s, ${CLIENTS - 1} clients spread over the replicas (+1 probe); ${(writes.opsPerSec / commits).toFixed(2)}× bare commits; ${racesLost} races for the next number lost by then (log at ${revision})`,
    });
    rows.push({
      section: "scale",
      size,
      name: "propagation, one writer (the probe): acknowledged on one → answered at that revision on another",
      p50Ns: quantile(sortedLone, 0.5) * 1e6,
      p99Ns: quantile(sortedLone, 0.99) * 1e6,
      note: `${lone.length} probes, one write at a time; includes one HTTP round trip (GET /healthz with X-Rsop-Min-Revision)`,
    });
    rows.push({
      section: "scale",
      size,
      name: "propagation under the write load above",
      p50Ns: quantile(sortedDelays, 0.5) * 1e6,
      p99Ns: quantile(sortedDelays, 0.99) * 1e6,
      note: `${delays.length} probes while the writes above flow; includes one HTTP round trip (GET /healthz with X-Rsop-Min-Revision)`,
    });
    rows.push({
      section: "scale",
      size,
      name: "decisions/s, one replica, no writes (baseline)",
      opsPerSec: quiet.opsPerSec,
      p50Ns: quiet.p50Ms * 1e6,
      p99Ns: quiet.p99Ms * 1e6,
      note: `batches of ${BATCH}, ${CLIENTS} clients; latency per call`,
    });
    rows.push({
      section: "scale",
      size,
      name: "decisions/s, one replica, while the others take writes",
      opsPerSec: busy.opsPerSec,
      p50Ns: busy.p50Ms * 1e6,
      p99Ns: busy.p99Ms * 1e6,
      note: `${(busy.opsPerSec / quiet.opsPerSec).toFixed(2)}× the baseline; meanwhile ${during.opsPerSec.toFixed(0)} writes/s acknowledged by the other two replicas (8 clients), which this one applies`,
    });
    rows.push({
      section: "scale",
      size,
      name: "decisions per CPU-second of that replica, no writes / with writes",
      value: `${fmtOps(quietPerCpu)} / ${fmtOps(busyPerCpu)}`,
      note: `${(busyPerCpu / quietPerCpu).toFixed(2)}×: the replica's own cost of applying the others' changes, without the cores they take (pooled over ${rounds} rounds: ${roundRatios.map((r) => r.toFixed(2)).join(", ")}; its CPU share ${(quietCpu / quiet.seconds).toFixed(2)} quiet, ${(busyCpu / busy.seconds).toFixed(2)} with writes)`,
    });
    rows.push({
      section: "scale",
      size,
      name: "control: decisions per CPU-second while replicas of another database take writes",
      value: fmtOps(controlPerCpu),
      note: `${(controlPerCpu / quietPerCpu).toFixed(2)}× quiet: the machine's contention alone (${controlWrites.opsPerSec.toFixed(0)} writes/s this replica does not apply); with writes to its own log ${(busyPerCpu / controlPerCpu).toFixed(2)}× this`,
    });
    Object.assign(ctx.facts, {
      "scale.decisionsPerCpuSecControl": controlPerCpu,
      "scale.decisionsPerCpuSecQuiet": quietPerCpu,
      "scale.decisionsPerCpuSecBusy": busyPerCpu,
      "scale.size": size,
      "scale.writesPerSec": writes.opsPerSec,
      "scale.writeP50Ms": writes.p50Ms,
      "scale.writeP99Ms": writes.p99Ms,
      "scale.loneP50Ms": quantile(sortedLone, 0.5),
      "scale.loneP99Ms": quantile(sortedLone, 0.99),
      "scale.loneProbes": lone.length,
      "scale.propagationP50Ms": quantile(sortedDelays, 0.5),
      "scale.propagationP99Ms": quantile(sortedDelays, 0.99),
      "scale.propagationProbes": delays.length,
      "scale.racesLost": racesLost,
      "scale.decisionsQuietPerSec": quiet.opsPerSec,
      "scale.decisionsBusyPerSec": busy.opsPerSec,
      "scale.writesDuringDecisionsPerSec": during.opsPerSec,
      "scale.decisionsRatio": busy.opsPerSec / quiet.opsPerSec,
    });
    log(`  scale: decide ${fmtOps(quiet.opsPerSec)} quiet`);
  } finally {
    await killRunning();
    cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
