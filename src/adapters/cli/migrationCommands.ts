import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import cliProgress from "cli-progress";
import type { Command } from "commander";
import { parseInstant } from "../../model/index.js";
import { loadPanelEngineOrThrow } from "../../legacy1/panelEngine.js";
import { type Migration, migratePanel } from "../../legacy1/migration/migratePanel.js";
import { compareMigration, panelScans, weekOfInstants } from "../../legacy1/migration/verifyMigration.js";
import { preflightBlocks, preflightPanel } from "../../legacy1/migration/preflightPanel.js";
import { CliError, type CliIo, UsageError, fileError, writeTextFile, written } from "./io.js";
import { instant } from "./queryCommands.js";
import { readSnapshotInput } from "./loadSystem.js";

/**
 * `rsop migrate --verify`: the migration guarantee (docs/semantics.md M3) over a week of instants for every person and device
 * (semantics M3); says what it compared on stderr, and each difference found. The exit code.
 */
function verify(panel: unknown, migration: Migration, from: number, stepHours: number, io: CliIo): number {
  const legacy = loadPanelEngineOrThrow(panel);
  const scans = panelScans(legacy);
  const instants = weekOfInstants(legacy, from, stepHours);
  const t0 = performance.now();
  // A progress bar on a terminal: a week of a large panel takes a while.
  const stderr = io.stderr as { isTTY?: boolean };
  const bar =
    stderr.isTTY === true
      ? new cliProgress.SingleBar(
          {
            stream: io.stderr as NodeJS.WriteStream,
            format: "verifying [{bar}] {value}/{total} instants",
            hideCursor: true,
            clearOnComplete: true,
          },
          cliProgress.Presets.shades_classic,
        )
      : null;
  bar?.start(instants.length, 0);
  const check = compareMigration(panel, migration, scans, instants, { onInstant: (done) => bar?.update(done) });
  bar?.stop();
  const p = legacy.loaded.panel;
  const n = (x: number) => x.toLocaleString("en-US");
  const first = new Date(instants[0]!).toISOString();
  io.stderr.write(
    `verify: ${n(instants.length)} instants over 7 days from ${first} (every ${stepHours} h, and each rule's start and stop and the minute before), ${n(p.persons.length)} persons, ${n(p.devices.length)} devices, ${n(scans.length)} scans per instant: ${n(check.decisions)} decisions and ${n(check.rsopEntries)} RSOP entries compared in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${n(check.ties)} name another rule of the same tie set (docs/semantics.md M3)\n`,
  );
  if (check.differenceCount === 0) {
    io.stderr.write("verify: every decision and RSOP entry is equal through the mapping records\n");
    return 0;
  }
  for (const d of check.differences) io.stderr.write(`verify: difference: ${JSON.stringify(d)}\n`);
  io.stderr.write(
    `verify: ${n(check.differenceCount)} difference${check.differenceCount === 1 ? "" : "s"}${check.differenceCount > check.differences.length ? ` (the first ${check.differences.length} above)` : ""}\n`,
  );
  return 1;
}

/** Registers `rsop migrate` and `rsop preflight` (architecture 1.0 → 2.0, docs/semantics.md M lines). */
export function registerMigrationCommands(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("preflight")
    .description(
      "Check a 1.0 panel for what would block (errors, exit 1) or degrade (warnings, exit 0) its migration to 2.0; prints the accounts API's preflight JSON with extensions (an addition to the API).",
    )
    .requiredOption("--panel <file>", "rsop-panel/1 snapshot (JSON)")
    .action(async (opts: { panel: string }) => {
      const report = preflightPanel(await readSnapshotInput(opts.panel, "panel", io));
      io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      setCode(preflightBlocks(report) ? 1 : 0);
    });

  program
    .command("migrate")
    .description(
      "Migrate a 1.0 panel to a 2.0 system snapshot plus entity-mapping records (UUID v5 ids: the same input gives the same output).",
    )
    .requiredOption("--panel <file>", "rsop-panel/1 snapshot (JSON)")
    .requiredOption("--system-id <id>", "the 2.0 system the panel moves into")
    .option(
      "--out <dir>",
      "write system.json, mappings.json and dropped.json there (default: one JSON document on stdout)",
    )
    .option(
      "--verbose",
      "also list each dropped field on stderr (`dropped: type id field: reason`); the count is always printed",
    )
    .option(
      "--verify",
      "check that the migration changes nobody's access: every scan of every person at every device, and every RSOP entry, over a week of instants (exit 1 on a difference)",
    )
    .option(
      "--from <instant>",
      "with --verify: the week starts on this instant's day in the panel's zone (ISO 8601 or epoch ms; default now)",
    )
    .option(
      "--step-hours <n>",
      "with --verify: instants every n hours, plus each rule's start and stop and the minute before each",
      "3",
    )
    .action(
      async (opts: {
        panel: string;
        systemId: string;
        out?: string;
        verbose?: boolean;
        verify?: boolean;
        from?: string;
        stepHours: string;
      }) => {
        const step = Number(opts.stepHours);
        if (!/^[0-9]+$/.test(opts.stepHours) || step < 1 || step > 24)
          throw new UsageError("--step-hours must be a whole number from 1 to 24");
        const from = instant(opts.from, "--from");
        const json = await readSnapshotInput(opts.panel, "panel", io);
        const m = migratePanel(json, { systemId: opts.systemId });
        if (!m.ok) throw new CliError(`${opts.panel}: migration refused by the preflight check`, m.issues);
        const { snapshot, mappings, dropped, cloudNodeId } = m.value;
        if (opts.out === undefined) {
          // Nothing more is said once the reader has gone (`rsop migrate … | head -c 300`).
          if (!(await written(io.stdout, `${JSON.stringify({ cloudNodeId, snapshot, mappings, dropped }, null, 2)}\n`)))
            return;
        } else {
          // A folder that cannot be made (a regular file on its path, no permission) is named with the reason.
          await mkdir(opts.out, { recursive: true }).catch((e: unknown) => {
            // mkdir says EEXIST when --out is a file: the folder it should be is taken by a file.
            if ((e as NodeJS.ErrnoException).code === "EEXIST")
              throw new CliError(`${opts.out}: is a file, not a directory`);
            throw fileError(opts.out!, e, true);
          });
          await writeTextFile(join(opts.out, "system.json"), `${JSON.stringify(snapshot, null, 2)}\n`);
          await writeTextFile(join(opts.out, "mappings.json"), `${JSON.stringify(mappings, null, 2)}\n`);
          await writeTextFile(join(opts.out, "dropped.json"), `${JSON.stringify(dropped, null, 2)}\n`);
          io.stdout.write(
            `migrated panel ${snapshot.cloudNodes?.[0]?.serialNumber ?? ""} into system ${opts.systemId}: cloud node ${cloudNodeId}, ${mappings.length} mapping records, ${dropped.length} dropped fields reported; wrote ${join(opts.out, "system.json")}, mappings.json, dropped.json\n`,
          );
        }
        if (opts.verbose)
          for (const d of dropped) io.stderr.write(`dropped: ${d.type} ${d.legacyId} ${d.field}: ${d.reason}\n`);
        if (opts.out === undefined)
          io.stderr.write(
            `${dropped.length} dropped field${dropped.length === 1 ? "" : "s"} reported (in "dropped"${opts.verbose ? "" : "; --verbose lists them here"})\n`,
          );
        setCode(opts.verify === true ? verify(json, m.value, parseInstant(from), step, io) : 0);
      },
    );
}
