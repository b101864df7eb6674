// Standalone HTML pages (no script, no external resource): the weekly access picture as an SVG heat
// map, and the diff page (the changes by name in local time, and a picture per holder of what changed).
import { DateTime } from "luxon";
import {
  type AccessChange,
  type AccessDiff,
  type Engine,
  type PictureDay,
  type PictureRow,
  type TimeSpan,
  type WeeklyPicture,
  weeklyPicture,
} from "../../evaluate/index.js";
import type { SystemSnapshot } from "../../model/index.js";
import { escapeHtml as esc, wordsHtml } from "../../reports/exportReport.js";

const LABEL_W = 230;
const CELL_W = 6;
const DAY_GAP = 6;
const DAY_W = 24 * CELL_W;
const ROW_H = 16;
const HEAD_H = 44;

/** The fill of a cell: white-grey at 0 through green at 1. */
function shade(share: number): string {
  const mix = (a: number, b: number) => Math.round(a + (b - a) * share);
  return `rgb(${mix(236, 26)},${mix(239, 127)},${mix(241, 55)})`;
}

/** The SVG heat map of a picture: one row per door, floor group or holder, 7 days × 24 local hours. */
export function renderPictureSvg(p: WeeklyPicture, id = "picture", titles = true): string {
  const width = LABEL_W + 7 * (DAY_W + DAY_GAP);
  const height = HEAD_H + Math.max(1, p.rows.length) * ROW_H + 24;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" id="${esc(id)}" class="picture" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="11">`,
  );
  out.push(
    `<defs><pattern id="${esc(id)}-skipped" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="4" height="4" fill="#fff"/><line x1="0" y1="0" x2="0" y2="4" stroke="#bbb" stroke-width="2"/></pattern></defs>`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  const days = p.rows[0]?.days ?? [];
  for (let d = 0; d < 7; d++) {
    const x = LABEL_W + d * (DAY_W + DAY_GAP);
    const day = days[d];
    const dst = p.rows.some((r) => r.days[d]?.dst === true);
    out.push(`<text x="${x}" y="14" font-weight="600">${esc(day ? `${day.weekday} ${day.date}` : "")}</text>`);
    if (dst) {
      const r = p.rows.find((row) => row.days[d]?.dst === true)!.days[d]!;
      out.push(
        `<text class="dst" x="${x}" y="27" fill="#b35c00" font-weight="600" font-size="9">DST: ${r.hours} h (${esc(r.offsetStart)}→${esc(r.offsetEnd)})</text>`,
      );
      out.push(
        `<rect class="dst-day" x="${x - 2}" y="31" width="${DAY_W + 4}" height="${Math.max(1, p.rows.length) * ROW_H + 8}" fill="none" stroke="#b35c00" stroke-dasharray="3 2"/>`,
      );
    }
    out.push(
      ...calendarMark(
        p.rows.map((r) => r.days[d]),
        x,
      ),
    );
    for (const hr of [0, 6, 12, 18])
      out.push(`<text x="${x + hr * CELL_W}" y="${HEAD_H - 4}" fill="#666" font-size="9">${hr}</text>`);
  }
  p.rows.forEach((row: PictureRow, i) => {
    const y = HEAD_H + i * ROW_H;
    out.push(
      `<text x="4" y="${y + 12}">${esc(row.label.length > 34 ? `${row.label.slice(0, 33)}…` : row.label)}</text>`,
    );
    for (let d = 0; d < 7; d++) {
      const x0 = LABEL_W + d * (DAY_W + DAY_GAP);
      for (let hr = 0; hr < 24; hr++) {
        const share = row.cells[d]?.[hr] ?? null;
        const fill = share === null ? `url(#${esc(id)}-skipped)` : shade(share);
        const title = !titles
          ? ""
          : `${row.label} — ${row.days[d]?.weekday} ${row.days[d]?.date} ${String(hr).padStart(2, "0")}:00 (${row.timezone}): ${share === null ? "does not occur (clocks jump forward)" : `${Math.round(share * 100)}% allowed`}`;
        out.push(
          `<rect class="cell" data-row="${i}" data-day="${d}" data-hour="${hr}" data-share="${share === null ? "" : share.toFixed(3)}" x="${x0 + hr * CELL_W}" y="${y + 2}" width="${CELL_W - 1}" height="${ROW_H - 3}" fill="${fill}">${titles ? `<title>${esc(title)}</title>` : ""}</rect>`,
        );
      }
    }
  });
  if (p.rows.length === 0) out.push(`<text x="4" y="${HEAD_H + 12}" fill="#666">No rule reaches anything here.</text>`);
  const ly = HEAD_H + Math.max(1, p.rows.length) * ROW_H + 16;
  out.push(
    `<text x="4" y="${ly}" fill="#666">Local time of each door's cloud node; darker = more of the hour allowed; hatched = an hour that does not occur.</text>`,
  );
  out.push("</svg>");
  return out.join("\n");
}

