// Scenario: one service, many tenants — `rsop serve --data FILE.db` (the built CLI, `node dist/cli.js
// serve`, in a child process on 127.0.0.1, as the service scenario runs it) on a service database of
// 1,000 multi-site customers, each with a system imported from examples/building.json under its own
// system id (300 holders, 35 devices); 16 concurrent keep-alive clients in this process, each
// request with the root admin's bearer token as a client sends it. Measured in the same run:
//
// - reads `GET /{system}/holders/{id}` and decisions `POST /{system}/decisions` spread uniformly
//   at random over the 1,000 tenants, against the same requests all on one tenant, with a memory
//   budget that holds every tenant (after one pass that loads each: its rate is a row too); then the
//   same on a server whose budget holds about 100 tenants, so nearly every spread request loads its
//   tenant and evicts another (the evictions and loads during each measurement are reported).
// - writes `POST /{system}/holders` (a card each) spread over the 1,000 tenants against all on one,
//   on a server that has loaded every tenant first.
// - start-up: from spawning the process to the first answered `GET /{system}/holders/{id}` (which
//   loads that tenant), on the 1,000-tenant database, on a service database of one customer with the
//   same system, and on the single-system server (`--system` imported into its own database, then
//   served from it) of that same system; alternating, median of 3 (1 with --quick).
//
// Rounds alternate one tenant / spread (3 rounds, 1 with --quick); ops/s is the median round, p50
// and p99 are of every request of the rounds together, the note gives the rounds' range.
// The databases are prepared straight through TenantRegistry on the SQLite space (the organizations a
// POST /api/organizations/{dealer}/children with `import` would make); nothing timed skips HTTP.
// Temporary files are removed and every server started is stopped at the end, also on failure.
//
//   npm run bench -- --only tenants [--quick] [--out bench/results/tenants.json]
//   RSOP_BENCH_SERVE_NODE_FLAGS="--cpu-prof --cpu-prof-dir=DIR" npm run bench -- --only tenants
//                    every server under those flags (stopped by SIGTERM, so each writes its profile)
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ADMIN } from "../src/service/auth/tokens.js";
import { mulberry32 } from "../src/adapters/cli/mulberry32.js";
import { openSqliteSpace } from "../src/adapters/store/sqliteStore.js";
import { TenantRegistry } from "../src/service/tenants/registry.js";
import { type Row, fmtMs, log, median, quantile } from "./benchUtil.js";
import type { ScenarioContext } from "./scenario.js";

const CLI = resolve("dist/cli.js");
const TENANTS = 1000;
const CLIENTS = 16;
/** Tenants the small budget is sized to hold. */
const SMALL_BUDGET_TENANTS = 100;
const TOKEN = "bench-tenants-root-admin-0123456789";
const SECTION = "tenants";

/** Tenant i's system id (a UUID, distinct per tenant). */
const systemIdOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

interface Building {
  readonly systemId: string;
  readonly holders: readonly { id: string }[];
}

interface Served {
  readonly child: ChildProcess;
  readonly url: URL;
  /** performance.now() right before the spawn. */
  readonly t0: number;
  /** Milliseconds from spawn to its "… on URL" line. */
  readonly listenMs: number;
}

const running = new Set<ChildProcess>();

/** RSOP_BENCH_SERVE_NODE_FLAGS (as in service.bench.ts): node flags of every server started, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p". */
const SERVE_NODE_FLAGS: readonly string[] = (process.env.RSOP_BENCH_SERVE_NODE_FLAGS ?? "")
  .split(" ")
  .filter((f) => f !== "");

