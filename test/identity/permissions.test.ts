// Permissions and invitations (semantics I40–I49) over a real service server (127.0.0.1, a temporary
// SQLite file): creating them for a user's, an application's or an unknown email (an invitation),
// listing with paging headers, changing, removing and accepting them; who may do what (admin only
// changes, every role reading, 404 out of reach); the root's last admin; the webhook events they
// emit, received over real HTTPS; and the organizations' `permissions` and permission levels.
import { KIND } from "../../src/service/identity/records.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseTokens } from "../../src/service/auth/tokens.js";
import type { UserRecord } from "../../src/service/identity/records.js";
import { openSigningKeys } from "../../src/service/identity/signingKeys.js";
import { RECEIVER_ALLOW, type Received, Receiver, eventually, selfSignedCertificate } from "../webhooks/receiver.js";
import {
  type Answer,
  type IdentityService,
  basicAuth,
  call,
  newApp,
  newOrganization,
  newUser,
  startIdentityService,
  tokenRequest,
} from "./identitySupport.js";

const ROOT = "root-admin-token-0123456789abcdef";
const OPERATOR = "operator-token-0123456789abcdef";

let svc: IdentityService;
let receiver: Receiver;
const ids = { dealer: "", other: "", customer: "", system: "", otherSystem: "", root: "" };
const users: Record<string, UserRecord> = {};
let app: { client_id: string; client_secret: string };

/** An ID token of a user, signed with the service's own keys (kept in its registry). */
function idToken(user: UserRecord): Promise<string> {
  return openSigningKeys(svc.registry, { now: svc.clock.now }).sign({ sub: user.id, aud: "test" }, "http://test", 300);
}

/** A call; the clock moves 1 ms first, so that permissions made one after the other are ordered by time. */
const req = (token: string | null, method: string, path: string, body?: unknown) => {
  svc.clock.advance(1);
  return call(svc.url, method, path, token, body);
};

function ok(a: Answer, status: number, what: string): any {
  if (a.status !== status) throw new Error(`${what}: ${a.status} ${JSON.stringify(a.body)}`);
  return a.body;
}

const paths = (a: Answer): string[] => (a.body?.error?.issues ?? []).map((i: { path: string }) => i.path);
const perms = (org: string) => `/api/organizations/${org}/permissions`;

