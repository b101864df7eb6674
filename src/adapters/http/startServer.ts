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
import type { Engine } from "../../evaluate/index.js";
import { type Issue, SnapshotError, formatPath } from "../../model/index.js";
import { type HttpHandlerOptions, createHttpHandler } from "./createHttpHandler.js";
import { loadSnapshotFile } from "./loadSnapshotFile.js";
import { tokenAuthorizer } from "./tokenAuthorizer.js";
import { type SnapshotWatch, watchSnapshotFile } from "./watchSnapshotFile.js";

/** Options of startServer. Exactly one of `token`, `authorize` and `insecureNoAuth` is required. */
export interface StartServerOptions {
  /** The rsop-system/1 snapshot file to serve (and watch). */
  readonly systemFile: string;
  /** TCP port; default 0 (any free port: read it from `url`). */
  readonly port?: number;
  /** Address to listen on; default `127.0.0.1` (this machine only). */
  readonly host?: string;
  /** The one bearer token clients must send (compared in constant time). */
  readonly token?: string;
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

function defaultLog(line: string): void {
  process.stderr.write(`${line}\n`);
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
  const log = options.log ?? defaultLog;
  const chosen = [options.token !== undefined, options.authorize !== undefined, options.insecureNoAuth === true].filter(Boolean).length;
  if (chosen === 0) throw new Error("refusing to start without authentication: give a token (or an authorize function), or insecureNoAuth");
  if (chosen > 1) throw new Error("give only one of token, authorize and insecureNoAuth");
  const authorize = options.token !== undefined ? tokenAuthorizer(options.token) : options.authorize;

  const first = await loadSnapshotFile(file);
  if (!first.ok) throw new SnapshotError(first.issues, `snapshot file "${file}"`);
  let current = first.engine;
  let currentSha = first.sha256;
  const systemId = current.snapshot.systemId;

  const handler = createHttpHandler({
    getEngine: () => current,
    ...(authorize !== undefined ? { authorize } : {}),
    insecureNoAuth: options.insecureNoAuth === true,
    ...(options.basePath !== undefined ? { basePath: options.basePath } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(options.maxIds !== undefined ? { maxIds: options.maxIds } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    onError: (e, request) => log(`internal error on ${request.method} ${new URL(request.url).pathname}: ${(e as Error)?.stack ?? String(e)}`),
  });

  // One line per request: method, path (never the query: it may name people), status, duration.
  const fetch = async (request: Request): Promise<Response> => {
    const t0 = performance.now();
    const response = await handler(request);
    log(`${request.method} ${new URL(request.url).pathname} ${response.status} ${(performance.now() - t0).toFixed(1)}ms`);
    return response;
  };

  // Loaded on first use, so the other CLI commands work even where the server's dependencies
  // (@hono/node-server and its peer hono) are missing.
  const { serve } = await import("@hono/node-server");
  const server = await new Promise<Server>((resolvePromise, reject) => {
    const s = serve({ fetch, port: options.port ?? 0, hostname: options.host ?? "127.0.0.1", overrideGlobalObjects: false }, () => {
      s.off("error", reject);
      resolvePromise(s as Server);
    });
    s.once("error", reject);
  });
  const address = server.address() as AddressInfo;
  const url = `http://${hostForUrl(address.address)}:${address.port}`;

  let lastSeen = "";
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
    const loaded = await loadSnapshotFile(file);
    if (closed) return { status: "unchanged" };
    if (loaded.ok && loaded.engine.snapshot.systemId !== systemId) {
      const issues: Issue[] = [
        { code: "systemChanged", path: ["systemId"], message: `Is "${loaded.engine.snapshot.systemId}"; this server serves "${systemId}": restart it to serve another system.` },
      ];
      return refuse(issues);
    }
    if (!loaded.ok) return refuse(loaded.issues);
    if (loaded.sha256 === currentSha) {
      if (refusedLast) log(`${file} is back to the snapshot being served`);
      refusedLast = false;
      return { status: "unchanged" };
    }
    current = loaded.engine; // the swap: one assignment
    currentSha = loaded.sha256;
    refusedLast = false;
    const s = loaded.engine.snapshot;
    log(`reloaded ${file}: system ${s.systemId}, ${s.holders.length} holders, ${s.devices.length} devices, ${s.rules.length} rules`);
    return { status: "reloaded", engine: loaded.engine };
  }

  function refuse(issues: readonly Issue[]): ReloadResult {
    refusedLast = true;
    log(`reload refused: ${file} has ${issues.length} problem${issues.length === 1 ? "" : "s"}; still serving the previous snapshot`);
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
      log(`cannot watch ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}; changes are not picked up until a restart`);
    }
  }

  log(`serving system ${systemId} from ${file} on ${url}`);

  let closing: Promise<void> | undefined;
  return {
    url,
    engine: () => current,
    reload: () => enqueue(false),
    close() {
      closing ??= new Promise<void>((resolveClose) => {
        closed = true;
        watcher?.close();
        const force = setTimeout(() => server.closeAllConnections(), options.closeGraceMs ?? 5000);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolveClose();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
