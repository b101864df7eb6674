// The server of `rsop serve --data FILE.db` (or `--store postgres://…`) as a service (semantics
// T50–T69): every organization, system and panel of one database, in one process, on one port. On
// PostgreSQL any number of such processes serve the same database, each every tenant (T54): a tenant
// is loaded as a replica following the shared log, and the registry follows the other processes'
// commits (T56). The registry (organizations, tenants, panel tokens) is read whole at start; a
// tenant's live system is loaded on its first request and evicted under the memory budget
// (tenants/tenantHost.ts). Closing stops accepting connections, lets open requests finish, stops the
// webhooks and closes every loaded tenant (each stores a snapshot of what changed since its last)
// and the database.
import type { Server } from "node:http";
import type { Hono } from "hono";
import type { Grant } from "../../service/auth/grant.js";
import { ADMIN, type TokenEntry, grantLookup } from "../../service/auth/tokens.js";
import { grantAt, reaches } from "../../service/auth/grant.js";
import { registryScopes } from "../../service/webhooks/registryScopes.js";
import { type SystemSummary, sameSummary } from "../../service/tenants/tenantSummary.js";
import { HttpError, errorResponse, jsonResponse, toHttpIssues } from "../../service/httpError.js";
import type { SharedStore, StoreSpace } from "../../service/store/store.js";
import { type ReplicatedSystem, openReplicatedSystem } from "../../service/store/replicatedSystem.js";
import { openPostgresSpace, redactUrl } from "../store/postgresStore.js";
import type { PostgresRegistry } from "../store/postgresRegistry.js";
import { answerAsReplica, recordingRevisions } from "./startDataServer.js";
import { AsyncLocalStorage } from "node:async_hooks";
import type { TenantRow } from "../../service/store/registryStore.js";
import { TenantHost, type TenantHostOptions } from "../../service/tenants/tenantHost.js";
import { TenantRegistry } from "../../service/tenants/registry.js";
import { type WebhookOptions, Webhooks } from "../../service/webhooks/webhookService.js";
import { httpsTransport } from "../delivery/httpsTransport.js";
import { openSqliteSpace } from "../store/sqliteStore.js";
import { identifyByToken, registerAccountsRoutes } from "./accountsRoutes.js";
import { type ConnectionOptions, connectionSettings, guardConnections } from "./connectionGuard.js";
import { createDataApp } from "./createDataApp.js";
import { registerServiceMigrationRoutes, serviceIdMapping } from "./serviceMigrationRoutes.js";
import { TenantMigrations } from "../../service/tenants/tenantMigration.js";
import { serveServiceDocument } from "./serviceDocument.js";
import { migrationRoutes } from "./routes/serviceRoutes.js";
import type { DataEnv } from "./dataPipeline.js";
import { type RequestBounds, boundsOf } from "./requestBounds.js";
import { type Fetcher, type ServiceFront, type TenantLease, serviceFetch, tenantGrant } from "./serviceApp.js";
import { closeGracefully, listenOn, serverUrl, streamLog, withRequestLog } from "./startServer.js";
import { registerSubscriptionRoutes } from "./subscriptionRoutes.js";
import { registerIdentityRoutes } from "./identityRoutes.js";
import type { Mailer } from "../../service/identity/mailer.js";
import { serviceSecret } from "../../service/identity/secret.js";
import { inviteIdOf } from "../../service/identity/selfHelp.js";
import { openSigningKeys } from "../../service/identity/signingKeys.js";
import type { TokenKeys } from "../../service/identity/tokenKeys.js";
import { TokenResolver } from "../../service/identity/tokenResolver.js";
import type { ReportStoreLimits } from "../../service/reportService.js";
import { createHash } from "node:crypto";
import { NodeStatus, nodeRecordsOf } from "../../service/nodes/nodeStatus.js";
import { type SystemView, nodeRouteDeclarations, serviceNodeRoutes } from "./nodeRoutes.js";
import { type FeedLimits, NodeFeeds } from "../../service/nodes/nodeFeed.js";
import { serviceNodeFeedRoutes } from "./nodeFeedRoutes.js";
import { NodeEvents } from "../../service/nodes/nodeEvents.js";
import { nodeEventRouteDeclarations, serviceNodeEventRoutes } from "./nodeEventRoutes.js";

