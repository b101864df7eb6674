// A TCP proxy on 127.0.0.1 in front of a service, for the cloud-node fault tests: `cut()` drops every
// connection through it (a network cut: the node's feed and calls break mid-stream), `block()` also
// refuses new ones until `unblock()`; a real socket pair each way, nothing mocked.
import { type Server, type Socket, connect, createServer } from "node:net";

export interface TcpProxy {
  /** http://127.0.0.1:PORT, to give the node as its service. */
  readonly url: string;
  /** Destroys every open connection through the proxy. */
  cut(): void;
  /** Cuts, and refuses (closes at once) every new connection until unblock. */
  block(): void;
  unblock(): void;
  /** Points the proxy at another port (a service restarted elsewhere). */
  retarget(port: number): void;
  close(): Promise<void>;
}

/** Starts a proxy to 127.0.0.1:`targetPort`. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let target = targetPort;
  let blocked = false;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (blocked) return void client.destroy();
    const upstream = connect(target, "127.0.0.1");
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const cut = () => {
    for (const s of [...open]) s.destroy();
    open.clear();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    cut,
    block() {
      blocked = true;
      cut();
    },
    unblock() {
      blocked = false;
    },
    retarget(p) {
      target = p;
    },
    close() {
      cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
