// The cloud node runtime in-process against a real service server on 127.0.0.1 (N53–N66): first
// download, a change followed within a second, scans answered and their events uploaded, a restart
// from the data file without the service.
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { randomUUID } from "node:crypto";
import { CloudNode } from "../../src/node/cloudNode.js";
import { NodeStore } from "../../src/node/nodeStore.js";
import { loadEngineOrThrow } from "../../src/evaluate/index.js";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";
import { NODE, ROOT, call, importSystem, nodeToken, ok, startService } from "../nodes/nodeSupport.js";
import { pollUntil } from "../support/until.js";

const servers: RunningServiceServer[] = [];
const nodes: CloudNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(removeTempDirs);

const until = pollUntil(5000);

function scanner(node: CloudNode) {
  const answers: any[] = [];
  const stream = node.scanStream((text) => {
    for (const l of text.split("\n")) if (l !== "") answers.push(JSON.parse(l));
  });
  return {
    answers,
    scan(req: object) {
      stream.push(Buffer.from(`${JSON.stringify(req)}\n`));
      return answers[answers.length - 1];
    },
  };
}

const NURSE = {
  deviceId: "door-ward-3",
  at: "2026-04-15T09:15:00-05:00",
  credential: { credentialNumber: 10234, facilityCode: 17 },
};

describe("a cloud node against a real service", () => {
  test("downloads, decides, follows a change within a second, uploads its events", async () => {
    const server = await startService();
    servers.push(server);
    const sys = await importSystem(server);
    const token = await nodeToken(server, sys);
    const node = await CloudNode.start({
      service: server.url,
      systemId: sys,
      nodeId: NODE,
      token,
      dataFile: join(tempDir(), "node.db"),
      heartbeatSeconds: 1,
    });
    nodes.push(node);
    await node.ready();
    expect(node.status().online).toBe(true);
    const s = scanner(node);
    expect(s.scan(NURSE)).toMatchObject({ line: 1, outcome: "allowed" });
    await until("events uploaded", () => node.status().pendingEvents === 0);
    const before = node.status().revision!;
    const h = ok(
      await call(server, ROOT, "POST", `/${sys}/holders`, { firstName: "New", lastName: "Holder" }),
      201,
      "holder",
    );
    await until("revision followed", () => node.status().revision! > before, 1000);
    expect(JSON.stringify(node.engine!.snapshot.holders)).toContain(h.id);
    const one = ok(await call(server, ROOT, "GET", `/${sys}/cloud-nodes/${NODE}`), 200, "node");
    await until("synced", async () => {
      const n = ok(await call(server, ROOT, "GET", `/${sys}/cloud-nodes/${NODE}`), 200, "node");
      return n.syncStatus.synced === true;
    });
    expect(one.connectionStatus.connected).toBe(true);
  });

  test("N66: an event the service refuses alone is kept aside in the data file; the events after it are uploaded", async () => {
    const server = await startService();
    servers.push(server);
    const sys = await importSystem(server);
    const token = await nodeToken(server, sys);
    const dataFile = join(tempDir(), "node.db");
    const options = { service: server.url, systemId: sys, nodeId: NODE, token, dataFile, heartbeatSeconds: 1 };
    const first = await CloudNode.start(options);
    await first.ready();
    await first.close();
    // Three queued events, the middle one broken as no node makes one (a reason the service
    // does not know): without N66 it would hold the two good ones back for ever.
    const store = await NodeStore.open(dataFile, { service: server.url, systemId: sys, nodeId: NODE });
    const good = (n: number) => ({
      eventId: randomUUID(),
      occurredAt: `2026-04-15T14:15:0${n}.000Z`,
      revision: 1,
      request: JSON.stringify({ ...NURSE, at: `2026-04-15T14:15:0${n}.000Z` }),
      decision: JSON.stringify(loadEngineOrThrow(BUILDING_JSON).decide(NURSE)),
    });
    const events = [
      good(1),
      { ...good(2), decision: JSON.stringify({ outcome: "allowed", reason: "bogus" }) },
      good(3),
    ];
    store.enqueue(events);
    store.close();
    const node = await CloudNode.start(options);
    nodes.push(node);
    await node.ready();
    await until("queue drained", () => node.status().pendingEvents === 0);
    expect(node.status()).toMatchObject({ pendingEvents: 0, rejectedEvents: 1 });
    // The service has the two good events: sending them again finds both there.
    const again = events
      .filter((_, i) => i !== 1)
      .map((e) => ({
        eventId: e.eventId,
        occurredAt: e.occurredAt,
        request: JSON.parse(e.request),
        decision: JSON.parse(e.decision),
      }));
    expect(
      ok(await call(server, token, "POST", `/${sys}/cloud-nodes/${NODE}/node/events`, { events: again }), 200, "again"),
    ).toEqual({ accepted: 0, duplicates: 2 });
    await node.close();
    // The refused one is kept in the file with the service's answer, not lost.
    const kept = await NodeStore.open(dataFile, { service: server.url, systemId: sys, nodeId: NODE });
    expect(kept.rejected()).toBe(1);
    expect(kept.pending()).toBe(0);
    kept.close();
  });
});
