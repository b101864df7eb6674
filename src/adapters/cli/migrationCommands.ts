import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import { migratePanel } from "../migration/migratePanel.js";
import { preflightBlocks, preflightPanel } from "../migration/preflightPanel.js";
import { CliError, type CliIo, written } from "./io.js";
import { readSnapshotFile } from "./loadSystem.js";

/** Registers `rsop migrate` and `rsop preflight` (architecture 1.0 → 2.0, SPEC §8). */
export function registerMigrationCommands(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("preflight")
    .description("Check a 1.0 panel for what would block (errors, exit 1) or degrade (warnings, exit 0) its migration to 2.0; prints seed 000's preflight JSON with ★ extensions.")
    .requiredOption("--panel <file>", "rsop-panel/1 snapshot (JSON)")
    .action(async (opts: { panel: string }) => {
      const report = preflightPanel(await readSnapshotFile(opts.panel, "panel", io));
      io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      setCode(preflightBlocks(report) ? 1 : 0);
    });

  program
    .command("migrate")
    .description("Migrate a 1.0 panel to a 2.0 system snapshot plus entity-mapping records (UUID v5 ids: the same input gives the same output).")
    .requiredOption("--panel <file>", "rsop-panel/1 snapshot (JSON)")
    .requiredOption("--system-id <id>", "the 2.0 system the panel moves into")
    .option("--out <dir>", "write system.json, mappings.json and dropped.json there (default: one JSON document on stdout)")
    .option("--verbose", "also list each dropped field on stderr (`dropped: type id field: reason`); the count is always printed")
    .action(async (opts: { panel: string; systemId: string; out?: string; verbose?: boolean }) => {
      const m = migratePanel(await readSnapshotFile(opts.panel, "panel", io), { systemId: opts.systemId });
      if (!m.ok) throw new CliError(`${opts.panel}: migration refused by the preflight check`, m.issues);
      const { snapshot, mappings, dropped, cloudNodeId } = m.value;
      if (opts.out === undefined) {
        // Nothing more is said once the reader has gone (`rsop migrate … | head -c 300`).
        if (!(await written(io.stdout, `${JSON.stringify({ cloudNodeId, snapshot, mappings, dropped }, null, 2)}\n`))) return;
      } else {
        await mkdir(opts.out, { recursive: true });
        await writeFile(join(opts.out, "system.json"), `${JSON.stringify(snapshot, null, 2)}\n`);
        await writeFile(join(opts.out, "mappings.json"), `${JSON.stringify(mappings, null, 2)}\n`);
        await writeFile(join(opts.out, "dropped.json"), `${JSON.stringify(dropped, null, 2)}\n`);
        io.stdout.write(
          `migrated panel ${snapshot.cloudNodes?.[0]?.serialNumber ?? ""} into system ${opts.systemId}: cloud node ${cloudNodeId}, ${mappings.length} mapping records, ${dropped.length} dropped fields reported; wrote ${join(opts.out, "system.json")}, mappings.json, dropped.json\n`,
        );
      }
      if (opts.verbose) for (const d of dropped) io.stderr.write(`dropped: ${d.type} ${d.legacyId} ${d.field}: ${d.reason}\n`);
      if (opts.out === undefined) io.stderr.write(`${dropped.length} dropped field${dropped.length === 1 ? "" : "s"} reported (in "dropped"${opts.verbose ? "" : "; --verbose lists them here"})\n`);
      setCode(0);
    });
}
