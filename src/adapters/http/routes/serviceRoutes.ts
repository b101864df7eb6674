// The routes beside the live systems' tables: the engine's (RSOP, decisions, explain, who can
// access), preview, reports, webhook subscriptions, the 1.0 import preview, migration and health.
import { z } from "zod";
import type { Role } from "../../../service/auth/grant.js";
import { MIGRATION_TASKS } from "../../../service/migrationJob.js";
import {
  ANY_JSON,
  AUTH_ERRORS,
  COMMON_ERRORS,
  type DeclaredRoute,
  type HttpMethod,
  ID_ANSWER,
  PAGING_QUERY,
  type RouteAccess,
  type RouteHost,
  answersOf,
  entity,
  paramsOf,
} from "./declaredRoute.js";

const EVERY_ROLE: RouteAccess = { roles: ["admin", "integrator", "manager", "reporter"], scope: "partitions" };
const ALL_PARTITIONS: RouteAccess = { roles: ["admin", "integrator"] as Role[], scope: "all" };
const ERRORS = [...AUTH_ERRORS, ...COMMON_ERRORS];

interface Spec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly summary: string;
  readonly tag: string;
  readonly by: DeclaredRoute["by"];
  readonly access?: RouteAccess;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly ok: Readonly<Record<number, z.ZodType | null>>;
  readonly errors?: readonly number[];
}

function route(host: RouteHost, s: Spec): DeclaredRoute {
  const access = s.access ?? ALL_PARTITIONS;
  const errors = s.errors ?? (access.scope === "public" ? [405, 500] : ERRORS);
  return {
    id: `${host}.${s.method.toLowerCase()}${s.path.replace(/[/:{}_-]+(\w)/g, (_, c: string) => c.toUpperCase())}`,
    method: s.method,
    path: s.path,
    host,
    summary: s.summary,
    tags: [s.tag],
    params: paramsOf(s.path),
    ...(s.query !== undefined ? { query: s.query } : {}),
    ...(s.body !== undefined ? { body: s.body } : {}),
    answers: answersOf(s.ok, errors),
    access,
    by: s.by,
  };
}

const RSOP_QUERY = z.object({
  ids: z.string().describe("Holder ids, comma-separated"),
  at: z.string().optional().describe("An instant (ISO 8601); default now"),
});
const RSOP_ANSWER = z.looseObject({ holders: z.array(z.looseObject({ id: z.string() })) });
const DECISION = z.looseObject({
  outcome: z.enum(["allowed", "denied", "unknown"]),
  reason: z.string(),
  holderId: z.string().nullable(),
  credentialId: z.string().nullable(),
  activeRuleId: z.string().nullable(),
});
const REQUEST = z.looseObject({}).describe("An access request");

/** The engine's routes: what `rsop serve --system` serves, and the data server beside its tables. */
export function engineRoutes(withRsop: boolean): DeclaredRoute[] {
  const rsop: Spec[] = [
    { method: "GET", path: "/:systemId/rsop/holders", summary: "RSOP of holders", tag: "rsop", by: "engine" },
    {
      method: "GET",
      path: "/:systemId/cloud-nodes/:cloudNodeId/rsop/holders",
      summary: "RSOP of holders at one cloud node",
      tag: "rsop",
      by: "engine",
    },
  ].map((s) => ({ ...s, access: EVERY_ROLE, query: RSOP_QUERY, ok: { 200: RSOP_ANSWER } }) as Spec);
  const specs: Spec[] = [
    ...(withRsop ? rsop : []),
    {
      method: "POST",
      path: "/:systemId/decisions",
      summary: "Decide one access request or a batch",
      tag: "decisions",
      by: "engine",
      body: z.union([REQUEST, z.array(REQUEST)]),
      ok: { 200: z.union([DECISION, z.array(DECISION)]) },
    },
    {
      method: "POST",
      path: "/:systemId/decisions/explain",
      summary: "Decide one access request and say why",
      tag: "decisions",
      by: "engine",
      body: REQUEST,
      ok: { 200: z.looseObject({ decision: DECISION, trace: ANY_JSON }) },
    },
    {
      method: "GET",
      path: "/:systemId/devices/:deviceId/access",
      summary: "Who can access a device",
      tag: "decisions",
      by: "engine",
      query: PAGING_QUERY.extend({ at: z.string().optional() }),
      ok: { 200: z.looseObject({ holders: z.array(z.looseObject({})) }) },
    },
  ];
  return specs.map((s) => route("engine", s));
}