/** `1 organization`, `2 organizations`. */
function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Options of startServiceServer. */
export interface StartServiceServerOptions extends ConnectionOptions, RequestBounds {
  /** The SQLite database file (created when missing); exactly one of it and `storeUrl`. */
  readonly dataFile?: string;
  /** The PostgreSQL database (postgres://…) shared by every replica of the service (T54). */
  readonly storeUrl?: string;
  /** With `storeUrl`: how long a request with `X-Rsop-Min-Revision` waits for its tenant before 503; default 2000 ms. */
  readonly minRevisionWaitMs?: number;
  /** With `storeUrl`: how often the registry is re-read when no notification came (T56); default 1000 ms. */
  readonly registryPollMs?: number;
  readonly port?: number;
  readonly host?: string;
  /** The root organization's admin token (`--token`, `RSOP_TOKEN`). */
  readonly token?: string;
  /** The tokens of a tokens file, each with its role on organizations. */
  readonly tokens?: { readonly file: string; readonly entries: readonly TokenEntry[] };
  /** Most bytes the loaded tenants may hold (estimated); the least recently used are evicted beyond it. */
  readonly memoryBudgetBytes?: number;
  readonly maxBodyBytes?: number;
  readonly snapshotEvery?: number;
  readonly maxReportEntries?: number;
  readonly reportStore?: ReportStoreLimits;
  readonly webhooks?: WebhookOptions;
  /** The address panels' `uri` is made from (`--public-url`); default the request's origin. */
  readonly publicUrl?: string;
  /** Sends credential activation messages (`--smtp URL`); without one, `sendEmail` is refused (I9). */
  readonly mailer?: Mailer;
  readonly closeGraceMs?: number;
  /** The cloud nodes' change feeds: keep-alive and check intervals, batch (N16, N18); defaults in nodeFeed.ts. */
  readonly nodeFeeds?: Partial<FeedLimits>;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
}

/** A running service. */
export interface RunningServiceServer {
  readonly url: string;
  readonly registry: TenantRegistry;
  readonly tenants: TenantHost;
  readonly webhooks: Webhooks | undefined;
  /** Stops accepting connections, waits for open requests, closes every loaded tenant and the database. */
  close(): Promise<void>;
}

/** The grants of `--token` (the root's admin) and a tokens file, or null when neither is given. */
function serviceGrants(options: StartServiceServerOptions): (token: string) => Grant | null {
  const entries = [
    ...(options.token !== undefined ? [{ token: options.token, grant: ADMIN }] : []),
    ...(options.tokens?.entries ?? []),
  ];
  return entries.length === 0 ? () => null : grantLookup(entries);
}

