// The accounts host's routes of the token endpoint, the JWK Set and system tokens (semantics
// I20–I32). `POST /oauth2/token` speaks RFC 6749: a form body, the client authenticated by HTTP
// Basic only, every refusal as `{error, error_description}`, nothing cached; the grants themselves
// are service/identity/oauthTokens.ts's. `POST /api/systems/{system_id}/token` checks as the other
// accounts routes do: the token (401), the system's reach (404), the caller's kind (403), the method
// (405), the query (400).
import type { Context, Env, Hono } from "hono";
import { decodeJwt } from "jose";
import { bearerToken } from "../../service/auth/bearerToken.js";
import { grantAt } from "../../service/auth/grant.js";
import { HttpError, jsonResponse } from "../../service/httpError.js";
import {
  ClientAuthenticator,
  type ClientCredentials,
  OAuthError,
  exchangeGrant,
  invalidClient,
} from "../../service/identity/oauthTokens.js";
import { systemAudience } from "../../service/identity/tokenResolver.js";
import { clientKey } from "./connectionGuard.js";
import type { IdentityRouteDeps } from "./identityDeps.js";
import { nodeBodyOf } from "./nodeRequests.js";
import { refuseOtherQuery } from "./parseQuery.js";
import { allow } from "./dataPipeline.js";
import { readBodyBytes } from "./readJsonBody.js";

/** The largest form body the token endpoint reads (I20): a grant's parameters are a few hundred bytes. */
export const MAX_FORM_BYTES = 16 * 1024;
/** How long a system token is valid, s (I30). */
export const SYSTEM_TOKEN_LIFETIME_S = 3600;
/** How long a client may cache the JWK Set, s (I31): a verifier meeting an unknown `kid` reads it again. */
const JWKS_MAX_AGE_S = 300;

/** A token endpoint answer: JSON, never stored by a cache (RFC 6749 §5.1). */
function oauthAnswer(status: number, body: unknown, indent: number, headers: Record<string, string> = {}): Response {
  return jsonResponse(status, body, indent, { pragma: "no-cache", ...headers });
}

function oauthRefusal(e: OAuthError, indent: number): Response {
  return oauthAnswer(e.status, { error: e.error, error_description: e.message }, indent, { ...e.headers });
}

const FORM = "application/x-www-form-urlencoded";
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The parameters of a token request's form body (I20): each at most once, empty ones dropped (RFC 6749
 * §3.1), the client's credentials never among them. @throws OAuthError invalid_request
 */
async function formParameters(request: Request): Promise<Map<string, string>> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== FORM) throw new OAuthError("invalid_request", `The request body must be sent as ${FORM}.`);
  let bytes: Uint8Array;
  try {
    bytes = await readBodyBytes(request, MAX_FORM_BYTES);
  } catch (e) {
    // The endpoint answers every refusal in RFC 6749's shape (I20).
    if (e instanceof HttpError && e.status === 413)
      throw new OAuthError("invalid_request", `The request body is larger than ${MAX_FORM_BYTES} bytes.`);
    throw new OAuthError("invalid_request", "The request body ended before it was complete.");
  }
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new OAuthError("invalid_request", "The request body is not valid UTF-8.");
  }
  const params = new Map<string, string>();
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (seen.has(name))
      throw new OAuthError("invalid_request", `The parameter ${name.slice(0, 64)} is given more than once.`);
    seen.add(name);
    if (value !== "") params.set(name, value);
  }
  if (params.has("client_id") || params.has("client_secret"))
    throw new OAuthError(
      "invalid_request",
      "Send the client's credentials in Authorization: Basic base64(client_id:client_secret), not in the body.",
    );
  return params;
}

/** application/x-www-form-urlencoded decoding of one Basic part (RFC 6749 §2.3.1); null when malformed. */
function formDecoded(part: string): string | null {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    return null;
  }
}

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** The client's credentials of `Authorization: Basic …`. @throws OAuthError 401 when missing or malformed */
function basicCredentials(header: string | null): ClientCredentials {
  if (header === null)
    throw invalidClient("Client authentication required: send Authorization: Basic base64(client_id:client_secret).");
  const m = BASIC.exec(header);
  const decoded = m === null ? null : Buffer.from(m[1]!, "base64").toString("utf8");
  const colon = decoded === null ? -1 : decoded.indexOf(":");
  const clientId = colon < 0 ? null : formDecoded(decoded!.slice(0, colon));
  const secret = colon < 0 ? null : formDecoded(decoded!.slice(colon + 1));
  if (clientId === null || secret === null || clientId === "")
    throw invalidClient("Malformed Authorization header: expected Basic base64(client_id:client_secret).");
  return { clientId, secret };
}

