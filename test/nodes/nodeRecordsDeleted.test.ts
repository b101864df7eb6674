// Tenants never meet (semantics N2, T16): a customer deleted with its system takes its cloud nodes'
// tokens, status and event ids with it, in the same commit, so that a system id imported again by
// another customer later is reached by none of the old node's tokens. A real service server on
// 127.0.0.1 over a SQLite file.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { NODE_KIND } from "../../src/service/nodes/nodeStatus.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";

const ROOT = "root-admin-token-0123456789";
const NODE = "node-chicago-main";
let server: RunningServiceServer | undefined;

afterAll(async () => {
  await server?.close();
  removeTempDirs();
});

async function call(method: string, path: string, body?: unknown, token = ROOT) {
  const r = await fetch(`${server!.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text === "" ? undefined : JSON.parse(text) };
}

test("a deleted customer's node tokens die with it; a system id imported again answers them 401 (N2)", async () => {
  server = await startServiceServer({ dataFile: join(tempDir(), "service.db"), token: ROOT, port: 0, log: () => {} });
  const root = (await call("GET", "/api/organizations/mine")).body[0].id as string;
  const dealer = (await call("POST", `/api/organizations/${root}/children`, { name: "Dealer" })).body.id as string;
  const systemId = randomUUID();
  // No holders, so that the customer may be deleted (T16).
  const imported = { ...(BUILDING_JSON as Record<string, unknown>), systemId, holders: [] };
  const first = await call("POST", `/api/organizations/${dealer}/children`, { name: "First", import: imported });
  expect(first.status).toBe(201);
  const token = (await call("POST", `/${systemId}/cloud-nodes/${NODE}/token`)).body.token as string;
  const beat = () => call("POST", `/${systemId}/cloud-nodes/${NODE}/node/heartbeat`, { revision: 0 }, token);
  expect((await beat()).status).toBe(204);
  expect([...server.registry.records(NODE_KIND.token)]).toHaveLength(1);
  expect([...server.registry.records(NODE_KIND.status)]).toHaveLength(1);

  expect((await call("DELETE", `/api/organizations/${dealer}/children/${first.body.id}`)).status).toBe(204);
  expect([...server.registry.records(NODE_KIND.token)]).toEqual([]);
  expect([...server.registry.records(NODE_KIND.status)]).toEqual([]);
  // Another customer imports the same system id: the old node's token reaches nothing of it.
  const second = await call("POST", `/api/organizations/${dealer}/children`, { name: "Second", import: imported });
  expect(second.status).toBe(201);
  expect((await beat()).status).toBe(401);
  expect((await call("GET", `/${systemId}/cloud-nodes/${NODE}/node/snapshot`, undefined, token)).status).toBe(401);
});