/** Spawns `rsop serve --data db …` with RSOP_TOKEN set; resolves once it listens. Its log is read and dropped. */
function serve(db: string, extra: readonly string[]): Promise<Served> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...SERVE_NODE_FLAGS, CLI, "serve", "--data", db, "--port", "0", ...extra], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, RSOP_TOKEN: TOKEN },
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let text = "";
  let listening = false;
  return new Promise((resolveServer, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in 180 s: ${text.slice(0, 2000)}`)), 180_000);
    child.stderr!.on("data", (b: Buffer) => {
      if (listening) return;
      text += b.toString("utf8");
      const m = / on (http:\/\/127\.0\.0\.1:\d+)\s/.exec(text);
      if (m === null) return;
      listening = true;
      clearTimeout(timer);
      resolveServer({ child, url: new URL(m[1]!), t0, listenMs: performance.now() - t0 });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (!listening) reject(new Error(`serve exited (${code ?? signal}) before listening: ${text.slice(0, 2000)}`));
    });
  });
}

/** SIGTERM (the server closes its tenants and the database) or SIGKILL, and waits for the exit. */
function stop(s: Served, signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    s.child.once("exit", () => done());
    s.child.kill(signal);
  });
}

async function killRunning(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once("exit", () => done());
          child.kill("SIGKILL");
        }),
    ),
  );
}

interface Reply {
  readonly status: number;
  readonly body: string;
}

interface Op {
  readonly method: string;
  readonly path: string;
  readonly body?: string;
}

/** One request with the bearer token over a keep-alive agent. */
function call(agent: Agent, url: URL, op: Op): Promise<Reply> {
  return new Promise((resolveReply, reject) => {
    const headers: Record<string, string | number> = {
      authorization: `Bearer ${TOKEN}`,
      // No body: Content-Length 0 (without it Node would send an empty chunked body).
      "content-length": op.body === undefined ? 0 : Buffer.byteLength(op.body),
    };
    if (op.body !== undefined) headers["content-type"] = "application/json";
    const req = httpRequest(
      { agent, host: url.hostname, port: url.port, method: op.method, path: op.path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolveReply({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(op.body);
  });
}

interface LoadResult {
  readonly opsPerSec: number;
  readonly count: number;
  readonly seconds: number;
  readonly latencies: number[];
}

/**
 * CLIENTS clients, each sending its next request once the last is answered, until `seconds` passed or
 * `limit` requests were sent. Every answer must be 2xx (a benchmark counting refusals measures the wrong thing).
 */
async function load(url: URL, seconds: number, limit: number, next: (i: number) => Op): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const latencies: number[] = [];
  let sent = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const client = async () => {
    while (performance.now() < end && sent < limit) {
      const op = next(sent++);
      const s = performance.now();
      const r = await call(agent, url, op);
      latencies.push(performance.now() - s);
      if (r.status < 200 || r.status > 299)
        throw new Error(`${op.method} ${op.path} answered ${r.status}: ${r.body.slice(0, 500)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: CLIENTS }, client));
  } finally {
    agent.destroy();
  }
  const wall = (performance.now() - t0) / 1000;
  return { opsPerSec: latencies.length / wall, count: latencies.length, seconds: wall, latencies };
}

interface HostStats {
  readonly tenants: number;
  readonly loaded: number;
  readonly loads: number;
  readonly evictions: number;
  readonly estimatedBytes: number;
  readonly budgetBytes: number;
}

async function health(url: URL): Promise<HostStats> {
  const agent = new Agent({ keepAlive: false });
  try {
    const r = await call(agent, url, { method: "GET", path: "/healthz" });
    if (r.status !== 200) throw new Error(`/healthz answered ${r.status}: ${r.body.slice(0, 300)}`);
    return JSON.parse(r.body) as HostStats;
  } finally {
    agent.destroy();
  }
}

/**
 * A service database of `count` multi-site customers under one dealer, customer i holding `building`
 * as system systemIdOf(i): what POST /api/organizations/{dealer}/children with `import` commits.
 */
async function prepareService(file: string, count: number, building: Building): Promise<void> {
  const space = await openSqliteSpace(file);
  try {
    const registry = await TenantRegistry.open(space.registry, {});
    const by = { grant: ADMIN, clientInfo: { ipAddress: null, userAgent: null } };
    const dealer = await registry.createOrganization(registry.root().id, { name: "Dealer" }, by);
    for (let i = 0; i < count; i++)
      await registry.createOrganization(
        dealer.id,
        { name: `Customer ${i}`, import: { ...building, systemId: systemIdOf(i) } },
        by,
      );
  } finally {
    await space.close();
  }
}

/** A single-system database (`--system FILE` imported on a first start, then stopped cleanly). */
async function prepareSingle(file: string, systemFile: string): Promise<void> {
  const s = await serve(file, ["--system", systemFile]);
  await stop(s);
}

