// `rsop explain`: why a scan was decided, step by step (engine.explain), as readable text or JSON.
import type { Command } from "commander";
import type { Explanation, TraceRule } from "../../evaluate/index.js";
import { requestIssues } from "../../model/index.js";
import { jsonErrorText, parseJson } from "../jsonSyntax.js";
import { CliError, type CliIo, UsageError, readJsonFile } from "./io.js";
import { loadSystemFile } from "./loadSystem.js";

/** ANSI colours, used only when stdout is a terminal and NO_COLOR is not set. */
interface Paint {
  bold(s: string): string;
  dim(s: string): string;
  good(s: string): string;
  bad(s: string): string;
}

const PLAIN: Paint = { bold: (s) => s, dim: (s) => s, good: (s) => s, bad: (s) => s };
const ANSI: Paint = {
  bold: (s) => `\u001b[1m${s}\u001b[22m`,
  dim: (s) => `\u001b[2m${s}\u001b[22m`,
  good: (s) => `\u001b[32m${s}\u001b[39m`,
  bad: (s) => `\u001b[31m${s}\u001b[39m`,
};

/** Colour when writing to a terminal, unless NO_COLOR (https://no-color.org) is set. */
export function paintFor(stream: unknown): Paint {
  const tty = (stream as { isTTY?: boolean }).isTTY === true;
  return tty && (process.env.NO_COLOR ?? "") === "" ? ANSI : PLAIN;
}

/**
 * The request of `--request`: JSON text when it starts with `{` or `[` (after blanks), else a file
 * name (`-` is stdin) holding one JSON request (docs/semantics.md X2).
 */
async function readRequest(value: string, io: CliIo): Promise<unknown> {
  if (/^\s*[[{]/.test(value)) {
    const r = parseJson(value);
    if (!r.ok) throw new CliError(`--request is not valid JSON: ${jsonErrorText(r)}`);
    return r.value;
  }
  return readJsonFile(value, "request", io);
}

function ruleLine(c: TraceRule, paint: Paint): string {
  const verdict = c.open === null ? "window not looked at" : c.open ? paint.good("open") : paint.dim("closed");
  const kind = c.allow ? "allow" : paint.bad("deny");
  const policy = c.allow
    ? `; policy ${c.effectivePolicy}, ${c.acceptsFactors ? "accepts" : "does not accept"} the factors`
    : "";
  // Why a rule whose window alone was open does not apply: its calendar (C4) or the threat level (TL5).
  const calendar = c.calendar?.closedIt === true ? `; closed by calendar ${c.calendar.id}` : "";
  const level =
    c.threatLevel?.setAside === true
      ? `; ${paint.bad(`set aside at threat level ${c.threatLevel.level}`)} (up to ${c.threatLevel.max})`
      : "";
  return `      ${c.applicable ? "•" : "◦"} ${c.ruleId}${c.name !== null ? ` "${c.name}"` : ""} (${kind}, group ${c.groupId}, ${c.window}${c.is24x7 ? ", 24x7" : ""}): ${verdict}${calendar}${level}${policy}`;
}

/** The trace as numbered lines, the deciding step marked, the decision last. */
export function formatExplanation(e: Explanation, paint: Paint): string {
  const lines: string[] = [];
  let n = 0;
  for (const s of e.trace) {
    if (s.step === "decision") continue;
    n++;
    const mark =
      s.decided === null
        ? ""
        : ` ${e.decision.outcome === "allowed" ? paint.good(`→ ${s.decided}`) : paint.bad(`→ ${s.decided}`)}`;
    lines.push(`${paint.bold(`${n}. ${s.step}`)}${mark}`);
    lines.push(`   ${s.summary}`);
    if (s.step === "rules") for (const c of s.details.candidates as TraceRule[]) lines.push(ruleLine(c, paint));
    if (s.step === "request" && Array.isArray(s.details.issues))
      for (const i of s.details.issues as { path: string; message: string }[])
        lines.push(`      ${i.path}: ${i.message}`);
  }
  const d = e.decision;
  const outcome = d.outcome === "allowed" ? paint.good(d.outcome) : paint.bad(d.outcome);
  lines.push(
    `${paint.bold("Decision:")} ${outcome}/${d.reason}` +
      `${d.activeRuleId !== null ? `, rule ${d.activeRuleId}` : ""}${d.holderId !== null ? `, holder ${d.holderId}` : ""}${d.credentialId !== null ? `, credential ${d.credentialId}` : ""}` +
      `${d.floors.length > 0 ? `, floors ${d.floors.join(", ")}` : ""}${d.duress ? paint.bad(", DURESS") : ""}`,
  );
  return `${lines.join("\n")}\n`;
}

/** Registers `rsop explain`. */
export function registerExplainCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("explain")
    .description(
      "Why a scan is decided as it is: every evaluation step with what it looked at and found, ending in the decision (text, or JSON with --json).",
    )
    .requiredOption("--system <file>", "rsop-system/1 snapshot (JSON)")
    .requiredOption("--request <json>", "one access request as JSON text, or a file holding one (- is stdin)")
    .option("--json", 'print one JSON object {"decision": …, "trace": […]}')
    .action(async (opts: { system: string; request: string; json?: boolean }) => {
      if (opts.system === "-" && opts.request === "-")
        throw new UsageError("stdin can hold the snapshot or the request, not both");
      const request = await readRequest(opts.request, io);
      const issues = requestIssues(request);
      if (issues.length > 0) throw new CliError("invalid access request", issues);
      const engine = await loadSystemFile(opts.system, io);
      const explanation = engine.explain(request);
      io.stdout.write(
        opts.json === true
          ? `${JSON.stringify(explanation, null, 2)}\n`
          : formatExplanation(explanation, paintFor(io.stdout)),
      );
      setCode(0);
    });
}
