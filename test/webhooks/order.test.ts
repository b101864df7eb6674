// Webhook order per subscription survives parking (docs HW4): every notification carries its
// subscription's `sequence` (1, 2, 3, … in outbox order, no gap, kept when the event is parked and
// re-delivered), so a receiver that gets a re-delivered event after newer ones puts it back in its
// place. A real HTTPS receiver on 127.0.0.1 that fails and then recovers, real servers over a real
// SQLite file and a real PostgreSQL cluster.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import type { WebhookOptions } from "../../src/service/webhooks/webhookService.js";
import { sqliteWebhooks } from "../../src/adapters/store/sqliteWebhooks.js";
import { building } from "../live/fixture.js";
import { type Caller, caller, dataDir, startData } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";
import { PG, SKIP_NOTE, freshDatabase, sql, startReplica, useCluster } from "../store/pgSupport.js";
import { openPostgresStore } from "../../src/adapters/store/postgresStore.js";
import { RECEIVER_ALLOW, Receiver, eventually, selfSignedCertificate } from "./receiver.js";

useCluster();
afterAll(removeTempDirs);

let tls: { cert: string; key: string };
beforeAll(() => {
  tls = selfSignedCertificate();
});

const SUBS = "/api/organizations/sys-1/subscriptions";
const FAST: WebhookOptions = { backoffMs: 20, maxBackoffMs: 100, attempts: 2, timeoutMs: 5000, allow: RECEIVER_ALLOW };
const subscription = (url: string) => ({
  name: "Ordered",
  url,
  scope: "this",
  authentication: { type: "None" },
  events: ["entity.added", "device.request.allowed"],
  sslVerification: false,
});
type Started = { server: { url: string }; call: Caller };

/**
 * The receiver is down when the first event is sent (parked after its attempts), back for the next
 * two, then the parked one is re-delivered: it arrives last, and ordering by `sequence` gives the
 * order of the writes.
 */
async function parkedThenRedelivered(start: () => Promise<Started>): Promise<void> {
  const receiver = await Receiver.start(tls);
  onTestFinished(() => receiver.stop());
  const { server, call } = await start();
  const api = caller(server.url, "");
  const id = (await api("POST", SUBS, subscription(receiver.url))).body.id as string;
  await receiver.stop();
  const written = [(await call("POST", "/groups", { name: "First" })).body.id as string];
  let parked: any[] = [];
  await eventually(
    async () => (parked = (await api("GET", `${SUBS}/${id}/parked`)).body).length === 1,
    20_000,
    "the first event parked",
  );
  expect(parked[0]).toMatchObject({
    sequence: 1,
    reason: "failed",
    lastError: "connection failed",
    event: { entityId: written[0] },
  });

  await receiver.listen();
  for (const name of ["Second", "Third"]) written.push((await call("POST", "/groups", { name })).body.id);
  await receiver.waitFor(() => receiver.delivered.length === 2, 20_000, "the two newer events");
  expect((await api("POST", `${SUBS}/${id}/parked/redeliver`)).body).toEqual({ redelivered: 1 });
  await receiver.waitFor(() => receiver.delivered.length === 3, 20_000, "the re-delivered event");
  const arrived = receiver.delivered.map((r) => [r.body.sequence, r.body.entityId]);
  // The parked event arrives after the newer ones, with its own sequence number …
  expect(arrived).toEqual([
    [2, written[1]],
    [3, written[2]],
    [1, written[0]],
  ]);
  // … and the receiver restores the order of the writes by it.
  expect([...arrived].sort((a, b) => a[0] - b[0]).map((a) => a[1])).toEqual(written);
  // The numbering goes on after the re-delivery, for every kind of event.
  await call("POST", "/decisions", {
    deviceId: "d-front",
    at: "2026-04-15T12:00:00Z",
    credential: { credentialNumber: 1001, facilityCode: 10 },
  });
  await receiver.waitFor(() => receiver.delivered.length === 4, 20_000, "a decision's event");
  expect(receiver.delivered[3]!.body).toMatchObject({ topic: "device.request.allowed", sequence: 4 });
}

test("HW4 --data: a parked event re-delivered after newer ones carries its sequence, and ordering by it restores the order of the writes", async () => {
  const { db } = dataDir();
  await parkedThenRedelivered(() => startData(db, building(), { webhooks: FAST }));
});

test("HW4 --data: the numbering survives a restart (the counter is stored with the subscription)", async () => {
  const { db } = dataDir();
  const receiver = await Receiver.start(tls);
  onTestFinished(() => receiver.stop());
  const first = await startData(db, building(), { webhooks: FAST });
  const api = caller(first.server.url, "");
  const id = (await api("POST", SUBS, subscription(receiver.url))).body.id as string;
  await first.call("POST", "/groups", { name: "Before" });
  // Its delivery committed (the odometer counts it), so the restart does not send it again (W12).
  await eventually(
    async () => (await api("GET", `${SUBS}/${id}`)).body.odometer === 1,
    10_000,
    "the delivery committed",
  );
  await first.server.close();
  const again = await startData(db, undefined, { webhooks: FAST });
  await again.call("POST", "/groups", { name: "After" });
  await receiver.waitFor(() => receiver.delivered.length === 2);
  expect(receiver.delivered.map((r) => [r.body.data.name, r.body.sequence])).toEqual([
    ["Before", 1],
    ["After", 2],
  ]);
});

