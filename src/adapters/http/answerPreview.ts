// POST /{system_id}/preview (with --data): what operations would change in who can get in, without
// applying them (LiveSystem.preview). Body: {"operations": [operation, …], "from"?, "to"?}.
import { type AccessDiff, DiffBudgetError, type DiffLimits } from "../../evaluate/index.js";
import type { LiveSystem, Operation } from "../../live/index.js";
import { QueryError } from "../../model/index.js";
import { HttpError, type HttpIssue, toHttpIssues } from "../../service/httpError.js";

const REFUSAL: Readonly<Record<number, string>> = {
  400: "Invalid operation.",
  404: "Not found.",
  405: "Method not allowed.",
  409: "Conflict.",
};

/**
 * Checks the body and previews its operations (docs/semantics.md X8): the answer is the access diff
 * `{from, to, changes}`; an operation the live system would refuse is answered with its status and
 * problems, at `operations.<i>.…`. A preview over `limits` is refused with 422 before its diff is
 * computed (HP1: holder × door-or-floor-group × day), or once it finds more changes than an answer
 * holds (HP2), the message saying the bound.
 * @throws HttpError 400 for a malformed body or period, 422 over a bound, or the refusal of an operation.
 */
export function answerPreview(live: LiveSystem, body: unknown, limits: DiffLimits = {}): AccessDiff {
  const issues: HttpIssue[] = [];
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new HttpError(400, "Invalid preview.", [
      { path: "", message: 'Must be an object {"operations": […], "from"?, "to"?}.' },
    ]);
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b))
    if (k !== "operations" && k !== "from" && k !== "to")
      issues.push({ path: k, message: "Unknown field; a preview takes operations, from and to." });
  const ops = b.operations;
  if (!Array.isArray(ops) || ops.length === 0)
    issues.push({ path: "operations", message: "Must be a non-empty array of operations {method, path, body?}." });
  else
    ops.forEach((op, i) => {
      if (op === null || typeof op !== "object" || Array.isArray(op))
        issues.push({ path: `operations.${i}`, message: "Must be an operation {method, path, body?}." });
    });
  for (const k of ["from", "to"] as const)
    if (b[k] !== undefined && typeof b[k] !== "string" && typeof b[k] !== "number")
      issues.push({ path: k, message: "Must be an ISO 8601 instant with Z or an offset, or epoch milliseconds." });
  if (issues.length > 0) throw new HttpError(400, "Invalid preview.", issues);
  let result: ReturnType<LiveSystem["preview"]>;
  try {
    result = live.preview(ops as Operation[], {
      ...limits,
      ...(b.from !== undefined ? { from: b.from as string | number } : {}),
      ...(b.to !== undefined ? { to: b.to as string | number } : {}),
    });
  } catch (e) {
    if (e instanceof QueryError) throw new HttpError(400, "Invalid period.", toHttpIssues(e.issues));
    if (e instanceof DiffBudgetError)
      throw new HttpError(422, "The preview is over the server's bound.", toHttpIssues(e.issues));
    throw e;
  }
  if (!result.ok)
    throw new HttpError(
      result.status,
      REFUSAL[result.status] ?? "Refused.",
      toHttpIssues(result.issues, ["operations", result.index]),
    );
  return result.diff;
}
