// Helpers of the cloud-node feed tests: a real service server on 127.0.0.1 over a SQLite file (or a
// PostgreSQL database), a customer with the example building imported, node tokens, plain calls, and
// a reader of a JSON-lines stream that takes one line at a time, each within a bound.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { expect } from "vitest";
import {
  type RunningServiceServer,
  type StartServiceServerOptions,
  startServiceServer,
} from "../../src/adapters/http/startServiceServer.js";
import { BUILDING_JSON, tempDir } from "../http/fixtures.js";

export const ROOT = "root-admin-token-0123456789";
export const NODE = "node-chicago-main";
export const SECOND = "node-london-annex";

export interface Answer {
  status: number;
  body: any;
}

/** A call with a bearer token (null: none); the body JSON-encoded; the answer's JSON. */
export async function call(
  server: RunningServiceServer,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const r = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text === "" ? undefined : JSON.parse(text) };
}

export function ok(r: Answer, status: number, what: string): any {
  expect(r.status, `${what}: ${JSON.stringify(r.body)?.slice(0, 400)}`).toBe(status);
  return r.body;
}

/** Starts a service on `where` (a new SQLite file in a temp dir when not given). */
export function startService(
  where: { dataFile: string } | { storeUrl: string } = { dataFile: join(tempDir(), "service.db") },
  extra: Partial<StartServiceServerOptions> = {},
): Promise<RunningServiceServer> {
  return startServiceServer({ ...where, token: ROOT, port: 0, host: "127.0.0.1", log: () => {}, ...extra });
}

/** A customer under a dealer with the example building imported (its nodes NODE and SECOND): its system id. */
export async function importSystem(server: RunningServiceServer): Promise<string> {
  const rootId = (ok(await call(server, ROOT, "GET", "/api/organizations/mine"), 200, "mine") as { id: string }[])[0]!
    .id;
  const dealer = ok(
    await call(server, ROOT, "POST", `/api/organizations/${rootId}/children`, { name: "Dealer" }),
    201,
    "dealer",
  ).id;
  const made = ok(
    await call(server, ROOT, "POST", `/api/organizations/${dealer}/children`, {
      name: "Customer",
      import: { ...(BUILDING_JSON as object), systemId: randomUUID() },
    }),
    201,
    "customer",
  );
  return made.systemId as string;
}

/** A new token of a node. */
export async function nodeToken(server: RunningServiceServer, systemId: string, node = NODE): Promise<string> {
  return ok(await call(server, ROOT, "POST", `/${systemId}/cloud-nodes/${node}/token`), 200, "node token").token;
}

/** The lines of a JSON-lines answer, read one at a time. */
export interface Lines {
  readonly response: Response;
  /** The next line, parsed; `done` when the stream ended; rejects after `ms` without one. */
  next(ms?: number): Promise<any>;
  /** Lines until one matches `until` (keep-alives skipped unless asked for), each within `ms`. */
  collect(until: (line: any) => boolean, ms?: number): Promise<any[]>;
  /** Stops reading and closes the connection. */
  close(): void;
}

export const DONE = Symbol("done");

/** Opens `path` with `token` and reads its body as JSON lines. */
export async function openLines(server: RunningServiceServer, token: string | null, path: string): Promise<Lines> {
  const abort = new AbortController();
  const response = await fetch(`${server.url}${path}`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    signal: abort.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const waiting: string[] = [];
  let ended = false;
  // A read outlives a timeout: the next call waits for the same one, so that no chunk is lost.
  let reading: ReturnType<typeof reader.read> | undefined;
  const next = async (ms = 5000): Promise<any> => {
    const until = Date.now() + ms;
    while (waiting.length === 0 && !ended) {
      const left = until - Date.now();
      if (left <= 0) throw new Error(`no line within ${ms} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no line within ${ms} ms`)), left);
      });
      try {
        reading ??= reader.read();
        const { done, value } = await Promise.race([reading, timeout]);
        reading = undefined;
        if (done) ended = true;
        else buffer += decoder.decode(value, { stream: true });
      } catch (e) {
        if ((e as Error).message.startsWith("no line")) throw e;
        reading = undefined;
        ended = true; // the server cut the connection
      } finally {
        clearTimeout(timer);
      }
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      waiting.push(...parts.filter((p) => p !== ""));
    }
    const line = waiting.shift();
    return line === undefined ? DONE : JSON.parse(line);
  };
  return {
    response,
    next,
    async collect(until, ms = 5000) {
      const got: any[] = [];
      for (;;) {
        const line = await next(ms);
        if (line === DONE) throw new Error(`the stream ended after ${JSON.stringify(got).slice(0, 300)}`);
        got.push(line);
        if (until(line)) return got;
      }
    },
    close() {
      abort.abort();
      reader.cancel().catch(() => undefined);
    },
  };
}
