// The server of `rsop serve --data FILE.db`: the live system kept in a SQLite store (imported from a
// snapshot file on first start, loaded from the database afterwards) and served by createDataApp
// behind Node's http server. Closing stops accepting connections, lets open requests (and the
// writes among them) finish, stores a snapshot and closes the database.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type DurableSystem, openDurableSystem } from "../store/durableSystem.js";
import { openSqliteStore } from "../store/sqliteStore.js";
import { type StoredKind, StoreError } from "../store/store.js";
import type { Authorize } from "./authenticate.js";
import { createDataApp } from "./createDataApp.js";
import { closeGracefully, streamLog } from "./startServer.js";
import { tokenAuthorizer } from "./tokenAuthorizer.js";
import { ADMIN, type TokenEntry, TokensFileError, grantLookup } from "./tokens.js";
import { type WebhookOptions, Webhooks } from "../events/webhookService.js";

/** Options of startDataServer. Exactly one of `token` and `insecureNoAuth` is required. */
export interface StartDataServerOptions {
  /** The SQLite database file (created when missing). */
  readonly dataFile: string;
  /** The snapshot to import when the database is empty: its kind and a reader of its JSON (not called otherwise). */
  readonly initial?: { readonly kind: StoredKind; readonly file: string; readonly read: () => Promise<unknown> };
  readonly port?: number;
  readonly host?: string;
  readonly token?: string;
  readonly authorize?: Authorize;
  /** The tokens of a tokens file (H17), alone or with `token` (an admin's). */
  readonly tokens?: { readonly file: string; readonly entries: readonly TokenEntry[] };
  readonly insecureNoAuth?: boolean;
  readonly basePath?: string;
  readonly maxBodyBytes?: number;
  readonly requestTimeoutMs?: number;
  readonly headersTimeoutMs?: number;
  readonly maxConnections?: number;
  /** Store a snapshot every this many changes; default 1000. */
  readonly snapshotEvery?: number;
  /** Milliseconds close() waits for open requests before cutting connections; default 5000. */
  readonly closeGraceMs?: number;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  /** The organization id of the subscription routes; default the system id (1.0: the panel's serial number). */
  readonly organizationId?: string;
  /** Webhook delivery settings (attempts, backoff, timeouts, backlog cap). */
  readonly webhooks?: WebhookOptions;
}

/** A running `--data` server. */
export interface RunningDataServer {
  /** `http://host:port`. */
  readonly url: string;
  /** The durable live system being served. */
  readonly durable: DurableSystem;
  /** Its webhook subscriptions and dispatcher. */
  readonly webhooks: Webhooks | undefined;
  /** Stops accepting connections, waits for open requests and writes, stores a snapshot, closes the database. */
  close(): Promise<void>;
}

function hostForUrl(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}

const KIND_NAME: Readonly<Record<StoredKind, string>> = { system: "2.0 system", panel: "1.0 panel" };

/**
 * Opens the database (importing the initial snapshot into an empty one) and serves it.
 * @throws StoreError (database missing its driver, in use, empty without a snapshot, not replaying),
 *   SnapshotError (the snapshot to import is invalid), Error (no authentication, port in use).
 */
