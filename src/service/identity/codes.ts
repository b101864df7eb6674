// Authorization codes (semantics I5): made by the consent page after a login, exchanged once at the
// token endpoint within 60 s for the same client and redirect URI. Stored as the SHA-256 of the
// code, so that the store never holds one that works.
import { createHash, randomBytes } from "node:crypto";
import type { TenantRegistry } from "../tenants/registry.js";
import { type AuthCodeRecord, KIND } from "./records.js";

/** How long a code may be exchanged, ms. */
export const CODE_LIFETIME_MS = 60_000;

/** The record id of a code (and of any other bearer secret kept by digest). */
export function digestOf(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** What a code is for. */
export interface CodeGrant {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly userId: string;
  /** `openid` or `openid offline_access`. */
  readonly scope: string;
  /** The request's OpenID Connect `nonce`, or null. */
  readonly nonce?: string | null;
  /** The request's PKCE S256 `code_challenge`, or null. */
  readonly codeChallenge?: string | null;
}

/** Makes and stores a new code for `grant`; answers the code (shown once, to the redirect). */
export async function issueCode(registry: TenantRegistry, grant: CodeGrant, now = Date.now): Promise<string> {
  const code = randomBytes(32).toString("base64url");
  const { nonce, codeChallenge, ...rest } = grant;
  const value: AuthCodeRecord = {
    ...rest,
    ...(nonce !== undefined && nonce !== null ? { nonce } : {}),
    ...(codeChallenge !== undefined && codeChallenge !== null ? { codeChallenge } : {}),
    expires: now() + CODE_LIFETIME_MS,
    used: null,
  };
  await registry.updateRecords(() => ({
    changes: [{ op: "putRecord", kind: KIND.code, id: digestOf(code), value, ifVersion: 0 }],
    result: undefined,
  }));
  return code;
}
