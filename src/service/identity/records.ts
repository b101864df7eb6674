// The identity records of a service (semantics I1–I9), kept in the registry (RegistryStore records,
// read whole into memory like the organization tree): users, applications, permissions, signing
// keys, the service secret, refresh-token chains, authorization codes and self-help counts. Secrets
// are never stored: passwords and client secrets as scrypt hashes (passwords.ts), codes and tokens
// as SHA-256 digests or MACs. This file names the kinds and their shapes; the modules beside it
// read and write them through TenantRegistry.record/records/updateRecords.
import type { Role } from "../auth/grant.js";

/** The record kinds of identity. */
export const KIND = {
  user: "user",
  app: "app",
  permission: "permission",
  key: "signing-key",
  secret: "secret",
  chain: "refresh-chain",
  code: "auth-code",
  resets: "self-help",
} as const;

/** A person who logs in on the consent page: id a UUID, email stored lower-case and unique among users and apps. */
export interface UserRecord {
  readonly id: string;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  /** passwords.ts `hashSecret` of the password. */
  readonly passwordHash: string;
  readonly created: string;
}

/** An OAuth 2.0 client (record id = `clientId`). Its email is what permissions name to authorize it. */
export interface AppRecord {
  readonly clientId: string;
  readonly name: string;
  readonly email: string;
  /** passwords.ts `hashSecret` of the client secret. */
  readonly secretHash: string;
  /** Registered redirect URIs, compared exactly (authorization code grant). */
  readonly redirectUris: readonly string[];
  readonly created: string;
}

/** A permission level: a role, or `guest` (reaches a descendant only, or nothing). */
export type PermissionLevel = Role | "guest";

/**
 * A permission: an email (a user's or an application's) with a role on an organization, reaching its
 * descendants. `userId` null: an invitation to an email no user has yet, effective once accepted.
 */
export interface PermissionRecord {
  readonly id: string;
  readonly organization: string;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  /** Managers and reporters: the partition ids they may see, by system id (a system absent: none of its partitions); null: every partition. */
  readonly partitions: Readonly<Record<string, readonly string[]>> | null;
  /** The user's id, or the application's client id; null until an invitation is accepted. */
  readonly userId: string | null;
  readonly created: string;
  /** When the invitation was accepted, or null (never an invitation, or not yet). */
  readonly accepted: string | null;
}

/** An ES256 signing key of ID and system tokens (record id = `kid`). */
export interface SigningKeyRecord {
  readonly kid: string;
  readonly privateJwk: Readonly<Record<string, unknown>>;
  readonly publicJwk: Readonly<Record<string, unknown>>;
  readonly created: string;
  /** When a newer key replaced it for signing; it still verifies for a while after (I6). */
  readonly retired: string | null;
}

/** The service's own secret (record id `service`): keys the MACs of CSRF fields, invite ids and refresh tokens. */
export interface SecretRecord {
  /** 32 random bytes, base64url. */
  readonly value: string;
  readonly created: string;
}

/** Who a token stands for. */
export type Subject = { readonly type: "user"; readonly id: string } | { readonly type: "app"; readonly id: string };

/**
 * A chain of refresh tokens (record id = chain id): only the token of `generation` is valid; an
 * earlier one presented again revokes the chain (the record is deleted).
 */
export interface RefreshChainRecord {
  readonly chain: string;
  readonly clientId: string;
  readonly subject: Subject;
  readonly scope: string;
  readonly generation: number;
  readonly created: string;
}

/** An authorization code (record id = SHA-256 hex of the code): single use, 60 s. */
export interface AuthCodeRecord {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly userId: string;
  readonly scope: string;
  /** The OpenID Connect `nonce` of the authorization request, copied into the ID token (I69); absent: none. */
  readonly nonce?: string;
  /** The PKCE S256 `code_challenge` of the authorization request (RFC 7636); absent: none asked. */
  readonly codeChallenge?: string;
  /** Expiry, ms since the epoch. */
  readonly expires: number;
  /** Once exchanged: the refresh chain it started (null: none), revoked if the code comes again. */
  readonly used: { readonly chain: string | null } | null;
}

/** Self-help resets of one holder in one calendar month, UTC (record id `${systemId}|${holderId}|${YYYY-MM}`). */
export interface SelfHelpRecord {
  readonly systemId: string;
  readonly holderId: string;
  readonly month: string;
  readonly count: number;
  /** Credentials whose reset was refused this month (the restriction records), until cleared. */
  readonly restricted: readonly string[];
}
