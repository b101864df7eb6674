// The diff page (`rsop diff --format html --out`) and the report's HTML export (`rsop report
// --format html --out`) judged as a reader sees them, in headless Chromium (Debian's, through
// playwright-core): names instead of ids (the ids in tooltips), local times with their UTC offset,
// changes highlighted with a legend, no word broken inside a value, headers as words, custom fields
// as a list, and the diff page within its stated size (docs/cli.md, "Explain, diff and picture").
// Screenshots go to a temp dir, removed at the end; nothing is printed.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, type Page, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type AccessDiff, diffAccess, loadEngineOrThrow } from "../../src/evaluate/index.js";
import { BUILDING_FILE, BUILDING_JSON, building } from "../http/fixtures.js";
import { reportSystemInput } from "../reports/fixture.js";
import { run, tempFiles } from "./cliHarness.js";

const CHROMIUM = "/usr/bin/chromium";
const { dir, file } = tempFiles("rsop-readable-");
const shots = mkdtempSync(join(tmpdir(), "rsop-readable-shots-"));
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    timeout: 30_000,
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  rmSync(shots, { recursive: true, force: true });
});

async function open(path: string, width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.setDefaultTimeout(20_000);
  await page.goto(pathToFileURL(path).href);
  await page.screenshot({ path: join(shots, `${path.split("/").at(-1)}.png`), fullPage: true });
  return page;
}

/** The little of the browser's DOM the checks use (the project compiles without the DOM library). */
interface DomNode {
  textContent: string | null;
}
interface DomElement extends DomNode {
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
}
interface DomWindow {
  document: DomElement & {
    createTreeWalker(root: DomElement, show: number): { nextNode(): DomNode | null };
    createRange(): {
      setStart(node: DomNode, offset: number): void;
      setEnd(node: DomNode, offset: number): void;
      getClientRects(): Iterable<{ top: number; width: number }>;
    };
  };
  getComputedStyle(e: DomElement): { fill: string; backgroundColor: string };
}

/** NodeFilter.SHOW_TEXT. */
const SHOW_TEXT = 4;

/**
 * The words (runs of non-blank characters) of the cells matching `selector` that the browser laid
 * out over more than one line: a Range over each word, whose client rects must all sit on one line.
 */
function brokenWords(page: Page, selector: string): Promise<string[]> {
  return page.evaluate(
    ({ sel, show }) => {
      const { document } = globalThis as unknown as DomWindow;
      const broken: string[] = [];
      for (const cell of document.querySelectorAll(sel)) {
        const walker = document.createTreeWalker(cell, show);
        for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
          for (const m of (n.textContent ?? "").matchAll(/\S+/g)) {
            const range = document.createRange();
            range.setStart(n, m.index ?? 0);
            range.setEnd(n, (m.index ?? 0) + m[0].length);
            const tops = [...range.getClientRects()].filter((r) => r.width > 0).map((r) => r.top);
            if (tops.length > 1 && Math.max(...tops) - Math.min(...tops) > 4) broken.push(m[0]);
          }
        }
      }
      return broken;
    },
    { sel: selector, show: SHOW_TEXT },
  );
}

/**
 * The stated bound of the diff page (docs/cli.md): 8 KB, 3 KB per pictured holder, 3 KB per pictured
 * row, 0.5 KB per change, 16 B per interval.
 */
function diffPageBound(pictured: { holders: number; rows: number }, diff: AccessDiff): number {
  const intervals = diff.changes.reduce((n, c) => n + c.gained.length + c.lost.length, 0);
  return 8 * 1024 + 3 * 1024 * (pictured.holders + pictured.rows) + 512 * diff.changes.length + 16 * intervals;
}

