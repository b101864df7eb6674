// The HTTP server of `rsop serve`: the handler of createHttpHandler behind Node's http server
// (bridged by @hono/node-server), one log line per request, and a snapshot file that is watched and
// swapped in atomically when it changes.
//
// Atomic swap: the engine is one variable, replaced by a single assignment once the new snapshot
// has been read, validated and compiled; the handler reads it once per request. A request therefore
// sees exactly one snapshot from start to finish, and a snapshot that fails to load is never seen.
import { stat } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Http2Bindings, HttpBindings } from "@hono/node-server";
import { Engine } from "../../evaluate/index.js";
import { type Issue, SnapshotError, type SystemSnapshot, formatPath } from "../../model/index.js";
import { type HttpHandlerOptions, createHttpHandler } from "./createHttpHandler.js";
import {
  type ConnectionOptions,
  type ConnectionSettings,
  connectionSettings,
  guardConnections,
  serverOptionsOf,
} from "./connectionGuard.js";
import { HttpError, errorResponse, jsonResponse } from "../../service/httpError.js";
import { normalizeBasePath } from "./matchEngineRoute.js";
import { TextAnswer, closedBeforeAnswer, registerNodeRequest } from "./nodeRequests.js";
import { docsRoutes } from "./routes/docsRoutes.js";
import { buildOpenApiDocument } from "./routes/openApiDocument.js";
import { engineServerDeclarations } from "./routes/servedRoutes.js";
import {
  type LoadedSnapshot,
  type PositionPatch,
  type SliceHashes,
  defaultWorkerFile,
  loadSnapshotFile,
  parseSnapshotSlices,
  parseSnapshotSlicesAgainst,
  readSnapshotFile,
  readSnapshotFileInWorker,
  yieldToEventLoop,
} from "./loadSnapshotFile.js";
import { tokenAuthorizer } from "./tokenAuthorizer.js";
import { ADMIN, type TokenEntry, grantLookup } from "../../service/auth/tokens.js";
import { type SnapshotWatch, watchSnapshotFile } from "./watchSnapshotFile.js";

/**
 * Options of startServer. Exactly one of `token`, `authorize` and `insecureNoAuth` is required. The
 * connection options (ConnectionOptions: timeouts, connection caps) are checked by connectionSettings.
 */
export interface StartServerOptions extends ConnectionOptions {
  /** The rsop-system/1 snapshot file to serve (and watch). */
  readonly systemFile: string;
  /** TCP port; default 0 (any free port: read it from `url`). */
  readonly port?: number;
  /** Address to listen on; default `127.0.0.1` (this machine only). */
  readonly host?: string;
  /** The one bearer token clients must send (compared in constant time). */
  readonly token?: string;
  /** The tokens of a tokens file (semantics H17), alone or with `token` (an admin's). */
  readonly tokens?: { readonly file: string; readonly entries: readonly TokenEntry[] };
  /** Or a custom authorizer (see createHttpHandler). */
  readonly authorize?: HttpHandlerOptions["authorize"];
  /** Or no authentication at all. */
  readonly insecureNoAuth?: boolean;
  readonly basePath?: string;
  readonly maxBodyBytes?: number;
  readonly maxIds?: number;
  readonly now?: () => number;
  /** Watch the file and reload it when it changes; default true. */
  readonly watch?: boolean;
  /** Quiet time after the last file event before reloading, ms; default 200. */
  readonly debounceMs?: number;
  /** Where log lines go (no newline); default stderr. */
  readonly log?: (line: string) => void;
  /** Milliseconds close() waits for requests in progress before cutting connections; default 5000. */
  readonly closeGraceMs?: number;
  /**
   * The built worker script (snapshotWorker.ts) that reads, parses and validates a changed file
   * off the event loop; default `snapshot-worker.js` next to this module (as `npm run build` lays
   * out dist/), or, when there is none (running from source), reloads run on the main thread.
   * `false`: always on the main thread.
   */
  readonly reloadWorker?: string | false;
}

/** What `GET /healthz` answers (no authentication needed): the snapshot being served. */
export interface HealthBody {
  readonly status: "ok";
  readonly systemId: string;
  /** SHA-256 (hex) of the snapshot file's bytes. */
  readonly sha256: string;
  /** When this snapshot was swapped in (ISO 8601, UTC). */
  readonly loadedAt: string;
}

