// POST /{system_id}/decisions: one access request or an array of them → one decision or an array.
import type { Engine } from "../../evaluate/index.js";
import { type Decision, requestIssues } from "../../model/index.js";
import { HttpError, type HttpIssue, toHttpIssues } from "./httpError.js";

/**
 * Decides the requests of a parsed body. Every request is checked first; if any is malformed,
 * nothing is decided and every problem is reported with its path (`[2].credential.wiegand` in an
 * array, `credential.wiegand` for a single request).
 * @throws HttpError 400 listing every problem.
 */
export function answerDecisions(engine: Engine, body: unknown): Decision | Decision[] {
  const batch = Array.isArray(body);
  const requests: readonly unknown[] = batch ? body : [body];
  const issues: HttpIssue[] = [];
  requests.forEach((r, i) => {
    const found = requestIssues(r);
    if (found.length > 0) issues.push(...toHttpIssues(found, batch ? [i] : []));
  });
  if (issues.length > 0) throw new HttpError(400, batch ? "Invalid access requests." : "Invalid access request.", issues);
  const decisions = requests.map((r) => engine.decide(r));
  return batch ? decisions : decisions[0]!;
}
