// diffAccess, live.preview, the weekly picture and their doors (CLI `rsop diff` / `rsop picture`,
// HTTP `POST /{system_id}/preview`): one test per semantics line X3–X8, on the example building.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, test } from "vitest";
import { type Engine, diffAccess, loadEngineOrThrow, weeklyPicture } from "../../src/evaluate/index.js";
import { createLiveSystem, seededIds } from "../../src/live/index.js";
import { QueryError } from "../../src/model/index.js";
import { renderPictureSvg } from "../../src/adapters/cli/picturePage.js";
import { SYSTEM_ID, dataDir, startData } from "../http/dataSupport.js";
import { parseTokens } from "../../src/service/auth/tokens.js";
import { BUILDING_FILE, BUILDING_JSON, building, removeTempDirs } from "../http/fixtures.js";
import { building as liveBuilding } from "../live/fixture.js";
import { run, tempFiles } from "./cliHarness.js";

afterAll(removeTempDirs);

const WEEK = { from: "2026-04-13T05:00:00Z", to: "2026-04-20T05:00:00Z" }; // Monday to Monday, Chicago
const json = () =>
  JSON.parse(JSON.stringify(BUILDING_JSON)) as { rules: Record<string, unknown>[]; holders: Record<string, unknown>[] };

function changed(edit: (b: ReturnType<typeof json>) => void): Engine {
  const b = json();
  edit(b);
  return loadEngineOrThrow(b);
}

const shorterNurses = changed((b) => {
  b.rules.find((r) => r.id === "rule-nurses-day-weekdays")!.stopTime = "18:00:00";
});

describe("diffAccess", () => {
  test("X3: allowed time over [from, to), at most 62 days; a pair whose deciding rule changes but not its allowed time is not listed", () => {
    const d = diffAccess(building, shorterNurses, WEEK);
    expect(Object.keys(d)).toEqual(["from", "to", "changes"]);
    const maria = d.changes.find((c) => c.holderId === "holder-0001" && c.deviceId === "door-ward-3")!;
    // 18:00–19:30 Chicago (CDT, −05:00) on each weekday.
    expect(maria).toEqual({
      holderId: "holder-0001",
      deviceId: "door-ward-3",
      gained: [],
      lost: [13, 14, 15, 16, 17].map((day) => ({
        start: `2026-04-${day}T23:00:00.000Z`,
        end: `2026-04-${day + 1}T00:30:00.000Z`,
      })),
      rulesBefore: ["rule-nurses-day-weekdays"],
      rulesAfter: [],
    });
    expect(() => diffAccess(building, shorterNurses, { from: WEEK.from, to: "2026-07-01T00:00:00Z" })).toThrow(
      QueryError,
    );
    expect(() => diffAccess(building, shorterNurses, { from: "x", to: WEEK.to })).toThrow(QueryError);
    expect(diffAccess(building, building, WEEK).changes).toEqual([]);
    // Renaming a rule decides nothing differently.
    expect(
      diffAccess(
        building,
        changed((b) => (b.rules[0]!.name = "Renamed")),
        WEEK,
      ).changes,
    ).toEqual([]);
  });

  test("X4: doors by deviceId, elevators by floorGroupId; a holder or door on one side only has no access on the other", () => {
    const noLift = changed((b) => {
      b.rules = b.rules.filter((r) => r.id !== "rule-nurses-lift-weekdays");
    });
    const lift = diffAccess(building, noLift, WEEK).changes;
    expect(lift.length).toBeGreaterThan(0);
    expect(lift.every((c) => c.floorGroupId !== undefined && c.deviceId === undefined && c.gained.length === 0)).toBe(
      true,
    );
    const gone = changed((b) => {
      b.holders = b.holders.filter((h) => h.id !== "holder-0001");
    });
    const lost = diffAccess(building, gone, WEEK).changes;
    expect(new Set(lost.map((c) => c.holderId))).toEqual(new Set(["holder-0001"]));
    const windows = building.accessWindows("holder-0001", "door-ward-3", WEEK).windows;
    expect(lost.find((c) => c.deviceId === "door-ward-3")!.lost).toEqual(
      windows.map((w) => ({ start: w.start, end: w.end })),
    );
  });

  test("X5: rulesBefore and rulesAfter name the rules deciding during the changed time, deny rules included", () => {
    const denied = changed((b) => {
      b.rules.push({
        id: "rule-zz-deny-ward-3",
        type: "door",
        groupId: "grp-nurses",
        devices: ["door-ward-3"],
        startTime: "12:00:00",
        stopTime: "13:00:00",
        recurring: ["Wed"],
        allow: false,
      });
    });
    const c = diffAccess(building, denied, WEEK).changes.find((x) => x.holderId === "holder-0001")!;
    expect(c).toMatchObject({
      deviceId: "door-ward-3",
      gained: [],
      lost: [{ start: "2026-04-15T17:00:00.000Z", end: "2026-04-15T18:00:00.000Z" }],
    });
    expect(c.rulesBefore).toEqual(["rule-nurses-day-weekdays"]);
    expect(c.rulesAfter).toEqual(["rule-zz-deny-ward-3"]);
  });
});

