// The signing keys of a service (semantics I6), kept in the registry: ES256 key pairs made with
// jose. The newest key signs; a key older than `rotateAfterMs` (30 days) is replaced at the next
// signing, and `rsop keys rotate` replaces it at once. A replaced key keeps verifying (and stays in
// the JWK Set) for `retainMs` (the longest token lifetime plus a margin: 3,900 s), then is removed,
// so that a rotation never invalidates a token still valid.
import { randomUUID } from "node:crypto";
import { type JWK, SignJWT, exportJWK, generateKeyPair, importJWK, jwtVerify, decodeProtectedHeader } from "jose";
import type { RegistryChange } from "../store/registryStore.js";
import type { TenantRegistry } from "../tenants/registry.js";
import { KIND, type SigningKeyRecord } from "./records.js";
import type { TokenClaims, TokenKeys, VerifiedToken } from "./tokenKeys.js";

const ALG = "ES256";
/** A key signs for this long before it is replaced. */
export const ROTATE_AFTER_MS = 30 * 24 * 3600 * 1000;
/** A replaced key verifies for this long: system tokens live 3,600 s, ID tokens 300 s. */
export const RETAIN_MS = 3900 * 1000;

/** Options of openSigningKeys. */
export interface SigningKeyOptions {
  readonly now?: () => number;
  readonly rotateAfterMs?: number;
  readonly retainMs?: number;
}

async function newKey(now: number): Promise<SigningKeyRecord> {
  const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
  const kid = randomUUID();
  const pub = await exportJWK(publicKey);
  return {
    kid,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: ALG },
    publicJwk: { kty: pub.kty, crv: pub.crv, x: pub.x, y: pub.y, kid, alg: ALG, use: "sig" },
    created: new Date(now).toISOString(),
    retired: null,
  };
}

function keysOf(registry: TenantRegistry): SigningKeyRecord[] {
  return [...registry.records(KIND.key)].map((r) => r.value as SigningKeyRecord);
}

/**
 * Retires the signing key and makes a new one (`rsop keys rotate`, and when the key is old); removes
 * retired keys past `retainMs`. Answers the new key's id.
 */
export async function rotateKeys(registry: TenantRegistry, options: SigningKeyOptions = {}): Promise<string> {
  const now = (options.now ?? Date.now)();
  const made = await newKey(now);
  const retain = options.retainMs ?? RETAIN_MS;
  return registry.updateRecords(() => {
    const changes: RegistryChange[] = [];
    for (const r of registry.records(KIND.key)) {
      const k = r.value as SigningKeyRecord;
      if (k.retired === null)
        changes.push({
          op: "putRecord",
          kind: KIND.key,
          id: k.kid,
          value: { ...k, retired: new Date(now).toISOString() },
          ifVersion: r.version,
        });
      else if (Date.parse(k.retired) + retain < now) changes.push({ op: "deleteRecord", kind: KIND.key, id: k.kid });
    }
    changes.push({ op: "putRecord", kind: KIND.key, id: made.kid, value: made, ifVersion: 0 });
    return { changes, result: made.kid };
  });
}

/** The token keys of a service over its registry (made at first use). */
export function openSigningKeys(registry: TenantRegistry, options: SigningKeyOptions = {}): TokenKeys {
  const now = options.now ?? Date.now;
  const rotateAfter = options.rotateAfterMs ?? ROTATE_AFTER_MS;
  const retain = options.retainMs ?? RETAIN_MS;
  // Imported keys by kid (importing costs more than verifying).
  const imported = new Map<string, ReturnType<typeof importJWK>>();
  const keyOf = (jwk: Readonly<Record<string, unknown>>, kid: string, use: string) => {
    let k = imported.get(`${use}:${kid}`);
    if (k === undefined) imported.set(`${use}:${kid}`, (k = importJWK(jwk as JWK, ALG)));
    return k;
  };
  const live = () => keysOf(registry).filter((k) => k.retired === null || Date.parse(k.retired) + retain >= now());
  let rotating: Promise<unknown> | null = null;
  // Another process of a shared database may have made the key a token names: the registry is read
  // again for an unknown key id, at most once a second (made-up key ids cost nothing more).
  let reread = Number.NEGATIVE_INFINITY;
  const find = async (kid: string | undefined): Promise<SigningKeyRecord | undefined> => {
    const known = live().find((k) => k.kid === kid);
    if (known !== undefined || kid === undefined || now() - reread < 1000) return known;
    reread = now();
    await registry.refresh();
    return live().find((k) => k.kid === kid);
  };
  const current = async (): Promise<SigningKeyRecord> => {
    const signing = keysOf(registry).find((k) => k.retired === null);
    if (signing !== undefined && Date.parse(signing.created) + rotateAfter > now()) return signing;
    // One rotation at a time; another process may rotate too (ifVersion): re-read and use its key.
    rotating ??= rotateKeys(registry, { now, retainMs: retain })
      .catch(() => registry.refresh())
      .finally(() => {
        rotating = null;
      });
    await rotating;
    const made = keysOf(registry).find((k) => k.retired === null);
    if (made === undefined) throw new Error("no signing key could be made");
    return made;
  };
  return {
    async sign(claims: TokenClaims, issuer: string, lifetimeS: number): Promise<string> {
      const key = await current();
      const iat = Math.floor(now() / 1000);
      return new SignJWT({ ...claims })
        .setProtectedHeader({ alg: ALG, kid: key.kid, typ: "JWT" })
        .setIssuer(issuer)
        .setIssuedAt(iat)
        .setExpirationTime(iat + lifetimeS)
        .setJti(randomUUID())
        .sign(await keyOf(key.privateJwk, key.kid, "sign"));
    },
    async verify(token: string, audiences?: (aud: string) => boolean): Promise<VerifiedToken | null> {
      try {
        const key = await find(decodeProtectedHeader(token).kid);
        if (key === undefined) return null;
        const { payload } = await jwtVerify(token, await keyOf(key.publicJwk, key.kid, "verify"), {
          algorithms: [ALG],
          currentDate: new Date(now()),
          clockTolerance: 0,
        });
        const v = payload as unknown as VerifiedToken;
        if (typeof v.sub !== "string" || typeof v.aud !== "string" || typeof v.jti !== "string") return null;
        if (audiences !== undefined && !audiences(v.aud)) return null;
        return v;
      } catch {
        return null;
      }
    },
    jwks: () => ({ keys: live().map((k) => k.publicJwk) }),
  };
}