beforeAll(async () => {
  const parsed = parseTokens({
    [OPERATOR]: { role: "admin", user: { id: "u-op", firstName: "Op", lastName: "Erator", email: "op@example.test" } },
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  svc = await startIdentityService({
    token: ROOT,
    tokens: { file: "tokens.json", entries: parsed.entries },
    webhooks: { allow: RECEIVER_ALLOW, backoffMs: 20, maxBackoffMs: 100, attempts: 3, timeoutMs: 5000 },
  });
  receiver = await Receiver.start(selfSignedCertificate());
  const r = svc.registry;
  ids.root = r.root().id;
  ids.dealer = (await newOrganization(r, ids.root, "Dealer")).id;
  ids.other = (await newOrganization(r, ids.root, "Other")).id;
  const customer = await newOrganization(r, ids.dealer, "Customer", true);
  ids.customer = customer.id;
  ids.system = customer.systemId!;
  ids.otherSystem = (await newOrganization(r, ids.other, "Far", true)).systemId!;
  for (const name of ["ann", "bob", "mia", "rex", "oz", "dora"]) users[name] = await newUser(r, `${name}@example.test`);
  app = await newApp(r, { email: "bot@example.test", name: "Bot" });
  // Ann admin of the dealer, Bob integrator, Mia manager, Rex reporter; Oz admin of the other dealer.
  for (const [name, role, org] of [
    ["ann", "admin", ids.dealer],
    ["bob", "integrator", ids.dealer],
    ["mia", "manager", ids.dealer],
    ["rex", "reporter", ids.dealer],
    ["oz", "admin", ids.other],
  ] as const)
    ok(await req(ROOT, "POST", perms(org), { email: `${name}@example.test`, role }), 201, `permission of ${name}`);
}, 60_000);

afterAll(async () => {
  await receiver?.stop();
  await svc?.close();
});

describe("I41, I42: create", () => {
  test("a user's email is effective at once; an unknown one is an invitation; an application's names its client id", async () => {
    const forUser = ok(
      await req(ROOT, "POST", perms(ids.customer), { email: "DORA@example.test ", role: "manager" }),
      201,
      "user",
    );
    expect(forUser).toMatchObject({
      userId: users.dora!.id,
      email: "dora@example.test",
      name: "dora Test",
      role: "manager",
      organization: ids.customer,
      partitions: null,
      accepted: null,
    });
    const invite = ok(
      await req(ROOT, "POST", perms(ids.customer), {
        email: "newcomer@example.test",
        role: "reporter",
        name: "New Comer",
        partitions: { [ids.system]: ["p-1"] },
      }),
      201,
      "invitation",
    );
    expect(invite).toMatchObject({ userId: null, name: "New Comer", partitions: { [ids.system]: ["p-1"] } });
    const forApp = ok(
      await req(ROOT, "POST", perms(ids.dealer), { email: "bot@example.test", role: "integrator" }),
      201,
      "app",
    );
    expect(forApp).toMatchObject({ userId: app.client_id, name: "Bot", role: "integrator" });
    const again = await req(ROOT, "POST", perms(ids.customer), { email: "dora@example.test", role: "admin" });
    expect([again.status, paths(again)]).toEqual([409, ["body.email"]]);
  });

  test("the body: required fields, roles, partitions only for managers and reporters and only of systems within", async () => {
    const empty = await req(ROOT, "POST", perms(ids.customer), { extra: 1 });
    expect(empty.status).toBe(400);
    expect(paths(empty).sort()).toEqual(["body.email", "body.extra", "body.role"]);
    const role = await req(ROOT, "POST", perms(ids.customer), { email: "x@example.test", role: "boss" });
    expect(paths(role)).toEqual(["body.role"]);
    const adminParts = await req(ROOT, "POST", perms(ids.customer), {
      email: "x@example.test",
      role: "admin",
      partitions: { [ids.system]: [] },
    });
    expect([adminParts.status, paths(adminParts)]).toEqual([400, ["body.partitions"]]);
    const outside = await req(ROOT, "POST", perms(ids.customer), {
      email: "x@example.test",
      role: "manager",
      partitions: { [ids.otherSystem]: ["p"], [ids.system]: ["p"] },
    });
    expect([outside.status, paths(outside)]).toEqual([400, [`body.partitions.${ids.otherSystem}`]]);
    const notJson = await call(svc.url, "POST", perms(ids.customer), ROOT, "{", { "content-type": "text/plain" });
    expect(notJson.status).toBe(415);
  });
});

describe("I43, I44: list, read, change, remove", () => {
  test("paged lists with Link and X-Total-Count; PUT answers the permission; DELETE 204 then 404", async () => {
    const made = [];
    for (const n of [1, 2, 3])
      made.push(
        ok(await req(ROOT, "POST", perms(ids.other), { email: `p${n}@example.test`, role: "reporter" }), 201, `p${n}`),
      );
    const first = await req(ROOT, "GET", `${perms(ids.other)}?per_page=2`);
    expect(first.status).toBe(200);
    // Oz's permission is the oldest on this organization.
    expect(first.headers.get("x-total-count")).toBe("4");
    expect(first.body.map((p: { email: string }) => p.email)).toEqual(["oz@example.test", "p1@example.test"]);
    expect(first.headers.get("link")).toContain('page=1&per_page=2>; rel="next"');
    const second = ok(await req(ROOT, "GET", `${perms(ids.other)}?page=1&per_page=2`), 200, "page 1");
    expect(second.map((p: { email: string }) => p.email)).toEqual(["p2@example.test", "p3@example.test"]);
    expect(paths(await req(ROOT, "GET", `${perms(ids.other)}?per_page=0`))).toEqual(["per_page"]);
    expect((await req(ROOT, "GET", `${perms(ids.other)}?sort=x`)).status).toBe(400);

    const one = `${perms(ids.other)}/${made[0]._id}`;
    const changed = ok(await req(ROOT, "PUT", one, { role: "manager", name: "Pat" }), 200, "PUT");
    expect(changed).toMatchObject({ _id: made[0]._id, role: "manager", name: "Pat", partitions: null });
    expect(ok(await req(ROOT, "GET", one), 200, "GET one")).toEqual(changed);
    expect(paths(await req(ROOT, "PUT", one, { role: "admin", partitions: {} }))).toEqual(["body.partitions"]);
    expect((await req(ROOT, "DELETE", one)).status).toBe(204);
    const gone = await req(ROOT, "GET", one);
    expect([gone.status, paths(gone)]).toEqual([404, ["permission_id"]]);
    // A permission of another organization is unknown here.
    expect((await req(ROOT, "GET", `${perms(ids.dealer)}/${made[1]._id}`)).status).toBe(404);
  });
});

describe("I47: who may read and change permissions", () => {
  test("admins change, every role reads, out of reach is 404; 405 names what is allowed", async () => {
    const tokens = {
      ann: await idToken(users.ann!),
      bob: await idToken(users.bob!),
      mia: await idToken(users.mia!),
      rex: await idToken(users.rex!),
      oz: await idToken(users.oz!),
    };
    const made = ok(
      await req(tokens.ann, "POST", perms(ids.customer), { email: "matrix@example.test", role: "reporter" }),
      201,
      "admin of an ancestor creates",
    );
    const one = `${perms(ids.customer)}/${made._id}`;
    for (const who of ["bob", "mia", "rex"] as const) {
      const t = tokens[who];
      expect((await req(t, "GET", perms(ids.customer))).status, who).toBe(200);
      expect((await req(t, "GET", one)).status, who).toBe(200);
      expect(
        (await req(t, "POST", perms(ids.customer), { email: "no@example.test", role: "reporter" })).status,
        who,
      ).toBe(403);
      expect((await req(t, "PUT", one, { role: "manager" })).status, who).toBe(403);
      expect((await req(t, "DELETE", one)).status, who).toBe(403);
    }
    // The application (client_credentials) is an integrator on the dealer: it reads, it does not change.
    const grant = await tokenRequest(svc.url, basicAuth(app.client_id, app.client_secret), {
      grant_type: "client_credentials",
    });
    const appToken = ok(grant, 200, "client_credentials").id_token as string;
    expect((await req(appToken, "GET", perms(ids.customer))).status).toBe(200);
    expect((await req(appToken, "DELETE", one)).status).toBe(403);
    // Oz reaches the other dealer only: the dealer, the customer and the permission are unknown to it.
    for (const [m, p] of [
      ["GET", perms(ids.customer)],
      ["POST", perms(ids.dealer)],
      ["DELETE", one],
    ] as const) {
      const a = await req(tokens.oz, m, p, m === "POST" ? { email: "z@example.test", role: "admin" } : undefined);
      expect([a.status, paths(a)], `${m} ${p}`).toEqual([404, ["organization_id"]]);
    }
    expect((await req(null, "GET", perms(ids.customer))).status).toBe(401);
    const patch = await req(tokens.ann, "PATCH", one, {});
    expect([patch.status, patch.headers.get("allow")]).toEqual([405, "GET, PUT, DELETE"]);
    expect((await req(tokens.ann, "DELETE", one)).status).toBe(204);
  });

  test("I45: the root keeps an admin permission", async () => {
    const root = perms(ids.root);
    const first = ok(await req(ROOT, "POST", root, { email: "ann@example.test", role: "admin" }), 201, "first");
    const down = await req(ROOT, "PUT", `${root}/${first._id}`, { role: "integrator" });
    expect([down.status, paths(down)]).toEqual([409, ["body.role"]]);
    const remove = await req(ROOT, "DELETE", `${root}/${first._id}`);
    expect([remove.status, paths(remove)]).toEqual([409, ["permission_id"]]);
    // An invitation is no admin yet.
    const invited = ok(await req(ROOT, "POST", root, { email: "later@example.test", role: "admin" }), 201, "invite");
    expect((await req(ROOT, "DELETE", `${root}/${first._id}`)).status).toBe(409);
    expect((await req(ROOT, "DELETE", `${root}/${invited._id}`)).status).toBe(204);
    const second = ok(await req(ROOT, "POST", root, { email: "bob@example.test", role: "admin" }), 201, "second");
    expect((await req(ROOT, "DELETE", `${root}/${first._id}`)).status).toBe(204);
    expect((await req(ROOT, "DELETE", `${root}/${second._id}`)).status).toBe(409);
  });
});

describe("I46: accepting an invitation", () => {
  test("only the invited user, once; its permission then holds", async () => {
    const invite = ok(
      await req(ROOT, "POST", perms(ids.customer), { email: "carol@example.test", role: "reporter" }),
      201,
      "invite",
    );
    const accept = `/api/permissions/${invite._id}/accept`;
    const carol = await newUser(svc.registry, "carol@example.test");
    const carolToken = await idToken(carol);
    // Before accepting, Carol reaches nothing.
    expect((await req(carolToken, "GET", `/api/organizations/${ids.customer}`)).status).toBe(404);
    // Someone who cannot see it: 404; someone who sees it but is not Carol: 403.
    const oz = await req(await idToken(users.oz!), "POST", accept);
    expect([oz.status, paths(oz)]).toEqual([404, ["permission_id"]]);
    expect((await req(ROOT, "POST", accept)).status).toBe(403);
    expect((await req(await idToken(users.ann!), "POST", accept)).status).toBe(403);
    expect((await req(carolToken, "GET", accept)).status).toBe(405);
    const accepted = ok(await req(carolToken, "POST", accept), 200, "accept");
    expect(accepted).toMatchObject({ userId: carol.id, name: "carol Test", role: "reporter" });
    expect(accepted.accepted).toBe(new Date(svc.clock.ms).toISOString());
    const again = await req(carolToken, "POST", accept);
    expect([again.status, paths(again)]).toEqual([409, ["permission_id"]]);
    // An effective permission was never an invitation.
    const dora = ok(await req(ROOT, "GET", perms(ids.customer)), 200, "list").find(
      (p: { email: string }) => p.email === "dora@example.test",
    );
    const notInvite = await req(await idToken(users.dora!), "POST", `/api/permissions/${dora._id}/accept`);
    expect(notInvite.status).toBe(409);
    const org = ok(await req(carolToken, "GET", `/api/organizations/${ids.customer}`), 200, "org");
    expect([org.userPermissionLevel, org.parentPermissionLevel]).toEqual(["reporter", "guest"]);
  });
});

describe("I49: organizations list their permissions and the caller's levels", () => {
  test("the tokens file's first, then the records, in the seed's shape; levels by grantAt", async () => {
    const root = ok(await req(ROOT, "GET", `/api/organizations/${ids.root}`), 200, "root");
    expect(root.permissions[0]).toEqual({
      _id: "#1",
      userId: "u-op",
      email: "op@example.test",
      name: "Op Erator",
      role: "admin",
    });
    const dealer = ok(await req(ROOT, "GET", `/api/organizations/${ids.dealer}`), 200, "dealer");
    expect(dealer.permissions.map((p: { email: string }) => p.email)).toEqual([
      "ann@example.test",
      "bob@example.test",
      "mia@example.test",
      "rex@example.test",
      "bot@example.test",
    ]);
    for (const p of dealer.permissions) expect(Object.keys(p)).toEqual(["_id", "userId", "email", "name", "role"]);
    const ous = ok(await req(ROOT, "GET", `/api/ous/${ids.dealer}`), 200, "1.0 dealer");
    expect(ous.permissions).toEqual(dealer.permissions);
    const ann = await idToken(users.ann!);
    const customer = ok(await req(ann, "GET", `/api/organizations/${ids.customer}`), 200, "customer as Ann");
    expect([customer.userPermissionLevel, customer.parentPermissionLevel]).toEqual(["admin", "admin"]);
    const rex = ok(await req(await idToken(users.rex!), "GET", `/api/organizations/${ids.dealer}`), 200, "Rex");
    expect([rex.userPermissionLevel, rex.parentPermissionLevel]).toEqual(["reporter", "guest"]);
    const mine = ok(await req(ann, "GET", "/api/organizations/mine"), 200, "mine");
    expect(mine.map((o: { id: string }) => o.id)).toEqual([ids.dealer]);
  });
});

describe("I48: permission events", () => {
  test("created, updated, accepted (2.0 and 1.0) and deleted reach the organization's subscriptions and the recursive ones above", async () => {
    const subscribe = async (
      label: string,
      org: string,
      generation: "2.0" | "1.0",
      scope: string,
      events: string[],
    ) => {
      const path = generation === "2.0" ? `/api/organizations/${org}/subscriptions` : `/api/ous/${org}/hooks`;
      const body = {
        name: label,
        url: receiver.url,
        scope,
        authentication: { type: "Basic", user: label, password: "pw" },
        events,
        sslVerification: false,
        secrecyLevel: 0,
      };
      ok(await req(ROOT, "POST", path, body), 201, `subscription ${label}`);
    };
    const all = ["permission.created", "permission.updated", "permission.deleted", "permission.accepted"];
    await subscribe("customer-this", ids.customer, "2.0", "this", all);
    await subscribe("dealer-recursive", ids.dealer, "2.0", "recursive", all);
    await subscribe("dealer-this", ids.dealer, "2.0", "this", all);
    await subscribe("dealer-ou", ids.dealer, "1.0", "ouRecursive", ["permission.accepted"]);

    const ann = users.ann!;
    const annToken = await idToken(ann);
    const made = ok(
      await req(annToken, "POST", perms(ids.customer), { email: "eve@example.test", role: "reporter" }),
      201,
      "create",
    );
    const one = `${perms(ids.customer)}/${made._id}`;
    ok(await req(annToken, "PUT", one, { role: "manager" }), 200, "update");
    const eve = await newUser(svc.registry, "eve@example.test");
    ok(await req(await idToken(eve), "POST", `/api/permissions/${made._id}/accept`), 200, "accept");
    expect((await req(annToken, "DELETE", one)).status).toBe(204);

    const mineOf = (r: Received) => r.body?.id === made._id;
    await eventually(() => receiver.delivered.filter(mineOf).length >= 9, 20_000, "9 notifications");
    const got = receiver.delivered.filter(mineOf).map((r) => `${labelOf(r)} ${r.body.topic}`);
    expect(got.sort()).toEqual(
      [
        ...all.map((t) => `customer-this ${t}`),
        ...all.map((t) => `dealer-recursive ${t}`),
        "dealer-ou permission.accepted",
      ].sort(),
    );
    const created = receiver.delivered.find((r) => mineOf(r) && r.body.topic === "permission.created")!.body;
    expect(Object.keys(created).sort()).toEqual(
      [
        ...["clientInfo", "email", "eventId", "id", "occurredAt", "ou", "role", "systemId", "topic", "user", "userId"],
        // Added by the sender: the notification's place in the subscription's order.
        "sequence",
      ].sort(),
    );
    expect(created).toMatchObject({
      email: "eve@example.test",
      ou: ids.customer,
      role: "reporter",
      systemId: ids.system,
      userId: null,
      user: { id: ann.id, firstName: "ann", lastName: "Test" },
    });
    const accepted = receiver.delivered.find((r) => mineOf(r) && labelOf(r) === "dealer-ou")!.body;
    expect(accepted).toMatchObject({ topic: "permission.accepted", name: "eve Test", role: "manager", userId: eve.id });
  });
});

describe("I48: deleting an organization", () => {
  test("removes its permissions in the same commit, each with its permission.deleted", async () => {
    const shortLived = await newOrganization(svc.registry, ids.dealer, "Short-lived");
    const made = ok(
      await req(ROOT, "POST", perms(shortLived.id), { email: "sam@example.test", role: "reporter" }),
      201,
      "permission",
    );
    const deleted = await req(ROOT, "DELETE", `/api/organizations/${ids.dealer}/children/${shortLived.id}`);
    expect(deleted.status).toBe(204);
    expect(svc.registry.record(KIND.permission, made._id)).toBeUndefined();
    // The dealer's recursive subscription of the events test above hears it.
    const mine = (r: Received) => r.body?.id === made._id && r.body.topic === "permission.deleted";
    await eventually(() => receiver.delivered.some(mine), 20_000, "permission.deleted");
    expect(receiver.delivered.find(mine)!.body).toMatchObject({ ou: shortLived.id, email: "sam@example.test" });
  });
});

/** The label of the subscription a notification was for (its Basic authentication's user). */
function labelOf(r: Received): string {
  const basic = /^Basic (.+)$/.exec(String(r.headers.authorization))?.[1] ?? "";
  return Buffer.from(basic, "base64").toString("utf8").split(":")[0]!;
}
