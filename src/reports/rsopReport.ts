// RSOP reports: "who can open which door, by which rule, at that instant" as one flat row per holder
// × device or floor group — engine.rsop flattened, so the two can never disagree.
import type { Engine, RsopResult } from "../evaluate/index.js";
import { type Issue, QueryError } from "../model/index.js";
import { selectHolders } from "./holderReport.js";
import { parseReportBody } from "./reportBody.js";

/** One row of an RSOP report. */
export interface RsopReportRow {
  holderId: string;
  firstName: string;
  lastName: string;
  /** The door (null on a floor-group row). */
  deviceId: string | null;
  /** The floor group (null on a door row). */
  floorGroupId: string | null;
  /** The name of the device or floor group. */
  deviceName: string;
  /** The name of the cloud node of the device (of a floor group's reader). */
  cloudNode: string;
  allowed: boolean;
  activeRuleId: string | null;
  /** The name of the active rule (null when it has none, or no rule decided). */
  ruleName: string | null;
}

/**
 * The columns of an RSOP report, in order.
 * @example
 * RSOP_REPORT_COLUMNS.length; //=> 10
 */
export const RSOP_REPORT_COLUMNS = [
  "holderId",
  "firstName",
  "lastName",
  "deviceId",
  "floorGroupId",
  "deviceName",
  "cloudNode",
  "allowed",
  "activeRuleId",
  "ruleName",
] as const;

/** What an RSOP report asks. */
export interface RsopReportQuery {
  /** Holder report filters choosing the holders; default every holder. */
  readonly holders?: unknown;
  /** Only these devices and floor groups (ids); default every one the holders' rules reach. */
  readonly devices?: unknown;
  /** The instant: ISO 8601 with Z or an offset, or epoch milliseconds. */
  readonly at: string | number;
}

/** RSOP is asked this many holders at a time: the result of a chunk is flattened and dropped. */
const CHUNK = 2000;

/**
 * The RSOP report of `engine` at an instant: for every holder the filters select (report order:
 * `lastName`, `firstName`, `id`), one row per device (in RSOP order), then one per floor group.
 * @returns the rows, or every problem of the query with its path (`holders[0].operator`, `devices[2]`, `at`).
 * @example
 * rsopReport(engine, { at: "2026-04-15T14:00:00Z", devices: ["d-front"] });
 * //=> { ok: true, value: [{ holderId: "h-ann", deviceId: "d-front", allowed: true, activeRuleId: "r-day", … }, …] }
 */
export function rsopReport(
  engine: Engine,
  query: RsopReportQuery,
): { ok: true; value: RsopReportRow[] } | { ok: false; issues: Issue[] } {
  const chunks = rsopReportChunks(engine, query);
  if (!chunks.ok) return chunks;
  const rows: RsopReportRow[] = [];
  for (const chunk of chunks.value) for (const row of chunk) rows.push(row);
  return { ok: true, value: rows };
}

/**
 * rsopReport a chunk at a time, for reports too long to hold at once (every holder of a large
 * system is tens of millions of rows): the query is checked first, then each chunk of rows is made
 * only when asked for (RSOP of 2,000 holders at a time).
 * @example
 * const r = rsopReportChunks(engine, { at: Date.now() });
 * if (r.ok) for (const rows of r.value) out.write(csvRows(rows, [...RSOP_REPORT_COLUMNS]));
 */
export function rsopReportChunks(
  engine: Engine,
  query: RsopReportQuery,
): { ok: true; value: Iterable<RsopReportRow[]> } | { ok: false; issues: Issue[] } {
  const snapshot = engine.snapshot;
  const issues: Issue[] = [];
  const parsed = parseReportBody(query.holders === undefined ? {} : { filters: query.holders }, {
    snapshot,
    flavour: "holders",
  });
  if (!parsed.ok) for (const i of parsed.issues) issues.push({ ...i, path: ["holders", ...i.path.slice(1)] });
  let wanted: Set<string> | null = null;
  if (query.devices !== undefined && query.devices !== null) {
    if (!Array.isArray(query.devices))
      issues.push({
        code: "invalidType",
        path: ["devices"],
        message: "Must be an array of device or floor-group ids.",
      });
    else {
      const known = new Set([...snapshot.devices.map((d) => d.id), ...snapshot.floorGroups.map((f) => f.id)]);
      wanted = new Set();
      query.devices.forEach((id, i) => {
        if (typeof id !== "string" || !known.has(id))
          issues.push({
            code: "unknownReference",
            path: ["devices", i],
            message: `No device or floor group has id ${JSON.stringify(id)}.`,
          });
        else wanted!.add(id);
      });
    }
  }
  if (issues.length > 0 || !parsed.ok) return { ok: false, issues };
  // The instant is checked once, up front (RSOP of no holder checks only its options).
  try {
    engine.rsop([], { at: query.at });
  } catch (e) {
    if (e instanceof QueryError) return { ok: false, issues: [...e.issues] };
    throw e;
  }
  const holders = selectHolders(snapshot, parsed.value, "holders");
  const ruleNames = new Map(snapshot.rules.map((r) => [r.id, r.name ?? null]));
  const at = query.at;
  function* chunks(): Generator<RsopReportRow[]> {
    for (let from = 0; from < holders.length; from += CHUNK) {
      const chunk = holders.slice(from, from + CHUNK);
      const result: RsopResult = engine.rsop(
        chunk.map((h) => h.id),
        { at },
      );
      const rows: RsopReportRow[] = [];
      result.holders.forEach((r, k) => {
        const h = chunk[k]!;
        for (const d of r.devices) {
          if (wanted !== null && !wanted.has(d.id)) continue;
          rows.push({
            holderId: h.id,
            firstName: h.firstName,
            lastName: h.lastName,
            deviceId: d.id,
            floorGroupId: null,
            deviceName: d.name,
            cloudNode: d.cloudNode.name,
            allowed: d.allowed,
            activeRuleId: d.activeRuleId,
            ruleName: d.activeRuleId === null ? null : (ruleNames.get(d.activeRuleId) ?? null),
          });
        }
        for (const f of r.floorGroups) {
          if (wanted !== null && !wanted.has(f.id)) continue;
          rows.push({
            holderId: h.id,
            firstName: h.firstName,
            lastName: h.lastName,
            deviceId: null,
            floorGroupId: f.id,
            deviceName: f.name,
            cloudNode: f.readerPort.cloudNode.name,
            allowed: f.allowed,
            activeRuleId: f.activeRuleId,
            ruleName: f.activeRuleId === null ? null : (ruleNames.get(f.activeRuleId) ?? null),
          });
        }
      });
      yield rows;
    }
  }
  return { ok: true, value: chunks() };
}
