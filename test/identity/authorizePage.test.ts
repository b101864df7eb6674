// The login and consent page, `GET|POST /oauth2/auth` (semantics I60–I69): the whole authorization
// code flow in headless Chromium (login form, consent, the app's redirect URI receiving `code` and
// `state`, the code exchanged at /oauth2/token), then its refusals over plain fetch. Real parts: the
// service server on 127.0.0.1 over a SQLite file, a node:http receiver as the application's redirect
// URI, Debian's Chromium through playwright-core. Screenshots of both pages are written under the OS
// temp dir and their paths printed when the file ends.
import { existsSync, mkdtempSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { createApp, createUser } from "../../src/service/identity/accounts.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";

const CHROMIUM = "/usr/bin/chromium";
const PASSWORD = "correct horse battery staple";
const STATE = `xyz "&?=/ ünï <b>`;

let clock = Date.parse("2026-06-01T08:00:00.000Z");
let server: RunningServiceServer;
let receiver: Server;
let callback: string;
let queryCallback: string;
let client: { client_id: string; client_secret: string };
let hostile: { client_id: string; client_secret: string };
const received: string[] = [];
const shots: string[] = [];
// RFC 7636 Appendix B's example pair.
const PKCE_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const PKCE_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

beforeAll(async () => {
  receiver = createServer((req, res) => {
    received.push(req.url ?? "");
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>Back in the app</title><h1>Back in the app</h1>");
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const port = (receiver.address() as { port: number }).port;
  callback = `http://127.0.0.1:${port}/callback`;
  queryCallback = `http://127.0.0.1:${port}/callback?tenant=a%20b`;
  server = await startServiceServer({
    dataFile: join(tempDir(), "service.db"),
    port: 0,
    host: "127.0.0.1",
    log: () => {},
    now: () => clock,
  });
  const r = server.registry;
  await createUser(r, { email: "Ada@Example.test", password: PASSWORD, firstName: "Ada" });
  await createUser(r, { email: "bob@example.test", password: PASSWORD });
  client = await createApp(r, {
    name: "Door App",
    email: "door-app@example.test",
    redirectUris: [callback, queryCallback],
  });
  hostile = await createApp(r, {
    name: `<script>alert(1)</script> & "Co"`,
    email: "hostile@example.test",
    redirectUris: [callback],
  });
}, 30_000);

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  removeTempDirs();
  // Printed here: a test that writes to the console fails (test/setup/failOnConsole.ts).
  for (const shot of shots) console.log(`authorize page screenshot: ${shot}`);
});

function authUrl(params: Record<string, string>, clientId = client.client_id): string {
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: callback,
    response_type: "code",
    scope: "openid",
    state: STATE,
    ...params,
  });
  return `${server.url}/oauth2/auth?${query}`;
}

/** The login page over fetch: its cookie and hidden fields. */
async function loginPage(params: Record<string, string> = {}, clientId?: string) {
  const res = await fetch(authUrl(params, clientId), { redirect: "manual" });
  const html = await res.text();
  const cookie = (res.headers.getSetCookie()[0] ?? "").split(";")[0]!;
  return { res, html, cookie, txn: field(html, "txn"), csrf: field(html, "csrf") };
}

function field(html: string, name: string): string {
  return html.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1] ?? "";
}

