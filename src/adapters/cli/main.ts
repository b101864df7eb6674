// The `rsop` command line: a thin adapter over the library. Argument parsing and help come from
// commander; each command lives in its own file and returns an exit code.
import type { Writable } from "node:stream";
import { Command, CommanderError, Option } from "commander";
// `rsop --version` prints package.json's version: the bundler inlines this one field of it into
// dist/cli.js, so the two never drift apart.
import { version as VERSION } from "../../../package.json";
import { applyCommand } from "./applyCommand.js";
import { registerBenchCommand } from "./benchCommand.js";
import { registerCardCommand } from "./cardCommand.js";
import { DECIDE_HELP, type DecideFormat, decideCommand } from "./decideCommand.js";
import { demoCommand } from "./demoCommand.js";
import { registerDiffCommand } from "./diffCommand.js";
import { registerExplainCommand } from "./explainCommand.js";
import { registerPictureCommand } from "./pictureCommand.js";
import { CliError, type CliIo, UsageError, isClosedStreamError, issueLines } from "./io.js";
import { registerMigrationCommands } from "./migrationCommands.js";
import { registerQueryCommands } from "./queryCommands.js";
import { registerReportCommand } from "./reportCommand.js";
import { registerServeCommand } from "./serveCommand.js";
import { validateCommand } from "./validateCommand.js";
import { registerWebhookCommand } from "./webhookCommand.js";

/** The exit codes, in `rsop --help` and the README. */
export const EXIT_CODES_HELP = `
Exit codes:
  0   ok, also when stdout is closed by its reader (\`rsop demo | head -3\`): the command
      stops quietly. A closed stderr stops it quietly too, with the code it had reached.
  1   invalid data: a snapshot, panel, request line or query refused (each problem with its path)
  2   usage error: unknown command or option, a missing or malformed option value
  70  internal error (a bug: please report it)

A FILE given as - is read from stdin (--system -, --panel -, --request -).
`;

/**
 * Runs the CLI on `argv` (without `node` and the script) and returns the exit code. A closed stdout
 * or stderr (EPIPE: the reader went away) ends the command quietly, never with a stack trace: exit 0
 * for stdout, the command's own code so far for stderr; the error listeners it
 * installs on `io.stdout`/`io.stderr` stay, so a late write error on them is never unhandled.
 */
export async function runCli(argv: readonly string[], base: CliIo): Promise<number> {
  let code = 0;
  const closing = new AbortController();
  let writeFailure: Error | undefined;
  const onStreamError = (e: Error) => {
    if (!isClosedStreamError(e)) writeFailure ??= e;
    closing.abort();
  };
  base.stdout.on("error", onStreamError);
  base.stderr.on("error", onStreamError);
  const io: CliIo = { stdin: base.stdin, stdout: base.stdout, stderr: base.stderr, closed: closing.signal };
  const program = new Command()
    .name("rsop")
    .description("Decide physical access and compute resultant access (RSOP) from a system snapshot.")
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", EXIT_CODES_HELP);

  const setCode = (c: number) => {
    code = c;
  };
  registerCoreCommands(program, io, setCode);
  registerExplainCommand(program, io, setCode);
  registerDiffCommand(program, io, setCode);
  registerPictureCommand(program, io, setCode);
  registerQueryCommands(program, io, setCode);
  registerReportCommand(program, io, setCode);
  registerMigrationCommands(program, io, setCode);
  registerCardCommand(program, io, setCode);
  registerBenchCommand(program, io, setCode);
  registerServeCommand(program, io, setCode);
  registerWebhookCommand(program, io, setCode);

  const code0 = await parseAndRun(program, argv, io, () => code);
  return await finalExitCode(io, () => writeFailure, code0);
}

/** Resolves when every write so far has been handed to the system (or failed). */
function settled(s: Writable): Promise<void> {
  return new Promise((resolve) => {
    if (s.destroyed || s.writableEnded) resolve();
    else s.write("", () => resolve());
  });
}

