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
import { Engine } from "../../evaluate/index.js";
import { type Issue, SnapshotError, type SystemSnapshot, formatPath } from "../../model/index.js";
import { type HttpHandlerOptions, createHttpHandler } from "./createHttpHandler.js";
import { type ConnectionOptions, connectionSettings, guardConnections, serverOptionsOf } from "./connectionGuard.js";
import { HttpError, errorResponse, jsonResponse } from "../../service/httpError.js";
import { normalizeBasePath } from "./matchRoute.js";
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
 * A log that writes `<ISO time> <line>` lines to a stream and never throws or crashes the process
 * when the stream's reader is gone (EPIPE on a closed stderr): from the first write error on, lines
 * are dropped. Serving matters more than logging.
 */
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

export function streamLog(stream: NodeJS.WritableStream): (line: string) => void {
  let broken = false;
  stream.on("error", () => {
    broken = true;
  });
  return (line) => {
    if (broken) return;
    try {
      stream.write(`${new Date().toISOString()} ${line}\n`);
    } catch {
      broken = true;
    }
  };
}

function hostForUrl(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}

function statKey(s: { dev: number; ino: number; size: number; mtimeMs: number }): string {
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
}

/**
 * Starts the HTTP server on a snapshot file.
 * @throws SnapshotError when the file cannot be used (every problem listed), Error when no
 *   authentication was chosen or the port cannot be opened.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const file = options.systemFile;
  const log = options.log ?? streamLog(process.stderr);
  const connections = connectionSettings("startServer", options);
  const workerFile = options.reloadWorker === false ? null : (options.reloadWorker ?? defaultWorkerFile());
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

  // With the worker, the first load goes through it too, so that the JSON slices of the snapshot
  // being served are known and a reload can recompile only the slices that changed.
  let lastSlices: { rest: string; hashes: SliceHashes } | null = null;
  let first: LoadedSnapshot;
  if (workerFile !== null) {
    const r = await readSnapshotFileInWorker(file, workerFile);
    if (r.ok) lastSlices = { rest: r.slices.rest, hashes: r.slices.hashes };
    first = r.ok ? { ok: true, engine: new Engine(await parseSnapshotSlices(r.slices)), sha256: r.sha256 } : r;
  } else first = await loadSnapshotFile(file);
  if (!first.ok) throw new SnapshotError(first.issues, `snapshot file "${file}"`);
  let current = first.engine;
  /** The snapshot `lastSlices` describe: slices are reused only against that very snapshot. */
  let lastSnapshotOfSlices: SystemSnapshot | null = lastSlices === null ? null : current.snapshot;
  let currentSha = first.sha256;
  let loadedAt = new Date().toISOString();
  const systemId = current.snapshot.systemId;

  const handler = createHttpHandler({
    getEngine: () => current,
    ...(grants !== undefined ? { grants } : authorize !== undefined ? { authorize } : {}),
    insecureNoAuth: options.insecureNoAuth === true,
    ...(options.basePath !== undefined ? { basePath: options.basePath } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(options.maxIds !== undefined ? { maxIds: options.maxIds } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    onError: (e, request) =>
      log(`internal error on ${request.method} ${new URL(request.url).pathname}: ${(e as Error)?.stack ?? String(e)}`),
  });

  const healthPath = `${normalizeBasePath(options.basePath ?? "")}/healthz`;
  function health(request: Request): Response {
    if (request.method !== "GET" && request.method !== "HEAD")
      return errorResponse(
        new HttpError(405, `${request.method} is not allowed here; use GET.`, [], { allow: "GET, HEAD" }),
        2,
      );
    const body: HealthBody = { status: "ok", systemId, sha256: currentSha, loadedAt };
    return jsonResponse(200, body, 2);
  }

  // One line per request: method, path (never the query: it may name people), status, duration; or
  // that the client went away before the answer (an abort is not an error of the server).
  const fetch = async (request: Request): Promise<Response> => {
    const t0 = performance.now();
    const path = new URL(request.url).pathname;
    const response = path === healthPath ? health(request) : await handler(request);
    const ms = (performance.now() - t0).toFixed(1);
    log(
      request.signal.aborted
        ? `${request.method} ${path} aborted (connection closed before the answer) after ${ms}ms`
        : `${request.method} ${path} ${response.status} ${ms}ms`,
    );
    return response;
  };

  // Loaded on first use, so the other CLI commands work even where the server's dependencies
  // (@hono/node-server and its peer hono) are missing.
  const { serve } = await import("@hono/node-server");
  const server = await new Promise<Server>((resolvePromise, reject) => {
    const serverOptions = serverOptionsOf(connections);
    const s = serve(
      {
        fetch,
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
  guardConnections(server, connections, log);
  const address = server.address() as AddressInfo;
  const url = `http://${hostForUrl(address.address)}:${address.port}`;

  let lastSeen = "";
  const stopReloads = new AbortController();
  let refusedLast = false;
  let closed = false;

  async function reloadNow(fromWatch: boolean): Promise<ReloadResult> {
    if (fromWatch) {
      // Events for a file that did not change (touch on the directory, a rename of another name)
      // cost one stat; a broken file is reported once, not once per unrelated event.
      const key = await stat(file).then(statKey, () => "missing");
      if (key === lastSeen) return { status: "unchanged" };
      lastSeen = key;
    }
    // Off the request path: with the worker, reading, parsing and validating (most of the time of a
    // reload, and all of it for a broken or unchanged file) run on another thread; this thread then
    // parses the slices that changed since the snapshot it serves (the worker leaves out the ones
    // whose hash it was given), a slice at a time with a yield after each, and moves the engine by
    // Engine.update over the changed slices only: a typical edit costs this thread a few slices.
    // A change outside the arrays (the system zone), or a first reload without known slices,
    // compiles the whole snapshot here. Without the worker (running from source), all of it runs here.
    let prevOf: SystemSnapshot | null = null;
    type Next = {
      snapshot: SystemSnapshot;
      patches: readonly PositionPatch[] | null;
      slices: { rest: string; hashes: SliceHashes } | null;
    };
    let read:
      | { readonly ok: true; readonly sha256: string; readonly next: () => Promise<Next> }
      | { readonly ok: false; readonly issues: readonly Issue[] };
    if (workerFile !== null) {
      const prevSlices = current.snapshot === lastSnapshotOfSlices ? lastSlices : null;
      const prev = current.snapshot;
      if (prevSlices !== null) prevOf = prev;
      const r = await readSnapshotFileInWorker(file, workerFile, stopReloads.signal, prevSlices?.hashes);
      read = r.ok
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
    } else {
      const r = await readSnapshotFile(file);
      read = r.ok
        ? { ok: true, sha256: r.sha256, next: async () => ({ snapshot: r.snapshot, patches: null, slices: null }) }
        : r;
    }
    if (closed) return { status: "unchanged" };
    if (!read.ok) return refuse(read.issues);
    if (read.sha256 === currentSha) {
      if (refusedLast) log(`${file} is back to the snapshot being served`);
      refusedLast = false;
      return { status: "unchanged" };
    }
    const { snapshot, patches, slices } = await read.next();
    if (closed) return { status: "unchanged" };
    if (snapshot.systemId !== systemId) {
      const issues: Issue[] = [
        {
          code: "systemChanged",
          path: ["systemId"],
          message: `Is "${snapshot.systemId}"; this server serves "${systemId}": restart it to serve another system.`,
        },
      ];
      return refuse(issues);
    }
    await yieldToEventLoop();
    if (closed) return { status: "unchanged" };
    // Unchanged slices kept their objects, so the engine recompiles only the entities of the slices
    // that changed (or, for a change it compiles globally, everything: see Engine.update).
    let engine: Engine;
    if (patches !== null && current.snapshot === prevOf) {
      try {
        engine = current.update(snapshot, patches);
      } catch (e) {
        log(`incremental reload failed (${(e as Error)?.message ?? String(e)}); compiling the whole snapshot`);
        engine = new Engine(snapshot);
      }
    } else engine = new Engine(snapshot);
    current = engine; // the swap: one assignment (or the update in place, one synchronous call)
    lastSlices = slices;
    lastSnapshotOfSlices = slices === null ? null : engine.snapshot;
    currentSha = read.sha256;
    loadedAt = new Date().toISOString();
    refusedLast = false;
    log(
      `reloaded ${file}: system ${snapshot.systemId}, ${snapshot.holders.length} holders, ${snapshot.devices.length} devices, ${snapshot.rules.length} rules`,
    );
    return { status: "reloaded", engine };
  }

  function refuse(issues: readonly Issue[]): ReloadResult {
    refusedLast = true;
    log(
      `reload refused: ${file} has ${issues.length} problem${issues.length === 1 ? "" : "s"}; still serving the previous snapshot`,
    );
    for (const i of issues) log(`  ${formatPath(i.path)}: ${i.message}`);
    return { status: "refused", issues };
  }

  // Reloads run one after another, so an older read can never overwrite a newer one.
  let queue: Promise<unknown> = Promise.resolve();
  function enqueue(fromWatch: boolean): Promise<ReloadResult> {
    const next = queue.then(() => reloadNow(fromWatch));
    queue = next.catch(() => undefined);
    return next;
  }

  let watcher: SnapshotWatch | undefined;
  if (options.watch !== false) {
    lastSeen = await stat(file).then(statKey, () => "missing");
    try {
      watcher = watchSnapshotFile(
        file,
        options.debounceMs ?? 200,
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
    }
  }

  log(`serving system ${systemId} from ${file} on ${url}`);

  let closing: Promise<void> | undefined;
  return {
    url,
    engine: () => current,
    reload: () => enqueue(false),
    close() {
      closing ??= (async () => {
        closed = true;
        watcher?.close();
        stopReloads.abort();
        await closeGracefully(server, options.closeGraceMs ?? 5000);
      })();
      return closing;
    },
  };
}
