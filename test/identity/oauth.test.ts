// The token endpoint, the JWK Set and system tokens (semantics I20–I32), over 127.0.0.1 against a
// real service server on a temporary SQLite file, its clock moved by the tests: the three grants,
// client authentication and its brute-force limits, code and refresh-token reuse, ID tokens verified
// with jose against /oauth2/jwks, key rotation, and where each kind of token is accepted.
import { SignJWT, createLocalJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { CreatedApp } from "../../src/service/identity/accounts.js";
import { CODE_LIFETIME_MS, issueCode } from "../../src/service/identity/codes.js";
import { KIND, type SigningKeyRecord, type UserRecord } from "../../src/service/identity/records.js";
import { RETAIN_MS, rotateKeys } from "../../src/service/identity/signingKeys.js";
import {
  type Answer,
  type IdentityService,
  basicAuth,
  call,
  grantPermission,
  newApp,
  newOrganization,
  newUser,
  startIdentityService,
  tokenRequest,
} from "./identitySupport.js";

const ADMIN_TOKEN = "root-admin-token-0123456789";
const REDIRECT = "http://127.0.0.1:9/callback";
const WINDOW_MS = 15 * 60 * 1000;

let svc: IdentityService;
let url: string;
let user: UserRecord;
let appA: CreatedApp;
let appB: CreatedApp;
const ids = { dealer: "", s1: "", s2: "" };

beforeAll(async () => {
  svc = await startIdentityService({ token: ADMIN_TOKEN });
  url = svc.url;
  const r = svc.registry;
  ids.dealer = (await newOrganization(r, r.root().id, "Dealer")).id;
  ids.s1 = (await newOrganization(r, ids.dealer, "Site one", true)).systemId!;
  ids.s2 = (await newOrganization(r, ids.dealer, "Site two", true)).systemId!;
  user = await newUser(r, "ada@example.test");
  await grantPermission(r, { organization: ids.dealer, email: user.email, role: "admin", userId: user.id });
  appA = await newApp(r, { name: "App A", email: "app-a@example.test", redirectUris: [REDIRECT] });
  appB = await newApp(r, { name: "App B", email: "app-b@example.test", redirectUris: [REDIRECT] });
  await grantPermission(r, { organization: ids.dealer, email: "app-a@example.test", role: "reporter", userId: null });
}, 30_000);

afterAll(async () => {
  await svc?.close();
});

const basicA = () => basicAuth(appA.client_id, appA.client_secret);
const basicB = () => basicAuth(appB.client_id, appB.client_secret);

function expectNoStore(a: Answer): void {
  expect(a.headers.get("cache-control")).toBe("no-store");
  expect(a.headers.get("pragma")).toBe("no-cache");
  expect(a.headers.get("content-type")).toMatch(/^application\/json/);
}

function expectOAuthError(a: Answer, status: number, error: string): void {
  expect(a.status, JSON.stringify(a.body)).toBe(status);
  expect(a.body.error).toBe(error);
  expect(typeof a.body.error_description).toBe("string");
  expect(Object.keys(a.body).sort()).toEqual(["error", "error_description"]);
  expectNoStore(a);
}

async function jwks(): Promise<{ keys: { kid: string }[] }> {
  const got = await call(url, "GET", "/oauth2/jwks", null);
  expect(got.status).toBe(200);
  return got.body;
}

/** A code as the consent page makes it. */
function codeFor(clientId: string, scope = "openid offline_access"): Promise<string> {
  return issueCode(svc.registry, { clientId, redirectUri: REDIRECT, userId: user.id, scope }, svc.clock.now);
}

async function exchangeCode(code: string, auth = basicA(), redirectUri = REDIRECT): Promise<Answer> {
  return tokenRequest(url, auth, { grant_type: "authorization_code", code, redirect_uri: redirectUri });
}

const refresh = (token: string, auth = basicA()) =>
  tokenRequest(url, auth, { grant_type: "refresh_token", refresh_token: token });

const mine = (token: string) => call(url, "GET", "/api/organizations/mine", token);

describe("client_credentials (I22) and the JWK Set (I31)", () => {
  test("answers an ID token of the application that verifies against /oauth2/jwks", async () => {
    const got = await tokenRequest(url, basicA(), { grant_type: "client_credentials" });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expectNoStore(got);
    expect(got.body.token_type).toBe("Bearer");
    expect(got.body.expires_in).toBe(300);
    expect(got.body.refresh_token).toBeUndefined();
    expect(typeof got.body.access_token).toBe("string");
    expect(got.body.access_token).not.toBe(got.body.id_token);
    const set = await call(url, "GET", "/oauth2/jwks", null);
    expect(set.headers.get("cache-control")).toBe("public, max-age=300");
    const { payload } = await jwtVerify(got.body.id_token, createLocalJWKSet(set.body), {
      issuer: url,
      audience: appA.client_id,
      currentDate: new Date(svc.clock.ms),
      algorithms: ["ES256"],
    });
    expect(payload.sub).toBe(appA.client_id);
    expect(payload.azp).toBe(appA.client_id);
    expect(payload.email).toBe("app-a@example.test");
    expect(payload.iat).toBe(Math.floor(svc.clock.ms / 1000));
    expect(payload.exp).toBe(payload.iat! + 300);
    // The ID token works on the accounts host; the access token works nowhere.
    const orgs = await mine(got.body.id_token);
    expect(orgs.status).toBe(200);
    expect(orgs.body.map((o: { id: string }) => o.id)).toContain(ids.dealer);
    expect((await mine(got.body.access_token)).status).toBe(401);
  });

  test("the JWK Set needs no token and allows GET only", async () => {
    const set = await jwks();
    expect(set.keys.length).toBeGreaterThanOrEqual(1);
    for (const k of set.keys) expect(Object.keys(k)).not.toContain("d");
    const post = await call(url, "POST", "/oauth2/jwks", null);
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
  });
});

describe("client authentication and the request's form (I20)", () => {
  test("a wrong secret, an unknown client, no or a malformed Authorization: 401 invalid_client with the Basic challenge", async () => {
    const challenge = 'Basic realm="rsop", charset="UTF-8"';
    for (const auth of [
      basicAuth(appA.client_id, "not-the-secret"),
      basicAuth("00000000-0000-4000-8000-000000000000", appA.client_secret),
      null,
      "Basic !!!",
      `Basic ${Buffer.from("no-colon").toString("base64")}`,
      `Bearer ${appA.client_secret}`,
    ]) {
      const got = await tokenRequest(url, auth, { grant_type: "client_credentials" });
      expectOAuthError(got, 401, "invalid_client");
      expect(got.headers.get("www-authenticate")).toBe(challenge);
      expect(JSON.stringify(got.body)).not.toContain(appA.client_secret);
    }
  });

  test("credentials in the body, another content type, a repeated or missing parameter, an unknown grant: 400", async () => {
    const inBody = await tokenRequest(url, null, {
      grant_type: "client_credentials",
      client_id: appA.client_id,
      client_secret: appA.client_secret,
    });
    expectOAuthError(inBody, 400, "invalid_request");
    expect(inBody.body.error_description).toContain("Basic");
    const json = await call(
      url,
      "POST",
      "/oauth2/token",
      null,
      { grant_type: "client_credentials" },
      {
        authorization: basicA(),
      },
    );
    expectOAuthError(json, 400, "invalid_request");
    expectOAuthError(
      await tokenRequest(url, basicA(), "grant_type=client_credentials&grant_type=client_credentials"),
      400,
      "invalid_request",
    );
    expectOAuthError(await tokenRequest(url, basicA(), "scope=openid"), 400, "invalid_request");
    expectOAuthError(await tokenRequest(url, basicA(), { grant_type: "password" }), 400, "unsupported_grant_type");
    expectOAuthError(
      await tokenRequest(url, basicA(), { grant_type: "authorization_code", redirect_uri: REDIRECT }),
      400,
      "invalid_request",
    );
    const big = await tokenRequest(url, basicA(), { grant_type: "client_credentials", pad: "x".repeat(17_000) });
    expectOAuthError(big, 400, "invalid_request");
    const get = await call(url, "GET", "/oauth2/token", null);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });
});

describe("authorization_code (I23, I24)", () => {
  test("exchanges a code for the user's ID token, and with offline_access a refresh token", async () => {
    const got = await exchangeCode(await codeFor(appA.client_id));
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expectNoStore(got);
    expect(got.body.refresh_token).toMatch(/^rt1\./);
    const claims = decodeJwt(got.body.id_token);
    expect(claims).toMatchObject({ sub: user.id, aud: appA.client_id, azp: appA.client_id, email: user.email });
    expect(claims.iss).toBe(url);
    expect((await mine(got.body.id_token)).status).toBe(200);
    const online = await exchangeCode(await codeFor(appA.client_id, "openid"));
    expect(online.status).toBe(200);
    expect(online.body.refresh_token).toBeUndefined();
  });

  test("another redirect_uri, another client's code, an expired or unknown code: invalid_grant", async () => {
    const code = await codeFor(appA.client_id);
    expectOAuthError(await exchangeCode(code, basicA(), `${REDIRECT}/other`), 400, "invalid_grant");
    expectOAuthError(await exchangeCode(code, basicB()), 400, "invalid_grant");
    expectOAuthError(await exchangeCode("never-issued"), 400, "invalid_grant");
    const late = await codeFor(appA.client_id);
    svc.clock.advance(CODE_LIFETIME_MS + 1000);
    expectOAuthError(await exchangeCode(late), 400, "invalid_grant");
    // The expired code is gone from the store: pruned by the exchange.
    expect(
      [...svc.registry.records(KIND.code)].every((r) => (r.value as { expires: number }).expires > svc.clock.ms),
    ).toBe(true);
  });

  test("a code used twice: invalid_grant, and the refresh token of its first exchange is revoked", async () => {
    const code = await codeFor(appA.client_id);
    const first = await exchangeCode(code);
    expect(first.status).toBe(200);
    expectOAuthError(await exchangeCode(code), 400, "invalid_grant");
    expectOAuthError(await refresh(first.body.refresh_token), 400, "invalid_grant");
  });

  test("PKCE S256 (RFC 7636): a code with a challenge needs its verifier; a verifier needs a challenge (I69)", async () => {
    const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    // RFC 7636 Appendix B's example pair.
    const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    const codeWith = () =>
      issueCode(
        svc.registry,
        { clientId: appA.client_id, redirectUri: REDIRECT, userId: user.id, scope: "openid", codeChallenge: challenge },
        svc.clock.now,
      );
    const exchange = (code: string, extra: Record<string, string>) =>
      tokenRequest(url, basicA(), { grant_type: "authorization_code", code, redirect_uri: REDIRECT, ...extra });
    expectOAuthError(await exchange(await codeWith(), {}), 400, "invalid_grant");
    expectOAuthError(
      await exchange(await codeWith(), { code_verifier: `${verifier.slice(0, -1)}A` }),
      400,
      "invalid_grant",
    );
    expectOAuthError(await exchange(await codeFor(appA.client_id), { code_verifier: verifier }), 400, "invalid_grant");
    expect((await exchange(await codeWith(), { code_verifier: verifier })).status).toBe(200);
  });
});

describe("refresh_token (I25, I26)", () => {
  test("rotates: the new token works once, the old one is refused, and its reuse revokes the newest", async () => {
    const start = await exchangeCode(await codeFor(appA.client_id));
    const r1 = start.body.refresh_token as string;
    const second = await refresh(r1);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expectNoStore(second);
    const r2 = second.body.refresh_token as string;
    expect(r2).not.toBe(r1);
    expect(decodeJwt(second.body.id_token).sub).toBe(user.id);
    const third = await refresh(r2);
    expect(third.status).toBe(200);
    const r3 = third.body.refresh_token as string;
    // r2 again: a reuse, so the whole chain goes, r3 with it.
    expectOAuthError(await refresh(r2), 400, "invalid_grant");
    expectOAuthError(await refresh(r3), 400, "invalid_grant");
    expectOAuthError(await refresh(r1), 400, "invalid_grant");
  });

  test("another client's refresh token, a forged one: invalid_grant, and the chain survives", async () => {
    const start = await exchangeCode(await codeFor(appA.client_id));
    const token = start.body.refresh_token as string;
    expectOAuthError(await refresh(token, basicB()), 400, "invalid_grant");
    const [head, chain, generation, mac] = token.split(".") as [string, string, string, string];
    expectOAuthError(await refresh(`${head}.${chain}.${Number(generation) + 1}.${mac}`), 400, "invalid_grant");
    expectOAuthError(await refresh(`${head}.${chain}.${generation}.${mac.slice(1)}A`), 400, "invalid_grant");
    expectOAuthError(await refresh("not-a-refresh-token"), 400, "invalid_grant");
    expect((await refresh(token)).status).toBe(200);
  });
});

describe("ID tokens on the accounts host (I21, I6)", () => {
  test("an expired ID token is 401, a fresh one 200; a tampered one is 401", async () => {
    const old = (await tokenRequest(url, basicA(), { grant_type: "client_credentials" })).body.id_token as string;
    expect((await mine(old)).status).toBe(200);
    svc.clock.advance(301_000);
    expect((await mine(old)).status).toBe(401);
    const fresh = (await tokenRequest(url, basicA(), { grant_type: "client_credentials" })).body.id_token as string;
    expect((await mine(fresh)).status).toBe(200);
    const [h, p, s] = fresh.split(".") as [string, string, string];
    const at = Math.floor(p.length / 2);
    const tampered = `${h}.${p.slice(0, at)}${p[at] === "A" ? "B" : "A"}${p.slice(at + 1)}.${s}`;
    expect((await mine(tampered)).status).toBe(401);
  });

  test("a rotated key keeps verifying its tokens, and leaves the JWK Set after RETAIN_MS", async () => {
    const before = (await tokenRequest(url, basicA(), { grant_type: "client_credentials" })).body.id_token as string;
    const oldKid = decodeProtectedHeader(before).kid!;
    const oldKey = svc.registry.record(KIND.key, oldKid)!.value as SigningKeyRecord;
    // Tokens of the old key valid longer than it is kept: what only the key's removal refuses.
    const longLived = async () =>
      new SignJWT({ sub: appA.client_id, aud: appA.client_id })
        .setProtectedHeader({ alg: "ES256", kid: oldKid, typ: "JWT" })
        .setIssuer(url)
        .setIssuedAt(Math.floor(svc.clock.ms / 1000))
        .setExpirationTime(Math.floor(svc.clock.ms / 1000) + 10 * 3600)
        .setJti(crypto.randomUUID())
        .sign(await importJWK(oldKey.privateJwk as never, "ES256"));
    const late = await longLived();
    await rotateKeys(svc.registry, { now: svc.clock.now });
    expect((await mine(before)).status).toBe(200);
    expect((await jwks()).keys.map((k) => k.kid)).toContain(oldKid);
    expect((await jwks()).keys.length).toBe(2);
    const after = (await tokenRequest(url, basicA(), { grant_type: "client_credentials" })).body.id_token as string;
    expect(decodeProtectedHeader(after).kid).not.toBe(oldKid);
    expect((await mine(after)).status).toBe(200);
    expect((await mine(await longLived())).status).toBe(200);
    svc.clock.advance(RETAIN_MS + 1000);
    expect((await jwks()).keys.map((k) => k.kid)).not.toContain(oldKid);
    expect((await mine(late)).status).toBe(401);
  });
});

describe("system tokens (I30, I32)", () => {
  test("a user's system token works on its system only; ID tokens never on a system's host", async () => {
    const idToken = (await exchangeCode(await codeFor(appA.client_id))).body.id_token as string;
    const got = await call(url, "POST", `/api/systems/${ids.s1}/token`, idToken);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.expires_in).toBe(3600);
    const claims = decodeJwt(got.body.token);
    expect(claims).toMatchObject({ sub: user.id, aud: `urn:rsop:system:${ids.s1}`, azp: appA.client_id, iss: url });
    expect(claims.exp).toBe(claims.iat! + 3600);
    const system = got.body.token as string;
    expect((await call(url, "GET", `/${ids.s1}/holders`, system)).status).toBe(200);
    // The same user reaches the second system, but this token is the first one's only.
    const other = await call(url, "GET", `/${ids.s2}/holders`, system);
    expect(other.status).toBe(404);
    expect(other.body.error.issues.map((i: { path: string }) => i.path)).toContain("system_id");
    expect((await mine(system)).status).toBe(401);
    expect((await call(url, "GET", `/${ids.s1}/holders`, idToken)).status).toBe(401);
  });

  test("an application's ID token gets one too; unknown system 404, tokens-file caller 403, GET 405, no token 401", async () => {
    const appToken = (await tokenRequest(url, basicA(), { grant_type: "client_credentials" })).body.id_token as string;
    const got = await call(url, "POST", `/api/systems/${ids.s2}/token`, appToken);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(decodeJwt(got.body.token).sub).toBe(appA.client_id);
    expect((await call(url, "GET", `/${ids.s2}/holders`, got.body.token)).status).toBe(200);
    const unknown = await call(url, "POST", "/api/systems/no-such-system/token", appToken);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.issues[0].path).toBe("system_id");
    // Application B has no permission: the system is out of its reach, answered as unknown.
    const bToken = (await tokenRequest(url, basicB(), { grant_type: "client_credentials" })).body.id_token as string;
    const unreached = await call(url, "POST", `/api/systems/${ids.s1}/token`, bToken);
    expect(unreached.status).toBe(404);
    expect(unreached.body.error.message).toBe(unknown.body.error.message);
    expect(unreached.body.error.issues[0].path).toBe("system_id");
    const fromFile = await call(url, "POST", `/api/systems/${ids.s1}/token`, ADMIN_TOKEN);
    expect(fromFile.status).toBe(403);
    expect(fromFile.body.error.message).toContain("systems host directly");
    expect((await call(url, "GET", `/api/systems/${ids.s1}/token`, appToken)).status).toBe(405);
    expect((await call(url, "POST", `/api/systems/${ids.s1}/token`, null)).status).toBe(401);
  });
});

