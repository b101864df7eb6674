// One notification over HTTPS: POST of the JSON body, Basic credentials and the signature header
// when the subscription has them, a total time limit, and the subscription's sslVerification. Any
// 2xx answer is a delivery; anything else (another status, a network or TLS error, the time limit)
// is a failure with a one-line reason. Redirects are not followed (docs/semantics.md W9).
import { Agent, request } from "node:https";
import { SIGNATURE_HEADER, signBody } from "./signature.js";
import type { Subscription } from "./subscription.js";

/** The outcome of one attempt. */
export type Attempt = { readonly ok: true; readonly status: number } | { readonly ok: false; readonly error: string };

/** The keep-alive agents, one per subscription and certificate policy (a changed policy gets a new one). */
export class Agents {
  readonly #agents = new Map<string, { verify: boolean; agent: Agent }>();
  /** The agent for a subscription. */
  get(id: string, verify: boolean): Agent {
    const had = this.#agents.get(id);
    if (had !== undefined && had.verify === verify) return had.agent;
    had?.agent.destroy();
    const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: verify });
    this.#agents.set(id, { verify, agent });
    return agent;
  }
  /** Closes the agent of a subscription (or all). */
  drop(id?: string): void {
    for (const [k, v] of this.#agents)
      if (id === undefined || k === id) {
        v.agent.destroy();
        this.#agents.delete(k);
      }
  }
}

/**
 * Sends one body to a subscription's url.
 * @param signal - aborts the attempt (the server is closing).
 */
export function deliver(subscription: Subscription, body: string, agent: Agent, timeoutMs: number, signal: AbortSignal): Promise<Attempt> {
  const headers: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    "user-agent": "rsop-engine-webhooks",
  };
  const auth = subscription.authentication;
  if (auth.type === "Basic") headers.authorization = `Basic ${Buffer.from(`${auth.user}:${auth.password}`, "utf8").toString("base64")}`;
  if (subscription.secret !== null) headers[SIGNATURE_HEADER] = signBody(body, subscription.secret);
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(a);
    };
    const req = request(subscription.url, { method: "POST", headers, agent, rejectUnauthorized: subscription.sslVerification }, (res) => {
      const status = res.statusCode ?? 0;
      // Read the answer to its end so the connection can carry the next notification.
      res.resume();
      res.on("end", () => done(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, error: `the receiver answered HTTP ${status}` }));
      res.on("error", (e) => done({ ok: false, error: `the answer broke off: ${e.message}` }));
    });
    const timer = setTimeout(() => {
      done({ ok: false, error: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    const onAbort = () => {
      done({ ok: false, error: "the server is closing" });
      req.destroy();
    };
    signal.addEventListener("abort", onAbort);
    req.on("error", (e: NodeJS.ErrnoException) => done({ ok: false, error: e.code !== undefined ? `${e.code}: ${e.message}` : e.message }));
    req.end(body);
  });
}