const BASE_STYLE = `
body { font-family: system-ui, sans-serif; margin: 24px; color: #1d2327; background: #fff; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #ccd; padding: 3px 8px; text-align: left; vertical-align: top; overflow-wrap: normal; word-break: normal; }`;

function page(title: string, body: string, style = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(title)}</title>
<style>${BASE_STYLE}${style}
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** The standalone HTML page of a weekly picture. */
export function renderPicturePage(p: WeeklyPicture): string {
  return page(
    `Access, week of ${p.weekStart}: ${p.title}`,
    `<h1>Access in the week of ${esc(p.weekStart)}: ${esc(p.title)}</h1>\n${renderPictureSvg(p)}`,
  );
}

// ---- The diff page ----

/** A UTC offset with a real minus sign: "−05:00". */
function offsetText(t: DateTime): string {
  return t.toFormat("ZZ").replace("-", "\u2212");
}

/** An instant in a zone (English names of days and months, whatever the machine's locale). */
function at(ms: number, zone: string): DateTime {
  return DateTime.fromMillis(ms, { zone, locale: "en-US" });
}

/** An instant as local time of `zone` with its offset, to the minute: "Wed 15 Apr 2026, 09:15 −05:00". */
export function localTime(ms: number, zone: string): string {
  const t = at(ms, zone);
  return `${t.toFormat("ccc d LLL yyyy, HH:mm")} ${offsetText(t)}`;
}

/** Days as "Mon 13, Tue 14 Apr, Fri 1 May 2026": the month after its last day, the year after its last month. */
function datesText(days: readonly DateTime[]): string {
  return days
    .map((d, i) => {
      const next = days[i + 1];
      const month = next === undefined || next.month !== d.month || next.year !== d.year;
      const year = next === undefined || next.year !== d.year;
      return d.toFormat(`ccc d${month ? " LLL" : ""}${year ? " yyyy" : ""}`);
    })
    .join(", ");
}

/** A line of local time: the days (or a whole span over midnight), then the times shared by those days. */
interface SpanLine {
  text: string;
  /** "18:00–19:30 −05:00": kept on one line in HTML (the en dash is otherwise a break opportunity). */
  times?: string;
}

/**
 * The spans of a change as lines of local time: spans at the same local times on several days
 * share one line ("Mon 13, Tue 14 Apr 2026, 18:00–19:30 −05:00"); a span over midnight has a line
 * of its own ("Sat 18 Apr 2026, 00:00 −05:00 → Mon 20 Apr 2026, 00:00 −05:00").
 */
