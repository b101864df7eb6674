// Issue 17's property: the holder report equals a deliberately naive implementation
// (test/reference/holderReportNaive.ts) on random holders and random filter bodies — the same
// records in the same order (lastName, firstName, id); and its CSV export parses back to them.
import { parse } from "csv-parse/sync";
import fc from "fast-check";
import { expect, test } from "vitest";
import { formatIssues, parseSnapshot } from "../../src/model/index.js";
import { holderReport, toCsv } from "../../src/reports/index.js";
import { reportBodyArb, reportSnapshotArb } from "../arbitraries/reportCase.js";
import { holderReportNaive } from "../reference/holderReportNaive.js";

const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 300
    : Math.max(300, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 10));

test("holderReport equals the naive report on random holders and filter bodies", () => {
  fc.assert(
    fc.property(reportSnapshotArb, reportBodyArb, (input, body) => {
      const parsed = parseSnapshot(input);
      if (!parsed.ok) throw new Error(`generated snapshot refused:\n${formatIssues(parsed.issues)}`);
      const got = holderReport(parsed.value, body);
      if (!got.ok) throw new Error(`valid body refused:\n${formatIssues(got.issues)}`);
      expect(got.value).toEqual(holderReportNaive(input as Record<string, unknown>, body));
    }),
    { numRuns: NUM_RUNS },
  );
}, 120_000);

test("the CSV export of any report parses back to its records (neutralised cells keep a leading apostrophe)", () => {
  fc.assert(
    fc.property(reportSnapshotArb, reportBodyArb, (input, body) => {
      const parsed = parseSnapshot(input);
      if (!parsed.ok) throw new Error(formatIssues(parsed.issues));
      const got = holderReport(parsed.value, body);
      if (!got.ok) throw new Error(formatIssues(got.issues));
      const columns = got.value.length > 0 ? Object.keys(got.value[0]!) : ["id"];
      const rows = parse(toCsv(got.value, columns), { columns: true, record_delimiter: "\r\n" }) as Record<
        string,
        string
      >[];
      const expected = got.value.map((r) =>
        Object.fromEntries(
          columns.map((c) => {
            const v = r[c];
            const text = v === null || v === undefined ? "" : String(v);
            return [c, /^[=+\-@\t\r]/.test(text) ? `'${text}` : text];
          }),
        ),
      );
      expect(rows).toEqual(expected);
    }),
    { numRuns: NUM_RUNS },
  );
}, 120_000);
