// Permissions and invitations (semantics I40–I59): a role on an organization for an email. A
// permission for the email of an existing user or application is effective at once (`userId` its id
// or client id); one for any other email is an invitation (`userId` null) until the user with that
// email accepts it. Each change is committed with its webhook events (I48) through the registry, and
// checked there again under the registry's serial queue: one permission per organization and email
// (I42), and the root keeps an effective admin permission (I45). Who may call is the routes' check.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type PermissionSubject, permissionEvents } from "../../events/orgEvents.js";
import type { Role } from "../auth/grant.js";
import { HttpError, type HttpIssue } from "../httpError.js";
import type { RegistryChange } from "../store/registryStore.js";
import { type Caller, parseObjectBody } from "../tenants/organization.js";
import { recordPermissionsOf, systemOf } from "../tenants/orgShapes.js";
import type { TenantRegistry } from "../tenants/registry.js";
import { callerByEmail, normalEmail } from "./accounts.js";
import { KIND, type PermissionRecord, type UserRecord } from "./records.js";

// The same plain shape accounts.ts checks (local@domain, no spaces); linear: no nested quantifiers.
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
const ID = z.string().min(1, { error: "Must be a non-empty id." }).max(200);
const ROLE = z.enum(["admin", "integrator", "manager", "reporter"]);
const NAME = z.string().max(255, { error: "Must have at most 255 characters." });
const PARTITIONS = z
  .record(ID, z.array(ID).max(1000))
  .nullable()
  .describe(
    "Managers and reporters only: partition ids by system id (systems of this organization or its descendants; " +
      "a system absent: none of its partitions); absent or null: every partition",
  );

/** The body of `POST /api/organizations/{organization_id}/permissions`. */
export const PERMISSION_CREATE = z
  .object({
    email: z
      .string()
      .trim()
      .max(320, { error: "Must be an email address." })
      .regex(EMAIL, { error: "Must be an email address." }),
    role: ROLE,
    name: NAME.optional().describe("Default: the user's full name, the application's name, or empty"),
    partitions: PARTITIONS.optional(),
  })
  .meta({ id: "PermissionCreate" });

/** The body of `PUT /api/organizations/{organization_id}/permissions/{permission_id}`: the fields to change. */
export const PERMISSION_UPDATE = z
  .object({
    role: ROLE.optional(),
    name: NAME.optional(),
    partitions: PARTITIONS.optional(),
  })
  .meta({ id: "PermissionUpdate" });

export type PermissionCreate = z.output<typeof PERMISSION_CREATE>;
export type PermissionUpdate = z.output<typeof PERMISSION_UPDATE>;

/** A body checked against its schema: an object with only its fields, each valid (400 at `body.<field>`). */
export function parsePermissionBody<S extends typeof PERMISSION_CREATE | typeof PERMISSION_UPDATE>(
  schema: S,
  raw: unknown,
): z.output<S> {
  return parseObjectBody(schema as z.ZodType, Object.keys(schema.shape), raw) as z.output<S>;
}

/** A permission as the permission routes answer it: the seed's fields, then where it is and its state. */
export interface PermissionAnswer {
  readonly _id: string;
  readonly userId: string | null;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly organization: string;
  readonly partitions: PermissionRecord["partitions"];
  readonly created: string;
  readonly accepted: string | null;
}

export function permissionAnswer(p: PermissionRecord): PermissionAnswer {
  return {
    _id: p.id,
    userId: p.userId,
    email: p.email,
    name: p.name,
    role: p.role,
    organization: p.organization,
    partitions: p.partitions,
    created: p.created,
    accepted: p.accepted,
  };
}

/** The permission records on one organization, oldest first (then by id). */
export function permissionsOn(registry: TenantRegistry, organizationId: string): PermissionRecord[] {
  return recordPermissionsOf(registry, organizationId);
}

/** A permission record, or undefined. */
export function permissionById(registry: TenantRegistry, id: string): PermissionRecord | undefined {
  return registry.record(KIND.permission, id)?.value as PermissionRecord | undefined;
}

const hasPartitions = (role: Role) => role === "manager" || role === "reporter";

