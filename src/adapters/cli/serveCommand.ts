// `rsop serve`: the HTTP API on a snapshot file, reloaded when the file changes, until SIGINT/SIGTERM.
import type { Command } from "commander";
import { isBearerToken } from "../../service/auth/bearerToken.js";
import { type RunningServer, startServer, streamLog } from "../http/startServer.js";
import { type RunningDataServer, type StartDataServerOptions, startDataServer } from "../http/startDataServer.js";
import { StoreError } from "../../service/store/store.js";
import { ROLES, type TokenEntry, TokensFileError, readTokensFile } from "../../service/auth/tokens.js";
import { SnapshotError } from "../../model/index.js";
import { Destinations } from "../delivery/destinations.js";
import { CliError, type CliIo, UsageError, checkReadable, errnoWords, readTextFile } from "./io.js";
import { readSnapshotInput } from "./loadSystem.js";
import { startService } from "./serveService.js";
import { parseBytes } from "../../service/tenants/memoryBudget.js";
import { type RunningServiceServer, storedMode, storedPostgresMode } from "../http/startServiceServer.js";
import { SmtpUrlError, createSmtpMailer } from "../mail/smtpMailer.js";
import type { Mailer } from "../../service/identity/mailer.js";

/** Options of `rsop serve`, as commander parses them. */
export interface ServeOptions {
  readonly system?: string;
  /** `--data FILE.db`: serve the live system kept in this SQLite database (reads and writes). */
  readonly data?: string;
  /** `--store postgres://…`: serve as one replica of the live system kept in this PostgreSQL database. */
  readonly store?: string;
  /** `--panel FILE.json` (with --data): import a 1.0 panel instead of a 2.0 system. */
  readonly panel?: string;
  readonly snapshotEvery?: string;
  readonly maxReportEntries?: string;
  readonly maxReports?: string;
  readonly maxReportBytes?: string;
  readonly maxReportGenerations?: string;
  readonly maxPreviewCost?: string;
  readonly maxPreviewChanges?: string;
  readonly maxBatch?: string;
  readonly port: string;
  readonly host: string;
  readonly token?: string;
  /** `--tokens FILE`: bearer tokens with roles and partitions (semantics H17). */
  readonly tokens?: string;
  readonly insecureNoAuth?: boolean;
  readonly basePath?: string;
  readonly maxBody?: string;
  readonly requestTimeout?: string;
  readonly headersTimeout?: string;
  readonly maxConnections?: string;
  readonly maxConnectionsPerAddress?: string;
  readonly keepAliveTimeout?: string;
  readonly allowShortToken?: boolean;
  readonly organizationId?: string;
  readonly webhookAttempts?: string;
  readonly webhookBackoff?: string;
  readonly webhookTimeout?: string;
  readonly webhookBacklog?: string;
  /** `--webhook-allow CIDR[,CIDR…]`: private or local addresses notifications may go to (HW1). */
  readonly webhookAllow?: string;
  /** `--memory-budget SIZE` (a service database): most bytes the loaded tenants may hold. */
  readonly memoryBudget?: string;
  /** `--public-url ORIGIN` (a service database): the address panels' `uri` is made from. */
  readonly publicUrl?: string;
  /** `--smtp URL` (a service database): the SMTP server of credential activation messages (I9). */
  readonly smtp?: string;
}

/** Shortest token `serve` accepts without --allow-short-token: 16 characters, guessable tokens are not secrets. */
export const MIN_TOKEN_LENGTH = 16;

