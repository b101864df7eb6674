// ISO renderings of instants and local wall times for query results (not on the decide hot path).
function pad(n: number, w = 2): string {
  return String(n).padStart(w, "0");
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ` of an epoch-ms instant. */
export function isoInstant(at: number): string {
  return new Date(at).toISOString();
}

/** `YYYY-MM-DDTHH:mm:ss.sss±HH:mm` of an instant at a UTC offset (ms). */
export function isoLocal(at: number, offset: number): string {
  const d = new Date(at + offset);
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset) / 60_000;
  return `${d.toISOString().slice(0, 23)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
