// A week of access at a glance: for a holder (every door and floor group its rules reach) or a door
// (every holder whose rules reach it), the share of each local hour of each day of a week in which
// the holder's scan is allowed, in the local time of the device's cloud node. Minutes are walked as
// instants and bucketed by their local wall time, so a day clocks jump forward has a 23-hour day (the
// skipped hour has no minutes) and a day they fall back counts its repeated hour twice.
import {
  type CompiledDevice,
  type CompiledSystem,
  type ZoneTable,
  calendarHas,
  holderGroupFrom,
  holderGroupTo,
  offsetAt,
} from "../compile/index.js";
import { type Issue, MS_PER_DAY, QueryError, parseInstant, parseLocalDate } from "../model/index.js";
import { accessRuns } from "./diffAccess.js";
import type { Engine } from "./engine.js";
import { isoOffset } from "./formatInstant.js";
import { ranksReaching } from "./ruleWalk.js";

/** What a weekly picture shows: one holder's access, or one door's. */
export type PictureSubject =
  | { readonly holderId: string; readonly deviceId?: undefined }
  | { readonly deviceId: string; readonly holderId?: undefined };

/** Options of weeklyPicture: the subject and a date of the week (`YYYY-MM-DD`, or an instant; default: the week of now). */
export type PictureOptions = PictureSubject & { readonly weekOf?: string | number };

/** One day column of a picture row: its local date, weekday, UTC offsets and whether clocks change that day. */
export interface PictureDay {
  date: string;
  weekday: string;
  /** Hours the local day has: 24, or 23 / 25 on a day clocks change. */
  hours: number;
  dst: boolean;
  /** UTC offset at the start and at the end of the day. */
  offsetStart: string;
  offsetEnd: string;
  /**
   * Only on a day some calendar of the row's rules holds (docs/semantics.md C4): those calendars, by
   * id, with how the rules follow them, so a picture shows why a holiday is closed (or alone open).
   */
  calendars?: { id: string; name: string; mode: "exclude" | "only" }[];
}

/** One row: a door, floor group or holder, and per day, per local hour, the allowed share (0…1), null for an hour that does not occur. */
export interface PictureRow {
  id: string;
  label: string;
  kind: "device" | "floorGroup" | "holder";
  timezone: string;
  days: PictureDay[];
  cells: (number | null)[][];
}

/** A weekly access picture: the week (Monday to Sunday, local dates) and its rows. */
export interface WeeklyPicture {
  title: string;
  subject: { holderId: string } | { deviceId: string };
  weekStart: string;
  rows: PictureRow[];
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const MINUTE = 60_000;
const HOUR = 3_600_000;

/** The instant at which local wall time `local` (local epoch ms) occurs first (or, if skipped, the first instant after it). */
function instantOfLocal(zone: ZoneTable, local: number): number {
  const guess = local - offsetAt(zone, local - offsetAt(zone, local));
  // A repeated time occurs first at the larger offset.
  const early = local - offsetAt(zone, guess - HOUR * 3);
  return early < guess && early + offsetAt(zone, early) === local ? early : guess;
}

function isoDate(day: number): string {
  return new Date(day * MS_PER_DAY).toISOString().slice(0, 10);
}

/** The local Monday (day number) of the week holding `weekOf` in the zone. */
function mondayOf(day: number): number {
  const wd = (((day + 4) % 7) + 7) % 7; // 0 = Sunday
  return day - ((wd + 6) % 7);
}

/** The calendars of the enabled rules of holder `h` that reach `dev`, each once (by id, then mode). */
function calendarsOf(
  sys: CompiledSystem,
  h: number,
  dev: CompiledDevice,
): { id: string; name: string; mode: "exclude" | "only" }[] {
  const out = new Map<string, { id: string; name: string; mode: "exclude" | "only" }>();
  for (const rank of ranksReaching(sys, dev, holderGroupFrom(sys, h), holderGroupTo(sys, h))) {
    const c = sys.rules_[rank]!.rule_.calendar;
    if (c === undefined || c === null) continue;
    const name = sys.snapshot.calendars.find((x) => x.id === c.id)?.name ?? c.id;
    out.set(`${c.id}\u0000${c.mode}`, { id: c.id, name, mode: c.mode });
  }
  return [...out.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.mode < b.mode ? -1 : 1));
}