function spanLines(spans: readonly TimeSpan[], zone: string): SpanLine[] {
  const sameTimes = new Map<string, DateTime[]>();
  const lines: (SpanLine | { times: string; days: DateTime[] })[] = [];
  for (const sp of spans) {
    const s = at(Date.parse(sp.start), zone);
    const e = at(Date.parse(sp.end), zone);
    const midnight = s.startOf("day").plus({ days: 1 });
    if (!s.hasSame(e, "day") && e.toMillis() !== midnight.toMillis()) {
      lines.push({ text: `${localTime(s.toMillis(), zone)} → ${localTime(e.toMillis(), zone)}` });
      continue;
    }
    const end = e.toMillis() === midnight.toMillis() ? "24:00" : e.toFormat("HH:mm");
    const [os, oe] = [offsetText(s), offsetText(e)];
    const times = os === oe ? `${s.toFormat("HH:mm")}–${end} ${os}` : `${s.toFormat("HH:mm")} ${os} – ${end} ${oe}`;
    let days = sameTimes.get(times);
    if (days === undefined) {
      sameTimes.set(times, (days = []));
      lines.push({ times, days });
    }
    days.push(s);
  }
  return lines.map((l) => ("days" in l ? { text: datesText(l.days), times: l.times } : l));
}

function lineText(l: SpanLine): string {
  return l.times === undefined ? l.text : `${l.text}, ${l.times}`;
}

function lineHtml(l: SpanLine): string {
  return l.times === undefined ? esc(l.text) : `${esc(l.text)}, <span class="nw">${esc(l.times)}</span>`;
}

/** Names and zones of what a diff names: from the system after, else before (a holder or door removed). */
class DiffNames {
  readonly #holders = new Map<string, string>();
  readonly #targets = new Map<string, { name: string; zone: string }>();
  readonly #rules = new Map<string, string | null>();
  readonly #before: ReadonlySet<string>;
  readonly #after: ReadonlySet<string>;
  /** The system's zone (after): the period's times are in it. */
  readonly zone: string;

  constructor(before: SystemSnapshot, after: SystemSnapshot) {
    this.zone = after.timezone;
    for (const s of [before, after]) {
      const nodes = new Map(s.cloudNodes.map((n) => [n.id, n.timezone]));
      const deviceZones = new Map<string, string>();
      for (const h of s.holders) this.#holders.set(h.id, `${h.firstName} ${h.lastName}`);
      for (const d of s.devices) {
        const zone = nodes.get(d.cloudNode) ?? s.timezone;
        deviceZones.set(d.id, zone);
        this.#targets.set(`d:${d.id}`, { name: d.name, zone });
      }
      for (const f of s.floorGroups)
        this.#targets.set(`f:${f.id}`, { name: f.name, zone: deviceZones.get(f.readerPort) ?? s.timezone });
      for (const r of s.rules) this.#rules.set(r.id, r.name);
    }
    this.#before = new Set(before.holders.map((h) => h.id));
    this.#after = new Set(after.holders.map((h) => h.id));
  }

  /** A holder's name, with its id as the tooltip, and whether it is new or removed. */
  holderHtml(id: string): string {
    const gone = !this.#after.has(id)
      ? " <small>(removed)</small>"
      : !this.#before.has(id)
        ? " <small>(new)</small>"
        : "";
    return `<span title="Holder ID: ${esc(id)}">${wordsHtml(this.#holders.get(id) ?? id)}</span>${gone}`;
  }

  /** The door or floor group of a change: its name (id as the tooltip) and the zone of its cloud node. */
  target(c: AccessChange): { html: string; zone: string } {
    const floor = c.deviceId === undefined;
    const id = c.deviceId ?? c.floorGroupId ?? "";
    const t = this.#targets.get(`${floor ? "f" : "d"}:${id}`);
    const what = floor ? "Floor group ID" : "Device ID";
    return {
      html: `<span title="${what}: ${esc(id)}">${wordsHtml(t?.name ?? id)}</span>${floor ? " <small>floor group</small>" : ""}`,
      zone: t?.zone ?? this.zone,
    };
  }

  /** Rules by name, the id as the tooltip (a rule without a name by its id); "none" for no rule. */
  rulesHtml(ids: readonly string[]): string {
    if (ids.length === 0) return '<span class="none">none</span>';
    return ids
      .map((id) => {
        const name = this.#rules.get(id);
        return name === null || name === undefined || name === ""
          ? `<span class="nw" title="Rule ID">${esc(id)}</span>`
          : `<span title="Rule ID: ${esc(id)}">${wordsHtml(name)}</span>`;
      })
      .join("<br>");
  }
}

