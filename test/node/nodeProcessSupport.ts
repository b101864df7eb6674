// Helpers of the cloud-node acceptance test (nodeEndToEnd.test.ts): calls to a service running as a
// child process (`rsop serve`), its customer with the example building imported, and `rsop node`
// children fed scans on stdin, one JSON line each, whose answers are read back from stdout in order.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { BUILDING_JSON, TOKEN } from "../http/fixtures.js";
import { serveChild } from "../support/cliChild.js";
import { pollUntil } from "../support/until.js";

/** The root token of a service started by serveChild (its RSOP_TOKEN). */
export const ROOT_TOKEN = TOKEN;

export interface Answer {
  status: number;
  body: any;
}

/** A call to `base` with a bearer token; the body JSON-encoded; the answer's JSON. */
export async function api(base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ROOT_TOKEN}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await r.text();
  return { status: r.status, body: text === "" ? undefined : JSON.parse(text) };
}

/** The body of an answer that must have `status`. */
export function ok(r: Answer, status: number, what: string): any {
  expect(r.status, `${what}: ${JSON.stringify(r.body)?.slice(0, 400)}`).toBe(status);
  return r.body;
}

/**
 * A customer under a dealer with the example building imported (as nodeSupport's importSystem, over
 * a base URL): the customer's organization id and its system id.
 */
export async function importSystemAt(base: string): Promise<{ customerId: string; systemId: string }> {
  const mine = ok(await api(base, "GET", "/api/organizations/mine"), 200, "mine") as { id: string }[];
  const dealer = ok(
    await api(base, "POST", `/api/organizations/${mine[0]!.id}/children`, { name: "Dealer" }),
    201,
    "dealer",
  ).id;
  const made = ok(
    await api(base, "POST", `/api/organizations/${dealer}/children`, {
      name: "Customer",
      import: { ...(BUILDING_JSON as object), systemId: randomUUID() },
    }),
    201,
    "customer",
  );
  return { customerId: made.id as string, systemId: made.systemId as string };
}

/** Polls `check` every 20 ms until it holds; fails after `ms`, naming `what`. */
export const until = pollUntil(15_000);

/** Every child started here, so that a test's cleanup can kill whatever is left. */
const children = new Set<ChildProcess>();

/** Kills (SIGKILL) every child started here that still runs; stopped ones too. */
export function killChildren(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  children.clear();
}

/** A running `rsop serve` child on a service database: the process, its url, what it has logged. */
export interface ServiceChild {
  readonly child: ChildProcess;
  readonly url: string;
  readonly log: () => string;
}

/**
 * Starts `node cli serve ...args` with the root token as RSOP_TOKEN (cliChild's serveChild); resolves
 * once it listens. Killed by killChildren if still running.
 * @throws when it exits first or does not listen within `timeoutMs`.
 */
export async function serviceChild(cli: string, args: readonly string[], timeoutMs = 30_000): Promise<ServiceChild> {
  const started = await serveChild(cli, args, { RSOP_TOKEN: ROOT_TOKEN }, timeoutMs);
  children.add(started.child);
  return started;
}

/** How a node child is started. */
export interface NodeChildOptions {
  readonly service: string;
  readonly systemId: string;
  readonly nodeId: string;
  readonly token: string;
  readonly dataFile: string;
  readonly heartbeatSeconds: number;
}

/**
 * `rsop node` in a child process: scans written to its stdin one line at a time, each answer read
 * from its stdout (one line per scan, in order), its stderr kept.
 */
export class NodeChild {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  #stderr = "";
  #stdout = "";
  readonly #lines: string[] = [];
  #wake: (() => void) | null = null;

  constructor(cli: string, o: NodeChildOptions) {
    // The token goes in the environment variable (N64): not seen in a process list.
    const args = ["--service", o.service, "--system", o.systemId, "--node", o.nodeId, "--data", o.dataFile];
    this.child = spawn(process.execPath, [cli, "node", ...args, "--heartbeat", String(o.heartbeatSeconds)], {
      env: { ...process.env, RSOP_NODE_TOKEN: o.token },
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.add(this.child);
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.child.stderr!.on("data", (b: Buffer) => {
      this.#stderr += b.toString("utf8");
    });
    this.child.stdout!.on("data", (b: Buffer) => {
      const parts = (this.#stdout + b.toString("utf8")).split("\n");
      this.#stdout = parts.pop()!;
      this.#lines.push(...parts.filter((p) => p !== ""));
      this.#wake?.();
    });
    // A write to a node killed meanwhile must not fail the test process.
    this.child.stdin!.on("error", () => {});
  }

  /** What the node has written to stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Writes one scan and resolves with its answer line, parsed; rejects after `ms` without one. */
  async scan(request: object, ms = 20_000): Promise<any> {
    if (this.#lines.length > 0) throw new Error(`unexpected answer lines: ${this.#lines.join(" | ")}`);
    this.child.stdin!.write(`${JSON.stringify(request)}\n`);
    const end = Date.now() + ms;
    while (this.#lines.length === 0) {
      const left = end - Date.now();
      if (left <= 0 || this.child.exitCode !== null || this.child.signalCode !== null)
        throw new Error(`no answer to ${JSON.stringify(request)} within ${ms} ms; stderr: ${this.#stderr}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = null;
    }
    return JSON.parse(this.#lines.shift()!);
  }

  /** Sends `signal` and waits (at most `ms`) for the process to exit. */
  async kill(signal: NodeJS.Signals, ms = 15_000): Promise<void> {
    this.child.kill(signal);
    await bounded(this.exited, ms, `the node to exit on ${signal}`);
  }

  /** Ends its stdin (the node then uploads what is left and exits); its exit code. */
  async end(ms = 20_000): Promise<number | null> {
    this.child.stdin!.end();
    await bounded(this.exited, ms, "the node to exit after its stdin ended");
    return this.child.exitCode;
  }
}

/** `p`, or a rejection after `ms` naming `what`. */
export async function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
