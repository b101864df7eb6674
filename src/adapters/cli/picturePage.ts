// Standalone HTML pages (no script, no external resource): the weekly access picture as an SVG heat
// map, and the diff page (the changes, and before/after pictures of the holders they touch).
import {
  type AccessDiff,
  type Engine,
  type PictureRow,
  type WeeklyPicture,
  weeklyPicture,
} from "../../evaluate/index.js";

const LABEL_W = 230;
const CELL_W = 6;
const DAY_GAP = 6;
const DAY_W = 24 * CELL_W;
const ROW_H = 16;
const HEAD_H = 44;

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

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

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(title)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 24px; color: #1d2327; background: #fff; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #ccd; padding: 3px 8px; text-align: left; vertical-align: top; }
.gained { color: #1a7f37; } .lost { color: #b42318; }
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

/** How many holders the diff page draws before/after pictures for (the table lists every change). */
const PICTURED_HOLDERS = 8;

/** The standalone HTML page of a diff: before/after pictures of the holders it touches (the rows that changed), then a table of every change. */
export function renderDiffPage(diff: AccessDiff, before: Engine, after: Engine): string {
  const parts: string[] = [
    `<h1>Access changes from ${esc(diff.from)} to ${esc(diff.to)}</h1>`,
    `<p>${diff.changes.length} change${diff.changes.length === 1 ? "" : "s"}.</p>`,
  ];
  const all = [...new Set(diff.changes.map((c) => c.holderId))];
  const holders = all.slice(0, PICTURED_HOLDERS);
  if (all.length > holders.length)
    parts.push(
      `<p>Pictures of the first ${holders.length} of ${all.length} holders (the table lists every change).</p>`,
    );
  holders.forEach((h, i) => {
    const changed = new Set(diff.changes.filter((c) => c.holderId === h).map((c) => c.deviceId ?? c.floorGroupId));
    parts.push(`<h2>${esc(h)}</h2>`);
    for (const [side, engine] of [
      ["before", before],
      ["after", after],
    ] as const) {
      if (!engine.snapshot.holders.some((x) => x.id === h)) {
        parts.push(`<p>${side}: no such holder.</p>`);
        continue;
      }
      const p = weeklyPicture(engine, { holderId: h, weekOf: diff.from });
      parts.push(
        `<h3>${side}</h3>`,
        renderPictureSvg({ ...p, rows: p.rows.filter((r) => changed.has(r.id)) }, `${side}-${i}`, false),
      );
    }
  });
  if (diff.changes.length > 0) {
    parts.push("<h2>Every change</h2>");
    parts.push(
      "<table><tr><th>Holder</th><th>Door or floor group</th><th>Gained</th><th>Lost</th><th>Rules before</th><th>Rules after</th></tr>",
    );
    for (const c of diff.changes)
      parts.push(
        `<tr><td>${esc(c.holderId)}</td><td>${esc(c.deviceId ?? `floor group ${c.floorGroupId}`)}</td><td class="gained">${c.gained.map((s) => `${esc(s.start)} → ${esc(s.end)}`).join("<br>")}</td><td class="lost">${c.lost.map((s) => `${esc(s.start)} → ${esc(s.end)}`).join("<br>")}</td><td>${esc(c.rulesBefore.join(", "))}</td><td>${esc(c.rulesAfter.join(", "))}</td></tr>`,
      );
    parts.push("</table>");
  }
  return page(`Access changes from ${diff.from} to ${diff.to}`, parts.join("\n"));
}
