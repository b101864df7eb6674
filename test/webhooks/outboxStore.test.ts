// The SQLite store's outbox: rows commit in the same transaction as the change that caused them
// (one fails, neither is stored), in order, and survive closing and reopening the database.
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { openSqliteStore } from "../../src/adapters/store/sqliteStore.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";

afterAll(removeTempDirs);

const event = (id: string) => ({ id, topic: "entity.added", occurredAt: "2026-04-15T12:00:00.000Z" });

test("append stores the change and its outbox rows in one transaction: when the rows cannot be stored, the change is not either", async () => {
  const file = join(tempDir(), "outbox.db");
  const store = await openSqliteStore(file);
  await store.init("system", { format: "rsop-system/1" }, "t0");
  const w = store.webhooks!;
  await w.putSubscription("s-1", { name: "one" });
  expect(
    await store.append({ op: 1 }, [], "t1", [{ subscriptionId: "s-1", kind: "change", event: event("e-1") }]),
  ).toBe(1);
  const circular: Record<string, unknown> = { ...event("e-2") };
  circular.self = circular;
  await expect(
    store.append({ op: 2 }, [], "t2", [{ subscriptionId: "s-1", kind: "change", event: circular as never }]),
  ).rejects.toThrow();
  expect(
    await store.append({ op: 3 }, [], "t3", [{ subscriptionId: "s-1", kind: "change", event: event("e-3") }]),
  ).toBe(2);
  await store.close();

  const again = await openSqliteStore(file);
  const loaded = await again.load();
  expect(loaded!.changes.map((c) => c.operation)).toEqual([{ op: 1 }, { op: 3 }]);
  const rows = await again.webhooks!.pending("s-1", 10);
  expect(rows.map((r) => r.event.id)).toEqual(["e-1", "e-3"]);
  expect(rows.map((r) => r.state)).toEqual(["pending", "pending"]);
  // delivered: the row goes, the odometer counts it; park and redeliver move a row between the states.
  await again.webhooks!.delivered([{ subscriptionId: "s-1", seq: rows[0]!.seq }]);
  await again.webhooks!.park("s-1", rows[1]!.seq, 8, "the receiver answered HTTP 500", "t4");
  expect(await again.webhooks!.pending("s-1", 10)).toEqual([]);
  expect((await again.webhooks!.parked("s-1", 0, 10)).rows).toMatchObject([
    { event: { id: "e-3" }, attempts: 8, reason: "failed", lastError: "the receiver answered HTTP 500" },
  ]);
  await again.webhooks!.enqueue([{ subscriptionId: "s-1", kind: "access", event: event("e-4") }]);
  expect(await again.webhooks!.redeliver("s-1", null)).toBe(1);
  // W11: a re-delivered event keeps its place, before the newer e-4.
  expect((await again.webhooks!.pending("s-1", 10)).map((r) => r.event.id)).toEqual(["e-3", "e-4"]);
  expect((await again.webhooks!.subscriptions()).map((s) => [s.id, s.odometer])).toEqual([["s-1", 1]]);
  await again.close();
});

test("parkOldest keeps the newest rows of a kind pending and parks the older ones (reason backlog); change rows are not touched", async () => {
  const store = await openSqliteStore(join(tempDir(), "backlog.db"));
  await store.init("system", {}, "t0");
  const w = store.webhooks!;
  await w.putSubscription("s-1", {});
  await w.enqueue([
    { subscriptionId: "s-1", kind: "change", event: event("c-1") },
    ...Array.from({ length: 5 }, (_, i) => ({
      subscriptionId: "s-1",
      kind: "access" as const,
      event: event(`a-${i}`),
    })),
  ]);
  expect(await w.parkOldest("s-1", "access", 2, "t1")).toBe(3);
  expect((await w.pending("s-1", 10)).map((r) => r.event.id)).toEqual(["c-1", "a-3", "a-4"]);
  const parked = await w.parked("s-1", 0, 2);
  expect(parked.total).toBe(3);
  expect(parked.rows.map((r) => [r.event.id, r.reason])).toEqual([
    ["a-0", "backlog"],
    ["a-1", "backlog"],
  ]);
  expect(await w.pendingCounts()).toEqual(new Map([["s-1", { access: 2, change: 1 }]]));
  await store.close();
});
