// The `rsop` command line: a thin adapter over the library. Argument parsing and help come from
// commander; each command lives in its own file and returns an exit code.
import type { Writable } from "node:stream";
import { Command, CommanderError } from "commander";
// `rsop --version` prints package.json's version: the bundler inlines this one field of it into
// dist/cli.js, so the two never drift apart.
import { version as VERSION } from "../../../package.json";
import { CliError, type CliIo, UsageError, errnoWords, isClosedStreamError, issueLines } from "./io.js";

/** The exit codes, in `rsop --help` and the README. */
export const EXIT_CODES_HELP = `
Exit codes:
  0   ok, also when stdout is closed by its reader (\`rsop demo | head -3\`): the command
      stops quietly. A closed stderr stops it quietly too, with the code it had reached.
  1   invalid data: the command line is well formed but what it names is refused: a snapshot,
      panel, request line or query content (each problem with its path), an id the snapshot
      lacks, a file that cannot be read or written (\`rsop: FILE: no such file\`)
  2   usage error: what the command line alone shows is wrong: an unknown command or option,
      a missing option, a malformed or out-of-range option value (a date, instant, period,
      number, choice or card format), options that contradict
  70  internal error (a bug: please report it)

Errors are one line starting "rsop: " (and the problems' paths under it); a usage error adds
"(run with --help for usage)". A FILE given as - is read from stdin (--system -, --panel -,
--request -).
`;

/** `rsop --version` alone needs no command. */
const VERSION_FLAGS: readonly string[] = ["--version", "-V"];

type Register = (program: Command, io: CliIo, setCode: (code: number) => void) => void;

/**
 * Every command, in the order --help lists them, with the module that registers it. Each module is
 * imported only when its command runs (or for help), so that `rsop decide` starts without loading
 * the server, the stores, the reports and the live system: loading every command took about 140 ms
 * past node's own start, decide's modules alone about 80 ms (measured on this project's 2-core
 * machine).
 */
const COMMANDS: readonly { readonly names: readonly string[]; readonly load: () => Promise<Register> }[] = [
  { names: ["validate"], load: async () => (await import("./validateCommand.js")).registerValidateCommand },
  { names: ["decide"], load: async () => (await import("./decideCommand.js")).registerDecideCommand },
  { names: ["apply"], load: async () => (await import("./applyCommand.js")).registerApplyCommand },
  { names: ["demo"], load: async () => (await import("./demoCommand.js")).registerDemoCommand },
  { names: ["explain"], load: async () => (await import("./explainCommand.js")).registerExplainCommand },
  { names: ["diff"], load: async () => (await import("./diffCommand.js")).registerDiffCommand },
  { names: ["picture"], load: async () => (await import("./pictureCommand.js")).registerPictureCommand },
  { names: ["rsop", "who", "windows"], load: async () => (await import("./queryCommands.js")).registerQueryCommands },
  { names: ["report"], load: async () => (await import("./reportCommand.js")).registerReportCommand },
  {
    names: ["preflight", "migrate"],
    load: async () => (await import("./migrationCommands.js")).registerMigrationCommands,
  },
  { names: ["card"], load: async () => (await import("./cardCommand.js")).registerCardCommand },
  { names: ["bench"], load: async () => (await import("./benchCommand.js")).registerBenchCommand },
  { names: ["serve"], load: async () => (await import("./serveCommand.js")).registerServeCommand },
  { names: ["node"], load: async () => (await import("./nodeCommand.js")).registerNodeCommand },
  { names: ["webhook"], load: async () => (await import("./webhookCommand.js")).registerWebhookCommand },
  {
    names: ["users", "apps", "keys"],
    load: async () => (await import("./identityCommands.js")).registerIdentityCommands,
  },
];

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
  const setCode = (c: number) => {
    code = c;
  };
  // A run naming a command first loads that command's module alone, one asking for the version none;
  // anything else (help, an unknown or misspelt command) loads every one, in the order --help lists
  // them.
  const first = argv[0] ?? "";
  const named = COMMANDS.find((c) => c.names.includes(first));
  const wanted = named !== undefined ? [named] : argv.length === 1 && VERSION_FLAGS.includes(first) ? [] : COMMANDS;
  const program = await cliProgram(io, setCode, wanted);

  const code0 = await parseAndRun(program, argv, io, () => code);
  return await finalExitCode(io, () => writeFailure, code0);
}

/**
 * The `rsop` program with the given commands registered (default: all of them, as --help lists
 * them). Tests walk its commands and options, so that a new one is checked without naming it.
 */
export async function cliProgram(
  io: CliIo,
  setCode: (code: number) => void = () => {},
  wanted: readonly { readonly load: () => Promise<Register> }[] = COMMANDS,
): Promise<Command> {
  const program = new Command()
    .name("rsop")
    .description("Decide physical access and compute resultant access (RSOP) from a system snapshot.")
    .version(VERSION)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // commander's own errors start "error: "; every error line of rsop starts "rsop: ".
      outputError: (s, write) => write(s.replace(/^error: /, "rsop: ")),
    })
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", EXIT_CODES_HELP);
  const registers = await Promise.all(wanted.map((c) => c.load()));
  for (const register of registers) register(program, io, setCode);
  return program;
}

/** Resolves when every write so far has been handed to the system (or failed). */
function settled(s: Writable): Promise<void> {
  return new Promise((resolve) => {
    if (s.destroyed || s.writableEnded) resolve();
    else s.write("", () => resolve());
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
      io.stderr.write(`rsop: ${e.message}\n`);
      if (e.issues.length > 0) io.stderr.write(`${issueLines(e.issues)}\n`);
      io.stderr.write("(run with --help for usage)\n");
      return 2;
    }
    if (e instanceof CliError) {
      io.stderr.write(`rsop: ${e.message}\n`);
      if (e.issues.length > 0) io.stderr.write(`${issueLines(e.issues)}\n`);
      return 1;
    }
    // A file operation a command did not catch itself still names the file and the reason in words.
    const failed = e as NodeJS.ErrnoException;
    if (typeof failed?.code === "string" && typeof failed.path === "string") {
      io.stderr.write(`rsop: ${failed.path}: ${errnoWords(failed)}\n`);
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
    if (!io.stderr.destroyed) io.stderr.write(`rsop: cannot write the output: ${errnoWords(failure, true)}\n`);
    return 70;
  }
  // stdout closed by its reader: it got what it wanted. stderr closed: its messages are lost, but the
  // command's own outcome (1 for refused data, 2 for a usage error) still stands.
  return outFailure !== null ? 0 : code0;
}
