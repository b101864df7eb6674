// The server of `rsop serve --data FILE.db`: the live system kept in a SQLite store (imported from a
// snapshot file on first start, loaded from the database afterwards) and served by createDataApp
// behind Node's http server. Closing stops accepting connections, lets open requests (and the
// writes among them) finish, stores a snapshot and closes the database.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Server } from "node:http";
import { type DurableSystem, type DurableSystemOptions, openDurableSystem } from "../../service/store/durableSystem.js";
import { openPostgresStore, redactUrl } from "../store/postgresStore.js";
import { type ReplicatedSystem, openReplicatedSystem } from "../../service/store/replicatedSystem.js";
import { openSqliteStore } from "../store/sqliteStore.js";
import { type SharedStore, type Store, type StoredKind, StoreError } from "../../service/store/store.js";
import {
  type ConnectionOptions,
  type ConnectionSettings,
  connectionSettings,
  guardConnections,
} from "./connectionGuard.js";
import { HttpError, errorResponse } from "../../service/httpError.js";
import type { Authorize } from "./authenticate.js";
import { createDataApp } from "./createDataApp.js";
import type { PipelineObserver } from "./dataPipeline.js";
import { type RequestBounds, boundsOf } from "./requestBounds.js";
import { normalizeBasePath } from "./matchEngineRoute.js";
import {
  type MigrationFront,
  type MigrationFrontOptions,
  createMigrationFront,
  migratedPanel,
} from "./migrationFront.js";
import type { ReportService, ReportStoreLimits } from "../../service/reportService.js";
import { closeGracefully, listenOn, serverUrl, streamLog, withRequestLog } from "./startServer.js";
import { tokenAuthorizer } from "./tokenAuthorizer.js";
import { ADMIN, type TokenEntry, TokensFileError, grantLookup } from "../../service/auth/tokens.js";
import { type WebhookOptions, Webhooks } from "../../service/webhooks/webhookService.js";
import { httpsTransport } from "../delivery/httpsTransport.js";

/** Options of startDataServer. Exactly one of `token` and `insecureNoAuth` is required, and one of `dataFile` and `storeUrl`. */
export interface StartDataServerOptions extends ConnectionOptions, RequestBounds {
  /** The SQLite database file (created when missing). */
  readonly dataFile?: string;
  /**
   * A PostgreSQL URL (`postgres://…`): this server is one replica of the system kept there, beside any
   * number of others on the same database (replicatedSystem.ts).
   */
  readonly storeUrl?: string;
  /** With `storeUrl`: how long a request with `X-Rsop-Min-Revision` waits for this replica to apply it before 503; default 2000 ms. */
  readonly minRevisionWaitMs?: number;
  /** With `storeUrl`: catch up with the log this often without notifications; default 1000 ms. */
  readonly pollMs?: number;
  /** The snapshot to import when the database is empty: its kind and a reader of its JSON (not called otherwise). */
  readonly initial?: { readonly kind: StoredKind; readonly file: string; readonly read: () => Promise<unknown> };
  readonly port?: number;
  readonly host?: string;
  readonly token?: string;
  /** Told each time a request is routed and a token resolved (tests count them). */
  readonly observe?: PipelineObserver;
  readonly authorize?: Authorize;
  /** The tokens of a tokens file (H17), alone or with `token` (an admin's). */
  readonly tokens?: { readonly file: string; readonly entries: readonly TokenEntry[] };
  readonly insecureNoAuth?: boolean;
  readonly basePath?: string;
  readonly maxBodyBytes?: number;
  /** Store a snapshot every this many changes; default 1000. */
  readonly snapshotEvery?: number;
  /** Awaited before each migration task (tests watch one task at a time); default: the next turn of the event loop. */
  readonly migrationPace?: (task: string) => Promise<void>;
  /** Milliseconds close() waits for open requests before cutting connections; default 5000. */
  readonly closeGraceMs?: number;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  /** A generated report keeps at most this many records, then ends `finishedTruncated`; default 1,000,000. */
  readonly maxReportEntries?: number;
  /** The stored report caps (count, bytes) and the generation bound (RP16, RP17); defaults REPORT_STORE_DEFAULTS. */
  readonly reportStore?: ReportStoreLimits;
  /** The organization id of the subscription routes; default the system id (1.0: the panel's serial number). */
  readonly organizationId?: string;
  /** Webhook delivery settings (attempts, backoff, timeouts, backlog cap). */
  readonly webhooks?: WebhookOptions;
}

