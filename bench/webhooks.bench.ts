// Scenario: webhooks of `rsop serve --data` — the built CLI in a child process on 127.0.0.1 over a
// temporary SQLite database (the fixture building), an HTTPS receiver in this process (a
// self-signed certificate made by openssl, subscriptions with sslVerification false) answering 204,
// and 16 concurrent HTTP clients. Measured, in one run:
//
// - decision latency through `POST /{system_id}/decisions` (one request per call) with no
//   subscription, then with 10 active subscriptions to every access event: each answer then waits
//   for its events to be stored (one SQLite transaction, synchronous=FULL), never for a subscriber;
//   the dispatcher sends them meanwhile, on the same cores.
// - events dispatched per second to the local receiver: with 10 subscriptions (10 loops in
//   parallel, each in its own order) and with one (one loop: one notification at a time, in order),
//   from the first notification of the burst to the last, once a burst of decisions in batches of
//   100 has filled the outbox.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type Server as HttpsServer, createServer } from "node:https";
import { Agent } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Row, fmtMs, log } from "./benchUtil.js";
import { fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";
import { type LoadResult, type Server, call, load, serve, stop } from "./service.bench.js";

const CLI = resolve("dist/cli.js");
const BATCH = 100;

/** An HTTPS receiver counting notifications, with the arrival time of each. */
async function receiver(dir: string): Promise<{ server: HttpsServer; url: string; arrivals: number[] }> {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  const arrivals: number[] = [];
  const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    req.resume();
    req.on("end", () => {
      arrivals.push(performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrivals };
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  if (!existsSync(CLI))
    return [
      {
        section: "webhooks",
        size: "",
        name: "rsop serve --data webhooks",
        note: "skipped: dist/cli.js missing (npm run build)",
      },
    ];
  const rows: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), "rsop-bench-webhooks-"));
  const size = ctx.sizes.includes("M") ? "M" : ctx.sizes[0]!;
  const f = fixture(size);
  const system = join(dir, "system.json");
  writeFileSync(system, f.json);
  const { systemId } = JSON.parse(f.json) as { systemId: string };
  const sys = `/${systemId}`;
  const subs = `/api/organizations/${systemId}/subscriptions`;
  const seconds = ctx.quick ? 1.5 : 3;
  const rx = await receiver(dir);
  let server: Server | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  try {
    // The receiver is on loopback, refused by default (docs/semantics.md HW1): the operator allows it.
    server = await serve(join(dir, "data.db"), [
      "--system",
      system,
      "--webhook-backlog",
      "10000000",
      "--webhook-allow",
      "127.0.0.1/32",
    ]);
    const url = server.url;
    const bodies = f.set.requests.slice(0, 20_000).map((r) => JSON.stringify(r));
    const single = (i: number) => ({ method: "POST", path: `${sys}/decisions`, body: bodies[i % bodies.length]! });
    const subscribe = async (name: string) => {
      const body = JSON.stringify({
        name,
        url: rx.url,
        scope: "this",
        authentication: { type: "None" },
        events: ["device.request.allowed", "device.request.denied", "device.request.unknown"],
        sslVerification: false,
        secret: "bench-secret",
      });
      const r = await call(agent, url, "POST", subs, body);
      if (r.status !== 201) throw new Error(`subscribe answered ${r.status}: ${r.body}`);
      return (JSON.parse(r.body) as { id: string }).id;
    };
    const row = (name: string, r: LoadResult, note: string): Row => ({
      section: "webhooks",
      size,
      name,
      opsPerSec: r.opsPerSec,
      p50Ns: r.p50Ms * 1e6,
      p99Ns: r.p99Ms * 1e6,
      note,
    });

    // Decision latency: no subscription, then 10 (same server, same request pool).
    await load(url, 0.5, Number.POSITIVE_INFINITY, single); // warm-up
    const bare = await load(url, seconds, Number.POSITIVE_INFINITY, single);
    log(
      `  webhooks ${size}: decisions, no subscription: ${bare.opsPerSec.toFixed(0)}/s, p50 ${bare.p50Ms.toFixed(2)} ms, p99 ${bare.p99Ms.toFixed(2)} ms`,
    );
    rows.push(row("POST /decisions, no subscription", bare, "16 clients, one request per call; latency per call"));
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await subscribe(`bench ${i}`));
    const before = rx.arrivals.length;
    const busy = await load(url, seconds, Number.POSITIVE_INFINITY, single);
    log(
      `  webhooks ${size}: decisions, 10 subscriptions: ${busy.opsPerSec.toFixed(0)}/s, p50 ${busy.p50Ms.toFixed(2)} ms, p99 ${busy.p99Ms.toFixed(2)} ms`,
    );
    rows.push(
      row(
        "POST /decisions, 10 active subscriptions",
        busy,
        `16 clients; each answer waits for its 10 events to be stored, not sent; ${(busy.p50Ms / bare.p50Ms).toFixed(2)}× the p50 without (same run)`,
      ),
    );
    const produced = busy.count * 10;
    await until(() => rx.arrivals.length - before >= produced, 600_000, `${produced} events`);

    // Dispatch rate: a burst of decisions in batches of 100, to 10 subscriptions, then to one.
    const burst = async (decisions: number, subscriptions: number, name: string) => {
      const start = rx.arrivals.length;
      const batches = Math.ceil(decisions / BATCH);
      for (let b = 0; b < batches; b++) {
        const r = await call(
          agent,
          url,
          "POST",
          `${sys}/decisions`,
          `[${bodies.slice((b * BATCH) % 19_900, ((b * BATCH) % 19_900) + BATCH).join(",")}]`,
        );
        if (r.status !== 200) throw new Error(`decisions answered ${r.status}`);
      }
      const events = batches * BATCH * subscriptions;
      await until(() => rx.arrivals.length - start >= events, 600_000, `${events} events`);
      const span = (rx.arrivals[start + events - 1]! - rx.arrivals[start]!) / 1000;
      const rate = (events - 1) / span;
      log(`  webhooks ${size}: ${events} events to ${subscriptions} subscription(s): ${rate.toFixed(0)} events/s`);
      rows.push({
        section: "webhooks",
        size,
        name,
        opsPerSec: rate,
        value: `${events} events in ${fmtMs(span * 1000)}`,
        note: "first to last notification at the receiver; each a signed HTTPS POST answered 204, then removed from the outbox (synchronous=FULL)",
      });
      ctx.facts[`webhooks.${size}.${subscriptions}.eventsPerSec`] = rate;
    };
    await burst(ctx.quick ? 500 : 2000, 10, "events dispatched, 10 subscriptions");
    for (const id of ids.slice(1)) await call(agent, url, "DELETE", `${subs}/${id}`);
    await burst(ctx.quick ? 1000 : 5000, 1, "events dispatched, 1 subscription (in order, one at a time)");
    ctx.facts[`webhooks.${size}.decisionP50Ms`] = { none: bare.p50Ms, ten: busy.p50Ms };
    ctx.facts[`webhooks.${size}.decisionP99Ms`] = { none: bare.p99Ms, ten: busy.p99Ms };
  } finally {
    agent.destroy();
    if (server !== undefined) await stop(server, "SIGKILL");
    rx.server.closeAllConnections();
    await new Promise<void>((r) => rx.server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