/** A stretch of one day of a change picture, in local hours [from, to). */
interface Mark {
  day: number;
  from: number;
  to: number;
}

/** The parts of [start, end) in each local day of the week `days` of `zone`, as local hours. */
function dayMarks(start: number, end: number, zone: string, days: readonly PictureDay[]): Mark[] {
  const out: Mark[] = [];
  if (days.length === 0) return out;
  const first = DateTime.fromISO(days[0]!.date, { zone }).toMillis();
  const last = DateTime.fromISO(days[days.length - 1]!.date, { zone })
    .plus({ days: 1 })
    .toMillis();
  let t = Math.max(start, first);
  const stop = Math.min(end, last);
  while (t < stop) {
    const lt = DateTime.fromMillis(t, { zone });
    const midnight = lt.startOf("day").plus({ days: 1 }).toMillis();
    const e = Math.min(stop, midnight);
    const le = DateTime.fromMillis(e, { zone });
    const from = lt.hour + lt.minute / 60;
    // A part inside a fall-back day's repeated hour may end at an earlier wall time than it starts.
    const to = e === midnight ? 24 : le.hour + le.minute / 60;
    const day = days.findIndex((d) => d.date === lt.toISODate());
    if (day >= 0) out.push({ day, from: Math.min(from, to), to: Math.max(from, to) });
    t = e;
  }
  return out;
}

/** One row of a holder's change picture: the after shares of a door or floor group and the changed stretches. */
interface ChangeRow {
  id: string;
  label: string;
  idTitle: string;
  days: PictureDay[];
  cells: (number | null)[][];
  marks: { kind: "gained" | "lost" | "outside"; mark: Mark; title: string }[];
}

/** The change rows of one holder: a row per changed door or floor group the week's pictures show. */
function changeRows(
  holderId: string,
  changes: readonly AccessChange[],
  engines: { before: Engine; after: Engine },
  period: { from: number; to: number; weekOf: string },
): ChangeRow[] {
  const pictureOf = (e: Engine) =>
    e.snapshot.holders.some((h) => h.id === holderId) ? weeklyPicture(e, { holderId, weekOf: period.weekOf }) : null;
  const [after, before] = [pictureOf(engines.after), pictureOf(engines.before)];
  const rows: ChangeRow[] = [];
  for (const c of changes) {
    const kind = c.deviceId !== undefined ? "device" : "floorGroup";
    const id = c.deviceId ?? c.floorGroupId ?? "";
    const find = (p: WeeklyPicture | null) => p?.rows.find((r) => r.id === id && r.kind === kind);
    const a = find(after);
    const base = a ?? find(before);
    if (base === undefined) continue;
    const zone = base.timezone;
    const marks: ChangeRow["marks"] = [];
    const line = (sp: TimeSpan) => lineText(spanLines([sp], zone)[0]!);
    for (const [k, list] of [
      ["gained", c.gained],
      ["lost", c.lost],
    ] as const)
      for (const sp of list)
        for (const mark of dayMarks(Date.parse(sp.start), Date.parse(sp.end), zone, base.days))
          marks.push({ kind: k, mark, title: `${k === "gained" ? "Gained" : "Lost"}: ${line(sp)}` });
    for (const mark of [
      ...dayMarks(-8.64e15, period.from, zone, base.days),
      ...dayMarks(period.to, 8.64e15, zone, base.days),
    ])
      marks.push({ kind: "outside", mark, title: "Outside the compared period" });
    rows.push({
      id,
      label: base.label,
      idTitle: `${kind === "device" ? "Device ID" : "Floor group ID"}: ${id}`,
      days: base.days,
      // Absent after (holder or door removed): nothing is allowed after.
      cells: a?.cells ?? base.cells.map((d) => d.map((v) => (v === null ? null : 0))),
      marks,
    });
  }
  return rows;
}