/** A running `--data` server. */
export interface RunningDataServer {
  /** `http://host:port`. */
  readonly url: string;
  /** The durable live system being served (the 2.0 system once a migration completed). */
  readonly durable: DurableSystem;
  /** The same, as a replica, when served from PostgreSQL (`storeUrl`). */
  readonly replica?: ReplicatedSystem;
  /** The holder (2.0) or people (1.0) reports of the system served. */
  readonly reports: ReportService;
  /** Its webhook subscriptions and dispatcher (on PostgreSQL, one replica dispatches at a time). */
  readonly webhooks: Webhooks | undefined;
  /** Stops accepting connections, waits for open requests, writes and reports being generated, stores a snapshot, closes the database. */
  close(): Promise<void>;
}

/** The response with `X-Rsop-Revision` set (a copy when its headers are immutable). */
function withRevision(response: Response, revision: number): Response {
  try {
    response.headers.set("x-rsop-revision", String(revision));
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set("x-rsop-revision", String(revision));
    return copy;
  }
}

const KIND_NAME: Readonly<Record<StoredKind, string>> = { system: "2.0 system", panel: "1.0 panel" };

/** The checked options: connection settings and how requests are authenticated. */
interface CheckedDataOptions {
  readonly connections: ConnectionSettings;
  /** The grants of a tokens file (with `token` as an admin's), or undefined. */
  readonly grants: ReturnType<typeof grantLookup> | undefined;
  /** The authorizer when there are no grants; undefined with insecureNoAuth. */
  readonly authorize: Authorize | undefined;
}

/** Checks the options before the store is opened: a bad value opens nothing (HC1–HC4). */
function checkDataServerOptions(options: StartDataServerOptions): CheckedDataOptions {
  const connections = connectionSettings("startDataServer", options);
  const chosen = [
    options.token !== undefined || options.tokens !== undefined,
    options.authorize !== undefined,
    options.insecureNoAuth === true,
  ].filter(Boolean).length;
  if (chosen !== 1) throw new Error("give exactly one of token (and/or tokens), authorize and insecureNoAuth");
  const tokens = options.tokens;
  const grants =
    tokens === undefined
      ? undefined
      : grantLookup([
          ...(options.token !== undefined ? [{ token: options.token, grant: ADMIN }] : []),
          ...tokens.entries,
        ]);
  const authorize =
    grants !== undefined ? undefined : options.token !== undefined ? tokenAuthorizer(options.token) : options.authorize;
  if ((options.dataFile === undefined) === (options.storeUrl === undefined))
    throw new Error("give exactly one of dataFile and storeUrl");
  return { connections, grants, authorize };
}

/**
 * The webhooks of the served system. Set once the system is open; the outbox hook runs only for
 * writes, which come later. A completed migration replaces them with the new system's (W19).
 */
interface WebhookSlot {
  hooks: Webhooks | undefined;
  /** The system whose app serves the subscription routes and records access events. */
  target: DurableSystem["target"] | undefined;
  /** Opens the webhooks of `target` into this slot. */
  open(target: DurableSystem["target"]): Promise<void>;
  /** The webhook events of each accepted write go into the store in the write's transaction. */
  readonly outbox: Pick<DurableSystemOptions, "outbox">;
}

function createWebhookSlot(store: Store, options: StartDataServerOptions, log: (line: string) => void): WebhookSlot {
  const slot: WebhookSlot = {
    hooks: undefined,
    target: undefined,
    async open(target) {
      slot.hooks = await Webhooks.open(
        store.webhooks!,
        target.kind === "system"
          ? {
              generation: "2.0",
              organizationId: options.organizationId ?? target.live.current.systemId,
              nodeIds: () => new Set(target.live.current.cloudNodes.map((n) => n.id)),
            }
          : {
              generation: "1.0",
              organizationId: options.organizationId ?? target.live.snapshot.serialNumber,
              nodeIds: () => new Set([target.live.snapshot.serialNumber]),
            },
        {
          ...options.webhooks,
          log: options.webhooks?.log ?? log,
          ...(options.now !== undefined ? { now: options.now } : {}),
        },
        httpsTransport(options.webhooks?.allow ?? []),
      );
      slot.target = target;
    },
    outbox:
      store.webhooks !== undefined
        ? {
            outbox: {
              forWrite: (w) => slot.hooks?.forWrite(w) ?? [],
              stored: (entries) => slot.hooks?.stored(entries),
            },
          }
        : {},
  };
  return slot;
}

