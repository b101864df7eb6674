// A PostgreSQL session of its own that LISTENs on a channel and comes back by itself after it is
// lost (a server restart, a network cut): the change log's follower and the webhooks' watcher each
// hold one, and with it a session advisory lock (the snapshot writer's, the dispatcher's), which goes
// with the session. The driver (pg) is loaded by postgresStore.ts, which makes the clients.

/** What this file needs of a connection of the driver. */
export interface Queryable {
  query<R extends object>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

/** A connection of its own (a `pg.Client`, not yet connected). */
export interface ListeningClient extends Queryable {
  connect(): Promise<unknown>;
  end(): Promise<unknown>;
  on(event: "notification", listener: (n: { channel: string; payload?: string | undefined }) => void): unknown;
  on(event: "error" | "end", listener: (e?: unknown) => void): unknown;
  removeAllListeners(event: "error"): unknown;
}

/** What the session tells its owner. */
export interface ListenEvents {
  /** A notification on the channel. */
  notification(payload: string | undefined): void;
  /** The session was lost (with the error, when there was one); a new one is being made. */
  lost(e?: unknown): void;
  /** A new session listens again (a notification may have been missed meanwhile). */
  reconnected(): void;
  /** An attempt to make a new session failed; the next comes later (up to 2 s apart). */
  reconnectFailed(e: unknown): void;
}

/** A listening session that comes back by itself. */
export interface Listening {
  /** The session while it is up; undefined while it is down or after stop. */
  readonly client: ListeningClient | undefined;
  /**
   * Takes the session advisory lock `key`, or says it still holds it: true while this session holds
   * it, false while the session is down or another holds it. The lock goes with the session.
   */
  lock(key: number): Promise<boolean>;
  /** Ends the session for good. */
  stop(): Promise<void>;
}

/**
 * Connects, LISTENs on `channel`, and keeps doing so until stopped.
 * @throws the driver's error when the first connection fails.
 */
export async function listen(
  newClient: () => ListeningClient,
  channel: string,
  events: ListenEvents,
): Promise<Listening> {
  let current: ListeningClient | undefined;
  let stopped = false;
  let delay = 100;
  let timer: NodeJS.Timeout | undefined;
  /** The advisory locks the current session holds. */
  const held = new Set<number>();
  const connect = async (): Promise<void> => {
    const client = newClient();
    client.on("notification", (n) => {
      if (n.channel === channel) events.notification(n.payload);
    });
    const lost = (e?: unknown) => {
      if (current !== client) return;
      current = undefined;
      held.clear();
      client.removeAllListeners("error");
      client.on("error", () => undefined);
      client.end().catch(() => undefined);
      events.lost(e);
      if (!stopped) timer = setTimeout(reconnect, delay);
    };
    client.on("error", lost);
    client.on("end", () => lost());
    await client.connect();
    await client.query(`LISTEN ${channel}`);
    current = client;
    delay = 100;
  };
  const reconnect = () => {
    timer = undefined;
    if (stopped) return;
    connect().then(
      () => events.reconnected(),
      (e: unknown) => {
        events.reconnectFailed(e);
        delay = Math.min(delay * 2, 2000);
        if (!stopped) timer = setTimeout(reconnect, delay);
      },
    );
  };
  await connect();
  return {
    get client() {
      return current;
    },
    async lock(key) {
      const client = current;
      if (client === undefined) return false;
      if (held.has(key)) return true;
      try {
        const r = await client.query<{ got: boolean }>("SELECT pg_try_advisory_lock($1) AS got", [key]);
        if (current === client && r.rows[0]!.got) held.add(key);
      } catch {
        return false;
      }
      return held.has(key);
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      const client = current;
      current = undefined;
      held.clear();
      if (client !== undefined) await client.end().catch(() => undefined);
    },
  };
}