/** Where the signals that stop the server come from (the process, or an emitter in tests). */
export interface SignalSource {
  once(event: "SIGINT" | "SIGTERM", listener: () => void): unknown;
  off(event: "SIGINT" | "SIGTERM", listener: () => void): unknown;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

function parsePort(v: string): number {
  const n = /^[0-9]+$/.test(v) ? Number(v) : NaN;
  if (!(n >= 0 && n <= 65_535)) throw new UsageError(`--port must be an integer from 0 to 65535, got "${v}"`);
  return n;
}

/** A positive integer option (digits only), or undefined when not given. */
function parsePositive(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = /^[0-9]{1,15}$/.test(v) ? Number(v) : NaN;
  if (!(n >= 1)) throw new UsageError(`${flag} must be a positive integer, got "${v}"`);
  return n;
}

/** `--max-body`: bytes, or with a binary unit (`512KiB`, `16MiB`, `16m`). */
function parseSize(v: string | undefined, flag = "--max-body"): number | undefined {
  if (v === undefined) return undefined;
  const n = parseBytes(v);
  if (n === null) throw new UsageError(`${flag} must be a size in bytes, e.g. 1048576 or 16MiB, got "${v}"`);
  return n;
}

/**
 * Runs the server until a signal arrives, then closes it.
 * @param onListening - told the server once it listens (tests read its url there).
 * @param onDataListening - the same, for a `--data` server.
 * @returns the exit code.
 */
export async function serveCommand(
  opts: ServeOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
  signals: SignalSource,
  onListening?: (server: RunningServer) => void,
  onDataListening?: (server: RunningDataServer) => void,
  onServiceListening?: (server: RunningServiceServer) => void,
): Promise<number> {
  // Timestamped lines; a closed stderr (the log reader gone) silences the log but never stops serving.
  const log = streamLog(io.stderr);
  // A database without a snapshot may be a service, which starts without tokens (T52): known only
  // once the flags are checked and the database is looked at.
  const candidate =
    (opts.data !== undefined || opts.store !== undefined) && opts.system === undefined && opts.panel === undefined;
  const token = checkAuthentication(opts, env, !candidate);
  const stored = checkSources(opts);
  const port = parsePort(opts.port);
  const dataLimits = parseDataLimits(opts, stored);
  const connectionLimits = parseConnectionLimits(opts);
  const webhooks = parseWebhookOptions(opts);
  const service = candidate && (await isService(opts));
  if (candidate && !service) checkAuthentication(opts, env);
  if (!service && (opts.memoryBudget !== undefined || opts.publicUrl !== undefined || opts.smtp !== undefined))
    throw new UsageError(
      "--memory-budget, --public-url and --smtp are for a service database (--data FILE.db or --store postgres://… without --system or --panel)",
    );
  if (service && opts.insecureNoAuth === true)
    throw new UsageError(
      "--insecure-no-auth serves one system; a service database needs --token, RSOP_TOKEN or --tokens FILE",
    );
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
    log(`warning: the token has only ${token.length} characters (--allow-short-token)`);
  if (opts.insecureNoAuth === true && !LOOPBACK.test(opts.host))
    log(`warning: serving without authentication on ${opts.host}, which other machines may reach`);
  const tokens = await loadTokens(opts, token, log);
  const mailer = service ? smtpMailerOf(opts.smtp) : undefined;

  const common = {
    port,
    host: opts.host,
    ...(token !== undefined ? { token } : opts.tokens !== undefined ? {} : { insecureNoAuth: true }),
    ...(tokens !== undefined ? { tokens } : {}),
    ...(opts.basePath !== undefined && opts.basePath !== "" ? { basePath: opts.basePath } : {}),
    ...connectionLimits,
    log,
  };
  const snapshotFile = opts.system ?? opts.panel;
  let server: RunningServer | RunningDataServer | RunningServiceServer;
  try {
    if (service) {
      server = await startService(
        {
          ...common,
          ...(opts.store !== undefined ? { storeUrl: opts.store } : { dataFile: opts.data! }),
          ...dataLimits,
          ...serviceOptions(opts),
          ...(mailer !== undefined ? { mailer } : {}),
          webhooks,
        },
        io,
        onServiceListening,
      );
    } else if (stored) {
      const data = await startDataServer({
        ...common,
        ...dataServerOptions(opts, snapshotFile, io),
        ...dataLimits,
        ...(opts.organizationId !== undefined ? { organizationId: opts.organizationId } : {}),
        webhooks,
      });
      server = data;
      onDataListening?.(data);
    } else {
      // A --system file that cannot be read is named with the reason in words (`rsop: FILE: no such file`).
      await checkReadable(opts.system!);
      const file = await startServer({ ...common, systemFile: opts.system! });
      server = file;
      onListening?.(file);
    }
  } catch (e) {
    await mailer?.close();
    throw startFailure(e, snapshotFile, opts.host, port);
  }

  const signal = await nextSignal(signals);
  log(`${signal}: closing (waiting for open requests)`);
  await server.close();
  await mailer?.close();
  log("closed");
  return 0;
}

/** The token from --token or RSOP_TOKEN (undefined without one), after the checks of the authentication flags. */
function checkAuthentication(
  opts: ServeOptions,
  env: Readonly<Record<string, string | undefined>>,
  required = true,
): string | undefined {
  const token =
    opts.token !== undefined && opts.token !== ""
      ? opts.token
      : env.RSOP_TOKEN !== undefined && env.RSOP_TOKEN !== ""
        ? env.RSOP_TOKEN
        : undefined;
  const insecure = opts.insecureNoAuth === true;
  if (opts.tokens !== undefined && insecure) throw new UsageError("--insecure-no-auth contradicts --tokens FILE");
  // Each is wrong on the command line (or RSOP_TOKEN, its stand-in) alone: a usage error (exit 2).
  if (required && token === undefined && !insecure && opts.tokens === undefined)
    throw new UsageError(
      "refusing to start without authentication: pass --token <token> or set RSOP_TOKEN (or give --tokens FILE; --insecure-no-auth for a local experiment)",
    );
  if (token !== undefined && insecure)
    throw new UsageError("--insecure-no-auth contradicts the token given by --token or RSOP_TOKEN");
  if (token !== undefined && !isBearerToken(token))
    throw new UsageError(
      "the token may hold only letters, digits and -._~+/ (then = padding): clients could not send it as a Bearer token",
    );
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH && opts.allowShortToken !== true)
    throw new UsageError(
      `the token has ${token.length} characters; use at least ${MIN_TOKEN_LENGTH} (e.g. openssl rand -hex 24), or pass --allow-short-token`,
    );
  return token;
}