/** The commands that take a snapshot or panel and answer from it: validate, decide, apply, demo. */
function registerCoreCommands(program: Command, io: CliIo, setCode: (c: number) => void): void {
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

  program
    .command("decide")
    .description(
      "Answer access requests: one JSON request, or JSON Lines from --request or stdin; one decision JSON per line, in order.",
    )
    .option("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option(
      "--panel <file>",
      "rsop-panel/1 architecture 1.0 panel (JSON), instead of --system: 1.0 ids and door.request.* topics",
    )
    .option("--request <file>", "request file (JSON Lines, or one JSON request); - or absent: stdin")
    .addOption(
      new Option("--format <format>", "input format (see below)").choices(["auto", "jsonl", "json"]).default("auto"),
    )
    .option("--workers <n>", "answer JSON Lines on n worker threads (1 to 64; answers stay in input order); default 1")
    .addHelpText("after", DECIDE_HELP)
    .action(
      async (opts: { system?: string; panel?: string; request?: string; format: DecideFormat; workers?: string }) => {
        setCode(await decideCommand(opts, io));
      },
    );

  program
    .command("apply")
    .description(
      "Apply operations (API routes {method, path, body}) to a snapshot: one JSON operation per line, or a JSON array per line as one all-or-nothing batch; one answer line per input line, in order. Exit 1 if any operation was refused.",
    )
    .option("--system <file>", "rsop-system/1 snapshot (JSON)")
    .option("--panel <file>", "rsop-panel/1 architecture 1.0 panel (JSON), instead of --system: 1.0 panel API routes")
    .option("--ops <file>", "operations as JSON Lines; default (or -): stdin")
    .option("--out <file>", "write the resulting snapshot here, in the input's format")
    .option(
      "--seed-ids <n>",
      "2.0: draw created ids from a PRNG seeded with n, so a replay gives the same ids (1.0 creates take the next free integer)",
    )
    .action(async (opts: { system?: string; panel?: string; ops?: string; out?: string; seedIds?: string }) => {
      setCode(await applyCommand(opts, io));
    });

  program
    .command("demo")
    .description("Run the demo scans against the bundled example building and print the decisions with their reasons.")
    .option("--system <file>", "snapshot to use instead of the bundled example")
    .option("--requests <file>", "JSON Lines requests to use instead of the bundled ones")
    .action(async (opts: { system?: string; requests?: string }) => {
      setCode(await demoCommand(opts, io));
    });
}

/** Parses and runs the command; maps what it throws to an exit code (the table in EXIT_CODES_HELP). */
async function parseAndRun(program: Command, argv: readonly string[], io: CliIo, code: () => number): Promise<number> {
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code();
  } catch (e) {
    if (isClosedStreamError(e)) return code();
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

/** The exit code once the output streams have settled: a stream that failed outranks the command's. */
async function finalExitCode(io: CliIo, writeFailure: () => Error | undefined, code0: number): Promise<number> {
  // Once everything written has been handed over, a stream that failed decides the exit code.
  await settled(io.stdout);
  await settled(io.stderr);
  const outFailure = (io.stdout.errored ?? null) as Error | null;
  const errFailure = (io.stderr.errored ?? null) as Error | null;
  const failure =
    writeFailure() ?? [outFailure, errFailure].find((e): e is Error => e !== null && !isClosedStreamError(e));
  if (failure !== undefined) {
    if (!io.stderr.destroyed)
      io.stderr.write(`rsop: cannot write the output: ${(failure as NodeJS.ErrnoException).code ?? failure.message}\n`);
    return 70;
  }
  // stdout closed by its reader: it got what it wanted. stderr closed: its messages are lost, but the
  // command's own outcome (1 for refused data, 2 for a usage error) still stands.
  return outFailure !== null ? 0 : code0;
}