const WEEKDAY_NAMES: Readonly<Record<string, string>> = {
  Mon: "Monday",
  Tue: "Tuesday",
  Wed: "Wednesday",
  Thu: "Thursday",
  Fri: "Friday",
  Sat: "Saturday",
  Sun: "Sunday",
};

/** The day headings of a change picture: "Mon 13 Apr", the full date and UTC offset as the tooltip, DST days marked. */
function changeHeadings(days: readonly PictureDay[], rowCount: number): string[] {
  const out: string[] = [];
  days.forEach((day, d) => {
    const x = LABEL_W + d * (DAY_W + DAY_GAP);
    const date = DateTime.fromISO(day.date, { locale: "en-US" });
    const [os, oe] = [day.offsetStart, day.offsetEnd].map((o) => o.replace("-", "\u2212"));
    out.push(
      `<text x="${x}" y="14" font-weight="600"><title>${WEEKDAY_NAMES[day.weekday] ?? day.weekday} ${date.toFormat("d LLLL yyyy")}, UTC offset ${os}${os === oe ? "" : ` then ${oe}`}</title>${day.weekday} ${date.toFormat("d LLL")}</text>`,
    );
    if (day.dst)
      out.push(
        `<text class="dst" x="${x}" y="27" fill="#b35c00" font-weight="600" font-size="9"><title>Daylight saving time: clocks change this day, which has ${day.hours} hours (UTC offset ${os} → ${oe})</title>DST: ${day.hours} h</text>`,
        `<rect x="${x - 2}" y="31" width="${DAY_W + 4}" height="${Math.max(1, rowCount) * ROW_H + 8}" fill="none" stroke="#b35c00" stroke-dasharray="3 2"/>`,
      );
    out.push(...calendarMark([day], x));
    for (const hr of [0, 6, 12, 18])
      out.push(`<text x="${x + hr * CELL_W}" y="${HEAD_H - 4}" fill="#666" font-size="9">${hr}</text>`);
  });
  return out;
}

/**
 * A day's calendar mark (docs/semantics.md C4): at the right of its heading, "holiday" when a
 * calendar of the rules shown closes them that day, "calendar day" when it is one an `only` rule
 * opens on; the calendars, by name, id and mode, as its tooltip. None when no calendar holds the day.
 */
function calendarMark(days: readonly (PictureDay | undefined)[], x: number): string[] {
  const seen = new Map<string, NonNullable<PictureDay["calendars"]>[number]>();
  for (const day of days) for (const c of day?.calendars ?? []) seen.set(`${c.id}\u0000${c.mode}`, c);
  if (seen.size === 0) return [];
  const list = [...seen.values()];
  const label = list.some((c) => c.mode === "exclude") ? "holiday" : "calendar day";
  const title = list.map((c) => `${c.name} (${c.id}): ${c.mode === "exclude" ? "closes" : "alone opens"} its rules`);
  return [
    `<text class="calendar-day" x="${x + DAY_W}" y="14" text-anchor="end" fill="#7a3db8" font-weight="600" font-size="9"><title>${esc(`Calendar day: ${title.join("; ")}`)}</title>${label}</text>`,
  ];
}

/** The fill of a run: the two commonest shades by class (a page of many rows has mostly these), else its colour. */
function runFill(v: number | null, id: string): string {
  return v === null
    ? ` fill="url(#${esc(id)}-skipped)"`
    : v === 0
      ? ' class="n"'
      : v === 1
        ? ' class="a"'
        : ` fill="${shade(v)}"`;
}

/**
 * One row of a change picture, moved to its place: the after shares as runs of equal hours (the
 * page grows with the runs, not with 168 cells a row), then the changed stretches over them.
 */
