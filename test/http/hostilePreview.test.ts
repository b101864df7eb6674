// Row 1 of the hostile-load table and the cost bound of every engine route (docs/semantics.md HP1–HP3),
// on a real `--data` server on 127.0.0.1 holding the example building plus 50,000 generated holders:
// work over a bound is refused up front with 422 naming the bound, and an honest client reading one
// holder meanwhile keeps answering within 100 ms p99 while the process's memory stays bounded.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningDataServer, startDataServer } from "../../src/adapters/http/startDataServer.js";
import { createLiveSystem } from "../../src/live/index.js";
import { type Caller, caller, expectError } from "./dataSupport.js";
import { BUILDING_JSON, TOKEN, tempDir } from "./fixtures.js";
import { buildingWithHolders, whileHostile } from "./hostileSupport.js";

const BIG = buildingWithHolders(BUILDING_JSON, 50_000) as { systemId: string; rules: { id: string }[] };
const FROM = "2026-04-13T05:00:00Z";
const WEEK_LATER = "2026-04-20T05:00:00Z";
/** A Wednesday, 10:00 in the building's time zone: the nurses are in. */
const AT = "2026-04-15T15:00:00Z";
const DAYS_61_LATER = "2026-06-13T05:00:00Z";
const PROBE = "/holders/gen-123";
/** RSS growth the hostile requests may cause (the server runs in this process). */
const RSS_BOUND_MIB = 256;
const deleteAll = BIG.rules.map((r) => ({ method: "DELETE", path: `/rules/${r.id}` }));
const deleteNurses = [{ method: "DELETE", path: "/rules/rule-nurses-day-weekdays" }];

let server: RunningDataServer;
let call: Caller;

/**
 * A hostile request whose answer text is kept, not parsed: the client runs in this process, and
 * parsing a large answer here would delay the honest reads as much as the server would.
 */
async function raw(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}/${BIG.systemId}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  server = await startDataServer({
    dataFile: join(tempDir(), "big.db"),
    initial: { kind: "system", file: "big.json", read: async () => BIG },
    token: TOKEN,
    log: () => {},
  });
  call = caller(server.url, `/${BIG.systemId}`);
  // The live system builds its write indexes on the first write or preview after start (once per
  // process, O(system), about 150 ms at 50,000 holders, as compiling at start is): taken here, so the
  // hostile runs below measure what each request costs.
  expect(
    (
      await call("POST", "/preview", {
        operations: [{ method: "DELETE", path: "/holders/gen-1" }],
        from: FROM,
        to: WEEK_LATER,
      })
    ).status,
  ).toBe(200);
}, 300_000);

afterAll(() => server?.close());

describe("HP1 preview cost bound at 50,000 holders", () => {
  test("HP1 deleting every rule over 61 days (issue row 1) is refused up front with 422 naming the bound; the honest reads stay within 100 ms p99", async () => {
    const seq = server.durable.seq();
    const run = await whileHostile(call, PROBE, () =>
      call("POST", "/preview", { operations: deleteAll, from: FROM, to: DAYS_61_LATER }),
    );
    const issues = expectError(run.result, 422, "row 1");
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe("operations");
    expect(issues[0]!.message).toMatch(/the bound is 100000 \(holder × door-or-floor-group × day\)/);
    expect(issues[0]!.message).toMatch(/over 61 days/);
    expect(run.allOk).toBe(true);
    expect(run.p99).toBeLessThan(100);
    expect(run.rssGrowthMiB).toBeLessThan(RSS_BOUND_MIB);
    expect(server.durable.seq(), "a preview stores nothing").toBe(seq);
  });

  test("HP1 one rule over 7 days (78 MB before) is refused too; the bound is per request, so a smaller preview still answers", async () => {
    const run = await whileHostile(call, PROBE, () =>
      call("POST", "/preview", { operations: deleteNurses, from: FROM, to: WEEK_LATER }),
    );
    expect(expectError(run.result, 422, "one rule, 7 days")[0]!.message).toMatch(
      /pairs over 7 days, at least \d+ pair-days; the bound is 100000/,
    );
    expect(run.p99).toBeLessThan(100);
    expect(run.rssGrowthMiB).toBeLessThan(RSS_BOUND_MIB);
    // A change reaching one holder is well within the bound, and answered.
    const small = await call("POST", "/preview", {
      operations: [{ method: "DELETE", path: "/holders/gen-7" }],
      from: FROM,
      to: WEEK_LATER,
    });
    expect(small.status).toBe(200);
    expect(small.body.changes.length).toBeGreaterThan(0);
    expect(small.body.changes.every((c: { holderId: string }) => c.holderId === "gen-7")).toBe(true);
  });
});

