// Webhooks across a migration (W19): the panel's hooks are named by the preflight's
// warnings.integrations, end with the panel when the migration completes (in the store's transaction),
// and the migrated 2.0 system serves its own subscription routes at once — no restart — whose events
// reach a real HTTPS receiver, before and after a restart. A real server over a real SQLite file.
import { afterAll, beforeAll, expect, onTestFinished, test } from "vitest";
import Database from "better-sqlite3";
import { smallPanel } from "../live/panelFixture.js";
import { caller, dataDir, startData } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";
import { RECEIVER_ALLOW, Receiver, selfSignedCertificate } from "./receiver.js";

afterAll(removeTempDirs);

let tls: { cert: string; key: string };
beforeAll(() => {
  tls = selfSignedCertificate();
});

const FAST = { backoffMs: 20, maxBackoffMs: 200, attempts: 100, timeoutMs: 5000, allow: RECEIVER_ALLOW };

/** Initiates the migration of panel `sn` (warnings accepted) and waits until it is Staged; answers its status. */
async function stage(api: ReturnType<typeof caller>, sn: string): Promise<any> {
  expect((await api("POST", "/api/migration/initiate", { cloudNodeSN: sn, acceptWarnings: true })).status).toBe(200);
  let status = (await api("GET", `/api/migration/${sn}`)).body;
  for (let i = 0; status.status !== "Staged" && i < 500; i++)
    status = (await new Promise((r) => setTimeout(r, 20)), (await api("GET", `/api/migration/${sn}`)).body);
  expect(status.status).toBe("Staged");
  return status;
}

test("W19: the preflight warns of each panel hook; after complete they are gone, and the 2.0 system's subscriptions deliver at once and after a restart", async () => {
  const receiver = await Receiver.start(tls);
  onTestFinished(() => receiver.stop());
  const { db } = dataDir();
  const panel = smallPanel() as { serialNumber: string };
  const SN = panel.serialNumber;
  const first = await startData(db, undefined, {
    initial: { kind: "panel", file: "panel.json", read: async () => panel },
    webhooks: FAST,
  });
  const api = caller(first.server.url, "");
  const hook = await api("POST", `/api/ous/${SN}/hooks`, {
    name: "Panel sync",
    url: receiver.url,
    scope: "ou",
    authentication: { type: "None" },
    events: ["entity.added"],
    sslVerification: false,
  });
  expect(hook.status).toBe(201);

  const preflight = await api("GET", `/api/migration/${SN}/preflight-check`);
  expect(preflight.body.ok).toBe(false);
  expect(preflight.body.warnings.integrations).toEqual([
    `Webhook "Panel sync" (${hook.body.id}) is not migrated: the panel's hooks end with it; subscribe again on the 2.0 system.`,
  ]);
  const refused = await api("POST", "/api/migration/initiate", { cloudNodeSN: SN });
  expect(refused.status).toBe(409);
  expect(refused.body.error.issues).toContainEqual({
    path: "preflight.warnings.integrations[0]",
    message: expect.stringContaining("Panel sync"),
  });

  const status = await stage(api, SN);
  expect((await api("POST", `/api/migration/${SN}/complete`)).status).toBe(204);
  const systemId = status.systemId as string;

  // The panel's hooks went with it; the 1.0 routes are gone.
  expect((await api("GET", `/api/ous/${SN}/hooks`)).status).toBe(404);
  const subs = `/api/organizations/${systemId}/subscriptions`;
  expect((await api("GET", subs)).body).toEqual([]);

  // The migrated system's own subscription, served and delivering without a restart.
  const created = await api("POST", subs, {
    name: "After",
    url: receiver.url,
    scope: "this",
    authentication: { type: "None" },
    events: ["entity.added"],
    sslVerification: false,
  });
  expect(created.status).toBe(201);
  const sys = caller(first.server.url, `/${systemId}`);
  const g1 = await sys("POST", "/groups", { name: "Migrated crew" });
  expect(g1.status).toBe(200);
  await receiver.waitFor(
    () => receiver.delivered.some((r) => r.body.entityId === g1.body.id),
    20_000,
    "the migrated system's event",
  );
  expect(receiver.delivered.map((r) => r.body.systemId)).toEqual([systemId]);
  await first.server.close();
  // In the store, only the new subscription (the panel's went in the completing transaction).
  const rows = new Database(db, { readonly: true });
  expect(rows.prepare("SELECT id FROM webhook_subscriptions").all()).toEqual([{ id: created.body.id }]);
  rows.close();

  const again = await startData(db, undefined, { webhooks: FAST });
  const g2 = await caller(again.server.url, `/${systemId}`)("POST", "/groups", { name: "After the restart" });
  await receiver.waitFor(
    () => receiver.delivered.some((r) => r.body.entityId === g2.body.id),
    20_000,
    "the event after the restart",
  );
  expect((await caller(again.server.url, "")("GET", subs)).body.map((s: { name: string }) => s.name)).toEqual([
    "After",
  ]);
});

test("W19: a rolled-back migration keeps the panel's hooks, and they deliver the panel's events again", async () => {
  const receiver = await Receiver.start(tls);
  onTestFinished(() => receiver.stop());
  const { db } = dataDir();
  const panel = smallPanel() as { serialNumber: string };
  const SN = panel.serialNumber;
  const { server } = await startData(db, undefined, {
    initial: { kind: "panel", file: "panel.json", read: async () => panel },
    webhooks: FAST,
  });
  const api = caller(server.url, "");
  const hooks = `/api/ous/${SN}/hooks`;
  const id = (
    await api("POST", hooks, {
      name: "Panel sync",
      url: receiver.url,
      scope: "ou",
      authentication: { type: "None" },
      events: ["entity.added"],
      sslVerification: false,
    })
  ).body.id;
  await stage(api, SN);
  expect((await api("POST", `/api/migration/${SN}/rollback`)).status).toBe(204);
  expect((await api("GET", hooks)).body.map((h: { id: string }) => h.id)).toEqual([id]);
  const group = await api("POST", "/api/groups", { name: "Still a panel" });
  expect(group.status).toBe(200);
  await receiver.waitFor(
    () => receiver.delivered.some((r) => r.body.topic === "entity.added"),
    20_000,
    "the panel's event",
  );
});
