// What a user or an application may do (semantics I3): the grant of its permissions, each a role on
// an organization reaching its descendants. A user's permissions are those naming its id (made for
// it, or an invitation it accepted); an application's are those naming its email, effective at once
// (the seed's service account: adding the permission is the authorization). Grants are cached per
// registry revision: a permission change is seen by the next request.
import type { Grant, GrantPermission, Role } from "../auth/grant.js";
import type { TenantRegistry } from "../tenants/registry.js";
import { appById, userById } from "./accounts.js";
import { KIND, type PermissionRecord, type Subject } from "./records.js";

const RANK: Readonly<Record<Role, number>> = { reporter: 1, manager: 2, integrator: 3, admin: 4 };

/** Every permission record (no particular order). */
export function permissionRecords(registry: TenantRegistry): PermissionRecord[] {
  return [...registry.records(KIND.permission)].map((r) => r.value as PermissionRecord);
}

/** The subject a token's `sub` names: a user's id or an application's client id; undefined when neither exists (any more). */
export function subjectOf(registry: TenantRegistry, sub: string): Subject | undefined {
  if (userById(registry, sub) !== undefined) return { type: "user", id: sub };
  if (appById(registry, sub) !== undefined) return { type: "app", id: sub };
  return undefined;
}

function build(registry: TenantRegistry, subject: Subject): Grant | null {
  const user = subject.type === "user" ? userById(registry, subject.id) : undefined;
  const app = subject.type === "app" ? appById(registry, subject.id) : undefined;
  if (user === undefined && app === undefined) return null;
  const mine = permissionRecords(registry).filter((p) =>
    user !== undefined ? p.userId === user.id : p.email === app!.email,
  );
  const permissions: GrantPermission[] = mine.map((p) => ({
    organization: p.organization,
    role: p.role,
    partitions: p.partitions,
  }));
  let role: Role = "reporter";
  for (const p of permissions) if (RANK[p.role] > RANK[role]) role = p.role;
  return {
    role,
    partitions: null,
    organizations: new Set(permissions.map((p) => p.organization)),
    permissions,
    user:
      user !== undefined
        ? { id: user.id, firstName: user.firstName, lastName: user.lastName, email: user.email }
        : { id: app!.clientId, firstName: app!.name, lastName: "", email: app!.email },
  };
}

/** Grants by subject, rebuilt when the registry changed. */
const caches = new WeakMap<TenantRegistry, { rev: number; grants: Map<string, Grant | null> }>();

/** The grant of a user or application (null: it no longer exists). */
export function subjectGrant(registry: TenantRegistry, subject: Subject): Grant | null {
  let cache = caches.get(registry);
  if (cache === undefined || cache.rev !== registry.rev)
    caches.set(registry, (cache = { rev: registry.rev, grants: new Map() }));
  const key = `${subject.type}:${subject.id}`;
  let grant = cache.grants.get(key);
  if (grant === undefined) cache.grants.set(key, (grant = build(registry, subject)));
  return grant;
}
