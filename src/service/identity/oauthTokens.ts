// The grants of the token endpoint (semantics I20–I29), apart from HTTP: the client's authentication
// with its brute-force limits, then `client_credentials`, `authorization_code` and `refresh_token`,
// each answering a short-lived ID token. Codes and refresh chains are records of the registry:
// every check and its change are made in one records update, guarded by `ifVersion` against
// another process doing the same at the same moment (I4).
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { RegistryChange } from "../store/registryStore.js";
import { type RecordsUpdate, StaleRecord, type TenantRegistry } from "../tenants/registry.js";
import { appById, checkClient, userById } from "./accounts.js";
import { digestOf } from "./codes.js";
import { FailureLimiter } from "./rateLimit.js";
import { type AppRecord, type AuthCodeRecord, KIND, type RefreshChainRecord, type Subject } from "./records.js";
import { mac, serviceSecret } from "./secret.js";
import type { TokenKeys } from "./tokenKeys.js";

/** How long an ID token is valid, s (I21). */
export const ID_TOKEN_LIFETIME_S = 300;
/** Expired codes deleted at most per exchange, so that no exchange does unbounded work (I24). */
export const PRUNE_BATCH = 100;
/** The brute-force window and limits of client authentication (I27). */
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
export const CLIENT_FAILURES = 10;
export const ADDRESS_FAILURES = 30;
/** Longer client ids are never counted by id: an attacker could fill memory with them. */
const MAX_CLIENT_ID = 255;

/** The error codes of RFC 6749 §5.2 this endpoint answers. */
export type OAuthErrorCode = "invalid_request" | "invalid_client" | "invalid_grant" | "unsupported_grant_type";

