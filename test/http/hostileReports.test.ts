// Report routes under hostile load (RP15–RP17): bounded report bodies (filters, id lists, operands,
// output entries), a preview at the bounds on 50,000 holders that leaves a concurrent reader answered
// within 100 ms p99 (admin and reporter tokens), bounded concurrent generations, and stored reports
// capped per system by count and bytes. Real SQLite files, real servers on 127.0.0.1.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { csvHeader, csvRows, htmlEnd, htmlRows, htmlStart, toJson } from "../../src/reports/index.js";
import { parseTokens } from "../../src/service/auth/tokens.js";
import { type RunningDataServer, startDataServer } from "../../src/adapters/http/startDataServer.js";
import { run } from "../adapters/cliHarness.js";
import { type Answer, type Caller, caller, expectError, startStored } from "./dataSupport.js";
import { BUILDING_FILE, TOKEN, removeTempDirs, tempDir } from "./fixtures.js";
import { buildingWithHolders, whileHostile } from "./hostileSupport.js";

afterAll(removeTempDirs);

const EXAMPLE = JSON.parse(readFileSync(join(__dirname, "../../examples/building.json"), "utf8")) as {
  systemId: string;
};
const SYSTEM = EXAMPLE.systemId;
const R = "/reports/holders";
const REPORTER = "reporter-main-campus-token-eeeeeeee";
const PROBE = "/holders/gen-4711";

function tokens() {
  const r = parseTokens({ [REPORTER]: { role: "reporter", partitions: ["part-main-campus"] } });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return { file: "tokens.json", entries: r.entries };
}

/** A caller with another token. */
function callerAs(url: string, token: string): Caller {
  const admin = caller(url, `/${SYSTEM}`);
  return (method, path, body, headers = {}) =>
    admin(method, path, body, { ...headers, authorization: `Bearer ${token}` });
}

/** Every filter type, as many as the bound allows, each as costly as the bounds allow. */
function filtersAtTheBounds(): unknown[] {
  // Every holder passes every filter, so each filter is tested on each of them.
  const groups = ["grp-nurses", "grp-doctors", "grp-night-shift", "grp-contractors"];
  const others = ["grp-visitors", "grp-executives", "grp-security", "grp-facilities"];
  const ids = Array.from({ length: 256 }, (_, i) => groups[i % groups.length]);
  const notIds = Array.from({ length: 256 }, (_, i) => others[i % others.length]);
  return Array.from({ length: 32 }, (_, i) =>
    i % 2 === 0
      ? {
          type: ["firstName", "lastName", "email"][i % 3],
          operator: "does not contain",
          operand: `${"x".repeat(250)}${i}`.slice(0, 256),
          caseSensitive: false,
        }
      : { type: "groups", memberOf: ids, notMemberOf: notIds },
  );
}

let big: { url: string; admin: Caller; reporter: Caller; settled: () => Promise<void> };

let bigServer: RunningDataServer | undefined;
beforeAll(async () => {
  const system = buildingWithHolders(EXAMPLE, 50_000);
  const server = await startDataServer({
    dataFile: join(tempDir(), "big.db"),
    initial: { kind: "system", file: "building.json", read: async () => system },
    token: TOKEN,
    tokens: tokens(),
    log: () => undefined,
    reportStore: { maxGenerating: 1 },
  });
  bigServer = server;
  big = {
    url: server.url,
    admin: caller(server.url, `/${SYSTEM}`),
    reporter: callerAs(server.url, REPORTER),
    settled: () => server.reports.settled(),
  };
}, 120_000);
afterAll(() => bigServer?.close());