/**
 * Whether `--data FILE.db` or `--store postgres://…` without a snapshot is a service database (new,
 * empty, or holding organizations: T52, T57).
 */
async function isService(opts: ServeOptions): Promise<boolean> {
  if (opts.system !== undefined || opts.panel !== undefined) return false;
  try {
    if (opts.store !== undefined) return (await storedPostgresMode(opts.store)) === "service";
    if (opts.data === undefined) return false;
    return (await storedMode(opts.data)) === "service";
  } catch (e) {
    if (e instanceof StoreError) throw new CliError(e.message);
    throw e;
  }
}

/** --memory-budget and --public-url: only for a service database. */
function serviceOptions(opts: ServeOptions) {
  const memoryBudgetBytes = parseSize(opts.memoryBudget, "--memory-budget");
  if (opts.publicUrl !== undefined && !/^https?:\/\/[^/]+$/.test(opts.publicUrl))
    throw new UsageError(`--public-url must be an origin such as https://access.example.com, got "${opts.publicUrl}"`);
  return {
    ...(memoryBudgetBytes !== undefined ? { memoryBudgetBytes } : {}),
    ...(opts.publicUrl !== undefined ? { publicUrl: opts.publicUrl } : {}),
  };
}

/** The mailer of `--smtp URL` (undefined without one); a malformed URL is a usage error that never quotes it (it may hold a password). */
function smtpMailerOf(url: string | undefined): Mailer | undefined {
  if (url === undefined) return undefined;
  try {
    return createSmtpMailer(url);
  } catch (e) {
    if (e instanceof SmtpUrlError) throw new UsageError(`--smtp ${e.message}`);
    throw e;
  }
}

