// The weekly picture and the diff page in a real browser: headless Chromium (Debian's `chromium`,
// which `.ci/run` installs when missing) renders each page to a PNG and dumps its DOM; the
// screenshot must not be blank (it has the grid's colours) and the SVG must hold the expected cells.
// Where no Chromium can run, the tests skip and say why.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { afterAll, expect, test } from "vitest";
import { diffAccess, loadEngineOrThrow, weeklyPicture } from "../../src/evaluate/index.js";
import { renderDiffPage, renderPicturePage } from "../../src/adapters/cli/picturePage.js";
import { BUILDING_JSON, building } from "../http/fixtures.js";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--hide-scrollbars",
  "--no-first-run",
];

/** The Chromium binary, or why there is none that runs. */
function findChromium(): { bin: string } | { why: string } {
  const env = process.env.RSOP_CHROMIUM;
  for (const bin of env !== undefined && env !== "" ? [env] : ["chromium", "chromium-browser", "google-chrome"]) {
    const r = spawnSync(bin, ["--version"], { encoding: "utf8", timeout: 30_000 });
    if (r.status === 0) return { bin };
  }
  return {
    why: "no headless Chromium found (RSOP_CHROMIUM, else chromium, chromium-browser, google-chrome): install Debian's chromium (apt-get install -y chromium; .ci/run does) to run the browser tests",
  };
}

const chromium = findChromium();
const dir = mkdtempSync(join(tmpdir(), "rsop-browser-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function browse(page: string, args: string[]): string {
  const bin = (chromium as { bin: string }).bin;
  const r = spawnSync(
    bin,
    [
      ...FLAGS,
      `--user-data-dir=${join(dir, `profile-${Math.random().toString(36).slice(2)}`)}`,
      ...args,
      `file://${page}`,
    ],
    { encoding: "utf8", timeout: 120_000, maxBuffer: 64 << 20 },
  );
  if (r.status !== 0) throw new Error(`chromium exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** The RGB pixels of an 8-bit RGB or RGBA PNG (what Chromium writes), un-filtered. */
function pngPixels(file: string): {
  width: number;
  height: number;
  rgb: (x: number, y: number) => [number, number, number];
} {
  const buf = readFileSync(file);
  expect(buf.subarray(1, 4).toString("latin1")).toBe("PNG");
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.subarray(pos + 4, pos + 8).toString("latin1");
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect(data[8], "8-bit channels").toBe(8);
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0;
      expect(channels, "RGB or RGBA").toBeGreaterThan(0);
    } else if (type === "IDAT") idat.push(data);
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)]!;
    for (let i = 0; i < stride; i++) {
      const x = raw[y * (stride + 1) + 1 + i]!;
      const a = i >= channels ? out[y * stride + i - channels]! : 0;
      const b = y > 0 ? out[(y - 1) * stride + i]! : 0;
      const c = i >= channels && y > 0 ? out[(y - 1) * stride + i - channels]! : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      out[y * stride + i] = (x + [0, a, b, (a + b) >> 1, paeth][f]!) & 255;
    }
  }
  return {
    width,
    height,
    rgb: (x, y) => [
      out[y * stride + x * channels]!,
      out[y * stride + x * channels + 1]!,
      out[y * stride + x * channels + 2]!,
    ],
  };
}

/** Renders a page; returns its DOM after rendering and facts about its screenshot. */
function render(
  name: string,
  html: string,
): { dom: string; colours: number; green: number; width: number; height: number } {
  const page = join(dir, `${name}.html`);
  writeFileSync(page, html);
  const png = join(dir, `${name}.png`);
  browse(page, ["--window-size=1400,1000", `--screenshot=${png}`]);
  const dom = browse(page, ["--dump-dom"]);
  const img = pngPixels(png);
  const colours = new Set<string>();
  let green = 0;
  for (let y = 0; y < img.height; y += 2)
    for (let x = 0; x < img.width; x += 2) {
      const [r, g, b] = img.rgb(x, y);
      colours.add(`${r >> 3},${g >> 3},${b >> 3}`);
      if (g > r + 60 && g > b + 40) green++;
    }
  return { dom, colours: colours.size, green, width: img.width, height: img.height };
}

const why = "why" in chromium ? chromium.why : null;

test(`the weekly picture renders in headless Chromium: not blank, one SVG cell per row × 7 days × 24 hours${why === null ? "" : ` (skipped: ${why})`}`, (ctx) => {
  if (why !== null) return ctx.skip(why);
  const picture = weeklyPicture(building, { holderId: "holder-0001", weekOf: "2026-03-08" });
  const r = render("picture", renderPicturePage(picture));
  expect([r.width, r.height]).toEqual([1400, 1000]);
  expect(r.colours, "a blank screenshot has one or two colours").toBeGreaterThan(8);
  expect(r.green, "allowed hours are drawn green").toBeGreaterThan(500);
  const cells = r.dom.match(/<rect class="cell"/g) ?? [];
  expect(cells).toHaveLength(picture.rows.length * 7 * 24);
  expect(r.dom).toContain("DST: 23 h");
}, 300_000);

test(`the diff page renders in headless Chromium with a picture of each holder's changes${why === null ? "" : ` (skipped: ${why})`}`, (ctx) => {
  if (why !== null) return ctx.skip(why);
  const b = JSON.parse(JSON.stringify(BUILDING_JSON)) as { rules: Record<string, unknown>[] };
  b.rules.find((x) => x.id === "rule-nurses-day-weekdays")!.stopTime = "18:00:00";
  const after = loadEngineOrThrow(b);
  const diff = diffAccess(building, after, { from: "2026-04-13T05:00:00Z", to: "2026-04-20T05:00:00Z" });
  const r = render("diff", renderDiffPage(diff, building, after));
  expect(r.colours).toBeGreaterThan(8);
  expect(r.green).toBeGreaterThan(100);
  // The first holder's picture: a row per changed door or floor group, its lost 18:00–19:30 marked on each weekday.
  const svg = /<svg[^>]*id="change-0"[\s\S]*?<\/svg>/.exec(r.dom)?.[0] ?? "";
  const changedRows = new Set(
    diff.changes.filter((c) => c.holderId === diff.changes[0]!.holderId).map((c) => c.deviceId ?? c.floorGroupId),
  ).size;
  expect((svg.match(/<g class="row"/g) ?? []).length, "a row per changed door or floor group").toBe(changedRows);
  expect((svg.match(/<rect class="lost"/g) ?? []).length, "the lost time of each weekday").toBe(changedRows * 5);
  expect((svg.match(/<rect class="gained"/g) ?? []).length).toBe(0);
}, 300_000);
