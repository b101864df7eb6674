// The declarations of permissions and invitations (semantics I40–I59), as permissionRoutes.ts serves
// them on the accounts host: `…/organizations/{organization_id}/permissions[/{permission_id}]` and
// `POST /api/permissions/{permission_id}/accept`, with the bodies permissions.ts checks.
import { z } from "zod";
import { PERMISSION_CREATE, PERMISSION_UPDATE } from "../../../service/identity/permissions.js";
import {
  AUTH_ERRORS,
  COMMON_ERRORS,
  type DeclaredRoute,
  type HttpMethod,
  PAGING_QUERY,
  type RouteAccess,
  answersOf,
  paramsOf,
} from "./declaredRoute.js";

/** Reads for every role that reaches the organization; changes for its admins (I47). */
const READ: RouteAccess = { roles: ["admin", "integrator", "manager", "reporter"], scope: "all" };
const MANAGE: RouteAccess = { roles: ["admin"], scope: "all" };

/** A permission as the permission routes answer it (the organizations' `permissions` list the first five fields). */
export const PERMISSION_ANSWER = z
  .object({
    _id: z.string(),
    userId: z.string().nullable().describe("The user's id or the application's client id; null: an invitation"),
    email: z.string(),
    name: z.string(),
    role: z.enum(["admin", "integrator", "manager", "reporter"]),
    organization: z.string(),
    partitions: z.record(z.string(), z.array(z.string())).nullable().describe("null: every partition"),
    created: z.string(),
    accepted: z.string().nullable().describe("When the invitation was accepted"),
  })
  .meta({ id: "PermissionRecord" });

interface Spec {
  readonly id: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly summary: string;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly ok: Readonly<Record<number, z.ZodType | null>>;
  readonly access: RouteAccess;
}

function route(s: Spec): DeclaredRoute {
  const write = s.method !== "GET";
  return {
    id: `permissions.${s.id}`,
    method: s.method,
    path: s.path,
    host: "accounts",
    summary: s.summary,
    tags: ["permissions"],
    params: paramsOf(s.path),
    ...(s.query !== undefined ? { query: s.query } : {}),
    ...(s.body !== undefined ? { body: s.body } : {}),
    answers: answersOf(s.ok, [...AUTH_ERRORS, ...COMMON_ERRORS, ...(write ? [409] : [])]),
    access: s.access,
    by: "permission",
  };
}

const LIST = "/api/organizations/:organizationId/permissions";
const ONE = `${LIST}/:permissionId`;

/** The routes of permissions and invitations. */
export function permissionRouteDeclarations(): DeclaredRoute[] {
  const specs: Spec[] = [
    {
      id: "list",
      method: "GET",
      path: LIST,
      summary: "The permissions on an organization, oldest first (paged: Link and X-Total-Count)",
      query: PAGING_QUERY,
      ok: { 200: z.array(PERMISSION_ANSWER) },
      access: READ,
    },
    {
      id: "create",
      method: "POST",
      path: LIST,
      summary:
        "Give an email a role on an organization: effective at once for a user's or application's email, " +
        "else an invitation (userId null) until that user accepts it",
      body: PERMISSION_CREATE,
      ok: { 201: PERMISSION_ANSWER },
      access: MANAGE,
    },
    { id: "get", method: "GET", path: ONE, summary: "A permission", ok: { 200: PERMISSION_ANSWER }, access: READ },
    {
      id: "update",
      method: "PUT",
      path: ONE,
      summary: "Change a permission's role, name or partitions; answers the permission",
      body: PERMISSION_UPDATE,
      ok: { 200: PERMISSION_ANSWER },
      access: MANAGE,
    },
    { id: "delete", method: "DELETE", path: ONE, summary: "Remove a permission", ok: { 204: null }, access: MANAGE },
    {
      id: "accept",
      method: "POST",
      path: "/api/permissions/:permissionId/accept",
      summary: "Accept an invitation: the user (ID token) whose email it names",
      ok: { 200: PERMISSION_ANSWER },
      access: READ,
    },
  ];
  return specs.map(route);
}
