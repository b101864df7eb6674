import { createReadStream } from "node:fs";
import { access } from "node:fs/promises";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { newDecision } from "../../evaluate/index.js";
import { type Issue, formatPath, requestIssues } from "../../model/index.js";
import { CliError, type CliIo } from "./io.js";
import { loadPanelFile, loadSystemFile, systemOrPanel } from "./loadSystem.js";

export interface DecideOptions {
  readonly system?: string;
  /** An architecture 1.0 panel instead of a system: 1.0 ids and `door.request.*` topics. */
  readonly panel?: string;
  readonly request?: string;
}

const FLUSH_LINES = 2048;

/**
 * `rsop decide`: one JSON request, or JSON Lines from a file or stdin, answered one decision per
 * line in input order, in one process. A line that is not a valid request is answered with an
 * `{"error": …}` line (so output lines stay aligned with input lines) and the exit code is 1.
 */
export async function decideCommand(opts: DecideOptions, io: CliIo): Promise<number> {
  const target = systemOrPanel(opts);
  const decision = newDecision(); // reused: each decision is serialized before the next one
  let decideOne: (req: unknown) => unknown;
  let check: (req: unknown) => Issue[];
  if ("system" in target) {
    const engine = await loadSystemFile(target.system);
    decideOne = (req) => engine.decide(req, decision);
    check = requestIssues;
  } else {
    const panel = await loadPanelFile(target.panel);
    decideOne = (req) => panel.decide(req);
    check = (req) => panel.requestIssues(req);
  }
  if (opts.request !== undefined) {
    try {
      await access(opts.request);
    } catch {
      throw new CliError(`cannot read request file "${opts.request}"`);
    }
  }
  const input = opts.request !== undefined ? createReadStream(opts.request, "utf8") : io.stdin;
  const lines = createInterface({ input, crlfDelay: Infinity });
  const out: string[] = [];
  let bad = 0;
  let lineNo = 0;
  let whole: string[] | null = null; // set when the input is one pretty-printed JSON document

  const flush = async () => {
    if (out.length === 0) return;
    const chunk = `${out.join("\n")}\n`;
    out.length = 0;
    if (!io.stdout.write(chunk)) await once(io.stdout, "drain");
  };
  const answer = (text: string, line: number) => {
    let req: unknown;
    try {
      req = JSON.parse(text);
    } catch (e) {
      bad++;
      out.push(JSON.stringify({ error: "invalid JSON", line, message: (e as Error).message }));
      io.stderr.write(`line ${line}: invalid JSON: ${(e as Error).message}\n`);
      return;
    }
    const issues = check(req);
    if (issues.length > 0) {
      bad++;
      out.push(JSON.stringify({ error: "invalid request", line, issues: issues.map((i) => ({ path: formatPath(i.path), message: i.message })) }));
      for (const i of issues) io.stderr.write(`line ${line}: ${formatPath(i.path)}: ${i.message}\n`);
      return;
    }
    out.push(JSON.stringify(decideOne(req)));
  };

  let sawContent = false;
  for await (const line of lines) {
    lineNo++;
    if (whole !== null) {
      whole.push(line);
      continue;
    }
    if (line.trim() === "") continue;
    // A first line that is not JSON on its own starts a single pretty-printed request.
    if (!sawContent && !isCompleteJson(line)) {
      whole = [line];
      continue;
    }
    sawContent = true;
    answer(line, lineNo);
    if (out.length >= FLUSH_LINES) await flush();
  }
  if (whole !== null) answer(whole.join("\n"), 1);
  await flush();
  return bad === 0 ? 0 : 1;
}

function isCompleteJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
