// Scenario: the service, `rsop serve --data FILE.db` — the built CLI (`node dist/cli.js serve`) in a
// child process on 127.0.0.1, with a temporary SQLite database imported from the fixture building,
// and 16 concurrent HTTP clients (keep-alive connections) in this process. Measured:
//
// - acknowledged writes per second (each a 2xx, on disk (fsync) before its answer): holder creates
//   with a card, then membership adds; latency p50/p99 per request as the client saw it. Baseline:
//   bare SQLite commits per second (WAL, synchronous=FULL, one small row per transaction, one
//   connection) on the same disk right before each size's writes; targets: creates ≥ 1× it, p99 ≤
//   5× p50.
// - decisions per second through `POST /{system_id}/decisions`, one request per call and batches of
//   100; baselines: in-process `engine.decide` on the same request pool, and (for the single call)
//   a bare node:http server in its own process answering every POST with the bytes of a median
//   answer, driven by the same clients right after: the ratio of the two is the HTTP pipeline's cost.
// - start-up from the database (at the largest size given): the server's own figure (open, load the
//   snapshot, replay the log; its start-up line) and spawn-to-listening wall time, with 0 and with
//   999 changes after the latest snapshot (999: the most a server at the default --snapshot-every
//   1000 replays); the difference is the share spent replaying. Baseline: a fresh process reading the
//   snapshot the server stored (its JSON text) and making an engine of it (loadEngine of the built
//   package), alternating with the server's starts; target: start-up ≤ 1.5× it.
//
// The server logs one line per request to stderr, as in production; this process reads and drops it.
// Temporary files are removed and every server started is stopped at the end, also on failure.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type Row, fmtMs, fmtNs, fmtOps, log, median, quantile, sink, timeBatches } from "./benchUtil.js";
import { type SizeName, fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

const CLI = resolve("dist/cli.js");
const CLIENTS = 16;
const BATCH = 100;
/** Changes after the latest snapshot in the replay measurement. */
const REPLAY = 999;

export interface Server {
  readonly child: ChildProcess;
  readonly url: URL;
  /** Milliseconds from spawn to the "serving … on URL" line. */
  readonly wallMs: number;
  /** The start-up line (`imported …` or `loaded …`). */
  readonly startLine: string;
}

const running = new Set<ChildProcess>();

/** Starts `rsop serve --data db …` and resolves once it listens. Its log is read and dropped. */
export function serve(db: string, extra: readonly string[]): Promise<Server> {
  return serveCli(["--data", db], extra);
}

/** RSOP_BENCH_SERVE_NODE_FLAGS: node flags for each process serveCli starts, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p". */
const SERVE_NODE_FLAGS: readonly string[] = (process.env.RSOP_BENCH_SERVE_NODE_FLAGS ?? "")
  .split(" ")
  .filter((f) => f !== "");

/**
 * Starts `rsop serve` on a store (`--data FILE` or `--store URL`) without authentication, on a free
 * port, and resolves once it listens; killRunning stops every server it started.
 */
export function serveCli(store: readonly string[], extra: readonly string[]): Promise<Server> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [...SERVE_NODE_FLAGS, CLI, "serve", ...store, "--port", "0", "--insecure-no-auth", ...extra],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  running.add(child);
  child.once("exit", () => running.delete(child));
  let text = "";
  let listening = false;
  return new Promise((resolveServer, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in 180 s: ${text.slice(0, 2000)}`)), 180_000);
    child.stderr!.on("data", (b: Buffer) => {
      if (listening) return;
      text += b.toString("utf8");
      const m = / on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(text);
      if (m === null) return;
      listening = true;
      clearTimeout(timer);
      const startLine = text.split("\n").find((l) => / (imported|loaded) /.test(l)) ?? "";
      resolveServer({ child, url: new URL(m[1]!), wallMs: performance.now() - t0, startLine });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (!listening) reject(new Error(`serve exited (${code ?? signal}) before listening: ${text.slice(0, 2000)}`));
    });
  });
}

/**
 * Kills (SIGKILL) every server serveCli started that still runs, and waits for each to exit. With
 * SERVE_NODE_FLAGS (a profile to write) SIGTERM instead, SIGKILL after 15 s: serve then exits on its own.
 */
export async function killRunning(): Promise<void> {
  const gentle = SERVE_NODE_FLAGS.length > 0;
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          const timer = gentle ? setTimeout(() => child.kill("SIGKILL"), 15_000) : undefined;
          child.once("exit", () => {
            clearTimeout(timer);
            done();
          });
          child.kill(gentle ? "SIGTERM" : "SIGKILL");
        }),
    ),
  );
}

/** Stops a server: SIGTERM (finishes writes, stores a snapshot) or SIGKILL (leaves the log as it is). */
export function stop(s: Server, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    s.child.once("exit", () => done());
    s.child.kill(signal);
  });
}

/**
 * The baseline of `POST /decisions`: a bare node:http server that reads each request's body and
 * answers it with the fixed bytes of argv[1]'s file (Content-Type and Content-Length only, no log).
 */
const BARE_SERVER = `
const http = require("node:http");
const body = require("node:fs").readFileSync(process.argv[1]);
const server = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": body.length });
    res.end(body);
  });
});
server.listen(0, "127.0.0.1", () => process.stderr.write("bare on http://127.0.0.1:" + server.address().port + "\\n"));
`;

/** Starts BARE_SERVER in its own process answering the bytes of `bodyFile`; killRunning stops it. */
function serveBare(bodyFile: string): Promise<Server> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ["-e", BARE_SERVER, bodyFile], { stdio: ["ignore", "ignore", "pipe"] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let text = "";
  return new Promise((resolveServer, reject) => {
    child.stderr!.on("data", (b: Buffer) => {
      text += b.toString("utf8");
      const m = / on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(text);
      if (m !== null) resolveServer({ child, url: new URL(m[1]!), wallMs: performance.now() - t0, startLine: "" });
    });
    child.once("exit", (code, signal) => reject(new Error(`bare server exited (${code ?? signal}): ${text}`)));
  });
}

/** The server's own start-up milliseconds and replayed changes, from its start-up line. */
function startFigures(line: string): { ms: number; replayed: number } {
  const ms = /\((?:[^()]*, )?(\d+)ms\)/.exec(line);
  const replayed = /(\d+) changes? replayed/.exec(line);
  return { ms: ms === null ? Number.NaN : Number(ms[1]), replayed: replayed === null ? 0 : Number(replayed[1]) };
}

export interface Reply {
  readonly status: number;
  readonly body: string;
}

/** One HTTP request over a keep-alive agent; with `token`, as its bearer. */
export function call(
  agent: Agent,
  url: URL,
  method: string,
  path: string,
  body?: string,
  token?: string,
): Promise<Reply> {
  return new Promise((resolveReply, reject) => {
    const headers: Record<string, string | number> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    // No body: Content-Length 0 (without it Node would send an empty chunked body, which is not JSON).
    headers["content-length"] = body === undefined ? 0 : Buffer.byteLength(body);
    if (body !== undefined) headers["content-type"] = "application/json";
    const req = httpRequest({ agent, host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolveReply({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

export interface LoadResult {
  /** Operations acknowledged (2xx) per second of wall time. */
  readonly opsPerSec: number;
  readonly count: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Bodies of the 2xx answers, in completion order (creates answer their id). */
  readonly bodies: string[];
}

/**
 * CLIENTS clients, each sending its next request once the last is answered, until `seconds` have
 * passed or `limit` requests were sent. Every answer must be 2xx (anything else throws: a benchmark
 * that counts refusals would measure the wrong thing).
 */
export async function load(
  url: URL,
  seconds: number,
  limit: number,
  next: (i: number) => { method: string; path: string; body?: string },
  perRequest = 1,
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const latencies: number[] = [];
  const bodies: string[] = [];
  let sent = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const client = async () => {
    while (performance.now() < end && sent < limit) {
      const op = next(sent++);
      const s = performance.now();
      const r = await call(agent, url, op.method, op.path, op.body);
      latencies.push(performance.now() - s);
      if (r.status < 200 || r.status > 299)
        throw new Error(`${op.method} ${op.path} answered ${r.status}: ${r.body.slice(0, 500)}`);
      bodies.push(r.body);
    }
  };
  try {
    await Promise.all(Array.from({ length: CLIENTS }, client));
  } finally {
    agent.destroy();
  }
  const wall = (performance.now() - t0) / 1000;
  const sorted = latencies.sort((a, b) => a - b);
  return {
    opsPerSec: (latencies.length * perRequest) / wall,
    count: latencies.length,
    seconds: wall,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    bodies,
  };
}

/** Bare SQLite commits per second on this disk (a new database `file`): WAL, synchronous=FULL, one small row per transaction. */
async function sqliteCommits(file: string, seconds: number): Promise<number> {
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.exec("CREATE TABLE t (seq INTEGER PRIMARY KEY, payload TEXT NOT NULL)");
    const insert = db.prepare("INSERT INTO t (seq, payload) VALUES (?, ?)");
    const payload = JSON.stringify([
      { op: "add", path: ["holders", 100000], value: { id: "x".repeat(36), firstName: "Bench" } },
    ]);
    for (let i = 0; i < 20; i++) insert.run(i, payload);
    let n = 20;
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    while (performance.now() < end) insert.run(n++, payload);
    return ((n - 20) * 1000) / (performance.now() - t0);
  } finally {
    db.close();
  }
}

/** The JSON text of the latest snapshot stored in a (closed) `--data` database: its row, then its parts. */
async function storedSnapshotText(db: string): Promise<string> {
  const { default: Database } = await import("better-sqlite3");
  const d = new Database(db, { readonly: true });
  try {
    const row = d.prepare("SELECT seq, snapshot FROM snapshots ORDER BY seq DESC LIMIT 1").get() as {
      seq: number;
      snapshot: string;
    };
    const parts = d.prepare("SELECT text FROM snapshot_parts WHERE seq = ? ORDER BY part").all(row.seq) as {
      text: string;
    }[];
    return row.snapshot + parts.map((p) => p.text).join("");
  } finally {
    d.close();
  }
}

/** Milliseconds a fresh process takes to read `file`, JSON.parse it and loadEngine it (dist/index.js), as it measures them. */
function freshLoadEngineMs(file: string): number {
  const index = pathToFileURL(resolve("dist/index.js")).href;
  const script = `import { readFileSync } from "node:fs"; import { loadEngine } from ${JSON.stringify(index)};