describe("live.preview", () => {
  test("X6: operations run as a batch on a copy; nothing changes; the ids drawn go to the next creates; the default period is the coming week", () => {
    const now = Date.parse("2026-04-13T05:00:00Z");
    const made = createLiveSystem(BUILDING_JSON, { newId: seededIds(7), now: () => now });
    if (!made.ok) throw new Error("building refused");
    const live = made.value;
    const snapshot = live.snapshot;
    const ops = [
      { method: "POST" as const, path: "/groups", body: { name: "Late nurses" } },
      {
        method: "PUT" as const,
        path: "/rules/rule-nurses-day-weekdays",
        body: {
          ...(snapshot.rules.find((r) => r.id === "rule-nurses-day-weekdays") as object),
          id: undefined,
          stopTime: "18:00:00",
        },
      },
    ];
    const p = live.preview(ops);
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(live.snapshot).toBe(snapshot);
    expect(p.diff).toEqual(diffAccess(building, shorterNurses, WEEK));
    const applied = live.apply(ops);
    expect(applied.ok).toBe(true);
    if (applied.ok) expect(applied.results[0]).toEqual(p.results[0]);
    const refused = live.preview([{ method: "DELETE", path: "/rules/no-such-rule" }]);
    expect(refused).toMatchObject({ ok: false, status: 404, index: 0 });
  });

  test("X8: POST /{system_id}/preview answers the diff of {operations, from, to}; a refused operation is answered at operations[i]", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, liveBuilding());
    const live = server.durable.target.live as import("../../src/live/index.js").LiveSystem;
    const rule = live.snapshot.rules[0]!;
    const { id: _id, ...body } = rule;
    const ops = [{ method: "PUT", path: `/rules/${rule.id}`, body: { ...body, enabled: false } }];
    const period = { from: "2026-04-13T00:00:00Z", to: "2026-04-20T00:00:00Z" };
    const before = live.snapshot;
    const r = await call("POST", "/preview", { operations: ops, ...period });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(live.snapshot).toBe(before);
    const preview = live.preview(ops as never, period);
    expect(preview.ok && r.body).toEqual(preview.ok && JSON.parse(JSON.stringify(preview.diff)));
    const bad = await call("POST", "/preview", { operations: [{ method: "DELETE", path: "/rules/nope" }] });
    expect(bad.status).toBe(404);
    expect(bad.body.error.issues[0].path).toMatch(/^operations\[0\]/);
    const malformed = await call("POST", "/preview", { operations: [], to: true, extra: 1 });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      "extra",
      "operations",
      "to",
    ]);
  }, 60_000);
});

