// Reports over a live system's snapshot: holder (2.0) and people (1.0) reports, RSOP reports, exports.
export {
  holderReport,
  peopleReport,
  reportRecords,
  selectHolders,
  queryTest,
  recordMaker,
  compareHolders,
  PREVIEW_LIMIT,
} from "./holderReport.js";
export type { HolderReportOptions, ReportRecord } from "./holderReport.js";
export {
  parseReportBody,
  REPORT_LIMITS,
  HOLDER_PROPERTIES,
  PEOPLE_PROPERTIES,
  FILTER_TYPES,
  TEXT_OPERATORS,
} from "./reportBody.js";
export type {
  ReportFilter,
  ReportLimits,
  ReportFlavour,
  ReportQuery,
  TemplateLookup,
  ParseReportOptions,
} from "./reportBody.js";
export { rsopReport, rsopReportChunks, RSOP_REPORT_COLUMNS } from "./rsopReport.js";
export type { RsopReportRow, RsopReportQuery } from "./rsopReport.js";
export {
  EXPORT_TYPES,
  csvHeader,
  csvRows,
  escapeHtml,
  exportReport,
  htmlEnd,
  htmlRows,
  htmlStart,
  neutraliseCell,
  toCsv,
  toHtml,
  toJson,
} from "./exportReport.js";
export type { ExportType, HtmlOptions } from "./exportReport.js";