/** Checks --system, --panel, --data and --store together; true when served from a database. */
function checkSources(opts: ServeOptions): boolean {
  if (opts.data !== undefined && opts.store !== undefined)
    throw new UsageError("give at most one of --data FILE.db and --store postgres://…");
  if (opts.store !== undefined && !/^postgres(ql)?:\/\//.test(opts.store))
    throw new UsageError("--store takes a PostgreSQL URL: postgres://user@host:5432/database");
  const stored = opts.data !== undefined || opts.store !== undefined;
  if (!stored && opts.panel !== undefined)
    throw new UsageError("--panel is served only from a database: add --data FILE.db");
  if (!stored && opts.system === undefined) throw new UsageError("give --system FILE (or --data FILE.db)");
  if (!stored && opts.snapshotEvery !== undefined) throw new UsageError("--snapshot-every needs --data FILE.db");
  if (opts.system !== undefined && opts.panel !== undefined)
    throw new UsageError("give at most one of --system FILE and --panel FILE");
  return stored;
}

/** The limits only a database-backed server has (snapshots, reports, previews, batches). */
function parseDataLimits(opts: ServeOptions, stored: boolean) {
  const snapshotEvery = parsePositive("--snapshot-every", opts.snapshotEvery);
  if (opts.data === undefined && opts.maxReportEntries !== undefined)
    throw new UsageError("--max-report-entries needs --data FILE.db");
  const maxReportEntries = parsePositive("--max-report-entries", opts.maxReportEntries);
  if (!stored && [opts.maxReports, opts.maxReportBytes, opts.maxReportGenerations].some((f) => f !== undefined))
    throw new UsageError(
      "--max-reports, --max-report-bytes and --max-report-generations need --data FILE.db or --store postgres://…",
    );
  const maxReports = parsePositive("--max-reports", opts.maxReports);
  const maxReportBytes = parseSize(opts.maxReportBytes, "--max-report-bytes");
  const maxGenerating = parsePositive("--max-report-generations", opts.maxReportGenerations);
  const reportStore = {
    ...(maxReports !== undefined ? { maxReports } : {}),
    ...(maxReportBytes !== undefined ? { maxReportBytes } : {}),
    ...(maxGenerating !== undefined ? { maxGenerating } : {}),
  };
  if (!stored && (opts.maxPreviewCost !== undefined || opts.maxPreviewChanges !== undefined))
    throw new UsageError("--max-preview-cost and --max-preview-changes need --data FILE.db or --store postgres://…");
  const maxPreviewCost = parsePositive("--max-preview-cost", opts.maxPreviewCost);
  const maxPreviewChanges = parsePositive("--max-preview-changes", opts.maxPreviewChanges);
  if (!stored && opts.maxBatch !== undefined)
    throw new UsageError("--max-batch needs --data FILE.db or --store postgres://…");
  const maxBatch = parsePositive("--max-batch", opts.maxBatch);
  return {
    ...(snapshotEvery !== undefined ? { snapshotEvery } : {}),
    ...(maxReportEntries !== undefined ? { maxReportEntries } : {}),
    reportStore,
    ...(maxPreviewCost !== undefined ? { maxPreviewCost } : {}),
    ...(maxPreviewChanges !== undefined ? { maxPreviewChanges } : {}),
    ...(maxBatch !== undefined ? { maxBatch } : {}),
  };
}

/** The bounds of bodies, timeouts and connections, for either server. */
function parseConnectionLimits(opts: ServeOptions) {
  const maxBodyBytes = parseSize(opts.maxBody);
  const requestTimeoutMs = parsePositive("--request-timeout", opts.requestTimeout);
  const headersTimeoutMs = parsePositive("--headers-timeout", opts.headersTimeout);
  const maxConnections = parsePositive("--max-connections", opts.maxConnections);
  const maxConnectionsPerAddress = parsePositive("--max-connections-per-address", opts.maxConnectionsPerAddress);
  const keepAliveTimeoutMs = parsePositive("--keep-alive-timeout", opts.keepAliveTimeout);
  return {
    ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}),
    ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
    ...(headersTimeoutMs !== undefined ? { headersTimeoutMs } : {}),
    ...(maxConnections !== undefined ? { maxConnections } : {}),
    ...(maxConnectionsPerAddress !== undefined ? { maxConnectionsPerAddress } : {}),
    ...(keepAliveTimeoutMs !== undefined ? { keepAliveTimeoutMs } : {}),
  };
}