describe("row 3: report bodies are bounded (RP15)", () => {
  test("RP15: 16,000 filters, any role (reporters too): refused at once with 400 naming the bound at body.filters, while a concurrent read keeps p99 ≤ 100 ms", async () => {
    const filters = Array.from({ length: 16_000 }, () => ({ type: "enabled", value: true }));
    for (const [who, call] of [
      ["admin", big.admin],
      ["reporter", big.reporter],
    ] as const) {
      const r = await whileHostile(call, PROBE, () => call("POST", `${R}/preview`, { filters }));
      const issues = expectError(r.result, 400, who);
      expect(issues).toEqual([
        { path: "body.filters", message: "Holds 16000 filters; a report takes at most 32 (the report filter bound)." },
      ]);
      expect(r.allOk).toBe(true);
      expect(r.p99, `${who}: p99 of ${r.samples} reads`).toBeLessThanOrEqual(100);
      expect(r.rssGrowthMiB).toBeLessThan(128);
    }
  }, 60_000);

  test("RP15: a preview at every bound on 50,000 holders keeps a concurrent read within 100 ms p99 (admin and reporter)", async () => {
    const body = { filters: filtersAtTheBounds() };
    for (const [who, call] of [
      ["admin", big.admin],
      ["reporter", big.reporter],
    ] as const) {
      // Several previews one after another, so the reads overlap many of them.
      const r = await whileHostile(call, PROBE, async () => {
        const answers: Answer[] = [];
        for (let i = 0; i < 20; i++) answers.push(await call("POST", `${R}/preview`, body));
        return answers;
      });
      for (const a of r.result) {
        expect(a.status, JSON.stringify(a.body).slice(0, 300)).toBe(200);
        expect(a.body).toHaveLength(50);
      }
      expect(r.allOk).toBe(true);
      expect(r.p99, `${who}: p99 of ${r.samples} reads`).toBeLessThanOrEqual(100);
      expect(r.rssGrowthMiB).toBeLessThan(128);
    }
  }, 60_000);

  test("RP15: a preview answers the first 50 records of the report order, the same as the full report's first 50", async () => {
    const body = {
      filters: [{ type: "lastName", operator: "contains", operand: "7" }],
      output: ["id", "lastName", "firstName"],
    };
    const preview = await big.admin("POST", `${R}/preview`, body);
    expect(preview.status).toBe(200);
    const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const all = (
      buildingWithHolders(EXAMPLE, 50_000) as { holders: { id: string; lastName: string; firstName: string }[] }
    ).holders
      .filter((h) => h.lastName.toLowerCase().includes("7"))
      .sort((a, b) => cmp(a.lastName, b.lastName) || cmp(a.firstName, b.firstName) || cmp(a.id, b.id))
      .slice(0, 50)
      .map((h) => ({ id: h.id, lastName: h.lastName, firstName: h.firstName }));
    expect(preview.body).toEqual(all);
  });

  test("RP15: an id list over 256, an operand over 256 characters, an output over 17 entries: 400 naming the bound at its path; generate refuses the same", async () => {
    const cases: [unknown, string, string][] = [
      [
        { filters: [{ type: "groups", memberOf: Array(257).fill("grp-nurses") }] },
        "body.filters[0].memberOf",
        "Holds 257 ids; a memberOf list takes at most 256 (the report id-list bound).",
      ],
      [
        { filters: [{ type: "partition", notMemberOf: Array(300).fill("part-main-campus") }] },
        "body.filters[0].notMemberOf",
        "Holds 300 ids; a notMemberOf list takes at most 256 (the report id-list bound).",
      ],
      [
        { filters: [{ type: "email", operator: "contains", operand: "a".repeat(257) }] },
        "body.filters[0].operand",
        "Has 257 characters; an operand has at most 256 (the report operand bound).",
      ],
      [
        { output: Array(18).fill("id") },
        "body.output",
        "Holds 18 entries; a report shows at most 17 properties, each named once (the report output bound).",
      ],
      [
        { output: Array(100_000).fill("id") },
        "body.output",
        "Holds 100000 entries; a report shows at most 17 properties, each named once (the report output bound).",
      ],
    ];
    for (const [body, path, message] of cases)
      for (const route of ["preview", "generate"]) {
        const issues = expectError(await big.reporter("POST", `${R}/${route}`, body), 400, `${route} ${path}`);
        expect(issues).toEqual([{ path, message }]);
      }
    expect((await big.admin("GET", `${R}/requests`)).body).toEqual([]);
  });
});

