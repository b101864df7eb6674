// Credential invitations and self-help (I80–I99), over a real service server (SQLite in a temp dir,
// a clock the test moves) and a real SMTP server on 127.0.0.1 whose messages are parsed with
// mailparser: a digital credential's create answers its invite id, the invitation answers the same
// one and mails the activation link; self-help resets are counted per holder and UTC month, refused
// with a restriction beyond the limit, allowed again once cleared or in the next month.
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { createSmtpMailer, parseSmtpUrl } from "../../src/adapters/mail/smtpMailer.js";
import { parseTokens } from "../../src/service/auth/tokens.js";
import { secondsToMonthEnd } from "../../src/service/identity/selfHelp.js";
import { run } from "../adapters/cliHarness.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";

const ROOT = "root-admin-token-0123456789";
const A_ADMIN = "customer-a-admin-0123456789";
const A_REPORTER = "customer-a-reporter-012345";
const A_MANAGER_MAIN = "customer-a-manager-main-0123";
const A_MANAGER_IT = "customer-a-manager-it-012345";
const B_ADMIN = "customer-b-admin-0123456789";

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

let server: RunningServiceServer | undefined;
let smtp: SMTPServer | undefined;
let smtpOpen = false;
const received: Promise<ParsedMail>[] = [];
let nowMs = Date.parse("2026-05-04T09:00:00.000Z");
const ids = { dealer: "", a: "", b: "", sysA: "", sysB: "", holder: "", digital: "", card: "", inviteId: "" };
const dir = tempDir();
const db = join(dir, "service.db");