/** The system opened from the store: durable, and the same as a replica on PostgreSQL. */
interface OpenedSystem {
  readonly durable: DurableSystem;
  readonly replica: ReplicatedSystem | undefined;
}

/**
 * Opens the live system kept in `store` (importing the initial snapshot into an empty store) and its
 * webhooks, and logs how it started. On failure the webhooks and the store are closed again.
 */
async function openServedSystem(
  options: StartDataServerOptions,
  store: Store,
  where: string,
  t0: number,
  webhooks: WebhookSlot,
  log: (line: string) => void,
): Promise<OpenedSystem> {
  try {
    const stored = await store.load();
    const initial = await initialToServe(options.initial, stored?.kind ?? null, store, where, log);
    if (stored !== null && initial !== undefined && stored.kind !== initial.kind)
      throw new StoreError(
        `${where} holds a ${KIND_NAME[stored.kind]}; serve it with ${stored.kind === "panel" ? "--panel" : "--system"} FILE or with neither, not with ${initial.kind === "panel" ? "--panel" : "--system"}`,
      );
    const opening = {
      ...(stored === null && initial !== undefined
        ? { initial: { kind: initial.kind, json: await initial.read() } }
        : {}),
      ...(options.snapshotEvery !== undefined ? { snapshotEvery: options.snapshotEvery } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
    };
    let durable: DurableSystem;
    let replica: ReplicatedSystem | undefined;
    if (options.storeUrl !== undefined) {
      replica = await openReplicatedSystem(store as SharedStore, {
        ...opening,
        ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
        onEvent: log,
        ...webhooks.outbox,
      });
      durable = replica;
    } else
      durable = await openDurableSystem(store, {
        ...opening,
        onSnapshotError: (e) =>
          log(
            `storing a snapshot failed (the change log still has every change): ${(e as Error)?.message ?? String(e)}`,
          ),
        ...webhooks.outbox,
      });
    if (store.webhooks !== undefined) await webhooks.open(durable.target);
    logOpened(durable, where, (performance.now() - t0).toFixed(0), initial, log);
    return { durable, replica };
  } catch (e) {
    await webhooks.hooks?.close();
    await store.close();
    throw e;
  }
}

/**
 * The initial snapshot, unless it is the 1.0 panel a completed migration turned into the 2.0 system
 * the store holds: the command line that served the panel (`--panel FILE`) then serves the migrated
 * system, saying the panel file is ignored, instead of refusing to start (M11).
 */
async function initialToServe(
  initial: StartDataServerOptions["initial"],
  storedKind: StoredKind | null,
  store: Store,
  where: string,
  log: (line: string) => void,
): Promise<StartDataServerOptions["initial"]> {
  if (initial?.kind !== "panel" || storedKind !== "system") return initial;
  const migrated = await migratedPanel(store);
  if (migrated === null) return initial;
  log(
    `--panel ${initial.file} ignored: panel ${migrated.serialNumber} was migrated to 2.0 system ${migrated.systemId ?? "(unknown)"}, which ${where} holds and serves now; drop --panel from the command line`,
  );
  return undefined;
}

/** Logs whether `durable` was imported from the initial snapshot or loaded (and the snapshot ignored). */
function logOpened(
  durable: DurableSystem,
  where: string,
  ms: string,
  initial: StartDataServerOptions["initial"],
  log: (line: string) => void,
): void {
  const what = durable.target.kind === "system" ? `system ${durable.target.live.snapshot.systemId}` : "1.0 panel";
  const from = durable.startedFrom;
  if (from.how === "imported") log(`imported ${initial!.file} into ${where}: ${what} (${ms}ms)`);
  else {
    log(
      `loaded ${where}: ${what} at change ${from.seq} (snapshot of change ${from.snapshotSeq}, ${from.replayed} change${from.replayed === 1 ? "" : "s"} replayed, ${ms}ms)`,
    );
    if (initial !== undefined)
      log(
        `${initial.file} ignored: it only seeds an empty database, and ${where} already holds the ${KIND_NAME[durable.kind]} (change ${from.seq})`,
      );
  }
}

/**
 * Refuses a tokens file with partition-scoped tokens when the store holds a 1.0 panel (closing what
 * was opened): a panel has no partitions to scope them to.
 */
async function refuseScopedTokensOnPanel(
  tokens: StartDataServerOptions["tokens"],
  durable: DurableSystem,
  webhooks: WebhookSlot,
): Promise<void> {
  if (tokens === undefined || durable.kind !== "panel") return;
  const scoped = tokens.entries.flatMap((e, i) =>
    e.grant.partitions !== null
      ? [
          {
            path: `#${i + 1}.role`,
            message: `A 1.0 panel is served to admin and integrator tokens only, not to a ${e.grant.role}.`,
          },
        ]
      : [],
  );
  if (scoped.length > 0) {
    await webhooks.hooks?.close();
    await durable.close();
    throw new TokensFileError(tokens.file, scoped);
  }
}

/** What the steps after opening share. */
interface DataServerContext extends OpenedSystem, CheckedDataOptions {
  readonly options: StartDataServerOptions;
  readonly log: (line: string) => void;
  readonly store: Store;
  readonly webhooks: WebhookSlot;
  /** When this server started (the health answer's loadedAt). */
  readonly startedAt: string;
  /** The revision an accepted or refused write of the request being answered got (replicas only). */
  readonly written: AsyncLocalStorage<{ seq?: number }>;
  /** The report services of the apps made (the served system's, and a staged one's): close waits for each. */
  readonly reportServices: Map<DurableSystem["target"], ReportService>;
}

/**
 * The system the app answers with. A replica answers with the revision of each answer (PG3): a
 * read's is the revision before it ran (its answer reflects at least that), an accepted write's the
 * sequence number the log gave it, a refused write's the revision it was checked against.
 */
function answeringSystem(ctx: DataServerContext): DurableSystem {
  const { durable, replica, written } = ctx;
  return replica === undefined ? durable : recordingRevisions(replica, written);
}

/**
 * The replica, whose writes tell the request being answered (`written`, as answerAsReplica runs it)
 * the revision they got: an accepted write's sequence number, a refused write's revision it was
 * checked against (PG3). The service's tenant apps use it too (T55).
 */
export function recordingRevisions(
  replica: ReplicatedSystem,
  written: AsyncLocalStorage<{ seq?: number }>,
): DurableSystem {
  return {
    ...replica,
    async write(op, prepare) {
      const result = await replica.write(op, prepare);
      const slot = written.getStore();
      if (slot !== undefined) slot.seq = replica.seqOf(result) ?? replica.revision();
      return result;
    },
  };
}

/** Makes the data app of a durable system (the served one, or a staged one during a migration). */
function dataAppMaker(ctx: DataServerContext): (served: DurableSystem) => ReturnType<typeof createDataApp> {
  const { options, grants, authorize, replica, webhooks, reportServices, log } = ctx;
  return (served) =>
    createDataApp({
      durable: served,
      ...(grants !== undefined ? { grants } : authorize !== undefined ? { authorize } : { insecureNoAuth: true }),
      ...(options.basePath !== undefined ? { basePath: options.basePath } : {}),
      ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
      ...boundsOf(options),
      ...(options.now !== undefined ? { now: options.now } : {}),
      health: () => ({
        status: "ok",
        ...(served.target.kind === "system" ? { systemId: served.target.live.current.systemId } : {}),
        seq: served.seq(),
        loadedAt: ctx.startedAt,
        ...(replica !== undefined ? replica.health() : {}),
        // Which replica delivers the webhook events (W16).
        ...(replica !== undefined && webhooks.hooks !== undefined
          ? { webhookDispatcher: webhooks.hooks.dispatching }
          : {}),
      }),
      ...(options.maxReportEntries !== undefined ? { maxReportEntries: options.maxReportEntries } : {}),
      ...(options.observe !== undefined ? { observe: options.observe } : {}),
      ...(options.reportStore !== undefined ? { reportStore: options.reportStore } : {}),
      onReports: (r) => {
        reportServices.set(served.target, r);
      },
      onReportError: (e) => log(`report generation failed: ${(e as Error)?.stack ?? String(e)}`),
      onError: (e, request) =>
        log(
          `internal error on ${request.method} ${new URL(request.url).pathname}: ${(e as Error)?.stack ?? String(e)}`,
        ),
      // Subscriptions and events belong to the served system (not to a staged one).
      ...(webhooks.hooks !== undefined && served.target === webhooks.target ? { webhooks: webhooks.hooks } : {}),
    });
}

/** The front of the server: the migration routes before the app, or the app alone. */
type DataFront = Pick<MigrationFront, "fetch" | "current"> & { readonly job: MigrationFront["job"] | null };

/**
 * The migration routes (M8–M12) in front of the served system's app, when the store can keep a
 * migration (SQLite; not a PostgreSQL replica); otherwise the app alone. On failure the system is closed.
 */
async function buildDataFront(ctx: DataServerContext): Promise<DataFront> {
  const { store, durable, replica } = ctx;
  const makeApp = dataAppMaker(ctx);
  try {
    if (
      replica !== undefined ||
      store.getValue === undefined ||
      store.setValue === undefined ||
      store.replaceSystem === undefined
    ) {
      const only = await makeApp(answeringSystem(ctx));
      return { fetch: async (request) => only.fetch(request), current: () => durable, job: null };
    }
    return await createMigrationFront(migrationFrontOptions(ctx, makeApp));
  } catch (e) {
    await durable.close();
    throw e;
  }
}

/** The options of the migration front of a SQLite store. */
function migrationFrontOptions(
  ctx: DataServerContext,
  makeApp: ReturnType<typeof dataAppMaker>,
): MigrationFrontOptions {
  const { options, grants, authorize, store, durable, webhooks, log } = ctx;
  return {
    store,
    durable,
    makeApp,
    ...(grants !== undefined
      ? { authorize: (token: string) => grants(token)?.partitions === null }
      : authorize !== undefined
        ? { authorize }
        : {}),
    basePath: normalizeBasePath(options.basePath ?? ""),
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    indent: 2,
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(options.migrationPace !== undefined ? { pace: options.migrationPace } : {}),
    // The panel's 1.0 organization is the one its subscription routes name (the serial number by default).
    ...(options.organizationId !== undefined ? { legacyOuId: options.organizationId } : {}),
    log,
    ...(store.webhooks !== undefined
      ? {
          // The panel's hooks end with it (W19): the preflight warns of each, and the migrated system starts with none.
          integrations: () =>
            webhooks.hooks
              ?.list()
              .map(
                (h) =>
                  `Webhook "${h.name}" (${h.id}) is not migrated: the panel's hooks end with it; subscribe again on the 2.0 system.`,
              ) ?? [],
          onCompleted: async (next: DurableSystem) => {
            await webhooks.hooks?.close();
            await webhooks.open(next.target);
          },
        }
      : {}),
    reopen: {
      ...webhooks.outbox,
      ...(options.snapshotEvery !== undefined ? { snapshotEvery: options.snapshotEvery } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
      onSnapshotError: (e) =>
        log(`storing a snapshot failed (the change log still has every change): ${(e as Error)?.message ?? String(e)}`),
    },
  };
}

/** A replica's answer: waits for X-Rsop-Min-Revision (bounded: 503 with Retry-After), sets X-Rsop-Revision (PG3; a service's tenant, T55). */
export async function answerAsReplica(
  request: Request,
  r: ReplicatedSystem,
  app: { fetch(request: Request): Response | Promise<Response> },
  written: AsyncLocalStorage<{ seq?: number }>,
  minRevisionWaitMs: number,
): Promise<Response> {
  const min = request.headers.get("x-rsop-min-revision");
  if (min !== null) {
    const wanted = /^\s*\d{1,15}\s*$/.test(min) ? Number(min) : NaN;
    if (!Number.isSafeInteger(wanted))
      return withRevision(
        errorResponse(
          new HttpError(400, "X-Rsop-Min-Revision must be a whole number (a revision from X-Rsop-Revision).", [
            { path: "headers.x-rsop-min-revision", message: `"${min.slice(0, 40)}" is not a whole number.` },
          ]),
          2,
        ),
        r.revision(),
      );
    if (!(await r.waitFor(wanted, minRevisionWaitMs)))
      return withRevision(
        errorResponse(
          new HttpError(
            503,
            `This replica has not yet applied revision ${wanted} (it is at ${r.revision()}); try again, or ask another replica.`,
            [],
            { "retry-after": "1" },
          ),
          2,
        ),
        r.revision(),
      );
  }
  const before = r.revision();
  const slot: { seq?: number } = {};
  const response = await written.run(slot, () => app.fetch(request));
  return withRevision(response, slot.seq ?? before);
}

/** The server's request handler: the front (as a replica on PostgreSQL), one log line per request. */
function dataServerFetch(ctx: DataServerContext, app: DataFront): (request: Request) => Promise<Response> {
  const { replica, written, log } = ctx;
  const minRevisionWaitMs = ctx.options.minRevisionWaitMs ?? 2000;
  return withRequestLog(log, (request) =>
    replica === undefined ? app.fetch(request) : answerAsReplica(request, replica, app, written, minRevisionWaitMs),
  );
}

/** Opens the port; when it cannot be opened, closes the webhooks and the system first. */
async function listenOrClose(ctx: DataServerContext, fetch: (request: Request) => Promise<Response>): Promise<Server> {
  try {
    return await listenOn(fetch, ctx.options, ctx.connections);
  } catch (e) {
    await ctx.webhooks.hooks?.close();
    await ctx.durable.close();
    throw e;
  }
}

/**
 * The running server. Its close waits for open requests, then stops the webhooks, waits for the
 * reports being generated and a migration task in progress, and closes the system last.
 */
function runningDataServer(ctx: DataServerContext, front: DataFront, server: Server, url: string): RunningDataServer {
  const { replica, webhooks, reportServices, options } = ctx;
  let closing: Promise<void> | undefined;
  return {
    url,
    get durable() {
      return front.current();
    },
    ...(replica !== undefined ? { replica } : {}),
    get webhooks() {
      return webhooks.hooks;
    },
    get reports() {
      return reportServices.get(front.current().target)!;
    },
    close() {
      closing ??= (async () => {
        await closeGracefully(server, options.closeGraceMs ?? 5000);
        // The dispatcher stops first: an attempt in flight is cut off and its event stays pending.
        await webhooks.hooks?.close();
        await Promise.all([...reportServices.values()].map((r) => r.settled()));
        await front.job?.running;
        await front.current().close();
      })();
      return closing;
    },
  };
}

/**
 * Opens the database (importing the initial snapshot into an empty one) and serves it.
 * @throws StoreError (database missing its driver, in use, empty without a snapshot, not replaying),
 *   SnapshotError (the snapshot to import is invalid), Error (no authentication, port in use).
 */
export async function startDataServer(options: StartDataServerOptions): Promise<RunningDataServer> {
  const log = options.log ?? streamLog(process.stderr);
  const checked = checkDataServerOptions(options);
  const where = options.storeUrl !== undefined ? redactUrl(options.storeUrl) : options.dataFile!;
  const t0 = performance.now();
  const store: Store =
    options.storeUrl !== undefined
      ? await openPostgresStore(options.storeUrl)
      : await openSqliteStore(options.dataFile!);
  const webhooks = createWebhookSlot(store, options, log);
  const opened = await openServedSystem(options, store, where, t0, webhooks, log);
  await refuseScopedTokensOnPanel(options.tokens, opened.durable, webhooks);
  const ctx: DataServerContext = {
    ...checked,
    ...opened,
    options,
    log,
    store,
    webhooks,
    startedAt: new Date().toISOString(),
    written: new AsyncLocalStorage<{ seq?: number }>(),
    reportServices: new Map(),
  };
  const front = await buildDataFront(ctx);
  const server = await listenOrClose(ctx, dataServerFetch(ctx, front));
  guardConnections(server, checked.connections, log);
  const url = serverUrl(server);
  const durable = opened.durable;
  const served = durable.target.kind === "system" ? `system ${durable.target.live.snapshot.systemId}` : "1.0 panel";
  log(`serving ${served} from ${where} on ${url}`);
  return runningDataServer(ctx, front, server, url);
}