/** A refusal of the token endpoint, answered as `{error, error_description}` (I20). */
export class OAuthError extends Error {
  override readonly name = "OAuthError";
  constructor(
    readonly error: OAuthErrorCode,
    message: string,
    readonly status = 400,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** The `WWW-Authenticate` challenge of a 401 (RFC 7617). */
export const BASIC_CHALLENGE = 'Basic realm="rsop", charset="UTF-8"';

/** 401 invalid_client with the Basic challenge. */
export function invalidClient(message: string): OAuthError {
  return new OAuthError("invalid_client", message, 401, { "www-authenticate": BASIC_CHALLENGE });
}

/** What a successful exchange answers (RFC 6749 §5.1). */
export interface TokenAnswer {
  readonly token_type: "Bearer";
  /** Random and never stored: no route accepts it; the ID token is what callers present (I21). */
  readonly access_token: string;
  readonly id_token: string;
  readonly expires_in: number;
  readonly refresh_token?: string;
  readonly scope?: string;
}

/** What the grants need. */
export interface TokenContext {
  readonly registry: TenantRegistry;
  readonly keys: TokenKeys;
  readonly now: () => number;
  /** The ID tokens' `iss`: the accounts host's public address. */
  readonly issuer: string;
}

/** A client id and secret, as the Basic header carried them. */
export interface ClientCredentials {
  readonly clientId: string;
  readonly secret: string;
}

/**
 * Authenticates clients, counting failures per client id and per client address (I27). Attempts for
 * one client id run one at a time, so that parallel guesses each see the failures before them; while
 * a key is locked, no secret is compared at all.
 */
export class ClientAuthenticator {
  readonly #byClient: FailureLimiter;
  readonly #byAddress: FailureLimiter;
  readonly #busy = new Map<string, Promise<unknown>>();

  constructor(now: () => number = Date.now) {
    this.#byClient = new FailureLimiter({ limit: CLIENT_FAILURES, windowMs: FAILURE_WINDOW_MS, now });
    this.#byAddress = new FailureLimiter({ limit: ADDRESS_FAILURES, windowMs: FAILURE_WINDOW_MS, now });
  }

  /**
   * The application the credentials name, when its secret is right. `address` is the client's
   * (null when unknown: then counted by client id only). @throws OAuthError 401, or 429 while locked.
   */
  authenticate(registry: TenantRegistry, credentials: ClientCredentials, address: string | null): Promise<AppRecord> {
    const { clientId, secret } = credentials;
    const counted = clientId.length <= MAX_CLIENT_ID ? `client:${clientId}` : null;
    const ip = address === null ? null : `address:${address}`;
    const attempt = async (): Promise<AppRecord> => {
      const wait = Math.max(
        counted === null ? 0 : this.#byClient.retryAfter(counted),
        ip === null ? 0 : this.#byAddress.retryAfter(ip),
      );
      if (wait > 0)
        throw new OAuthError("invalid_client", `Too many failed attempts; try again in ${wait} s.`, 429, {
          "retry-after": String(wait),
        });
      const app = counted === null ? null : await checkClient(registry, clientId, secret);
      if (app === null) {
        if (counted !== null) this.#byClient.fail(counted);
        if (ip !== null) this.#byAddress.fail(ip);
        throw invalidClient("Unknown client, or wrong client secret.");
      }
      this.#byClient.succeed(counted!);
      return app;
    };
    return counted === null ? attempt() : this.#serial(counted, attempt);
  }

  async #serial<T>(key: string, run: () => Promise<T>): Promise<T> {
    const before = this.#busy.get(key) ?? Promise.resolve();
    const mine = before.then(run, run);
    const tail = mine.catch(() => undefined);
    this.#busy.set(key, tail);
    try {
      return await mine;
    } finally {
      if (this.#busy.get(key) === tail) this.#busy.delete(key);
    }
  }
}

/** A grant's parameters: each at most once, empty ones dropped (RFC 6749 §3.1). */
export type GrantParameters = ReadonlyMap<string, string>;

function required(params: GrantParameters, name: string): string {
  const v = params.get(name);
  if (v === undefined) throw new OAuthError("invalid_request", `The parameter ${name} is required.`);
  return v;
}

/**
 * Exchanges a grant of an authenticated client for tokens.
 * @throws OAuthError invalid_request, unsupported_grant_type, invalid_grant
 */
export async function exchangeGrant(ctx: TokenContext, app: AppRecord, params: GrantParameters): Promise<TokenAnswer> {
  const type = params.get("grant_type");
  if (type === undefined) throw new OAuthError("invalid_request", "The parameter grant_type is required.");
  switch (type) {
    case "client_credentials":
      return clientCredentials(ctx, app);
    case "authorization_code":
      return authorizationCode(
        ctx,
        app,
        required(params, "code"),
        required(params, "redirect_uri"),
        params.get("code_verifier"),
      );
    case "refresh_token":
      return refreshToken(ctx, app, required(params, "refresh_token"));
    default:
      throw new OAuthError(
        "unsupported_grant_type",
        "Unsupported grant_type: use client_credentials, authorization_code or refresh_token.",
      );
  }
}

/** Who an ID token is about: `sub` and `email`. */
interface Holder {
  readonly sub: string;
  readonly email: string;
  /** The authorization request's OpenID Connect nonce (a code exchange only, I69). */
  readonly nonce?: string;
}

function holderOf(registry: TenantRegistry, subject: Subject): Holder | undefined {
  if (subject.type === "user") {
    const user = userById(registry, subject.id);
    return user === undefined ? undefined : { sub: user.id, email: user.email };
  }
  const app = appById(registry, subject.id);
  return app === undefined ? undefined : { sub: app.clientId, email: app.email };
}

/** The answer of every grant: a fresh ID token for `app`, about `holder` (I21). */
async function answer(ctx: TokenContext, app: AppRecord, holder: Holder, extra: Partial<TokenAnswer>) {
  const claims = {
    sub: holder.sub,
    aud: app.clientId,
    azp: app.clientId,
    email: holder.email,
    ...(holder.nonce !== undefined ? { nonce: holder.nonce } : {}),
  };
  const idToken = await ctx.keys.sign(claims, ctx.issuer, ID_TOKEN_LIFETIME_S);
  const made: TokenAnswer = {
    token_type: "Bearer",
    access_token: randomBytes(32).toString("base64url"),
    id_token: idToken,
    expires_in: ID_TOKEN_LIFETIME_S,
    ...extra,
  };
  return made;
}

/** client_credentials: the application itself (I22). */
function clientCredentials(ctx: TokenContext, app: AppRecord): Promise<TokenAnswer> {
  return answer(ctx, app, { sub: app.clientId, email: app.email }, {});
}

/** A records update, tried once more after a re-read when another process changed a record first (I4). */
async function committed<T>(registry: TenantRegistry, build: () => RecordsUpdate<T>): Promise<T> {
  try {
    return await registry.updateRecords(build);
  } catch (e) {
    if (!(e instanceof StaleRecord)) throw e;
  }
  await registry.refresh();
  try {
    return await registry.updateRecords(build);
  } catch (e) {
    if (e instanceof StaleRecord) throw new OAuthError("invalid_grant", "The grant was used at the same moment.");
    throw e;
  }
}

/** Deletions of at most PRUNE_BATCH expired codes (no version: an expired code never changes again). */
function expiredCodes(registry: TenantRegistry, now: number): RegistryChange[] {
  const out: RegistryChange[] = [];
  for (const r of registry.records(KIND.code)) {
    if (out.length >= PRUNE_BATCH) break;
    if ((r.value as AuthCodeRecord).expires <= now) out.push({ op: "deleteRecord", kind: KIND.code, id: r.id });
  }
  return out;
}

/** What a records update of a grant decided: a refusal (committed all the same: revocations, pruning) or what to sign. */
type Outcome<T> = { readonly refused: string } | { readonly ok: T };

function refusal<T>(changes: RegistryChange[], why: string): RecordsUpdate<Outcome<T>> {
  return { changes, result: { refused: why } };
}

function settle<T>(outcome: Outcome<T>): T {
  if ("refused" in outcome) throw new OAuthError("invalid_grant", outcome.refused);
  return outcome.ok;
}

function hasScope(scope: string, wanted: string): boolean {
  return scope.split(" ").includes(wanted);
}

/** The refresh token of a chain's generation: `rt1.<chain>.<generation>.<mac>` (I25). */
function refreshTokenOf(secret: Buffer, chain: string, generation: number): string {
  return `rt1.${chain}.${generation}.${mac(secret, "refresh", chain, String(generation))}`;
}

interface CodeResult {
  readonly holder: Holder;
  readonly scope: string;
  readonly chain: RefreshChainRecord | null;
}

/** The check and change of a code's exchange (I23, I24): one update, so that a code is used once. */
function codeExchange(
  ctx: TokenContext,
  app: AppRecord,
  code: string,
  redirectUri: string,
  verifier: string | undefined,
): RecordsUpdate<Outcome<CodeResult>> {
  const { registry } = ctx;
  const now = ctx.now();
  const id = digestOf(code);
  const changes = expiredCodes(registry, now);
  const row = registry.record(KIND.code, id);
  if (row === undefined) return refusal(changes, "The code is unknown or expired.");
  const rec = row.value as AuthCodeRecord;
  if (rec.used !== null) {
    // A code presented twice was likely stolen: what its first exchange gave is revoked.
    if (rec.used.chain !== null) changes.push({ op: "deleteRecord", kind: KIND.chain, id: rec.used.chain });
    return refusal(changes, "The code was used already; the tokens it gave are revoked.");
  }
  if (rec.expires <= now) return refusal(changes, "The code is unknown or expired.");
  if (rec.clientId !== app.clientId) return refusal(changes, "The code was issued to another client.");
  if (rec.redirectUri !== redirectUri)
    return refusal(changes, "redirect_uri is not the one of the authorization request.");
  const pkce = pkceProblem(rec.codeChallenge, verifier);
  if (pkce !== null) return refusal(changes, pkce);
  const holder = holderOf(registry, { type: "user", id: rec.userId });
  if (holder === undefined) return refusal(changes, "The user of the code no longer exists.");
  const chain: RefreshChainRecord | null = hasScope(rec.scope, "offline_access")
    ? {
        chain: randomUUID(),
        clientId: app.clientId,
        subject: { type: "user", id: rec.userId },
        scope: rec.scope,
        generation: 1,
        created: new Date(now).toISOString(),
      }
    : null;
  const used: AuthCodeRecord = { ...rec, used: { chain: chain?.chain ?? null } };
  changes.push({ op: "putRecord", kind: KIND.code, id, value: used, ifVersion: row.version });
  if (chain !== null) changes.push({ op: "putRecord", kind: KIND.chain, id: chain.chain, value: chain, ifVersion: 0 });
  const withNonce = rec.nonce === undefined ? holder : { ...holder, nonce: rec.nonce };
  return { changes, result: { ok: { holder: withNonce, scope: rec.scope, chain } } };
}

// RFC 7636 §4.1: 43 to 128 unreserved characters.
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** What is wrong with a code's PKCE proof, or null (I69): a challenge needs its verifier, and a verifier its challenge. */
function pkceProblem(challenge: string | undefined, verifier: string | undefined): string | null {
  if (challenge === undefined)
    return verifier === undefined
      ? null
      : "code_verifier was sent, but the authorization request had no code_challenge.";
  if (verifier === undefined) return "code_verifier is required: the authorization request had a code_challenge.";
  if (!VERIFIER.test(verifier)) return "code_verifier must be 43 to 128 unreserved characters.";
  const computed = createHash("sha256").update(verifier, "ascii").digest("base64url");
  return computed === challenge ? null : "code_verifier does not match the code_challenge.";
}

/** authorization_code (I23): a user's ID token, and with `offline_access` the first refresh token of a new chain. */
async function authorizationCode(
  ctx: TokenContext,
  app: AppRecord,
  code: string,
  redirectUri: string,
  verifier: string | undefined,
): Promise<TokenAnswer> {
  const secret = await serviceSecret(ctx.registry);
  const got = settle(await committed(ctx.registry, () => codeExchange(ctx, app, code, redirectUri, verifier)));
  const refresh = got.chain === null ? {} : { refresh_token: refreshTokenOf(secret, got.chain.chain, 1) };
  return answer(ctx, app, got.holder, { ...refresh, scope: got.scope });
}

const CHAIN = /^[A-Za-z0-9-]{1,64}$/;
const GENERATION = /^[1-9][0-9]{0,14}$/;

/** The chain and generation of a refresh token whose MAC is right, or null. */
function parseRefreshToken(secret: Buffer, token: string): { chain: string; generation: number } | null {
  const parts = token.split(".");
  if (parts.length !== 4 || parts[0] !== "rt1") return null;
  const [, chain, generation, given] = parts as [string, string, string, string];
  if (!CHAIN.test(chain) || !GENERATION.test(generation)) return null;
  const expected = Buffer.from(mac(secret, "refresh", chain, generation));
  const presented = Buffer.from(given);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return null;
  return { chain, generation: Number(generation) };
}

/** The check and change of a refresh (I25, I26): rotation, and revocation of a chain whose old token came back. */
function refreshExchange(
  ctx: TokenContext,
  app: AppRecord,
  presented: { chain: string; generation: number },
): RecordsUpdate<Outcome<{ holder: Holder; next: RefreshChainRecord }>> {
  const { registry } = ctx;
  const changes = expiredCodes(registry, ctx.now());
  const row = registry.record(KIND.chain, presented.chain);
  if (row === undefined) return refusal(changes, "The refresh token is revoked.");
  const rec = row.value as RefreshChainRecord;
  if (rec.clientId !== app.clientId) return refusal(changes, "The refresh token was issued to another client.");
  const revoke = () => changes.push({ op: "deleteRecord", kind: KIND.chain, id: rec.chain });
  if (presented.generation < rec.generation) {
    // An older token again: either holder of the chain may be a thief, so the newest one goes too.
    revoke();
    return refusal(changes, "The refresh token was used already; its chain is revoked.");
  }
  if (presented.generation > rec.generation) return refusal(changes, "The refresh token is unknown.");
  const holder = holderOf(registry, rec.subject);
  if (holder === undefined) {
    revoke();
    return refusal(changes, "The user of the refresh token no longer exists.");
  }
  const next: RefreshChainRecord = { ...rec, generation: rec.generation + 1 };
  changes.push({ op: "putRecord", kind: KIND.chain, id: rec.chain, value: next, ifVersion: row.version });
  return { changes, result: { ok: { holder, next } } };
}

/** refresh_token (I25): the next refresh token of the chain, and a new ID token. */
async function refreshToken(ctx: TokenContext, app: AppRecord, token: string): Promise<TokenAnswer> {
  const secret = await serviceSecret(ctx.registry);
  const presented = parseRefreshToken(secret, token);
  if (presented === null) throw new OAuthError("invalid_grant", "The refresh token is invalid.");
  // Another process rotating the same token first makes this one's generation old on the re-read: reuse.
  const got = settle(await committed(ctx.registry, () => refreshExchange(ctx, app, presented)));
  return answer(ctx, app, got.holder, {
    refresh_token: refreshTokenOf(secret, got.next.chain, got.next.generation),
    scope: got.next.scope,
  });
}
