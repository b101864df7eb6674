// The service on PostgreSQL (T54–T57), on a real throwaway cluster: two replicas of the service
// serve one database, every tenant on each. A customer created on one is served by the other (at
// once when asked for, and within a poll unasked); holders written on both, to one tenant and to
// several, converge, each replica reading its own and the other's writes with X-Rsop-Min-Revision;
// a replica under a tiny memory budget evicts and reloads without losing a write; after a restart
// of both every tenant is intact. `rsop serve --store` without a snapshot starts the service on a
// new database or one holding organizations, and serves one system as before otherwise.
import { EventEmitter } from "node:events";
import { PassThrough, Readable } from "node:stream";
import { describe, expect, test } from "vitest";
import { type ServeOptions, serveCommand } from "../../src/adapters/cli/serveCommand.js";
import type { RunningDataServer } from "../../src/adapters/http/startDataServer.js";
import {
  type RunningServiceServer,
  type StartServiceServerOptions,
  startServiceServer,
} from "../../src/adapters/http/startServiceServer.js";
import { building } from "../live/fixture.js";
import { PG, SKIP_NOTE, eventually, freshDatabase, startReplica, useCluster } from "../store/pgSupport.js";

const ROOT = "root-admin-token-0123456789";
const pgTest = test.skipIf(!PG.ok);
useCluster();

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function call(
  server: { url: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ROOT}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
}

