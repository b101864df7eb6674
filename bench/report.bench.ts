// Scenario (issue 17): a holder report over every holder with three filters (an email that contains
// "EXAMPLE.ORG" without regard to case, enabled, in none of two groups: most holders pass, so the
// exports are large) and its CSV, JSON and HTML exports; and an RSOP report of every holder at one
// instant (one row per holder × device or floor group its rules reach), made a chunk at a time and
// written as CSV into a byte counter (the rows of L do not fit in memory at once).
import {
  HOLDER_PROPERTIES,
  RSOP_REPORT_COLUMNS,
  csvHeader,
  csvRows,
  holderReport,
  rsopReportChunks,
  toCsv,
  toHtml,
  toJson,
} from "../src/reports/index.js";
import { type Row, fmtMs, log, median, sink, timeRuns } from "./benchUtil.js";
import { DAY, YEAR_START, fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

const BODY = {
  filters: [
    { type: "email", operator: "contains", operand: "EXAMPLE.ORG" },
    { type: "enabled", value: true },
    { type: "groups", notMemberOf: ["grp-0001", "grp-0002"] },
  ],
};

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  for (const size of ctx.sizes) {
    const f = fixture(size);
    const snapshot = f.engine.snapshot;
    const holders = snapshot.holders.length;
    const runs = ctx.quick ? 3 : size === "L" ? 5 : 9;

    let records: Record<string, unknown>[] = [];
    const report = timeRuns(
      runs,
      () => null,
      () => {
        const r = holderReport(snapshot, BODY);
        if (!r.ok) throw new Error("refused");
        records = r.value;
      },
    );
    const m = median(report);
    log(`  holderReport ${size}: ${records.length} of ${holders} holders, median ${m.toFixed(0)} ms`);
    rows.push({
      section: "report",
      size,
      name: "holderReport, 3 filters",
      value: `${fmtMs(m)} (${((m * 1e6) / holders).toFixed(0)} ns/holder)`,
      note: `${records.length.toLocaleString("en-US")} of ${holders.toLocaleString("en-US")} holders, all 17 properties; median of ${runs}`,
    });
    ctx.facts[`report.${size}.ms`] = m;
    ctx.facts[`report.${size}.records`] = records.length;

    const columns = [...HOLDER_PROPERTIES];
    for (const [name, exp] of [
      ["CSV", (rs: typeof records) => toCsv(rs, columns)],
      ["JSON", (rs: typeof records) => toJson(rs)],
      ["HTML", (rs: typeof records) => toHtml(rs, columns)],
    ] as const) {
      let bytes = 0;
      const t = timeRuns(
        runs,
        () => records,
        (rs) => {
          const text = exp(rs);
          bytes = Buffer.byteLength(text);
          sink.value += text.length;
        },
      );
      const mm = median(t);
      log(`  ${name} export ${size}: ${mm.toFixed(0)} ms, ${bytes} bytes`);
      rows.push({
        section: "report",
        size,
        name: `${name} export of that report`,
        value: fmtMs(mm),
        note: `${(bytes / 1e6).toFixed(1)} MB for ${records.length.toLocaleString("en-US")} records; median of ${runs}`,
      });
      ctx.facts[`report.${size}.${name.toLowerCase()}.ms`] = mm;
      ctx.facts[`report.${size}.${name.toLowerCase()}.bytes`] = bytes;
    }

    // RSOP report of every holder, a weekday at 15:00Z: the rows alone, then streamed as CSV into a
    // byte counter (csv-stringify), a chunk at a time either way.
    const at = YEAR_START + 13 * DAY + 15 * 3_600_000;
    let count = 0;
    let csvBytes = 0;
    const rsopRuns = ctx.quick || size !== "S" ? 1 : 3;
    const columns2 = [...RSOP_REPORT_COLUMNS];
    const rowsOnly = median(
      timeRuns(
        rsopRuns,
        () => null,
        () => {
          const r = rsopReportChunks(f.engine, { at });
          if (!r.ok) throw new Error("refused");
          count = 0;
          for (const chunk of r.value) count += chunk.length;
        },
      ),
    );
    // At L the CSV of every row is about 2 GB and minutes of csv-stringify: measured at S and M only.
    const rm =
      size === "L"
        ? NaN
        : median(
            timeRuns(
              rsopRuns,
              () => null,
              () => {
                const r = rsopReportChunks(f.engine, { at });
                if (!r.ok) throw new Error("refused");
                csvBytes = Buffer.byteLength(csvHeader(columns2));
                for (const chunk of r.value)
                  csvBytes += Buffer.byteLength(csvRows(chunk as unknown as Record<string, unknown>[], columns2));
              },
            ),
          );
    log(
      `  rsopReport ${size}: ${count} rows in ${rowsOnly.toFixed(0)} ms; ${size === "L" ? "CSV not measured at L" : `as ${csvBytes} CSV bytes ${rm.toFixed(0)} ms`}`,
    );
    const runsNote = rsopRuns === 1 ? "one run" : `median of ${rsopRuns}`;
    rows.push({
      section: "report",
      size,
      name: "rsopReport of every holder, rows",
      value: `${fmtMs(rowsOnly)} (${((rowsOnly * 1e6) / count).toFixed(0)} ns/row)`,
      note: `${count.toLocaleString("en-US")} rows (holder × device or floor group), made 2,000 holders at a time; ${runsNote}`,
    });
    if (size !== "L")
      rows.push({
        section: "report",
        size,
        name: "rsopReport of every holder, as CSV",
        value: `${fmtMs(rm)} (${((rm * 1e6) / count).toFixed(0)} ns/row)`,
        note: `${(csvBytes / 1e6).toFixed(0)} MB of CSV through csv-stringify, written a chunk at a time; ${runsNote}`,
      });
    ctx.facts[`rsopReport.${size}.rowsMs`] = rowsOnly;
    ctx.facts[`rsopReport.${size}.ms`] = rm;
    ctx.facts[`rsopReport.${size}.rows`] = count;
  }
  return rows;
}
