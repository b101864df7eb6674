// The `rsop` command line: a thin adapter over the library. Argument parsing and help come from
// commander; each command lives in its own file and returns an exit code.
import { Command, CommanderError } from "commander";
import { applyCommand } from "./applyCommand.js";
import { registerBenchCommand } from "./benchCommand.js";
import { registerCardCommand } from "./cardCommand.js";
import { decideCommand } from "./decideCommand.js";
import { demoCommand } from "./demoCommand.js";
import { CliError, type CliIo, UsageError, issueLines } from "./io.js";
import { registerMigrationCommands } from "./migrationCommands.js";
import { registerQueryCommands } from "./queryCommands.js";
import { registerServeCommand } from "./serveCommand.js";
import { validateCommand } from "./validateCommand.js";

const VERSION = "0.1.0";

/** Runs the CLI on `argv` (without `node` and the script) and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let code = 0;
  const program = new Command()
    .name("rsop")
    .description("Decide physical access and compute resultant access (RSOP) from a system snapshot.")
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError("(run with --help for usage)");

  program
    .command("validate")
    .description("Check a system snapshot (or 1.0 panel); print every problem with its JSON path (exit 1), or a one-line summary (exit 0).")
    .option("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option("--panel <file>", "rsop-panel/1 architecture 1.0 panel (JSON), instead of --system")
    .option("--json", "print the result as JSON")
    .action(async (opts: { system?: string; panel?: string; json?: boolean }) => {
      code = await validateCommand(opts, io);
    });

  program
    .command("decide")
    .description("Answer access requests: one JSON request, or JSON Lines from --request or stdin; one decision JSON per line, in order.")
    .option("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option("--panel <file>", "rsop-panel/1 architecture 1.0 panel (JSON), instead of --system: 1.0 ids and door.request.* topics")
    .option("--request <file>", "request file (JSON or JSON Lines); default: stdin")
    .action(async (opts: { system?: string; panel?: string; request?: string }) => {
      code = await decideCommand(opts, io);
    });

  program
    .command("apply")
    .description(
      "Apply operations (seed routes {method, path, body}) to a snapshot: one JSON operation per line, or a JSON array per line as one all-or-nothing batch; one answer line per input line, in order. Exit 1 if any operation was refused.",
    )
    .option("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option("--panel <file>", "rsop-panel/1 architecture 1.0 panel (JSON), instead of --system: seed 002 routes")
    .option("--ops <file>", "operations as JSON Lines; default (or -): stdin")
    .option("--out <file>", "write the resulting snapshot here, in the input's format")
    .option("--seed-ids <n>", "draw created ids from a PRNG seeded with n, so a replay gives the same ids")
    .action(async (opts: { system?: string; panel?: string; ops?: string; out?: string; seedIds?: string }) => {
      code = await applyCommand(opts, io);
    });

  program
    .command("demo")
    .description("Run the demo scans against the bundled example building and print the decisions with their reasons.")
    .option("--system <file>", "snapshot to use instead of the bundled example")
    .option("--requests <file>", "JSON Lines requests to use instead of the bundled ones")
    .action(async (opts: { system?: string; requests?: string }) => {
      code = await demoCommand(opts, io);
    });

  const setCode = (c: number) => {
    code = c;
  };
  registerQueryCommands(program, io, setCode);
  registerMigrationCommands(program, io, setCode);
  registerCardCommand(program, io, setCode);
  registerBenchCommand(program, io, setCode);
  registerServeCommand(program, io, setCode);

  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof UsageError) {
      io.stderr.write(`rsop: ${e.message}\n(run with --help for usage)\n`);
      return 2;
    }
    if (e instanceof CliError) {
      io.stderr.write(`rsop: ${e.message}\n`);
      if (e.issues.length > 0) io.stderr.write(`${issueLines(e.issues)}\n`);
      return 1;
    }
    io.stderr.write(`rsop: internal error: ${(e as Error).stack ?? String(e)}\n`);
    return 70;
  }
}
