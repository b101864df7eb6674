// POST /{system_id}/decisions: one access request or an array of them → one decision or an array.
import type { Engine } from "../../evaluate/index.js";
import { type Decision, requestIssues } from "../../model/index.js";
import { HttpError, type HttpIssue, MAX_ISSUES, toHttpIssues, tooManyIssuesMessage } from "./httpError.js";

/**
 * Decides the requests of a parsed body. If any request is malformed, nothing is answered but the
 * problems, each with its path (`[2].credential.wiegand` in an array, `credential.wiegand` for a
 * single request): the first MAX_ISSUES of them, and how many there are in all.
 *
 * The array is walked once: each request is checked and, while none so far was malformed, decided.
 * After the first malformed one only problems are counted (and the first ones kept), so a huge
 * invalid batch costs neither a huge answer nor a list of every problem in memory.
 * @throws HttpError 400 listing the problems.
 */
export function answerDecisions(engine: Engine, body: unknown): Decision | Decision[] {
  if (!Array.isArray(body)) {
    const found = requestIssues(body);
    if (found.length > 0) throw invalid("Invalid access request.", toHttpIssues(found.slice(0, MAX_ISSUES)), found.length);
    return engine.decide(body);
  }
  const decisions: Decision[] = [];
  const issues: HttpIssue[] = [];
  let count = 0;
  for (let i = 0; i < body.length; i++) {
    const r: unknown = body[i];
    const found = requestIssues(r);
    if (found.length === 0) {
      if (count === 0) decisions.push(engine.decide(r));
      continue;
    }
    if (count === 0) decisions.length = 0; // nothing of a batch with a malformed request is answered
    count += found.length;
    if (issues.length < MAX_ISSUES) issues.push(...toHttpIssues(found.slice(0, MAX_ISSUES - issues.length), [i]));
  }
  if (count > 0) throw invalid("Invalid access requests.", issues, count);
  return decisions;
}

function invalid(message: string, issues: readonly HttpIssue[], count: number): HttpError {
  return new HttpError(400, count > issues.length ? tooManyIssuesMessage(message, issues.length, count) : message, issues);
}