/** --organization-id and --webhook-*: only with a database. */
function parseWebhookOptions(opts: ServeOptions) {
  const webhookFlags = [
    opts.organizationId,
    opts.webhookAttempts,
    opts.webhookBackoff,
    opts.webhookTimeout,
    opts.webhookBacklog,
    opts.webhookAllow,
  ];
  if (opts.data === undefined && opts.store === undefined && webhookFlags.some((f) => f !== undefined))
    throw new UsageError("--organization-id and --webhook-* need --data FILE.db or --store postgres://…");
  if (opts.organizationId === "") throw new UsageError("--organization-id must not be empty");
  const attempts = parsePositive("--webhook-attempts", opts.webhookAttempts);
  const backoffMs = parsePositive("--webhook-backoff", opts.webhookBackoff);
  const timeoutMs = parsePositive("--webhook-timeout", opts.webhookTimeout);
  const maxPendingAccess = parsePositive("--webhook-backlog", opts.webhookBacklog);
  const allowed = opts.webhookAllow === undefined ? undefined : Destinations.parseList(opts.webhookAllow);
  if (allowed !== undefined && !allowed.ok) throw new UsageError(`--webhook-allow: ${allowed.message}`);
  return {
    ...(allowed?.ok === true ? { allow: allowed.cidrs } : {}),
    ...(attempts !== undefined ? { attempts } : {}),
    ...(backoffMs !== undefined ? { backoffMs } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(maxPendingAccess !== undefined ? { maxPendingAccess } : {}),
  };
}

/** Reads --tokens FILE (undefined without one) and logs how many tokens of each role it holds. */
async function loadTokens(
  opts: ServeOptions,
  token: string | undefined,
  log: (line: string) => void,
): Promise<{ file: string; entries: TokenEntry[] } | undefined> {
  if (opts.tokens === undefined) return undefined;
  let tokens: { file: string; entries: TokenEntry[] };
  // A file that cannot be read is named with the reason in words (`rsop: FILE: no such file`), before
  // the tokens file's own checks, which say only that it cannot be read.
  await readTextFile(opts.tokens);
  try {
    tokens = { file: opts.tokens, entries: await readTokensFile(opts.tokens) };
  } catch (e) {
    if (e instanceof TokensFileError) throw new CliError(tokensFileMessage(e));
    throw e;
  }
  const counts = ROLES.map((r) => [r, tokens.entries.filter((x) => x.grant.role === r).length] as const).filter(
    ([, n]) => n > 0,
  );
  log(
    `tokens: ${tokens.entries.length} from ${opts.tokens} (${counts.map(([r, n]) => `${n} ${r}`).join(", ")})${token !== undefined ? ", and RSOP_TOKEN or --token as an admin's" : ""}`,
  );
  return tokens;
}

/** Where a database-backed server keeps its system, what it imports first, and the migration pace. */
function dataServerOptions(opts: ServeOptions, snapshotFile: string | undefined, io: CliIo) {
  const kind = opts.panel !== undefined ? "panel" : "system";
  const initial: StartDataServerOptions["initial"] =
    snapshotFile === undefined
      ? undefined
      : { kind, file: snapshotFile, read: () => readSnapshotInput(snapshotFile, kind, io) };
  // RSOP_MIGRATION_TASK_DELAY_MS: each migration task waits this long once Processing, to watch a
  // migration step by step (a demonstration and the restart test's knob, semantics M11).
  const delay = Number(process.env.RSOP_MIGRATION_TASK_DELAY_MS ?? "0");
  const migrationPace =
    Number.isFinite(delay) && delay > 0
      ? () => new Promise<void>((resolveDelay) => setTimeout(resolveDelay, Math.min(delay, 600_000)))
      : undefined;
  return {
    ...(opts.store !== undefined ? { storeUrl: opts.store } : { dataFile: opts.data! }),
    ...(initial !== undefined ? { initial } : {}),
    ...(migrationPace !== undefined ? { migrationPace } : {}),
  };
}

/** What a failure to start becomes: a CliError with a readable message, or the error itself (a bug). */
function startFailure(e: unknown, snapshotFile: string | undefined, host: string, port: number): unknown {
  if (e instanceof SnapshotError)
    return new CliError(`${snapshotFile}: ${e.issues.length} problem${e.issues.length === 1 ? "" : "s"}`, e.issues);
  if (e instanceof StoreError) return new CliError(e.message);
  if (e instanceof TokensFileError) return new CliError(tokensFileMessage(e));
  const err = e as NodeJS.ErrnoException;
  if (err.syscall === "listen") return new CliError(`cannot listen on ${host}:${port}: ${listenWords(err)}`);
  if (err.code === "ERR_MODULE_NOT_FOUND")
    return new CliError(`rsop serve needs the packages @hono/node-server and hono: ${err.message}`);
  return e;
}

/** Why a server could not listen, in words (CE2), with what to do about it. */
function listenWords(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case "EADDRINUSE":
      return "the address is already in use (another process listens there: stop it or choose another --port)";
    case "EACCES":
      return "permission denied (ports below 1024 need privileges: choose a --port from 1024 up)";
    case "EADDRNOTAVAIL":
      return "this machine has no such address (--host names one of its own interfaces, or 0.0.0.0)";
    default:
      return errnoWords(err);
  }
}

