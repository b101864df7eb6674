// At-least-once across a crash: the real `rsop serve --data` in a child process, its subscriber's
// HTTPS receiver down, 4 clients writing and asking decisions; SIGKILL at a random moment; the
// receiver comes back and the server restarts on the same database. Every acknowledged write's
// event and every acknowledged decision's event arrives, each client's in the order it was
// acknowledged, none twice.
import { afterAll, expect, onTestFinished, test } from "vitest";
import { buildCli, serveChild } from "../support/cliChild.js";
import { caller, dataDir } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";
import { RECEIVER_ALLOW, Receiver, selfSignedCertificate } from "./receiver.js";

afterAll(removeTempDirs);

const CLIENTS = 4;
const FLAGS = [
  "--webhook-backoff",
  "50",
  "--webhook-attempts",
  "1000000",
  "--webhook-allow",
  RECEIVER_ALLOW.join(","),
  "--port",
  "0",
];

test("SIGKILL while the subscriber is down: after a restart, every acknowledged write and decision reaches it, in each client's order, none twice", async () => {
  const cli = await buildCli("webhook-restart");
  const { db, system } = dataDir();
  const receiver = await Receiver.start(selfSignedCertificate());
  onTestFinished(() => receiver.stop());
  await receiver.stop(); // down, its port kept for later

  const first = await serveChild(cli, ["--data", db, "--system", system, ...FLAGS]);
  const api = caller(first.url, "");
  const created = await api("POST", "/api/organizations/sys-1/subscriptions", {
    name: "Crash test",
    url: receiver.url,
    scope: "this",
    authentication: { type: "None" },
    events: ["entity.added", "device.request.allowed"],
    sslVerification: false,
  });
  expect(created.status).toBe(201);

  const call = caller(first.url);
  const acked: string[][] = Array.from({ length: CLIENTS }, () => []);
  let killed = false;
  let total = 0;
  async function client(k: number): Promise<void> {
    for (let i = 0; !killed; i++) {
      try {
        if (i % 3 === 2) {
          // A decision: its event's device and holder identify it; its id is answered by no one, so the client remembers its instant.
          const at = new Date(Date.UTC(2026, 3, 15, 12, 0, 0) + (k * 100_000 + i) * 1000).toISOString();
          const r = await call("POST", "/decisions", {
            deviceId: "d-front",
            at,
            credential: { credentialNumber: 1001, facilityCode: 10 },
          });
          if (r.status !== 200 || r.body.outcome !== "allowed")
            throw new Error(`decision answered ${r.status}: ${JSON.stringify(r.body)}`);
          acked[k]!.push(`access ${at}`);
        } else {
          const r = await call("POST", "/groups", { name: `Crew ${k}-${i}` });
          if (r.status !== 200) throw new Error(`group create answered ${r.status}`);
          acked[k]!.push(`group ${r.body.id}`);
        }
        total++;
      } catch (e) {
        if (killed) return;
        throw e;
      }
    }
  }
  const clients = Array.from({ length: CLIENTS }, (_, k) => client(k));
  const started = performance.now();
  while (total < 40 && performance.now() - started < 60_000) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 500)));
  const exited = new Promise((r) => first.child.once("exit", r));
  killed = true;
  first.child.kill("SIGKILL");
  await exited;
  await Promise.all(clients);
  const ackedCount = acked.flat().length;
  expect(ackedCount).toBeGreaterThanOrEqual(40);

  await receiver.listen();
  await serveChild(cli, ["--data", db, ...FLAGS]);
  const key = (b: any) => (b.topic === "entity.added" ? `group ${b.entityId}` : `access ${b.occurredAt}`);
  const has = () => {
    const got = new Set(receiver.delivered.map((r) => key(r.body)));
    return acked.flat().every((a) => got.has(a));
  };
  await receiver.waitFor(has, 60_000, `the ${ackedCount} acknowledged events`);
  const delivered = receiver.delivered.map((r) => key(r.body));
  expect(new Set(delivered).size, "no event twice").toBe(delivered.length);
  expect(new Set(receiver.delivered.map((r) => r.body.id)).size).toBe(delivered.length);
  for (const mine of acked)
    expect(
      delivered.filter((d) => mine.includes(d)),
      "a client's events in its order",
    ).toEqual(mine);
}, 180_000);
