// Body checks shared by the operations: zod schemas of the snapshot entities, with paths under `body`.
import type { z } from "zod";
import { type Issue, fromZodIssues, zodMessage } from "../model/index.js";
import { Refusal } from "./operation.js";

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

/**
 * A connection body's requirements by type (seed 001 "Connection body", which seed 002 takes too):
 * `ipaddress` for ethernet and wirelessGateway, `port` unless lockhub, `macaddress` for lockhub,
 * and the ethernet-only fields on ethernet only. Every problem is a 400 under `body`.
 */
export function checkConnectionBody(b: Record<string, unknown>): void {
  const issues: Issue[] = [];
  if ((b.type === "ethernet" || b.type === "wirelessGateway") && (b.ipaddress === undefined || b.ipaddress === null))
    issues.push({ code: "required", path: ["body", "ipaddress"], message: `A ${String(b.type)} connection needs an ipaddress.` });
  if (b.type !== "lockhub" && (b.port === undefined || b.port === null))
    issues.push({ code: "required", path: ["body", "port"], message: `A ${String(b.type)} connection needs a port.` });
  if (b.type === "lockhub" && (b.macaddress === undefined || b.macaddress === null))
    issues.push({ code: "required", path: ["body", "macaddress"], message: "A lockhub connection needs a macaddress." });
  for (const k of ["ipv6Address", "manufacturer", "protocol"])
    if (b.type !== "ethernet" && b[k] !== undefined && b[k] !== null)
      issues.push({ code: "invalid", path: ["body", k], message: `${k} is used by ethernet connections only.` });
  if (issues.length > 0) throw new Refusal(400, issues);
}