/** The first SIGINT or SIGTERM. After it the default handlers are back: a second Ctrl-C ends the process at once. */
function nextSignal(signals: SignalSource): Promise<string> {
  return new Promise<string>((resolve) => {
    const onInt = () => stop("SIGINT");
    const onTerm = () => stop("SIGTERM");
    const stop = (name: string) => {
      signals.off("SIGINT", onInt);
      signals.off("SIGTERM", onTerm);
      resolve(name);
    };
    signals.once("SIGINT", onInt);
    signals.once("SIGTERM", onTerm);
  });
}

/** `FILE: N problems` and a line per problem (`  #2.role: …`); an entry is named by its place, never by its token. */
function tokensFileMessage(e: TokensFileError): string {
  return [e.message, ...e.issues.map((i) => `  ${i.path === "" ? "(the file)" : i.path}: ${i.message}`)].join("\n");
}

/** Registers `rsop serve`. */
export function registerServeCommand(program: Command, io: CliIo, setCode: (c: number) => void): void {
  const command = program
    .command("serve")
    .description(
      "Serve the HTTP API (RSOP, decisions, who can access) on a snapshot file; the file is watched and a valid new version is swapped in atomically. With --data, serve every route (reads and writes) of a live system kept in a SQLite database, or, without --system/--panel on a new database, the whole service (organizations, their systems and panels); with --store, the same as one of any number of replicas of a system kept in PostgreSQL. Stops on SIGINT/SIGTERM.",
    )
    .option("--system <file>", "rsop-system/1 snapshot (JSON); with --data or --store, imported into an empty database")
    .option(
      "--data <file.db>",
      "serve this SQLite database (needs better-sqlite3; created on first start): with --system/--panel, or when it holds one, that one live system; otherwise (new, empty, or holding organizations) the service of every organization, system and panel kept there",
    )
    .option(
      "--store <url>",
      "serve as one replica of what this PostgreSQL database keeps (postgres://…; needs pg): with --system/--panel, or when it holds one without organizations, that one live system; otherwise the whole service; any number of replicas may share it",
    )
    .option(
      "--panel <file>",
      "with --data: import this rsop-panel/1 1.0 panel into an empty database and serve its /api routes",
    )
    .option(
      "--snapshot-every <n>",
      "with --data or --store: store a snapshot every n changes (start-up replays the changes after the latest); default 1000",
    )
    .option(
      "--max-report-entries <n>",
      "with --data: a generated report keeps at most n records, then ends finishedTruncated; default 1000000",
    )
    .option(
      "--max-preview-cost <n>",
      "with --data or --store: most holder × door-or-floor-group pairs × days one POST /{system}/preview may evaluate, else 422; default 100000",
    )
    .option(
      "--max-preview-changes <n>",
      "with --data or --store: most changed pairs one preview answers, else 422; default 10000",
    )
    .option(
      "--max-batch <n>",
      "with --data or --store: most access requests in one POST /{system}/decisions batch, else 413; default 10000 per started MiB of --max-body",
    )
    .option(
      "--max-reports <n>",
      "with --data or --store: most reports stored at once; a new one removes the oldest finished first (409 when all are pending); default 100",
    )
    .option(
      "--max-report-bytes <size>",
      "with --data or --store: most bytes of report records stored at once, bytes or with a unit (256MiB); a finishing report removes the oldest finished first, one alone over it is truncated; default 256MiB",
    )
    .option(
      "--max-report-generations <n>",
      "with --data or --store: most reports being generated at once; another generate is answered 429; default 2",
    )
    .option(
      "--memory-budget <size>",
      "a service database (--data or --store without --system/--panel): most bytes of loaded systems and panels, bytes or with a unit (512MiB); the least recently used are unloaded beyond it; default half the heap limit",
    )
    .option(
      "--public-url <origin>",
      "a service database: the address a panel's uri is made from (https://access.example.com); default the request's origin",
    )
    .option(
      "--smtp <url>",
      "a service database: the SMTP server of credential activation messages, smtp://user:password@host:587 (STARTTLS when offered) or smtps://…:465, with ?from=ADDRESS (default rsop@<hostname>) and ?tls=off (no STARTTLS) or ?tls=require; without it, sendEmail is refused (503)",
    );
  addConnectionOptions(command).action(async (opts: ServeOptions) => {
    setCode(await serveCommand(opts, io, process.env, process));
  });
}