/** What a reload did. */
export type ReloadResult =
  | { readonly status: "reloaded"; readonly engine: Engine }
  | { readonly status: "unchanged" }
  | { readonly status: "refused"; readonly issues: readonly Issue[] };

/** A running server. */
export interface RunningServer {
  /** `http://host:port`, the port resolved when 0 was asked for. */
  readonly url: string;
  /** The engine answering requests now. */
  engine(): Engine;
  /** Reads the file again now; swaps the engine in if it is valid and differs. Reloads run one at a time. */
  reload(): Promise<ReloadResult>;
  /** Stops watching, stops accepting connections and resolves once open requests are answered. */
  close(): Promise<void>;
}

/**
 * Stops `server`: no new connections, idle ones closed at once, requests in progress given
 * `graceMs` to finish before their connections are cut.
 */
export function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolveClose) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolveClose();
    });
    server.closeIdleConnections();
  });
}

/** The logs with request lines waiting for the end of the event loop's turn: written on exit if it comes first. */
const pendingLogs = new Set<() => void>();
let flushOnExit = false;

/** A log of streamLog: a line is written at once, a request's line may wait for the end of the turn. */
export interface StreamLog {
  (line: string): void;
  /**
   * Logs the line of an answered request. The first of an event-loop turn is written at once; those
   * after it in the same turn (a loaded server answers several a turn) wait for the end of the turn
   * and are written together, one write instead of one each. A line logged meanwhile writes them
   * first, so lines keep their order; the process's exit writes what still waits.
   */
  readonly request: (line: string) => void;
}

/** How a server logs the line of each request: `log.request` of a StreamLog, else `log`. */
export function requestLog(log: (line: string) => void): (line: string) => void {
  return (log as Partial<StreamLog>).request ?? log;
}

/**
 * A request handler that logs one line per request: method, path (never the query: it may name
 * people), status, duration; or that the client went away before the answer (an abort is not an
 * error of the server). `answer` is given the path, parsed once.
 */
export function withRequestLog(
  log: (line: string) => void,
  answer: (request: Request, path: string) => Response | Promise<Response>,
): (request: Request) => Promise<Response> {
  const logRequest = requestLog(log);
  return async (request) => {
    const t0 = performance.now();
    const path = new URL(request.url).pathname;
    const response = await answer(request, path);
    const ms = (performance.now() - t0).toFixed(1);
    logRequest(
      closedBeforeAnswer(request)
        ? `${request.method} ${path} aborted (connection closed before the answer) after ${ms}ms`
        : `${request.method} ${path} ${response.status} ${ms}ms`,
    );
    return response;
  };
}

/**
 * A log that writes `<ISO time> <line>` lines to a stream and never throws or crashes the process
 * when the stream's reader is gone (EPIPE on a closed stderr): from the first write error on, lines
 * are dropped. Serving matters more than logging. Lines are stamped when logged.
 */
export function streamLog(stream: NodeJS.WritableStream): StreamLog {
  let broken = false;
  let turnStarted = false;
  let pending = "";
  // Lines of the same millisecond share one stamp (a loaded server logs several).
  let stampedAt = Number.NaN;
  let stamp = "";
  stream.on("error", () => {
    broken = true;
  });
  const stamped = (line: string) => {
    const now = Date.now();
    if (now !== stampedAt) {
      stampedAt = now;
      stamp = new Date(now).toISOString();
    }
    return `${stamp} ${line}\n`;
  };
  const write = (text: string) => {
    pendingLogs.delete(flush);
    pending = "";
    try {
      stream.write(text);
    } catch {
      broken = true;
    }
  };
  const flush = () => {
    if (pending !== "" && !broken) write(pending);
  };
  const endTurn = () => {
    turnStarted = false;
    flush();
  };
  const request = (line: string) => {
    if (broken) return;
    if (!turnStarted) {
      turnStarted = true;
      setImmediate(endTurn);
      write(pending + stamped(line));
      return;
    }
    if (pending === "") pendingLogs.add(flush);
    pending += stamped(line);
    if (!flushOnExit) {
      flushOnExit = true;
      process.once("exit", () => {
        for (const f of [...pendingLogs]) f();
      });
    }
  };
  return Object.assign(
    (line: string) => {
      if (!broken) write(pending + stamped(line));
    },
    { request },
  );
}