describe.skipIf(!existsSync(CHROMIUM))("readable pages in headless Chromium", () => {
  // The nurses' weekday rule opens an hour earlier (gained 05:30–06:30) and closes at 18:00 (lost
  // 18:00–19:30); the London staff close at 17:00 (lost 17:00–18:00 London summer time, +01:00).
  const afterJson = JSON.parse(JSON.stringify(BUILDING_JSON)) as { rules: Record<string, unknown>[] };
  const rule = (id: string) => afterJson.rules.find((r) => r.id === id)!;
  rule("rule-nurses-day-weekdays").startTime = "05:30:00";
  rule("rule-nurses-day-weekdays").stopTime = "18:00:00";
  rule("rule-london-staff-weekdays").stopTime = "17:00:00";
  // Tuesday 00:00 Chicago to the next Tuesday: the pictured week's Monday lies outside the period.
  const period = { from: "2026-04-14T05:00:00Z", to: "2026-04-21T05:00:00Z" };

  test("X9: the diff page names holders and doors, shows local times with offsets, marks what changed, and stays within its stated size", async () => {
    const out = join(dir, "diff.html");
    const afterFile = file("after.json", afterJson);
    const args = ["diff", "--before", BUILDING_FILE, "--after", afterFile, "--from", period.from, "--to", period.to];
    const r = await run([...args, "--format", "html", "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, "utf8");
    const diff = diffAccess(building, loadEngineOrThrow(afterJson), period);
    const page = await open(out, 1400);

    // Holders by name, the id in the tooltip; doors and rules by name, ids in tooltips.
    const headings = await page
      .locator("h2 > span[title]")
      .evaluateAll((els) => els.map((e) => ({ text: e.textContent, title: e.getAttribute("title") })));
    expect(headings[0]).toEqual({ text: "Maria Alvarez", title: "Holder ID: holder-0001" });
    expect(headings.length).toBe(8);
    const holderCells = await page.locator("table.changes tbody th").allTextContents();
    expect(holderCells.length).toBe(new Set(diff.changes.map((c) => c.holderId)).size);
    expect(holderCells.filter((t) => /holder-\d/.test(t))).toEqual([]);
    const ward3 = page.locator('table.changes td span[title="Device ID: door-ward-3"]').first();
    expect(await ward3.textContent()).toBe("Ward 3 (Medical)");
    expect(await page.locator('span[title="Rule ID: rule-nurses-day-weekdays"]').first().textContent()).toBe(
      "Nurses: wards and entrances, weekday day shift",
    );
    const rowLabels = await page
      .locator("#change-0 g.row > text")
      .evaluateAll((els) => els.map((e) => [e.querySelector("title")?.textContent, e.lastChild?.textContent]));
    expect(rowLabels).toContainEqual(["Device ID: door-ward-3", "Ward 3 (Medical)"]);

    // Local time of the system (the period) and of each door's cloud node, with the UTC offset, to the minute.
    expect(await page.locator("h1").textContent()).toBe(
      "Access changes from Tue 14 Apr 2026, 00:00 \u221205:00 to Tue 21 Apr 2026, 00:00 \u221205:00",
    );
    const text = await page.locator("body").textContent();
    expect(text).not.toMatch(/\d{2}:\d{2}:\d{2}|\.\d{3}Z|T\d{2}:\d{2}/);
    const maria = page
      .locator("table.changes tr", { has: page.locator('span[title="Device ID: door-ward-3"]') })
      .first();
    expect(await maria.locator("td.gained").textContent()).toBe(
      "Tue 14, Wed 15, Thu 16, Fri 17, Mon 20 Apr 2026, 05:30\u201306:30 \u221205:00",
    );
    expect(await maria.locator("td.lost").textContent()).toBe(
      "Tue 14, Wed 15, Thu 16, Fri 17, Mon 20 Apr 2026, 18:00\u201319:30 \u221205:00",
    );
    const london = await page.locator("table.changes td.lost").allTextContents();
    expect(london).toContain("Tue 14, Wed 15, Thu 16, Fri 17, Mon 20 Apr 2026, 17:00\u201318:00 +01:00");

    // What changed is marked, in a colour of its own, and the legend says which.
    const styles = await page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as unknown as DomWindow;
      const fill = (sel: string) => {
        const el = document.querySelector(sel);
        return el === null ? null : getComputedStyle(el).fill;
      };
      const bg = (sel: string) => {
        const el = document.querySelector(sel);
        return el === null ? null : getComputedStyle(el).backgroundColor;
      };
      return {
        gained: fill("#change-0 rect.gained"),
        lost: fill("#change-0 rect.lost"),
        outside: fill("#change-0 rect.outside"),
        unchanged: fill("#change-0 g.row rect.a"),
        notAllowed: fill("#change-0 g.row rect.n"),
        gainedCell: bg("table.changes td.gained"),
        lostCell: bg("table.changes td.lost"),
        plainCell: bg("table.changes td:not([class])"),
        legend: [...document.querySelectorAll(".legend > span")].map((e) => e.textContent),
      };
    });
    expect(styles.gained).not.toBeNull();
    expect(styles.lost).not.toBeNull();
    expect(styles.outside).not.toBeNull();
    expect(new Set([styles.gained, styles.lost, styles.unchanged, styles.notAllowed]).size).toBe(4);
    expect(new Set([styles.gainedCell, styles.lostCell, styles.plainCell]).size).toBe(3);
    expect(styles.legend).toEqual(
      expect.arrayContaining(["gained: allowed after, not before", "lost: allowed before, not after"]),
    );
    const markTitle = await page.locator("#change-0 rect.lost title").first().textContent();
    expect(markTitle).toMatch(/^Lost: \w{3} \d{1,2} Apr 2026, \d{2}:\d{2}\u2013\d{2}:\d{2} [\u2212+]\d{2}:\d{2}$/);

    // Lines break only at spaces.
    expect(await brokenWords(page, "td, tbody th")).toEqual([]);

    // Within the stated bound; the rows pictured are the changed doors of the first 8 holders.
    const rows = await page.locator("svg g.row").count();
    expect(rows).toBe(
      new Set(
        diff.changes
          .filter((c) => [...new Set(diff.changes.map((x) => x.holderId))].slice(0, 8).includes(c.holderId))
          .map((c) => `${c.holderId} ${c.deviceId ?? c.floorGroupId}`),
      ).size,
    );
    const holders = await page.locator("svg.picture").count();
    expect(holders).toBe(8);
    expect(Buffer.byteLength(html)).toBeLessThanOrEqual(diffPageBound({ holders, rows }, diff));
    await page.close();
  }, 120_000);

  test("RP7: the report page has headers as words (keys in tooltips), custom fields as a list, and no word broken inside a value", async () => {
    const system = reportSystemInput();
    // Values a narrow column used to split: hyphenated ids and names, a long e-mail address.
    system.holders[1].firstName = "Anne-Marie";
    system.holders[1].email = "anne-marie.very-long-address@hospital-example.org";
    system.holders[0].customFields = { badge: "B-1" };
    const out = join(dir, "holders.html");
    const r = await run(["report", "--system", file("system.json", system), "--format", "html", "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const page = await open(out, 700);

    const headers = await page
      .locator("thead th")
      .evaluateAll((els) => els.map((e) => [e.textContent, e.getAttribute("title")]));
    expect(headers).toContainEqual(["First name", "API key: firstName"]);
    expect(headers).toContainEqual(["Duress PIN", "API key: duressPin"]);
    expect(headers).toContainEqual(["Custom fields", "API key: customFields"]);
    expect(headers.filter(([t]) => /[a-z][A-Z]/.test(t ?? ""))).toEqual([]);

    const column = headers.findIndex(([, t]) => t === "API key: customFields");
    const ann = page.locator("tbody tr", { has: page.locator("td", { hasText: "ann.lee@example.com" }) });
    const custom = ann.locator("td").nth(column);
    expect(await custom.locator("li").allTextContents()).toEqual(["badge: B-1"]);
    expect(await custom.textContent()).not.toMatch(/[{}"]/);
    expect(await page.locator("tbody").textContent()).not.toContain("{");

    expect(await brokenWords(page, "tbody td")).toEqual([]);
    // The check sees a broken word: the same page with words allowed to break anywhere has some.
    await page.addStyleTag({
      content:
        "td { word-break: break-all; } .nw { white-space: normal; } .scroll { overflow: visible; } table { width: 300px; }",
    });
    expect((await brokenWords(page, "tbody td")).length).toBeGreaterThan(0);
    await page.close();
  }, 120_000);
});