/** The row of a holder at a device (k < 0) or at floor group k of an elevator reader. */
function rowOf(
  sys: CompiledSystem,
  h: number,
  dev: CompiledDevice,
  k: number,
  weekOfDay: number | null,
  weekOfInstant: number,
  base: Omit<PictureRow, "days" | "cells" | "timezone">,
): PictureRow {
  const zone = dev.node_.zone_;
  const node = sys.snapshot.cloudNodes.find((n) => n.id === dev.node_.id) as { timezone?: string } | undefined;
  const monday = mondayOf(weekOfDay ?? Math.floor((weekOfInstant + offsetAt(zone, weekOfInstant)) / MS_PER_DAY));
  const from = instantOfLocal(zone, monday * MS_PER_DAY);
  const to = instantOfLocal(zone, (monday + 7) * MS_PER_DAY);
  const runs = accessRuns(sys, h, dev, k, from, to);
  const calendars = calendarsOf(sys, h, dev);
  const allowed: number[][] = Array.from({ length: 7 }, () => new Array<number>(24).fill(0));
  const total: number[][] = Array.from({ length: 7 }, () => new Array<number>(24).fill(0));
  let r = 0;
  for (let t = from; t < to; t += MINUTE) {
    const local = t + offsetAt(zone, t);
    const d = Math.floor(local / MS_PER_DAY) - monday;
    if (d < 0 || d > 6) continue;
    const hour = Math.floor((local - (monday + d) * MS_PER_DAY) / HOUR);
    while (r < runs.length && runs[r]!.end <= t) r++;
    total[d]![hour]!++;
    if (r < runs.length && runs[r]!.start <= t && runs[r]!.allowed) allowed[d]![hour]!++;
  }
  const days: PictureDay[] = [];
  for (let d = 0; d < 7; d++) {
    const start = instantOfLocal(zone, (monday + d) * MS_PER_DAY);
    const end = instantOfLocal(zone, (monday + d + 1) * MS_PER_DAY);
    const hours = Math.round((end - start) / HOUR);
    const on = calendars.filter((c) => calendarHas(sys.calendarData_, sys.calendarAt_.get(c.id)!, monday + d));
    days.push({
      date: isoDate(monday + d),
      weekday: WEEKDAYS[(((monday + d + 4) % 7) + 7) % 7]!,
      hours,
      dst: hours !== 24,
      offsetStart: isoOffset(offsetAt(zone, start)),
      offsetEnd: isoOffset(offsetAt(zone, end - 1)),
      ...(on.length === 0 ? {} : { calendars: on }),
    });
  }
  const cells = allowed.map((row, d) => row.map((a, hr) => (total[d]![hr] === 0 ? null : a / total[d]![hr]!)));
  return { ...base, timezone: node?.timezone ?? sys.snapshot.timezone, days, cells };
}

/**
 * A week of access at a glance: for a holder, every door and floor group its rules reach; for a
 * door, every holder whose rules reach it; per local day (Monday to Sunday) and local hour of the
 * door's cloud node, the share of the hour in which the scan is allowed. A day clocks change on is
 * marked (`dst`, 23 or 25 hours); an hour that does not occur is null.
 * @param engine - the engine to ask.
 * @param options - `holderId` or `deviceId`, and `weekOf` (a date `YYYY-MM-DD` or an instant; default now).
 * @returns the picture's rows, each with its days and 7 × 24 cells.
 * @throws QueryError for an unknown id or a bad `weekOf`.
 * @example
 * weeklyPicture(engine, { holderId: "holder-0001", weekOf: "2026-04-15" }).rows[0].cells[2][9]; //=> 1 (Wednesday 09:00–10:00, allowed throughout)
 */