/** The counted address of the client: the socket's peer (a proxy's own when behind one). */
function addressOf(request: Request): string | null {
  const incoming = nodeBodyOf(request) as { socket?: { remoteAddress?: string } } | undefined;
  const address = incoming?.socket?.remoteAddress;
  return address === undefined ? null : clientKey(address);
}

/** `POST /oauth2/token` (I20–I29). */
function tokenEndpoint(deps: IdentityRouteDeps): (c: Context) => Promise<Response> {
  const clients = new ClientAuthenticator(deps.now);
  return async (c) => {
    allow(c.req.method, ["POST"]);
    try {
      const request = c.req.raw;
      const params = await formParameters(request);
      const credentials = basicCredentials(request.headers.get("authorization"));
      const app = await clients.authenticate(deps.registry, credentials, addressOf(request));
      const ctx = { registry: deps.registry, keys: deps.keys, now: deps.now, issuer: deps.publicUrl(c) };
      return oauthAnswer(200, await exchangeGrant(ctx, app, params), deps.indent);
    } catch (e) {
      if (e instanceof OAuthError) return oauthRefusal(e, deps.indent);
      throw e;
    }
  };
}

/** The client an ID token was issued to (`azp`, else its `aud`), to name it in a system token; undefined for other tokens. */
function clientOfToken(c: Context): string | undefined {
  const token = bearerToken(c.req.header("authorization") ?? null);
  if (token === null) return undefined;
  try {
    const claims = decodeJwt(token);
    const azp = claims.azp ?? claims.aud;
    return typeof azp === "string" ? azp : undefined;
  } catch {
    return undefined;
  }
}

/** `POST /api/systems/{system_id}/token` (I30): a system token of the caller for one system it reaches. */
function systemTokenRoute(deps: IdentityRouteDeps): (c: Context) => Promise<Response> {
  const { registry } = deps;
  return async (c) => {
    const { grant } = await deps.identify(c);
    // A shared store: a system another process created a moment ago is read first.
    await registry.refresh();
    const id = c.req.param("systemId")!;
    const tenant = registry.tenantByKey(id);
    const at =
      tenant?.kind === "system" ? grantAt(grant, tenant.organization, (o) => registry.ancestors(o), tenant.key) : null;
    if (tenant === undefined || at === null)
      throw new HttpError(404, "Unknown system id.", [{ path: "system_id", message: `Unknown system id "${id}".` }]);
    if (grant.permissions === undefined || grant.user === undefined)
      throw new HttpError(
        403,
        "System tokens are for users and applications; a tokens-file token works on the systems host directly.",
      );
    allow(c.req.method, ["POST"]);
    refuseOtherQuery(new URL(c.req.url), []);
    const azp = clientOfToken(c);
    const claims = { sub: grant.user.id, aud: systemAudience(id), ...(azp !== undefined ? { azp } : {}) };
    const token = await deps.keys.sign(claims, deps.publicUrl(c), SYSTEM_TOKEN_LIFETIME_S);
    return jsonResponse(200, { token, expires_in: SYSTEM_TOKEN_LIFETIME_S }, deps.indent);
  };
}

/** Registers the routes of the token endpoint, the JWK Set and system tokens, as oauthDeclarations.ts declares them. */
export function registerOAuthRoutes<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  app.all("/oauth2/token", tokenEndpoint(deps));
  app.all("/oauth2/jwks", (c) => {
    allow(c.req.method, ["GET"]);
    const answer = jsonResponse(200, { keys: deps.keys.jwks().keys }, deps.indent);
    // Public keys only: any cache may keep them a while (I31).
    answer.headers.set("cache-control", `public, max-age=${JWKS_MAX_AGE_S}`);
    return answer;
  });
  app.all("/api/systems/:systemId/token", systemTokenRoute(deps));
}
