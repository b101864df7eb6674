// The declarations of the login and consent page, `GET|POST /oauth2/auth` (semantics I60–I69). Every
// answer is an HTML page or a 303 redirect, so no status has a JSON schema (null: not JSON).
import { z } from "zod";
import { type DeclaredRoute, type RouteAccess, paramsOf } from "./declaredRoute.js";

const PUBLIC: RouteAccess = { roles: [], scope: "public" };

const QUERY = z.object({
  client_id: z.string().describe("The application's client id (required)"),
  redirect_uri: z.string().describe("One of the application's registered redirect URIs, exactly (required)"),
  response_type: z.string().describe("`code` (required)"),
  scope: z.string().describe("`openid`, or `openid offline_access` for a refresh token (required)"),
  nonce: z.string().optional().describe("OpenID Connect nonce, copied into the ID token"),
  code_challenge: z.string().optional().describe("PKCE: the base64url SHA-256 of the code_verifier (43 characters)"),
  code_challenge_method: z.string().optional().describe("PKCE: `S256` (the only method)"),
  prompt: z.string().optional().describe("`consent` (required with offline_access), `login` or `select_account`"),
  state: z.string().optional().describe("Returned unchanged to the redirect URI (at most 2,048 characters)"),
});

const html = (statuses: readonly number[]) => Object.fromEntries(statuses.map((s) => [s, null]));

/** The routes of the login and consent page. */
export function authorizeRouteDeclarations(): DeclaredRoute[] {
  const path = "/oauth2/auth";
  return [
    {
      id: "oauthAuthorizePage",
      method: "GET",
      path,
      host: "accounts",
      summary:
        "The login page of the authorization code flow (HTML): an unknown client or redirect URI is a 400 page; other problems are sent to the redirect URI (303) as `error` and `state`",
      tags: ["OAuth 2.0"],
      params: paramsOf(path),
      query: QUERY,
      answers: html([200, 303, 400, 500, 503]),
      access: PUBLIC,
      by: "oauth",
    },
    {
      id: "oauthAuthorizeForm",
      method: "POST",
      path,
      host: "accounts",
      summary:
        "The login and consent forms (application/x-www-form-urlencoded, at most 16 KiB, with the page's `txn` and `csrf` fields and its cookie): `step=login` answers the consent page, `step=consent` a 303 to the redirect URI with `code` or `error=access_denied`, and `state`",
      tags: ["OAuth 2.0"],
      params: paramsOf(path),
      answers: html([200, 303, 400, 401, 403, 413, 415, 429, 500, 503]),
      access: PUBLIC,
      by: "oauth",
    },
  ];
}
