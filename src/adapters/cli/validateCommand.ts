import type { Command } from "commander";
import { loadSnapshotSummary } from "./summary.js";
import { CliError, type CliIo } from "./io.js";
import { parseSnapshot } from "../../model/index.js";
import { parsePanel } from "../../legacy1/index.js";
import { readSnapshotInput, systemOrPanel } from "./loadSystem.js";

export interface ValidateOptions {
  readonly system?: string;
  readonly panel?: string;
  readonly json?: boolean;
}

/** `rsop validate`: every problem with its path (exit 1), or a one-line summary (exit 0). */
export async function validateCommand(opts: ValidateOptions, io: CliIo): Promise<number> {
  const target = systemOrPanel(opts);
  const path = "system" in target ? target.system : target.panel;
  const json = await readSnapshotInput(path, "system" in target ? "system" : "panel", io);
  const parsed = "system" in target ? parseSnapshot(json) : parsePanel(json);
  const r = parsed.ok
    ? { ok: true as const, value: "system" in parsed.value ? parsed.value.system : parsed.value }
    : parsed;
  if (!r.ok) {
    if (opts.json) {
      io.stdout.write(`${JSON.stringify({ valid: false, issues: r.issues }, null, 2)}\n`);
      return 1;
    }
    throw new CliError(
      `${path === "-" ? "stdin" : path}: ${r.issues.length} problem${r.issues.length === 1 ? "" : "s"}`,
      r.issues,
    );
  }
  const summary = loadSnapshotSummary(r.value);
  if (opts.json) io.stdout.write(`${JSON.stringify({ valid: true, ...summary }, null, 2)}\n`);
  else
    io.stdout.write(
      `valid: system ${summary.systemId}: ${summary.cloudNodes} cloud nodes, ${summary.devices} devices, ${summary.holders} holders, ${summary.credentials} credentials, ${summary.groups} groups, ${summary.rules} rules\n`,
    );
  return 0;
}

/** Registers `rsop validate`. */
export function registerValidateCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("validate")
    .description(
      "Check a system snapshot (or 1.0 panel); print every problem with its JSON path (exit 1), or a one-line summary (exit 0).",
    )
    .option("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option("--panel <file>", "rsop-panel/1 architecture 1.0 panel (JSON), instead of --system")
    .option("--json", "print the result as JSON")
    .action(async (opts: { system?: string; panel?: string; json?: boolean }) => {
      setCode(await validateCommand(opts, io));
    });
}
