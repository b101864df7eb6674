// What a bearer token may do (semantics H17): its role and, for managers and reporters, the
// partitions it may see. Runtime-neutral (the `rsop-engine/http` entry uses it); the tokens file
// that names grants is read by tokens.ts.

/** What a token may do: admin and integrator everything; manager and reporter only within their partitions, reporter reads only. */
export type Role = "admin" | "integrator" | "manager" | "reporter";

export const ROLES: readonly Role[] = ["admin", "integrator", "manager", "reporter"];

/** The role of a token, and for managers and reporters the partition ids they may see (null: every partition). */
export interface Grant {
  readonly role: Role;
  readonly partitions: ReadonlySet<string> | null;
}

/** The grant of `RSOP_TOKEN` / `--token`, and of every request without authentication. */
export const ADMIN: Grant = Object.freeze({ role: "admin", partitions: null });