async function call(token: string | null, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${server!.url}${path}`, {
    method,
    headers: {
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
}

function ok(r: Answer, status: number, what: string): any {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

function refused(r: Answer, status: number, paths: string[] = []): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error.issues.map((i: { path: string }) => i.path)).toEqual(paths);
}

async function startSmtp(): Promise<number> {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, cb) {
      received.push(simpleParser(stream));
      stream.on("end", () => cb());
    },
  });
  await new Promise<void>((resolve) => smtp!.listen(0, "127.0.0.1", resolve));
  smtpOpen = true;
  return (smtp.server.address() as AddressInfo).port;
}

async function stopSmtp(): Promise<void> {
  if (!smtpOpen) return;
  smtpOpen = false;
  await new Promise<void>((resolve) => smtp!.close(() => resolve()));
}

const invite = (token: string, extra: Record<string, unknown> = {}) =>
  call(token, "POST", "/api/credentials/holders/invite", {
    systemId: ids.sysA,
    holderId: ids.holder,
    credentialId: ids.digital,
    types: ["touch"],
    sendEmail: true,
    email: "pat@example.test",
    ...extra,
  });
const reset = (token = A_ADMIN, extra: Record<string, unknown> = {}) =>
  call(token, "POST", "/api/credentials/holders/reset", {
    systemId: ids.sysA,
    holderId: ids.holder,
    credentialId: ids.digital,
    ...extra,
  });
const restrictions = (token = A_ADMIN) =>
  call(token, "GET", `/api/credentials/holders/restrictions?systemId=${ids.sysA}&holderId=${ids.holder}`);

beforeAll(async () => {
  // First start: the root's token only and no mailer; the organizations are made here.
  server = await startServiceServer({ dataFile: db, token: ROOT, port: 0, log: () => {}, now: () => nowMs });
  const rootId = (ok(await call(ROOT, "GET", "/api/organizations/mine"), 200, "mine") as { id: string }[])[0]!.id;
  ids.dealer = ok(await call(ROOT, "POST", `/api/organizations/${rootId}/children`, { name: "Dealer" }), 201, "d").id;
  for (const key of ["a", "b"] as const) {
    const made = ok(
      await call(ROOT, "POST", `/api/organizations/${ids.dealer}/children`, {
        name: key === "a" ? "Customer A" : "Customer B",
        import: { ...(BUILDING_JSON as object), systemId: randomUUID() },
      }),
      201,
      key,
    );
    ids[key] = made.id;
    ids[key === "a" ? "sysA" : "sysB"] = made.systemId;
  }
}, 30_000);

afterAll(async () => {
  await server?.close();
  await stopSmtp();
  removeTempDirs();
});

describe("I81–I83: invitations", () => {
  test("without --smtp, sendEmail is refused with 503 naming the option; sendEmail false answers the invite id", async () => {
    ids.holder = ok(
      await call(ROOT, "POST", `/${ids.sysA}/holders`, {
        firstName: "Pat",
        lastName: "Mobile",
        partition: "part-pharmacy-it",
      }),
      201,
      "holder",
    ).id;
    const made = ok(
      await call(ROOT, "POST", `/${ids.sysA}/holders/${ids.holder}/credentials`, { types: ["touch"] }),
      201,
      "touch",
    );
    expect(made.inviteId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    ids.digital = made.id;
    ids.inviteId = made.inviteId;
    const card = ok(
      await call(ROOT, "POST", `/${ids.sysA}/holders/${ids.holder}/credentials`, {
        types: ["card"],
        credentialNumber: 777001,
      }),
      201,
      "card",
    );
    expect(card).toEqual({ id: expect.any(String) });
    ids.card = card.id;
    const r = await invite(ROOT);
    refused(r, 503, ["body.sendEmail"]);
    expect(r.body.error.message).toContain("--smtp");
    expect(ok(await invite(ROOT, { sendEmail: false, email: undefined }), 200, "no mail")).toEqual({
      inviteId: ids.inviteId,
    });
    // Restarted with tokens naming the customers and a mailer to a real SMTP server.
    await server!.close();
    const port = await startSmtp();
    const parsed = parseTokens({
      [A_ADMIN]: { role: "admin", organizations: [ids.a] },
      [A_REPORTER]: { role: "reporter", partitions: ["part-pharmacy-it"], organizations: [ids.a] },
      [A_MANAGER_MAIN]: { role: "manager", partitions: ["part-main-campus"], organizations: [ids.a] },
      [A_MANAGER_IT]: { role: "manager", partitions: ["part-pharmacy-it"], organizations: [ids.a] },
      [B_ADMIN]: { role: "admin", organizations: [ids.b] },
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    server = await startServiceServer({
      dataFile: db,
      token: ROOT,
      tokens: { file: "tokens.json", entries: parsed.entries },
      port: 0,
      log: () => {},
      now: () => nowMs,
      mailer: createSmtpMailer(`smtp://127.0.0.1:${port}?from=access@example.test`),
    });
  });

  test("the invitation answers the create's invite id and mails the activation link", async () => {
    expect(ok(await invite(A_ADMIN), 200, "invite")).toEqual({ inviteId: ids.inviteId });
    expect(received).toHaveLength(1);
    const mail = await received[0]!;
    expect(mail.to).toMatchObject({ text: "pat@example.test" });
    expect(mail.from).toMatchObject({ text: "access@example.test" });
    expect(mail.subject).toContain("Customer A");
    const link = `${server!.url}/activate?invite=${ids.inviteId}`;
    expect(mail.text).toContain(link);
    expect(mail.html).toContain(`href="${link}"`);
    // A manager of the holder's partition may invite; one of another partition does not see the holder.
    expect(ok(await invite(A_MANAGER_IT, { sendEmail: false }), 200, "manager").inviteId).toBe(ids.inviteId);
    refused(await invite(A_MANAGER_MAIN, { sendEmail: false }), 404, ["body.holderId"]);
    refused(await invite(A_REPORTER, { sendEmail: false }), 403);
    expect(received).toHaveLength(1);
  });

  test("refusals name their field", async () => {
    refused(await invite(A_ADMIN, { email: undefined }), 400, ["body.email"]);
    refused(await invite(A_ADMIN, { types: ["token"] }), 400, ["body.types"]);
    refused(await invite(A_ADMIN, { types: ["card"], extra: 1 }), 400, ["body.extra", "body.types[0]"]);
    refused(await invite(A_ADMIN, { holderId: undefined, credentialId: undefined }), 400, [
      "body.holderId",
      "body.credentialId",
    ]);
    refused(await invite(A_ADMIN, { holderId: "no-such-holder" }), 404, ["body.holderId"]);
    refused(await invite(A_ADMIN, { credentialId: "no-such-credential" }), 404, ["body.credentialId"]);
    refused(await invite(A_ADMIN, { credentialId: ids.card }), 409, ["body.credentialId"]);
    // Another tenant's system is answered exactly as an unknown one.
    const other = await invite(B_ADMIN);
    const unknown = await invite(B_ADMIN, { systemId: "00000000-0000-4000-8000-000000000000" });
    refused(other, 404, ["body.systemId"]);
    expect(other.body.error.message).toBe(unknown.body.error.message);
    refused(await call(null, "POST", "/api/credentials/holders/invite", {}), 401);
    const get = await call(A_ADMIN, "GET", "/api/credentials/holders/invite");
    refused(get, 405);
    expect(get.headers.get("allow")).toBe("POST");
    refused(await call(A_ADMIN, "POST", "/api/credentials/holders/invite", "not json"), 400, ["body"]); // HJ4b
    expect(received).toHaveLength(1);
  });
});