const t0 = performance.now(); const r = loadEngine(JSON.parse(readFileSync(process.argv[1], "utf8")));
if (!r.ok) process.exit(3); process.stdout.write(String(performance.now() - t0));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, file], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`loadEngine of ${file} failed (${r.status}): ${r.stderr.slice(0, 500)}`);
  return Number(r.stdout);
}

const ms = (x: number) => fmtMs(x);

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  if (!existsSync(CLI))
    return [
      { section: "service", size: "", name: "rsop serve --data", note: "skipped: dist/cli.js missing (npm run build)" },
    ];
  try {
    await import("better-sqlite3");
  } catch {
    return [
      { section: "service", size: "", name: "rsop serve --data", note: "skipped: better-sqlite3 is not installed" },
    ];
  }
  const rows: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), "rsop-bench-service-"));
  try {
    const writeSeconds = ctx.quick ? 1.5 : 4;
    const decideSeconds = ctx.quick ? 1.5 : 3;
    const startSize: SizeName | undefined = (["L", "M", "S"] as const).find((s) => ctx.sizes.includes(s));
    // S adds little to M and L here (the issue asks for M and L); it runs only when asked for alone.
    const sizes = ctx.sizes.length > 1 ? ctx.sizes.filter((s) => s !== "S") : ctx.sizes;
    for (const size of sizes) {
      const f = fixture(size);
      const system = join(dir, `system-${size}.json`);
      writeFileSync(system, f.json);
      const db = join(dir, `data-${size}.db`);
      const first = await serve(db, ["--system", system]);
      let server: Server = first;
      try {
        log(`  service ${size}: ${first.startLine.replace(/^\S+ /, "")} (${ms(first.wallMs)} spawn to listening)`);
        rows.push({
          section: "service",
          size,
          name: "first start: import the snapshot",
          value: ms(first.wallMs),
          note: `spawn to listening (server's own figure ${ms(startFigures(first.startLine).ms)}); ${f.spec.holders.toLocaleString("en-US")} holders`,
        });
        const url = first.url;
        const parsed = JSON.parse(f.json) as { systemId: string; groups: { id: string }[] };
        const sys = `/${parsed.systemId}`;
        const groupIds = parsed.groups.map((g) => g.id);

        // The disk's bare commit rate right before this size's writes (it varies with what else runs).
        const commits = await sqliteCommits(join(dir, `commits-${size}.db`), ctx.quick ? 0.5 : 1.5);
        ctx.facts[`service.${size}.sqliteCommitsPerSec`] = commits;
        log(`  service ${size}: bare SQLite commits (WAL, synchronous=FULL): ${commits.toFixed(0)}/s`);
        rows.push({
          section: "service",
          size,
          name: "baseline: bare SQLite commits",
          opsPerSec: commits,
          note: "WAL, synchronous=FULL, one ~150-byte row per transaction, one connection, this process, right before the writes below",
        });

        // Writes: holder creates with a card, then membership adds of those holders.
        let cardNumber = 910_000_000_000;
        const creates = await load(url, writeSeconds, Number.POSITIVE_INFINITY, (i) => ({
          method: "POST",
          path: `${sys}/holders`,
          body: JSON.stringify({
            firstName: "Service",
            lastName: `Bench${i}`,
            credentials: [{ types: ["card"], credentialNumber: cardNumber++, facilityCode: 1 }],
          }),
        }));
        const created = creates.bodies.map((b) => (JSON.parse(b) as { id: string }).id);
        const writeNote = (r: LoadResult, what: string) =>
          `${r.count.toLocaleString("en-US")} ${what} in ${r.seconds.toFixed(1)} s, ${CLIENTS} clients; each on disk (fsync) before its 2xx; ${(r.opsPerSec / commits).toFixed(2)}× bare SQLite commits/s; p99 ${(r.p99Ms / r.p50Ms).toFixed(1)}× p50`;
        log(
          `  service ${size}: holder creates ${creates.opsPerSec.toFixed(0)}/s, p50 ${creates.p50Ms.toFixed(2)} ms, p99 ${creates.p99Ms.toFixed(2)} ms`,
        );
        rows.push({
          section: "service",
          size,
          name: "write: POST /holders (a card)",
          opsPerSec: creates.opsPerSec,
          p50Ns: creates.p50Ms * 1e6,
          p99Ns: creates.p99Ms * 1e6,
          note: writeNote(creates, "creates"),
        });
        rows.push({
          section: "service",
          size,
          name: "target: POST /holders / bare SQLite commits, p99 / p50",
          value: `${(creates.opsPerSec / commits).toFixed(2)}×, ${(creates.p99Ms / creates.p50Ms).toFixed(1)}×`,
          note: `≥ 1× and ≤ 5×: ${creates.opsPerSec >= commits && creates.p99Ms <= 5 * creates.p50Ms ? "met" : "MISSED"}`,
        });
        ctx.facts[`service.${size}.holderCreatesPerSec`] = creates.opsPerSec;
        ctx.facts[`service.${size}.holderCreateP99Ms`] = creates.p99Ms;
        const c = created.length;
        const adds = await load(url, writeSeconds, c * groupIds.length, (i) => ({
          method: "PUT",
          path: `${sys}/holders/${created[i % c]}/groups/${groupIds[Math.floor(i / c) % groupIds.length]}`,
        }));
        log(
          `  service ${size}: membership adds ${adds.opsPerSec.toFixed(0)}/s, p50 ${adds.p50Ms.toFixed(2)} ms, p99 ${adds.p99Ms.toFixed(2)} ms`,
        );
        rows.push({
          section: "service",
          size,
          name: "write: PUT /holders/:id/groups/:id",
          opsPerSec: adds.opsPerSec,
          p50Ns: adds.p50Ms * 1e6,
          p99Ns: adds.p99Ms * 1e6,
          note: writeNote(adds, "adds"),
        });
        ctx.facts[`service.${size}.membershipAddsPerSec`] = adds.opsPerSec;
        ctx.facts[`service.${size}.membershipAddP99Ms`] = adds.p99Ms;

        // Decisions: single and batches of 100 over HTTP, against in-process decide on the same pool.
        const pool = f.set.requests;
        const bodies = pool.slice(0, 20_000).map((r) => JSON.stringify(r));
        const single = await load(url, decideSeconds, Number.POSITIVE_INFINITY, (i) => ({
          method: "POST",
          path: `${sys}/decisions`,
          body: bodies[i % bodies.length]!,
        }));
        // Baseline of the single call: a bare node:http server in its own process, answering every
        // POST with the bytes of an answer of median size just received, driven by the same clients.
        const answers = [...single.bodies].sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b));
        const typical = answers[answers.length >> 1]!;
        const typicalFile = join(dir, `answer-${size}.json`);
        writeFileSync(typicalFile, typical);
        const bareServer = await serveBare(typicalFile);
        let bare: LoadResult;
        try {
          bare = await load(bareServer.url, decideSeconds, Number.POSITIVE_INFINITY, (i) => ({
            method: "POST",
            path: `${sys}/decisions`,
            body: bodies[i % bodies.length]!,
          }));
        } finally {
          await stop(bareServer, "SIGKILL");
        }
        const batches: string[] = [];
        for (let k = 0; k + BATCH <= bodies.length && batches.length < 200; k += BATCH)
          batches.push(`[${bodies.slice(k, k + BATCH).join(",")}]`);
        const batched = await load(
          url,
          decideSeconds,
          Number.POSITIVE_INFINITY,
          (i) => ({ method: "POST", path: `${sys}/decisions`, body: batches[i % batches.length]! }),
          BATCH,
        );
        const engine = f.engine;
        let k = 0;
        const inProcess = await timeBatches(
          `service ${size} decide`,
          () => {
            let acc = 0;
            for (let i = 0; i < 1000; i++) {
              acc += engine.decide(pool[k]).reason.length;
              if (++k === pool.length) k = 0;
            }
            sink.value += acc;
          },
          1000,
          { timeMs: ctx.quick ? 300 : 700, warmupMs: 150 },
        );
        const ratio = (x: number) =>
          `${(inProcess.opsPerSec / x).toFixed(0)}× fewer than in-process decide (${fmtOps(inProcess.opsPerSec)})`;
        log(
          `  service ${size}: decisions over HTTP ${single.opsPerSec.toFixed(0)}/s single, ${batched.opsPerSec.toFixed(0)}/s in batches of ${BATCH}; in-process ${inProcess.opsPerSec.toFixed(0)}/s`,
        );
        rows.push({
          section: "service",
          size,
          name: "POST /decisions, one request",
          opsPerSec: single.opsPerSec,
          p50Ns: single.p50Ms * 1e6,
          p99Ns: single.p99Ms * 1e6,
          note: `${CLIENTS} clients; latency per call; ${ratio(single.opsPerSec)}`,
        });
        const bareRatio = single.opsPerSec / bare.opsPerSec;
        log(
          `  service ${size}: bare node:http ${bare.opsPerSec.toFixed(0)}/s (${Buffer.byteLength(typical)}-byte answer); POST /decisions one per call / bare ${bareRatio.toFixed(2)}×`,
        );
        rows.push({
          section: "service",
          size,
          name: "baseline: bare node:http, fixed JSON answer",
          opsPerSec: bare.opsPerSec,
          p50Ns: bare.p50Ms * 1e6,
          p99Ns: bare.p99Ms * 1e6,
          note: `its own process; every POST answered the same ${Buffer.byteLength(typical)} bytes (a median POST /decisions answer); the same ${CLIENTS} clients and bodies`,
        });
        rows.push({
          section: "service",
          size,
          name: "POST /decisions one per call / bare",
          value: `${bareRatio.toFixed(2)}×`,
          note: "requests/s of the service's single decision over the bare server's, this run",
        });
        rows.push({
          section: "service",
          size,
          name: "target: POST /decisions one per call / bare",
          value: "≥ 0.5×",
          note: bareRatio >= 0.5 ? "met" : "MISSED",
        });
        ctx.facts[`service.${size}.bareHttpPerSec`] = bare.opsPerSec;
        ctx.facts[`service.${size}.decisionsPerBare`] = bareRatio;
        rows.push({
          section: "service",
          size,
          name: `POST /decisions, batches of ${BATCH}`,
          opsPerSec: batched.opsPerSec,
          p50Ns: batched.p50Ms * 1e6,
          p99Ns: batched.p99Ms * 1e6,
          note: `decisions/s; ${CLIENTS} clients; latency per call of ${BATCH}; ${ratio(batched.opsPerSec)}`,
        });
        ctx.facts[`service.${size}.decisionsPerSec`] = single.opsPerSec;
        ctx.facts[`service.${size}.batchDecisionsPerSec`] = batched.opsPerSec;
        ctx.facts[`service.${size}.inProcessDecisionsPerSec`] = inProcess.opsPerSec;

        if (size === startSize) {
          // Start-up with nothing to replay: a clean shutdown stores a snapshot of the last change.
          await stop(server, "SIGTERM");
          const runs = ctx.quick ? 1 : 3;
          const clean: { wall: number; own: number }[] = [];
          // The baseline: the same snapshot's JSON made an engine of by a fresh process, between the starts.
          const storedFile = join(dir, `stored-${size}.json`);
          writeFileSync(storedFile, await storedSnapshotText(db));
          const fresh: number[] = [];
          for (let i = 0; i < runs; i++) {
            server = await serve(db, []);
            const fig = startFigures(server.startLine);
            if (fig.replayed !== 0) throw new Error(`expected nothing to replay: ${server.startLine}`);
            clean.push({ wall: server.wallMs, own: fig.ms });
            await stop(server, "SIGTERM");
            fresh.push(freshLoadEngineMs(storedFile));
          }
          // 999 acknowledged holder creates after the latest snapshot, then SIGKILL: no snapshot on the way out.
          const noSnapshots = ["--snapshot-every", "1000000"];
          server = await serve(db, noSnapshots);
          await load(server.url, 600, REPLAY, (i) => ({
            method: "POST",
            path: `${sys}/holders`,
            body: JSON.stringify({
              firstName: "Replay",
              lastName: `Bench${i}`,
              credentials: [{ types: ["card"], credentialNumber: cardNumber++, facilityCode: 1 }],
            }),
          }));
          await stop(server, "SIGKILL");
          const replay: { wall: number; own: number }[] = [];
          for (let i = 0; i < runs; i++) {
            server = await serve(db, noSnapshots);
            const fig = startFigures(server.startLine);
            if (fig.replayed !== REPLAY) throw new Error(`expected ${REPLAY} changes to replay: ${server.startLine}`);
            replay.push({ wall: server.wallMs, own: fig.ms });
            await stop(server, "SIGKILL");
          }
          const m0 = median(clean.map((x) => x.own));
          const w0 = median(clean.map((x) => x.wall));
          const f0 = median(fresh);
          const m1 = median(replay.map((x) => x.own));
          const w1 = median(replay.map((x) => x.wall));
          const share = (m1 - m0) / m1;
          log(
            `  service ${size}: start-up ${m0} ms (0 replayed), ${m1} ms (${REPLAY} replayed): replay share ${(100 * share).toFixed(0)}%; fresh loadEngine ${f0.toFixed(0)} ms`,
          );
          rows.push({
            section: "service",
            size,
            name: "start-up from the database, 0 changes to replay",
            value: ms(m0),
            note: `server's figure (open, load snapshot, build the live system); spawn to listening ${ms(w0)}; median of ${runs}`,
          });
          rows.push({
            section: "service",
            size,
            name: "baseline: fresh loadEngine of the stored snapshot",
            value: ms(f0),
            note: `a new node process: read the JSON file, JSON.parse, loadEngine (dist/index.js), as it times them; median of ${runs}, alternating with the starts above`,
          });
          rows.push({
            section: "service",
            size,
            name: "target: start-up (0 to replay) / fresh loadEngine",
            value: `${(m0 / f0).toFixed(2)}×`,
            note: `≤ 1.5×: ${m0 <= 1.5 * f0 ? "met" : "MISSED"}`,
          });
          rows.push({
            section: "service",
            size,
            name: `start-up from the database, ${REPLAY} changes to replay`,
            value: ms(m1),
            note: `spawn to listening ${ms(w1)}; replaying is ${(100 * share).toFixed(0)}% of it (${fmtNs(((m1 - m0) / REPLAY) * 1e6)}/change); median of ${runs}`,
          });
          ctx.facts[`service.${size}.startMs`] = m0;
          ctx.facts[`service.${size}.freshLoadEngineMs`] = f0;
          ctx.facts[`service.${size}.startReplayMs`] = m1;
          ctx.facts[`service.${size}.replayShare`] = share;
        }
      } finally {
        await stop(server, "SIGKILL");
      }
    }
  } finally {
    await killRunning();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
