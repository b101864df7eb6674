// The login and consent page of the accounts host, `GET|POST /oauth2/auth` (semantics I60–I69): the
// authorization code flow of OAuth 2.0 (RFC 6749 §4.1) without a server session. GET checks the
// client and its redirect URI (a refusal before they hold is a page here, never a redirect), then
// the other parameters (refused at the redirect URI), and shows the login form with the signed
// transaction and the CSRF field; POST `step=login` checks the password (rate limited) and shows
// the consent form with a login proof; POST `step=consent` answers the redirect URI with a code or
// `access_denied`. Every answer is HTML (or a 303) with a strict Content-Security-Policy.
import type { Context, Env, Hono } from "hono";
import { HttpError } from "../../service/httpError.js";
import { appById, checkUserPassword, normalEmail, userById } from "../../service/identity/accounts.js";
import { issueCode } from "../../service/identity/codes.js";
import {
  type AuthRequest,
  csrfField,
  csrfMatches,
  isCsrfCookie,
  newCsrfCookie,
  openLogin,
  openTransaction,
  sealLogin,
  sealTransaction,
} from "../../service/identity/consent.js";
import { FailureLimiter } from "../../service/identity/rateLimit.js";
import type { AppRecord } from "../../service/identity/records.js";
import { serviceSecret } from "../../service/identity/secret.js";
import { consentHtml, loginHtml, messageHtml } from "./authorizeHtml.js";
import type { IdentityRouteDeps } from "./identityDeps.js";
import { nodeBodyOf } from "./nodeRequests.js";
import { readBodyBytes } from "./readJsonBody.js";

/** The CSRF cookie's name (I62). */
export const CSRF_COOKIE = "rsop_csrf";
/** The largest form body, bytes (I65). */
export const MAX_FORM_BYTES = 16 * 1024;
/** The longest `state` carried, characters: it travels in the signed transaction of every form. */
export const MAX_STATE = 2048;
const WINDOW_MS = 15 * 60_000;
const WRONG_LOGIN = "Email or password is wrong.";
const START_AGAIN = "Go back to the application and start signing in again.";

/** The security headers of every answer (I66); `redirectOrigin` is where a form may end up after its 303. */
function securityHeaders(redirectOrigin: string | null, extra: Readonly<Record<string, string>> = {}): Headers {
  const h = new Headers(extra);
  h.set(
    "content-security-policy",
    // Chromium applies form-action to the redirect that answers a form POST: the client's origin is allowed.
    `default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'${redirectOrigin === null ? "" : ` ${redirectOrigin}`}; frame-ancestors 'none'; base-uri 'none'`,
  );
  h.set("x-frame-options", "DENY");
  h.set("cache-control", "no-store");
  h.set("referrer-policy", "no-referrer");
  h.set("x-content-type-options", "nosniff");
  return h;
}

function htmlAnswer(
  status: number,
  html: string,
  redirectOrigin: string | null,
  extra: Readonly<Record<string, string>> = {},
): Response {
  const headers = securityHeaders(redirectOrigin, extra);
  headers.set("content-type", "text/html; charset=utf-8");
  return new Response(html, { status, headers });
}

/** `redirectUri` with `params` appended to its query as it is (I67). */
export function redirectTo(redirectUri: string, params: Readonly<Record<string, string | null>>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null) query.append(k, v);
  const joiner = !redirectUri.includes("?") ? "?" : redirectUri.endsWith("?") || redirectUri.endsWith("&") ? "" : "&";
  return `${redirectUri}${joiner}${query.toString()}`;
}

function redirectAnswer(redirectUri: string, params: Readonly<Record<string, string | null>>): Response {
  const headers = securityHeaders(new URL(redirectUri).origin, { location: redirectTo(redirectUri, params) });
  return new Response(null, { status: 303, headers });
}

const TITLES: Readonly<Record<number, string>> = {
  400: "This sign-in request cannot be used",
  401: "Sign-in failed",
  403: "Sign-in refused",
  405: "Method not allowed",
  413: "Too large",
  415: "Unsupported form",
  429: "Too many attempts",
};

/** The page of a refusal: its message, no form. */
function refusalPage(e: HttpError, redirectOrigin: string | null): Response {
  return htmlAnswer(e.status, messageHtml(TITLES[e.status] ?? "Something went wrong", e.message), redirectOrigin, {
    ...e.headers,
  });
}

/** A refusal sent back to the verified redirect URI (RFC 6749 §4.1.2.1). */
class RedirectRefusal extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

