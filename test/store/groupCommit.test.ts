// Group commit of the durable system (durableSystem.ts) on a real SQLite file: writes are applied at
// once and handed to the store without waiting for the ones before them to be durable; each is
// answered once it is durable, in log order; the log's order is the order they were applied in. A
// write the store cannot take is undone with every write applied after it (in reverse order) and they
// are all answered its error (a refusal after it too); the numbers they had are then given again.
// And the store's syncs themselves: the commits made while one fsync runs share the next.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { openSqliteStore } from "../../src/adapters/store/sqliteStore.js";
import { CHECKPOINT_BYTES, WalSync } from "../../src/adapters/store/walSync.js";
import { openDurableSystem } from "../../src/service/store/durableSystem.js";
import { type Store, StoreUnavailableError } from "../../src/service/store/store.js";
import type { Operation, OperationResult } from "../../src/live/index.js";
import { building } from "../live/fixture.js";
import { dataDir, inspect } from "../http/dataSupport.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";

afterAll(removeTempDirs);

const plain = (x: unknown) => JSON.parse(JSON.stringify(x));
const group = (name: string): Operation => ({ method: "POST", path: "/groups", body: { name } });
const names = (ops: readonly { operation: { body: { name: string } } }[]) => ops.map((c) => c.operation.body.name);

describe("group commit", () => {
  test("writes made at once: all applied at once, each answered once durable and in log order; refusals answered after the writes before them; the log is in call order", async () => {
    const { db } = dataDir();
    const durable = await openDurableSystem(await openSqliteStore(db), {
      initial: { kind: "system", json: building() },
    });
    const answered: string[] = [];
    const ops = Array.from({ length: 40 }, (_, k) => group(k % 10 === 9 ? `G${k - 9}` : `G${k}`)); // every 10th repeats a name: 409
    const writes = ops.map((op) =>
      durable.write(op).then((r) => {
        answered.push((op.body as { name: string }).name + (r.ok ? "" : "!"));
        return r;
      }),
    );
    // Every write is applied already (a read shows it), before any is answered.
    if (durable.target.kind !== "system") throw new Error("a system");
    expect(durable.target.live.snapshot.groups.filter((g) => g.name.startsWith("G"))).toHaveLength(36);
    expect(answered).toEqual([]);
    const results = await Promise.all(writes);
    expect(results.map((r) => r.status)).toEqual(ops.map((_, k) => (k % 10 === 9 ? 409 : 200)));
    expect(answered).toEqual(ops.map((op, k) => (op.body as { name: string }).name + (k % 10 === 9 ? "!" : "")));
    expect(durable.seq()).toBe(36);
    const state = plain(durable.target.live.snapshot);
    await durable.store.close(); // as a crash: no closing snapshot
    const stored = inspect(db);
    expect(names(stored.changes)).toEqual(
      ops.filter((_, k) => k % 10 !== 9).map((op) => (op.body as { name: string }).name),
    );
    expect(stored.changes.map((c) => c.seq)).toEqual(stored.changes.map((_, i) => i + 1));
    const again = await openDurableSystem(await openSqliteStore(db));
    expect(plain(again.target.live.snapshot)).toEqual(state);
    await again.close();
  });

  test("a write the store fails: it and every write applied after it are undone in reverse order and answered its error, a refusal after them too; nothing of them is stored; the next write takes its number", async () => {
    const { db } = dataDir();
    const real = await openSqliteStore(db);
    const fire = new StoreUnavailableError("the disk is on fire");
    let failOnce: number | undefined = 3;
    // The real store, except that the first append of change 3 fails a turn later (as a lost disk would).
    const store: Store = {
      ...real,
      load: () => real.load(),
      init: (...a) => real.init(...a),
      close: () => real.close(),
      appendAt: async (seq, writes, outbox) => {
        if (seq === failOnce) {
          failOnce = undefined;
          await new Promise((r) => setImmediate(r));
          throw fire;
        }
        return real.appendAt(seq, writes, outbox);
      },
    };
    const durable = await openDurableSystem(store, { initial: { kind: "system", json: building() } });
    if (durable.target.kind !== "system") throw new Error("a system");
    const live = durable.target.live;
    const first = [durable.write(group("One")), durable.write(group("Two"))];
    const afterTwo = plain(live.snapshot);
    const lost = [
      durable.write(group("Three")),
      durable.write({ method: "PUT", path: "/groups/g-empty", body: { name: "Visitors renamed" } }),
      durable.write({ method: "DELETE", path: "/holders/h-cy" }),
      durable.write(group("Six")),
      durable.write(group("One")), // refused (the name is taken): answered only after the writes before it
    ];
    const settled = Promise.allSettled(lost);
    expect(live.snapshot.holders.map((h) => h.id)).not.toContain("h-cy");
    expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
    const outcomes = await settled;
    expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill("rejected"));
    for (const o of outcomes) expect((o as PromiseRejectedResult).reason).toBe(fire);
    // Memory is as it was after change 2: every undone write's inverse patches applied, the last first.
    expect(plain(live.snapshot)).toEqual(afterTwo);
    expect(durable.seq()).toBe(2);
    const next = (await durable.write(group("Seven"))) as OperationResult;
    expect(next.status).toBe(200);
    expect(durable.seq()).toBe(3);
    await durable.close();
    const stored = inspect(db);
    expect(names(stored.changes)).toEqual(["One", "Two", "Seven"]);
    expect(stored.changes.map((c) => c.seq)).toEqual([1, 2, 3]);
    const again = await openDurableSystem(await openSqliteStore(db));
    expect(again.startedFrom).toEqual({ how: "loaded", seq: 3, snapshotSeq: 3, replayed: 0 });
    if (again.target.kind !== "system") throw new Error("a system");
    expect(again.target.live.snapshot.holders.map((h) => h.id)).toContain("h-cy");
    await again.close();
  });
});

describe("the WAL's syncs (walSync.ts)", () => {
  test("commits made while an fsync runs share the next one; after about 2 MiB of WAL, one checkpoint that empties it into the database", async () => {
    const file = join(tempDir(), "wal.db");
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF");
    db.pragma("wal_autocheckpoint = 0");
    db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, text TEXT NOT NULL)");
    const checkpoints: unknown[] = [];
    const sync = new WalSync(file, file, () => checkpoints.push(db.pragma("wal_checkpoint(PASSIVE)")));
    const insert = db.prepare("INSERT INTO t (n, text) VALUES (?, ?)");
    // 100 commits at once, each asking for its sync: the first starts an fsync, the 99 others come
    // while it runs and share the second.
    const synced = Array.from({ length: 100 }, (_, n) => {
      insert.run(n, "x".repeat(100));
      return sync.sync(100);
    });
    await Promise.all(synced);
    expect(sync.fsyncs).toBe(2);
    expect(checkpoints).toEqual([]);
    // Then one write of 2 MiB: once it is synced, the WAL is checkpointed (a turn later).
    insert.run(100, "y".repeat(CHECKPOINT_BYTES));
    await sync.sync(CHECKPOINT_BYTES);
    await new Promise((r) => setImmediate(r));
    expect(checkpoints).toHaveLength(1);
    const done = (checkpoints[0] as { busy: number; log: number; checkpointed: number }[])[0]!;
    expect(done.busy).toBe(0);
    expect(done.checkpointed, "every frame of the WAL copied into the database").toBe(done.log);
    await sync.close();
    db.close();
    const again = new Database(file, { readonly: true });
    expect(again.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 101 });
    again.close();
  });
});
