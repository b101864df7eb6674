// RFC 9562 UUID version 5 (SHA-1, name-based): the same namespace and name give the same id.
// SHA-1 comes from @noble/hashes (pure JS, bundled into dist), not node:crypto, so the package's
// root entry runs where Node's built-in modules do not (edge runtimes, browsers).
import { sha1 } from "@noble/hashes/legacy.js";
import { die } from "../../model/index.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** RFC 9562 namespace for URLs; system ids that are not UUIDs are hashed under it. */
export const URL_NAMESPACE = "6ba7b811-9dad-11d1-80b4-00c04fd430c8";

export function isUuid(s: string): boolean {
  return UUID.test(s);
}

const utf8 = new TextEncoder();

/** The version-5 UUID of `name` in `namespace` (a UUID). */
export function uuidV5(namespace: string, name: string): string {
  if (!isUuid(namespace)) die("namespaceNotUuid", namespace);
  const nameBytes = utf8.encode(name);
  const input = new Uint8Array(16 + nameBytes.length);
  const ns = namespace.replace(/-/g, "");
  for (let i = 0; i < 16; i++) input[i] = parseInt(ns.slice(2 * i, 2 * i + 2), 16);
  input.set(nameBytes, 16);
  const hash = sha1(input);
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 9562 variant
  let hex = "";
  for (let i = 0; i < 16; i++) hex += hash[i]!.toString(16).padStart(2, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The namespace of a system's migrated ids: the system id when it is a UUID, else its v5 hash. */
export function systemNamespace(systemId: string): string {
  return isUuid(systemId) ? systemId.toLowerCase() : uuidV5(URL_NAMESPACE, systemId);
}
