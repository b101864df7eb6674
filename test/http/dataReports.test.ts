// Issue 17's service routes over real HTTP on a real SQLite file: seed 001 `/reports/holders/*` and
// seed 002 `/reports/cloudpeople/*` — preview (≤ 50), generate (204, `pending` at once, then
// `finished` or `finishedTruncated`), metadata, list with pagination, view, delete, the 1.0 zipped
// exports; reports survive a restart; managers' and reporters' reports hold their partitions only.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { parse } from "csv-parse/sync";
import { afterAll, describe, expect, test } from "vitest";
import { createDataApp } from "../../src/adapters/http/createDataApp.js";
import { ReportService } from "../../src/service/reportService.js";
import { parseTokens } from "../../src/service/auth/tokens.js";
import { openDurableSystem } from "../../src/service/store/durableSystem.js";
import { openSqliteStore } from "../../src/adapters/store/sqliteStore.js";
import { holderReport, toCsv, toHtml, toJson } from "../../src/reports/index.js";
import { parseSnapshotOrThrow } from "../../src/model/index.js";
import { smallPanel } from "../live/panelFixture.js";
import { reportSystemInput } from "../reports/fixture.js";
import { type Answer, type Caller, caller, startData } from "./dataSupport.js";
import { TOKEN, removeTempDirs, tempDir } from "./fixtures.js";

afterAll(removeTempDirs);

const SYS = "/sys-reports";
const R = "/reports/holders";

