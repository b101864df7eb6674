// What one HTTP route is, declared once: method, path, parameters, body and answers (zod), and who
// may call it. The hono registration, the authentication and scope checks and the OpenAPI document
// (/openapi.json) are all made from these declarations.
import { z } from "zod";
import type { Role } from "../../../service/auth/grant.js";

/** Which server part answers a route: a 2.0 system, a 1.0 panel, the accounts (webhooks), the engine. */
export type RouteHost = "systems" | "panel" | "accounts" | "engine" | "service";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/**
 * Who may call a route: the roles whose tokens are let through, and how far a manager's or
 * reporter's partitions reach (`partitions`: answered on the token's view, docs/semantics.md H19;
 * `all`: the route names holders of every partition, so admin and integrator only, H21; `public`:
 * no token at all).
 */
export interface RouteAccess {
  readonly roles: readonly Role[];
  readonly scope: "partitions" | "all" | "public";
}

/** One route, as served and as documented. */
export interface DeclaredRoute {
  /** Unique and stable: the OpenAPI operationId. */
  readonly id: string;
  readonly method: HttpMethod;
  /** Hono syntax, below the base path: `/:systemId/holders/:holderId`. */
  readonly path: string;
  readonly host: RouteHost;
  readonly summary: string;
  readonly tags: readonly string[];
  /** One string schema per `:name` of the path. */
  readonly params: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  /** The media type of `body` in the document; default `application/json` (the token endpoint's is a form). */
  readonly bodyType?: string;
  /** Status → the JSON of the answer (null: no body, as a 204). */
  readonly answers: Readonly<Record<number, z.ZodType | null>>;
  readonly access: RouteAccess;
  /** What answers it: the live system's route table, the engine, or a part of the service. */
  readonly by:
    | "live"
    | "engine"
    | "preview"
    | "report"
    | "health"
    | "subscription"
    | "importPreview"
    | "migration"
    | "organization"
    | "panelRegistration"
    | "oauth"
    | "permission"
    | "credential"
    | "node";
  /** For a live route: the live system's handler (handed to it with the params, not matched again). */
  readonly handler?: unknown;
}

/** The one error shape of every refusal (service/httpError.ts). */
export const ERROR_SCHEMA = z
  .object({
    error: z.object({
      status: z.number().int(),
      message: z.string(),
      issues: z.array(z.object({ path: z.string(), message: z.string() })),
    }),
  })
  .meta({ id: "Error" });

/** The refusals any route with a token may answer. */
export const AUTH_ERRORS = [401, 403] as const;
/** Refusals of a route's own checks, of the server's bounds, or of a store out of reach. */
export const COMMON_ERRORS = [400, 404, 405, 413, 415, 500, 503] as const;

/** An answer schema per status: `ok` for the successes, the error shape for every error status. */
export function answersOf(
  ok: Readonly<Record<number, z.ZodType | null>>,
  errors: readonly number[],
): Readonly<Record<number, z.ZodType | null>> {
  const out: Record<number, z.ZodType | null> = { ...ok };
  for (const s of errors) out[s] = ERROR_SCHEMA;
  return out;
}

/** The `:name` parameters of a hono path, as a zod object of strings. */
export function paramsOf(path: string): z.ZodObject {
  const shape: Record<string, z.ZodString> = {};
  for (const seg of path.split("/")) if (seg.startsWith(":")) shape[seg.slice(1)] = z.string().min(1);
  return z.object(shape);
}

/** `/:systemId/holders/:holderId` → `/{systemId}/holders/{holderId}` (OpenAPI path template). */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]\w*)/g, "{$1}");
}

/** How many literal segments a path has: of two paths that match a request, the more literal one wins. */
export function literalSegments(path: string): number {
  return path.split("/").filter((s) => s !== "" && !s.startsWith(":")).length;
}

/** A permissive object with the key fields named (the full shapes are in the systems interface). */
export const entity = (id: z.ZodType = z.string()) => z.looseObject({ id });
export const ID_ANSWER = z.looseObject({ id: z.union([z.string(), z.number()]).optional() });
export const PAGING_QUERY = z.object({
  page: z.string().optional().describe("0-based page, default 0"),
  per_page: z.string().optional().describe("1 to 100, default 10"),
});
export const ANY_JSON = z.unknown();
