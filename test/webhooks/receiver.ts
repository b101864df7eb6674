// A real HTTPS receiver for the delivery tests: a self-signed certificate for 127.0.0.1 made by
// openssl in a temp folder, an https server on 127.0.0.1 that records every notification (headers
// and raw body), can fail the next N requests, hold requests open, stop and start again on the same
// port.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { type Server, createServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { tempDir } from "../http/fixtures.js";

/**
 * The allow-list that lets a server deliver to this receiver: 127.0.0.1 is refused by default (HW1),
 * so the delivery tests give the server this operator option (`--webhook-allow 127.0.0.1/32`).
 */
export const RECEIVER_ALLOW: readonly string[] = ["127.0.0.1/32"];

/** A self-signed certificate (and key) for IP 127.0.0.1, valid for a day. */
export function selfSignedCertificate(): { cert: string; key: string } {
  const dir = tempDir();
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore", timeout: 30_000 },
  );
  return { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
}

/** One notification as it arrived. */
export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
  readonly body: any;
  /** The status the receiver answered. */
  readonly status: number;
}

export class Receiver {
  /** Every request, in arrival order (failed ones too). */
  readonly all: Received[] = [];
  /** Answer this many next requests with 500. */
  failNext = 0;
  /** Hold requests open (never answer) while true. */
  hang = false;
  /** Requests being held open. */
  open = 0;
  /** TCP connections accepted, ever (a refused destination must not even connect). */
  connections = 0;
  #server: Server | null = null;
  readonly #sockets = new Set<Socket>();
  readonly #waiters = new Set<() => void>();
  #port = 0;

  private constructor(private readonly tls: { cert: string; key: string }) {}

  static async start(tls: { cert: string; key: string }, port = 0): Promise<Receiver> {
    const r = new Receiver(tls);
    await r.listen(port);
    return r;
  }

  get url(): string {
    return `https://127.0.0.1:${this.#port}/hook`;
  }
  get port(): number {
    return this.#port;
  }
  /** The notifications answered 2xx, in order. */
  get delivered(): Received[] {
    return this.all.filter((r) => r.status === 204);
  }

  async listen(port = this.#port): Promise<void> {
    const server = createServer({ cert: this.tls.cert, key: this.tls.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks);
        if (this.hang) {
          this.open++;
          res.on("close", () => this.open--);
          return;
        }
        const status = this.failNext > 0 ? 500 : 204;
        if (this.failNext > 0) this.failNext--;
        let body: unknown = null;
        try {
          body = JSON.parse(raw.toString("utf8"));
        } catch {
          body = null;
        }
        this.all.push({ headers: req.headers, raw, body, status });
        res.writeHead(status).end();
        for (const w of this.#waiters) w();
      });
    });
    server.on("connection", (s: Socket) => {
      this.connections++;
      this.#sockets.add(s);
      s.on("close", () => this.#sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
  }

  /** Stops listening and cuts every connection (the receiver is down). */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server === null) return;
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `predicate` holds (checked after every request), or rejects after `ms`. */
  waitFor(predicate: () => boolean, ms = 20_000, what = "the receiver's condition"): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`timed out after ${ms} ms waiting for ${what}; received ${this.all.length} requests`));
      }, ms);
      this.#waiters.add(check);
    });
  }
}

/** Polls `check` every 20 ms until it resolves to true, or fails after `ms`. */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  ms = 20_000,
  what = "the condition",
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