function changeRowSvg(row: ChangeRow, i: number, id: string): string {
  const h = ROW_H - 3;
  const out = [
    `<g class="row" data-id="${esc(row.id)}" transform="translate(0,${HEAD_H + i * ROW_H})"><text x="4" y="12"><title>${esc(row.idTitle)}</title>${esc(row.label.length > 34 ? `${row.label.slice(0, 33)}…` : row.label)}</text><g transform="translate(0,2)">`,
  ];
  for (let d = 0; d < 7; d++) {
    const x0 = LABEL_W + d * (DAY_W + DAY_GAP);
    const hours = row.cells[d] ?? [];
    for (let hr = 0; hr < 24; ) {
      const v = hours[hr] ?? 0;
      let n = 1;
      while (hr + n < 24 && (hours[hr + n] ?? 0) === v) n++;
      out.push(`<rect x="${x0 + hr * CELL_W}" width="${n * CELL_W - 1}" height="${h}"${runFill(v, id)}/>`);
      hr += n;
    }
  }
  for (const m of row.marks) {
    const x = LABEL_W + m.mark.day * (DAY_W + DAY_GAP) + m.mark.from * CELL_W;
    const w = Math.max(1, (m.mark.to - m.mark.from) * CELL_W);
    out.push(
      `<rect class="${m.kind}" x="${+x.toFixed(1)}" width="${+w.toFixed(1)}" height="${h}"><title>${esc(m.title)}</title></rect>`,
    );
  }
  out.push("</g></g>");
  return out.join("");
}

/** The SVG of one holder's changes: a row per changed door or floor group, a week in each door's local time. */
function renderChangeSvg(rows: readonly ChangeRow[], id: string): string {
  const width = LABEL_W + 7 * (DAY_W + DAY_GAP);
  const height = HEAD_H + Math.max(1, rows.length) * ROW_H + 6;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" id="${esc(id)}" class="picture" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="11">`,
    `<defs><pattern id="${esc(id)}-skipped" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="4" height="4" fill="#fff"/><line x1="0" y1="0" x2="0" y2="4" stroke="#bbb" stroke-width="2"/></pattern></defs>`,
    ...changeHeadings(rows[0]?.days ?? [], rows.length),
    ...rows.map((r, i) => changeRowSvg(r, i, id)),
    "</svg>",
  ].join("\n");
}

/** The table of every change, grouped by holder: door or floor group, gained and lost local times, deciding rules. */
function changeTable(changes: readonly AccessChange[], names: DiffNames): string {
  const out = [
    '<table class="changes"><thead><tr><th>Holder</th><th>Door or floor group</th><th>Gained</th><th>Lost</th><th>Deciding rules before</th><th>Deciding rules after</th></tr></thead><tbody>',
  ];
  const spans = (list: readonly TimeSpan[], kind: string, zone: string) =>
    list.length === 0 ? "<td></td>" : `<td class="${kind}">${spanLines(list, zone).map(lineHtml).join("<br>")}</td>`;
  for (let i = 0; i < changes.length; ) {
    const holderId = changes[i]!.holderId;
    let j = i;
    while (j < changes.length && changes[j]!.holderId === holderId) j++;
    for (let k = i; k < j; k++) {
      const c = changes[k]!;
      const t = names.target(c);
      const holder = k === i ? `<th scope="rowgroup" rowspan="${j - i}">${names.holderHtml(holderId)}</th>` : "";
      out.push(
        `<tr>${holder}<td>${t.html}</td>${spans(c.gained, "gained", t.zone)}${spans(c.lost, "lost", t.zone)}<td>${names.rulesHtml(c.rulesBefore)}</td><td>${names.rulesHtml(c.rulesAfter)}</td></tr>`,
      );
    }
    i = j;
  }
  out.push("</tbody></table>");
  return out.join("\n");
}

const DIFF_STYLE = `
tbody th { font-weight: normal; background: #f6f8fa; }
small, .none { color: #666; }
.nw { white-space: nowrap; }
rect.gained, .sw.gained { fill: #0969da; background: #0969da; }
rect.lost, .sw.lost { fill: #cf222e; background: #cf222e; }
rect.outside { fill: #fff; fill-opacity: 0.75; }
rect.n { fill: rgb(236,239,241); } rect.a { fill: rgb(26,127,55); }
td.gained { background: #ddf4ff; box-shadow: inset 4px 0 #0969da; }
td.lost { background: #ffebe9; box-shadow: inset 4px 0 #cf222e; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 13px; }
.sw { display: inline-block; width: 18px; height: 11px; border: 1px solid #999; vertical-align: -1px; margin-right: 4px; }
.sw.allowed { background: rgb(26,127,55); } .sw.part { background: rgb(131,183,148); } .sw.not { background: rgb(236,239,241); }
.sw.outside { background: #f4f5f6; border-style: dashed; }
.sw.skipped { background: repeating-linear-gradient(45deg, #fff 0 2px, #bbb 2px 4px); }`;

