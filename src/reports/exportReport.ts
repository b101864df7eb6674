// The export files of a report (docs/semantics.md RP lines): CSV (RFC 4180, through csv-stringify), JSON, and one
// standalone HTML page. Holder text is data everywhere: CSV cells that a spreadsheet would run as a
// formula are neutralised, and every HTML character that could open markup is escaped.
import { stringify } from "csv-stringify/sync";
import type { ReportRecord } from "./holderReport.js";

/** The export formats of a report (the keys of its metadata's `size`, the types of its export files). */
export const EXPORT_TYPES = ["csv", "html", "json"] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];

/**
 * A cell a spreadsheet would read as a formula (OWASP "CSV injection": a leading `=`, `+`, `-`, `@`,
 * tab or carriage return) gets a leading apostrophe, which spreadsheets show as text (RP7).
 */
export function neutraliseCell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return neutraliseCell(v);
  return String(v);
}

/**
 * The records as CSV (RFC 4180: CRLF line ends, fields quoted when they hold a comma, quote or line
 * break): a header row of `columns`, then one row per record; null is an empty cell.
 * @example
 * toCsv([{ id: "h-1", lastName: "=SUM(A1)" }], ["id", "lastName"]); //=> "id,lastName\r\nh-1,'=SUM(A1)\r\n"
 */
export function toCsv(records: readonly ReportRecord[], columns: readonly string[]): string {
  return csvHeader(columns) + csvRows(records, columns);
}

/**
 * The header row of a CSV export (CRLF-terminated); csvRows gives the rows, so a long report can be written in chunks.
 * @example
 * csvHeader(["id", "lastName"]); //=> "id,lastName\r\n"
 */
export function csvHeader(columns: readonly string[]): string {
  return stringify([[...columns]], { record_delimiter: "\r\n" });
}

/**
 * CSV rows of these records (no header), CRLF-terminated.
 * @example
 * csvRows([{ id: "h-1", email: "a, b" }], ["id", "email"]); //=> 'h-1,"a, b"\r\n'
 */
export function csvRows(records: readonly ReportRecord[], columns: readonly string[]): string {
  if (records.length === 0) return "";
  return stringify(
    records.map((r) => columns.map((c) => cellText(r[c]))),
    { record_delimiter: "\r\n" },
  );
}

/**
 * The records as a JSON array (one line).
 * @example
 * toJson([{ id: "h-1" }]); //=> '[{"id":"h-1"}]'
 */
