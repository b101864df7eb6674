// The port of the signing keys (semantics I6): ID tokens and system tokens are ES256 JWTs signed by
// the newest key; `GET /oauth2/jwks` publishes every key that may still verify a token. Implemented
// by signingKeys.ts over the registry's records.

/** Claims of a token the service signs (besides `iat`, `exp`, `jti`, `iss`, which signing adds). */
export interface TokenClaims {
  /** The user's id or the application's client id. */
  readonly sub: string;
  /** `client_id` for an ID token; `urn:rsop:system:{system_id}` for a system token. */
  readonly aud: string;
  readonly [claim: string]: unknown;
}

/** A verified token's claims. */
export interface VerifiedToken extends TokenClaims {
  readonly iss: string;
  readonly iat: number;
  readonly exp: number;
  readonly jti: string;
}

/** The keys of a service. */
export interface TokenKeys {
  /** A signed JWT of `claims`, valid `lifetimeS` seconds from now, issued by `issuer`. */
  sign(claims: TokenClaims, issuer: string, lifetimeS: number): Promise<string>;
  /**
   * The claims of a token this service signed with a key it still publishes, unexpired (by the
   * injected clock), for one of `audiences` (any when absent); null for anything else. Never throws.
   */
  verify(token: string, audiences?: (aud: string) => boolean): Promise<VerifiedToken | null>;
  /** The JWK Set `GET /oauth2/jwks` answers: the public keys (kid, kty, crv, x, y, alg, use). */
  jwks(): { keys: readonly Record<string, unknown>[] };
}