function digestOf(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The token keys and the one resolver of every token (I3, I6). */
function identityParts(options: StartServiceServerOptions, registry: TenantRegistry) {
  const now = options.now !== undefined ? { now: options.now } : {};
  const keys = openSigningKeys(registry, now);
  const staticGrant = serviceGrants(options);
  const resolver = new TokenResolver({ registry, keys, staticGrant, ...now });
  return { keys, resolver, staticGrant, grantOf: (token: string) => resolver.accountGrant(token) };
}

interface ServiceParts {
  readonly options: StartServiceServerOptions;
  readonly space: StoreSpace;
  readonly registry: TenantRegistry;
  readonly host: TenantHost;
  readonly webhooks: Webhooks | undefined;
  readonly grantOf: (token: string) => Grant | null;
  /** The keys of ID and system tokens (I6). */
  readonly keys: TokenKeys;
  readonly resolver: TokenResolver;
  /** The tokens file's and `--token`'s grants only (service-wide on every host). */
  readonly staticGrant: (token: string) => Grant | null;
  readonly log: (line: string) => void;
  readonly startedAt: string;
  /** The apps of loaded tenants (dropped when a tenant is evicted). */
  readonly apps: Map<number, TenantApp>;
  /** The migrations of registered panels (T70–T77). */
  readonly migrations: TenantMigrations;
  /** On PostgreSQL: tenants are replicas, whose answers carry their revision (T55). */
  readonly shared: boolean;
  /** The revision a write of the request being answered got (replicas only). */
  readonly written: AsyncLocalStorage<{ seq?: number }>;
  /** Re-reads the registry if another process committed; a call waits for a re-read begun after it. */
  readonly refresh: () => Promise<void>;
  /** Stops following the other processes' registry commits. */
  readonly unwatch: () => Promise<void>;
  /** The cloud nodes' tokens, heartbeats and reports (N1–N19). */
  readonly nodes: NodeStatus;
  /** The cloud nodes' open change feeds (N18). */
  readonly feeds: NodeFeeds;
}

/** A loaded tenant's app, made once per loaded live system (a reload after an eviction makes a new one). */
interface TenantApp {
  readonly durable: unknown;
  readonly app: Promise<Fetcher>;
}

/** The front's view of the service: tenants by key, grants and reach, and leases of tenants' apps. */
function frontOf(parts: ServiceParts, accounts: Hono<DataEnv>): ServiceFront {
  const { registry, host, apps } = parts;
  // Panel serial numbers by lower case, rebuilt when the registry changed.
  let serials = { rev: -1, byLower: new Map<string, string>() };
  const front: ServiceFront = {
    tenantByKey: (key) => registry.tenantByKey(key),
    ...(parts.shared ? { refresh: parts.refresh } : {}),
    panelSerialOf(label) {
      if (serials.rev !== registry.rev) {
        const byLower = new Map<string, string>();
        for (const t of registry.tenants()) if (t.kind === "panel") byLower.set(t.key.toLowerCase(), t.key);
        serials = { rev: registry.rev, byLower };
      }
      return serials.byLower.get(label.toLowerCase());
    },
    grantOf: parts.staticGrant,
    prepare: (token) => parts.resolver.prepare(token),
    tenantGrantOf(token, tenant) {
      const row = registry.panelToken(digestOf(token));
      if (row !== undefined) return row.tenant === tenant.n ? ADMIN : null;
      const grant = tenant.kind === "system" ? parts.resolver.systemGrant(token, tenant.key) : null;
      return grant === null ? null : grantAt(grant, tenant.organization, (id) => registry.ancestors(id), tenant.key);
    },
    isTenantToken: (token) => registry.panelToken(digestOf(token)) !== undefined || parts.resolver.isSystemToken(token),
    reaches: (grant, org) => reaches(grant, org, (id) => registry.ancestors(id)),
    async lease(tenant: TenantRow): Promise<TenantLease> {
      const lease = await host.acquire(tenant.n);
      try {
        let made = apps.get(tenant.n);
        if (made === undefined || made.durable !== lease.durable) {
          made = { durable: lease.durable, app: tenantApp(parts, front, tenant, lease) };
          apps.set(tenant.n, made);
        }
        const app = await made.app;
        return { app, release: () => lease.release() };
      } catch (e) {
        lease.release();
        throw e;
      }
    },
    accounts,
    indent: 2,
  };
  return front;
}

/** A tenant's app: every route of its system or panel, its token checked against its organization. */
function tenantApp(
  parts: ServiceParts,
  front: ServiceFront,
  tenant: TenantRow,
  lease: Awaited<ReturnType<TenantHost["acquire"]>>,
): Promise<Fetcher> {
  const { options, log, webhooks, written } = parts;
  const replica = parts.shared ? (lease.durable as ReplicatedSystem) : undefined;
  const waitMs = options.minRevisionWaitMs ?? 2000;
  const app = createDataApp({
    // A panel being migrated and a staged system refuse writes (409, T74).
    durable: parts.migrations.guard(
      tenant,
      replica === undefined ? lease.durable : recordingRevisions(replica, written),
    ),
    reports: lease.reports,
    grants: (token) => tenantGrant(front, token, tenant),
    document: false,
    // A digital credential's invite id, the same the accounts host answers later (I80, I81).
    inviteIdOf: async (credentialId, holderId) =>
      inviteIdOf(await serviceSecret(parts.registry), tenant.key, holderId, credentialId),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...boundsOf(options),
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(webhooks !== undefined ? { decisionEvents: webhooks.forTenant(tenant.organization, tenant.key) } : {}),
    // The cloud nodes' status at the system's revision (N10), their hardware as reported (N11).
    cloudNodes: {
      status: (id) => parts.nodes.status(tenant.key, id, lease.durable.seq()),
      hardware: (id) => parts.nodes.hardware(tenant.key, id),
      wireless: (id) => parts.nodes.wireless(tenant.key, id),
    },
    onError: (e, request) =>
      log(`internal error on ${request.method} ${new URL(request.url).pathname}: ${(e as Error)?.stack ?? String(e)}`),
  });
  // A replica's answers carry its revision and wait for X-Rsop-Min-Revision, as one system's do (T55).
  return replica === undefined
    ? app
    : app.then((a) => ({ fetch: (request: Request) => answerAsReplica(request, replica, a, written, waitMs) }));
}

/** The accounts host's app: organizations, panels, subscriptions, health and the document. */
async function accountsApp(parts: ServiceParts): Promise<Hono<DataEnv>> {
  const { registry, host, webhooks, options, log } = parts;
  const { Hono } = await import("hono");
  const app = new Hono<DataEnv>();
  app.onError((e, c) => {
    if (e instanceof HttpError) return errorResponse(e, 2);
    log(`internal error on ${c.req.method} ${new URL(c.req.url).pathname}: ${(e as Error)?.stack ?? String(e)}`);
    return errorResponse(new HttpError(500, "Internal server error."), 2);
  });
  app.notFound((c) =>
    errorResponse(new HttpError(404, `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`), 2),
  );
  await serveServiceDocument(app, [...migrationRoutes(), ...nodeRouteDeclarations(), ...nodeEventRouteDeclarations()]);
  app.on(["GET", "HEAD"], "/healthz", () =>
    jsonResponse(
      200,
      {
        status: "ok",
        loadedAt: parts.startedAt,
        organizations: registry.organizationCount(),
        tenants: registry.tenants().length,
        ...host.stats(),
      },
      2,
    ),
  );
  const identify = identifyByToken(parts.grantOf);
  const publicUrl = options.publicUrl;
  registerServiceMigrationRoutes(app, {
    registry,
    migrations: parts.migrations,
    identify,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    indent: 2,
    log,
  });
  registerAccountsRoutes(app, {
    registry,
    identify,
    permissions: [...(options.tokens?.entries ?? [])].map((e) => e.grant),
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    indent: 2,
    ...(publicUrl !== undefined ? { publicUrl: () => publicUrl } : {}),
  });
  registerIdentityRoutes(app, {
    registry,
    identify,
    keys: parts.keys,
    readSystem: async (tenant, read) => {
      const lease = await host.acquire(tenant.n);
      try {
        const target = lease.durable.target;
        if (target.kind !== "system") throw new Error(`tenant ${tenant.n} holds no 2.0 system`);
        return read(target.live.current);
      } finally {
        lease.release();
      }
    },
    writeSystem: async (tenant, operation) => {
      const lease = await host.acquire(tenant.n);
      try {
        // Through the migration guard, as the systems host writes: a staged or migrating system refuses.
        const result = await parts.migrations.guard(tenant, lease.durable).write(operation);
        if (!result.ok)
          throw new HttpError(result.status, "The system refused the change.", toHttpIssues(result.issues, []));
        return result.status;
      } finally {
        lease.release();
      }
    },
    now: options.now ?? Date.now,
    publicUrl: (c) => publicUrl ?? new URL(c.req.url).origin,
    ...(options.mailer !== undefined ? { mailer: options.mailer } : {}),
    indent: 2,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    log,
  });
  if (webhooks !== undefined)
    registerSubscriptionRoutes(app, {
      webhooks,
      generations: ["2.0", "1.0"],
      organization: async (c, id) => {
        const { grant } = await identify(c);
        // The role on this organization decides (I3): a manager's or reporter's has partitions (403).
        const at = registry.organization(id) === undefined ? null : grantAt(grant, id, (o) => registry.ancestors(o));
        if (at === null)
          throw new HttpError(404, "Unknown organization.", [
            { path: "organization_id", message: `Unknown organization "${id}".` },
          ]);
        return at;
      },
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
      indent: 2,
      now: options.now ?? Date.now,
    });
  return app;
}

/** A system's revision and cloud nodes, for the node routes (N3). */
async function readNodes(host: TenantHost, tenant: TenantRow): Promise<SystemView> {
  const lease = await host.acquire(tenant.n);
  try {
    const target = lease.durable.target;
    const ids = new Set(target.kind === "system" ? target.live.current.cloudNodes.map((n) => n.id) : []);
    return { revision: lease.durable.seq(), hasNode: (id) => ids.has(id) };
  } finally {
    lease.release();
  }
}

/** Opens the database, the registry, the webhooks and the tenant host; on failure closes what opened. */
async function openParts(options: StartServiceServerOptions, log: (line: string) => void): Promise<ServiceParts> {
  const space = await openSpace(options);
  const shared = options.storeUrl !== undefined;
  // The registry opens first (the webhooks read its tree), so its event hooks bind late.
  let webhooks: Webhooks | undefined;
  let host: TenantHost | undefined;
  let migrations: TenantMigrations | undefined;
  try {
    const registry = await TenantRegistry.open(space.registry, {
      recordsOfTenant: nodeRecordsOf,
      ...(options.now !== undefined ? { now: options.now } : {}),
      // A node upload's access events ride its dedupe commit (N23).
      outbox: (events) => webhooks?.organizationEvents(events) ?? [],
      stored: (entries) => webhooks?.stored(entries),
      migrating: async (n) => migrations?.migrating(n) === true,
      hasHolders: async (n) => {
        const lease = await host!.acquire(n);
        try {
          const target = lease.durable.target;
          return target.kind === "system" && target.live.current.holders.length > 0;
        } finally {
          lease.release();
        }
      },
    });
    if (space.webhooks !== undefined)
      webhooks = await Webhooks.openService(
        space.webhooks,
        registryScopes(registry),
        { ...options.webhooks, log: options.webhooks?.log ?? log, ...(options.now ? { now: options.now } : {}) },
        httpsTransport(options.webhooks?.allow ?? []),
      );
    const apps = new Map<number, TenantApp>();
    const feeds = new NodeFeeds();
    host = new TenantHost(space, {
      ...tenantHostOptions(options, registry, () => webhooks, log),
      // An evicted (or deleted) system's node feeds end: its nodes reconnect (N18).
      onEvicted: (n) => {
        apps.delete(n);
        feeds.endTenant(n);
      },
      ...(shared ? { open: replicaOpener(log) } : {}),
    });
    // Opened once the registry and host are: resumes the migrations stored in panels' kv (T73).
    migrations = await TenantMigrations.open({ registry, space, host, log });
    const following = await followRegistry(space, registry, options, log);
    return {
      ...following,
      shared,
      written: new AsyncLocalStorage<{ seq?: number }>(),
      options,
      space,
      registry,
      host,
      webhooks,
      ...identityParts(options, registry),
      log,
      startedAt: new Date().toISOString(),
      nodes: new NodeStatus(registry, options.now),
      feeds,
      apps,
      migrations,
    };
  } catch (e) {
    await webhooks?.close();
    await space.close();
    throw e;
  }
}

/** The space of `dataFile` or `storeUrl` (exactly one). */
function openSpace(options: StartServiceServerOptions): Promise<StoreSpace> {
  if ((options.dataFile === undefined) === (options.storeUrl === undefined))
    throw new TypeError("startServiceServer needs exactly one of dataFile and storeUrl");
  // The space polls every followed tenant in one query (T6): its replicas do not poll themselves.
  return options.storeUrl !== undefined ? openPostgresSpace(options.storeUrl) : openSqliteSpace(options.dataFile!);
}

/** How the host opens a tenant of a shared space: a replica following the log through the space (T54). */
function replicaOpener(log: (line: string) => void): NonNullable<TenantHostOptions["open"]> {
  return (store, o) =>
    openReplicatedSystem(store as SharedStore, {
      pollMs: 0,
      ...(o.snapshotEvery !== undefined ? { snapshotEvery: o.snapshotEvery } : {}),
      ...(o.now !== undefined ? { now: o.now } : {}),
      ...(o.outbox !== undefined ? { outbox: o.outbox } : {}),
      onEvent: (m) => log(m),
    });
}

/**
 * The registry's following of the other processes (T56): a re-read when the space tells of a commit,
 * and every `registryPollMs` in case a notification was missed. Re-reads run one at a time; a call
 * during one waits for the next, begun after it (a request's "once more" sees commits before it).
 */
async function followRegistry(
  space: StoreSpace,
  registry: TenantRegistry,
  options: StartServiceServerOptions,
  log: (line: string) => void,
): Promise<Pick<ServiceParts, "refresh" | "unwatch">> {
  let current: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const start = (): Promise<void> => {
    current = registry.refresh().finally(() => {
      current = undefined;
    });
    return current;
  };
  const refresh = (): Promise<void> => {
    if (current === undefined) return start();
    queued ??= current
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return start();
      });
    return queued;
  };
  const store = space.registry as Partial<PostgresRegistry>;
  if (store.watch === undefined) return { refresh, unwatch: async () => undefined };
  const quietly = () =>
    void refresh().catch((e: unknown) => log(`re-reading the registry failed: ${(e as Error)?.message ?? String(e)}`));
  const stopWatching = await store.watch(quietly);
  const timer = setInterval(quietly, options.registryPollMs ?? 1000);
  timer.unref();
  return {
    refresh,
    async unwatch() {
      clearInterval(timer);
      await stopWatching();
    },
  };
}

