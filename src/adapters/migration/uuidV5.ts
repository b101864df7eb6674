// RFC 9562 UUID version 5 (SHA-1, name-based): the same namespace and name give the same id.
import { createHash } from "node:crypto";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** RFC 9562 namespace for URLs; system ids that are not UUIDs are hashed under it. */
export const URL_NAMESPACE = "6ba7b811-9dad-11d1-80b4-00c04fd430c8";

export function isUuid(s: string): boolean {
  return UUID.test(s);
}

/** The version-5 UUID of `name` in `namespace` (a UUID). */
export function uuidV5(namespace: string, name: string): string {
  if (!isUuid(namespace)) throw new Error(`namespace "${namespace}" is not a UUID`);
  const hash = createHash("sha1").update(Buffer.from(namespace.replace(/-/g, ""), "hex")).update(name, "utf8").digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The namespace of a system's migrated ids: the system id when it is a UUID, else its v5 hash. */
export function systemNamespace(systemId: string): string {
  return isUuid(systemId) ? systemId.toLowerCase() : uuidV5(URL_NAMESPACE, systemId);
}