/** The options of `rsop serve` about listening, authentication, connections and webhooks. */
function addConnectionOptions(command: Command): Command {
  return command
    .option("--port <n>", "TCP port (0: any free port)", "8080")
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option(
      "--token <token>",
      "bearer token clients must send (default: $RSOP_TOKEN; prefer the variable, a command line is visible to other users)",
    )
    .option(
      "--tokens <file>",
      'JSON object mapping each bearer token to {"role": "admin"|"integrator"|"manager"|"reporter", "partitions": [ids]} (RSOP_TOKEN stays an admin token)',
    )
    .option("--insecure-no-auth", "serve without authentication (local experiments only)")
    .option("--base-path <path>", "prefix of every route, e.g. /v2")
    .option("--max-body <size>", "largest request body, bytes or with a unit (16MiB); default 1MiB")
    .option(
      "--request-timeout <ms>",
      "time a client has to send a whole request, else 408 and the connection is closed; default 30000",
    )
    .option(
      "--headers-timeout <ms>",
      "time a client has to send the request headers (a connection that sends none is closed); default 10000",
    )
    .option("--keep-alive-timeout <ms>", "time an idle connection stays open after an answer; default 5000")
    .option(
      "--max-connections <n>",
      "most connections open at once; over it, the oldest idle one is closed (503 when all are busy); default 1000",
    )
    .option(
      "--max-connections-per-address <n>",
      "most connections open at once from one client address (IPv6: one /64); behind a reverse proxy raise it to --max-connections; default 100",
    )
    .option("--allow-short-token", `accept a token shorter than ${MIN_TOKEN_LENGTH} characters (with a warning)`)
    .option(
      "--organization-id <id>",
      "with --data or --store: the organization id of the webhook subscription routes; default the system id (1.0: the panel's serial number)",
    )
    .option(
      "--webhook-attempts <n>",
      "with --data or --store: attempts per webhook event before it is parked; default 8",
    )
    .option(
      "--webhook-backoff <ms>",
      "with --data or --store: delay after a failed webhook attempt, doubled after each further one (with jitter, at most 5 minutes); default 1000",
    )
    .option("--webhook-timeout <ms>", "with --data or --store: time limit of one webhook attempt; default 10000")
    .option(
      "--webhook-backlog <n>",
      "with --data or --store: most access events waiting per subscription; the oldest beyond it are parked; default 10000",
    )
    .option(
      "--webhook-allow <cidrs>",
      "with --data or --store: comma-separated CIDRs (or addresses) of loopback, link-local or private networks webhooks may be sent to; default none: such addresses are refused",
    );
}