/** The report routes below `prefix` (2.0 `/:systemId/reports/holders`, 1.0 `/api/reports/cloudpeople`). */
function reportRoutes(host: RouteHost, prefix: string, withFile: boolean): DeclaredRoute[] {
  const REPORT = z.looseObject({ id: z.union([z.string(), z.number()]) });
  const specs: Omit<Spec, "by">[] = [
    { method: "POST", path: `${prefix}/preview`, summary: "Preview a report", tag: "reports", ok: { 200: ANY_JSON } },
    {
      method: "POST",
      path: `${prefix}/generate`,
      summary: "Generate a report (429 while the generations running are at their bound)",
      tag: "reports",
      ok: { 200: REPORT, 204: null },
    },
    {
      method: "GET",
      path: `${prefix}/requests`,
      summary: "List reports",
      tag: "reports",
      query: PAGING_QUERY,
      ok: { 200: z.array(REPORT) },
    },
    { method: "GET", path: `${prefix}/requests/:reportId`, summary: "A report", tag: "reports", ok: { 200: REPORT } },
    {
      method: "DELETE",
      path: `${prefix}/requests/:reportId`,
      summary: "Delete a report",
      tag: "reports",
      ok: { 204: null },
    },
    {
      method: "GET",
      path: `${prefix}/requests/:reportId/view`,
      summary: "The records of a report",
      tag: "reports",
      ok: { 200: ANY_JSON },
    },
    ...(withFile
      ? [
          {
            method: "GET",
            path: `${prefix}/file/:reportId`,
            summary: "A report's file",
            tag: "reports",
            ok: { 200: ANY_JSON },
          } as Omit<Spec, "by">,
        ]
      : []),
  ];
  return specs.map((s) =>
    route(host, {
      ...s,
      by: "report",
      access: host === "panel" ? ALL_PARTITIONS : EVERY_ROLE,
      errors: [...ERRORS, 409, 429],
    }),
  );
}

/** The webhook subscription routes (2.0 `/api/organizations/…/subscriptions`, 1.0 `/api/ous/…/hooks`). */
export function subscriptionRoutes(generation: "2.0" | "1.0"): DeclaredRoute[] {
  const base =
    generation === "2.0" ? "/api/organizations/:organizationId/subscriptions" : "/api/ous/:organizationId/hooks";
  const one = `${base}/:subscriptionId`;
  const SUBSCRIPTION = z.looseObject({ id: z.string() });
  const body = z.looseObject({}).describe("A subscription: url, topics, secret …");
  const specs: Spec[] = [
    {
      method: "GET",
      path: base,
      summary: "List subscriptions",
      tag: "webhooks",
      by: "subscription",
      ok: { 200: z.array(SUBSCRIPTION) },
    },
    {
      method: "POST",
      path: base,
      summary: "Create a subscription",
      tag: "webhooks",
      by: "subscription",
      body,
      ok: { 201: ID_ANSWER },
    },
    {
      method: "GET",
      path: one,
      summary: "A subscription",
      tag: "webhooks",
      by: "subscription",
      ok: { 200: SUBSCRIPTION },
    },
    {
      method: "PUT",
      path: one,
      summary: "Update a subscription",
      tag: "webhooks",
      by: "subscription",
      body,
      ok: { 204: null },
    },
    {
      method: "DELETE",
      path: one,
      summary: "Delete a subscription",
      tag: "webhooks",
      by: "subscription",
      ok: { 204: null },
    },
    {
      method: "GET",
      path: `${one}/parked`,
      summary: "Parked events of a subscription",
      tag: "webhooks",
      by: "subscription",
      query: PAGING_QUERY,
      ok: { 200: z.array(z.looseObject({})) },
    },
    {
      method: "POST",
      path: `${one}/parked/redeliver`,
      summary: "Queue parked events again",
      tag: "webhooks",
      by: "subscription",
      body: z.object({ ids: z.array(z.string()) }).optional(),
      ok: { 200: z.object({ redelivered: z.number().int() }) },
    },
  ];
  return specs.map((s) => route("accounts", s));
}

/** The routes of a 2.0 system beside its table: preview and reports. */
export function systemServiceRoutes(): DeclaredRoute[] {
  const preview = route("systems", {
    method: "POST",
    path: "/:systemId/preview",
    summary: "What operations would change in who can get in",
    tag: "preview",
    by: "preview",
    body: z.looseObject({}),
    ok: { 200: z.looseObject({}) },
    // 422: over the preview's cost or answer bound (HP1, HP2).
    errors: [...ERRORS, 422],
  });
  return [preview, ...reportRoutes("systems", "/:systemId/reports/holders", false)];
}

/** The routes of a 1.0 panel beside its table: the import preview and the people reports. */
export function panelServiceRoutes(): DeclaredRoute[] {
  const preview = route("panel", {
    method: "POST",
    path: "/api/persons/import/preview",
    summary: "Preview an import of persons",
    tag: "persons",
    by: "importPreview",
    body: z.looseObject({}),
    ok: { 200: z.looseObject({}) },
  });
  return [preview, ...reportRoutes("panel", "/api/reports/cloudpeople", true)];
}