export function toJson(records: readonly ReportRecord[]): string {
  return JSON.stringify(records);
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text as HTML character data or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

// Sorting is a fixed script: it reads cell text through textContent and never builds markup, so no
// holder text ever reaches the parser as anything but text.
const SORT_SCRIPT = `
document.querySelectorAll("th button").forEach(function (b, col) {
  b.addEventListener("click", function () {
    var tbody = document.querySelector("tbody");
    var rows = Array.prototype.slice.call(tbody.rows);
    var up = b.getAttribute("data-dir") !== "asc";
    document.querySelectorAll("th button").forEach(function (o) { o.removeAttribute("data-dir"); o.parentNode.removeAttribute("aria-sort"); });
    b.setAttribute("data-dir", up ? "asc" : "desc");
    b.parentNode.setAttribute("aria-sort", up ? "ascending" : "descending");
    rows.sort(function (x, y) {
      var a = x.cells[col].textContent, c = y.cells[col].textContent;
      var na = Number(a), nc = Number(c);
      var r = a !== "" && c !== "" && !isNaN(na) && !isNaN(nc) ? na - nc : a.localeCompare(c);
      return up ? r : -r;
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
  });
});`;

// Values wrap only at spaces (no `word-break`/`overflow-wrap` that would split "false" into "fals e"):
// a column is as wide as its longest word, and a table wider than the page scrolls sideways in its
// box instead. No value needs `overflow-wrap: anywhere`: long ids and e-mail addresses stay whole.
const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #111; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
p { margin: 0 0 1em; color: #444; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #bbb; padding: .25em .5em; text-align: left; vertical-align: top; overflow-wrap: normal; word-break: normal; hyphens: manual; }
th { background: #eee; }
th button { font: inherit; font-weight: bold; background: none; border: 0; padding: 0; cursor: pointer; }
th button[data-dir="asc"]::after { content: " \\25B2"; }
th button[data-dir="desc"]::after { content: " \\25BC"; }
tbody tr:nth-child(even) { background: #f7f7f7; }
.nw { white-space: nowrap; }
td ul { margin: 0; padding: 0; list-style: none; }
td li + li { margin-top: .1em; }
.k { color: #555; }
@media print {
  body { margin: 0; font-size: 8pt; }
  .scroll { overflow: visible; }
  th button::after { content: none !important; }
  thead { display: table-header-group; }
  tr { break-inside: avoid; }
  tbody tr:nth-child(even) { background: none; }
}`;

/** Header words of the API's keys where splitting the camelCase key is not enough (abbreviations). */
const LABELS: Readonly<Record<string, string>> = {
  id: "ID",
  pin: "PIN",
  duressPin: "Duress PIN",
  Pin: "PIN",
  "Duress Pin": "Duress PIN",
  holderId: "Holder ID",
  deviceId: "Device ID",
  floorGroupId: "Floor group ID",
  activeRuleId: "Active rule ID",
  bluetooth: "Bluetooth",
  pendingBluetooth: "Pending Bluetooth",
  mobileApp: "Mobile app",
  pendingMobileApp: "Pending mobile app",
};

/**
 * The header of a column as words: the 2.0 camelCase keys split ("firstName" → "First name"), the
 * 1.0 display names ("First Name") as they are. The key itself is the header's tooltip.
 * @example
 * columnLabel("expireDate"); //=> "Expire date"
 */
export function columnLabel(key: string): string {
  const known = LABELS[key];
  if (known !== undefined) return known;
  if (!/^[a-z][A-Za-z0-9]*$/.test(key)) return key;
  const words = key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Columns whose values are JSON text (custom fields, both flavours): shown as a list of `name: value`. */
const JSON_COLUMNS: ReadonlySet<string> = new Set(["customFields", "Custom Fields", "Custom Attributes"]);

/**
 * A character a browser may break a line after or before besides a space (a hyphen, even before a
 * digit as in "2026-01-05"; a slash, a dash; anything outside plain Latin letters, digits and the
 * punctuation that binds to them, brackets included, UAX #14). A word holding one is kept whole.
 */
const BREAKABLE = /[^\s\p{Script=Latin}\p{Nd}.,:;@_'"&<>#*+=%$()[\]{}]/u;

/**
 * Values up to this long that hold a BREAKABLE character stay on one line as a whole, as does any
 * single word: one class on the cell rather than a span a word.
 */
const SHORT_VALUE = 24;

/**
 * Escaped text whose lines may break only at spaces: a word a browser could break elsewhere (a
 * hyphenated name or id) is wrapped in `<span class="nw">`, which the page styles `white-space: nowrap`.
 * @example
 * wordsHtml("Anne-Marie Lee"); //=> '<span class="nw">Anne-Marie</span> Lee'
 */
export function wordsHtml(text: string): string {
  if (!BREAKABLE.test(text)) return escapeHtml(text);
  return text
    .split(/(\s+)/)
    .map((w) => (BREAKABLE.test(w) ? `<span class="nw">${escapeHtml(w)}</span>` : escapeHtml(w)))
    .join("");
}

/** Nesting shown as lists; anything deeper is shown as its JSON text (and the recursion stays shallow). */
const MAX_LIST_DEPTH = 4;

/** A nested value as a list: array items one per line, object members as `name: value`; empty: nothing. */
function nestedHtml(v: object, depth = 0): string {
  if (depth >= MAX_LIST_DEPTH) return wordsHtml(JSON.stringify(v));
  const item = (x: unknown) => (x !== null && typeof x === "object" ? nestedHtml(x, depth + 1) : valueHtml(x));
  if (Array.isArray(v)) return v.length === 0 ? "" : `<ul>${v.map((x) => `<li>${item(x)}</li>`).join("")}</ul>`;
  const entries = Object.entries(v);
  if (entries.length === 0) return "";
  return `<ul>${entries.map(([k, x]) => `<li><span class="k">${wordsHtml(k)}:</span> ${item(x)}</li>`).join("")}</ul>`;
}

/** A value that is not a list: its text, words kept whole; null and undefined: nothing. */
function valueHtml(v: unknown): string {
  return v === null || v === undefined ? "" : wordsHtml(String(v));
}

/**
 * The cell of one value: JSON text of a JSON column parsed and listed (anything unparsable shown as
 * text); a short value that could break elsewhere than at a space on one line; else words kept whole.
 */
function cellHtml(column: string, v: unknown): string {
  if (typeof v === "string" && JSON_COLUMNS.has(column) && /^\s*[[{]/.test(v)) {
    try {
      const parsed: unknown = JSON.parse(v);
      if (parsed !== null && typeof parsed === "object") return `<td>${nestedHtml(parsed)}</td>`;
    } catch {
      // Not JSON after all: the text itself.
    }
  }
  if (v !== null && typeof v === "object") return `<td>${nestedHtml(v)}</td>`;
  const text = v === null || v === undefined ? "" : String(v);
  if (BREAKABLE.test(text) && (text.length <= SHORT_VALUE || !/\s/.test(text)))
    return `<td class="nw">${escapeHtml(text)}</td>`;
  return `<td>${wordsHtml(text)}</td>`;
}

/** Options of toHtml. */
export interface HtmlOptions {
  /** The page title and heading; default "Report". */
  readonly title?: string;
  /** One line under the heading (when it was made, with which filters). */
  readonly caption?: string;
}

/**
 * The records as one standalone HTML page: a table with a header row of `columns` as words (the key
 * in the header's tooltip; click a header to sort), every value escaped, lines broken only at
 * spaces, nested values (custom fields) as lists, readable when printed.
 * @example
 * toHtml([{ firstName: "<script>" }], ["firstName"]).includes("<td>&lt;script&gt;</td>"); //=> true
 */
export function toHtml(
  records: readonly ReportRecord[],
  columns: readonly string[],
  options: HtmlOptions = {},
): string {
  return htmlStart(columns, options) + htmlRows(records, columns) + htmlEnd(records.length);
}

/**
 * The start of an HTML export, up to the table's body; then htmlRows (in chunks), then htmlEnd.
 * @example
 * htmlStart(["id"], { title: "Holders" }) + htmlRows(records, ["id"]) + htmlEnd(records.length);
 */
export function htmlStart(columns: readonly string[], options: HtmlOptions = {}): string {
  const title = escapeHtml(options.title ?? "Report");
  const head = columns
    .map(
      (c) =>
        `<th scope="col" title="${escapeHtml(`API key: ${c}`)}"><button type="button">${escapeHtml(columnLabel(c))}</button></th>`,
    )
    .join("");
  const caption = options.caption === undefined ? "" : `<p>${escapeHtml(options.caption)}</p>\n`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${STYLE}
</style>
</head>
<body>
<h1>${title}</h1>
${caption}<div class="scroll"><table>
<thead><tr>${head}</tr></thead>
<tbody>
`;
}

/**
 * Table rows of these records, one line each (a word that could break at a hyphen is kept whole).
 * @example
 * htmlRows([{ id: "h-1", n: 2 }], ["id", "n"]); //=> '<tr><td class="nw">h-1</td><td>2</td></tr>\n'
 */
export function htmlRows(records: readonly ReportRecord[], columns: readonly string[]): string {
  let out = "";
  for (const r of records) out += `<tr>${columns.map((c) => cellHtml(c, r[c])).join("")}</tr>\n`;
  return out;
}

/**
 * The end of an HTML export of `count` records.
 * @example
 * htmlEnd(2).includes("<p>2 records.</p>"); //=> true
 */
export function htmlEnd(count: number): string {
  return `</tbody>
</table></div>
<p>${count} ${count === 1 ? "record" : "records"}.</p>
<script>${SORT_SCRIPT}
</script>
</body>
</html>
`;
}

/** One export of the records. */
export function exportReport(
  type: ExportType,
  records: readonly ReportRecord[],
  columns: readonly string[],
  options: HtmlOptions = {},
): string {
  return type === "csv"
    ? toCsv(records, columns)
    : type === "json"
      ? toJson(records)
      : toHtml(records, columns, options);
}
