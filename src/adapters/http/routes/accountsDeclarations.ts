// The routes of the accounts host (semantics T10–T29): organizations and customers in both
// generations (2.0 `/api/organizations`, 1.0 `/api/ous`) and the registration of 1.0 panels, with the
// shapes of their answers as OpenAPI components. accountsRoutes.ts serves exactly these paths.
import { z } from "zod";
import { bodySchema } from "../../../service/tenants/organization.js";
import {
  AUTH_ERRORS,
  COMMON_ERRORS,
  type DeclaredRoute,
  type HttpMethod,
  type RouteAccess,
  answersOf,
  paramsOf,
} from "./declaredRoute.js";

/** Reads for any role that reaches the organization; writes for admin and integrator (T29). */
const READ: RouteAccess = { roles: ["admin", "integrator", "manager", "reporter"], scope: "all" };
const WRITE: RouteAccess = { roles: ["admin", "integrator"], scope: "all" };

const FLAGS = {
  useBluetoothCredentials: z.boolean(),
  useTouchMobileApp: z.boolean(),
  allowCredentialResets: z.boolean(),
};
const PERMISSION = z
  .object({
    _id: z.string(),
    userId: z.string().nullable(),
    email: z.string().nullable(),
    name: z.string().nullable(),
    role: z.string(),
  })
  .meta({ id: "Permission" });
const PANEL_20 = z
  .object({
    uuid: z.string().nullable(),
    name: z.string(),
    id: z.string().nullable(),
    registeredDate: z.string().nullable(),
    online: z.boolean(),
  })
  .meta({ id: "OrganizationPanel20" });
const PANEL_10 = z
  .object({
    id: z.string(),
    name: z.string(),
    online: z.boolean(),
    allowCredentialResets: z.boolean(),
    credentialResetsPerMonth: z.number().int(),
    reportBillingPolicy: z.enum(["basic", "standard", "premium"]),
    uri: z.string().nullable(),
    registeredDate: z.string().nullable(),
  })
  .meta({ id: "OrganizationPanel10" });
const READER = z.object({ _id: z.string(), deviceId: z.number().int(), type: z.string(), panelId: z.string() });

const common = {
  ancestors: z.array(z.string()),
  parent: z.string().nullable(),
  userPermissionLevel: z.string(),
  parentPermissionLevel: z.string().optional(),
  permissions: z.array(PERMISSION),
};
export const ORGANIZATION_20 = z
  .object({
    id: z.string(),
    name: z.string(),
    systemId: z.string().optional(),
    ...FLAGS,
    ...common,
    children: z.array(z.object({ id: z.string(), name: z.string(), systemId: z.string().optional(), ...FLAGS })),
    panels: z.array(PANEL_20),
  })
  .meta({ id: "Organization20" });
export const ORGANIZATION_10 = z
  .object({
    id: z.string(),
    name: z.string(),
    ...FLAGS,
    ...common,
    children: z.array(z.object({ id: z.string(), name: z.string(), ...FLAGS })),
    panels: z.array(PANEL_10),
    readers: z.array(READER),
  })
  .meta({ id: "Organization10" });
const CREATED_20 = ORGANIZATION_20.pick({
  id: true,
  name: true,
  systemId: true,
  allowCredentialResets: true,
  children: true,
  panels: true,
  permissions: true,
}).meta({ id: "CreatedOrganization20" });
const CREATED_10 = ORGANIZATION_10.pick({
  id: true,
  name: true,
  allowCredentialResets: true,
  children: true,
  panels: true,
  readers: true,
  permissions: true,
}).meta({ id: "CreatedOrganization10" });
const SEARCH_20 = z
  .object({
    _id: z.string(),
    type: z.enum(["ou", "panel"]),
    name: z.string(),
    uuid: z.string().nullable().optional(),
    systemId: z.string().optional(),
  })
  .meta({ id: "SearchEntity20" });
const SEARCH_10 = z
  .object({ _id: z.string(), type: z.enum(["ou", "panel"]), name: z.string() })
  .meta({ id: "SearchEntity10" });
export const PANEL_ACCOUNT = z
  .object({
    id: z.string(),
    name: z.string(),
    ouId: z.string(),
    online: z.boolean(),
    allowCredentialResets: z.boolean(),
    credentialResetsPerMonth: z.number().int(),
    reportBillingPolicy: z.enum(["basic", "standard", "premium"]),
    uri: z.string(),
    registeredDate: z.string(),
  })
  .meta({ id: "Panel" });
const SEARCH_QUERY = z.object({
  q: z.string().optional().describe("Case-insensitive substring; every entity when absent"),
});

interface Spec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly summary: string;
  readonly tag: "organizations" | "ous" | "panels";
  readonly by: "organization" | "panelRegistration";
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly ok: Readonly<Record<number, z.ZodType | null>>;
  readonly errors?: readonly number[];
}

