// `rsop report` (issue 17): JSON records by default, --filter/--output/--partition, CSV/HTML/JSON
// into --out, 1.0 people reports, RSOP reports; exit 1 for a refused report, 2 for usage errors.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, test } from "vitest";
import { run, tempFiles } from "./cliHarness.js";
import { smallPanel } from "../live/panelFixture.js";
import { reportSystemInput } from "../reports/fixture.js";

const { dir, file } = tempFiles("rsop-report-");
const system = file("system.json", reportSystemInput());
const panel = file("panel.json", smallPanel());

describe("rsop report", () => {
  test("JSON records on stdout by default, in report order", async () => {
    const r = await run(["report", "--system", system, "--output", "id,lastName"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { id: "h-dan", lastName: '=HYPERLINK("http://evil","x")' },
      { id: "h-cat", lastName: "Adams" },
      { id: "h-ann", lastName: "Lee" },
      { id: "h-bob", lastName: "Lee" },
      { id: "h-eve", lastName: "lee" },
    ]);
  });

  test("--filter repeats (all must hold) and --partition restricts", async () => {
    const r = await run([
      "report",
      "--system",
      system,
      "--output",
      "id",
      "--filter",
      '{"type":"lastName","operator":"equals","operand":"LEE"}',
      "--filter",
      '{"type":"groups","notMemberOf":["g-night"]}',
    ]);
    expect(JSON.parse(r.stdout)).toEqual([{ id: "h-ann" }, { id: "h-eve" }]);
    const p = await run(["report", "--system", system, "--output", "id", "--partition", "p-lab"]);
    expect(JSON.parse(p.stdout)).toEqual([{ id: "h-dan" }, { id: "h-eve" }]);
  });

  test("--format csv --out writes RFC 4180 CSV that parses back; html is escaped", async () => {
    const out = join(dir, "holders.csv");
    const r = await run(["report", "--system", system, "--format", "csv", "--out", out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`wrote 5 records to ${out}\n`);
    const rows = parse(readFileSync(out, "utf8"), { columns: true }) as Record<string, string>[];
    expect(rows.map((x) => x.id)).toEqual(["h-dan", "h-cat", "h-ann", "h-bob", "h-eve"]);
    expect(rows[0]!.lastName).toBe('\'=HYPERLINK("http://evil","x")');
    const h = await run(["report", "--system", system, "--format", "html"]);
    expect(h.stdout).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(h.stdout).not.toContain("<script>alert");
  });

  test("--panel: a seed 002 people report", async () => {
    const r = await run([
      "report",
      "--panel",
      panel,
      "--output",
      "id,Last Name,Custom Attributes",
      "--filter",
      '{"type":"groups","memberOf":[1]}',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ id: 1, "Last Name": "Lee", "Custom Fields": '{"badge":"B-1"}' }]);
  });

  test("--rsop --at: one row per holder × device", async () => {
    const r = await run([
      "report",
      "--system",
      system,
      "--rsop",
      "--at",
      "2026-04-15T14:00:00Z",
      "--device",
      "d-front",
      "--output",
      "holderId,allowed,activeRuleId",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { holderId: "h-ann", allowed: true, activeRuleId: "r-day" },
      { holderId: "h-bob", allowed: true, activeRuleId: "r-day" },
    ]);
  });

  test("--rsop streams CSV and HTML into --out, chunk by chunk; the CSV parses back to the rows", async () => {
    const out = join(dir, "rsop.csv");
    const r = await run([
      "report",
      "--system",
      system,
      "--rsop",
      "--at",
      "2026-04-15T14:00:00Z",
      "--format",
      "csv",
      "--out",
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`wrote 5 rows to ${out}\n`);
    const rows = parse(readFileSync(out, "utf8"), { columns: true }) as Record<string, string>[];
    expect(rows.map((x) => [x.holderId, x.deviceId, x.allowed, x.activeRuleId, x.ruleName])).toEqual([
      ["h-dan", "d-lab", "true", "r-lab", ""],
      ["h-cat", "d-lab", "false", "", ""],
      ["h-ann", "d-front", "true", "r-day", "Day front"],
      ["h-bob", "d-front", "true", "r-day", "Day front"],
      ["h-bob", "d-lab", "false", "r-night-deny", "Night lab deny"],
    ]);
    expect(rows[0]!.lastName).toBe('\'=HYPERLINK("http://evil","x")');
    const h = await run(["report", "--system", system, "--rsop", "--at", "2026-04-15T14:00:00Z", "--format", "html"]);
    expect(h.stdout).toContain("<p>5 records.</p>");
    expect(h.stdout).not.toContain("<script>alert");
    const empty = await run([
      "report",
      "--system",
      system,
      "--rsop",
      "--at",
      "2026-04-15T14:00:00Z",
      "--filter",
      '{"type":"enabled","value":false}',
      "--device",
      "d-front",
    ]);
    expect(JSON.parse(empty.stdout)).toEqual([]);
  });

  test("a refused report: malformed options exit 2, unknown ids 1, with every problem and its path (CE1)", async () => {
    const r = await run([
      "report",
      "--system",
      system,
      "--filter",
      '{"type":"firstName","operator":"equals"}',
      "--output",
      "id,nope",
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      'rsop: invalid report: 2 problems\n  filters[0].operand: Is required with an operator: the text to compare.\n  --output[1]: Unknown property "nope": use "id", "firstName", "lastName", "email", "partition", "cards", "groups", "pin", "duressPin", "enabled", "activeDate", "expireDate", "bluetooth", "pendingBluetooth", "mobileApp", "pendingMobileApp", "customFields".\n(run with --help for usage)\n',
    );
    const d = await run(["report", "--system", system, "--rsop", "--at", "2026-04-15T14:00:00Z", "--device", "d-x"]);
    expect(d.code).toBe(1);
    expect(d.stderr).toContain('devices[0]: No device or floor group has id "d-x".');
  });

  test.each([
    [["report", "--system", "x.json", "--filter", "{nope"], /--filter number 1 is not valid JSON/],
    [["report"], /give exactly one of --system FILE/],
    [["report", "--system", "x.json", "--format", "xml"], /Allowed choices are json, csv, html/],
    [["report", "--panel", "x.json", "--rsop"], /--rsop reports are for 2.0 systems/],
    [["report", "--system", "x.json", "--at", "2026-04-15T14:00:00Z"], /--at and --device belong to --rsop reports/],
    [["report", "--system", "x.json", "--rsop", "--at", "tomorrow"], /--at must be an ISO 8601 instant/],
  ])("usage errors exit 2: %j", async (argv, message) => {
    const r = await run(argv as string[]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  test("--help describes the filters", async () => {
    const r = await run(["report", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('{"type":"credentials","cardNumber":{"operator":"equals","operand":10234}}');
  });
});

describe("rsop serve --max-report-entries", () => {
  test.each([
    [
      ["serve", "--insecure-no-auth", "--system", "x.json", "--max-report-entries", "10"],
      "--max-report-entries needs --data FILE.db",
    ],
    [
      ["serve", "--insecure-no-auth", "--data", "x.db", "--system", "x.json", "--max-report-entries", "0"],
      '--max-report-entries must be a positive integer, got "0"',
    ],
  ])("usage errors exit 2: %j", async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });
});
