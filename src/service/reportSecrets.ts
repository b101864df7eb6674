// PINs in reports (HS2): a report shows `pin`/`duressPin` (1.0 `Pin`/`Duress Pin`) only when an admin
// token names them in `output`. A body without `output` leaves them out for every role; another role
// naming them is refused; a stored report's PIN columns are left out of what another role views.
import type { ReportQuery, ReportRecord } from "../reports/index.js";
import type { Grant } from "./auth/grant.js";
import { HttpError } from "./httpError.js";

/** The report properties that hold a PIN, in both flavours. */
const PIN_COLUMNS: ReadonlySet<string> = new Set(["pin", "duressPin", "Pin", "Duress Pin"]);

/**
 * The query a report runs for `grant`: PIN columns left out of a default output (`body` gave none and
 * no template); refused when a non-admin names them (in `output`, or through a template's output).
 * @throws HttpError 403 at `body.output.<i>` (or `body.reportId`) for each PIN column a non-admin asks.
 */
export function reportQueryFor(q: ReportQuery, body: unknown, grant: Grant): ReportQuery {
  const raw =
    typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const named = q.reportId !== null || (raw.output !== undefined && raw.output !== null);
  if (!named)
    return q.output.some((k) => PIN_COLUMNS.has(k)) ? { ...q, output: q.output.filter((k) => !PIN_COLUMNS.has(k)) } : q;
  if (grant.role === "admin") return q;
  const asked = q.output.flatMap((k, i) => (PIN_COLUMNS.has(k) ? [{ k, i }] : []));
  if (asked.length === 0) return q;
  throw new HttpError(
    403,
    "Only an admin's report may show PINs.",
    asked.map(({ k, i }) =>
      q.reportId !== null
        ? { path: "body.reportId", message: `The template's output names "${k}": a ${grant.role} may not see PINs.` }
        : { path: `body.output.${i}`, message: `"${k}" is a PIN: only an admin token may put it in a report.` },
    ),
  );
}

/** The records of a stored report as `grant` may view them: PIN columns only for an admin. */
export function recordsFor(records: readonly ReportRecord[], grant: Grant): readonly ReportRecord[] {
  if (grant.role === "admin" || records.length === 0 || !Object.keys(records[0]!).some((k) => PIN_COLUMNS.has(k)))
    return records;
  return records.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !PIN_COLUMNS.has(k))) as ReportRecord);
}

/** The export columns of a stored report as `grant` may view them. */
export function columnsFor(columns: readonly string[], grant: Grant): string[] {
  return grant.role === "admin" ? [...columns] : columns.filter((k) => !PIN_COLUMNS.has(k));
}