/** Milliseconds from spawn to listening and to the first answered GET `path`. */
async function startToFirstAnswer(db: string, path: string): Promise<{ listenMs: number; firstMs: number }> {
  const s = await serve(db, []);
  const agent = new Agent({ keepAlive: false });
  try {
    const r = await call(agent, s.url, { method: "GET", path });
    const firstMs = performance.now() - s.t0;
    if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.body.slice(0, 300)}`);
    return { listenMs: s.listenMs, firstMs };
  } finally {
    agent.destroy();
    await stop(s);
  }
}

interface Measured {
  readonly opsPerSec: number;
  readonly rounds: number[];
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly count: number;
  readonly loads: number;
  readonly evictions: number;
}

/**
 * Alternating rounds of `one` (all on one tenant) and `spread` (over every tenant); ops/s of the
 * median round, p50/p99 of all requests of the rounds; the host's loads and evictions during each.
 */
async function compare(
  url: URL,
  rounds: number,
  seconds: number,
  ops: { one: (i: number) => Op; spread: (i: number) => Op },
): Promise<{ one: Measured; spread: Measured }> {
  const acc = {
    one: { rounds: [] as number[], lat: [] as number[], loads: 0, evictions: 0 },
    spread: { rounds: [] as number[], lat: [] as number[], loads: 0, evictions: 0 },
  };
  for (let r = 0; r < rounds; r++)
    for (const mode of ["one", "spread"] as const) {
      const before = await health(url);
      const res = await load(url, seconds, Number.POSITIVE_INFINITY, ops[mode]);
      const after = await health(url);
      const a = acc[mode];
      a.rounds.push(res.opsPerSec);
      for (const l of res.latencies) a.lat.push(l);
      a.loads += after.loads - before.loads;
      a.evictions += after.evictions - before.evictions;
    }
  const done = (a: (typeof acc)["one"]): Measured => {
    const sorted = a.lat.sort((x, y) => x - y);
    return {
      opsPerSec: median(a.rounds),
      rounds: a.rounds,
      p50Ms: quantile(sorted, 0.5),
      p99Ms: quantile(sorted, 0.99),
      count: sorted.length,
      loads: a.loads,
      evictions: a.evictions,
    };
  };
  return { one: done(acc.one), spread: done(acc.spread) };
}

const range = (xs: readonly number[]) =>
  xs.length < 2 ? "" : `; rounds ${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}/s`;

/** The rows of one comparison: one tenant, spread, and the ratio spread / one. */
function compareRows(
  label: string,
  what: string,
  m: { one: Measured; spread: Measured },
  ctx: ScenarioContext,
  key: string,
): Row[] {
  const row = (name: string, x: Measured, where: string): Row => ({
    section: SECTION,
    size: "",
    name: `${label}, ${name}`,
    opsPerSec: x.opsPerSec,
    p50Ns: x.p50Ms * 1e6,
    p99Ns: x.p99Ms * 1e6,
    note: `${x.count.toLocaleString("en-US")} ${what} ${where}, ${CLIENTS} clients${range(x.rounds)}; ${x.loads} loads, ${x.evictions} evictions meanwhile`,
  });
  const ratio = m.spread.opsPerSec / m.one.opsPerSec;
  const p99 = m.spread.p99Ms / m.one.p99Ms;
  ctx.facts[`tenants.${key}.onePerSec`] = m.one.opsPerSec;
  ctx.facts[`tenants.${key}.spreadPerSec`] = m.spread.opsPerSec;
  ctx.facts[`tenants.${key}.oneP99Ms`] = m.one.p99Ms;
  ctx.facts[`tenants.${key}.spreadP99Ms`] = m.spread.p99Ms;
  ctx.facts[`tenants.${key}.ratio`] = ratio;
  ctx.facts[`tenants.${key}.evictions`] = m.spread.evictions;
  log(
    `  tenants ${label}: one ${m.one.opsPerSec.toFixed(0)}/s p99 ${m.one.p99Ms.toFixed(2)} ms; spread ${m.spread.opsPerSec.toFixed(0)}/s p99 ${m.spread.p99Ms.toFixed(2)} ms (${ratio.toFixed(2)}×; ${m.spread.loads} loads, ${m.spread.evictions} evictions)`,
  );
  return [
    row("all on one tenant", m.one, "on one tenant"),
    row(`spread over ${TENANTS.toLocaleString("en-US")} tenants`, m.spread, "uniformly at random over the tenants"),
    {
      section: SECTION,
      size: "",
      name: `${label}: ${TENANTS.toLocaleString("en-US")} tenants / one`,
      value: `${ratio.toFixed(2)}×, p99 ${p99.toFixed(2)}×`,
      note: "requests/s of the spread over the one-tenant rounds, and p99 over p99, this run",
    },
  ];
}

/** Start-up rows: spawn to the first answer on the 1,000-tenant, one-tenant and single-system databases. */
async function startUpRows(
  ctx: ScenarioContext,
  dbs: { many: string; one: string; single: string },
  holder: string,
): Promise<Row[]> {
  const runs = ctx.quick ? 1 : 3;
  type Start = { listenMs: number; firstMs: number };
  const figures: Record<"many" | "one" | "single", Start[]> = { many: [], one: [], single: [] };
  const pathOf = (i: number) => `/${systemIdOf(i)}/holders/${holder}`;
  for (let r = 0; r < runs; r++) {
    figures.many.push(await startToFirstAnswer(dbs.many, pathOf(TENANTS >> 1)));
    figures.one.push(await startToFirstAnswer(dbs.one, pathOf(0)));
    figures.single.push(await startToFirstAnswer(dbs.single, pathOf(0)));
  }
  const first = (k: keyof typeof figures) => median(figures[k].map((f) => f.firstMs));
  const listen = (k: keyof typeof figures) => median(figures[k].map((f) => f.listenMs));
  const spreadOf = (k: keyof typeof figures) =>
    runs < 2 ? "" : `; runs ${figures[k].map((f) => f.firstMs.toFixed(0)).join(", ")} ms`;
  const rows: Row[] = [];
  for (const [k, name, note] of [
    [
      "many",
      `start-up: ${TENANTS.toLocaleString("en-US")} tenants`,
      "service database of 1,000 customers; the first request loads its tenant",
    ],
    ["one", "start-up: one tenant (service)", "service database of one customer with the same system"],
    [
      "single",
      "start-up: single-system server",
      "the same system imported by --system into its own database, served from it",
    ],
  ] as const) {
    ctx.facts[`tenants.start.${k}.firstMs`] = first(k);
    ctx.facts[`tenants.start.${k}.listenMs`] = listen(k);
    rows.push({
      section: SECTION,
      size: "",
      name,
      value: fmtMs(first(k)),
      note: `spawn to the first answered GET /{system}/holders/{id} (listening at ${fmtMs(listen(k))}); ${note}; median of ${runs}${spreadOf(k)}`,
    });
  }
  rows.push({
    section: SECTION,
    size: "",
    name: "start-up: 1,000 tenants / one tenant / single-system",
    value: `${(first("many") / first("one")).toFixed(2)}×, ${(first("many") / first("single")).toFixed(2)}×`,
    note: "spawn to the first answer, this run",
  });
  log(
    `  tenants start-up to first answer: ${TENANTS} tenants ${first("many").toFixed(0)} ms, one tenant ${first("one").toFixed(0)} ms, single-system ${first("single").toFixed(0)} ms`,
  );
  return rows;
}

interface Workload {
  readonly holders: readonly string[];
  readonly decisions: readonly string[];
  readonly rng: () => number;
}

const pick = <T>(xs: readonly T[], rng: () => number): T => xs[Math.floor(rng() * xs.length)]!;

/** Reads and decisions, one tenant (`oneTenant`) against spread over all. */
async function readRows(
  ctx: ScenarioContext,
  url: URL,
  w: Workload,
  oneTenant: number,
  label: string,
  key: string,
): Promise<Row[]> {
  const rounds = ctx.quick ? 1 : 3;
  const seconds = ctx.quick ? 1.5 : 3;
  const tenantOf = () => Math.floor(w.rng() * TENANTS);
  const read = (t: number): Op => ({ method: "GET", path: `/${systemIdOf(t)}/holders/${pick(w.holders, w.rng)}` });
  const decide = (t: number): Op => ({
    method: "POST",
    path: `/${systemIdOf(t)}/decisions`,
    body: pick(w.decisions, w.rng),
  });
  const reads = await compare(url, rounds, seconds, { one: () => read(oneTenant), spread: () => read(tenantOf()) });
  const decisions = await compare(url, rounds, seconds, {
    one: () => decide(oneTenant),
    spread: () => decide(tenantOf()),
  });
  return [
    ...compareRows(`GET /holders/:id${label}`, "reads", reads, ctx, `${key}.read`),
    ...compareRows(`POST /decisions${label}`, "decisions", decisions, ctx, `${key}.decide`),
  ];
}

/** One request to every tenant (16 clients), which loads each; the rate of that pass. */
async function touchAll(url: URL, holder: string): Promise<LoadResult> {
  return load(url, 600, TENANTS, (i) => ({ method: "GET", path: `/${systemIdOf(i)}/holders/${holder}` }));
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  if (!existsSync(CLI))
    return [
      {
        section: SECTION,
        size: "",
        name: "rsop serve --data (service)",
        note: "skipped: dist/cli.js missing (npm run build)",
      },
    ];
  const rows: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), "rsop-bench-tenants-"));
  try {
    const text = readFileSync(resolve("examples/building.json"), "utf8");
    const building = JSON.parse(text) as Building;
    const decisions = readFileSync(resolve("examples/requests.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => {
        const { note: _note, ...request } = JSON.parse(l) as Record<string, unknown>;
        return JSON.stringify(request);
      });
    const w: Workload = { holders: building.holders.map((h) => h.id), decisions, rng: mulberry32(0x7e_4a_17) };
    const holder = w.holders[0]!;

    const dbs = { many: join(dir, "many.db"), one: join(dir, "one.db"), single: join(dir, "single.db") };
    const t0 = performance.now();
    await prepareService(dbs.many, TENANTS, building);
    const prepMs = performance.now() - t0;
    await prepareService(dbs.one, 1, building);
    const systemFile = join(dir, "system.json");
    writeFileSync(systemFile, JSON.stringify({ ...building, systemId: systemIdOf(0) }));
    await prepareSingle(dbs.single, systemFile);
    log(`  tenants: ${TENANTS} customers prepared through TenantRegistry in ${(prepMs / 1000).toFixed(1)} s`);

    rows.push(...(await startUpRows(ctx, dbs, holder)));

    // A budget that holds every tenant (the estimate of 1,000 such tenants is about 1.1 GiB).
    const big = ["--memory-budget", "3GiB"];
    let server = await serve(dbs.many, big);
    let perTenant: number;
    try {
      const cold = await touchAll(server.url, holder);
      const h = await health(server.url);
      if (h.loaded !== TENANTS) throw new Error(`expected ${TENANTS} tenants loaded, /healthz says ${h.loaded}`);
      perTenant = h.estimatedBytes / h.loaded;
      log(
        `  tenants: first request to each of ${TENANTS} tenants ${cold.opsPerSec.toFixed(0)}/s; estimate ${(perTenant / 1024).toFixed(0)} KiB per tenant`,
      );
      const sorted = cold.latencies.sort((x, y) => x - y);
      rows.push({
        section: SECTION,
        size: "",
        name: `first request to each of ${TENANTS.toLocaleString("en-US")} tenants (loads it)`,
        opsPerSec: cold.opsPerSec,
        p50Ns: quantile(sorted, 0.5) * 1e6,
        p99Ns: quantile(sorted, 0.99) * 1e6,
        note: `GET /holders/:id, ${CLIENTS} clients; each loads its tenant (${(cold.seconds).toFixed(1)} s in all); estimated ${(perTenant / 1024).toFixed(0)} KiB per loaded tenant`,
      });
      ctx.facts["tenants.coldLoadsPerSec"] = cold.opsPerSec;
      ctx.facts["tenants.estimatedBytesPerTenant"] = perTenant;
      rows.push(...(await readRows(ctx, server.url, w, 0, "", "all")));
    } finally {
      await stop(server);
    }

    // A budget of about 100 tenants: a spread request nearly always loads its tenant, evicting another.
    const small = Math.round(SMALL_BUDGET_TENANTS * perTenant);
    server = await serve(dbs.many, ["--memory-budget", String(small)]);
    try {
      const label = ` (budget ~${SMALL_BUDGET_TENANTS} tenants)`;
      rows.push(...(await readRows(ctx, server.url, w, 0, label, "budget100")));
    } finally {
      await stop(server);
    }

    // Writes, every tenant loaded first (not timed).
    server = await serve(dbs.many, big);
    try {
      await touchAll(server.url, holder);
      let card = 920_000_000_000;
      const create = (t: number, i: number): Op => ({
        method: "POST",
        path: `/${systemIdOf(t)}/holders`,
        body: JSON.stringify({
          firstName: "Tenants",
          lastName: `Bench${i}`,
          credentials: [{ types: ["card"], credentialNumber: card++, facilityCode: 1 }],
        }),
      });
      const writes = await compare(server.url, ctx.quick ? 1 : 3, ctx.quick ? 1.5 : 3, {
        one: (i) => create(0, i),
        spread: (i) => create(Math.floor(w.rng() * TENANTS), i),
      });
      rows.push(...compareRows("POST /holders (a card)", "creates", writes, ctx, "all.write"));
    } finally {
      await stop(server);
    }
  } finally {
    await killRunning();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
