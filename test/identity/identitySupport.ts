// Helpers of the identity tests: a real service server over a temporary SQLite file with a clock the
// test moves, users, applications, permissions and systems made in-process through the registry, and
// the calls tests make (JSON with a bearer token, the token endpoint's form with HTTP Basic).
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import {
  type RunningServiceServer,
  type StartServiceServerOptions,
  startServiceServer,
} from "../../src/adapters/http/startServiceServer.js";
import type { Role } from "../../src/service/auth/grant.js";
import { type CreatedApp, type NewApp, createApp, createUser } from "../../src/service/identity/accounts.js";
import { KIND, type PermissionRecord, type UserRecord } from "../../src/service/identity/records.js";
import type { Caller } from "../../src/service/tenants/organization.js";
import type { TenantRegistry } from "../../src/service/tenants/registry.js";
import { BUILDING_JSON, removeTempDirs, tempDir } from "../http/fixtures.js";

/** The caller of in-process registry changes: the root's admin. */
export const BY: Caller = {
  grant: { role: "admin", partitions: null },
  clientInfo: { ipAddress: null, userAgent: null },
};
/** A password createUser accepts (12 characters or more). */
export const PASSWORD = "correct horse battery staple";

/** A clock a test moves: `now` is what the server is given. */
export interface TestClock {
  ms: number;
  readonly now: () => number;
  advance(ms: number): void;
}

export function testClock(start = Date.parse("2026-05-04T09:00:00.000Z")): TestClock {
  const clock: TestClock = {
    ms: start,
    now: () => clock.ms,
    advance(ms) {
      clock.ms += ms;
    },
  };
  return clock;
}

/** A running service for identity tests. */
export interface IdentityService {
  readonly server: RunningServiceServer;
  readonly url: string;
  readonly registry: TenantRegistry;
  readonly clock: TestClock;
  /** Stops the server and removes its temporary directory. */
  close(): Promise<void>;
}

/** Starts a service server on 127.0.0.1 (port 0) over a new SQLite file, its clock `clock`. */
export async function startIdentityService(
  options: Partial<StartServiceServerOptions> = {},
  clock: TestClock = testClock(),
): Promise<IdentityService> {
  const server = await startServiceServer({
    dataFile: join(tempDir(), "service.db"),
    port: 0,
    host: "127.0.0.1",
    log: () => {},
    now: clock.now,
    ...options,
  });
  return {
    server,
    url: server.url,
    registry: server.registry,
    clock,
    async close() {
      await server.close();
      removeTempDirs();
    },
  };
}

/** Makes a user (one scrypt hash: ~65 ms). */
export function newUser(registry: TenantRegistry, email: string, password = PASSWORD): Promise<UserRecord> {
  return createUser(registry, { email, password, firstName: email.split("@")[0]!, lastName: "Test" });
}

/** Makes an application (one scrypt hash); answers its client id and secret. */
export function newApp(registry: TenantRegistry, input: Partial<NewApp> & { email: string }): Promise<CreatedApp> {
  return createApp(registry, { name: input.name ?? input.email, ...input });
}

/** What grantPermission records. */
export interface PermissionGrant {
  readonly organization: string;
  readonly email: string;
  readonly role: Role;
  /** The user's id or the application's client id; null: an invitation not accepted yet. */
  readonly userId: string | null;
  /** Managers and reporters: partition ids by system id (default none); admin and integrator: null. */
  readonly partitions?: PermissionRecord["partitions"];
}

/** Puts a permission record directly (a fixture: the permission routes are another module's). */
export async function grantPermission(registry: TenantRegistry, p: PermissionGrant): Promise<PermissionRecord> {
  const value: PermissionRecord = {
    id: randomUUID(),
    organization: p.organization,
    email: p.email,
    name: p.email,
    role: p.role,
    partitions: p.partitions !== undefined ? p.partitions : p.role === "manager" || p.role === "reporter" ? {} : null,
    userId: p.userId,
    created: new Date().toISOString(),
    accepted: null,
  };
  await registry.updateRecords(() => ({
    changes: [{ op: "putRecord", kind: KIND.permission, id: value.id, value, ifVersion: 0 }],
    result: undefined,
  }));
  return value;
}

/** Makes an organization under `parent`; with `system`, a multi-site one holding the example building as a new system. */
export async function newOrganization(
  registry: TenantRegistry,
  parent: string,
  name: string,
  system = false,
): Promise<{ id: string; systemId: string | undefined }> {
  const body = system ? { name, import: { ...(BUILDING_JSON as object), systemId: randomUUID() } } : { name };
  const org = await registry.createOrganization(parent, body, BY);
  return { id: org.id, systemId: registry.tenantsOf(org.id).find((t) => t.kind === "system")?.key };
}

/** An answer as tests read it. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

async function read(r: Response): Promise<Answer> {
  const text = await r.text();
  let body: unknown = text;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {}
  return { status: r.status, headers: r.headers, body };
}

/** A call with an optional bearer token and JSON body. */
export async function call(
  url: string,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const h: Record<string, string> = { ...headers };
  if (token !== null) h.authorization = `Bearer ${token}`;
  if (body !== undefined) h["content-type"] ??= "application/json";
  const init: RequestInit = { method, headers: h };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  return read(await fetch(`${url}${path}`, init));
}

/** `Authorization: Basic` of a client (each part form-encoded first, RFC 6749 §2.3.1). */
export function basicAuth(clientId: string, secret: string): string {
  const enc = (s: string) => new URLSearchParams({ s }).toString().slice(2);
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString("base64")}`;
}

/** `POST /oauth2/token` with a form body; `auth` the Authorization header (null: none). */
export async function tokenRequest(
  url: string,
  auth: string | null,
  form: Record<string, string> | string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const h: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", ...headers };
  if (auth !== null) h.authorization = auth;
  const body = typeof form === "string" ? form : new URLSearchParams(form).toString();
  return read(await fetch(`${url}/oauth2/token`, { method: "POST", headers: h, body }));
}
