// The declarations of the token endpoint, the JWK Set and system tokens (semantics I20–I32), as
// oauthRoutes.ts serves them. The token endpoint answers its refusals in RFC 6749's own shape
// (`{error, error_description}`), not the service's error shape; only what the front or the server
// answer (405, 500) is in the service's.
import { z } from "zod";
import { type DeclaredRoute, ERROR_SCHEMA, type RouteAccess, paramsOf } from "./declaredRoute.js";

const PUBLIC: RouteAccess = { roles: [], scope: "public" };

/** A refusal of the token endpoint (RFC 6749 §5.2). */
const OAUTH_ERROR = z
  .object({
    error: z.enum(["invalid_request", "invalid_client", "invalid_grant", "unsupported_grant_type"]),
    error_description: z.string(),
  })
  .meta({ id: "OAuthError" });

/** A successful token answer (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3). */
const TOKEN_ANSWER = z
  .object({
    token_type: z.literal("Bearer"),
    access_token: z.string().describe("Random and unusable: present the id_token instead"),
    id_token: z.string().describe("An ES256 JWT, verifiable with /oauth2/jwks"),
    expires_in: z.number().int().describe("The ID token's lifetime, s (300)"),
    refresh_token: z
      .string()
      .optional()
      .describe("With scope offline_access; each is used once and replaced by the next"),
    scope: z.string().optional(),
  })
  .meta({ id: "TokenAnswer" });

const JWKS = z
  .object({
    keys: z.array(
      z.looseObject({
        kty: z.string(),
        kid: z.string(),
        crv: z.string().optional(),
        x: z.string().optional(),
        y: z.string().optional(),
        alg: z.string().optional(),
        use: z.string().optional(),
      }),
    ),
  })
  .meta({ id: "JwkSet" });

const SYSTEM_TOKEN = z
  .object({
    token: z.string().describe("An ES256 JWT valid on that system's routes only"),
    expires_in: z.number().int().describe("Its lifetime, s (3600)"),
  })
  .meta({ id: "SystemToken" });

/** The routes of the token endpoint, the JWK Set and system tokens. */
export function oauthRouteDeclarations(): DeclaredRoute[] {
  const base = { host: "accounts", by: "oauth" } as const;
  return [
    {
      ...base,
      id: "oauth.token",
      method: "POST",
      path: "/oauth2/token",
      summary:
        "OAuth 2.0 token endpoint: an ID token for client_credentials, authorization_code or refresh_token. " +
        "Form body (application/x-www-form-urlencoded, at most 16 KiB): grant_type, and code and redirect_uri " +
        "(authorization_code) or refresh_token (refresh_token). The client authenticates by HTTP Basic only.",
      tags: ["oauth"],
      params: paramsOf("/oauth2/token"),
      body: z.object({
        grant_type: z.enum(["client_credentials", "authorization_code", "refresh_token"]),
        code: z.string().optional().describe("authorization_code: the code the redirect URI received"),
        redirect_uri: z
          .string()
          .optional()
          .describe("authorization_code: the redirect URI of the authorization request"),
        refresh_token: z.string().optional().describe("refresh_token: the newest refresh token of the chain"),
      }),
      bodyType: "application/x-www-form-urlencoded",
      answers: { 200: TOKEN_ANSWER, 400: OAUTH_ERROR, 401: OAUTH_ERROR, 429: OAUTH_ERROR, 500: ERROR_SCHEMA },
      access: PUBLIC,
    },
    {
      ...base,
      id: "oauth.jwks",
      method: "GET",
      path: "/oauth2/jwks",
      summary: "The JWK Set: the public keys that verify ID tokens and system tokens",
      tags: ["oauth"],
      params: paramsOf("/oauth2/jwks"),
      answers: { 200: JWKS, 500: ERROR_SCHEMA },
      access: PUBLIC,
    },
    {
      ...base,
      id: "oauth.systemToken",
      method: "POST",
      path: "/api/systems/:systemId/token",
      summary: "A system token (1 hour) of the caller's ID token, valid on that system's host only",
      tags: ["oauth"],
      params: paramsOf("/api/systems/:systemId/token"),
      answers: {
        200: SYSTEM_TOKEN,
        400: ERROR_SCHEMA,
        401: ERROR_SCHEMA,
        403: ERROR_SCHEMA,
        404: ERROR_SCHEMA,
        500: ERROR_SCHEMA,
      },
      access: { roles: ["admin", "integrator", "manager", "reporter"], scope: "partitions" },
    },
  ];
}