/**
 * The partitions a permission of `role` keeps (I43): a manager's or reporter's must name systems of the
 * organization or a descendant; an admin's or integrator's none (they see every partition).
 */
function checkedPartitions(
  registry: TenantRegistry,
  organizationId: string,
  role: Role,
  partitions: PermissionRecord["partitions"],
): PermissionRecord["partitions"] {
  if (!hasPartitions(role)) {
    if (partitions !== null)
      throw new HttpError(400, "The request body is invalid.", [
        {
          path: "body.partitions",
          message: `A ${role} sees every partition: give partitions to a manager or reporter.`,
        },
      ]);
    return null;
  }
  if (partitions === null) return null;
  const issues: HttpIssue[] = [];
  for (const systemId of Object.keys(partitions)) {
    const t = registry.tenantByKey(systemId);
    const within =
      t !== undefined &&
      t.kind === "system" &&
      (t.organization === organizationId || registry.ancestors(t.organization).includes(organizationId));
    if (!within)
      issues.push({
        path: `body.partitions.${systemId}`,
        message: "Must be the system id of this organization or of one of its descendants.",
      });
  }
  if (issues.length > 0) throw new HttpError(400, "The request body is invalid.", issues);
  return partitions;
}

/** What a permission's events say of it (I48). */
function subjectOf(registry: TenantRegistry, p: PermissionRecord): PermissionSubject {
  const org = registry.organization(p.organization);
  return {
    id: p.id,
    email: p.email,
    name: p.name,
    role: p.role,
    userId: p.userId,
    ou: p.organization,
    ancestors: registry.ancestors(p.organization),
    systemId: org === undefined ? null : (systemOf(registry, org)?.key ?? null),
  };
}

const unknownOrganization = (id: string) =>
  new HttpError(404, "Unknown organization id.", [
    { path: "organization_id", message: `Unknown organization id "${id}".` },
  ]);
const unknownPermission = (id: string) =>
  new HttpError(404, "Unknown permission id.", [{ path: "permission_id", message: `Unknown permission id "${id}".` }]);

/** The permission `id` on organization `organizationId` and its record version; 404 otherwise. */
function existing(registry: TenantRegistry, organizationId: string | null, id: string) {
  const row = registry.record(KIND.permission, id);
  const p = row?.value as PermissionRecord | undefined;
  if (row === undefined || p === undefined || (organizationId !== null && p.organization !== organizationId))
    throw unknownPermission(id);
  return { p, version: row.version };
}

/**
 * 409 when `p` is the root's last effective admin permission and would stop being one (I45): the
 * service would have no administrator left. Invitations not accepted do not count.
 */
function refuseLastRootAdmin(registry: TenantRegistry, p: PermissionRecord, path: string): void {
  if (p.organization !== registry.root().id || p.role !== "admin" || p.userId === null) return;
  const others = permissionsOn(registry, p.organization).filter(
    (o) => o.id !== p.id && o.role === "admin" && o.userId !== null,
  );
  if (others.length === 0)
    throw new HttpError(409, "The root organization would have no admin left.", [
      { path, message: "This is the root organization's last admin permission: add another admin first." },
    ]);
}

const put = (p: PermissionRecord, ifVersion: number): RegistryChange => ({
  op: "putRecord",
  kind: KIND.permission,
  id: p.id,
  value: p,
  ifVersion,
});

/**
 * Creates a permission on an organization (I41, I42): effective at once for the email of a user
 * (`userId` its id) or an application (its client id), else an invitation (`userId` null).
 * @throws HttpError 400 (body, partitions), 404 (organization), 409 (a permission for this email on it already).
 */