async function post(fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/oauth2/auth`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { res, html: await res.text() };
}

/** Logs in over fetch; answers the consent page's fields. */
async function logIn(email = "ada@example.test", params: Record<string, string> = {}) {
  const p = await loginPage(params);
  const { res, html } = await post(
    { step: "login", txn: p.txn, csrf: p.csrf, email, password: PASSWORD },
    { cookie: p.cookie, origin: server.url },
  );
  expect(res.status, html).toBe(200);
  return { ...p, login: field(html, "login"), consentHtml: html };
}

function expectPageHeaders(res: Response, formTarget: string | null = new URL(callback).origin): void {
  const csp = res.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("base-uri 'none'");
  expect(csp).toContain(`form-action 'self'${formTarget === null ? ";" : ` ${formTarget};`}`);
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
}

const locationOf = (res: Response) => new URL(res.headers.get("location") ?? "about:blank");

describe("in headless Chromium (I60–I64, I67)", () => {
  test.skipIf(!existsSync(CHROMIUM))(
    "login, consent, Allow: the redirect URI gets code and the exact state; the code is exchanged for an ID token",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "rsop-authorize-"));
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        timeout: 20_000,
      });
      try {
        const page = await browser.newPage();
        page.setDefaultTimeout(10_000);
        await page.goto(
          authUrl({
            scope: "openid offline_access",
            prompt: "consent",
            nonce: "n-0S6_WzA2Mj",
            code_challenge: PKCE_CHALLENGE,
            code_challenge_method: "S256",
          }),
        );
        await expect.poll(() => page.locator("h1").textContent()).toBe("Sign in to Door App");
        expect(await page.locator("main").textContent()).toContain(
          "Door App asks to sign you in and keep you signed in.",
        );
        shots.push(join(dir, "login.png"));
        await page.screenshot({ path: shots[0]!, fullPage: true });
        await page.getByLabel("Email").fill("ada@example.test");
        await page.getByLabel("Password").fill(PASSWORD);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.waitForSelector("text=Allow Door App?");
        expect(await page.locator("main").textContent()).toContain("Signed in as ada@example.test");
        shots.push(join(dir, "consent.png"));
        await page.screenshot({ path: shots[1]!, fullPage: true });
        await page.getByRole("button", { name: "Allow" }).click();
        await page.waitForURL((u) => u.pathname === "/callback");
        const landed = new URL(page.url());
        expect(landed.origin).toBe(new URL(callback).origin);
        expect(landed.searchParams.get("state")).toBe(STATE);
        const code = landed.searchParams.get("code") ?? "";
        expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(received).toContain(`${landed.pathname}${landed.search}`);
        // The code exchange (the token endpoint, written beside this page).
        const token = await fetch(`${server.url}/oauth2/token`, {
          method: "POST",
          headers: {
            authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}`,
            "content-type": "application/x-www-form-urlencoded",
          },
          body: new URLSearchParams({
            grant_type: "authorization_code",
            code,
            redirect_uri: callback,
            code_verifier: PKCE_VERIFIER,
          }).toString(),
        });
        const tokenBody = (await token.json().catch(() => ({}))) as Record<string, unknown>;
        expect(token.status, JSON.stringify(tokenBody)).toBe(200);
        expect(typeof tokenBody.id_token).toBe("string");
        // The request's nonce comes back in the ID token, as OpenID Connect clients check (I69).
        const claims = decodeJwt(tokenBody.id_token as string);
        expect(claims).toMatchObject({ nonce: "n-0S6_WzA2Mj", aud: client.client_id, iss: server.url });
        expect(typeof tokenBody.refresh_token).toBe("string");
      } finally {
        await browser.close();
      }
    },
    30_000,
  );
});

