// The routes of the live systems, generated from their route tables (src/live/routes.ts,
// src/legacy1/live/panelRoutes.ts): the tables stay the one place their paths are written.
import { z } from "zod";
import { routeEntries } from "../../../live/routes.js";
import { panelRouteEntries } from "../../../legacy1/live/panelRoutes.js";
import { createCredential } from "../../../live/operations/credentials.js";
import { setThreatLevel } from "../../../live/operations/hardware.js";
import { forgiveArea } from "../../../live/operations/areas.js";
import { reads } from "../../../live/operations/reads.js";
import { panelReads } from "../../../legacy1/live/panelReads.js";
import { queryKeysOf } from "../../../live/queryKeys.js";
import type { Role } from "../../../service/auth/grant.js";
import { CONNECTION_STATUS, HARDWARE_ITEM, SYNC_STATUS, WIRELESS_ITEM } from "../../../service/nodes/nodeStatus.js";
import { SEED_ANSWERS } from "./seedAnswers.js";
import {
  AUTH_ERRORS,
  COMMON_ERRORS,
  type DeclaredRoute,
  type HttpMethod,
  ID_ANSWER,
  answersOf,
  paramsOf,
} from "./declaredRoute.js";

/**
 * Reads whose answer is a live reading of the hardware, by the live system's handler: this server
 * talks to no hardware, so they answer 501 after the live system's own checks (docs/semantics.md H30).
 */
export const LIVE_READINGS: ReadonlyMap<unknown, string> = new Map<unknown, string>([
  [reads.hardware, "The hardware list of a cloud node"],
  [reads.wirelessDiagnostics, "The wireless diagnostics of a cloud node"],
  [panelReads.hardware, "The hardware list of this cloud node"],
  [panelReads.wirelessDiagnostics, "The wireless diagnostics of this cloud node"],
]);

/** The 2.0 readings the service answers from a node's reports (N11, N27), with their answers. */
const REPORTED = new Map<unknown, Record<number, z.ZodType | null>>([
  [reads.hardware, { 200: z.array(HARDWARE_ITEM) }],
  [reads.wirelessDiagnostics, { 200: z.array(WIRELESS_ITEM) }],
]);

/** The first path segment of a 2.0 route whose writes a manager may send (docs/semantics.md H20). */
const MANAGED = new Set(["holders", "groups", "rules"]);
const ALL_ROLES: readonly Role[] = ["admin", "integrator", "manager", "reporter"];

/** `createHolder` → "Create holder"; a read named `holders` → "Read holders". */
function summaryOf(method: HttpMethod, handler: unknown, pattern: string): string {
  const name = typeof handler === "function" ? handler.name : "";
  const words = name
    .replace(/([A-Z])/g, " $1")
    .toLowerCase()
    .trim();
  if (words === "" || words === "checked") return `${method} ${pattern}`;
  return method === "GET" ? `Read ${words}` : words.charAt(0).toUpperCase() + words.slice(1);
}

/** The query parameters a read takes, all optional strings (the live system checks their values). */
function queryOf(handler: unknown): z.ZodObject | undefined {
  const keys = queryKeysOf(handler);
  if (keys === undefined || keys.length === 0) return undefined;
  return z.object(Object.fromEntries(keys.map((k) => [k, z.string().optional()])));
}

/**
 * What a read answers: the resource's declared shape where the API lists its fields (seedAnswers.ts), else
 * an object for a path ending in an id (or RSOP), a list otherwise.
 */
function readAnswer(pattern: string, id: z.ZodType, handler: unknown): z.ZodType {
  const declared = SEED_ANSWERS.get(handler);
  if (declared !== undefined) return declared;
  const last = pattern.split("/").at(-1) ?? "";
  if (pattern.endsWith("/rsop/holders") || pattern.endsWith("/rsop/persons"))
    return z.looseObject({ holders: z.array(z.looseObject({ id })).optional() });
  // Calendars (an addition, docs/semantics.md C1) are declared field by field, as the snapshot has them.
  if (pattern === "/calendars/:calendarId") return CALENDAR;
  if (pattern === "/calendars") return z.array(CALENDAR);
  if (pattern === "/areas/:areaId") return AREA;
  if (pattern === "/areas") return z.array(AREA);
  // On the service a cloud node carries its reported status (N10); an embedded system's has none.
  if (pattern === "/cloud-nodes/:cloudNodeId") return CLOUD_NODE;
  if (pattern === "/cloud-nodes") return z.array(CLOUD_NODE);
  if (last.startsWith(":") || ["info", "config"].includes(last)) return z.looseObject({});
  // The facility codes in use, as strings.
  if (last === "facility-codes") return z.array(z.string());
  return z.array(z.looseObject({}));
}

/** A calendar as answered (docs/semantics.md C1): its days as dates and as yearly month-days. */
const CALENDAR = z.object({
  id: z.string(),
  name: z.string(),
  partition: z.string().nullable(),
  dates: z.array(z.string().describe("A local calendar date YYYY-MM-DD")),
  recurring: z.array(z.object({ month: z.number().int(), day: z.number().int() })),
});

/**
 * An area as answered (docs/semantics.md AB1): its doors in and out, what its state may refuse, and
 * the operator's commands so far (AB6), absent when never given.
 */