/** The legend of the change pictures and the table's colours. */
const LEGEND = `<p class="legend"><span><span class="sw allowed"></span>allowed, unchanged</span><span><span class="sw part"></span>part of the hour allowed</span><span><span class="sw not"></span>not allowed</span><span><span class="sw gained"></span>gained: allowed after, not before</span><span><span class="sw lost"></span>lost: allowed before, not after</span><span><span class="sw outside"></span>outside the compared period</span><span><span class="sw skipped"></span>an hour that does not occur (clocks jump forward)</span></p>`;

/** How many holders the diff page draws pictures for (the table lists every change). */
const PICTURED_HOLDERS = 8;

/** The heading and summary of a diff page: the period in the system's local time, the counts. */
function diffHeading(diff: AccessDiff, names: DiffNames, holders: number): string[] {
  const time = (iso: string) =>
    `<time datetime="${esc(iso)}" title="${esc(iso.replace(".000Z", "Z"))} (UTC)">${esc(localTime(Date.parse(iso), names.zone))}</time>`;
  const targets = new Set(
    diff.changes.map((c) => (c.deviceId !== undefined ? `d:${c.deviceId}` : `f:${c.floorGroupId}`)),
  );
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return [
    `<h1>Access changes from ${time(diff.from)} to ${time(diff.to)}</h1>`,
    `<p>${plural(diff.changes.length, "change", "changes")} for ${plural(holders, "holder", "holders")} at ${plural(targets.size, "door or floor group", "doors or floor groups")}. The period is in the system's time zone (${esc(names.zone)}); every other time is local to the door's cloud node, with its UTC offset.</p>`,
  ];
}

/**
 * The standalone HTML page of a diff: the period and counts, a picture per holder (the first
 * PICTURED_HOLDERS) of what changed in the week of `from` (the after state of each changed door or
 * floor group, gained and lost time marked over it), then a table of every change, by name, in local
 * time. Its size: see docs/cli.md (Explain, diff and picture).
 */
export function renderDiffPage(diff: AccessDiff, before: Engine, after: Engine): string {
  const names = new DiffNames(before.snapshot, after.snapshot);
  const all = [...new Set(diff.changes.map((c) => c.holderId))];
  const parts = diffHeading(diff, names, all.length);
  const pictured = all.slice(0, PICTURED_HOLDERS);
  const period = { from: Date.parse(diff.from), to: Date.parse(diff.to), weekOf: diff.from };
  if (pictured.length > 0) {
    parts.push(
      `<p>Pictures of ${pictured.length === all.length ? "each holder" : `the first ${pictured.length} of ${all.length} holders`}: the week of ${esc(localTime(period.from, names.zone).replace(/,.*/, ""))}, a row per door or floor group whose access changed, in the local hours of its cloud node; the table lists every change.</p>`,
      LEGEND,
    );
  }
  pictured.forEach((h, i) => {
    parts.push(`<h2>${names.holderHtml(h)}</h2>`);
    const rows = changeRows(
      h,
      diff.changes.filter((c) => c.holderId === h),
      { before, after },
      period,
    );
    parts.push(rows.length > 0 ? renderChangeSvg(rows, `change-${i}`) : "<p>No door of this holder to picture.</p>");
  });
  if (diff.changes.length > 0) parts.push("<h2>Every change</h2>", changeTable(diff.changes, names));
  return page(
    `Access changes from ${localTime(period.from, names.zone)} to ${localTime(period.to, names.zone)}`,
    parts.join("\n"),
    DIFF_STYLE,
  );
}