/** Asks the metadata until the report is no longer pending (bounded: 10 s). */
async function finished(call: Caller, id: string | number, prefix = R): Promise<Answer> {
  const until = Date.now() + 10_000;
  for (;;) {
    const r = await call("GET", `${prefix}/requests/${id}`);
    if (r.status !== 200 || r.body.status !== "pending" || Date.now() > until) return r;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function serveSystem(input: unknown = reportSystemInput(), extra = {}) {
  const db = join(tempDir(), "data.db");
  const { server, lines } = await startData(db, input, extra);
  return { db, server, lines, call: caller(server.url, SYS) };
}

function reportRows(db: string): { id: string; records: string | null }[] {
  const d = new Database(db, { readonly: true, timeout: 0 });
  try {
    return d.prepare("SELECT id, records FROM reports ORDER BY n").all() as { id: string; records: string | null }[];
  } finally {
    d.close();
  }
}

describe("2.0 holder reports", () => {
  test("preview: the records of the body, at most 50, nothing stored", async () => {
    const input = reportSystemInput();
    for (let i = 0; i < 60; i++)
      input.holders.push({ id: `h-x${String(i).padStart(2, "0")}`, firstName: "X", lastName: "Many" });
    const { call, server } = await serveSystem(input);
    const all = await call("POST", `${R}/preview`, { output: ["id"] });
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(50);
    const lee = await call("POST", `${R}/preview`, {
      filters: [{ type: "lastName", operator: "equals", operand: "lee" }],
      output: ["id", "cards"],
    });
    expect(lee.body).toEqual([
      { id: "h-ann", cards: "10000, 10050" },
      { id: "h-bob", cards: "10100" },
      { id: "h-eve", cards: "" },
    ]);
    // no body at all: every field is optional
    expect((await call("POST", `${R}/preview`)).status).toBe(200);
    expect((await call("GET", `${R}/requests`)).body).toEqual([]);
    expect(server.durable.seq()).toBe(0);
  });

  test("generate: 204 without a body, then finished with its metadata; view gives the records", async () => {
    const { call, server, db } = await serveSystem();
    const body = { filters: [{ type: "groups", notMemberOf: ["g-night"] }], output: ["id", "lastName", "email"] };
    const g = await call("POST", `${R}/generate`, body);
    expect(g.status).toBe(204);
    expect(g.body).toBeUndefined();
    const list = await call("GET", `${R}/requests`);
    expect(list.body).toHaveLength(1);
    const id = list.body[0].id as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const m = await finished(call, id);
    const expected = holderReport(parseSnapshotOrThrow(reportSystemInput()), body);
    const records = expected.ok ? expected.value : [];
    expect(m.body).toEqual({
      id,
      status: "finished",
      startTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      finishedTime: expect.stringMatching(/Z$/),
      truncatedAt: null,
      timezone: "America/Chicago",
      size: {
        csv: Buffer.byteLength(toCsv(records, body.output)),
        html: Buffer.byteLength(toHtml(records, body.output, { title: "Holder report" })),
        json: Buffer.byteLength(toJson(records)),
      },
      entriesCount: 3,
      creator: "admin",
      filters: body.filters,
      links: `holder-report-${id}`,
      output: body.output,
      report: null,
    });
    expect(m.body.startTime <= m.body.finishedTime).toBe(true);
    const v = await call("GET", `${R}/requests/${id}/view`);
    expect(v.status).toBe(200);
    expect(v.body).toEqual(records);
    await server.close();
    expect(reportRows(db).map((r) => [r.id, JSON.parse(r.records!)])).toEqual([[id, records]]);
  });

  test("RP9: pending at once: the metadata is stored pending before the answer, and the records are built after it", async () => {
    const db = join(tempDir(), "pending.db");
    const durable = await openDurableSystem(await openSqliteStore(db), {
      initial: { kind: "system", json: reportSystemInput() },
    });
    let reports: ReportService | undefined;
    const app = await createDataApp({ durable, insecureNoAuth: true, onReports: (r) => (reports = r) });
    try {
      const g = await app.fetch(
        new Request(`http://127.0.0.1${SYS}${R}/generate`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        }),
      );
      expect(g.status).toBe(204);
      const list = (await (await app.fetch(new Request(`http://127.0.0.1${SYS}${R}/requests`))).json()) as any[];
      expect(list.map((m) => [m.status, m.entriesCount, m.size, m.finishedTime, m.truncatedAt])).toEqual([
        ["pending", null, null, null, null],
      ]);
      const view = await app.fetch(new Request(`http://127.0.0.1${SYS}${R}/requests/${list[0].id}/view`));
      expect(view.status).toBe(409);
      expect(((await view.json()) as any).error.issues[0].message).toMatch(/is pending/);
      await reports!.settled();
      const m = (await (
        await app.fetch(new Request(`http://127.0.0.1${SYS}${R}/requests/${list[0].id}`))
      ).json()) as any;
      expect([m.status, m.entriesCount]).toEqual(["finished", 5]);
    } finally {
      await durable.close();
    }
  });

  test("RP9: a report whose processing fails (over maxReportEntries) ends finishedTruncated with truncatedAt and the records it had", async () => {
    const { call } = await serveSystem(reportSystemInput(), { maxReportEntries: 2 });
    expect((await call("POST", `${R}/generate`, { output: ["id"] })).status).toBe(204);
    const id = (await call("GET", `${R}/requests`)).body[0].id;
    const m = await finished(call, id);
    expect(m.body.status).toBe("finishedTruncated");
    expect(m.body.truncatedAt).toBe(m.body.finishedTime);
    expect(m.body.entriesCount).toBe(2);
    expect((await call("GET", `${R}/requests/${id}/view`)).body).toEqual([{ id: "h-dan" }, { id: "h-cat" }]);
  });

  test("RP9: an error while the records are built ends finishedTruncated, with truncatedAt and the records made before it", async () => {
    const db = join(tempDir(), "error.db");
    const store = await openSqliteStore(db);
    const errors: unknown[] = [];
    const reports = await ReportService.open({
      store,
      flavour: "holders",
      now: Date.now,
      indent: 0,
      onError: (e) => errors.push(e),
    });
    const admin = { role: "admin" as const, partitions: null };
    try {
      const snap = parseSnapshotOrThrow(reportSystemInput());
      // Bob's custom fields cannot be written as JSON: building his record throws (Dan, Cat and Ann come before him).
      const unwritable = {
        toJSON: () => {
          throw new Error("unwritable custom field");
        },
      };
      const broken = {
        ...snap,
        holders: snap.holders.map((h) => (h.id === "h-bob" ? { ...h, customFields: unwritable } : h)),
      };
      const answer = await reports.generate(broken, { output: ["id", "customFields"] }, admin, "UTC");
      expect(answer.status).toBe(204);
      await reports.settled();
      const list = (await reports.list(new URL("http://127.0.0.1/r"), admin).json()) as any[];
      expect(
        list.map((m) => [m.status, m.entriesCount, m.truncatedAt !== null && m.truncatedAt === m.finishedTime]),
      ).toEqual([["finishedTruncated", 3, true]]);
      expect(await (await reports.view(String(list[0].id), admin)).json()).toEqual([
        { id: "h-dan", customFields: "{}" },
        { id: "h-cat", customFields: "{}" },
        { id: "h-ann", customFields: '{"badge":"B-1"}' },
      ]);
      expect(errors.map((e) => (e as Error).message)).toEqual(["unwritable custom field"]);
    } finally {
      await store.close();
    }
  });

  test("RP11: a report left pending by a stopped server ends finishedTruncated at the next start; finished reports survive restarts", async () => {
    const { call, server, db } = await serveSystem();
    await call("POST", `${R}/generate`, { output: ["id"] });
    const id = (await call("GET", `${R}/requests`)).body[0].id;
    await finished(call, id);
    await server.close();
    // A report cut off mid-generation: its row is pending, without records.
    const store = await openSqliteStore(db);
    const pending = {
      metadata: {
        id: "cut-off",
        status: "pending",
        startTime: "2026-01-01T00:00:00.000Z",
        finishedTime: null,
        truncatedAt: null,
        timezone: "UTC",
        size: null,
        entriesCount: null,
        creator: "admin",
        filters: [],
        links: "holder-report-cut-off",
        output: ["id"],
        report: null,
      },
      scope: null,
      partition: null,
    };
    await store.putReport("cut-off", pending);
    await store.close();
    const again = await startData(db, undefined, {});
    const call2 = caller(again.server.url, SYS);
    const list = (await call2("GET", `${R}/requests`)).body;
    expect(list.map((m: any) => [m.id, m.status, m.entriesCount])).toEqual([
      ["cut-off", "finishedTruncated", 0],
      [id, "finished", 5],
    ]);
    expect(list[0].truncatedAt).not.toBeNull();
    expect((await call2("GET", `${R}/requests/${id}/view`)).body).toHaveLength(5);
  });

  test("RP12: list: newest first, page and per_page, Link headers; a bad page is 400", async () => {
    const { call } = await serveSystem();
    for (const out of [["id"], ["lastName"], ["email"]])
      expect((await call("POST", `${R}/generate`, { output: out })).status).toBe(204);
    const p0 = await call("GET", `${R}/requests?per_page=2`);
    expect(p0.body.map((m: any) => m.output)).toEqual([["email"], ["lastName"]]);
    expect(p0.headers.get("link")).toContain('rel="next"');
    const p1 = await call("GET", `${R}/requests?per_page=2&page=1`);
    expect(p1.body.map((m: any) => m.output)).toEqual([["id"]]);
    const bad = await call("GET", `${R}/requests?per_page=101`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues).toEqual([
      { path: "query.per_page", message: "Must be a whole number from 1 to 100." },
    ]);
  });

  test("delete: 204, then 404 everywhere; unknown ids are 404; wrong methods 405", async () => {
    const { call, db, server } = await serveSystem();
    await call("POST", `${R}/generate`, {});
    const id = (await call("GET", `${R}/requests`)).body[0].id;
    await finished(call, id);
    expect((await call("DELETE", `${R}/requests/${id}`)).status).toBe(204);
    for (const path of [`${R}/requests/${id}`, `${R}/requests/${id}/view`])
      expect((await call("GET", path)).status).toBe(404);
    expect((await call("DELETE", `${R}/requests/${id}`)).status).toBe(404);
    expect((await call("GET", `${R}/requests`)).body).toEqual([]);
    const m = await call("GET", `${R}/preview`);
    expect(m.status).toBe(405);
    expect(m.headers.get("allow")).toBe("POST");
    await server.close();
    expect(reportRows(db)).toEqual([]);
  });

  test("a refused body: 400 with every problem at its body path, in the one error shape, and nothing stored", async () => {
    const { call, db, server } = await serveSystem();
    const r = await call("POST", `${R}/generate`, { reportId: "nope", output: ["id"] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: {
        status: 400,
        message: "The report body is invalid.",
        issues: [
          { path: "body.output", message: "Must not be sent with reportId: a template decides the whole report." },
        ],
      },
    });
    const f = await call("POST", `${R}/preview`, {
      filters: [
        { type: "credentials", cardNumber: { operator: "equals" } },
        { type: "groups", memberOf: ["g-x"] },
      ],
    });
    expect(f.body.error.issues).toEqual([
      { path: "body.filters[0].cardNumber.operand", message: "Is required: the card number (a whole number)." },
      { path: "body.filters[1].memberOf[0]", message: 'No group has id "g-x".' },
    ]);
    expect((await call("POST", `${R}/generate`, "[1,")).status).toBe(400);
    expect((await call("GET", `${R}/requests`)).body).toEqual([]);
    await server.close();
    expect(reportRows(db)).toEqual([]);
  });

  test("RP12: reportId: a stored report is a template; its metadata names it", async () => {
    const { call } = await serveSystem();
    await call("POST", `${R}/generate`, { filters: [{ type: "enabled", value: false }], output: ["id"] });
    const first = (await call("GET", `${R}/requests`)).body[0].id;
    expect((await call("POST", `${R}/preview`, { reportId: first })).body).toEqual([{ id: "h-cat" }]);
    await call("POST", `${R}/generate`, { reportId: first });
    const second = (await call("GET", `${R}/requests`)).body[0];
    expect(second.report).toEqual({ id: first, name: null, partition: null });
    expect(second.filters).toEqual([{ type: "enabled", value: false }]);
  });
});

describe("roles: a manager's or reporter's reports hold its partitions only (RP10)", () => {
  const LAB = "manager-lab-token-cccccccccccc";
  const MAIN_REPORTER = "reporter-main-token-dddddddddd";
  const tokens = () => {
    const r = parseTokens({
      [LAB]: { role: "manager", partitions: ["p-lab"] },
      [MAIN_REPORTER]: { role: "reporter", partitions: ["p-main"] },
    });
    if (!r.ok) throw new Error("tokens");
    return r.entries;
  };
  const as =
    (url: string, token: string): Caller =>
    async (method, path, body) => {
      const init: RequestInit = { method, headers: { authorization: `Bearer ${token}` } };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        (init.headers as Record<string, string>)["content-type"] = "application/json";
      }
      const res = await fetch(`${url}${SYS}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
    };

  test("preview and generate see only the token's holders; groups of other partitions are unknown; reports are seen by who sees their partitions", async () => {
    const { server } = await serveSystem(reportSystemInput(), { tokens: { file: "tokens.json", entries: tokens() } });
    const lab = as(server.url, LAB);
    const reporter = as(server.url, MAIN_REPORTER);
    const admin = caller(server.url, SYS);
    expect((await lab("POST", `${R}/preview`, { output: ["id"] })).body).toEqual([{ id: "h-dan" }, { id: "h-eve" }]);
    // the default partition is p-main: the holder without a partition is the reporter's
    expect((await reporter("POST", `${R}/preview`, { output: ["id"] })).body).toEqual([
      { id: "h-cat" },
      { id: "h-ann" },
      { id: "h-bob" },
    ]);
    const hidden = await lab("POST", `${R}/preview`, { filters: [{ type: "groups", memberOf: ["g-day"] }] });
    expect(hidden.status).toBe(400);
    expect(hidden.body.error.issues).toEqual([
      { path: "body.filters[0].memberOf[0]", message: 'No group has id "g-day".' },
    ]);
    expect((await lab("POST", `${R}/generate`, { output: ["id"] })).status).toBe(204);
    const labList = (await lab("GET", `${R}/requests`)).body;
    expect(labList.map((m: any) => m.creator)).toEqual(["manager (p-lab)"]);
    const id = labList[0].id;
    await finished(lab, id);
    expect((await lab("GET", `${R}/requests/${id}/view`)).body).toEqual([{ id: "h-dan" }, { id: "h-eve" }]);
    // the reporter of another partition does not see it; the admin does
    expect((await reporter("GET", `${R}/requests`)).body).toEqual([]);
    expect((await reporter("GET", `${R}/requests/${id}`)).status).toBe(404);
    expect((await reporter("DELETE", `${R}/requests/${id}`)).status).toBe(404);
    expect((await admin("GET", `${R}/requests/${id}`)).body.entriesCount).toBe(2);
    // an admin's report holds every partition: no manager sees it
    await admin("POST", `${R}/generate`, {});
    expect((await lab("GET", `${R}/requests`)).body).toHaveLength(1);
  });
});

describe("1.0 people reports", () => {
  test("RP12: generate, integer ids, seed 002 records; the export files zipped at /file/{links}.{type}.zip", async () => {
    const db = join(tempDir(), "panel.db");
    const { server } = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
    });
    const call = caller(server.url, "");
    const P = "/api/reports/cloudpeople";
    expect((await call("POST", `${P}/preview`, { output: ["id", "Last Name"] })).body).toEqual([
      { id: 1, "Last Name": "Lee" },
      { id: 2, "Last Name": "Roy" },
    ]);
    expect((await call("POST", `${P}/generate`, { output: ["id", "First Name", "Custom Attributes"] })).status).toBe(
      204,
    );
    expect((await call("POST", `${P}/generate`, { filters: [{ type: "groups", memberOf: [2] }] })).status).toBe(204);
    const list = (await call("GET", `${P}/requests`)).body;
    expect(list.map((m: any) => m.id)).toEqual([2, 1]);
    expect("report" in list[0]).toBe(false);
    const m = await finished(call, 1, P);
    expect(m.body).toMatchObject({
      id: 1,
      status: "finished",
      entriesCount: 2,
      links: "people-report-1",
      output: ["id", "First Name", "Custom Attributes"],
      timezone: "Europe/Paris",
    });
    const records = (await call("GET", `${P}/requests/1/view`)).body;
    expect(records).toEqual([
      { id: 1, "First Name": "Ann", "Custom Fields": '{"badge":"B-1"}' },
      { id: 2, "First Name": "Bob", "Custom Fields": "{}" },
    ]);
    const dir = tempDir();
    for (const type of ["csv", "json", "html"]) {
      const res = await fetch(`${server.url}${P}/file/people-report-1.${type}.zip`, {
        headers: { authorization: `Bearer ${TOKEN}` },
        signal: AbortSignal.timeout(20_000),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/zip");
      const zip = join(dir, `r.${type}.zip`);
      writeFileSync(zip, Buffer.from(await res.arrayBuffer()));
      const listed = spawnSync("unzip", ["-Z1", zip], { encoding: "utf8", timeout: 10_000 });
      expect(listed.stdout.trim()).toBe(`people-report-1.${type}`);
      const test = spawnSync("unzip", ["-t", zip], { encoding: "utf8", timeout: 10_000 });
      expect(test.status).toBe(0);
      const text = spawnSync("unzip", ["-p", zip], { encoding: "utf8", timeout: 10_000 }).stdout;
      if (type === "csv")
        expect(parse(text, { columns: true })).toEqual(
          records.map((r: any) => ({
            id: String(r.id),
            "First Name": r["First Name"],
            "Custom Fields": r["Custom Fields"],
          })),
        );
      if (type === "json") expect(JSON.parse(text)).toEqual(records);
      // Custom fields as a readable name: value list, not JSON text (RP7).
      if (type === "html")
        expect(text).toContain('<td><ul><li><span class="k">badge:</span> <span class="nw">B-1</span></li></ul></td>');
    }
    for (const name of ["people-report-9.csv.zip", "people-report-1.xml.zip", "nope"])
      expect((await call("GET", `${P}/file/${name}`)).status).toBe(404);
  });
});