/** `GET /healthz`: no token. */
export function healthRoute(): DeclaredRoute {
  return route("service", {
    method: "GET",
    path: "/healthz",
    summary: "Whether the server is up",
    tag: "service",
    by: "health",
    access: { roles: [], scope: "public" },
    ok: { 200: entity(z.unknown()).partial() },
  });
}

// The migration answers, field for field as the accounts API gives them (M6, M8): strict, so that
// an answer with a field the API lacks (or without one it has) does not match the document.
const MIGRATION_STATUS = z.enum(["Pending", "Processing", "Staged", "Completed", "RolledBack", "Failed"]);
const TASK = z.strictObject({
  taskId: z.enum(MIGRATION_TASKS),
  status: z.enum(["Pending", "Processing", "Completed", "Failed"]),
});
const MIGRATION_INITIATED = z
  .strictObject({
    id: z.string().describe("The cloud node's serial number"),
    name: z.string(),
    legacyOuId: z.string().describe("The 1.0 organization the panel belongs to"),
    status: MIGRATION_STATUS,
    createdAt: z.string(),
    tasks: z.array(TASK),
  })
  .describe("A migration as initiate answers it");
const MIGRATION = z
  .strictObject({
    ...MIGRATION_INITIATED.shape,
    backupUrl: z.string().optional().describe("Once EXPORT_LEGACY_DATA has Completed"),
    ouId: z.string().optional().describe("The 2.0 customer, once CREATE_CUSTOMER has Completed"),
    systemId: z.string().optional().describe("Once IMPORT_SYSTEM_DATA has Completed"),
    cloudNodeId: z.string().optional().describe("The UUID the cloud node gets, once IMPORT_SYSTEM_DATA has Completed"),
    tasks: z.array(
      TASK.extend({
        startedAt: z.string().optional().describe("Once the task started"),
        updatedAt: z.string().optional().describe("Once the task started"),
      }),
    ),
  })
  .describe("A migration as the status read answers it");
const PREFLIGHT_DEVICE = {
  id: z.number(),
  connection: z.number(),
  wirelessAddress: z.string().nullable(),
  description: z.string(),
};
const PREFLIGHT = z
  .strictObject({
    ok: z.boolean(),
    warnings: z.strictObject({ integrations: z.array(z.string()) }),
    errors: z.strictObject({
      softwareVersion: z.record(z.string(), z.string()),
      integrations: z.array(z.string()),
      personalInfoMissing: z.boolean(),
      controllerOffline: z.array(z.strictObject(PREFLIGHT_DEVICE)),
      controllerVersion: z.array(
        z.strictObject({
          ...PREFLIGHT_DEVICE,
          firmwareVersion: z.string(),
          stageFirmwareVersion: z.string(),
          linkType: z.string(),
          updateRunning: z.boolean(),
        }),
      ),
      legacyDevice: z.array(z.strictObject(PREFLIGHT_DEVICE)),
      invalidDevice: z.array(z.strictObject({ ...PREFLIGHT_DEVICE, propDelay: z.number() })),
    }),
  })
  .describe("The preflight check");
const ID_MAPPING = z.strictObject({
  id: z.string(),
  legacyId: z.number().int(),
  serialNumber: z.string(),
  type: z.string(),
  systemId: z.string(),
});

/** The migration routes (1.0 to 2.0), served in front of the data app while a panel is served. */
export function migrationRoutes(): DeclaredRoute[] {
  const specs: Spec[] = [
    {
      method: "GET",
      path: "/api/migration/:panelId/preflight-check",
      summary: "Preflight a migration",
      tag: "migration",
      by: "migration",
      ok: { 200: PREFLIGHT },
    },
    {
      method: "POST",
      path: "/api/migration/initiate",
      summary: "Start a migration",
      tag: "migration",
      by: "migration",
      body: z.looseObject({}),
      ok: { 200: MIGRATION_INITIATED },
    },
    {
      method: "GET",
      path: "/api/migration/:panelId/backup",
      summary: "The exported panel",
      tag: "migration",
      by: "migration",
      ok: { 200: ANY_JSON },
    },
    {
      method: "GET",
      path: "/api/migration/:panelId",
      summary: "The migration's status",
      tag: "migration",
      by: "migration",
      ok: { 200: MIGRATION },
    },
    {
      method: "POST",
      path: "/api/migration/:panelId/complete",
      summary: "Complete a migration",
      tag: "migration",
      by: "migration",
      ok: { 204: null },
    },
    {
      method: "POST",
      path: "/api/migration/:panelId/rollback",
      summary: "Roll a migration back",
      tag: "migration",
      by: "migration",
      ok: { 204: null },
    },
    {
      method: "GET",
      path: "/:systemId/id-mapping/:cloudNodeId",
      summary: "Id mappings of a migrated panel",
      tag: "migration",
      by: "migration",
      query: z.object({ type: z.string().optional() }),
      ok: { 200: z.array(ID_MAPPING) },
    },
  ];
  return specs.map((s) => route("service", { ...s, errors: [...ERRORS, 409] }));
}