describe("brute force (I27)", () => {
  test("after 10 wrong secrets a client is locked (429, even with the right secret) until the window passes", async () => {
    svc.clock.advance(WINDOW_MS);
    const wrong = basicAuth(appB.client_id, "wrong-secret-0123456789");
    for (let i = 0; i < 10; i++)
      expectOAuthError(await tokenRequest(url, wrong, { grant_type: "client_credentials" }), 401, "invalid_client");
    const locked = await tokenRequest(url, wrong, { grant_type: "client_credentials" });
    expectOAuthError(locked, 429, "invalid_client");
    expect(locked.body.error_description).toMatch(/^Too many failed attempts; try again in \d+ s\.$/);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    expectOAuthError(await tokenRequest(url, basicB(), { grant_type: "client_credentials" }), 429, "invalid_client");
    // Another client from the same address is not locked (10 failures are below the address's 30).
    expect((await tokenRequest(url, basicA(), { grant_type: "client_credentials" })).status).toBe(200);
    svc.clock.advance(WINDOW_MS);
    expect((await tokenRequest(url, basicB(), { grant_type: "client_credentials" })).status).toBe(200);
  });

  test("after 30 failures from one address, every client from it is locked until the window passes", async () => {
    svc.clock.advance(WINDOW_MS);
    for (let i = 0; i < 30; i++) {
      const stranger = basicAuth(`00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, "guess-0123456789");
      expectOAuthError(await tokenRequest(url, stranger, { grant_type: "client_credentials" }), 401, "invalid_client");
    }
    const locked = await tokenRequest(url, basicA(), { grant_type: "client_credentials" });
    expectOAuthError(locked, 429, "invalid_client");
    expect(locked.headers.get("retry-after")).not.toBeNull();
    svc.clock.advance(WINDOW_MS);
    expect((await tokenRequest(url, basicA(), { grant_type: "client_credentials" })).status).toBe(200);
  }, 30_000);
});