describe("I84–I88: self-help resets", () => {
  test("one reset a month; the second is refused with a restriction until cleared", async () => {
    const credential = `/${ids.sysA}/holders/${ids.holder}/credentials/${ids.digital}`;
    const activate = () =>
      call(ROOT, "POST", `${credential}/activate`, { credentialNumber: 424242, description: "Pixel 9" });
    expect((await activate()).status).toBe(204);
    expect(ok(await reset(), 200, "first")).toEqual({ inviteId: ids.inviteId, resetsRemaining: 0 });
    // The reset made the credential pending again: the holder activates it on the new device.
    expect(ok(await call(ROOT, "GET", credential), 200, "pending")).toMatchObject({
      credentialNumber: null,
      description: "Pending",
    });
    expect((await activate()).status).toBe(204);
    const second = await reset();
    refused(second, 429, ["body.credentialId"]);
    expect(second.headers.get("retry-after")).toBe(String(secondsToMonthEnd(nowMs)));
    const restriction = { holderId: ids.holder, systemId: ids.sysA, credentialId: ids.digital };
    expect(ok(await restrictions(), 200, "list")).toEqual([restriction]);
    expect(ok(await restrictions(A_REPORTER), 200, "reporter reads")).toEqual([restriction]);
    refused(await call(A_REPORTER, "POST", "/api/credentials/holders/restrictions/clear", restriction), 403);
    refused(await restrictions(A_MANAGER_MAIN), 404, ["query.holderId"]);
    const clear = { systemId: ids.sysA, holderId: ids.holder, credentialId: ids.digital };
    expect((await call(A_ADMIN, "POST", "/api/credentials/holders/restrictions/clear", clear)).status).toBe(204);
    expect(ok(await restrictions(), 200, "cleared")).toEqual([]);
    expect(ok(await reset(A_MANAGER_IT), 200, "after clear").resetsRemaining).toBe(0);
    refused(await reset(), 429, ["body.credentialId"]);
  });

  test("the next month allows a reset again and restricts nothing", async () => {
    nowMs = Date.parse("2026-06-01T00:00:05.000Z");
    expect(ok(await restrictions(), 200, "new month")).toEqual([]);
    expect(ok(await reset(), 200, "new month").inviteId).toBe(ids.inviteId);
    refused(await reset(), 429, ["body.credentialId"]);
  });

  test("I85: the limit is the lowest credentialResetsPerMonth of the system's cloud nodes (absent: 1)", async () => {
    // June so far: one reset made, and the next refused at the default of 1.
    const nodes = ok(await call(ROOT, "GET", `/${ids.sysA}/cloud-nodes`), 200, "nodes") as { id: string }[];
    const setAll = async (perNode: (i: number) => number | undefined) => {
      for (const [i, n] of nodes.entries()) {
        const current = ok(await call(ROOT, "GET", `/${ids.sysA}/cloud-nodes/${n.id}`), 200, "node");
        const { credentialResetsPerMonth: _, ...rest } = current;
        const value = perNode(i);
        const body = value === undefined ? rest : { ...rest, credentialResetsPerMonth: value };
        expect((await call(ROOT, "PUT", `/${ids.sysA}/cloud-nodes/${n.id}`, body)).status).toBe(204);
      }
    };
    // One node allows 3, the other keeps the default: the default decides.
    await setAll((i) => (i === 0 ? 3 : undefined));
    refused(await reset(), 429, ["body.credentialId"]);
    await setAll(() => 3);
    // The refusal restricted the credential (I86); clearing it sets the month's count back to 0 (I87).
    const clear = { systemId: ids.sysA, holderId: ids.holder, credentialId: ids.digital };
    expect((await call(A_ADMIN, "POST", "/api/credentials/holders/restrictions/clear", clear)).status).toBe(204);
    expect(ok(await reset(), 200, "first of three").resetsRemaining).toBe(2);
    expect(ok(await reset(), 200, "second of three").resetsRemaining).toBe(1);
    expect(ok(await reset(), 200, "third of three").resetsRemaining).toBe(0);
    refused(await reset(), 429, ["body.credentialId"]);
    refused(
      await call(ROOT, "PUT", `/${ids.sysA}/cloud-nodes/${nodes[0]!.id}`, { name: "N", credentialResetsPerMonth: -1 }),
      400,
      ["body.credentialResetsPerMonth"],
    );
    await setAll(() => undefined);
  });

  test("refusals: fields, holder, card, other tenant, query, reporter", async () => {
    refused(await reset(A_ADMIN, { credentialId: undefined, holderId: 5 }), 400, [
      "body.holderId",
      "body.credentialId",
    ]);
    refused(await reset(A_ADMIN, { holderId: "no-such-holder" }), 404, ["body.holderId"]);
    refused(await reset(A_ADMIN, { credentialId: ids.card }), 409, ["body.credentialId"]);
    refused(await reset(B_ADMIN), 404, ["body.systemId"]);
    refused(await reset(A_REPORTER), 403);
    refused(await call(A_ADMIN, "GET", `/api/credentials/holders/restrictions?systemId=${ids.sysA}`), 400, [
      "query.holderId",
    ]);
    refused(
      await call(B_ADMIN, "GET", `/api/credentials/holders/restrictions?systemId=${ids.sysA}&holderId=${ids.holder}`),
      404,
      ["query.systemId"],
    );
  });

  test("allowCredentialResets false: 403", async () => {
    ok(
      await call(ROOT, "PUT", `/api/organizations/${ids.dealer}/children/${ids.a}`, {
        name: "Customer A",
        allowCredentialResets: false,
      }),
      204,
      "flag",
    );
    const r = await reset();
    refused(r, 403);
    expect(r.body.error.message).toContain("allowCredentialResets");
  });

  test("an SMTP server out of reach: 502, the invite id not in the message", async () => {
    await stopSmtp();
    const r = await invite(A_ADMIN);
    refused(r, 502);
    expect(JSON.stringify(r.body)).not.toContain(ids.inviteId);
  });
});

describe("I90: --smtp", () => {
  test("URLs are checked; a malformed one is a usage error (exit 2) that never quotes the password", async () => {
    expect(parseSmtpUrl("smtps://u:p%40ss@mail.example.test?from=a@example.test")).toMatchObject({
      secure: true,
      port: 465,
      user: "u",
      password: "p@ss",
      from: "a@example.test",
      tls: "auto",
    });
    expect(parseSmtpUrl("smtp://127.0.0.1:2525?tls=off")).toMatchObject({ secure: false, port: 2525, tls: "off" });
    for (const bad of ["http://u:secret-pw@mail.example.test", "smtp://u:secret-pw@mail.example.test?pool=true"]) {
      const r = await run(["serve", "--data", join(tempDir(), "new.db"), "--token", ROOT, "--smtp", bad]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("--smtp");
      expect(r.stderr).not.toContain("secret-pw");
    }
  });
});
