// HS4 beyond the live system's own routes: the webhook subscription routes, the migration routes and
// the preview route of `rsop serve --data` refuse a query parameter they do not take (or one given
// twice) with 400 at `query.<name>`, on a real server over a real SQLite file.
import { afterAll, describe, expect, test } from "vitest";
import { building } from "../live/fixture.js";
import { smallPanel } from "../live/panelFixture.js";
import { caller, dataDir, expectError, startData } from "./dataSupport.js";
import { removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

const SUBSCRIPTIONS = "/api/organizations/sys-1/subscriptions";
const SUBSCRIPTION = {
  name: "Door events",
  url: "https://receiver.example/hooks",
  scope: "this",
  authentication: { type: "None" },
  events: ["device.request.allowed"],
};

const paths = (r: Parameters<typeof expectError>[0], what: string) => expectError(r, 400, what).map((i) => i.path);

describe("HS4 the adapters' own routes refuse a query parameter they do not take", () => {
  test("HS4 subscriptions, parked events and preview: an unknown parameter, or paging given twice, is 400 at query.<name>; nothing is created", async () => {
    const { db } = dataDir();
    const { server } = await startData(db, building());
    const api = caller(server.url, "");
    const created = await api("POST", SUBSCRIPTIONS, SUBSCRIPTION);
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(paths(await api("GET", `${SUBSCRIPTIONS}?page=0`), "list paging")).toEqual(["query.page"]);
    expect(paths(await api("POST", `${SUBSCRIPTIONS}?dryRun=true`, SUBSCRIPTION), "create with a query")).toEqual([
      "query.dryRun",
    ]);
    expect((await api("GET", SUBSCRIPTIONS)).body).toHaveLength(1);
    expect(paths(await api("GET", `${SUBSCRIPTIONS}/${id}?fields=name`), "retrieve")).toEqual(["query.fields"]);
    expect(paths(await api("GET", `${SUBSCRIPTIONS}/${id}/parked?page=0&page=1`), "parked twice")).toEqual([
      "query.page",
    ]);
    expect(paths(await api("GET", `${SUBSCRIPTIONS}/${id}/parked?since=1`), "parked since")).toEqual(["query.since"]);
    expect((await api("GET", `${SUBSCRIPTIONS}/${id}/parked?page=0&per_page=5`)).status).toBe(200);
    expect(paths(await api("POST", `${SUBSCRIPTIONS}/${id}/parked/redeliver?all=1`), "redeliver")).toEqual([
      "query.all",
    ]);

    const sys = caller(server.url);
    const before = server.durable.seq();
    const preview = { operations: [{ method: "DELETE", path: "/holders/h-ann" }] };
    expect(paths(await sys("POST", "/preview?from=2026-04-13T00:00:00Z", preview), "preview query")).toEqual([
      "query.from",
    ]);
    expect((await sys("POST", "/preview", preview)).status).toBe(200);
    expect(server.durable.seq()).toBe(before);
  });

  test("HS4 the migration routes: preflight, status, backup, initiate, complete and rollback take no query parameter; nothing starts", async () => {
    const { db } = dataDir();
    const { server } = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => smallPanel() },
    });
    const api = caller(server.url, "");
    const sn = "SN-TEST-1";
    expect(paths(await api("GET", `/api/migration/${sn}/preflight-check?verbose=1`), "preflight")).toEqual([
      "query.verbose",
    ]);
    expect(
      paths(await api("POST", "/api/migration/initiate?acceptWarnings=true", { cloudNodeSN: sn }), "initiate"),
    ).toEqual(["query.acceptWarnings"]);
    expect(paths(await api("GET", `/api/migration/${sn}?x=1`), "status")).toEqual(["query.x"]);
    expect(paths(await api("GET", `/api/migration/${sn}/backup?x=1`), "backup")).toEqual(["query.x"]);
    expect(paths(await api("POST", `/api/migration/${sn}/complete?force=1`), "complete")).toEqual(["query.force"]);
    expect(paths(await api("POST", `/api/migration/${sn}/rollback?force=1`), "rollback")).toEqual(["query.force"]);
    // Nothing was initiated: the preflight still answers for the untouched panel.
    expect((await api("GET", `/api/migration/${sn}/preflight-check`)).status).toBe(200);
    expect(server.durable.seq()).toBe(0);
  });
});