export async function startDataServer(options: StartDataServerOptions): Promise<RunningDataServer> {
  const log = options.log ?? streamLog(process.stderr);
  const chosen = [options.token !== undefined || options.tokens !== undefined, options.authorize !== undefined, options.insecureNoAuth === true].filter(Boolean).length;
  if (chosen !== 1) throw new Error("give exactly one of token (and/or tokens), authorize and insecureNoAuth");
  const tokens = options.tokens;
  const grants =
    tokens === undefined ? undefined : grantLookup([...(options.token !== undefined ? [{ token: options.token, grant: ADMIN }] : []), ...tokens.entries]);
  const authorize = grants !== undefined ? undefined : options.token !== undefined ? tokenAuthorizer(options.token) : options.authorize;
  const t0 = performance.now();
  const store = await openSqliteStore(options.dataFile);
  let durable: DurableSystem;
  // Set once the system is open; the outbox hook runs only for writes, which come later.
  let webhooks: Webhooks | undefined;
  try {
    const stored = await store.load();
    const initial = options.initial;
    if (stored !== null && initial !== undefined && stored.kind !== initial.kind)
      throw new StoreError(
        `${options.dataFile} holds a ${KIND_NAME[stored.kind]}; serve it with ${stored.kind === "panel" ? "--panel" : "--system"} FILE or with neither, not with ${initial.kind === "panel" ? "--panel" : "--system"}`,
      );
    durable = await openDurableSystem(store, {
      ...(stored === null && initial !== undefined ? { initial: { kind: initial.kind, json: await initial.read() } } : {}),
      ...(options.snapshotEvery !== undefined ? { snapshotEvery: options.snapshotEvery } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
      onSnapshotError: (e) => log(`storing a snapshot failed (the change log still has every change): ${(e as Error)?.message ?? String(e)}`),
      ...(store.webhooks !== undefined
        ? { outbox: { forWrite: (w) => webhooks?.forWrite(w) ?? [], stored: (entries) => webhooks?.stored(entries) } }
        : {}),
    });
    if (store.webhooks !== undefined) {
      const target = durable.target;
      webhooks = await Webhooks.open(
        store.webhooks,
        target.kind === "system"
          ? { generation: "2.0", organizationId: options.organizationId ?? target.live.snapshot.systemId, nodeIds: () => new Set(target.live.snapshot.cloudNodes.map((n) => n.id)) }
          : { generation: "1.0", organizationId: options.organizationId ?? target.live.snapshot.serialNumber, nodeIds: () => new Set([target.live.snapshot.serialNumber]) },
        { ...options.webhooks, log: options.webhooks?.log ?? log, ...(options.now !== undefined ? { now: options.now } : {}) },
      );
    }
    const ms = (performance.now() - t0).toFixed(0);
    const what = durable.target.kind === "system" ? `system ${durable.target.live.snapshot.systemId}` : "1.0 panel";
    const from = durable.startedFrom;
    if (from.how === "imported") log(`imported ${initial!.file} into ${options.dataFile}: ${what} (${ms}ms)`);
    else {
      log(`loaded ${options.dataFile}: ${what} at change ${from.seq} (snapshot of change ${from.snapshotSeq}, ${from.replayed} change${from.replayed === 1 ? "" : "s"} replayed, ${ms}ms)`);
      if (initial !== undefined) log(`${initial.file} ignored: it only seeds an empty database, and ${options.dataFile} already holds the ${KIND_NAME[durable.kind]} (change ${from.seq})`);
    }
  } catch (e) {
    await webhooks?.close();
    await store.close();
    throw e;
  }

  if (tokens !== undefined && durable.kind === "panel") {
    const scoped = tokens.entries.flatMap((e, i) => (e.grant.partitions !== null ? [{ path: `#${i + 1}.role`, message: `A 1.0 panel is served to admin and integrator tokens only, not to a ${e.grant.role}.` }] : []));
    if (scoped.length > 0) {
      await webhooks?.close();
      await durable.close();
      throw new TokensFileError(tokens.file, scoped);
    }
  }
  const startedAt = new Date().toISOString();
  const app = await createDataApp({
    durable,
    ...(grants !== undefined ? { grants } : authorize !== undefined ? { authorize } : { insecureNoAuth: true }),
    ...(options.basePath !== undefined ? { basePath: options.basePath } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    health: () => ({
      status: "ok",
      ...(durable.target.kind === "system" ? { systemId: durable.target.live.snapshot.systemId } : {}),
      seq: durable.seq(),
      loadedAt: startedAt,
    }),
    onError: (e, request) => log(`internal error on ${request.method} ${new URL(request.url).pathname}: ${(e as Error)?.stack ?? String(e)}`),
    ...(webhooks !== undefined ? { webhooks } : {}),
  });

  const fetch = async (request: Request): Promise<Response> => {
    const t = performance.now();
    const path = new URL(request.url).pathname;
    const response = await app.fetch(request);
    const ms = (performance.now() - t).toFixed(1);
    log(request.signal.aborted ? `${request.method} ${path} aborted (connection closed before the answer) after ${ms}ms` : `${request.method} ${path} ${response.status} ${ms}ms`);
    return response;
  };

  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? 10_000, requestTimeout);
  let server: Server;
  try {
    const { serve } = await import("@hono/node-server");
    server = await new Promise<Server>((resolvePromise, reject) => {
      const serverOptions = { requestTimeout, headersTimeout, connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4))) };
      const s = serve({ fetch, port: options.port ?? 0, hostname: options.host ?? "127.0.0.1", overrideGlobalObjects: false, serverOptions }, () => {
        s.off("error", reject);
        resolvePromise(s as Server);
      });
      s.once("error", reject);
    });
  } catch (e) {
    await webhooks?.close();
    await durable.close();
    throw e;
  }
  server.maxConnections = options.maxConnections ?? 1000;
  const address = server.address() as AddressInfo;
  const url = `http://${hostForUrl(address.address)}:${address.port}`;
  const served = durable.target.kind === "system" ? `system ${durable.target.live.snapshot.systemId}` : "1.0 panel";
  log(`serving ${served} from ${options.dataFile} on ${url}`);

  let closing: Promise<void> | undefined;
  return {
    url,
    durable,
    webhooks,
    close() {
      closing ??= (async () => {
        await closeGracefully(server, options.closeGraceMs ?? 5000);
        // The dispatcher stops first: an attempt in flight is cut off and its event stays pending.
        await webhooks?.close();
        await durable.close();
      })();
      return closing;
    },
  };
}
