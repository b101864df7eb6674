// The cloud node runtime in-process against a real service server on 127.0.0.1 (N53–N66): first
// download, a change followed within a second, scans answered and their events uploaded, a restart
// from the data file without the service.
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { CloudNode } from "../../src/node/cloudNode.js";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";
import { NODE, ROOT, call, importSystem, nodeToken, ok, startService } from "../nodes/nodeSupport.js";

const servers: RunningServiceServer[] = [];
const nodes: CloudNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(removeTempDirs);

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

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
});
