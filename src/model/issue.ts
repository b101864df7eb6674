/**
 * What kind of problem an {@link Issue} is, as a camelCase code.
 *
 * - Shape (from schema validation): `invalidType`, `tooBig`, `tooSmall`, `invalidFormat`,
 *   `invalidValue`, `invalidUnion`, `invalidKey`, `invalidElement`, `notMultipleOf`,
 *   `unrecognizedKeys`, and `invalid` for any other rule a single value breaks.
 * - Snapshot consistency: `duplicateId`, `duplicateName`, `duplicateCredentialNumber`,
 *   `unknownReference`, `invalidReference`, `inconsistentReference`, `invalidTimezone`,
 *   `invalidRange`, `outOfRange`, `overlap`, `portInUse`, `overCapacity`, `osdpAddress`, `primaryReader`,
 *   `propAlarm`, `propDelay`, `forcedAlarm`, `publicIcon`, `unknownCardFormat`.
 * - Input that could not be read: `unreadable`, `invalidJson`.
 * - Queries: `unknownId`.
 * - Migration of 1.0 panels: `personalInfoMissing`, `invalidDevice`.
 * - A reloaded snapshot of a running server: `systemChanged`.
 */
export type IssueCode =
  | "invalid"
  | "invalidType"
  | "tooBig"
  | "tooSmall"
  | "invalidFormat"
  | "invalidValue"
  | "invalidUnion"
  | "invalidKey"
  | "invalidElement"
  | "notMultipleOf"
  | "unrecognizedKeys"
  | "duplicateId"
  | "duplicateName"
  | "duplicateCredentialNumber"
  | "unknownReference"
  | "invalidReference"
  | "inconsistentReference"
  | "invalidTimezone"
  | "invalidRange"
  | "outOfRange"
  | "overlap"
  | "portInUse"
  | "overCapacity"
  | "osdpAddress"
  | "primaryReader"
  | "propAlarm"
  | "propDelay"
  | "forcedAlarm"
  | "publicIcon"
  | "unknownCardFormat"
  | "unreadable"
  | "invalidJson"
  | "unknownId"
  | "personalInfoMissing"
  | "invalidDevice"
  | "systemChanged"
  // The live system's refusals (a write or read operation).
  | "required"
  | "conflict"
  | "notFound"
  | "unknownRoute"
  | "methodNotAllowed"
  | "invalidPatch"
  | "unknownField";

/**
 * One problem found in input data at a boundary (snapshot, request, CLI argument).
 */
export interface Issue {
  /** What kind of problem, e.g. `tooBig`, `unknownReference`, `duplicateName`. */
  readonly code: IssueCode;
  /** JSON path into the input, e.g. `["holders", 12, "credentials", 0, "credentialNumber"]`. */
  readonly path: readonly (string | number)[];
  /** One plain sentence. */
  readonly message: string;
}

/** `{ ok: true, value }` or `{ ok: false, issues }`, never both. */
export type Result<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly Issue[] };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function err<T>(issues: readonly Issue[]): Result<T> {
  return { ok: false, issues };
}

/**
 * Renders a JSON path the way a person reads it.
 * @param path - path segments, as in Issue.path.
 * @returns the dotted form, or `(root)` for an empty path.
 * @example
 * formatPath(["holders", 12, "credentials", 0, "credentialNumber"]); //=> "holders[12].credentials[0].credentialNumber"
 */
export function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? part : `.${part}`;
  }
  return out === "" ? "(root)" : out;
}

/**
 * Renders issues one per line as `path: message`.
 * @param issues - from a failed Result or a SnapshotError.
 * @returns the lines joined with newlines.
 * @example
 * formatIssues([{ code: "tooBig", path: ["groups", 0, "name"], message: "Must be at most 70 characters long." }]);
 * //=> "groups[0].name: Must be at most 70 characters long."
 */
export function formatIssues(issues: readonly Issue[]): string {
  return issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join("\n");
}

// The package ships ESM and CJS builds, and a program may load both (or two copies of the package):
// each has its own class objects. Errors carry a process-wide brand (Symbol.for) on their prototype,
// and `instanceof SnapshotError` / `instanceof QueryError` test the brand, so a check made with one
// build's class recognizes an error thrown by the other. Subclasses keep ordinary `instanceof`.
const SNAPSHOT_ERROR: unique symbol = Symbol.for("rsop-engine.SnapshotError") as never;
const QUERY_ERROR: unique symbol = Symbol.for("rsop-engine.QueryError") as never;

function hasBrand(value: unknown, brand: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/**
 * Thrown by the `…OrThrow` functions when input is invalid; carries every issue.
 * @example
 * try { loadEngineOrThrow({ format: "rsop-system/2" }); } catch (e) { (e as SnapshotError).issues.length; } //=> 2
 */
export class SnapshotError extends Error {
  override readonly name = "SnapshotError";
  readonly issues: readonly Issue[];
  constructor(issues: readonly Issue[], what = "snapshot") {
    super(`invalid ${what}: ${issues.length} problem${issues.length === 1 ? "" : "s"}\n${formatIssues(issues)}`);
    this.issues = issues;
  }
  /** True for a SnapshotError of any build (ESM or CJS) or copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class instanceof was asked about: a subclass keeps the ordinary prototype check.
    return this === SnapshotError
      ? hasBrand(value, SNAPSHOT_ERROR)
      : Function.prototype[Symbol.hasInstance].call(this, value);
  }
  static {
    Object.defineProperty(SnapshotError.prototype, SNAPSHOT_ERROR, { value: true });
  }
}

/**
 * Thrown by engine queries (rsop, whoCanAccess, accessWindows) given unknown ids or bad options;
 * carries every problem, each naming the offending parameter in `path`.
 * @example
 * try { engine.rsop(["nobody"], { at: "2026-11-21T14:03:00Z" }); } catch (e) { (e as QueryError).issues[0].message; } //=> 'Unknown holder id "nobody".'
 */
export class QueryError extends Error {
  override readonly name = "QueryError";
  readonly issues: readonly Issue[];
  constructor(issues: readonly Issue[]) {
    super(`invalid query: ${issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join("; ")}`);
    this.issues = issues;
  }
  /** True for a QueryError of any build (ESM or CJS) or copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class instanceof was asked about: a subclass keeps the ordinary prototype check.
    return this === QueryError
      ? hasBrand(value, QUERY_ERROR)
      : Function.prototype[Symbol.hasInstance].call(this, value);
  }
  static {
    Object.defineProperty(QueryError.prototype, QUERY_ERROR, { value: true });
  }
}