/** The one value of a parameter; a repeated one is refused (RFC 6749 §3.1). */
function single(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) throw new RedirectRefusal("invalid_request", `The parameter ${name} is repeated.`);
  return all[0];
}

/** The application and the redirect URI of a request, or the 400 page: never redirect to an unverified URI (I60). */
function verifiedClient(query: URLSearchParams, appOf: (id: string) => AppRecord | undefined): AppRecord {
  const ids = query.getAll("client_id");
  const uris = query.getAll("redirect_uri");
  const app = ids.length === 1 && ids[0] !== "" ? appOf(ids[0]!) : undefined;
  if (app === undefined)
    throw new HttpError(400, `The request names no known application (client_id). ${START_AGAIN}`, [
      { path: "query.client_id", message: "Must name a registered application, once." },
    ]);
  if (uris.length !== 1 || !app.redirectUris.includes(uris[0]!))
    throw new HttpError(400, `The redirect_uri is not registered for ${app.name}. ${START_AGAIN}`, [
      { path: "query.redirect_uri", message: "Must be one of the application's registered redirect URIs, exactly." },
    ]);
  return app;
}

/** The scope asked: `openid`, with `offline_access` for a refresh token, nothing else (I60). */
function scopeOf(query: URLSearchParams, prompts: readonly string[]): string {
  const scope = single(query, "scope");
  if (scope === undefined || scope.trim() === "") throw new RedirectRefusal("invalid_request", "scope is required.");
  const words = new Set(scope.split(" ").filter((w) => w !== ""));
  if (!words.has("openid") || [...words].some((w) => w !== "openid" && w !== "offline_access"))
    throw new RedirectRefusal("invalid_scope", "scope must be openid, or openid offline_access.");
  if (!words.has("offline_access")) return "openid";
  if (!prompts.includes("consent"))
    throw new RedirectRefusal("invalid_request", "offline_access needs prompt=consent.");
  return "openid offline_access";
}

/**
 * The parameters after the client: response_type, prompt, scope, state, nonce, and PKCE's
 * code_challenge with code_challenge_method S256 (I60, I69). Any other parameter is ignored, as
 * RFC 6749 §3.1 asks of unknown ones.
 */
// RFC 7636 §4.2: the base64url SHA-256 of a verifier is 43 characters.
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** The PKCE challenge of a request, or null; only S256 (RFC 7636 §4.3; `plain` protects nothing). */
function pkceChallengeOf(query: URLSearchParams): string | null {
  const challenge = single(query, "code_challenge");
  const method = single(query, "code_challenge_method");
  if (challenge === undefined) {
    if (method !== undefined)
      throw new RedirectRefusal("invalid_request", "code_challenge_method without code_challenge.");
    return null;
  }
  if (method !== "S256")
    throw new RedirectRefusal("invalid_request", "code_challenge_method must be S256 (plain is not supported).");
  if (!S256_CHALLENGE.test(challenge))
    throw new RedirectRefusal("invalid_request", "code_challenge must be 43 base64url characters (S256).");
  return challenge;
}

function checkedRequest(query: URLSearchParams, app: AppRecord): AuthRequest {
  const responseType = single(query, "response_type");
  if (responseType === undefined || responseType === "")
    throw new RedirectRefusal("invalid_request", "response_type is required.");
  if (responseType !== "code")
    throw new RedirectRefusal("unsupported_response_type", "Only response_type=code is supported.");
  const prompts = (single(query, "prompt") ?? "").split(" ").filter((w) => w !== "");
  // No session is kept: a login is always asked for, so prompt=none can never be met (OIDC Core §3.1.2.6).
  if (prompts.includes("none")) throw new RedirectRefusal("login_required", "A login is always needed here.");
  if (prompts.some((p) => !["login", "consent", "select_account"].includes(p)))
    throw new RedirectRefusal("invalid_request", "prompt must be consent, login or select_account.");
  const scope = scopeOf(query, prompts);
  const state = single(query, "state") ?? null;
  if (state !== null && state.length > MAX_STATE)
    throw new RedirectRefusal("invalid_request", `state has more than ${MAX_STATE} characters.`);
  const nonce = single(query, "nonce") ?? null;
  if (nonce !== null && nonce.length > MAX_STATE)
    throw new RedirectRefusal("invalid_request", `nonce has more than ${MAX_STATE} characters.`);
  const codeChallenge = pkceChallengeOf(query);
  return { clientId: app.clientId, redirectUri: query.get("redirect_uri")!, scope, state, nonce, codeChallenge };
}