function route(s: Spec): DeclaredRoute {
  const write = s.method !== "GET";
  const errors = s.errors ?? [...AUTH_ERRORS, ...COMMON_ERRORS, ...(write ? [409] : [])];
  return {
    id: `accounts.${s.method.toLowerCase()}${s.path.replace(/[/:{}_-]+(\w)/g, (_, c: string) => c.toUpperCase())}`,
    method: s.method,
    path: s.path,
    host: "accounts",
    summary: s.summary,
    tags: [s.tag],
    params: paramsOf(s.path),
    ...(s.query !== undefined ? { query: s.query } : {}),
    ...(s.body !== undefined ? { body: s.body } : {}),
    answers: answersOf(s.ok, errors),
    access: write ? WRITE : READ,
    by: s.by,
  };
}

/** The nine organization routes of one generation. */
function organizationRoutes(generation: "2.0" | "1.0"): Spec[] {
  const base = generation === "2.0" ? "/api/organizations" : "/api/ous";
  const tag = generation === "2.0" ? "organizations" : "ous";
  const org = generation === "2.0" ? ORGANIZATION_20 : ORGANIZATION_10;
  const search = generation === "2.0" ? SEARCH_20 : SEARCH_10;
  const by = "organization" as const;
  // 1.0 `mine` answers only with `Accept: application/vnd.service.v2+json` (406 otherwise).
  const mineErrors = [401, 400, 405, 500, ...(generation === "1.0" ? [406] : [])];
  return [
    {
      method: "GET",
      path: `${base}/mine`,
      summary: "My organizations",
      tag,
      by,
      ok: { 200: z.array(org) },
      errors: mineErrors,
    },
    {
      method: "GET",
      path: `${base}/mine/search`,
      summary: "Search all my organizations",
      tag,
      by,
      query: SEARCH_QUERY,
      ok: { 200: z.array(search) },
      errors: mineErrors,
    },
    {
      method: "GET",
      path: `${base}/:organizationId`,
      summary: "An organization (or customer)",
      tag,
      by,
      ok: { 200: org },
    },
    {
      method: "GET",
      path: `${base}/:organizationId/search`,
      summary: "Search in an organization",
      tag,
      by,
      query: SEARCH_QUERY,
      ok: { 200: z.array(search) },
    },
    {
      method: "GET",
      path: `${base}/:dealerId/children`,
      summary: "List customers",
      tag,
      by,
      ok: { 200: z.array(org) },
    },
    {
      method: "POST",
      path: `${base}/:dealerId/children`,
      summary:
        generation === "2.0"
          ? "Create a customer (under the root: a dealer)"
          : "Create a legacy customer (under the root: a dealer)",
      tag,
      by,
      body: bodySchema(generation === "2.0" ? "customerCreate20" : "customerCreate10"),
      ok: { 201: generation === "2.0" ? CREATED_20 : CREATED_10 },
    },
    {
      method: "PUT",
      path: `${base}/:dealerId/children/:customerId`,
      summary: "Update a customer",
      tag,
      by,
      body: bodySchema("customerUpdate"),
      ok: { 204: null },
    },
    {
      method: "DELETE",
      path: `${base}/:dealerId/children/:customerId`,
      summary: "Delete a customer (and its system)",
      tag,
      by,
      ok: { 204: null },
    },
  ];
}

/** The six panel registration routes (1.0). */
function panelRoutes(): Spec[] {
  const tag = "panels" as const;
  const by = "panelRegistration" as const;
  return [
    {
      method: "POST",
      path: "/api/ous/:organizationId/panels",
      summary: "Register a panel with a legacy customer",
      tag,
      by,
      body: bodySchema("panelCreate"),
      ok: { 201: ORGANIZATION_10 },
    },
    {
      method: "GET",
      path: "/api/ous/:organizationId/panels",
      summary: "List panels",
      tag,
      by,
      ok: { 200: z.array(PANEL_ACCOUNT) },
    },
    { method: "GET", path: "/api/panels/:panelId", summary: "A panel", tag, by, ok: { 200: PANEL_ACCOUNT } },
    {
      method: "PUT",
      path: "/api/panels/:panelId",
      summary: "Update a panel",
      tag,
      by,
      body: bodySchema("panelUpdate"),
      ok: { 204: null },
    },
    {
      method: "DELETE",
      path: "/api/panels/:panelId",
      summary: "Delete a panel and its data",
      tag,
      by,
      ok: { 204: null },
    },
    {
      method: "POST",
      path: "/api/panels/:panelId/token",
      summary: "A panel token, valid on that panel's per-node host only",
      tag,
      by,
      ok: { 200: z.object({ token: z.string() }) },
    },
  ];
}

/**
 * The accounts host's routes: 2.0 and 1.0 organizations (the seed's nine each; its `/{customer_id}`
 * read is the `/{organization_id}` one) and panel registration, 24 seed routes in 22 declarations.
 */
export function accountsRouteDeclarations(): DeclaredRoute[] {
  return [...organizationRoutes("2.0"), ...organizationRoutes("1.0"), ...panelRoutes()].map(route);
}
