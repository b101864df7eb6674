// Two plain-JS baselines answering the peers' access question (PeerInput → allowed?), written the way
// a developer without an engine would:
//
// - naiveScan: the snapshot's arrays as they are. Every decision scans every rule, `includes` on the
//   rule's device list and the holder's groups, and compares `HH:mm:ss` and `YYYY-MM-DD` strings.
//   The floor for "no cleverness".
// - plainIndexed: one Map from device to its rules with windows pre-parsed to numbers and the
//   holder's groups in a Set: what one afternoon of plain JS gives.
//
// Neither decodes cards, converts time zones or resolves credentials: like every peer, they get
// those already done in PeerInput (outside the timed path).
import { type PeerInput, policyAccepts } from "../fixtures.js";
import { type RawRule, type RawSnapshot, clockMs } from "./rawSnapshot.js";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

export type PeerDecide = (input: PeerInput) => boolean;

/** Devices a rule reaches: its doors, or the readers of its floor groups. */
function reachedDevices(snapshot: RawSnapshot, r: RawRule): string[] {
  if (r.type === "door") return r.devices ?? [];
  const readers = new Map(snapshot.floorGroups.map((fg) => [fg.id, fg.readerPort]));
  return [...new Set((r.floorGroups ?? []).map((fg) => readers.get(fg)!))];
}

export function naiveScan(snapshotJson: unknown): PeerDecide {
  const snapshot = snapshotJson as RawSnapshot;
  const holders = new Map(snapshot.holders.map((h) => [h.id, h]));
  // Elevator rules list floor groups; give them the reader devices once, and keep the rest as is.
  const rules = snapshot.rules.map((r) => ({ ...r, reaches: reachedDevices(snapshot, r) }));
  const inWindow = (r: RawRule, input: PeerInput): boolean => {
    const t = input.clock;
    const after = (d: string) => (r.startDate ?? "0000-00-00") <= d && d <= (r.endDate ?? "9999-99-99");
    if (r.startTime < r.stopTime)
      return r.recurring.includes(WEEKDAYS[input.wd]!) && t >= r.startTime && t < r.stopTime && after(input.date);
    if (r.recurring.includes(WEEKDAYS[input.wd]!) && t >= r.startTime && after(input.date)) return true;
    return r.recurring.includes(WEEKDAYS[input.pwd]!) && t < r.stopTime && after(input.prevDate);
  };
  return (input) => {
    if (input.holderId === null) return false;
    const holder = holders.get(input.holderId);
    if (holder === undefined || !input.enabled || input.local < input.from || input.local >= input.to) return false;
    let allowed = false;
    for (const r of rules) {
      if (
        r.enabled === false ||
        !holder.groups.includes(r.groupId) ||
        !r.reaches.includes(input.deviceId) ||
        !inWindow(r, input)
      )
        continue;
      if (r.allow === false) return false;
      if ((policyAccepts(r.authenticationPolicy) & input.deviceAccepts & input.factor) !== 0) allowed = true;
    }
    return allowed;
  };
}

interface PlainRule {
  readonly group: string;
  readonly allow: boolean;
  readonly start: number;
  readonly stop: number;
  readonly days: number;
  readonly first: number;
  readonly last: number;
  readonly accepts: number;
}

function dayNumber(date: string | null | undefined, fallback: number): number {
  if (date === null || date === undefined) return fallback;
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, d) / 86_400_000;
}

export function plainIndexed(snapshotJson: unknown): PeerDecide {
  const snapshot = snapshotJson as RawSnapshot;
  const groupsOf = new Map(snapshot.holders.map((h) => [h.id, new Set(h.groups)]));
  const byDevice = new Map<string, PlainRule[]>();
  for (const r of snapshot.rules) {
    if (r.enabled === false) continue;
    let days = 0;
    for (const d of r.recurring) days |= 1 << WEEKDAYS.indexOf(d);
    const rule: PlainRule = {
      group: r.groupId,
      allow: r.allow !== false,
      start: clockMs(r.startTime),
      stop: clockMs(r.stopTime),
      days,
      first: dayNumber(r.startDate, -Infinity),
      last: dayNumber(r.endDate, Infinity),
      accepts: policyAccepts(r.authenticationPolicy),
    };
    for (const d of reachedDevices(snapshot, r)) {
      let list = byDevice.get(d);
      if (list === undefined) byDevice.set(d, (list = []));
      list.push(rule);
    }
  }
  return (input) => {
    if (input.holderId === null || !input.enabled || input.local < input.from || input.local >= input.to) return false;
    const groups = groupsOf.get(input.holderId);
    const rules = byDevice.get(input.deviceId);
    if (groups === undefined || rules === undefined) return false;
    let allowed = false;
    for (const r of rules) {
      if (!groups.has(r.group)) continue;
      let open: boolean;
      if (r.start < r.stop)
        open =
          ((r.days >> input.wd) & 1) === 1 &&
          input.tod >= r.start &&
          input.tod < r.stop &&
          input.day >= r.first &&
          input.day <= r.last;
      else
        open =
          (((r.days >> input.wd) & 1) === 1 && input.tod >= r.start && input.day >= r.first && input.day <= r.last) ||
          (((r.days >> input.pwd) & 1) === 1 && input.tod < r.stop && input.pday >= r.first && input.pday <= r.last);
      if (!open) continue;
      if (!r.allow) return false;
      if ((r.accepts & input.deviceAccepts & input.factor) !== 0) allowed = true;
    }
    return allowed;
  };
}
