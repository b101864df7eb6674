// Body checks shared by the operations: zod schemas of the snapshot entities, with paths under `body`.
import { z } from "zod";
import { type Issue, fromZodIssues, zodMessage } from "../model/index.js";
import { Refusal, refuse } from "./operation.js";

/** Parses `value` with an entity schema; every problem becomes a 400 issue under `body`. */
export function parseBody<T>(schema: z.ZodType<T>, value: unknown, prefix: readonly (string | number)[] = ["body"]): T {
  const r = schema.safeParse(value, { error: zodMessage });
  if (!r.success) throw new Refusal(400, fromZodIssues(r.error.issues, [...prefix]));
  return r.data;
}

/** The body as a plain object, or a 400 saying it must be one. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new Refusal(400, [{ code: "invalidType", path: ["body"], message: "Must be a JSON object." }]);
  return body as Record<string, unknown>;
}

/** 400 for every key of `required` the body does not carry (null counts as given). */
export function requireKeys(body: Record<string, unknown>, required: readonly string[]): void {
  const issues: Issue[] = required
    .filter((k) => !Object.hasOwn(body, k))
    .map((k) => ({ code: "required", path: ["body", k], message: "Is required." }));
  if (issues.length > 0) throw new Refusal(400, issues);
}

/** The keys of `body` that `writable` names, for merging an update into an entity. */
export function pick(body: Record<string, unknown>, writable: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of writable) if (Object.hasOwn(body, k)) out[k] = body[k];
  return out;
}

/** The writable fields of a connection body (create and update alike). */
const CONNECTION_WRITABLE = ["name", "type", "protocol", "ipaddress", "ipv6Address", "port", "manufacturer"];

/**
 * The connection fields a connection body gives, for create and update alike: `name` and `type` are
 * required (else 400), and the body's `macaddress` is the resource's `macAddress`. What each type
 * needs or may not have, and its defaults, are the connection schema's (one rule for snapshots and writes).
 */
export function connectionFields(b: Record<string, unknown>): Record<string, unknown> {
  requireKeys(b, ["name", "type"]);
  const out = pick(b, CONNECTION_WRITABLE);
  if (Object.hasOwn(b, "macaddress")) out.macAddress = b.macaddress;
  return out;
}

/** A problem of the connection a body became, at the body's own spelling: `body.macAddress` is `body.macaddress`. */
export function connectionBodyIssue(i: Issue): Issue {
  return i.path[0] === "body" && i.path[1] === "macAddress" ? { ...i, path: ["body", "macaddress", ...i.path.slice(2)] } : i;
}

/** Parses a connection made from a body with `schema`; every problem is a 400 at the body's own field. */
export function parseConnectionBody<T>(schema: z.ZodType<T>, value: unknown): T {
  try {
    return parseBody(schema, value);
  } catch (e) {
    if (e instanceof Refusal) throw new Refusal(e.status, e.issues.map(connectionBodyIssue));
    throw e;
  }
}

const NETWORK = z.object({
  dhcp: z.boolean(),
  netmask: z.string().nullable().optional(),
  gateway: z.string().nullable().optional(),
  dns: z.string().nullable().optional(),
});

/** The network settings configure network stores on a connection. */
interface NetworkFields {
  dhcp?: boolean | null;
  netmask?: string | null;
  gateway?: string | null;
  dns?: string | null;
}

/**
 * Configure network (2.0 and 1.0): only a VENDOR_A controller takes it (409 otherwise, naming the
 * connection as `label`); `dhcp` is required, and the body's `netmask`/`gateway`/`dns` are stored
 * (null clears one), the others kept.
 */
export function configureNetwork(c: NetworkFields, manufacturer: unknown, label: string, body: unknown): void {
  if (manufacturer !== "VENDOR_A")
    refuse(409, "conflict", ["manufacturer"], `Connection ${label} is ${manufacturer == null ? "of no known manufacturer" : `a ${String(manufacturer)} controller`}; network configuration applies to VENDOR_A controllers only.`);
  const b = objectBody(body);
  requireKeys(b, ["dhcp"]);
  const parsed = parseBody(NETWORK, pick(b, ["dhcp", "netmask", "gateway", "dns"]));
  c.dhcp = parsed.dhcp;
  for (const k of ["netmask", "gateway", "dns"] as const) if (Object.hasOwn(b, k)) c[k] = parsed[k] ?? null;
}
