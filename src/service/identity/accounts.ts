// Users and applications of a service (semantics I1, I2): created by the CLI (`rsop users add`,
// `rsop apps add`), looked up by the login page and the token endpoint. An email names at most one
// user or application (lower-cased), so that a permission's email names one caller.
import { randomBytes, randomUUID } from "node:crypto";
import { HttpError } from "../httpError.js";
import type { RegistryChange } from "../store/registryStore.js";
import type { TenantRegistry } from "../tenants/registry.js";
import { hashSecret, verifySecret } from "./passwords.js";
import { type AppRecord, KIND, type UserRecord } from "./records.js";

/** An email as stored and compared: trimmed, lower-case. */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

// A plain shape check (RFC 5321's local@domain, no spaces); linear: no nested quantifiers.
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
const MAX_PASSWORD = 1024;

/** The user or application an email names, or undefined. */
export function callerByEmail(
  registry: TenantRegistry,
  email: string,
): { type: "user"; user: UserRecord } | { type: "app"; app: AppRecord } | undefined {
  const e = normalEmail(email);
  for (const r of registry.records(KIND.user))
    if ((r.value as UserRecord).email === e) return { type: "user", user: r.value as UserRecord };
  for (const r of registry.records(KIND.app))
    if ((r.value as AppRecord).email === e) return { type: "app", app: r.value as AppRecord };
  return undefined;
}

export function userById(registry: TenantRegistry, id: string): UserRecord | undefined {
  return registry.record(KIND.user, id)?.value as UserRecord | undefined;
}

export function appById(registry: TenantRegistry, clientId: string): AppRecord | undefined {
  return registry.record(KIND.app, clientId)?.value as AppRecord | undefined;
}

function emailIssue(email: unknown, path: string): { path: string; message: string } | null {
  if (typeof email !== "string" || !EMAIL.test(email.trim())) return { path, message: "Must be an email address." };
  return null;
}

/** Input of createUser. */
export interface NewUser {
  readonly email: string;
  readonly password: string;
  readonly firstName?: string;
  readonly lastName?: string;
}

/**
 * Creates a user. @throws HttpError 400 (email shape, password of 12 to 1024 characters), 409 (the
 * email names a user or application already).
 */
export async function createUser(registry: TenantRegistry, input: NewUser, now = Date.now): Promise<UserRecord> {
  const issues = [emailIssue(input.email, "email")].filter((i) => i !== null);
  if (input.password.length < 12 || input.password.length > MAX_PASSWORD)
    issues.push({ path: "password", message: `Must have 12 to ${MAX_PASSWORD} characters.` });
  if (issues.length > 0) throw new HttpError(400, "The user is invalid.", issues);
  const passwordHash = await hashSecret(input.password);
  const user: UserRecord = {
    id: randomUUID(),
    email: normalEmail(input.email),
    firstName: input.firstName ?? "",
    lastName: input.lastName ?? "",
    passwordHash,
    created: new Date(now()).toISOString(),
  };
  return registry.updateRecords(() => {
    refuseTakenEmail(registry, user.email);
    const changes: RegistryChange[] = [{ op: "putRecord", kind: KIND.user, id: user.id, value: user, ifVersion: 0 }];
    return { changes, result: user };
  });
}

/** Input of createApp. */
export interface NewApp {
  readonly name: string;
  readonly email: string;
  readonly redirectUris?: readonly string[];
}

/** What createApp answers: the client secret, shown once and never stored. */
export interface CreatedApp {
  readonly client_id: string;
  readonly client_secret: string;
}

/** Whether a redirect URI may be registered: an absolute https URL, or http on a loopback host (RFC 8252 §7.3), no fragment. */
export function redirectUriIssue(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "Must be an absolute URL.";
  }
  if (url.hash !== "" || uri.includes("#")) return "Must not have a fragment.";
  const loopback = url.hostname === "127.0.0.1" || url.hostname === "[::1]" || url.hostname === "localhost";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback))
    return "Must be https (http only on 127.0.0.1, [::1] or localhost).";
  return null;
}

/** Creates an application. @throws HttpError 400 (name, email, redirect URIs), 409 (email taken). */
export async function createApp(registry: TenantRegistry, input: NewApp, now = Date.now): Promise<CreatedApp> {
  const issues = [emailIssue(input.email, "email")].filter((i) => i !== null);
  if (input.name.trim() === "" || input.name.length > 255)
    issues.push({ path: "name", message: "Must have 1 to 255 characters." });
  (input.redirectUris ?? []).forEach((u, i) => {
    const why = redirectUriIssue(u);
    if (why !== null) issues.push({ path: `redirectUris.${i}`, message: why });
  });
  if (issues.length > 0) throw new HttpError(400, "The application is invalid.", issues);
  const clientId = randomUUID();
  const secret = randomBytes(32).toString("base64url");
  const app: AppRecord = {
    clientId,
    name: input.name.trim(),
    email: normalEmail(input.email),
    secretHash: await hashSecret(secret),
    redirectUris: [...(input.redirectUris ?? [])],
    created: new Date(now()).toISOString(),
  };
  return registry.updateRecords(() => {
    refuseTakenEmail(registry, app.email);
    const changes: RegistryChange[] = [{ op: "putRecord", kind: KIND.app, id: clientId, value: app, ifVersion: 0 }];
    return { changes, result: { client_id: clientId, client_secret: secret } };
  });
}

function refuseTakenEmail(registry: TenantRegistry, email: string): void {
  if (callerByEmail(registry, email) !== undefined)
    throw new HttpError(409, "The email is taken.", [
      { path: "email", message: "A user or application already has this email." },
    ]);
}

/** The user a login names, when the password is right (an unknown email costs the same time: passwords.ts). */
export async function checkUserPassword(
  registry: TenantRegistry,
  email: string,
  password: string,
): Promise<UserRecord | null> {
  const found = callerByEmail(registry, email);
  const user = found?.type === "user" ? found.user : undefined;
  const ok = await verifySecret(password.slice(0, MAX_PASSWORD), user?.passwordHash);
  return ok && user !== undefined ? user : null;
}

/** The application a client id and secret name, when the secret is right (constant-ish time, as checkUserPassword). */
export async function checkClient(
  registry: TenantRegistry,
  clientId: string,
  secret: string,
): Promise<AppRecord | null> {
  const app = appById(registry, clientId);
  const ok = await verifySecret(secret.slice(0, MAX_PASSWORD), app?.secretHash);
  return ok && app !== undefined ? app : null;
}