describe("GET /oauth2/auth (I60, I61, I66)", () => {
  test("an unknown client or a redirect_uri not registered exactly: a 400 page, never a redirect", async () => {
    for (const url of [
      authUrl({ redirect_uri: `${callback}/other` }),
      authUrl({ redirect_uri: `${callback}?x=1` }),
      authUrl({ client_id: "00000000-0000-4000-8000-000000000000" }),
      `${server.url}/oauth2/auth?redirect_uri=${encodeURIComponent(callback)}&response_type=code&scope=openid`,
    ]) {
      const res = await fetch(url, { redirect: "manual" });
      expect(res.status, url).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expectPageHeaders(res, null);
      expect(await res.text()).toContain('role="alert"');
    }
  });

  test("other problems go back to the redirect URI with error and state (303)", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ scope: "openid profile" }, "invalid_scope"],
      [{ scope: "" }, "invalid_request"],
      [{ scope: "openid offline_access" }, "invalid_request"],
      [{ prompt: "none" }, "login_required"],
      [{ code_challenge: PKCE_CHALLENGE, code_challenge_method: "plain" }, "invalid_request"],
      [{ code_challenge: PKCE_CHALLENGE }, "invalid_request"],
      [{ code_challenge: "short", code_challenge_method: "S256" }, "invalid_request"],
      [{ code_challenge_method: "S256" }, "invalid_request"],
    ];
    for (const [params, error] of cases) {
      const res = await fetch(authUrl(params), { redirect: "manual" });
      expect(res.status, JSON.stringify(params)).toBe(303);
      const to = locationOf(res);
      expect(`${to.origin}${to.pathname}`).toBe(callback);
      expect(to.searchParams.get("error")).toBe(error);
      expect(to.searchParams.get("state")).toBe(STATE);
      expectPageHeaders(res);
    }
  });

  test("the login page: a form with labels, the hidden fields, the CSRF cookie and the security headers", async () => {
    const { res, html, cookie, txn, csrf } = await loginPage();
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    expect(html).toContain("<h1>Sign in to Door App</h1>");
    expect(html).toContain("Door App asks to sign you in.");
    expect(html).toContain('<label for="email">Email</label>');
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).not.toMatch(/<script/i);
    expect(txn).not.toBe("");
    expect(csrf).not.toBe("");
    expect(cookie).toMatch(/^rsop_csrf=[A-Za-z0-9_-]{43}$/);
    expect(res.headers.getSetCookie()[0]).toBe(`${cookie}; HttpOnly; SameSite=Strict; Path=/oauth2`);
    // A browser's cookie is kept (two tabs signing in at once both work).
    const again = await fetch(authUrl({}), { headers: { cookie } });
    expect(again.headers.getSetCookie()[0]?.split(";")[0]).toBe(cookie);
    // Every value is escaped: an application's name is text.
    const other = await loginPage({}, hostile.client_id);
    expect(other.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;");
    expect(other.html).not.toContain("<script>");
  });
});