const AREA = z.object({
  id: z.string(),
  name: z.string(),
  entries: z.array(z.string().describe("A device id: an allowed scan here moves the holder in")),
  exits: z.array(z.string().describe("A device id: an allowed scan here moves the holder out")),
  antiPassback: z
    .object({
      mode: z.enum(["hard", "soft"]),
      resetSeconds: z.number().int().describe("A second entry is allowed again after this long; 0: never by time"),
    })
    .nullable(),
  occupancyLimit: z.number().int().nullable(),
  lastReset: z.string().nullable().optional().describe("When the area was last emptied (POST …/reset), ISO 8601"),
  forgiven: z
    .record(z.string(), z.string())
    .optional()
    .describe("Per holder id, when its entry was last forgotten (POST …/forgive), ISO 8601"),
});

/**
 * A cloud node as answered: its `threatLevel` (TL1, 0 when none is set); its `syncStatus` and
 * `connectionStatus` on the service only (N10).
 */
const CLOUD_NODE = z.looseObject({
  threatLevel: z.number().int().min(0).max(255).describe("The node's threat level: 0 normal, up to 255"),
  credentialResetsPerMonth: z
    .number()
    .int()
    .min(0)
    .max(100)
    .optional()
    .describe("Self-help credential resets a holder may make per month at this node; absent: 1 (I85)"),
  syncStatus: SYNC_STATUS.optional(),
  connectionStatus: CONNECTION_STATUS.optional(),
});

/** Write bodies declared field by field: the additions' commands (TL1, AB6), whose fields are few and fixed. */
const BODIES = new Map<unknown, z.ZodType>([
  [
    setThreatLevel,
    z.object({ level: z.number().int().min(0).max(255).describe("The node's threat level: 0 normal, up to 255") }),
  ],
  [forgiveArea, z.object({ holderId: z.string().describe("The holder whose entry the area forgets") })],
]);

/** A credential created: its id, and a digital one's invite id (I81; null where no invitation is made, L16). */
const CREDENTIAL_CREATED = ID_ANSWER.extend({
  inviteId: z
    .string()
    .nullable()
    .optional()
    .describe(
      "A digital credential's invite id, usable in a custom activation workflow: always in a digital credential's answer, null on a server that makes no invitations; absent for a card",
    ),
});

interface TableEntry {
  readonly method: HttpMethod;
  readonly pattern: string;
  readonly handler: unknown;
}

/** One declaration per route-table entry, below `prefix` (`/:systemId` for 2.0, nothing for 1.0). */
function declare(
  entries: readonly TableEntry[],
  prefix: string,
  host: "systems" | "panel",
  id: z.ZodType,
): DeclaredRoute[] {
  return entries.map(({ method, pattern, handler }) => {
    const path = `${prefix}${pattern}`;
    const first = pattern.split("/")[host === "panel" ? 2 : 1] ?? "";
    const read = method === "GET";
    const roles: readonly Role[] =
      host === "panel"
        ? ["admin", "integrator"]
        : read
          ? ALL_ROLES
          : MANAGED.has(first)
            ? ["admin", "integrator", "manager"]
            : ["admin", "integrator"];
    const reading = LIVE_READINGS.has(handler);
    const query = read ? queryOf(handler) : undefined;
    // The hardware list and wireless diagnostics: the service answers the node's last report (N11,
    // N27), an embedded system 501.
    const ok: Record<number, z.ZodType | null> = read
      ? reading
        ? (REPORTED.get(handler) ?? {})
        : { 200: readAnswer(pattern, id, handler) }
      : { 200: ID_ANSWER, 201: handler === createCredential ? CREDENTIAL_CREATED : ID_ANSWER, 204: null };
    const errors = [...AUTH_ERRORS, ...COMMON_ERRORS, ...(read ? [] : [409]), ...(reading ? [501] : [])];
    return {
      id: `${host}.${method.toLowerCase()}${path.replace(/[/:{}_-]+(\w)/g, (_, c: string) => c.toUpperCase())}`,
      method,
      path,
      host,
      summary: summaryOf(method, handler, pattern),
      tags: [first],
      params: paramsOf(path),
      ...(query !== undefined ? { query } : {}),
      ...(read
        ? {}
        : {
            body:
              BODIES.get(handler) ??
              z.looseObject({}).describe(`The ${first} fields, as the systems interface names them.`),
          }),
      answers: answersOf(ok, errors),
      access: { roles, scope: host === "systems" && (read || MANAGED.has(first)) ? "partitions" : "all" },
      by: "live",
      handler,
    };
  });
}

/** Every route of a 2.0 system's table, below `/:systemId`. */
export function systemLiveRoutes(): DeclaredRoute[] {
  const entries = routeEntries().map(([method, pattern, handler]) => ({ method, pattern, handler }));
  return declare(entries, "/:systemId", "systems", z.string());
}

/** Every route of the 1.0 panel's table (`/api/…`). */
export function panelLiveRoutes(): DeclaredRoute[] {
  const entries = panelRouteEntries().map(([method, pattern, handler]) => ({ method, pattern, handler }));
  return declare(entries, "", "panel", z.number());
}
