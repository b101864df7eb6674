// Connection hygiene of both servers (`rsop serve` on a file, `--data`/`--store`): caps on the
// connections open at once, in total and per client address, such that idle or slow sockets can never
// lock out a client (HC1–HC4). Node's own `maxConnections` refuses the newest connection when full,
// so 1,000 sockets that never send a byte shut everyone else out until the headers timeout closes
// them; here a new connection over a cap first closes the oldest connection of that address (per
// address) or of anyone (in total) that has no request in progress, and only when every counted
// connection is busy is the newcomer answered 503 and closed.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** The connection options of startServer and startDataServer, with their defaults (HC1–HC4). */
export interface ConnectionOptions {
  /** Milliseconds a client has to send a whole request (Node's `requestTimeout`); default 30000. */
  readonly requestTimeoutMs?: number;
  /** Milliseconds a client has to send the request headers, from connecting or from the previous answer; default 10000, at most requestTimeoutMs. */
  readonly headersTimeoutMs?: number;
  /** Milliseconds an idle keep-alive connection stays open after an answer; default 5000. */
  readonly keepAliveTimeoutMs?: number;
  /** Most connections open at once; default 1000. */
  readonly maxConnections?: number;
  /** Most connections open at once from one client address (an IPv6 client: its /64); default 100, at most maxConnections. */
  readonly maxConnectionsPerAddress?: number;
}

/** The checked connection settings. */
export interface ConnectionSettings {
  readonly requestTimeout: number;
  readonly headersTimeout: number;
  readonly keepAliveTimeout: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
}

function positive(who: string, name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v < 1)
    throw new RangeError(`${who}: ${name} must be a positive integer, got ${String(v)}`);
  return v;
}

/**
 * The connection settings of `options`, defaults filled in (HC1–HC4).
 * @throws RangeError when a value is not a positive integer.
 */
export function connectionSettings(who: string, options: ConnectionOptions): ConnectionSettings {
  const requestTimeout = positive(who, "requestTimeoutMs", options.requestTimeoutMs, 30_000);
  const maxConnections = positive(who, "maxConnections", options.maxConnections, 1000);
  return {
    requestTimeout,
    headersTimeout: Math.min(positive(who, "headersTimeoutMs", options.headersTimeoutMs, 10_000), requestTimeout),
    keepAliveTimeout: positive(who, "keepAliveTimeoutMs", options.keepAliveTimeoutMs, 5000),
    maxConnections,
    maxConnectionsPerAddress: Math.min(
      positive(who, "maxConnectionsPerAddress", options.maxConnectionsPerAddress, 100),
      maxConnections,
    ),
  };
}

/** The options of @hono/node-server's `serverOptions` (node:http createServer) for these settings. */
export function serverOptionsOf(s: ConnectionSettings): {
  requestTimeout: number;
  headersTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    requestTimeout: s.requestTimeout,
    headersTimeout: s.headersTimeout,
    keepAliveTimeout: s.keepAliveTimeout,
    // How often Node looks for connections past those timeouts (its default, 30 s, would let a
    // slow or silent client hold a connection that much longer than asked).
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(s.headersTimeout / 4))),
  };
}

/** The key a client is counted under: its IPv4 address (IPv4-mapped IPv6 unwrapped), or the /64 of its IPv6 address. */
export function clientKey(address: string | undefined): string {
  if (address === undefined) return "";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return mapped[1]!;
  if (!address.includes(":")) return address;
  // One IPv6 host usually holds a whole /64: count the prefix, or one client could spread its sockets over it.
  const [head, tail] = address.split("::") as [string, string | undefined];
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

const BUSY =
  "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nCache-Control: no-store\r\n";

/** The 503 written to a connection refused because every counted connection is busy. */
function busyAnswer(message: string): string {
  const body = JSON.stringify({ error: { status: 503, message, issues: [] } });
  return `${BUSY}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

interface Tracked {
  readonly key: string;
  /** Requests of this connection not yet answered. */
  busy: number;
}

/**
 * Applies the connection caps to `server` (HC3, HC4). Call it once, right after the server listens.
 * @returns how many connections are open, in total and per client key (for tests and the log).
 */
export function guardConnections(
  server: Server,
  s: ConnectionSettings,
  log?: (line: string) => void,
): { open(): number; openFrom(key: string): number } {
  // Node's own cap would refuse before this one could make room.
  server.maxConnections = Number.MAX_SAFE_INTEGER;
  server.keepAliveTimeout = s.keepAliveTimeout;
  /** Every counted connection, oldest first (a Map keeps insertion order). */
  const all = new Map<Socket, Tracked>();
  const byKey = new Map<string, Map<Socket, Tracked>>();
  let refusedSince = 0;
  let lastLog = 0;

  const forget = (socket: Socket, t: Tracked) => {
    if (!all.delete(socket)) return;
    const mine = byKey.get(t.key);
    mine?.delete(socket);
    if (mine !== undefined && mine.size === 0) byKey.delete(t.key);
  };
  /** Closes the oldest connection of `among` with no request in progress; false when every one is busy. */
  const evictIdle = (among: Map<Socket, Tracked>): boolean => {
    for (const [socket, t] of among)
      if (t.busy === 0) {
        forget(socket, t);
        socket.destroy();
        return true;
      }
    return false;
  };
  const refuse = (socket: Socket, why: string) => {
    refusedSince++;
    const now = Date.now();
    // At most one line a second: a flood must not flood the log too.
    if (log !== undefined && now - lastLog >= 1000) {
      log(`refused ${refusedSince} connection${refusedSince === 1 ? "" : "s"}: ${why}`);
      refusedSince = 0;
      lastLog = now;
    }
    socket.on("error", () => undefined);
    // Closed as soon as the answer is out, so no request of this connection is ever read and served;
    // a client that never reads its answer does not keep the socket past a second either.
    socket.end(busyAnswer(`The server is busy: ${why}; try again shortly.`), () => socket.destroy());
    setTimeout(() => socket.destroy(), 1000).unref();
  };

  server.on("connection", (socket: Socket) => {
    const key = clientKey(socket.remoteAddress);
    const mine = byKey.get(key);
    if (mine !== undefined && mine.size >= s.maxConnectionsPerAddress && !evictIdle(mine))
      return refuse(
        socket,
        `${s.maxConnectionsPerAddress} connections from one address are all answering requests (the per-address connection cap)`,
      );
    if (all.size >= s.maxConnections && !evictIdle(all))
      return refuse(socket, `${s.maxConnections} connections are all answering requests (the connection cap)`);
    const t: Tracked = { key, busy: 0 };
    all.set(socket, t);
    let set = byKey.get(key);
    if (set === undefined) byKey.set(key, (set = new Map()));
    set.set(socket, t);
    socket.once("close", () => forget(socket, t));
  });
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const t = all.get(request.socket as Socket);
    if (t === undefined) return;
    t.busy++;
    response.once("close", () => {
      t.busy--;
    });
  });
  return { open: () => all.size, openFrom: (key) => byKey.get(key)?.size ?? 0 };
}
