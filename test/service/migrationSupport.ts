// A service with the migration routes mounted, for test/service/tenantMigration.test.ts: a small
// copy of startServiceServer.ts's wiring (registry, tenant host, accounts routes, the front) plus
// what the migration adds, marked "MIGRATION" (the lines the service server takes over). Served
// over 127.0.0.1 on a real SQLite file; the registry's outbox callback records every event.
import type { Server } from "node:http";
import type { Hono } from "hono";
import { identifyByToken, registerAccountsRoutes } from "../../src/adapters/http/accountsRoutes.js";
import { connectionSettings } from "../../src/adapters/http/connectionGuard.js";
import { createDataApp } from "../../src/adapters/http/createDataApp.js";
import type { DataEnv } from "../../src/adapters/http/dataPipeline.js";
import { type ServiceFront, serviceFetch, tenantGrant } from "../../src/adapters/http/serviceApp.js";
import { registerServiceMigrationRoutes, serviceIdMapping } from "../../src/adapters/http/serviceMigrationRoutes.js";
import { closeGracefully, listenOn, serverUrl } from "../../src/adapters/http/startServer.js";
import { openSqliteSpace } from "../../src/adapters/store/sqliteStore.js";
import type { OrgEvent } from "../../src/events/orgEvents.js";
import { reaches } from "../../src/service/auth/grant.js";
import { ADMIN, type TokenEntry, grantLookup } from "../../src/service/auth/tokens.js";
import { HttpError, errorResponse } from "../../src/service/httpError.js";
import { TenantRegistry } from "../../src/service/tenants/registry.js";
import { TenantHost } from "../../src/service/tenants/tenantHost.js";
import { TenantMigrations } from "../../src/service/tenants/tenantMigration.js";

export interface MigrationService {
  readonly url: string;
  readonly registry: TenantRegistry;
  readonly migrations: TenantMigrations;
  /** Every organization and panel event the registry committed, in order. */
  readonly events: OrgEvent[];
  close(): Promise<void>;
}

export interface MigrationServiceOptions {
  readonly rootToken: string;
  readonly tokens?: readonly TokenEntry[];
  readonly pace?: (task: string) => Promise<void>;
  readonly events?: OrgEvent[];
}

/** Opens the service database `file` and serves it with the migration routes. */
export async function startMigrationService(file: string, o: MigrationServiceOptions): Promise<MigrationService> {
  const space = await openSqliteSpace(file);
  const events = o.events ?? [];
  let migrations: TenantMigrations | undefined;
  const registry = await TenantRegistry.open(space.registry, {
    outbox: (e) => {
      events.push(...e);
      return [];
    },
    // MIGRATION: a panel being migrated is not deleted (T76).
    migrating: async (n) => migrations?.migrating(n) === true,
  });
  const host = new TenantHost(space, {});
  // MIGRATION: opened once the registry and host are; resumes stored migrations (T73).
  migrations = await TenantMigrations.open({
    registry,
    space,
    host,
    ...(o.pace !== undefined ? { pace: o.pace } : {}),
    log: () => {},
  });
  const grantOf = grantLookup([{ token: o.rootToken, grant: ADMIN }, ...(o.tokens ?? [])]);
  const { Hono } = await import("hono");
  const accounts = new Hono<DataEnv>();
  accounts.onError((e) => {
    if (e instanceof HttpError) return errorResponse(e, 2);
    return errorResponse(new HttpError(500, `Internal server error: ${(e as Error)?.stack ?? String(e)}`), 2);
  });
  const identify = identifyByToken(grantOf);
  registerAccountsRoutes(accounts, { registry, identify, maxBodyBytes: 1 << 20, indent: 2 });
  // MIGRATION: the migration routes on the accounts host.
  registerServiceMigrationRoutes(accounts, { registry, migrations, identify, maxBodyBytes: 1 << 20, indent: 2 });
  const apps = new Map<number, { durable: unknown; app: Promise<Hono> }>();
  const front: ServiceFront = {
    tenantByKey: (key) => registry.tenantByKey(key),
    panelSerialOf: (label) => registry.tenants().find((t) => t.kind === "panel" && t.key.toLowerCase() === label)?.key,
    grantOf,
    tenantGrantOf: () => null,
    isTenantToken: () => false,
    reaches: (grant, org) => reaches(grant, org, (id) => registry.ancestors(id)),
    async lease(tenant) {
      const lease = await host.acquire(tenant.n);
      let made = apps.get(tenant.n);
      if (made === undefined || made.durable !== lease.durable) {
        made = {
          durable: lease.durable,
          app: createDataApp({
            // MIGRATION: a panel being migrated and a staged system refuse writes (409).
            durable: migrations!.guard(tenant, lease.durable),
            reports: lease.reports,
            grants: (token) => tenantGrant(front, token, tenant),
            document: false,
          } as Parameters<typeof createDataApp>[0]),
        };
        apps.set(tenant.n, made);
      }
      return { app: await made.app, release: () => lease.release() };
    },
    accounts,
    indent: 2,
  };
  // MIGRATION: the systems host's id mappings, before the system's own app.
  const idMapping = serviceIdMapping({
    registry,
    migrations,
    grantOn: (token, systemId) => {
      const t = registry.tenantByKey(systemId);
      return t === undefined ? null : tenantGrant(front, token, t);
    },
    known: (token) => grantOf(token) !== null,
    indent: 2,
  });
  const fetchService = serviceFetch(front);
  const connections = connectionSettings("test", {});
  const server: Server = await listenOn((r) => idMapping(r) ?? fetchService(r), { port: 0 }, connections);
  return {
    url: serverUrl(server),
    registry,
    migrations,
    events,
    async close() {
      await closeGracefully(server, 2000);
      // MIGRATION: the tasks under way end before the store closes. A test's paced task held at its
      // gate is left there instead (a process that stops in the middle of a task).
      if (o.pace === undefined) await migrations!.settled();
      await host.close();
      await space.close();
    },
  };
}
