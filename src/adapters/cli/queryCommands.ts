import type { Command } from "commander";
import { QueryError, parseInstant } from "../../model/index.js";
import { type CliIo, UsageError, queryRefusal } from "./io.js";
import { loadPanelFile, loadSystemFile, systemOrPanel } from "./loadSystem.js";

/**
 * A CLI instant: digits are epoch milliseconds, anything else an ISO string; absent means now. A
 * value that is neither is a usage error (exit 2).
 */
export function instant(v: string | undefined, option = "--at"): string | number {
  if (v === undefined) return Date.now();
  const at = /^[0-9]+$/.test(v) ? Number(v) : v;
  if (Number.isNaN(parseInstant(at)))
    throw new UsageError(
      `${option} must be an ISO 8601 instant with Z or an offset (e.g. 2026-04-15T14:15:00Z), or epoch milliseconds`,
    );
  return at;
}

/** The comma-separated ids of --ids; none is a usage error. */
function idList(v: string): string[] {
  const ids = v
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (ids.length === 0) throw new UsageError("--ids needs at least one id");
  return ids;
}

/** The option each query field comes from, to name it in a usage error. */
const QUERY_OPTIONS: Readonly<Record<string, string>> = {
  at: "--at",
  from: "--from",
  to: "--to",
  ids: "--ids",
  holderId: "--holder",
  deviceId: "--device",
  floorGroupId: "--floor-group",
  cloudNodeId: "--cloud-node",
};

/**
 * Turns a QueryError into a CLI error listing its problems: exit 1 for ids the snapshot lacks,
 * 2 for a malformed or out-of-range value (an instant out of range, a period too long).
 */
function query<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof QueryError) throw queryRefusal("invalid query", e.issues, QUERY_OPTIONS);
    throw e;
  }
}

/** Registers `rsop rsop`, `rsop who` and `rsop windows`. */
export function registerQueryCommands(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("rsop")
    .description(
      "Resultant access of holders at an instant (the 2.0 systems API RSOP shape, JSON); with --panel, of 1.0 persons (the 1.0 panel API shape).",
    )
    .option("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option("--panel <file>", "rsop-panel/1 architecture 1.0 panel (JSON), instead of --system")
    .requiredOption("--ids <ids>", "comma-separated holder ids (person ids with --panel)")
    .option("--at <instant>", "ISO 8601 instant with Z or offset, or epoch ms (default: now)")
    .option("--cloud-node <id>", "scope to one cloud node")
    .action(async (opts: { system?: string; panel?: string; ids: string; at?: string; cloudNode?: string }) => {
      const target = systemOrPanel(opts);
      const ids = idList(opts.ids);
      const at = instant(opts.at);
      if ("panel" in target) {
        const bad = ids.filter((s) => !/^[0-9]+$/.test(s));
        if (bad.length > 0)
          throw new UsageError(`1.0 person ids are integers: ${bad.map((s) => JSON.stringify(s)).join(", ")}`);
        const panel = await loadPanelFile(target.panel, io);
        const personIds = ids.map(Number);
        io.stdout.write(
          `${JSON.stringify(
            query(() => panel.rsop(personIds, { at })),
            null,
            2,
          )}\n`,
        );
        setCode(0);
        return;
      }
      const engine = await loadSystemFile(target.system, io);
      // JSON.stringify(engine.rsop(…), null, 2)'s bytes, from the pieces the engine keeps (WA7).
      io.stdout.write(
        query(() =>
          engine.rsopJsonBytes(
            ids,
            { at, ...(opts.cloudNode !== undefined ? { cloudNodeId: opts.cloudNode } : {}) },
            2,
          ),
        ),
      );
      io.stdout.write("\n");
      setCode(0);
    });

  program
    .command("who")
    .description("Who can open a device (or reach a floor group) at an instant, with the deciding rule (JSON).")
    .requiredOption("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option("--device <id>", "device id")
    .option("--floor-group <id>", "floor group id (instead of --device)")
    .option("--at <instant>", "ISO 8601 instant with Z or offset, or epoch ms (default: now)")
    .action(async (opts: { system: string; device?: string; floorGroup?: string; at?: string }) => {
      if ((opts.device === undefined) === (opts.floorGroup === undefined))
        throw new UsageError("give exactly one of --device ID and --floor-group ID");
      const at = instant(opts.at);
      const engine = await loadSystemFile(opts.system, io);
      const result = query(() =>
        opts.device !== undefined
          ? engine.whoCanAccess(opts.device, { at })
          : engine.whoCanAccessFloorGroup(opts.floorGroup as string, { at }),
      );
      io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      setCode(0);
    });

  program
    .command("windows")
    .description("When a holder is allowed at a device during a period of at most 62 days (JSON).")
    .requiredOption("--system <file>", "rsop-system/1 snapshot (JSON)")
    .requiredOption("--holder <id>", "holder id")
    .requiredOption("--device <id>", "device id")
    .requiredOption("--from <instant>", "start, inclusive (ISO 8601 with Z or offset, or epoch ms)")
    .requiredOption("--to <instant>", "end, exclusive")
    .action(async (opts: { system: string; holder: string; device: string; from: string; to: string }) => {
      const from = instant(opts.from, "--from");
      const to = instant(opts.to, "--to");
      const engine = await loadSystemFile(opts.system, io);
      const result = query(() => engine.accessWindows(opts.holder, opts.device, { from, to }));
      io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      setCode(0);
    });
}
