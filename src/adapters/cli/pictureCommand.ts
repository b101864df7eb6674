// `rsop picture`: a week of access at a glance (weeklyPicture) as a standalone HTML page with an SVG heat map.
import type { Command } from "commander";
import { weeklyPicture } from "../../evaluate/index.js";
import { QueryError, parseInstant, parseLocalDate } from "../../model/index.js";
import { type CliIo, UsageError, queryRefusal, writeTextFile } from "./io.js";
import { loadSystemFile } from "./loadSystem.js";
import { renderPicturePage } from "./picturePage.js";

/** A calendar date YYYY-MM-DD (2026-13-45 is none), or an ISO 8601 instant: what weeklyPicture takes. */
function weekOfValid(v: string): boolean {
  if (/^\d{4}-\d{2}-\d{2}$/.test(v)) return !Number.isNaN(parseLocalDate(v));
  return /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(parseInstant(v));
}

/** Registers `rsop picture`. */
export function registerPictureCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("picture")
    .description(
      "A week of access at a glance: for a holder (its doors and floor groups) or a door (its holders), an SVG heat map of the allowed share of every local hour, in a standalone HTML page.",
    )
    .requiredOption("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option("--holder <id>", "the holder to draw")
    .option("--device <id>", "the door to draw (instead of --holder)")
    .option("--week-of <date>", "a date of the week (YYYY-MM-DD, local; or an ISO instant); default: this week")
    .requiredOption("--out <file>", "the HTML file to write (- for stdout)")
    .action(async (opts: { system: string; holder?: string; device?: string; weekOf?: string; out: string }) => {
      if ((opts.holder === undefined) === (opts.device === undefined))
        throw new UsageError("give exactly one of --holder ID and --device ID");
      if (opts.weekOf !== undefined && !weekOfValid(opts.weekOf))
        throw new UsageError(
          `--week-of must be a date YYYY-MM-DD (or an ISO 8601 instant), not "${opts.weekOf.slice(0, 40)}"`,
        );
      const engine = await loadSystemFile(opts.system, io);
      let html: string;
      try {
        const subject = opts.holder !== undefined ? { holderId: opts.holder } : { deviceId: opts.device! };
        html = renderPicturePage(
          weeklyPicture(engine, { ...subject, ...(opts.weekOf !== undefined ? { weekOf: opts.weekOf } : {}) }),
        );
      } catch (e) {
        if (e instanceof QueryError)
          throw queryRefusal("invalid picture", e.issues, {
            weekOf: "--week-of",
            holderId: "--holder",
            deviceId: "--device",
          });
        throw e;
      }
      if (opts.out === "-") io.stdout.write(html);
      else {
        await writeTextFile(opts.out, html);
        io.stderr.write(`wrote ${opts.out}\n`);
      }
      setCode(0);
    });
}