export async function createPermission(
  registry: TenantRegistry,
  organizationId: string,
  raw: unknown,
  by: Caller,
  now: () => number = Date.now,
): Promise<PermissionRecord> {
  const body = parsePermissionBody(PERMISSION_CREATE, raw);
  return registry.updateRecords(() => {
    if (registry.organization(organizationId) === undefined) throw unknownOrganization(organizationId);
    const partitions = checkedPartitions(registry, organizationId, body.role, body.partitions ?? null);
    const email = normalEmail(body.email);
    if (permissionsOn(registry, organizationId).some((p) => p.email === email))
      throw new HttpError(409, "This email has a permission on this organization already.", [
        { path: "body.email", message: "Has a permission here already: change that one instead." },
      ]);
    const found = callerByEmail(registry, email);
    const user = found?.type === "user" ? found.user : undefined;
    const app = found?.type === "app" ? found.app : undefined;
    const p: PermissionRecord = {
      id: randomUUID(),
      organization: organizationId,
      email,
      name: body.name ?? (user !== undefined ? fullName(user) : (app?.name ?? "")),
      role: body.role,
      partitions,
      userId: user?.id ?? app?.clientId ?? null,
      created: new Date(now()).toISOString(),
      accepted: null,
    };
    const events = permissionEvents("created", subjectOf(registry, p), registry.eventContext(by));
    return { changes: [put(p, 0)], events, result: p };
  });
}

function fullName(user: UserRecord): string {
  return `${user.firstName} ${user.lastName}`.trim();
}

/**
 * Changes a permission's role, name or partitions (I44): partitions stay a manager's or reporter's
 * (a role made admin or integrator drops them; one made manager or reporter without new ones sees
 * every partition unless it had some).
 * @throws HttpError 400, 404 (`permission_id` not on this organization), 409 (the root's last admin).
 */
export async function updatePermission(
  registry: TenantRegistry,
  organizationId: string,
  id: string,
  raw: unknown,
  by: Caller,
): Promise<PermissionRecord> {
  const body = parsePermissionBody(PERMISSION_UPDATE, raw);
  return registry.updateRecords(() => {
    const { p, version } = existing(registry, organizationId, id);
    const role = body.role ?? p.role;
    const kept = hasPartitions(p.role) ? p.partitions : null;
    const given = body.partitions !== undefined ? body.partitions : hasPartitions(role) ? kept : null;
    const partitions = checkedPartitions(registry, organizationId, role, given);
    if (role !== "admin") refuseLastRootAdmin(registry, p, "body.role");
    const next: PermissionRecord = { ...p, role, name: body.name ?? p.name, partitions };
    const events = permissionEvents("updated", subjectOf(registry, next), registry.eventContext(by));
    return { changes: [put(next, version)], events, result: next };
  });
}

/** Deletes a permission (I44). @throws HttpError 404, 409 (the root's last admin). */
export async function deletePermission(
  registry: TenantRegistry,
  organizationId: string,
  id: string,
  by: Caller,
): Promise<void> {
  await registry.updateRecords(() => {
    const { p, version } = existing(registry, organizationId, id);
    refuseLastRootAdmin(registry, p, "permission_id");
    const events = permissionEvents("deleted", subjectOf(registry, p), registry.eventContext(by));
    const changes: RegistryChange[] = [{ op: "deleteRecord", kind: KIND.permission, id, ifVersion: version }];
    return { changes, events, result: undefined };
  });
}

/**
 * Accepts an invitation for `user`, whose email it names (I46): it becomes the user's permission
 * (`userId`, `accepted`; an empty name becomes the user's full name).
 * @throws HttpError 404 (unknown), 403 (another email), 409 (not an invitation, or accepted already).
 */
export async function acceptPermission(
  registry: TenantRegistry,
  id: string,
  user: UserRecord,
  by: Caller,
  now: () => number = Date.now,
): Promise<PermissionRecord> {
  return registry.updateRecords(() => {
    const { p, version } = existing(registry, null, id);
    if (p.email !== user.email)
      throw new HttpError(403, "This invitation is for another email.", [
        { path: "permission_id", message: "Only the user with the invited email may accept it." },
      ]);
    if (p.userId !== null || p.accepted !== null)
      throw new HttpError(409, "This permission is not an invitation waiting to be accepted.", [
        {
          path: "permission_id",
          message: p.accepted !== null ? "It was accepted already." : "It was effective from its creation.",
        },
      ]);
    const next: PermissionRecord = {
      ...p,
      userId: user.id,
      accepted: new Date(now()).toISOString(),
      name: p.name === "" ? fullName(user) : p.name,
    };
    const events = permissionEvents("accepted", subjectOf(registry, next), registry.eventContext(by));
    return { changes: [put(next, version)], events, result: next };
  });
}
