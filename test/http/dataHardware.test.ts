// `rsop serve --data`: routes that read live hardware (docs/semantics.md H30, H31). The hardware
// lists and wireless diagnostics of seed 001 and seed 002 answer 501 in the one error shape, after
// authorization, route and id checks; connection and cloud-node status fields answer what is stored
// and nothing is made up where nothing is.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import type { RunningDataServer } from "../../src/adapters/http/startDataServer.js";
import { building } from "../live/fixture.js";
import { type Answer, caller, dataDir, startData } from "./dataSupport.js";
import { removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

/** A 501 in the error shape, with a sentence saying why, and nothing stored. */
function notImplemented(server: RunningDataServer, r: Answer, what: RegExp, seq: number): void {
  expect(r.status).toBe(501);
  expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(Object.keys(r.body.error)).toEqual(["status", "message", "issues"]);
  expect(r.body.error.status).toBe(501);
  expect(r.body.error.message).toMatch(what);
  expect(r.body.error.message).toMatch(
    /is read live from the hardware; this server is not connected to any hardware and the stored system does not hold it\.$/,
  );
  expect(r.body.error.issues).toEqual([]);
  expect(server.durable.seq(), "nothing stored").toBe(seq);
}

describe("rsop serve --data: live hardware readings", () => {
  test("2.0: a cloud node's hardware list and wireless diagnostics answer 501 (never an empty list); an unknown node 404, no token 401, another method 405", async () => {
    const { db } = dataDir();
    const snapshot = building() as { connections: Record<string, unknown>[] };
    snapshot.connections[0] = { ...snapshot.connections[0], connected: true };
    const { server, call } = await startData(db, snapshot);
    const seq = server.durable.seq();
    notImplemented(
      server,
      await call("GET", "/cloud-nodes/n-main/hardware"),
      /^The hardware list of a cloud node /,
      seq,
    );
    notImplemented(
      server,
      await call("GET", "/cloud-nodes/n-annex/diagnostics/wireless"),
      /^The wireless diagnostics of a cloud node /,
      seq,
    );
    notImplemented(server, await call("GET", "/cloud-nodes/n-main/hardware?page=0"), /^The hardware list/, seq);

    const unknown = await call("GET", "/cloud-nodes/n-nope/hardware");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe("Not found.");
    expect((await call("GET", "/cloud-nodes/n-nope/diagnostics/wireless")).status).toBe(404);
    const noToken = await call("GET", "/cloud-nodes/n-main/hardware", undefined, { authorization: "" });
    expect(noToken.status).toBe(401);
    const post = await call("POST", "/cloud-nodes/n-main/hardware", {});
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    expect(server.durable.seq()).toBe(seq);

    // Status fields: a connection's `connected` is answered as stored, null where not stored (H31, L23):
    // never a made-up true or false.
    const connections = await call("GET", "/connections?per_page=100");
    expect(connections.status).toBe(200);
    const byId = new Map((connections.body as { id: string }[]).map((c) => [c.id, c as Record<string, unknown>]));
    expect(byId.get("x-eth")!.connected).toBe(true);
    expect(byId.get("x-usb")!.connected).toBeNull();
    const created = await call("POST", "/cloud-nodes/n-annex/connections", { name: "New board", type: "usb", port: 7 });
    expect(created.status).toBeLessThan(300);
    const read = await call("GET", `/cloud-nodes/n-annex/connections/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.connected).toBeNull();
    // A cloud node carries no syncStatus or connectionStatus the snapshot does not give.
    const node = await call("GET", "/cloud-nodes/n-main");
    expect(node.status).toBe(200);
    expect(node.body).not.toHaveProperty("syncStatus");
    expect(node.body).not.toHaveProperty("connectionStatus");
    expect(
      (await call("GET", "/cloud-nodes?per_page=100")).body.every(
        (n: object) => !("syncStatus" in n) && !("connectionStatus" in n),
      ),
    ).toBe(true);
  });

  test("1.0 (--panel): /api/hardware and /api/diagnostics/wireless answer 501; stored connection status is answered as stored", async () => {
    const { db } = dataDir();
    const panel = JSON.parse(readFileSync(resolve(__dirname, "../../examples/panel.json"), "utf8")) as {
      connections: { id: number; connected?: boolean }[];
    };
    const { server } = await startData(db, undefined, {
      initial: { kind: "panel", file: "panel.json", read: async () => panel },
    });
    const call = caller(server.url, "");
    const seq = server.durable.seq();
    notImplemented(server, await call("GET", "/api/hardware"), /^The hardware list of this cloud node /, seq);
    notImplemented(
      server,
      await call("GET", "/api/diagnostics/wireless"),
      /^The wireless diagnostics of this cloud node /,
      seq,
    );
    expect((await call("GET", "/api/hardware", undefined, { authorization: "" })).status).toBe(401);
    expect((await call("PUT", "/api/hardware", {})).status).toBe(405);
    const connections = await call("GET", "/api/connections?per_page=100");
    expect(connections.status).toBe(200);
    const stored = panel.connections.filter((c) => c.connected !== undefined);
    expect(stored.length).toBeGreaterThan(0);
    for (const c of stored)
      expect((connections.body as { id: number; connected?: boolean }[]).find((x) => x.id === c.id)?.connected).toBe(
        c.connected,
      );
  });
});
