// The vocabulary of the live system: an operation is an API route (method, path relative to the
// system, body), and its result carries the API's HTTP status.
import type { Patch } from "immer";
import type { Issue, IssueCode } from "../model/index.js";
import { quote } from "../model/zodIssues.js";

/** The HTTP method of an operation. */
export type Method = "GET" | "POST" | "PUT" | "DELETE";

/** One route of the systems interface applied to a system: `{ method: "PUT", path: "/holders/h-1/groups/g-2" }`. */
export interface Operation {
  readonly method: Method;
  /** Relative to the system (`/holders`, `/groups/g-1/holders?page=2`); a query string is allowed on reads. */
  readonly path: string;
  readonly body?: unknown;
  /**
   * For a read: answer with the UTF-8 bytes of the body's JSON, `JSON.stringify(body, null, indent)`
   * (ReadResult `json`), where the route makes them directly (RSOP); other routes answer `body` as
   * always. For a server that sends the JSON as it is.
   */
  readonly jsonBytes?: { readonly indent: number };
}

/** An accepted write: its status, the id it created, and the immer patches that made the change. */
export interface WriteResult {
  readonly ok: true;
  readonly status: 200 | 201 | 204;
  readonly id?: string;
  readonly patches: readonly Patch[];
  readonly inversePatches: readonly Patch[];
}

/** A read's answer: the route's response body, and for lists the total before paging. */
export interface ReadResult {
  readonly ok: true;
  readonly status: 200;
  readonly body: unknown;
  readonly total?: number;
  /** With the operation's `jsonBytes`, where the route makes them: the body's JSON as UTF-8 bytes, and `body` is undefined. */
  readonly json?: Uint8Array;
}

/** A refused operation: nothing changed. 400 invalid, 404 unknown id or route, 409 conflict. */
export interface RefusedResult {
  readonly ok: false;
  readonly status: 400 | 404 | 405 | 409;
  readonly issues: readonly Issue[];
}

/** What one operation came to: an accepted write, a read's answer, or a refusal. */
export type OperationResult = WriteResult | ReadResult | RefusedResult;

/** Raised inside a handler to refuse the operation; the live system turns it into a RefusedResult. */
export class Refusal extends Error {
  constructor(
    readonly status: RefusedResult["status"],
    readonly issues: readonly Issue[],
  ) {
    super(issues.map((i) => i.message).join(" "));
  }
}

/** A refused result with these issues. */
export function refused(status: RefusedResult["status"], issues: readonly Issue[]): RefusedResult {
  return { ok: false, status, issues };
}

/** Issue codes of a resulting snapshot that make a write a conflict (409) rather than invalid (400). */
export const CONFLICT_CODES: ReadonlySet<string> = new Set([
  "duplicateId",
  "duplicateName",
  "duplicateCredentialNumber",
  "portInUse",
  "overCapacity",
  "conflict",
]);

/** 409 when any issue is a conflict, else 400, with these issues. */
export function refusedWrite(issues: readonly Issue[]): RefusedResult {
  return refused(issues.some((i) => CONFLICT_CODES.has(i.code)) ? 409 : 400, issues);
}

export function refuse(
  status: RefusedResult["status"],
  code: IssueCode,
  path: readonly (string | number)[],
  message: string,
): never {
  throw new Refusal(status, [{ code, path, message }]);
}

export function notFound(what: string, id: string, path: readonly (string | number)[] = []): never {
  // The id comes from the caller (a path of any length): quoted short, as every message quotes input (S12).
  return refuse(404, "notFound", path, `No ${what} has id ${quote(id)}.`);
}
