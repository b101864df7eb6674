// A PostgreSQL session of its own that LISTENs on one or more channels and comes back by itself
// after it is lost (a server restart, a network cut): a space's follower (the change log of every
// tenant and the registry, one session however many tenants are followed) and the webhooks' watcher
// each hold one, and with it session advisory locks (the snapshot writers', the dispatcher's), which
// go with the session. The driver (pg) is loaded by postgresStore.ts, which makes the clients.

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
  /** A notification on one of the channels (named, for a session listening on several). */
  notification(payload: string | undefined, channel: string): void;
  /** The session was lost (with the error, when there was one); a new one is being made. */
  lost(e?: unknown): void;
  /** A new session listens again (a notification may have been missed meanwhile). */
  reconnected(): void;
  /** An attempt to make a new session failed; the next comes later (up to 2 s apart). */
  reconnectFailed(e: unknown): void;
}

/** An advisory lock: one bigint key, or two int4 keys (a class and a number, e.g. a tenant's). */
export type LockKey = number | readonly [number, number];

/** A listening session that comes back by itself. */
export interface Listening {
  /** The session while it is up; undefined while it is down or after stop. */
  readonly client: ListeningClient | undefined;
  /**
   * Takes the session advisory lock `key`, or says it still holds it: true while this session holds
   * it, false while the session is down or another holds it. The lock goes with the session.
   */
  lock(key: LockKey): Promise<boolean>;
  /** Gives back the lock `key` when this session holds it (another session may then take it). */
  unlock(key: LockKey): Promise<void>;
  /** Ends the session for good. */
  stop(): Promise<void>;
}

/** The statement and parameters that take (`pg_try_advisory_lock`) or give back (`pg_advisory_unlock`) `key`. */
function lockQuery(fn: "pg_try_advisory_lock" | "pg_advisory_unlock", key: LockKey): [string, unknown[]] {
  return typeof key === "number"
    ? [`SELECT ${fn}($1) AS got`, [key]]
    : [`SELECT ${fn}($1::int, $2::int) AS got`, [key[0], key[1]]];
}

/**
 * Connects, LISTENs on `channel` (or each of several), and keeps doing so until stopped.
 * @throws the driver's error when the first connection fails.
 */
export async function listen(
  newClient: () => ListeningClient,
  channel: string | readonly string[],
  events: ListenEvents,
): Promise<Listening> {
  const channels: readonly string[] = typeof channel === "string" ? [channel] : channel;
  let current: ListeningClient | undefined;
  let stopped = false;
  let delay = 100;
  let timer: NodeJS.Timeout | undefined;
  /** The advisory locks the current session holds. */
  const held = new Set<string>();
  const connect = async (): Promise<void> => {
    const client = newClient();
    client.on("notification", (n) => {
      if (channels.includes(n.channel)) events.notification(n.payload, n.channel);
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
    for (const c of channels) await client.query(`LISTEN ${c}`);
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
  // Lock statements run one at a time: a session lock taken twice is held twice (one unlock would not
  // give it back), and the driver wants one query at a time per connection.
  let turns: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(task: () => Promise<T>): Promise<T> => {
    const run = turns.then(task);
    turns = run.catch(() => undefined);
    return run;
  };
  await connect();
  return {
    get client() {
      return current;
    },
    lock: (key) =>
      inTurn(async () => {
        const client = current;
        if (client === undefined) return false;
        const id = String(key);
        if (held.has(id)) return true;
        try {
          const r = await client.query<{ got: boolean }>(...lockQuery("pg_try_advisory_lock", key));
          if (current === client && r.rows[0]!.got) held.add(id);
        } catch {
          return false;
        }
        return held.has(id);
      }),
    unlock: (key) =>
      inTurn(async () => {
        const client = current;
        if (client === undefined || !held.delete(String(key))) return;
        // A failure means the session is going: the lock goes with it.
        await client.query(...lockQuery("pg_advisory_unlock", key)).catch(() => undefined);
      }),
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
