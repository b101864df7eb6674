// Credential invitations and self-help resets (semantics I80–I89): the invite id of a digital
// credential, a MAC under the service secret (I80), and the monthly count of a holder's self-help
// resets with the restriction records of the resets refused (I84–I89), kept as SelfHelpRecords in
// the registry (one per holder and UTC calendar month) and changed with `ifVersion` so that two
// processes of one database count every reset once.
import type { SystemSnapshot } from "../../model/types.js";
import { StaleRecord, type TenantRegistry } from "../tenants/registry.js";
import { KIND, type SelfHelpRecord } from "./records.js";
import { mac } from "./secret.js";

/** Self-help resets a holder may make per calendar month when nothing says otherwise (I85). */
export const DEFAULT_RESETS_PER_MONTH = 1;

/** One restriction: a credential whose self-help reset was refused this month, until cleared (I86). */
export interface Restriction {
  readonly holderId: string;
  readonly systemId: string;
  readonly credentialId: string;
}

/**
 * The invite id of a digital credential (I80): 122 bits of an HMAC of the system, holder and
 * credential ids under the service secret, written as a UUID (version 8, RFC 9562's custom one).
 * The same at create time and at invite time, in every process of one database; unguessable
 * without the secret.
 */
export function inviteIdOf(secret: Buffer, systemId: string, holderId: string, credentialId: string): string {
  const bytes = Buffer.from(mac(secret, "invite-id", systemId, holderId, credentialId), "base64url").subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The UTC calendar month of an instant, `YYYY-MM`. */
export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** The first instant of the UTC month after the one of `ms`. */
export function monthEnd(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Whole seconds from `ms` to the end of its month (at least 1): a refused reset's `Retry-After`. */
export function secondsToMonthEnd(ms: number): number {
  return Math.max(1, Math.ceil((monthEnd(ms) - ms) / 1000));
}

/** The record id of a holder's self-help in one month. */
export function selfHelpId(systemId: string, holderId: string, month: string): string {
  return `${systemId}|${holderId}|${month}`;
}

/**
 * The self-help resets per month of a 2.0 system (I85): the lowest `credentialResetsPerMonth` of its
 * cloud nodes, a node without one counting as the default. A holder's credential works at every
 * node, so the strictest node decides.
 */
export function resetsPerMonth(snapshot: SystemSnapshot): number {
  let lowest = Number.POSITIVE_INFINITY;
  for (const node of snapshot.cloudNodes)
    lowest = Math.min(lowest, node.credentialResetsPerMonth ?? DEFAULT_RESETS_PER_MONTH);
  return Number.isFinite(lowest) ? lowest : DEFAULT_RESETS_PER_MONTH;
}

function current(
  registry: TenantRegistry,
  systemId: string,
  holderId: string,
  now: number,
): { id: string; version: number; value: SelfHelpRecord } {
  const month = monthOf(now);
  const id = selfHelpId(systemId, holderId, month);
  const row = registry.record(KIND.resets, id);
  const value = (row?.value as SelfHelpRecord | undefined) ?? { systemId, holderId, month, count: 0, restricted: [] };
  return { id, version: row?.version ?? 0, value };
}

/** The holder's restrictions in force at `now` (this month's, not cleared). */
export function restrictionsOf(
  registry: TenantRegistry,
  systemId: string,
  holderId: string,
  now: number,
): Restriction[] {
  const { value } = current(registry, systemId, holderId, now);
  return value.restricted.map((credentialId) => ({ holderId, systemId, credentialId }));
}

/** Deletions of the holder's records of earlier months: they restrict nothing any more. */
function earlierMonths(registry: TenantRegistry, systemId: string, holderId: string, month: string) {
  const out: { op: "deleteRecord"; kind: string; id: string }[] = [];
  for (const row of registry.records(KIND.resets)) {
    const v = row.value as SelfHelpRecord;
    if (v.systemId === systemId && v.holderId === holderId && v.month < month)
      out.push({ op: "deleteRecord", kind: KIND.resets, id: row.id });
  }
  return out;
}

/** Runs a records update again when another process changed the record in between (I4), at most 5 times. */
async function retried<T>(attempt: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof StaleRecord) || i >= 4) throw e;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
    }
  }
}

/** What a self-help reset asked. */
export interface ResetRequest {
  readonly systemId: string;
  readonly holderId: string;
  readonly credentialId: string;
  /** Resets allowed per month (resetsPerMonth). */
  readonly limit: number;
  readonly now: number;
}

/** A reset counted (`remaining` this month), or refused (the credential is restricted until `retryAfter` s). */
export type ResetOutcome =
  | { readonly allowed: true; readonly remaining: number }
  | { readonly allowed: false; readonly retryAfter: number };

/**
 * Counts one self-help reset (I85, I86): allowed while the holder's count this month is below the
 * limit and the credential is not restricted; otherwise refused, and the credential restricted
 * until the month ends or the restriction is cleared.
 */
export function recordReset(registry: TenantRegistry, r: ResetRequest): Promise<ResetOutcome> {
  return retried(() =>
    registry.updateRecords(() => {
      const { id, version, value } = current(registry, r.systemId, r.holderId, r.now);
      const retry = { allowed: false as const, retryAfter: secondsToMonthEnd(r.now) };
      // A restricted credential stays refused until cleared, whatever the count.
      if (value.restricted.includes(r.credentialId)) return { changes: [], result: retry };
      const allowed = value.count < r.limit;
      const next: SelfHelpRecord = allowed
        ? { ...value, count: value.count + 1 }
        : { ...value, restricted: [...value.restricted, r.credentialId] };
      const result: ResetOutcome = allowed ? { allowed, remaining: Math.max(0, r.limit - next.count) } : retry;
      const older = version === 0 ? earlierMonths(registry, r.systemId, r.holderId, value.month) : [];
      return {
        changes: [...older, { op: "putRecord", kind: KIND.resets, id, value: next, ifVersion: version }],
        result,
      };
    }),
  );
}

/**
 * Clears restrictions (I87): the one of `credentialId`, or every one of the holder; either way the
 * holder's count this month starts again, so that a reset is allowed again. Nothing to clear: no change.
 */
export function clearRestrictions(
  registry: TenantRegistry,
  c: { readonly systemId: string; readonly holderId: string; readonly credentialId?: string; readonly now: number },
): Promise<void> {
  return retried(() =>
    registry.updateRecords(() => {
      const { id, version, value } = current(registry, c.systemId, c.holderId, c.now);
      if (version === 0) return { changes: [], result: undefined };
      const restricted = c.credentialId === undefined ? [] : value.restricted.filter((x) => x !== c.credentialId);
      const next: SelfHelpRecord = { ...value, count: 0, restricted };
      return {
        changes: [{ op: "putRecord", kind: KIND.resets, id, value: next, ifVersion: version }],
        result: undefined,
      };
    }),
  );
}
