// One resolver of bearer tokens for the whole service (semantics I3, I6): the tokens file's and
// `--token`'s static grants, ID tokens (accounts host) and system tokens (their system's host). A
// JWT is verified once, asynchronously (`prepare`, at the front of every request), and kept until
// it expires in a bounded cache; the synchronous lookups the routes make read that cache. The grant
// is always computed from the permissions as they are now, never from the token's claims.
import { createHash } from "node:crypto";
import type { Grant } from "../auth/grant.js";
import type { TenantRegistry } from "../tenants/registry.js";
import { subjectGrant, subjectOf } from "./principal.js";
import type { TokenKeys } from "./tokenKeys.js";

/** The audience of a system token of `systemId`. */
export function systemAudience(systemId: string): string {
  return `urn:rsop:system:${systemId}`;
}

const SYSTEM_PREFIX = "urn:rsop:system:";
// Three base64url parts: the only tokens worth a signature check. Ours are under 1,500 characters.
const JWT_SHAPE = /^[A-Za-z0-9_-]{2,512}\.[A-Za-z0-9_-]{2,3072}\.[A-Za-z0-9_-]{2,512}$/;
const MAX_JWT = 4096;

/** The cache key of a token: its SHA-256, so that what a client sends costs the cache 64 characters. */
function keyOf(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

interface Verified {
  readonly sub: string;
  /** The system a system token is for, or null for an ID token. */
  readonly system: string | null;
  /** Expiry, ms since the epoch. */
  readonly expires: number;
}

/** Options of a TokenResolver. */
export interface TokenResolverOptions {
  readonly registry: TenantRegistry;
  readonly keys: TokenKeys;
  /** The static grants (tokens file, `--token`). */
  readonly staticGrant: (token: string) => Grant | null;
  readonly now?: () => number;
  /** Verified tokens kept at most (default 10,000; the oldest dropped first). */
  readonly maxCached?: number;
}

/** Resolves the service's tokens. */
export class TokenResolver {
  readonly #o: TokenResolverOptions;
  readonly #now: () => number;
  readonly #verified = new Map<string, Verified | null>();
  // The last token's key: one request asks about its token several times (front, tenant, routes).
  #last = { token: "", key: "" };

  constructor(options: TokenResolverOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  /** How many verified (or refused) tokens are kept now. */
  get cached(): number {
    return this.#verified.size;
  }

  /** Verifies a JWT-shaped token not seen yet (a bad one is remembered as bad, bounded like the rest). */
  async prepare(token: string | null): Promise<void> {
    if (token === null || token.length > MAX_JWT || !JWT_SHAPE.test(token)) return;
    const key = keyOf(token);
    if (this.#verified.has(key) || this.#o.staticGrant(token) !== null) return;
    const v = await this.#o.keys.verify(token);
    const system = v !== null && v.aud.startsWith(SYSTEM_PREFIX) ? v.aud.slice(SYSTEM_PREFIX.length) : null;
    this.#verified.set(key, v === null ? null : { sub: v.sub, system, expires: v.exp * 1000 });
    const max = this.#o.maxCached ?? 10_000;
    while (this.#verified.size > max) this.#verified.delete(this.#verified.keys().next().value!);
  }

  #valid(token: string): Verified | null {
    if (token.length > MAX_JWT || !JWT_SHAPE.test(token)) return null;
    if (this.#last.token !== token) this.#last = { token, key: keyOf(token) };
    const key = this.#last.key;
    const v = this.#verified.get(key);
    if (v === undefined || v === null) return null;
    if (v.expires <= this.#now()) {
      this.#verified.delete(key);
      return null;
    }
    return v;
  }

  #grantOfSub(sub: string): Grant | null {
    const subject = subjectOf(this.#o.registry, sub);
    return subject === undefined ? null : subjectGrant(this.#o.registry, subject);
  }

  /** The grant of a token on the accounts host: a static one, or an ID token's user's or application's. */
  accountGrant(token: string): Grant | null {
    const fixed = this.#o.staticGrant(token);
    if (fixed !== null) return fixed;
    const v = this.#valid(token);
    return v === null || v.system !== null ? null : this.#grantOfSub(v.sub);
  }

  /** The grant of a system token on its own system (null on any other, and for any other token). */
  systemGrant(token: string, systemId: string): Grant | null {
    const v = this.#valid(token);
    return v === null || v.system !== systemId ? null : this.#grantOfSub(v.sub);
  }

  /** Whether a token is a valid system token of any system (so: valid, though maybe not here). */
  isSystemToken(token: string): boolean {
    const v = this.#valid(token);
    return v !== null && v.system !== null;
  }
}
