// What a bearer token may do (semantics H17): its role and, for managers and reporters, the
// partitions it may see; in a service, also the organizations where the role holds (T10) and the
// person it stands for. Runtime-neutral (the `rsop-engine/http` entry uses it); the tokens file
// that names grants is read by tokens.ts.

/** What a token may do: admin and integrator everything; manager and reporter only within their partitions, reporter reads only. */
export type Role = "admin" | "integrator" | "manager" | "reporter";

export const ROLES: readonly Role[] = ["admin", "integrator", "manager", "reporter"];

/** The person a token stands for (until identity exists): named in events' `user` and in organizations' `permissions`. */
export interface GrantUser {
  readonly id: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string | null;
}

/** The role of a token, and for managers and reporters the partition ids they may see (null: every partition). */
export interface Grant {
  readonly role: Role;
  readonly partitions: ReadonlySet<string> | null;
  /**
   * The organizations where the role holds, each reaching its descendants (T10). Absent or null: the
   * root, so every organization (a tokens file without `organizations` behaves as before).
   */
  readonly organizations?: ReadonlySet<string> | null;
  readonly user?: GrantUser;
}

/** The grant of `RSOP_TOKEN` / `--token`, and of every request without authentication. */
export const ADMIN: Grant = Object.freeze({ role: "admin", partitions: null });

/**
 * Whether a grant reaches an organization: it names the organization or one of its ancestors, or it
 * names no organization at all (T10). `ancestorsOf` lists an organization's ancestors, root first.
 */
export function reaches(grant: Grant, organizationId: string, ancestorsOf: (id: string) => readonly string[]): boolean {
  const orgs = grant.organizations;
  if (orgs === undefined || orgs === null) return true;
  if (orgs.has(organizationId)) return true;
  for (const a of ancestorsOf(organizationId)) if (orgs.has(a)) return true;
  return false;
}
