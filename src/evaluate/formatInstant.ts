// ISO renderings of instants and local wall times for query results (not on the decide hot path).
// Every UTC offset the engine prints goes through `isoOffset`, so that a zone's historical offset
// with seconds (Africa/Monrovia's −00:44:30 until 1972) prints as ISO 8601 wants it.
function pad(n: number, w = 2): string {
  return String(n).padStart(w, "0");
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ` of an epoch-ms instant. */
export function isoInstant(at: number): string {
  return new Date(at).toISOString();
}

/**
 * A UTC offset (ms) as ISO 8601 `±HH:mm`, or `±HH:mm:ss` when it has seconds (zone offsets are whole
 * seconds); zero is `+00:00`.
 * @example
 * isoOffset(-2_670_000); //=> "-00:44:30"
 */
export function isoOffset(offset: number): string {
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.round(Math.abs(offset) / 1000);
  const s = abs % 60;
  const hm = `${sign}${pad(Math.floor(abs / 3600))}:${pad(Math.floor(abs / 60) % 60)}`;
  return s === 0 ? hm : `${hm}:${pad(s)}`;
}

/** `YYYY-MM-DDTHH:mm:ss.sss±HH:mm[:ss]` of an instant at a UTC offset (ms). */
export function isoLocal(at: number, offset: number): string {
  return `${new Date(at + offset).toISOString().slice(0, 23)}${isoOffset(offset)}`;
}