describe("POST /oauth2/auth (I62, I63, I65, I67, I68)", () => {
  test("refused with a 403 page: no cookie, a foreign Origin, a CSRF field of another cookie", async () => {
    const p = await loginPage();
    const fields = { step: "login", txn: p.txn, csrf: p.csrf, email: "ada@example.test", password: PASSWORD };
    const other = await loginPage();
    const refused: Record<string, string>[] = [
      {},
      { cookie: p.cookie, origin: "http://evil.example" },
      { cookie: p.cookie, origin: `${server.url}.evil.example` },
      { cookie: other.cookie, origin: "null" },
      { cookie: other.cookie, origin: server.url },
    ];
    for (const headers of refused) {
      const { res, html } = await post(fields, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expectPageHeaders(res, null);
      expect(html).toContain('role="alert"');
      expect(html).not.toContain(PASSWORD);
    }
  });

  test("a wrong password: 401 with the form again; 5 failures, then 429 even with the right password", async () => {
    const p = await loginPage();
    const wrong = { step: "login", txn: p.txn, csrf: p.csrf, email: "bob@example.test", password: "wrong password!" };
    const headers = { cookie: p.cookie, origin: server.url };
    for (let i = 0; i < 5; i++) {
      const { res, html } = await post(wrong, headers);
      expect(res.status).toBe(401);
      expectPageHeaders(res);
      expect(html).toContain("Email or password is wrong.");
      expect(html).toContain('value="bob@example.test"');
      expect(html).not.toContain("wrong password!");
    }
    const unknown = await post({ ...wrong, email: `"><b>nobody@example.test` }, headers);
    expect(unknown.res.status).toBe(401);
    expect(unknown.html).toContain("Email or password is wrong.");
    expect(unknown.html).toContain("&quot;&gt;&lt;b&gt;nobody@example.test");
    const limited = await post({ ...wrong, password: PASSWORD }, headers);
    expect(limited.res.status).toBe(429);
    expect(Number(limited.res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.html).toContain("Too many failed sign-ins.");
    clock += 15 * 60_000;
  });

  test("20 failures from one address: 429 for any email, until the window ends", async () => {
    const p = await loginPage();
    const headers = { cookie: p.cookie, origin: server.url };
    for (let i = 0; i < 20; i++) {
      const { res } = await post(
        { step: "login", txn: p.txn, csrf: p.csrf, email: `x${i}@example.test`, password: "nope" },
        headers,
      );
      expect(res.status).toBe(401);
    }
    const { res } = await post(
      { step: "login", txn: p.txn, csrf: p.csrf, email: "ada@example.test", password: PASSWORD },
      headers,
    );
    expect(res.status).toBe(429);
    clock += 15 * 60_000;
  });

  test("Deny: 303 with error=access_denied and state; Allow on a redirect URI with a query keeps it", async () => {
    const c = await logIn();
    expect(c.consentHtml).toContain("Door App asks to sign you in.");
    const consent = { step: "consent", txn: c.txn, csrf: c.csrf, login: c.login };
    const denied = await post({ ...consent, decision: "deny" }, { cookie: c.cookie, origin: server.url });
    expect(denied.res.status).toBe(303);
    expectPageHeaders(denied.res);
    const to = locationOf(denied.res);
    expect(to.searchParams.get("error")).toBe("access_denied");
    expect(to.searchParams.get("state")).toBe(STATE);
    expect(to.searchParams.get("code")).toBeNull();
    const q = await logIn("ada@example.test", { redirect_uri: queryCallback });
    const allowed = await post(
      { step: "consent", txn: q.txn, csrf: q.csrf, login: q.login, decision: "allow" },
      // What Chromium sends under the page's no-referrer policy: no origin named.
      { cookie: q.cookie, origin: "null" },
    );
    expect(allowed.res.status).toBe(303);
    const location = allowed.res.headers.get("location") ?? "";
    expect(location.startsWith(`${queryCallback}&code=`)).toBe(true);
    expect(new URL(location).searchParams.get("state")).toBe(STATE);
  });

  test("a login proof of another browser, an expired transaction or proof: 400 pages", async () => {
    const c = await logIn();
    const other = await loginPage();
    const consent = { step: "consent", txn: c.txn, login: c.login, decision: "allow" };
    const stolen = await post({ ...consent, csrf: other.csrf }, { cookie: other.cookie });
    expect(stolen.res.status).toBe(400);
    clock += 5 * 60_000;
    const late = await post({ ...consent, csrf: c.csrf }, { cookie: c.cookie });
    expect(late.res.status).toBe(400);
    clock += 5 * 60_000;
    const expired = await post(
      { step: "login", txn: c.txn, csrf: c.csrf, email: "ada@example.test", password: PASSWORD },
      { cookie: c.cookie },
    );
    expect(expired.res.status).toBe(400);
    expect(expired.html).toContain("expired");
    const forged = await post({ step: "login", txn: `${c.txn}x`, csrf: c.csrf }, { cookie: c.cookie });
    expect(forged.res.status).toBe(400);
  });

  test("not a form: 415; over 16 KiB: 413; another method: 405 with Allow", async () => {
    const p = await loginPage();
    const json = await fetch(`${server.url}/oauth2/auth`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: p.cookie },
      body: "{}",
    });
    expect(json.status).toBe(415);
    const big = await post({ step: "login", txn: p.txn, csrf: p.csrf, pad: "x".repeat(17_000) }, { cookie: p.cookie });
    expect(big.res.status).toBe(413);
    const put = await fetch(`${server.url}/oauth2/auth`, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, POST");
    expectPageHeaders(put, null);
  });
});
