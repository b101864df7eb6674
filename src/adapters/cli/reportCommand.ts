// `rsop report`: a holder report (2.0), a people report (1.0) or an RSOP report, as JSON records on
// stdout, or CSV / JSON / HTML into a file.
import type { Writable } from "node:stream";
import { type Command, Option } from "commander";
import {
  type ExportType,
  HOLDER_PROPERTIES,
  PEOPLE_PROPERTIES,
  RSOP_REPORT_COLUMNS,
  csvHeader,
  csvRows,
  exportReport,
  holderReport,
  htmlEnd,
  htmlRows,
  htmlStart,
  peopleReport,
  rsopReportChunks,
} from "../../reports/index.js";
import { type Issue, parseInstant } from "../../model/index.js";
import { jsonErrorText, parseJson } from "../jsonSyntax.js";
import {
  CliError,
  type CliIo,
  UsageError,
  errnoWords,
  fileError,
  openOutputStream,
  queryRefusal,
  writeTextFile,
  written,
} from "./io.js";
import { loadPanelFile, loadSystemFile, systemOrPanel } from "./loadSystem.js";

export const REPORT_HELP = `
Filters (the 2.0 systems API; all must hold), one JSON object per --filter:
  {"type":"lastName","operator":"contains","operand":"lee"}        firstName, lastName, email;
      operators "equals", "does not equal", "contains", "does not contain"; "caseSensitive": true
  {"type":"enabled","value":false}
  {"type":"groups","memberOf":["g-1"]}  {"type":"partition","notMemberOf":["p-2"]}
  {"type":"credentials","cardNumber":{"operator":"equals","operand":10234}}
  {"type":"credentials","mobile":{"type":"touch","status":"pending"}}
With --panel, ids are 1.0 integers and records have the 1.0 panel API display-name keys.

--rsop: one row per holder × device (or floor group) the holder's rules reach, with what the engine
decides at --at: holderId, firstName, lastName, deviceId, floorGroupId, deviceName, cloudNode,
allowed, activeRuleId, ruleName. --filter chooses the holders, --device the devices.

Examples:
  rsop report --system examples/building.json --filter '{"type":"groups","memberOf":["grp-nurses"]}' --output id,lastName,cards
  rsop report --system examples/building.json --format csv --out holders.csv
  rsop report --system examples/building.json --rsop --at 2026-04-15T14:15:00Z --device door-ward-3 --format html --out ward3.html
`;

