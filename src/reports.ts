/**
 * rsop-engine/reports: holder reports (2.0), people reports (1.0) and RSOP reports over a snapshot,
 * with their CSV, JSON and HTML exports.
 *
 * Unlike the root entry it is meant for Node: its CSV goes through csv-stringify, which uses
 * Node's `Buffer`.
 * @packageDocumentation
 */
export { holderReport, peopleReport, PREVIEW_LIMIT } from "./reports/holderReport.js";
export { HOLDER_PROPERTIES, PEOPLE_PROPERTIES } from "./reports/reportBody.js";
export { rsopReport, rsopReportChunks, RSOP_REPORT_COLUMNS } from "./reports/rsopReport.js";
export {
  csvHeader,
  csvRows,
  htmlEnd,
  htmlRows,
  htmlStart,
  toCsv,
  toHtml,
  toJson,
} from "./reports/exportReport.js";

export type { HolderReportOptions, ReportRecord } from "./reports/holderReport.js";
export type { ReportFilter, TemplateLookup } from "./reports/reportBody.js";
export type { RsopReportQuery, RsopReportRow } from "./reports/rsopReport.js";
export type { HtmlOptions } from "./reports/exportReport.js";