/** The value of one cookie of a request, or undefined. */
function cookieOf(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** What the handlers share. */
interface Page {
  readonly deps: IdentityRouteDeps;
  readonly emailLimits: FailureLimiter;
  readonly addressLimits: FailureLimiter;
}

/** The page's own origins: the request's, and the public address's (behind a proxy). */
function ownOrigins(c: Context, deps: IdentityRouteDeps): string[] {
  const own = new URL(c.req.url).origin;
  try {
    return [own, new URL(deps.publicUrl(c)).origin];
  } catch {
    return [own];
  }
}

/** GET: checks the request and shows the login form with a CSRF cookie (I60–I62). */
async function showLogin(c: Context, page: Page): Promise<Response> {
  const { deps } = page;
  const url = new URL(c.req.url);
  await deps.registry.refresh();
  const app = verifiedClient(url.searchParams, (id) => appById(deps.registry, id));
  const redirectUri = url.searchParams.get("redirect_uri")!;
  let request: AuthRequest;
  try {
    request = checkedRequest(url.searchParams, app);
  } catch (e) {
    if (!(e instanceof RedirectRefusal)) throw e;
    const state = url.searchParams.get("state");
    return redirectAnswer(redirectUri, {
      error: e.error,
      error_description: e.description,
      state: state !== null && state.length <= MAX_STATE ? state : null,
    });
  }
  const secret = await serviceSecret(deps.registry);
  const had = cookieOf(c.req.raw, CSRF_COOKIE);
  // A browser's cookie is kept, so that two tabs signing in at once both work.
  const cookie = isCsrfCookie(had) ? had : newCsrfCookie();
  const secure = url.protocol === "https:" || deps.publicUrl(c).startsWith("https:") ? "; Secure" : "";
  const html = loginHtml({
    action: url.pathname,
    appName: app.name,
    offline: request.scope.includes("offline_access"),
    email: "",
    error: null,
    txn: sealTransaction(secret, request, deps.now()),
    csrf: csrfField(secret, cookie),
  });
  return htmlAnswer(200, html, new URL(redirectUri).origin, {
    "set-cookie": `${CSRF_COOKIE}=${cookie}; HttpOnly; SameSite=Strict; Path=/oauth2${secure}`,
  });
}

/** The form of a POST: urlencoded, at most MAX_FORM_BYTES (I65). */
async function readForm(request: Request): Promise<URLSearchParams> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded")
    throw new HttpError(415, "The form must be sent as application/x-www-form-urlencoded.");
  let bytes: Uint8Array;
  try {
    bytes = await readBodyBytes(request, MAX_FORM_BYTES);
  } catch (e) {
    if (e instanceof HttpError && e.status === 413)
      throw new HttpError(413, `The form is larger than ${MAX_FORM_BYTES} bytes.`);
    throw new HttpError(400, "The form ended before it was complete.");
  }
  try {
    return new URLSearchParams(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new HttpError(400, "The form is not valid UTF-8.");
  }
}

/** A POST past admitPost: its form, the browser's cookie, the transaction and what it holds. */
interface Admitted {
  readonly form: URLSearchParams;
  readonly secret: Buffer;
  readonly cookie: string;
  readonly txn: string;
  readonly request: AuthRequest;
  readonly app: AppRecord;
}

/** The checks every POST passes first: origin, cookie, form, CSRF field, transaction (I61, I62, I65). */
async function admitPost(c: Context, page: Page): Promise<Admitted> {
  const { deps } = page;
  const origin = c.req.header("origin");
  // Under this page's `Referrer-Policy: no-referrer` Chromium sends its own form POST with `Origin:
  // null`: that names no origin, like no header; the CSRF field and the SameSite cookie still hold.
  if (origin !== undefined && origin !== "null" && !ownOrigins(c, deps).includes(origin))
    throw new HttpError(403, `This form was sent from another site. ${START_AGAIN}`);
  const cookie = cookieOf(c.req.raw, CSRF_COOKIE);
  if (!isCsrfCookie(cookie))
    throw new HttpError(403, `Signing in needs a cookie of this site: allow cookies, then start again.`);
  const form = await readForm(c.req.raw);
  const secret = await serviceSecret(deps.registry);
  if (!csrfMatches(secret, cookie, form.get("csrf") ?? ""))
    throw new HttpError(403, `This form was not made for this browser. ${START_AGAIN}`);
  const txn = form.get("txn") ?? "";
  const request = openTransaction(secret, txn, deps.now());
  await deps.registry.refresh();
  const app = request === null ? undefined : appById(deps.registry, request.clientId);
  if (request === null || app === undefined || !app.redirectUris.includes(request.redirectUri))
    throw new HttpError(400, `This sign-in has expired or is not valid. ${START_AGAIN}`);
  return { form, secret, cookie, txn, request, app };
}

/** The client's address, for the per-address limit (the socket's: a proxy in front shares one). */
function addressOf(request: Request): string {
  const incoming = nodeBodyOf(request) as { socket?: { remoteAddress?: string } } | undefined;
  return incoming?.socket?.remoteAddress ?? "unknown";
}

/** POST step=login: the password, rate limited; the consent form on success (I63, I68). */
async function login(c: Context, page: Page, admitted: Admitted): Promise<Response> {
  const { deps, emailLimits, addressLimits } = page;
  const { form, secret, cookie, txn, request, app } = admitted;
  const typed = (form.get("email") ?? "").trim().slice(0, 320);
  const emailKey = normalEmail(typed);
  const addressKey = addressOf(c.req.raw);
  const origin = new URL(request.redirectUri).origin;
  const offline = request.scope.includes("offline_access");
  const again = (status: number, error: string, extra: Record<string, string> = {}) =>
    htmlAnswer(
      status,
      loginHtml({
        action: new URL(c.req.url).pathname,
        appName: app.name,
        offline,
        email: typed,
        error,
        txn,
        csrf: form.get("csrf")!,
      }),
      origin,
      extra,
    );
  const wait = Math.max(emailLimits.retryAfter(emailKey), addressLimits.retryAfter(addressKey));
  // Over the limit, the password is not even checked (I8).
  if (wait > 0)
    return again(429, `Too many failed sign-ins. Try again in ${Math.ceil(wait / 60)} minutes.`, {
      "retry-after": String(wait),
    });
  const user = await checkUserPassword(deps.registry, typed, form.get("password") ?? "");
  if (user === null) {
    emailLimits.fail(emailKey);
    addressLimits.fail(addressKey);
    return again(401, WRONG_LOGIN);
  }
  // The address's count is kept: logging into one's own account must not reset an attacker's count.
  emailLimits.succeed(emailKey);
  const html = consentHtml({
    action: new URL(c.req.url).pathname,
    appName: app.name,
    offline,
    userEmail: user.email,
    destination: origin,
    txn,
    csrf: form.get("csrf")!,
    login: sealLogin(secret, user.id, txn, cookie, deps.now()),
  });
  return htmlAnswer(200, html, origin);
}

/** POST step=consent: Allow issues a code, Deny answers access_denied, both to the redirect URI (I64, I67). */
async function consent(page: Page, admitted: Admitted): Promise<Response> {
  const { deps } = page;
  const { form, secret, cookie, txn, request } = admitted;
  const userId = openLogin(secret, form.get("login") ?? "", txn, cookie, deps.now());
  if (userId === null || userById(deps.registry, userId) === undefined)
    throw new HttpError(400, `This sign-in has expired or is not valid. ${START_AGAIN}`);
  const decision = form.get("decision");
  if (decision === "deny") return redirectAnswer(request.redirectUri, { error: "access_denied", state: request.state });
  if (decision !== "allow") throw new HttpError(400, "Choose Allow or Deny.");
  const { clientId, redirectUri, scope } = request;
  const code = await issueCode(
    deps.registry,
    { clientId, redirectUri, userId, scope, nonce: request.nonce, codeChallenge: request.codeChallenge },
    deps.now,
  );
  return redirectAnswer(redirectUri, { code, state: request.state });
}

/** Registers the routes of the login and consent page (I60–I69). */
export function registerAuthorizePage<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  const page: Page = {
    deps,
    emailLimits: new FailureLimiter({ limit: 5, windowMs: WINDOW_MS, now: deps.now }),
    addressLimits: new FailureLimiter({ limit: 20, windowMs: WINDOW_MS, now: deps.now }),
  };
  app.all("/oauth2/auth", async (c) => {
    try {
      if (c.req.method === "GET") return await showLogin(c, page);
      if (c.req.method !== "POST")
        throw new HttpError(405, `${c.req.method} is not allowed here; use GET, POST.`, [], { allow: "GET, POST" });
      const admitted = await admitPost(c, page);
      const step = admitted.form.get("step");
      if (step === "login") return await login(c, page, admitted);
      if (step === "consent") return await consent(page, admitted);
      throw new HttpError(400, `This form is not one of this page's. ${START_AGAIN}`);
    } catch (e) {
      if (e instanceof HttpError) return refusalPage(e, null);
      deps.log(`internal error on ${c.req.method} /oauth2/auth: ${(e as Error)?.stack ?? String(e)}`);
      return refusalPage(new HttpError(500, "Something went wrong on the server. Try again later."), null);
    }
  });
}
