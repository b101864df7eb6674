// Pure, allocation-free parsers for the time formats of the API. They run at load time and, for
// `parseInstant`, on the hot path: no Date.parse (it reads offset-less strings in the host zone).

export const MS_PER_DAY = 86_400_000;
export const SECONDS_PER_DAY = 86_400;
export const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
/** A weekday abbreviation as rules spell it, `Sun` … `Sat`. */
export type Weekday = (typeof WEEKDAYS)[number];

/** Instants the engine evaluates: 1970-01-01T00:00Z inclusive to 2100-01-01T00:00Z exclusive. */
export const MIN_INSTANT = 0;
export const MAX_INSTANT = 4_102_444_800_000;

function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

function num2(s: string, i: number): number {
  const a = digit(s, i);
  const b = digit(s, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

function num4(s: string, i: number): number {
  const a = num2(s, i);
  const b = num2(s, i + 2);
  return a < 0 || b < 0 ? -1 : a * 100 + b;
}

function isLeap(y: number): boolean {
  return (y & 3) === 0 && (y % 100 !== 0 || y % 400 === 0);
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return isLeap(y) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Month (1–12) × 32 + day of month of a day number (Howard Hinnant's civil_from_days, the inverse of daysFromCivil), integers only. */
export function monthDayOf(day: number): number {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  return (mp < 10 ? mp + 3 : mp - 9) * 32 + d;
}

/** Day numbers of January 1st of the years TABLE_FIRST_YEAR … TABLE_FIRST_YEAR + 299, and of the day before each month. */
const TABLE_FIRST_YEAR = 1900;
const YEAR_START = Int32Array.from({ length: 300 }, (_, k) => daysFromCivil(TABLE_FIRST_YEAR + k, 1, 1));
const MONTH_START = Int32Array.from([0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]);

/** Reads `YYYY-MM-DD` at `i`; returns the day number or NaN. Table lookups, no division, for 1900–2199. */
function readDate(s: string, i: number): number {
  const y = num4(s, i);
  const m = num2(s, i + 5);
  const d = num2(s, i + 8);
  if (y < 0 || m < 1 || m > 12 || d < 1 || s.charCodeAt(i + 4) !== 45 || s.charCodeAt(i + 7) !== 45) return NaN;
  if (d > daysInMonth(y, m)) return NaN;
  const k = y - TABLE_FIRST_YEAR;
  if (k < 0 || k >= 300) return daysFromCivil(y, m, d);
  return YEAR_START[k]! + MONTH_START[m]! + (m > 2 && isLeap(y) ? 1 : 0) + d - 1;
}

/**
 * `HH:mm:ss` → seconds since midnight; `24:00:00` only when `allow24` is set. NaN when malformed.
 */
export function parseClock(s: string, allow24 = false): number {
  if (typeof s !== "string" || s.length !== 8 || s.charCodeAt(2) !== 58 || s.charCodeAt(5) !== 58) return NaN;
  const h = num2(s, 0);
  const m = num2(s, 3);
  const sec = num2(s, 6);
  if (h < 0 || m < 0 || sec < 0 || m > 59 || sec > 59) return NaN;
  if (h === 24) return allow24 && m === 0 && sec === 0 ? SECONDS_PER_DAY : NaN;
  if (h > 23) return NaN;
  return h * 3600 + m * 60 + sec;
}

/** `YYYY-MM-DD` → days since 1970-01-01 (a local calendar day), NaN when malformed. */
export function parseLocalDate(s: string): number {
  if (typeof s !== "string" || s.length !== 10) return NaN;
  return readDate(s, 0);
}

/**
 * `YYYY-MM-DDTHH:mm:ss` → "local epoch" milliseconds: the wall time read as if it were UTC.
 * Local wall times compare by this number. NaN when malformed.
 */
export function parseLocalDateTime(s: string): number {
  if (typeof s !== "string" || s.length !== 19 || s.charCodeAt(10) !== 84) return NaN;
  const day = readDate(s, 0);
  const clock = parseClock(s.slice(11));
  if (Number.isNaN(day) || Number.isNaN(clock)) return NaN;
  return day * MS_PER_DAY + clock * 1000;
}

/**
 * An instant: epoch milliseconds (a safe integer) or ISO 8601 `YYYY-MM-DDTHH:mm[:ss[.fff…]]`
 * followed by `Z` or an offset `±HH:mm` / `±HHmm` / `±HH`. Returns epoch ms or NaN. As ISO 8601
 * allows, `t` and `z` may be lower case and the fraction may follow a comma (docs/semantics.md R2).
 * Strings without an offset are refused: they would mean a different instant in every zone.
 */
export function parseInstant(v: unknown): number {
  return readInstant(v, INSTANT) ? INSTANT[0]! : NaN;
}

const INSTANT = new Float64Array(1);

/**
 * parseInstant for the hot path: writes the instant to `out[0]` and answers whether `v` is one, so
 * that no double crosses a call boundary (a boxed number would be an allocation per decision).
 */
export function readInstant(v: unknown, out: Float64Array): boolean {
  if (typeof v === "number") {
    out[0] = v;
    return Number.isSafeInteger(v);
  }
  if (typeof v !== "string") return false;
  const s = v;
  const n = s.length;
  if (n < 17) return false;
  const c10 = s.charCodeAt(10);
  if (c10 !== 84 && c10 !== 116) return false; // T or t
  const day = readDate(s, 0);
  const h = num2(s, 11);
  const mi = num2(s, 14);
  if (Number.isNaN(day) || h < 0 || h > 23 || mi < 0 || mi > 59 || s.charCodeAt(13) !== 58) return false;
  let i = 16;
  let sec = 0;
  let ms = 0;
  if (i < n && s.charCodeAt(i) === 58) {
    sec = num2(s, i + 1);
    if (sec < 0 || sec > 59) return false;
    i += 3;
    if (i < n && (s.charCodeAt(i) === 46 || s.charCodeAt(i) === 44)) {
      i++;
      // Milliseconds are the first three digits; further ones (up to nine in all) are truncated.
      const start = i;
      while (i < n) {
        const dg = digit(s, i);
        if (dg < 0) break;
        if (i - start < 3) ms = ms * 10 + dg;
        i++;
      }
      if (i === start || i - start > 9) return false;
      if (i - start < 3) ms *= i - start === 1 ? 100 : 10;
    }
  }
  if (i >= n) return false;
  const c = s.charCodeAt(i);
  let offsetMin = 0;
  if (c === 90 || c === 122) {
    // Z
    if (i + 1 !== n) return false;
  } else if (c === 43 || c === 45) {
    const oh = num2(s, i + 1);
    if (oh < 0 || oh > 23) return false;
    let om = 0;
    const rest = n - (i + 3);
    if (rest === 3 && s.charCodeAt(i + 3) === 58) om = num2(s, i + 4);
    else if (rest === 2) om = num2(s, i + 3);
    else if (rest !== 0) return false;
    if (om < 0 || om > 59) return false;
    offsetMin = (oh * 60 + om) * (c === 45 ? -1 : 1);
  } else return false;
  out[0] = day * MS_PER_DAY + ((h * 60 + mi - offsetMin) * 60 + sec) * 1000 + ms;
  return true;
}