test("X1, X8: preview and explain answer admin and integrator tokens; a manager's or reporter's is 403", async () => {
  const tokens = parseTokens({
    "admin-token-aaaaaaaaaaaa": { role: "admin" },
    "integrator-token-bbbbbbbbbbbb": { role: "integrator" },
    "manager-token-cccccccccccc": { role: "manager", partitions: ["p-default"] },
    "reporter-token-dddddddddddd": { role: "reporter", partitions: ["p-default"] },
  });
  if (!tokens.ok) throw new Error(JSON.stringify(tokens.issues));
  const { db } = dataDir();
  const { server } = await startData(db, liveBuilding(), { tokens: { file: "tokens.json", entries: tokens.entries } });
  const post = async (token: string, path: string, body: unknown) =>
    (
      await fetch(`${server.url}/${SYSTEM_ID}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      })
    ).status;
  const preview = { operations: [{ method: "DELETE", path: "/rules/no-such-rule" }] };
  const scan = { deviceId: "d-fan", at: "2026-04-15T12:00:00Z", pin: "0000" };
  for (const t of ["admin-token-aaaaaaaaaaaa", "integrator-token-bbbbbbbbbbbb"]) {
    expect(await post(t, "/preview", preview)).toBe(404); // reached the live system: the rule is unknown
    expect(await post(t, "/decisions/explain", scan)).toBe(200);
  }
  for (const t of ["manager-token-cccccccccccc", "reporter-token-dddddddddddd"]) {
    expect(await post(t, "/preview", preview)).toBe(403);
    expect(await post(t, "/decisions/explain", scan)).toBe(403);
  }
}, 60_000);

describe("weeklyPicture", () => {
  test("X7: Monday to Sunday in the node's local time; a spring-forward day has 23 hours and a null skipped hour; a fall-back hour counts twice", () => {
    const spring = weeklyPicture(building, { holderId: "holder-0001", weekOf: "2026-03-08" });
    const row = spring.rows.find((r) => r.id === "door-ward-3")!;
    expect(row.days.map((d) => d.weekday)).toEqual(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]);
    expect(row.days[6]).toMatchObject({
      date: "2026-03-08",
      hours: 23,
      dst: true,
      offsetStart: "-06:00",
      offsetEnd: "-05:00",
    });
    expect(row.cells[6]![2]).toBeNull();
    expect(row.cells.flat().filter((c) => c === null)).toHaveLength(1);
    // Weekdays 06:30–19:30: the 06:00 hour half, 07:00–18:00 whole, the 19:00 hour half.
    expect(row.cells[0]!.slice(5, 21)).toEqual([0, 0.5, ...new Array(12).fill(1), 0.5, 0]);
    const fall = weeklyPicture(building, { holderId: "holder-0001", weekOf: "2026-11-01" });
    expect(fall.rows[0]!.days[6]).toMatchObject({ date: "2026-11-01", hours: 25, dst: true });
    expect(() => weeklyPicture(building, { holderId: "nobody" })).toThrow(QueryError);
    const door = weeklyPicture(building, { deviceId: "door-ward-3", weekOf: "2026-04-15" });
    expect(door.rows.length).toBeGreaterThan(10);
    expect(
      door.rows.every((r) => r.kind === "holder" && r.cells.length === 7 && r.cells.every((d) => d.length === 24)),
    ).toBe(true);
    const svg = renderPictureSvg(spring);
    expect(svg.match(/class="cell"/g)).toHaveLength(spring.rows.length * 7 * 24);
    expect(svg).toContain("DST: 23 h");
  });
});

describe("rsop diff and rsop picture", () => {
  const { file } = tempFiles("rsop-diff-");
  const after = (() => {
    const b = json();
    b.rules.find((r) => r.id === "rule-nurses-day-weekdays")!.stopTime = "18:00:00";
    return b;
  })();

  test("text by holder and by door, JSON as the library answers, HTML with a picture of each holder's changes; bad input exits 1, usage 2", async () => {
    const a = file("after.json", after);
    const text = await run(["diff", "--before", BUILDING_FILE, "--after", a, "--from", WEEK.from, "--to", WEEK.to]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("By holder:");
    expect(text.stdout).toContain("By door or floor group:");
    expect(text.stdout).toContain("  holder-0001 (Maria Alvarez)");
    const j = await run([
      "diff",
      "--before",
      BUILDING_FILE,
      "--after",
      a,
      "--from",
      WEEK.from,
      "--to",
      WEEK.to,
      "--format",
      "json",
    ]);
    expect(JSON.parse(j.stdout)).toEqual(JSON.parse(JSON.stringify(diffAccess(building, shorterNurses, WEEK))));
    const html = await run(["diff", "--before", BUILDING_FILE, "--after", a, "--from", WEEK.from, "--format", "html"]);
    expect(html.code).toBe(0);
    expect(html.stdout).toMatch(/^<!doctype html>/);
    // One picture of each holder's changes (before/after in one: the after state, gained and lost time marked), by name.
    expect(html.stdout).toContain('id="change-0"');
    expect(html.stdout).toContain('<span title="Holder ID: holder-0001">Maria Alvarez</span>');
    expect(html.stdout).toContain('<rect class="lost"');
    const week = await run(["diff", "--before", BUILDING_FILE, "--after", a, "--from", WEEK.from, "--format", "json"]);
    expect(JSON.parse(week.stdout).to).toBe("2026-04-20T05:00:00.000Z");
    const long = await run([
      "diff",
      "--before",
      BUILDING_FILE,
      "--after",
      a,
      "--from",
      WEEK.from,
      "--to",
      "2026-08-01T00:00:00Z",
    ]);
    // CE1: a period too long is an out-of-range option value, a usage error.
    expect(long.code).toBe(2);
    expect(long.stderr).toBe("rsop: --to: The period may span at most 62 days.\n(run with --help for usage)\n");
    expect((await run(["diff", "--before", BUILDING_FILE])).code).toBe(2);
    expect((await run(["diff", "--before", BUILDING_FILE, "--after", a, "--from", "yesterday"])).code).toBe(2);
    expect((await run(["diff", "--before", BUILDING_FILE, "--after", a, "--format", "pdf"])).code).toBe(2);
  });

  test("rsop picture writes a standalone page; an unknown holder exits 1", async () => {
    const out = file("p.html", "");
    const r = await run([
      "picture",
      "--system",
      BUILDING_FILE,
      "--holder",
      "holder-0001",
      "--week-of",
      "2026-03-08",
      "--out",
      out,
    ]);
    expect(r.code).toBe(0);
    const page = readFileSync(out, "utf8");
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
    const unknown = await run(["picture", "--system", BUILDING_FILE, "--holder", "nobody", "--out", out]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('holderId: Unknown holder id "nobody".');
    expect((await run(["picture", "--system", BUILDING_FILE, "--out", out])).code).toBe(2);
  });
});