test("HW4 a database from before sequences gets them once: waiting rows numbered 1, 2, … per subscription in outbox order, new rows go on from there", async () => {
  const { db: file } = dataDir();
  const db = new Database(file);
  onTestFinished(() => {
    db.close();
  });
  // The tables as the previous version made them.
  db.exec(`CREATE TABLE webhook_subscriptions (id TEXT PRIMARY KEY, fields TEXT NOT NULL, odometer INTEGER NOT NULL DEFAULT 0) STRICT;
    CREATE TABLE webhook_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, subscription TEXT NOT NULL, kind TEXT NOT NULL, event_id TEXT NOT NULL, event TEXT NOT NULL,
      state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, parked_at TEXT, reason TEXT) STRICT;`);
  db.exec(`INSERT INTO webhook_subscriptions (id, fields) VALUES ('a', '{}'), ('b', '{}')`);
  const ev = (id: string) => JSON.stringify({ id, topic: "entity.added", occurredAt: "t" });
  for (const [sub, id] of [
    ["a", "a1"],
    ["b", "b1"],
    ["a", "a2"],
    ["a", "a3"],
  ])
    db.prepare("INSERT INTO webhook_outbox (subscription, kind, event_id, event) VALUES (?, 'change', ?, ?)").run(
      sub,
      id,
      ev(id!),
    );
  const { store, insert } = sqliteWebhooks(db as never, () => undefined);
  db.transaction(() =>
    insert([{ subscriptionId: "b", kind: "change", event: { id: "b2", topic: "entity.added", occurredAt: "t" } }]),
  )();
  // Opening again does not number anything twice.
  sqliteWebhooks(db as never, () => undefined);
  expect((await store.pending("a", 10)).map((r) => [r.event.id, r.sequence])).toEqual([
    ["a1", 1],
    ["a2", 2],
    ["a3", 3],
  ]);
  expect((await store.pending("b", 10)).map((r) => [r.event.id, r.sequence])).toEqual([
    ["b1", 1],
    ["b2", 2],
  ]);
});

describe("HW4 --store postgres://", () => {
  test.skipIf(!PG.ok)(
    `a parked event re-delivered after newer ones carries its sequence, and ordering by it restores the order of the writes${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      await parkedThenRedelivered(() => startReplica(url, building(), { webhooks: FAST }));
    },
  );

  test.skipIf(!PG.ok)(
    `a database from before sequences gets them once, waiting rows numbered per subscription in outbox order${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      // The tables as the previous version made them.
      await sql(
        url,
        `CREATE TABLE rsop_webhook_subscriptions (id text PRIMARY KEY, fields text NOT NULL, odometer bigint NOT NULL DEFAULT 0);
      CREATE TABLE rsop_webhook_outbox (seq bigserial PRIMARY KEY, subscription text NOT NULL, kind text NOT NULL, event_id text NOT NULL, event text NOT NULL,
        state text NOT NULL DEFAULT 'pending', attempts integer NOT NULL DEFAULT 0, last_error text, parked_at text, reason text);
      INSERT INTO rsop_webhook_subscriptions (id, fields) VALUES ('a', '{}'), ('b', '{}');`,
      );
      for (const [sub, id] of [
        ["a", "a1"],
        ["b", "b1"],
        ["a", "a2"],
        ["a", "a3"],
      ])
        await sql(
          url,
          "INSERT INTO rsop_webhook_outbox (subscription, kind, event_id, event) VALUES ($1, 'change', $2, $3)",
          [sub, id, JSON.stringify({ id, topic: "entity.added", occurredAt: "t" })],
        );
      const store = await openPostgresStore(url);
      onTestFinished(() => store.close());
      await store.webhooks!.enqueue([
        { subscriptionId: "b", kind: "access", event: { id: "b2", topic: "device.request.allowed", occurredAt: "t" } },
      ]);
      // Opening again numbers nothing twice.
      await (await openPostgresStore(url)).close();
      expect((await store.webhooks!.pending("a", 10)).map((r) => [r.event.id, r.sequence])).toEqual([
        ["a1", 1],
        ["a2", 2],
        ["a3", 3],
      ]);
      expect((await store.webhooks!.pending("b", 10)).map((r) => [r.event.id, r.sequence])).toEqual([
        ["b1", 1],
        ["b2", 2],
      ]);
    },
  );

  test.skipIf(!PG.ok)(
    `two replicas deciding at once for one subscription: its sequence numbers are 1…n with no gap or repeat, and arrive in order${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const receiver = await Receiver.start(tls);
      onTestFinished(() => receiver.stop());
      const a = await startReplica(url, building(), { webhooks: { ...FAST, attempts: 1000 } });
      const b = await startReplica(url, undefined, { webhooks: { ...FAST, attempts: 1000 } });
      const id = (await caller(a.server.url, "")("POST", SUBS, subscription(receiver.url))).body.id as string;
      await eventually(async () => b.server.webhooks?.get(id) !== undefined, 10_000, "B knows the subscription");
      const N = 40;
      await Promise.all(
        Array.from({ length: N }, (_, i) =>
          (i % 2 === 0 ? a : b).call("POST", "/decisions", {
            deviceId: "d-front",
            at: new Date(Date.UTC(2026, 3, 15, 12, 0, i)).toISOString(),
            credential: { credentialNumber: 1001, facilityCode: 10 },
          }),
        ),
      );
      await receiver.waitFor(() => receiver.delivered.length >= N, 30_000, `${N} events`);
      const sequences = receiver.delivered.map((r) => r.body.sequence as number);
      expect(sequences).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    },
  );
});