/** Whether the request came over HTTP/1.1 (node:http), not HTTP/2. */
function isHttp1(env: HttpBindings | Http2Bindings): env is HttpBindings {
  return !("stream" in env.incoming);
}

/**
 * Answers a request of Node's http server (HTTP/1.1): registered, so that its body is read from the
 * IncomingMessage; a TextAnswer is written here, and @hono/node-server told it was sent.
 */
async function answerNode(
  fetch: (request: Request) => Promise<Response>,
  request: Request,
  env: HttpBindings,
  sent: Response,
): Promise<Response> {
  registerNodeRequest(request, env.incoming, env.outgoing);
  const response = await fetch(request);
  if (!(response instanceof TextAnswer)) return response;
  response.writeTo(env.outgoing, Buffer.byteLength);
  return sent;
}

/**
 * Listens with `fetch` on the port and host of `options` and resolves once the port is open (rejects
 * when it cannot be). Shared by startServer and startDataServer, so both servers open ports alike.
 */
export async function listenOn(
  fetch: (request: Request) => Promise<Response>,
  options: { readonly port?: number; readonly host?: string },
  connections: ConnectionSettings,
): Promise<Server> {
  // Loaded on first use, so the other CLI commands work even where the server's dependencies
  // (@hono/node-server and its peer hono) are missing.
  const { serve } = await import("@hono/node-server");
  const { RESPONSE_ALREADY_SENT } = await import("@hono/node-server/utils/response");
  return await new Promise<Server>((resolvePromise, reject) => {
    const serverOptions = serverOptionsOf(connections);
    const s = serve(
      {
        fetch: (request, env) =>
          isHttp1(env) ? answerNode(fetch, request, env, RESPONSE_ALREADY_SENT) : fetch(request),
        port: options.port ?? 0,
        hostname: options.host ?? "127.0.0.1",
        overrideGlobalObjects: false,
        serverOptions,
      },
      () => {
        s.off("error", reject);
        resolvePromise(s as Server);
      },
    );
    s.once("error", reject);
  });
}

