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
  /**
   * A caller of the identity service (a user's or an application's ID or system token): its
   * permissions, each on its organization (I3). `role` is then the highest of them and `organizations`
   * theirs; what holds on one organization is `grantAt`'s.
   */
  readonly permissions?: readonly GrantPermission[];
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

/** One permission behind a grant (identity, I3): a role on an organization, reaching its descendants. */
export interface GrantPermission {
  readonly organization: string;
  readonly role: Role;
  /** Managers and reporters: partition ids by system id; null: every partition. */
  readonly partitions: Readonly<Record<string, readonly string[]>> | null;
}

const RANK: Readonly<Record<Role, number>> = { reporter: 1, manager: 2, integrator: 3, admin: 4 };

/**
 * The grant of `grant` on one organization (and, for partitions, one of its systems): for a grant of
 * permissions (identity, I3), the highest role among those on the organization or an ancestor, with
 * the partitions of that system its manager and reporter permissions name; for any other grant,
 * itself when it reaches the organization. null: no permission reaches it.
 */
export function grantAt(
  grant: Grant,
  organizationId: string,
  ancestorsOf: (id: string) => readonly string[],
  systemId?: string,
): Grant | null {
  const permissions = grant.permissions;
  if (permissions === undefined) return reaches(grant, organizationId, ancestorsOf) ? grant : null;
  const line = new Set([organizationId, ...ancestorsOf(organizationId)]);
  let role: Role | null = null;
  let all = false;
  const partitions = new Set<string>();
  for (const p of permissions) {
    if (!line.has(p.organization)) continue;
    if (role === null || RANK[p.role] > RANK[role]) role = p.role;
    if (p.role === "admin" || p.role === "integrator" || p.partitions === null) all = true;
    else for (const id of (systemId === undefined ? undefined : p.partitions[systemId]) ?? []) partitions.add(id);
  }
  if (role === null) return null;
  const at: Grant = { role, partitions: all ? null : partitions, organizations: new Set([organizationId]) };
  return grant.user === undefined ? at : { ...at, user: grant.user };
}