/** The tenant host's options: budget, bounds, each tenant's outbox, and its cloud-node summary kept in the registry. */
function tenantHostOptions(
  options: StartServiceServerOptions,
  registry: TenantRegistry,
  webhooks: () => Webhooks | undefined,
  log: (line: string) => void,
): TenantHostOptions {
  return {
    ...(options.memoryBudgetBytes !== undefined ? { memoryBudgetBytes: options.memoryBudgetBytes } : {}),
    ...(options.snapshotEvery !== undefined ? { snapshotEvery: options.snapshotEvery } : {}),
    ...(options.reportStore !== undefined ? { reportStore: options.reportStore } : {}),
    ...(options.maxReportEntries !== undefined ? { maxReportEntries: options.maxReportEntries } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    outboxFor: (n) => {
      const tenant = registry.tenant(n);
      const hooks = webhooks();
      return hooks === undefined || tenant === undefined ? undefined : hooks.forTenant(tenant.organization, tenant.key);
    },
    onSummary: (n, summary) => {
      const tenant = registry.tenant(n);
      const known = tenant?.info as SystemSummary | undefined;
      if (tenant === undefined || (known?.nodes !== undefined && sameSummary(known, summary))) return;
      registry
        .setTenantInfo(n, summary)
        .catch((e: unknown) => log(`keeping the cloud-node summary of ${tenant.key} failed: ${(e as Error)?.message}`));
    },
    log,
  };
}

/**
 * Opens the service database (creating it, with its root organization, when missing) and serves it.
 * @throws StoreError (database missing its driver, in use, not an rsop database), Error (port in use).
 */
export async function startServiceServer(options: StartServiceServerOptions): Promise<RunningServiceServer> {
  const log = options.log ?? streamLog(process.stderr);
  const connections = connectionSettings("startServiceServer", options);
  const parts = await openParts(options, log);
  const { registry, host, webhooks, space } = parts;
  const shutDown = async () => {
    await parts.unwatch();
    await webhooks?.close();
    // The migration tasks under way end before the tenants and the store close.
    await parts.migrations.settled();
    await host.close();
    await space.close();
  };
  let server: Server;
  try {
    const front = frontOf(parts, await accountsApp(parts));
    // The systems host's id mappings answer before the system's own app (T77).
    const idMapping = serviceIdMapping({
      registry,
      migrations: parts.migrations,
      grantOn: (token, systemId) => {
        const t = registry.tenantByKey(systemId);
        return t === undefined ? null : tenantGrant(front, token, t);
      },
      known: (token) => parts.staticGrant(token) !== null || front.isTenantToken(token),
      indent: 2,
    });
    // What the three groups of node routes share: the node's admission (N3).
    const nodeBase = {
      registry,
      nodes: parts.nodes,
      grantOn: (token: string, systemId: string) => tenantGrant(front, token, registry.tenantByKey(systemId)!),
      known: (token: string) => parts.staticGrant(token) !== null || front.isTenantToken(token),
      prepare: (token: string | null) => parts.resolver.prepare(token),
      indent: 2,
    };
    const nodeRoutes = serviceNodeRoutes({
      ...nodeBase,
      readSystem: (tenant) => readNodes(host, tenant),
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    });
    const nodeFeeds = serviceNodeFeedRoutes({
      ...nodeBase,
      acquire: (tenant) => host.acquire(tenant.n),
      feeds: parts.feeds,
      ...(options.nodeFeeds !== undefined ? { limits: options.nodeFeeds } : {}),
    });
    const nodeEvents = serviceNodeEventRoutes({
      ...nodeBase,
      acquire: (tenant) => host.acquire(tenant.n),
      events: new NodeEvents(registry, () => webhooks, options.now),
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    });
    const answer = serviceFetch(front);
    server = await listenOn(
      withRequestLog(log, (r) => nodeRoutes(r) ?? nodeFeeds(r) ?? nodeEvents(r) ?? idMapping(r) ?? answer(r)),
      options,
      connections,
    );
  } catch (e) {
    await shutDown();
    throw e;
  }
  guardConnections(server, connections, log);
  const url = serverUrl(server);
  log(
    `serving ${count(registry.organizationCount(), "organization")} and ${count(registry.tenants().length, "system or panel", "systems and panels")} from ${options.storeUrl !== undefined ? redactUrl(options.storeUrl) : options.dataFile} on ${url} (root organization ${registry.root().id})`,
  );
  let closing: Promise<void> | undefined;
  return {
    url,
    registry,
    tenants: host,
    webhooks,
    close() {
      closing ??= (async () => {
        // The node feeds never end by themselves: they end first, so that closing waits only for requests.
        parts.feeds.endAll();
        await closeGracefully(server, options.closeGraceMs ?? 5000);
        await shutDown();
      })();
      return closing;
    },
  };
}

/**
 * How `rsop serve --data FILE.db` without a snapshot serves a database (T52): a service when it is
 * new, empty, or already holds organizations; the one system or panel it holds otherwise (a
 * database made by `--system`/`--panel`, served as before).
 */
export async function storedMode(file: string): Promise<"service" | "embedded"> {
  const { existsSync } = await import("node:fs");
  if (!existsSync(file)) return "service";
  const space = await openSqliteSpace(file);
  try {
    const registry = await space.registry.load();
    if (registry.organizations.length > 0) return "service";
    return (await space.tenant(1).load()) === null ? "service" : "embedded";
  } finally {
    await space.close();
  }
}

/**
 * How `rsop serve --store postgres://…` without a snapshot serves a database (T57), as storedMode
 * does a file: a service when it holds no system or holds organizations; the one system or panel
 * it holds otherwise (served as replicas of one system, as before). Opening creates the tables of
 * a database that has none.
 */
export async function storedPostgresMode(url: string): Promise<"service" | "embedded"> {
  const space = await openPostgresSpace(url);
  try {
    const registry = await space.registry.load();
    if (registry.organizations.length > 0) return "service";
    return (await space.tenant(1).load()) === null ? "service" : "embedded";
  } finally {
    await space.close();
  }
}
