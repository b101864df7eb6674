// One notification over HTTPS: POST of the JSON body, Basic credentials and the signature header
// when the subscription has them, a total time limit, and the subscription's sslVerification. Any
// 2xx answer is a delivery; anything else (another status, a network or TLS error, the time limit)
// is a failure. Redirects are not followed (docs/semantics.md W9). Only addresses the destination
// policy allows are connected to: an IP literal is checked before the request, a name's DNS answers
// by the request's `lookup` (HW1). A failure's `error` is one coarse category (HW2): what is stored
// and served as `lastError` must not let a subscriber tell an open port from a closed one; the
// detail goes to the operator's log only.
import { Agent, request } from "node:https";
import { type Destinations, REFUSED_CODE, REFUSED_DESTINATION } from "./destinations.js";
import { SIGNATURE_HEADER, signBody } from "../../events/signature.js";
import type { Subscription } from "../../service/webhooks/subscription.js";
import type { Attempt } from "../../service/webhooks/transport.js";

export type { Attempt };

/** A failed attempt: its category (served as `lastError`) and what happened (logged only). */
const failed = (error: string, detail: string = error): Attempt => ({ ok: false, error, detail });

/** The category of a request error (HW2): refused, TLS, or a connection that failed, however it failed. */
function category(e: NodeJS.ErrnoException): string {
  const code = e.code ?? "";
  if (code === REFUSED_CODE) return REFUSED_DESTINATION;
  if (/CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code))
    return "TLS error: the receiver's certificate was not accepted";
  if (/^ERR_(TLS|SSL)_|^EPROTO$/.test(code) || /\b(TLS|SSL)\b/.test(e.message)) return "TLS error";
  return "connection failed";
}

/** The keep-alive agents, one per subscription and certificate policy (a changed policy gets a new one). */
export class Agents {
  readonly #agents = new Map<string, { verify: boolean; agent: Agent }>();
  readonly #destinations: Destinations;
  constructor(destinations: Destinations) {
    this.#destinations = destinations;
  }
  /** The agent for a subscription (its connections resolve names through the destination policy). */
  get(id: string, verify: boolean): Agent {
    const had = this.#agents.get(id);
    if (had !== undefined && had.verify === verify) return had.agent;
    had?.agent.destroy();
    const agent = new Agent({
      keepAlive: true,
      maxSockets: 1,
      rejectUnauthorized: verify,
      lookup: this.#destinations.lookup as never,
    });
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
export function deliver(
  subscription: Subscription,
  body: string,
  agent: Agent,
  destinations: Destinations,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Attempt> {
  const url = new URL(subscription.url);
  // No lookup runs for an IP literal: it is checked here, before any connection (HW1).
  if (destinations.refusesLiteral(url))
    return Promise.resolve(failed(REFUSED_DESTINATION, `${REFUSED_DESTINATION} (${url.hostname})`));
  const headers: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    "user-agent": "rsop-engine-webhooks",
  };
  const auth = subscription.authentication;
  if (auth.type === "Basic")
    headers.authorization = `Basic ${Buffer.from(`${auth.user}:${auth.password}`, "utf8").toString("base64")}`;
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
    const options = {
      method: "POST",
      headers,
      agent,
      rejectUnauthorized: subscription.sslVerification,
      lookup: destinations.lookup as never,
    };
    const req = request(url, options, (res) => {
      const status = res.statusCode ?? 0;
      // Read the answer to its end so the connection can carry the next notification.
      res.resume();
      res.on("end", () => done(status >= 200 && status < 300 ? { ok: true, status } : failed(`HTTP ${status}`)));
      res.on("error", (e) => done(failed("connection failed", `the answer broke off: ${e.message}`)));
    });
    const timer = setTimeout(() => {
      done(failed("timeout", `no answer within ${timeoutMs} ms`));
      req.destroy();
    }, timeoutMs);
    const onAbort = () => {
      done(failed("the server is closing"));
      req.destroy();
    };
    signal.addEventListener("abort", onAbort);
    req.on("error", (e: NodeJS.ErrnoException) =>
      done(failed(category(e), e.code !== undefined ? `${e.code}: ${e.message}` : e.message)),
    );
    req.end(body);
  });
}