describe("HP3 the other engine routes at 50,000 holders", () => {
  test("HP3 a decision batch as large as the body bound, who-can-access of the busiest door and RSOP of 100 holders keep the honest reads within 100 ms p99", async () => {
    // As many requests as 1 MiB holds.
    const one = {
      credential: { type: "card", facilityCode: 99, credentialNumber: 100_001 },
      deviceId: "door-ward-3",
      at: AT,
    };
    const n = Math.floor((1024 * 1024 - 2) / (JSON.stringify(one).length + 1));
    const batch = JSON.stringify(Array.from({ length: n }, () => one));
    const decisions = await whileHostile(call, PROBE, () => raw("POST", "/decisions", batch));
    expect(decisions.result.status).toBe(200);
    expect(JSON.parse(decisions.result.text)).toHaveLength(n);
    const who = await whileHostile(call, PROBE, () => raw("GET", `/devices/door-ward-3/access?at=${AT}&per_page=100`));
    expect(who.result.status).toBe(200);
    expect(JSON.parse(who.result.text).holders).toHaveLength(100);
    const ids = Array.from({ length: 100 }, (_, i) => `gen-${i}`).join(",");
    const rsop = await whileHostile(call, PROBE, () => raw("GET", `/rsop/holders?ids=${ids}&at=${AT}`));
    expect(rsop.result.status).toBe(200);
    expect(JSON.parse(rsop.result.text).holders).toHaveLength(100);
    // The busiest door: every generated nurse (50,000) and more can open it.
    expect(
      Number((await call("GET", `/devices/door-ward-3/access?at=${AT}`)).headers.get("x-total-count")),
    ).toBeGreaterThan(50_000);
    for (const [name, run] of [
      ["decisions", decisions],
      ["who", who],
      ["rsop", rsop],
    ] as const) {
      expect(run.allOk, name).toBe(true);
      expect(
        run.p99,
        `${name}: p99 of ${run.samples} reads (others: ${decisions.p99}, ${who.p99}, ${rsop.p99})`,
      ).toBeLessThan(100);
      expect(run.rssGrowthMiB, name).toBeLessThan(RSS_BOUND_MIB);
    }
    // Over the bounds: 101 RSOP ids, a page of 101, are refused naming the bound.
    const more = Array.from({ length: 101 }, (_, i) => `gen-${i}`).join(",");
    expect(expectError(await call("GET", `/rsop/holders?ids=${more}`), 400, "101 ids")[0]).toMatchObject({
      path: "query.ids",
      message: expect.stringMatching(/at most 100 holder ids/),
    });
    expect(
      expectError(await call("GET", "/devices/door-ward-3/access?per_page=101"), 400, "per_page 101")[0]!.path,
    ).toMatch(/per_page/);
  });
});

describe("HP3 decision batch bound", () => {
  test("HP3 a batch of more than 10,000 access requests is checked but not decided: 413 naming the bound, or its problems when malformed", async () => {
    const tiny = { deviceId: "door-ward-3", at: AT, pin: "1234" };
    expect((await call("POST", "/decisions", [tiny])).status).toBe(200);
    const over = Array.from({ length: 10_001 }, () => tiny);
    const run = await whileHostile(call, PROBE, () => call("POST", "/decisions", over));
    expect(expectError(run.result, 413, "10,001 requests")[0]!.message).toMatch(/at most 10000 access requests/);
    expect(run.result.body.error.message).toBe("Too many access requests in one batch: at most 10000, got 10001.");
    expect(run.p99).toBeLessThan(100);
    // A malformed request in such a batch is named, as in any batch.
    const bad = [...over.slice(1), { deviceId: "door-ward-3" }];
    expect(expectError(await call("POST", "/decisions", bad), 400, "malformed")[0]!.path).toMatch(/^\[10000\]/);
    // Exactly the bound is decided.
    const at = await call("POST", "/decisions", over.slice(1));
    expect(at.status).toBe(200);
    expect(at.body).toHaveLength(10_000);
  });
});

describe("HP2 preview answer bound", () => {
  test("HP2 a preview with more changes than --max-preview-changes is refused with 422 naming the bound; within it the answer is the unbounded one", async () => {
    const { db } = { db: join(tempDir(), "small.db") };
    const small = await startDataServer({
      dataFile: db,
      initial: { kind: "system", file: "b.json", read: async () => BUILDING_JSON },
      token: TOKEN,
      log: () => {},
      maxPreviewChanges: 100,
      maxPreviewCost: 1_000_000,
    });
    try {
      const c = caller(small.url, `/${BIG.systemId}`);
      const over = await c("POST", "/preview", { operations: deleteNurses, from: FROM, to: WEEK_LATER });
      expect(expectError(over, 422, "760 changes")[0]).toMatchObject({
        path: "operations",
        message: expect.stringMatching(/more than 100 holder × door-or-floor-group changes/),
      });
      // 760 changes (76 nurses × 10 doors) within a bound of 1,000: the same answer as the live system's own, unbounded.
      const live = createLiveSystem(BUILDING_JSON);
      if (!live.ok) throw new Error("building refused");
      const expected = live.value.preview(deleteNurses as never, { from: FROM, to: WEEK_LATER });
      expect(expected.ok).toBe(true);
      const within = await startDataServer({
        dataFile: join(tempDir(), "w.db"),
        initial: { kind: "system", file: "b.json", read: async () => BUILDING_JSON },
        token: TOKEN,
        log: () => {},
        maxPreviewChanges: 1000,
      });
      try {
        const r = await caller(within.url, `/${BIG.systemId}`)("POST", "/preview", {
          operations: deleteNurses,
          from: FROM,
          to: WEEK_LATER,
        });
        expect(r.status).toBe(200);
        expect(r.body).toEqual(expected.ok && JSON.parse(JSON.stringify(expected.diff)));
        expect(r.body.changes).toHaveLength(760);
      } finally {
        await within.close();
      }
    } finally {
      await small.close();
    }
  });
});
