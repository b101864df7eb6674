// Webhooks on PostgreSQL (W15–W18): the outbox shares the transaction of the change log's append; the
// subscriptions are shared by every replica; one replica dispatches at a time (an advisory lock),
// and when it dies another takes over. A real PostgreSQL cluster and a real HTTPS receiver on
// 127.0.0.1, both started by the test (skipped with the reason where no PostgreSQL binaries exist).
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import type { WebhookOptions } from "../../src/service/webhooks/webhookService.js";
import { openPostgresStore } from "../../src/adapters/store/postgresStore.js";
import { building } from "../live/fixture.js";
import { caller } from "../http/dataSupport.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";
import { PG, SKIP_NOTE, eventually, freshDatabase, sql, startReplica, useCluster } from "../store/pgSupport.js";
import { buildCli, serveChild } from "../support/cliChild.js";
import { RECEIVER_ALLOW, Receiver, selfSignedCertificate } from "./receiver.js";
import { join } from "node:path";
import { writeFileSync } from "node:fs";

useCluster();
afterAll(removeTempDirs);

let tls: { cert: string; key: string };
beforeAll(() => {
  tls = selfSignedCertificate();
});

const SUBS = "/api/organizations/sys-1/subscriptions";
const FAST: WebhookOptions = {
  backoffMs: 20,
  maxBackoffMs: 200,
  attempts: 1000,
  timeoutMs: 5000,
  allow: RECEIVER_ALLOW,
};
const event = (id: string) => ({ id, topic: "entity.added", occurredAt: "2026-04-15T12:00:00.000Z" });
const subscription = (url: string) => ({
  name: "Everything",
  url,
  scope: "this",
  authentication: { type: "None" },
  events: ["entity.added", "entity.modified", "device.request.allowed"],
  sslVerification: false,
});
/** What identifies a delivered event: a group added, or a decision at an instant. */
const key = (b: any) => (b.topic === "device.request.allowed" ? `access ${b.occurredAt}` : `${b.topic} ${b.entityId}`);

