// `rsop diff`: who gains or loses what between two snapshots (diffAccess), as text, JSON or HTML.
import { type Command, Option } from "commander";
import { type AccessChange, type AccessDiff, type Engine, diffAccess } from "../../evaluate/index.js";
import { QueryError, parseInstant } from "../../model/index.js";
import { type CliIo, UsageError, queryRefusal, writeTextFile } from "./io.js";
import { loadSystemFile } from "./loadSystem.js";
import { renderDiffPage } from "./picturePage.js";
import { instant } from "./queryCommands.js";

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

function duration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h === 0 ? `${m} min` : m === 0 ? `${h} h` : `${h} h ${m} min`;
}

function total(spans: readonly { start: string; end: string }[]): number {
  return spans.reduce((n, s) => n + Date.parse(s.end) - Date.parse(s.start), 0);
}

function target(c: AccessChange): string {
  return c.deviceId !== undefined ? c.deviceId : `floor group ${c.floorGroupId}`;
}

function changeLine(c: AccessChange, what: string): string[] {
  const g = total(c.gained);
  const l = total(c.lost);
  const parts = [g > 0 ? `+${duration(g)}` : "", l > 0 ? `−${duration(l)}` : ""].filter((s) => s !== "").join(", ");
  const lines = [
    `    ${what}: ${parts}   (rules before: ${c.rulesBefore.join(", ") || "none"}; after: ${c.rulesAfter.join(", ") || "none"})`,
  ];
  for (const s of c.gained) lines.push(`      + ${s.start} → ${s.end}`);
  for (const s of c.lost) lines.push(`      − ${s.start} → ${s.end}`);
  return lines;
}

/** The diff as text: a summary, then the changes grouped by holder, then a count per door or floor group. */
export function formatDiffText(diff: AccessDiff, after: Engine): string {
  const names = new Map(after.snapshot.holders.map((h) => [h.id, `${h.firstName} ${h.lastName}`]));
  const holders = [...new Set(diff.changes.map((c) => c.holderId))];
  const targets = [...new Set(diff.changes.map(target))].sort();
  const lines = [
    `Access from ${diff.from} to ${diff.to}: ${diff.changes.length} change${diff.changes.length === 1 ? "" : "s"} for ${holders.length} holder${holders.length === 1 ? "" : "s"} at ${targets.length} door${targets.length === 1 ? "" : "s"} or floor groups.`,
  ];
  if (diff.changes.length === 0) return `${lines[0]}\n`;
  lines.push("", "By holder:");
  for (const h of holders) {
    lines.push(`  ${h}${names.has(h) ? ` (${names.get(h)})` : " (removed)"}`);
    for (const c of diff.changes) if (c.holderId === h) lines.push(...changeLine(c, target(c)));
  }
  lines.push("", "By door or floor group:");
  for (const t of targets) {
    const here = diff.changes.filter((c) => target(c) === t);
    const gain = here.filter((c) => c.gained.length > 0).length;
    const lose = here.filter((c) => c.lost.length > 0).length;
    lines.push(`  ${t}: ${gain} holder${gain === 1 ? "" : "s"} gain time, ${lose} lose time`);
  }
  return `${lines.join("\n")}\n`;
}

/** Registers `rsop diff`. */
export function registerDiffCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("diff")
    .description(
      "Who gains or loses access between two snapshots over a period (default: the coming week): per holder and door or floor group, the gained and lost intervals and the rules responsible.",
    )
    .requiredOption("--before <file>", "the system as it is (rsop-system/1 JSON)")
    .requiredOption("--after <file>", "the system as it would be")
    .option("--from <instant>", "start of the period, inclusive (ISO 8601 with Z or offset, or epoch ms; default: now)")
    .option("--to <instant>", "end of the period, exclusive (default: a week after --from; at most 62 days)")
    .addOption(new Option("--format <format>", "output format").choices(["text", "json", "html"]).default("text"))
    .option("--out <file>", "write the output to this file instead of stdout")
    .action(
      async (opts: {
        before: string;
        after: string;
        from?: string;
        to?: string;
        format: "text" | "json" | "html";
        out?: string;
      }) => {
        if (opts.before === "-" && opts.after === "-") throw new UsageError("stdin can hold one snapshot, not both");
        const from = instant(opts.from, "--from");
        const to = opts.to !== undefined ? instant(opts.to, "--to") : parseInstant(from) + WEEK_MS;
        const before = await loadSystemFile(opts.before, io);
        const after = await loadSystemFile(opts.after, io);
        let diff: AccessDiff;
        try {
          diff = diffAccess(before, after, { from, to });
        } catch (e) {
          if (e instanceof QueryError) throw queryRefusal("invalid period", e.issues, { from: "--from", to: "--to" });
          throw e;
        }
        const text =
          opts.format === "json"
            ? `${JSON.stringify(diff, null, 2)}\n`
            : opts.format === "html"
              ? renderDiffPage(diff, before, after)
              : formatDiffText(diff, after);
        if (opts.out !== undefined) await writeTextFile(opts.out, text);
        else io.stdout.write(text);
        setCode(0);
      },
    );
}
