// Helpers of the `rsop serve --data` tests: a real SQLite file in a temp folder, a real server on
// 127.0.0.1, requests with the token, and a look into the database once the server has let go of it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { expect, onTestFinished } from "vitest";
import {
  type RunningDataServer,
  type StartDataServerOptions,
  startDataServer,
} from "../../src/adapters/http/startDataServer.js";
import { building } from "../live/fixture.js";
import { TOKEN, tempDir } from "./fixtures.js";

export const SYSTEM_ID = "sys-1";

/** A temp folder with the live fixture building as `building.json`, and the database path `data.db`. */
export function dataDir(): { dir: string; db: string; system: string } {
  const dir = tempDir();
  const system = join(dir, "building.json");
  writeFileSync(system, JSON.stringify(building()));
  return { dir, db: join(dir, "data.db"), system };
}

/** Starts a `--data` server (closed after the test); `initial` is imported into an empty database. */
export function startData(
  db: string,
  initial?: unknown,
  extra: Partial<StartDataServerOptions> = {},
): Promise<{ server: RunningDataServer; lines: string[]; call: Caller }> {
  return startStored({ dataFile: db }, initial, extra);
}

/**
 * Starts a server on a SQLite file (`dataFile`) or a PostgreSQL database (`storeUrl`), with TOKEN and
 * its log kept (closed after the test); `initial` (a 2.0 system) is imported into an empty store.
 */
export async function startStored(
  where: { readonly dataFile: string } | { readonly storeUrl: string },
  initial?: unknown,
  extra: Partial<StartDataServerOptions> = {},
): Promise<{ server: RunningDataServer; lines: string[]; call: Caller }> {
  const lines: string[] = [];
  const server = await startDataServer({
    ...where,
    ...(initial !== undefined ? { initial: { kind: "system", file: "building.json", read: async () => initial } } : {}),
    token: TOKEN,
    log: (l) => lines.push(l),
    ...extra,
  });
  onTestFinished(() => server.close());
  return { server, lines, call: caller(server.url) };
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

export type Caller = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Answer>;

/**
 * Requests below `url` with the token; a body that is not a string is sent as JSON. Each answer is
 * checked against the server's /openapi.json by test/setup/checkAnswers.ts, as every fetch is.
 */
export function caller(url: string, prefix = `/${SYSTEM_ID}`): Caller {
  return async (method, path, body, headers = {}) => {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${TOKEN}`, ...headers } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] ??= "application/json";
    }
    const res = await fetch(`${url}${prefix}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
  };
}

/** The rows of the change log and the integrity check of a database no server holds. */
export function inspect(db: string): {
  changes: { seq: number; operation: any }[];
  snapshots: number[];
  integrity: string;
} {
  const d = new Database(db, { readonly: true, timeout: 0 });
  try {
    const changes = (
      d.prepare("SELECT seq, operation FROM changes ORDER BY seq").all() as { seq: number; operation: string }[]
    ).map((r) => ({
      seq: r.seq,
      operation: JSON.parse(r.operation),
    }));
    const snapshots = (d.prepare("SELECT seq FROM snapshots ORDER BY seq").all() as { seq: number }[]).map(
      (r) => r.seq,
    );
    const integrity = d.pragma("integrity_check", { simple: true }) as string;
    return { changes, snapshots, integrity };
  } finally {
    d.close();
  }
}

/** The one error shape (status, message, every issue's path and sentence), as JSON; answers the issues. */
export function expectError(r: Answer, status: number, what: string): { path: string; message: string }[] {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(r.body.error.status).toBe(status);
  expect(typeof r.body.error.message).toBe("string");
  expect(r.body.error.message.length).toBeGreaterThan(0);
  for (const i of r.body.error.issues) {
    expect(typeof i.path).toBe("string");
    expect(i.message.length, `${what}: every issue says what is wrong`).toBeGreaterThan(0);
  }
  return r.body.error.issues;
}

/** Runs a request that must change nothing: the change log's sequence and the very snapshot object stay. */
export async function unchanged<A>(server: RunningDataServer, run: () => Promise<A>, what: string): Promise<A> {
  const seq = server.durable.seq();
  const before = server.durable.target.live.snapshot;
  const r = await run();
  expect(server.durable.seq(), `${what}: nothing stored`).toBe(seq);
  expect(server.durable.target.live.snapshot, `${what}: nothing changed`).toBe(before);
  return r;
}

/** An admin's calls that make fresh targets for a route-matrix case. */
export interface Maker {
  /** An admin's call that must succeed; answers the body. */
  ok(method: string, path: string, body?: unknown): Promise<any>;
  /** A unique number (for names, ports, card numbers). */
  n(): number;
}

/** A Maker over `send` with the admin's token. */
export function makerOf(send: (method: string, path: string, body?: unknown) => Promise<Answer>): Maker {
  let counter = 0;
  return {
    n: () => ++counter,
    async ok(method, path, body) {
      const r = await send(method, path, body);
      if (r.status >= 300) throw new Error(`setup ${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body;
    },
  };
}