export function weeklyPicture(engine: Engine, options: PictureOptions): WeeklyPicture {
  const sys = engine.compiled_;
  const issues: Issue[] = [];
  const weekOf = options.weekOf ?? Date.now();
  let weekOfDay: number | null = null;
  let weekOfInstant = Number.NaN;
  if (typeof weekOf === "string" && /^\d{4}-\d{2}-\d{2}$/.test(weekOf)) weekOfDay = parseLocalDate(weekOf);
  else weekOfInstant = parseInstant(weekOf);
  if ((weekOfDay === null || Number.isNaN(weekOfDay)) && Number.isNaN(weekOfInstant))
    issues.push({
      code: "invalid",
      path: ["weekOf"],
      message: "Must be a date YYYY-MM-DD, an ISO 8601 instant with Z or an offset, or epoch milliseconds.",
    });
  const hasHolder = typeof options.holderId === "string";
  const hasDevice = typeof options.deviceId === "string";
  if (hasHolder === hasDevice)
    issues.push({ code: "invalid", path: [], message: "Give exactly one of holderId and deviceId." });
  const index = hasHolder ? sys.holderIndex_.get(options.holderId!) : undefined;
  const device = hasDevice ? sys.deviceIndex_.get(options.deviceId!) : undefined;
  if (hasHolder && index === undefined)
    issues.push({ code: "unknownId", path: ["holderId"], message: `Unknown holder id "${options.holderId}".` });
  if (hasDevice && device === undefined)
    issues.push({ code: "unknownId", path: ["deviceId"], message: `Unknown device id "${options.deviceId}".` });
  if (issues.length > 0) throw new QueryError(issues);
  const s = sys.snapshot;
  const rows: PictureRow[] = [];
  if (index !== undefined) {
    // Every door and floor group the holder's groups' rules reach, by id.
    for (const dev of sys.devicesById_) {
      if (ranksReaching(sys, dev, holderGroupFrom(sys, index), holderGroupTo(sys, index)).length === 0) continue;
      const d = s.devices[dev.index_]!;
      if (!dev.elevator_)
        rows.push(rowOf(sys, index, dev, -1, weekOfDay, weekOfInstant, { id: dev.id, label: d.name, kind: "device" }));
      else
        dev.floorGroups_.forEach((fgId, k) => {
          const fg = s.floorGroups.find((f) => f.id === fgId);
          rows.push(
            rowOf(sys, index, dev, k, weekOfDay, weekOfInstant, {
              id: fgId,
              label: fg?.name ?? fgId,
              kind: "floorGroup",
            }),
          );
        });
    }
    rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const hs = sys.holders_[index]!;
    return {
      title: `${hs.firstName} ${hs.lastName} (${hs.id})`,
      subject: { holderId: hs.id },
      weekStart: rows[0]?.days[0]?.date ?? "",
      rows,
    };
  }
  const dev = device!;
  const d = s.devices[dev.index_]!;
  const seen = new Set<number>();
  for (let slot = 0; slot < dev.slotGroup_.length; slot++)
    for (const h of sys.holdersOfGroup_[dev.slotGroup_[slot]!]!) seen.add(h);
  const holders = [...seen].sort((a, b) => {
    const x = sys.holders_[a]!.id;
    const y = sys.holders_[b]!.id;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (const i of holders) {
    const h = sys.holders_[i]!;
    rows.push(
      rowOf(sys, i, dev, -1, weekOfDay, weekOfInstant, {
        id: h.id,
        label: `${h.firstName} ${h.lastName}`,
        kind: "holder",
      }),
    );
  }
  // An elevator reader's rows are the holders' floors through any floor group: its own scan (k = -1).
  return {
    title: `${d.name} (${d.id})`,
    subject: { deviceId: d.id },
    weekStart: rows[0]?.days[0]?.date ?? isoDate(mondayOf(weekOfDay ?? Math.floor(weekOfInstant / MS_PER_DAY))),
    rows,
  };
}
