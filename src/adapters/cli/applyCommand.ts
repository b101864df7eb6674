// `rsop apply`: operations (API routes) from JSON Lines applied to a snapshot, one answer line per
// input line, in order; optionally the resulting snapshot written out.
import type { Readable } from "node:stream";
import type { Command } from "commander";
import {
  type BatchResult,
  type LiveTarget,
  type Operation,
  type OperationResult,
  createLiveSystem,
  randomIds,
  seededIds,
} from "../../live/index.js";
import { type PanelBatchResult, type PanelOperationResult, createPanelLiveSystem } from "../../legacy1/index.js";
import { type Issue, formatPath } from "../../model/index.js";
import { parseJson } from "../jsonSyntax.js";
import { CliError, type CliIo, UsageError, fileError, openInputStream, writeTextFile } from "./io.js";
import { READ_CHUNK_BYTES, readLines } from "./lineReader.js";
import { readSnapshotInput, systemOrPanel } from "./loadSystem.js";

export interface ApplyOptions {
  readonly system?: string;
  readonly panel?: string;
  readonly ops?: string;
  readonly out?: string;
  readonly seedIds?: string;
}

function issuesOut(issues: readonly Issue[]): { path: string; message: string }[] {
  return issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
}

/** A 2.0 or 1.0 live system, through the interface both implement. */
type Target = LiveTarget<unknown, unknown, OperationResult | PanelOperationResult, BatchResult | PanelBatchResult>;

/** The answer line of one operation's result (the patches stay out: `--out` has the outcome). */
function answer(r: OperationResult | PanelOperationResult): Record<string, unknown> {
  if (!r.ok) return { status: r.status, issues: issuesOut(r.issues) };
  if ("body" in r) return { status: r.status, body: r.body, ...(r.total !== undefined ? { total: r.total } : {}) };
  return { status: r.status, ...(r.id !== undefined ? { id: r.id } : {}) };
}

function applyLine(live: Target, text: string): { line: Record<string, unknown>; refused: boolean } {
  const r0 = parseJson(text);
  if (!r0.ok)
    return {
      line: {
        status: 400,
        issues: [
          {
            path: "",
            message: `Is not valid JSON (column ${r0.column}: ${r0.message}): expected one operation object or an array of them.`,
          },
        ],
      },
      refused: true,
    };
  const parsed = r0.value;
  if (Array.isArray(parsed)) {
    const r = live.apply(parsed as Operation[]);
    if (!r.ok) return { line: { status: r.status, index: r.index, issues: issuesOut(r.issues) }, refused: true };
    return { line: { status: r.status, results: r.results.map(answer) }, refused: false };
  }
  const r = live.apply(parsed as Operation);
  return { line: answer(r), refused: !r.ok };
}

/** `rsop apply`: exit 0 when every operation was accepted, 1 when any was refused. */
export async function applyCommand(opts: ApplyOptions, io: CliIo): Promise<number> {
  const target = systemOrPanel(opts);
  let newId = randomIds;
  if (opts.seedIds !== undefined) {
    if (!/^\d{1,10}$/.test(opts.seedIds) || Number(opts.seedIds) > 0xffffffff)
      throw new UsageError(`--seed-ids takes a whole number from 0 to 4294967295, not "${opts.seedIds.slice(0, 40)}"`);
    newId = seededIds(Number(opts.seedIds));
  }
  const path = "system" in target ? target.system : target.panel;
  if (path === "-" && (opts.ops === undefined || opts.ops === "-"))
    throw new UsageError(
      "stdin can hold the snapshot or the operations, not both: give the operations with --ops FILE",
    );
  const json = await readSnapshotInput(path, "system" in target ? "system" : "panel", io);
  let live: Target;
  if ("system" in target) {
    const made = createLiveSystem(json, { newId });
    if (!made.ok)
      throw new CliError(
        `${path === "-" ? "stdin" : path}: ${made.issues.length} problem${made.issues.length === 1 ? "" : "s"}`,
        made.issues,
      );
    live = made.value;
  } else {
    // 1.0 creates take the next free integer: --seed-ids has nothing to draw.
    const made = createPanelLiveSystem(json);
    if (!made.ok)
      throw new CliError(
        `${path === "-" ? "stdin" : path}: ${made.issues.length} problem${made.issues.length === 1 ? "" : "s"}`,
        made.issues,
      );
    live = made.value;
  }

  const fromStdin = opts.ops === undefined || opts.ops === "-";
  const input: Readable = fromStdin ? io.stdin : await openInputStream(opts.ops!, READ_CHUNK_BYTES);
  const opened = new Promise<void>((resolve, reject) => {
    input.once("error", (e: NodeJS.ErrnoException) => reject(fromStdin ? e : fileError(opts.ops!, e)));
    input.once("readable", () => resolve());
    input.once("end", () => resolve());
  });
  await opened;
  let refused = 0;
  let n = 0;
  // Reading pauses while stdout is full, and stops for good once its reader is gone (an endless
  // stdin would otherwise be read, and its operations applied, for ever).
  let full = false;
  const lines = readLines(input, (text) => {
    n++;
    const r =
      text.trim() === ""
        ? {
            line: {
              status: 400,
              issues: [{ path: "", message: "Is blank: expected one operation object or an array of them." }],
            },
            refused: true,
          }
        : applyLine(live, text);
    if (r.refused) refused++;
    if (!io.stdout.write(`${JSON.stringify({ line: n, ...r.line })}\n`) && !full) {
      full = true;
      lines.pause();
      io.stdout.once("drain", () => {
        full = false;
        lines.resume();
      });
    }
  });
  const stop = () => lines.close();
  io.closed?.addEventListener("abort", stop, { once: true });
  if (io.closed?.aborted === true) stop();
  await lines.done;
  io.closed?.removeEventListener("abort", stop);
  if (opts.out !== undefined) await writeTextFile(opts.out, `${JSON.stringify(live.snapshot, null, 2)}\n`);
  if (refused > 0) io.stderr.write(`rsop: ${refused} of ${n} operation line${n === 1 ? "" : "s"} refused\n`);
  return refused > 0 ? 1 : 0;
}

/** Registers `rsop apply`. */
export function registerApplyCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
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
}
