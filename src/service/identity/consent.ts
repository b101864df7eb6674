// The tokens of the login and consent page (semantics I60–I64), pure functions over the service
// secret so that no server session is kept and any process of one database accepts them: the
// transaction (the authorization request, signed and stamped when the page is first shown), the
// CSRF field (a MAC of the browser's random cookie) and the login proof (who logged in, for which
// transaction and which browser, carried by the consent page).
import { randomBytes, timingSafeEqual } from "node:crypto";
import { mac } from "./secret.js";

/** How long a transaction is valid after the login page was shown, ms (I61). */
export const TRANSACTION_LIFETIME_MS = 10 * 60_000;
/** How long a login proof is valid after the login, ms (I63). */
export const LOGIN_PROOF_LIFETIME_MS = 5 * 60_000;

/** An authorization request whose client and redirect URI were checked (I60). */
export interface AuthRequest {
  readonly clientId: string;
  /** Registered for the client, compared exactly. */
  readonly redirectUri: string;
  /** `openid` or `openid offline_access`. */
  readonly scope: string;
  /** Returned unchanged to the redirect URI; null when the request had none. */
  readonly state: string | null;
  /** The OpenID Connect `nonce`, copied into the ID token; null when the request had none. */
  readonly nonce: string | null;
  /** The PKCE S256 `code_challenge` (RFC 7636), or null. */
  readonly codeChallenge: string | null;
}

/** Whether two MACs are equal, in time that does not depend on where they differ. */
function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `payload.mac`, payload base64url JSON. */
function seal(secret: Buffer, purpose: string, value: unknown, ...bound: readonly string[]): string {
  const payload = Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
  return `${payload}.${mac(secret, purpose, payload, ...bound)}`;
}

/** The value of a sealed token whose MAC holds, else undefined (never parsed before the MAC is checked). */
function unseal(secret: Buffer, purpose: string, token: string, ...bound: readonly string[]): unknown {
  const dot = token.indexOf(".");
  if (dot <= 0) return undefined;
  const payload = token.slice(0, dot);
  if (!sameMac(token.slice(dot + 1), mac(secret, purpose, payload, ...bound))) return undefined;
  try {
    return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

/** Whether an issue time is within `lifetime` of now (a time in the future is not accepted either). */
function fresh(issued: unknown, lifetime: number, now: number): issued is number {
  return typeof issued === "number" && issued <= now && now - issued < lifetime;
}

/** The transaction field of the login form: the request, signed and stamped `now` (I61). */
export function sealTransaction(secret: Buffer, request: AuthRequest, now: number): string {
  const { clientId, redirectUri, scope, state, nonce, codeChallenge } = request;
  return seal(secret, "txn", { c: clientId, r: redirectUri, s: scope, st: state, n: nonce, cc: codeChallenge, t: now });
}

/** The request a transaction field holds, or null when it was not made here or is older than 10 minutes (I61). */
export function openTransaction(secret: Buffer, token: string, now: number): AuthRequest | null {
  const v = unseal(secret, "txn", token) as Record<string, unknown> | undefined;
  if (typeof v !== "object" || v === null || !fresh(v.t, TRANSACTION_LIFETIME_MS, now)) return null;
  const { c, r, s, st, n, cc } = v;
  if (typeof c !== "string" || typeof r !== "string" || typeof s !== "string") return null;
  if (st !== null && typeof st !== "string") return null;
  if (n !== null && n !== undefined && typeof n !== "string") return null;
  if (cc !== null && cc !== undefined && typeof cc !== "string") return null;
  return { clientId: c, redirectUri: r, scope: s, state: st, nonce: n ?? null, codeChallenge: cc ?? null };
}

/** A new random value of the CSRF cookie: 32 bytes, base64url (43 characters). */
export function newCsrfCookie(): string {
  return randomBytes(32).toString("base64url");
}

/** Whether a cookie value has the shape newCsrfCookie makes (another is replaced, not trusted). */
export function isCsrfCookie(value: string | undefined): value is string {
  return value !== undefined && /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** The CSRF field of a form for the browser holding `cookie` (I62). */
export function csrfField(secret: Buffer, cookie: string): string {
  return mac(secret, "csrf", cookie);
}

/** Whether a form's CSRF field was made for the browser holding `cookie` (I62). */
export function csrfMatches(secret: Buffer, cookie: string, field: string): boolean {
  return sameMac(field, csrfField(secret, cookie));
}

/** The login proof of the consent form: `userId` logged in `now` for transaction `txn` in the browser holding `cookie` (I63). */
export function sealLogin(secret: Buffer, userId: string, txn: string, cookie: string, now: number): string {
  return seal(secret, "login", { u: userId, t: now }, txn, cookie);
}

/** The user id of a login proof made for `txn` and `cookie` less than 5 minutes ago, else null (I63). */
export function openLogin(secret: Buffer, proof: string, txn: string, cookie: string, now: number): string | null {
  const v = unseal(secret, "login", proof, txn, cookie) as Record<string, unknown> | undefined;
  if (typeof v !== "object" || v === null || !fresh(v.t, LOGIN_PROOF_LIFETIME_MS, now)) return null;
  return typeof v.u === "string" ? v.u : null;
}
