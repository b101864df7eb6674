// The service's own secret (semantics I7): 32 random bytes made once per service database and kept
// in the registry, so that every process of a shared database computes the same MACs (CSRF fields,
// invite ids, refresh tokens). Never shown, never logged.
import { createHmac, randomBytes } from "node:crypto";
import type { TenantRegistry } from "../tenants/registry.js";
import { KIND, type SecretRecord } from "./records.js";

/** The service secret, made and stored at first use. */
export async function serviceSecret(registry: TenantRegistry): Promise<Buffer> {
  const found = registry.record(KIND.secret, "service")?.value as SecretRecord | undefined;
  if (found !== undefined) return Buffer.from(found.value, "base64url");
  const made: SecretRecord = { value: randomBytes(32).toString("base64url"), created: new Date().toISOString() };
  try {
    await registry.updateRecords(() => {
      // Another request made it while this one waited in the queue: keep that one.
      if (registry.record(KIND.secret, "service") !== undefined) return { changes: [], result: undefined };
      return {
        changes: [{ op: "putRecord", kind: KIND.secret, id: "service", value: made, ifVersion: 0 }],
        result: undefined,
      };
    });
  } catch (e) {
    // Another process made it first (ifVersion 0): re-read below.
    await registry.refresh();
    if (registry.record(KIND.secret, "service") === undefined) throw e;
  }
  return Buffer.from((registry.record(KIND.secret, "service")!.value as SecretRecord).value, "base64url");
}

/** HMAC-SHA256 of `parts` (joined by NUL) under the service secret, base64url; `purpose` separates uses. */
export function mac(secret: Buffer, purpose: string, ...parts: readonly string[]): string {
  return createHmac("sha256", secret)
    .update([purpose, ...parts].join("\0"))
    .digest("base64url");
}