function ok(r: Answer, status: number, what: string): any {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

const revisionOf = (r: Answer) => Number(r.headers.get("x-rsop-revision"));

const replica = (storeUrl: string, extra: Partial<StartServiceServerOptions> = {}) =>
  startServiceServer({ storeUrl, token: ROOT, port: 0, log: () => {}, ...extra });

/** A customer of `dealer` created on `server`: its organization id and system id. */
async function customer(server: RunningServiceServer, dealer: string, name: string) {
  const made = ok(await call(server, "POST", `/api/organizations/${dealer}/children`, { name }), 201, name);
  return { id: made.id as string, systemId: made.systemId as string };
}

/** The holders' names of a system on `server`, once it has applied revision `min`. */
async function names(server: RunningServiceServer, systemId: string, min: number): Promise<string[]> {
  const r = await call(server, "GET", `/${systemId}/holders?per_page=100`, undefined, {
    "x-rsop-min-revision": String(min),
  });
  const holders = ok(r, 200, `holders of ${systemId}`) as { firstName: string }[];
  expect(revisionOf(r)).toBeGreaterThanOrEqual(min);
  return holders.map((h) => h.firstName).sort();
}

describe("T54–T56: the service on PostgreSQL replicas", () => {
  pgTest(
    `two replicas serve every tenant: customers, holders on both converge, eviction and restart lose nothing${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      let a = await replica(url);
      // B holds at most one tenant loaded at a time: every request after another tenant's reloads it.
      let b = await replica(url, { memoryBudgetBytes: 1 });
      try {
        const rootId = ok(await call(a, "GET", "/api/organizations/mine"), 200, "mine")[0].id as string;
        expect(ok(await call(b, "GET", "/api/organizations/mine"), 200, "mine on B")[0].id).toBe(rootId);
        const dealer = ok(await call(a, "POST", `/api/organizations/${rootId}/children`, { name: "Dealer" }), 201, "d");

        // Created on A, asked for on B at once: B re-reads the registry for a key it does not know (T56).
        const first = await customer(a, dealer.id, "First");
        const onB = await call(b, "GET", `/${first.systemId}/holders`);
        expect(onB.status, JSON.stringify(onB.body)).toBe(200);
        expect(onB.headers.get("x-rsop-revision")).not.toBeNull();
        // Created on B, unasked: A's registry follows within a poll.
        const second = await customer(b, dealer.id, "Second");
        await eventually("A knows the customer made on B", () => a.registry.organization(second.id) !== undefined);
        const third = await customer(a, dealer.id, "Third");
        await eventually("B knows the customer made on A", () => b.registry.tenantByKey(third.systemId) !== undefined);
        // Accounts answers carry no revision (T55); a malformed minimum is refused with one.
        expect((await call(a, "GET", "/api/organizations/mine")).headers.get("x-rsop-revision")).toBeNull();
        const bad = await call(a, "GET", `/${first.systemId}/holders`, undefined, { "x-rsop-min-revision": "soon" });
        expect(bad.status).toBe(400);
        expect(bad.headers.get("x-rsop-revision")).not.toBeNull();

        // Holders written on both replicas, to one tenant and to several, each read back at once on
        // the other replica with the revision its write got.
        const systems = [first.systemId, second.systemId, third.systemId];
        const latest = new Map<string, number>();
        const expected = new Map<string, string[]>(systems.map((s) => [s, []]));
        await Promise.all(
          Array.from({ length: 24 }, async (_, k) => {
            const system = systems[k % 4 === 3 ? 0 : k % 3]!;
            const [writer, reader] = k % 2 === 0 ? [a, b] : [b, a];
            const name = `H${String(k).padStart(2, "0")}`;
            const made = await call(writer, "POST", `/${system}/holders`, { firstName: name, lastName: "X" });
            expect(made.status, JSON.stringify(made.body)).toBe(201);
            const rev = revisionOf(made);
            expect(rev).toBeGreaterThan(0);
            expected.get(system)!.push(name);
            latest.set(system, Math.max(latest.get(system) ?? 0, rev));
            expect(await names(reader, system, rev)).toContain(name);
            expect(await names(writer, system, rev)).toContain(name);
          }),
        );
        for (const s of systems)
          for (const server of [a, b]) expect(await names(server, s, latest.get(s)!)).toEqual(expected.get(s)!.sort());
        const health = ok(await call(b, "GET", "/healthz"), 200, "B health");
        expect(health.evictions).toBeGreaterThan(0);
        expect(health.tenants).toBe(3);

        await a.close();
        await b.close();
        a = await replica(url);
        b = await replica(url, { memoryBudgetBytes: 1 });
        for (const s of systems)
          for (const server of [a, b]) expect(await names(server, s, latest.get(s)!)).toEqual(expected.get(s)!.sort());
        const children = ok(await call(b, "GET", `/api/organizations/${dealer.id}/children`), 200, "children");
        expect(children.map((c: { name: string }) => c.name).sort()).toEqual(["First", "Second", "Third"]);
      } finally {
        await a.close();
        await b.close();
      }
    },
    120_000,
  );
});

/** Starts `serveCommand` in-process; resolves with the service or the one-system server it started. */
async function serving(opts: Partial<ServeOptions>, env: Record<string, string | undefined>) {
  const stderr = new PassThrough();
  let log = "";
  stderr.on("data", (b: Buffer) => (log += b.toString("utf8")));
  const io = { stdin: Readable.from([]), stdout: new PassThrough(), stderr };
  const signals = new EventEmitter();
  let service: RunningServiceServer | undefined;
  let data: RunningDataServer | undefined;
  let listening!: () => void;
  const started = new Promise<void>((resolve) => (listening = resolve));
  const exit = serveCommand(
    { port: "0", host: "127.0.0.1", ...opts },
    io,
    env,
    signals,
    undefined,
    (s) => {
      data = s;
      listening();
    },
    (s) => {
      service = s;
      listening();
    },
  );
  await Promise.race([started, exit]);
  if (service === undefined && data === undefined) throw new Error(`nothing started: ${log}`);
  const stop = async () => {
    signals.emit("SIGTERM");
    expect(await exit).toBe(0);
  };
  return { service, data, log: () => log, stop };
}

describe("T57: rsop serve --store postgres://… without a snapshot", () => {
  pgTest(
    `a new database starts the service (two processes at once: one root, both serve it); one holding one system without organizations serves that system${SKIP_NOTE}`,
    async () => {
      const url = await freshDatabase();
      // Started at once on a new database: one root organization, whichever commits it first.
      const [first, second] = await Promise.all([
        serving({ store: url }, { RSOP_TOKEN: ROOT }),
        serving({ store: url }, { RSOP_TOKEN: ROOT }),
      ]);
      try {
        expect(first.service).toBeDefined();
        expect(second.service).toBeDefined();
        const rootId = ok(await call(first.service!, "GET", "/api/organizations/mine"), 200, "mine")[0].id;
        expect(second.service!.registry.root().id).toBe(rootId);
        expect(ok(await call(second.service!, "GET", "/api/organizations/mine"), 200, "mine")[0].id).toBe(rootId);
        expect(first.log()).toContain("serving 1 organization and 0 systems and panels from");
        expect(first.log()).not.toContain("database is empty");
      } finally {
        await first.stop();
        await second.stop();
      }

      const one = await freshDatabase();
      const seeded = await startReplica(one, building());
      await seeded.server.close();
      const system = await serving({ store: one }, { RSOP_TOKEN: ROOT });
      try {
        expect(system.service).toBeUndefined();
        expect(system.data).toBeDefined();
      } finally {
        await system.stop();
      }
    },
    60_000,
  );
});