/** `http://host:port` of a listening server (an IPv6 host in brackets). */
export function serverUrl(server: Server): string {
  const address = server.address() as AddressInfo;
  const host = address.address.includes(":") ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

function statKey(s: { dev: number; ino: number; size: number; mtimeMs: number }): string {
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
}

/** How requests are authenticated: a tokens file's grants, or one authorizer, or neither (insecureNoAuth). */
interface ServerAuth {
  readonly grants: ReturnType<typeof grantLookup> | undefined;
  readonly authorize: HttpHandlerOptions["authorize"];
}

/** Checks that exactly one way of authenticating was chosen, and builds it. */
function serverAuthOf(options: StartServerOptions): ServerAuth {
  const chosen = [
    options.token !== undefined || options.tokens !== undefined,
    options.authorize !== undefined,
    options.insecureNoAuth === true,
  ].filter(Boolean).length;
  if (chosen === 0)
    throw new Error(
      "refusing to start without authentication: give a token (or an authorize function), or insecureNoAuth",
    );
  if (chosen > 1) throw new Error("give only one of token, authorize and insecureNoAuth");
  const grants =
    options.tokens === undefined
      ? undefined
      : grantLookup([
          ...(options.token !== undefined ? [{ token: options.token, grant: ADMIN }] : []),
          ...options.tokens.entries,
        ]);
  const authorize =
    grants !== undefined ? undefined : options.token !== undefined ? tokenAuthorizer(options.token) : options.authorize;
  return { grants, authorize };
}

/** The JSON slices of a snapshot as the worker cut them: what a later reload compares against. */
type KnownSlices = { rest: string; hashes: SliceHashes };

/** The snapshot being served; a reload replaces its fields, requests and health read them. */
interface Served {
  engine: Engine;
  sha256: string;
  /** When this snapshot was swapped in (ISO 8601, UTC). */
  loadedAt: string;
  lastSlices: KnownSlices | null;
  /** The snapshot `lastSlices` describe: slices are reused only against that very snapshot. */
  lastSnapshotOfSlices: SystemSnapshot | null;
}

/**
 * Loads the file to serve first.
 * @throws SnapshotError listing every problem of the file.
 */
async function loadFirstSnapshot(file: string, workerFile: string | null): Promise<Served> {
  // With the worker, the first load goes through it too, so that the JSON slices of the snapshot
  // being served are known and a reload can recompile only the slices that changed.
  let lastSlices: KnownSlices | null = null;
  let first: LoadedSnapshot;
  if (workerFile !== null) {
    const r = await readSnapshotFileInWorker(file, workerFile);
    if (r.ok) lastSlices = { rest: r.slices.rest, hashes: r.slices.hashes };
    first = r.ok ? { ok: true, engine: new Engine(await parseSnapshotSlices(r.slices)), sha256: r.sha256 } : r;
  } else first = await loadSnapshotFile(file);
  if (!first.ok) throw new SnapshotError(first.issues, `snapshot file "${file}"`);
  return {
    engine: first.engine,
    sha256: first.sha256,
    loadedAt: new Date().toISOString(),
    lastSlices,
    lastSnapshotOfSlices: lastSlices === null ? null : first.engine.snapshot,
  };
}

/**
 * The server's request handler: `/healthz`, the OpenAPI document and its docs page, then the
 * engine's routes; one log line per request.
 */
async function buildServerFetch(
  options: StartServerOptions,
  auth: ServerAuth,
  served: Served,
  systemId: string,
  log: (line: string) => void,
): Promise<(request: Request) => Promise<Response>> {
  const { grants, authorize } = auth;
  const handler = createHttpHandler({
    getEngine: () => served.engine,
    ...(grants !== undefined ? { grants } : authorize !== undefined ? { authorize } : {}),
    insecureNoAuth: options.insecureNoAuth === true,
    ...(options.basePath !== undefined ? { basePath: options.basePath } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(options.maxIds !== undefined ? { maxIds: options.maxIds } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    onError: (e, request) =>
      log(`internal error on ${request.method} ${new URL(request.url).pathname}: ${(e as Error)?.stack ?? String(e)}`),
  });

  const basePath = normalizeBasePath(options.basePath ?? "");
  const healthPath = `${basePath}/healthz`;
  // The OpenAPI document of the routes served, and Swagger UI reading it (no token: they hold no data).
  const docs = docsRoutes(
    await buildOpenApiDocument(engineServerDeclarations(), {
      title: "rsop-engine: RSOP and decisions",
      version: "2.0",
      basePath,
    }),
    basePath,
  );
  function health(request: Request): Response {
    if (request.method !== "GET" && request.method !== "HEAD")
      return errorResponse(
        new HttpError(405, `${request.method} is not allowed here; use GET.`, [], { allow: "GET, HEAD" }),
        2,
      );
    const body: HealthBody = { status: "ok", systemId, sha256: served.sha256, loadedAt: served.loadedAt };
    return jsonResponse(200, body, 2);
  }

  return withRequestLog(log, (request, path) =>
    path === healthPath
      ? health(request)
      : ((path.startsWith(basePath) ? docs.answer(request.method, path.slice(basePath.length)) : null) ??
        handler(request)),
  );
}

/** What a reload builds from the file read: the snapshot, its position patches, its slices. */
type NextSnapshot = {
  snapshot: SystemSnapshot;
  patches: readonly PositionPatch[] | null;
  slices: KnownSlices | null;
};

/** A file read for a reload: its hash and how to build the snapshot, or why it cannot be used. */
type ReloadRead =
  | { readonly ok: true; readonly sha256: string; readonly next: () => Promise<NextSnapshot> }
  | { readonly ok: false; readonly issues: readonly Issue[] };

/** What a reload reads and swaps, shared by the reloads of one server. */
interface ReloadContext {
  readonly file: string;
  readonly workerFile: string | null;
  readonly served: Served;
  readonly systemId: string;
  readonly log: (line: string) => void;
  /** Aborted by close(): a read in the worker stops. */
  readonly stop: AbortController;
  /** The stat key of the file when last looked at (watch events only). */
  lastSeen: string;
  /** Whether the last reload was refused (a fix back to the served file is then logged). */
  refusedLast: boolean;
  /** Set by close(): a reload in progress swaps nothing in. */
  closed: boolean;
}

/**
 * Reads the file for a reload, and the snapshot the returned patches apply to (null: none).
 *
 * Off the request path: with the worker, reading, parsing and validating (most of the time of a
 * reload, and all of it for a broken or unchanged file) run on another thread; this thread then
 * parses the slices that changed since the snapshot it serves (the worker leaves out the ones
 * whose hash it was given), a slice at a time with a yield after each, and moves the engine by
 * Engine.update over the changed slices only: a typical edit costs this thread a few slices.
 * A change outside the arrays (the system zone), or a first reload without known slices,
 * compiles the whole snapshot here. Without the worker (running from source), all of it runs here.
 */
async function readForReload(ctx: ReloadContext): Promise<{ read: ReloadRead; prevOf: SystemSnapshot | null }> {
  const { file, workerFile, served } = ctx;
  if (workerFile === null) {
    const r = await readSnapshotFile(file);
    return {
      read: r.ok
        ? { ok: true, sha256: r.sha256, next: async () => ({ snapshot: r.snapshot, patches: null, slices: null }) }
        : r,
      prevOf: null,
    };
  }
  const prevSlices = served.engine.snapshot === served.lastSnapshotOfSlices ? served.lastSlices : null;
  const prev = served.engine.snapshot;
  const prevOf = prevSlices !== null ? prev : null;
  const r = await readSnapshotFileInWorker(file, workerFile, ctx.stop.signal, prevSlices?.hashes);
  const read: ReloadRead = r.ok
    ? {
        ok: true,
        sha256: r.sha256,
        next: async () =>
          prevSlices === null
            ? {
                snapshot: await parseSnapshotSlices(r.slices),
                patches: null,
                slices: { rest: r.slices.rest, hashes: r.slices.hashes },
              }
            : {
                ...(await parseSnapshotSlicesAgainst(r.slices, prevSlices.rest, prev)),
                slices: { rest: r.slices.rest, hashes: r.slices.hashes },
              },
      }
    : r;
  return { read, prevOf };
}

/** Reads the file again and swaps the engine in if it is valid and differs. */
async function reloadNow(ctx: ReloadContext, fromWatch: boolean): Promise<ReloadResult> {
  const { file, served, systemId, log } = ctx;
  if (fromWatch) {
    // Events for a file that did not change (touch on the directory, a rename of another name)
    // cost one stat; a broken file is reported once, not once per unrelated event.
    const key = await stat(file).then(statKey, () => "missing");
    if (key === ctx.lastSeen) return { status: "unchanged" };
    ctx.lastSeen = key;
  }
  const { read, prevOf } = await readForReload(ctx);
  if (ctx.closed) return { status: "unchanged" };
  if (!read.ok) return refuseReload(ctx, read.issues);
  if (read.sha256 === served.sha256) {
    if (ctx.refusedLast) log(`${file} is back to the snapshot being served`);
    ctx.refusedLast = false;
    return { status: "unchanged" };
  }
  const { snapshot, patches, slices } = await read.next();
  if (ctx.closed) return { status: "unchanged" };
  if (snapshot.systemId !== systemId) {
    const issues: Issue[] = [
      {
        code: "systemChanged",
        path: ["systemId"],
        message: `Is "${snapshot.systemId}"; this server serves "${systemId}": restart it to serve another system.`,
      },
    ];
    return refuseReload(ctx, issues);
  }
  await yieldToEventLoop();
  if (ctx.closed) return { status: "unchanged" };
  // Unchanged slices kept their objects, so the engine recompiles only the entities of the slices
  // that changed (or, for a change it compiles globally, everything: see Engine.update).
  let engine: Engine;
  if (patches !== null && served.engine.snapshot === prevOf) {
    try {
      engine = served.engine.update(snapshot, patches);
    } catch (e) {
      log(`incremental reload failed (${(e as Error)?.message ?? String(e)}); compiling the whole snapshot`);
      engine = new Engine(snapshot);
    }
  } else engine = new Engine(snapshot);
  served.engine = engine; // the swap: one assignment (or the update in place, one synchronous call)
  served.lastSlices = slices;
  served.lastSnapshotOfSlices = slices === null ? null : engine.snapshot;
  served.sha256 = read.sha256;
  served.loadedAt = new Date().toISOString();
  ctx.refusedLast = false;
  log(
    `reloaded ${file}: system ${snapshot.systemId}, ${snapshot.holders.length} holders, ${snapshot.devices.length} devices, ${snapshot.rules.length} rules`,
  );
  return { status: "reloaded", engine };
}

/** Logs why a reload was refused (the previous snapshot stays served). */
function refuseReload(ctx: ReloadContext, issues: readonly Issue[]): ReloadResult {
  ctx.refusedLast = true;
  ctx.log(
    `reload refused: ${ctx.file} has ${issues.length} problem${issues.length === 1 ? "" : "s"}; still serving the previous snapshot`,
  );
  for (const i of issues) ctx.log(`  ${formatPath(i.path)}: ${i.message}`);
  return { status: "refused", issues };
}

/** Runs reloads one after another, so an older read can never overwrite a newer one. */
function reloadQueue(ctx: ReloadContext): (fromWatch: boolean) => Promise<ReloadResult> {
  let queue: Promise<unknown> = Promise.resolve();
  return (fromWatch) => {
    const next = queue.then(() => reloadNow(ctx, fromWatch));
    queue = next.catch(() => undefined);
    return next;
  };
}

/** Watches the file and queues a reload after each quiet change; undefined when it cannot be watched. */
async function watchForReloads(
  ctx: ReloadContext,
  debounceMs: number,
  enqueue: (fromWatch: boolean) => Promise<ReloadResult>,
): Promise<SnapshotWatch | undefined> {
  const { file, log } = ctx;
  ctx.lastSeen = await stat(file).then(statKey, () => "missing");
  try {
    return watchSnapshotFile(
      file,
      debounceMs,
      () => {
        enqueue(true).catch((e: unknown) => log(`reload failed: ${(e as Error)?.message ?? String(e)}`));
      },
      (e) => log(`watching ${file} failed: ${e.message}; changes are no longer picked up until a restart`),
    );
  } catch (e) {
    // E.g. the inotify watch limit (ENOSPC): serving matters more than reloading.
    log(
      `cannot watch ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}; changes are not picked up until a restart`,
    );
    return undefined;
  }
}

/**
 * Starts the HTTP server on a snapshot file.
 * @throws SnapshotError when the file cannot be used (every problem listed), Error when no
 *   authentication was chosen or the port cannot be opened.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const file = options.systemFile;
  const log = options.log ?? streamLog(process.stderr);
  // Every option is checked before the file is read: a bad value loads nothing.
  const connections = connectionSettings("startServer", options);
  const workerFile = options.reloadWorker === false ? null : (options.reloadWorker ?? defaultWorkerFile());
  const auth = serverAuthOf(options);
  const served = await loadFirstSnapshot(file, workerFile);
  const systemId = served.engine.snapshot.systemId;
  const fetch = await buildServerFetch(options, auth, served, systemId, log);
  const server = await listenOn(fetch, options, connections);
  guardConnections(server, connections, log);
  const url = serverUrl(server);

  const ctx: ReloadContext = {
    file,
    workerFile,
    served,
    systemId,
    log,
    stop: new AbortController(),
    lastSeen: "",
    refusedLast: false,
    closed: false,
  };
  const enqueue = reloadQueue(ctx);
  const watcher = options.watch !== false ? await watchForReloads(ctx, options.debounceMs ?? 200, enqueue) : undefined;

  log(`serving system ${systemId} from ${file} on ${url}`);

  let closing: Promise<void> | undefined;
  return {
    url,
    engine: () => served.engine,
    reload: () => enqueue(false),
    close() {
      // Reloads stop before the server does, so none swaps an engine in while requests drain.
      closing ??= (async () => {
        ctx.closed = true;
        watcher?.close();
        ctx.stop.abort();
        await closeGracefully(server, options.closeGraceMs ?? 5000);
      })();
      return closing;
    },
  };
}