describe("generation is bounded (RP17) and stays off the request path", () => {
  test("RP17: with --max-report-generations 1, a second generate while one runs is 429 with Retry-After; generating and viewing 50,300 records keep a concurrent read within 100 ms p99", async () => {
    const gen = await whileHostile(big.admin, PROBE, async () => {
      const first = await big.admin("POST", `${R}/generate`, {});
      const second = await big.admin("POST", `${R}/generate`, {});
      await big.settled();
      return { first, second };
    });
    expect(gen.result.first.status).toBe(204);
    expectError(gen.result.second, 429, "second generate");
    expect(gen.result.second.body.error.message).toBe(
      "1 reports are being generated, the most at once (the report generation bound); try again shortly.",
    );
    expect(gen.result.second.headers.get("retry-after")).toBe("1");
    expect(gen.p99, `generate: p99 of ${gen.samples} reads`).toBeLessThanOrEqual(100);
    const list = (await big.admin("GET", `${R}/requests`)).body as any[];
    expect(list).toHaveLength(1);
    const m = list[0];
    expect([m.status, m.entriesCount]).toEqual(["finished", 50_300]);
    // The 19 MB answer is only received while the honest client reads: the server shares this
    // process, so parsing it here (100 ms and more) would be counted against the server.
    const view = await whileHostile(big.admin, PROBE, async () => {
      const res = await fetch(`${big.url}/${SYSTEM}${R}/requests/${m.id}/view`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      // Kept chunk by chunk: joining 21 MB at once in this process would also count against the server.
      const chunks: Uint8Array[] = [];
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
      return { status: res.status, chunks };
    });
    expect(view.result.status).toBe(200);
    expect(view.p99, `view: p99 of ${view.samples} reads`).toBeLessThanOrEqual(100);
    const records = JSON.parse(Buffer.concat(view.result.chunks).toString("utf8")) as Record<string, unknown>[];
    expect(records).toHaveLength(50_300);
    // The sizes counted chunk by chunk are the sizes of the exports.
    const columns = m.output as string[];
    expect(m.size).toEqual({
      csv: Buffer.byteLength(csvHeader(columns) + csvRows(records, columns)),
      html: Buffer.byteLength(
        htmlStart(columns, { title: "Holder report" }) + htmlRows(records, columns) + htmlEnd(records.length),
      ),
      json: Buffer.byteLength(toJson(records)),
    });
    expect((await big.admin("DELETE", `${R}/requests/${m.id}`)).status).toBe(204);
  }, 120_000);
});

describe("row 11: stored reports are capped per system (RP16)", () => {
  const small = async (reportStore: Record<string, number>) => {
    const { server, call } = await startStored(
      { dataFile: join(tempDir(), "small.db") },
      JSON.parse(readFileSync(BUILDING_FILE, "utf8")),
      { reportStore },
    );
    const c = caller(server.url, `/${JSON.parse(readFileSync(BUILDING_FILE, "utf8")).systemId}`);
    void call;
    const generate = async (body: unknown = {}) => {
      const r = await c("POST", `${R}/generate`, body);
      expect(r.status, JSON.stringify(r.body)).toBe(204);
      await server.reports.settled();
      return ((await c("GET", `${R}/requests`)).body as any[])[0];
    };
    return { call: c, generate };
  };

  test("RP16: at --max-reports 3, a fourth and fifth report remove the oldest finished ones (their ids then 404)", async () => {
    const { call, generate } = await small({ maxReports: 3 });
    const made: any[] = [];
    for (let i = 0; i < 5; i++) made.push(await generate({ output: ["id"] }));
    const list = (await call("GET", `${R}/requests`)).body as any[];
    expect(list.map((m) => m.id)).toEqual(
      made
        .slice(2)
        .reverse()
        .map((m) => m.id),
    );
    for (const gone of made.slice(0, 2))
      expectError(await call("GET", `${R}/requests/${gone.id}`), 404, "a removed report");
  });

  test("RP16: over --max-report-bytes, a finishing report removes the oldest finished ones; one alone over it ends finishedTruncated within the bound", async () => {
    const probe = await small({});
    const one = await probe.generate({});
    const bytes = Buffer.byteLength(
      `${JSON.stringify((await probe.call("GET", `${R}/requests/${one.id}/view`)).body, null, 2)}\n`,
    );
    const { call, generate } = await small({ maxReportBytes: Math.floor(bytes * 2.5) });
    const made: any[] = [];
    for (let i = 0; i < 3; i++) made.push(await generate({}));
    expect(made.every((m) => m.status === "finished" && m.entriesCount === one.entriesCount)).toBe(true);
    const list = (await call("GET", `${R}/requests`)).body as any[];
    expect(list.map((m) => m.id)).toEqual([made[2].id, made[1].id]);

    const tight = await small({ maxReportBytes: Math.floor(bytes / 2) });
    const cut = await tight.generate({});
    expect(cut.status).toBe("finishedTruncated");
    expect(cut.entriesCount).toBeGreaterThan(0);
    expect(cut.entriesCount).toBeLessThan(one.entriesCount);
    const text = JSON.stringify((await tight.call("GET", `${R}/requests/${cut.id}/view`)).body, null, 2);
    expect(Buffer.byteLength(`${text}\n`)).toBeLessThanOrEqual(Math.floor(bytes / 2));
  });

  test("RP16: when every stored report is pending, a new one is refused with 409 and nothing is stored", async () => {
    const { server } = await startStored(
      { dataFile: join(tempDir(), "pending.db") },
      buildingWithHolders(EXAMPLE, 50_000),
      { reportStore: { maxReports: 1, maxGenerating: 2 } },
    );
    const call = caller(server.url, `/${SYSTEM}`);
    expect((await call("POST", `${R}/generate`, {})).status).toBe(204);
    const second = await call("POST", `${R}/generate`, {});
    // Building 50,300 records takes far longer than one more request: the first is still pending.
    expectError(second, 409, "all pending");
    expect(second.body.error.message).toBe(
      "1 reports are stored, the most at once (the stored report bound), and none is finished: delete one, or wait for one to finish.",
    );
    await server.reports.settled();
    expect(((await call("GET", `${R}/requests`)).body as any[]).length).toBe(1);
  }, 60_000);

  test("RP16 RP17: --max-reports, --max-report-bytes and --max-report-generations are listed; bad values or no --data are usage errors (exit 2)", async () => {
    const help = await run(["serve", "--help"]);
    for (const o of ["--max-reports <n>", "--max-report-bytes <size>", "--max-report-generations <n>"])
      expect(help.stdout).toContain(o);
    const dir = tempDir();
    const cases: [string[], string][] = [
      [["--data", join(dir, "a.db"), "--max-reports", "0"], "--max-reports must be a positive integer"],
      [["--data", join(dir, "a.db"), "--max-report-bytes", "lots"], "--max-report-bytes must be a size in bytes"],
      [
        ["--data", join(dir, "a.db"), "--max-report-generations", "1.5"],
        "--max-report-generations must be a positive integer",
      ],
      [
        ["--max-reports", "5"],
        "--max-reports, --max-report-bytes and --max-report-generations need --data FILE.db or --store postgres://…",
      ],
    ];
    for (const [args, message] of cases) {
      const r = await run(["serve", "--system", BUILDING_FILE, "--port", "0", "--token", TOKEN, ...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});