interface ReportOptions {
  system?: string;
  panel?: string;
  filter: string[];
  partition?: string;
  output?: string;
  format: ExportType;
  out?: string;
  rsop?: boolean;
  at?: string;
  device: string[];
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** Each --filter as JSON (a value that is not JSON is a usage error, exit 2). */
function filters(raw: readonly string[]): unknown[] {
  return raw.map((text, i) => {
    const r = parseJson(text);
    if (!r.ok) throw new UsageError(`--filter number ${i + 1} is not valid JSON: ${jsonErrorText(r)}`);
    return r.value;
  });
}

/**
 * A report refused: exit 1 when every problem is an id the snapshot lacks, else 2: the filters,
 * --output and --partition come from the command line, which the problems show wrong.
 */
function refused(issues: readonly Issue[]): never {
  throw queryRefusal(`invalid report: ${issues.length} problem${issues.length === 1 ? "" : "s"}`, issues, {
    output: "--output",
    partition: "--partition",
    devices: "--device",
    at: "--at",
  });
}

export function registerReportCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("report")
    .description(
      "Holder report (2.0), people report (1.0 --panel) or RSOP report (--rsop): JSON records on stdout, or CSV/JSON/HTML with --format and --out.",
    )
    .option("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option(
      "--panel <file>",
      "rsop-panel/1 architecture 1.0 panel (JSON), instead of --system: a 1.0 panel API people report",
    )
    .option("--filter <json>", "a report filter (JSON object); repeat for more (all must hold)", collect, [])
    .option("--partition <id>", "only holders of this partition (an integer with --panel)")
    .option("--output <names>", "comma-separated record properties, in order (default: all, in the API's order)")
    .addOption(new Option("--format <format>", "output format").choices(["json", "csv", "html"]).default("json"))
    .option("--out <file>", "write the export here instead of stdout")
    .option("--rsop", "an RSOP report: who can open which device, by which rule, at --at (2.0 only)")
    .option("--at <instant>", "with --rsop: ISO 8601 instant with Z or offset, or epoch ms (default: now)")
    .option("--device <id>", "with --rsop: only this device or floor group; repeat for more", collect, [])
    .addHelpText("after", REPORT_HELP)
    .action(async (opts: ReportOptions) => {
      const target = systemOrPanel(opts);
      const filterList = filters(opts.filter);
      const output = opts.output
        ?.split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      if (output !== undefined && output.length === 0)
        throw new UsageError("--output needs at least one property name");
      if (opts.rsop === true) {
        if ("panel" in target)
          throw new UsageError(
            "--rsop reports are for 2.0 systems: use --system (or `rsop rsop --panel` for 1.0 persons)",
          );
        if (opts.partition !== undefined)
          throw new UsageError(
            '--partition is not used with --rsop: filter holders with --filter \'{"type":"partition","memberOf":[…]}\'',
          );
        let at: string | number = Date.now();
        if (opts.at !== undefined) {
          at = /^[0-9]+$/.test(opts.at) ? Number(opts.at) : opts.at;
          if (Number.isNaN(parseInstant(at)))
            throw new UsageError(
              "--at must be an ISO 8601 instant with Z or an offset (e.g. 2026-04-15T14:15:00Z), or epoch milliseconds",
            );
        }
        const engine = await loadSystemFile(target.system, io);
        const cols = output ?? [...RSOP_REPORT_COLUMNS];
        const bad = cols.flatMap((c, i): Issue[] =>
          (RSOP_REPORT_COLUMNS as readonly string[]).includes(c)
            ? []
            : [
                {
                  code: "invalidValue",
                  path: ["output", i],
                  message: `Unknown column "${c}": use ${RSOP_REPORT_COLUMNS.join(", ")}.`,
                },
              ],
        );
        const r = rsopReportChunks(engine, {
          at,
          holders: filterList,
          ...(opts.device.length > 0 ? { devices: opts.device } : {}),
        });
        if (!r.ok || bad.length > 0) refused([...(r.ok ? [] : r.issues), ...bad]);
        // Every holder of a large system is tens of millions of rows: they are written a chunk at a time.
        const title = `RSOP report at ${typeof at === "number" ? new Date(at).toISOString() : at}`;
        await streamRows(opts, io, r.value, cols, title);
        setCode(0);
        return;
      }
      if (opts.at !== undefined || opts.device.length > 0)
        throw new UsageError("--at and --device belong to --rsop reports");
      let partition: string | number | undefined = opts.partition;
      if (partition !== undefined && "panel" in target) {
        if (!/^[0-9]+$/.test(partition)) throw new UsageError("--partition of a 1.0 panel is an integer id");
        partition = Number(partition);
      }
      const body = {
        filters: filterList,
        ...(partition !== undefined ? { partition } : {}),
        ...(output !== undefined ? { output } : {}),
      };
      const r =
        "panel" in target
          ? peopleReport(await loadPanelFile(target.panel, io), body)
          : holderReport((await loadSystemFile(target.system, io)).snapshot, body);
      if (!r.ok) refused(r.issues);
      const records = r.value;
      // The record keys (a 1.0 output's "Custom Attributes" is the record's "Custom Fields").
      const columns =
        records.length > 0
          ? Object.keys(records[0]!)
          : [...("panel" in target ? PEOPLE_PROPERTIES : HOLDER_PROPERTIES)];
      const title = "panel" in target ? "People report" : "Holder report";
      const text =
        opts.format === "json"
          ? `${JSON.stringify(records, null, 2)}\n`
          : exportReport(opts.format, records, columns, { title });
      if (opts.out === undefined) io.stdout.write(text);
      else {
        await writeTextFile(opts.out, text);
        io.stderr.write(`wrote ${records.length} ${records.length === 1 ? "record" : "records"} to ${opts.out}\n`);
      }
      setCode(0);
    });
}

/** Writes RSOP rows chunk by chunk to --out (or stdout) in the chosen format. */
async function streamRows(
  opts: ReportOptions,
  io: CliIo,
  chunks: Iterable<readonly object[]>,
  columns: readonly string[],
  title: string,
): Promise<void> {
  const sink: Writable = opts.out === undefined ? io.stdout : await openOutputStream(opts.out);
  const failed = new Promise<never>((_, reject) => sink.once("error", reject));
  failed.catch(() => undefined);
  const write = async (text: string): Promise<boolean> =>
    text === "" ? true : Promise.race([written(sink, text), failed]);
  let count = 0;
  try {
    if (
      !(await write(
        opts.format === "csv" ? csvHeader(columns) : opts.format === "html" ? htmlStart(columns, { title }) : "[",
      ))
    )
      return;
    for (const chunk of chunks) {
      const picked = chunk.map((row) =>
        Object.fromEntries(columns.map((c) => [c, (row as Record<string, unknown>)[c]])),
      );
      const text =
        opts.format === "csv"
          ? csvRows(picked, columns)
          : opts.format === "html"
            ? htmlRows(picked, columns)
            : picked.map((x, i) => `${count + i === 0 ? "\n" : ",\n"}${JSON.stringify(x)}`).join("");
      count += picked.length;
      if (!(await write(text))) return;
    }
    await write(opts.format === "csv" ? "" : opts.format === "html" ? htmlEnd(count) : count === 0 ? "]\n" : "\n]\n");
  } catch (e) {
    if (opts.out === undefined) throw new CliError(`cannot write the output: ${errnoWords(e, true)}`);
    throw fileError(opts.out, e, true);
  } finally {
    if (opts.out !== undefined) await new Promise<void>((resolve) => sink.end(() => resolve()));
  }
  if (opts.out !== undefined) io.stderr.write(`wrote ${count} ${count === 1 ? "row" : "rows"} to ${opts.out}\n`);
}