describe("webhooks on PostgreSQL", () => {
  test.skipIf(!PG.ok)(
    `outbox rows commit in the append's transaction: a failing row stores no change, a lost race no row; the store's methods match SQLite's${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const store = await openPostgresStore(url);
      onTestFinished(() => store.close());
      await store.init("system", { format: "rsop-system/1" }, "t0");
      const w = store.webhooks!;
      await w.putSubscription("s-1", { name: "one" });
      const write = (op: number) => [{ operation: { op }, patches: [], time: `t${op}` }];
      expect(await store.appendAt(1, write(1), [{ subscriptionId: "s-1", kind: "change", event: event("e-1") }])).toBe(
        true,
      );
      const circular: Record<string, unknown> = { ...event("e-2") };
      circular.self = circular;
      await expect(
        store.appendAt(2, write(2), [{ subscriptionId: "s-1", kind: "change", event: circular as never }]),
      ).rejects.toThrow();
      // Sequence number 1 is taken: neither the change nor its row is stored.
      expect(await store.appendAt(1, write(9), [{ subscriptionId: "s-1", kind: "change", event: event("e-9") }])).toBe(
        false,
      );
      expect(await store.appendAt(2, write(3), [{ subscriptionId: "s-1", kind: "change", event: event("e-3") }])).toBe(
        true,
      );
      expect(
        (await sql<{ operation: string }>(url, "SELECT operation FROM rsop_changes ORDER BY seq")).map((r) =>
          JSON.parse(r.operation),
        ),
      ).toEqual([{ op: 1 }, { op: 3 }]);

      const rows = await w.pending("s-1", 10);
      expect(rows.map((r) => [r.event.id, r.state, r.kind])).toEqual([
        ["e-1", "pending", "change"],
        ["e-3", "pending", "change"],
      ]);
      await w.delivered([{ subscriptionId: "s-1", seq: rows[0]!.seq }]);
      await w.park("s-1", rows[1]!.seq, 8, "the receiver answered HTTP 500", "t4");
      expect(await w.pending("s-1", 10)).toEqual([]);
      expect((await w.parked("s-1", 0, 10)).rows).toMatchObject([
        { event: { id: "e-3" }, attempts: 8, reason: "failed", lastError: "the receiver answered HTTP 500" },
      ]);
      await w.enqueue([{ subscriptionId: "s-1", kind: "access", event: event("e-4") }]);
      expect(await w.redeliver("s-1", ["e-3", "e-3", "unknown"])).toBe(1);
      // W11: a re-delivered event keeps its place, before the newer e-4.
      expect((await w.pending("s-1", 10)).map((r) => r.event.id)).toEqual(["e-3", "e-4"]);
      expect((await w.subscriptions()).map((s) => [s.id, s.odometer])).toEqual([["s-1", 1]]);
      // The backlog cap: the newest `keep` access rows stay pending, change rows are not touched.
      await w.enqueue(
        Array.from({ length: 5 }, (_, i) => ({
          subscriptionId: "s-1",
          kind: "access" as const,
          event: event(`a-${i}`),
        })),
      );
      expect(await w.parkOldest("s-1", "access", 2, "t5")).toBe(4);
      expect((await w.pending("s-1", 10)).map((r) => r.event.id)).toEqual(["e-3", "a-3", "a-4"]);
      expect(await w.pendingCounts()).toEqual(new Map([["s-1", { access: 2, change: 1 }]]));
      expect((await w.parked("s-1", 0, 2)).total).toBe(4);
      await w.deleteSubscription("s-1");
      expect((await sql<{ n: string }>(url, "SELECT count(*) AS n FROM rsop_webhook_outbox"))[0]!.n).toBe("0");
    },
  );

  test.skipIf(!PG.ok)(
    `two replicas share the subscriptions; one dispatches; every write and decision through either arrives once${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      const receiver = await Receiver.start(tls);
      onTestFinished(() => receiver.stop());
      const a = await startReplica(url, building(), { webhooks: FAST });
      const b = await startReplica(url, undefined, { webhooks: FAST });
      const apiA = caller(a.server.url, "");
      const apiB = caller(b.server.url, "");
      const created = await apiA("POST", SUBS, subscription(receiver.url));
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      // Created through A, read through B at once (W15), and changed through B, read through A.
      expect((await apiB("GET", `${SUBS}/${id}`)).body).toMatchObject({ id, name: "Everything", active: true });
      expect(
        (
          await apiB("PUT", `${SUBS}/${id}`, {
            ...subscription(receiver.url),
            name: "Both replicas",
            active: true,
            secrecyLevel: 1,
          })
        ).status,
      ).toBe(204);
      expect((await apiA("GET", SUBS)).body.map((s: { name: string }) => s.name)).toEqual(["Both replicas"]);
      // The other replica has heard of it (a notification) before its own writes count on it.
      await eventually("B knows the subscription", () => b.server.webhooks!.get(id)?.name === "Both replicas");
      await eventually(
        "one replica dispatches",
        () => a.server.webhooks!.dispatching !== b.server.webhooks!.dispatching,
      );
      const health = await Promise.all([apiA("GET", "/healthz"), apiB("GET", "/healthz")]);
      expect(health.map((h) => h.body.webhookDispatcher).sort()).toEqual([false, true]);

      const expected: string[] = [];
      for (let i = 0; i < 6; i++) {
        const via = i % 2 === 0 ? a : b;
        const g = await via.call("POST", "/groups", { name: `Crew ${i}` });
        expect(g.status).toBe(200);
        expected.push(`entity.added ${g.body.id}`);
        const at = new Date(Date.UTC(2026, 3, 15, 12, 0, i)).toISOString();
        const d = await via.call("POST", "/decisions", {
          deviceId: "d-front",
          at,
          credential: { credentialNumber: 1001, facilityCode: 10 },
        });
        expect(d.body.outcome).toBe("allowed");
        expected.push(`access ${at}`);
      }
      await receiver.waitFor(() => receiver.delivered.length >= expected.length, 30_000, `${expected.length} events`);
      // A moment more: a second dispatcher would show as a duplicate.
      await new Promise((r) => setTimeout(r, 300));
      const got = receiver.delivered.map((r) => key(r.body));
      expect([...got].sort()).toEqual([...expected].sort());
      expect(new Set(receiver.delivered.map((r) => r.body.id)).size).toBe(got.length);
      // Each replica's own events in the order it acknowledged them.
      for (const mine of [
        expected.filter((_, i) => Math.floor(i / 2) % 2 === 0),
        expected.filter((_, i) => Math.floor(i / 2) % 2 === 1),
      ])
        expect(got.filter((g) => mine.includes(g))).toEqual(mine);
      await eventually(
        "the outbox is empty",
        async () => (await sql<{ n: string }>(url, "SELECT count(*) AS n FROM rsop_webhook_outbox"))[0]!.n === "0",
      );
      // The odometer, read through the replica that did not send.
      const idle = a.server.webhooks!.dispatching ? apiB : apiA;
      expect((await idle("GET", `${SUBS}/${id}`)).body.odometer).toBe(expected.length);
      // Deleted through one, gone on the other.
      expect((await apiB("DELETE", `${SUBS}/${id}`)).status).toBe(204);
      expect((await apiA("GET", `${SUBS}/${id}`)).status).toBe(404);
    },
  );

  test.skipIf(!PG.ok)(
    `the dispatching replica is killed with SIGKILL while the receiver is down: the other replica takes over and delivers every acknowledged event once${SKIP_NOTE}`,
    async () => {
      const cli = await buildCli("pg-webhooks");
      const url = await freshDatabase();
      const system = join(tempDir(), "building.json");
      writeFileSync(system, JSON.stringify(building()));
      const receiver = await Receiver.start(tls);
      onTestFinished(() => receiver.stop());
      await receiver.stop(); // down, its port kept for later
      const flags = [
        "--store",
        url,
        "--webhook-backoff",
        "50",
        "--webhook-attempts",
        "1000000",
        "--webhook-allow",
        RECEIVER_ALLOW.join(","),
        "--port",
        "0",
      ];
      const first = await serveChild(cli, [...flags, "--system", system]);
      const second = await serveChild(cli, flags);
      const api = caller(second.url, "");
      expect((await api("POST", SUBS, subscription(receiver.url))).status).toBe(201);
      const health = async (u: string) => (await caller(u, "")("GET", "/healthz")).body.webhookDispatcher as boolean;
      await eventually("one replica dispatches", async () => (await health(first.url)) !== (await health(second.url)));
      const [dispatcher, survivor] = (await health(first.url)) ? [first, second] : [second, first];

      const acked: string[] = [];
      for (let i = 0; i < 10; i++) {
        const via = caller(i % 2 === 0 ? first.url : second.url);
        const g = await via("POST", "/groups", { name: `Crew ${i}` });
        expect(g.status).toBe(200);
        acked.push(`entity.added ${g.body.id}`);
        const at = new Date(Date.UTC(2026, 3, 15, 12, 0, i)).toISOString();
        expect(
          (
            await via("POST", "/decisions", {
              deviceId: "d-front",
              at,
              credential: { credentialNumber: 1001, facilityCode: 10 },
            })
          ).body.outcome,
        ).toBe("allowed");
        acked.push(`access ${at}`);
      }
      const exited = new Promise((r) => dispatcher.child.once("exit", r));
      dispatcher.child.kill("SIGKILL");
      await exited;
      await receiver.listen();
      await eventually("the survivor dispatches", () => health(survivor.url), 30_000);
      await receiver.waitFor(
        () => receiver.delivered.length >= acked.length,
        60_000,
        `the ${acked.length} acknowledged events`,
      );
      await new Promise((r) => setTimeout(r, 300));
      const got = receiver.delivered.map((r) => key(r.body));
      expect([...got].sort()).toEqual([...acked].sort());
      expect(new Set(receiver.delivered.map((r) => r.body.id)).size, "none twice").toBe(got.length);
    },
    180_000,
  );
});
