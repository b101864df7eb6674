// POST /{system_id}/decisions: one access request or an array of them → one decision or an array.
import { type Engine, type Explanation, newDecision } from "../../evaluate/index.js";
import { type Decision, requestIssues } from "../../model/index.js";
import { HttpError, type HttpIssue, MAX_ISSUES, toHttpIssues } from "../../service/httpError.js";

/** Requests of a batch checked and decided per event-loop turn: a bound on how long one batch holds the loop (HP3). */
const BATCH_TURN = 1024;

/**
 * Decides the requests of a parsed body. If any request is malformed, nothing is answered but the
 * problems, each with its path (`[2].credential.wiegand` in an array, `credential.wiegand` for a
 * single request): the first MAX_ISSUES of them, and how many requests are malformed in all.
 *
 * The array is walked once: each request is checked and, while none so far was malformed, decided.
 * Once MAX_ISSUES problems are listed, the rest are only counted as malformed requests, through
 * decide's own check into one reused decision (no problem list is built), so a huge invalid batch
 * costs neither a huge answer nor a list of every problem in memory.
 *
 * A batch of more than `maxBatch` requests is only checked, never decided (HP3): its problems are
 * answered as above, and a well-formed one is refused with 413 naming the bound.
 * @throws HttpError 400 listing the problems, 413 for a well-formed batch over `maxBatch`.
 */
export async function answerDecisions(
  engine: Engine,
  body: unknown,
  maxBatch = Infinity,
): Promise<Decision | Decision[]> {
  if (!Array.isArray(body)) {
    const found = requestIssues(body);
    if (found.length > 0) throw new HttpError(400, "Invalid access request.", toHttpIssues(found));
    return engine.decide(body);
  }
  const decisions: Decision[] = [];
  const issues: HttpIssue[] = [];
  let malformed = 0;
  let capped = false;
  const scratch = newDecision();
  const over = body.length > maxBatch;
  for (let i = 0; i < body.length; i++) {
    // A batch as large as the body bound takes tens of milliseconds to check and decide: other
    // requests are answered between turns (the engine was taken once, so the batch sees one system;
    // setTimeout, not setImmediate, so the handler stays runtime-neutral).
    if (i > 0 && i % BATCH_TURN === 0) await new Promise<void>((resolve) => setTimeout(resolve, 0));
    const r: unknown = body[i];
    if (capped) {
      // docs/semantics.md R1: a request is badRequest exactly when it has a problem.
      if (engine.decide(r, scratch).reason === "badRequest") malformed++;
      continue;
    }
    const found = requestIssues(r);
    if (found.length === 0) {
      if (malformed === 0 && !over) decisions.push(engine.decide(r));
      continue;
    }
    malformed++;
    issues.push(...toHttpIssues(found.slice(0, MAX_ISSUES - issues.length), [i]));
    capped = issues.length >= MAX_ISSUES;
  }
  if (malformed === 0 && over)
    throw new HttpError(413, `Too many access requests in one batch: at most ${maxBatch}, got ${body.length}.`, [
      {
        path: "",
        message: `A batch holds at most ${maxBatch} access requests (the server's bound); send the rest in further batches.`,
      },
    ]);
  if (malformed === 0) return decisions;
  const message = capped
    ? `Invalid access requests. ${malformed} of ${body.length} requests are malformed; the first ${issues.length} problems are listed.`
    : "Invalid access requests.";
  throw new HttpError(400, message, issues);
}

/**
 * POST /{system_id}/decisions/explain: one access request → `{ decision, trace }` (engine.explain).
 * A trace answers one person's question, so the body is one request, not an array (docs/semantics.md X1).
 * @throws HttpError 400 listing the problems of a malformed request, or for an array.
 */
export function answerExplain(engine: Engine, body: unknown): Explanation {
  if (Array.isArray(body))
    throw new HttpError(400, "Invalid access request.", [
      {
        path: "",
        message: "Explain takes one access request (an object), not an array; send each request on its own.",
      },
    ]);
  const found = requestIssues(body);
  if (found.length > 0) throw new HttpError(400, "Invalid access request.", toHttpIssues(found));
  return engine.explain(body);
}
