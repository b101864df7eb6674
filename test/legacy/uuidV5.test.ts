// UUID v5 of migrated ids: pure-JS SHA-1 (no node:crypto), byte-identical to the RFC 9562 definition.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { expect, test } from "vitest";
import { URL_NAMESPACE, systemNamespace, uuidV5 } from "../../src/legacy1/migration/uuidV5.js";

// The definition, written with node:crypto, to compare against.
function reference(namespace: string, name: string): string {
  const hash = createHash("sha1")
    .update(Buffer.from(namespace.replace(/-/g, ""), "hex"))
    .update(name, "utf8")
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

test("RFC 9562 test vector: www.example.com in the DNS namespace", () => {
  expect(uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com")).toBe(
    "2ed6657d-e927-568b-95e1-2665a8aea6a2",
  );
});

test("equals the node:crypto definition for any namespace and name (unicode included)", () => {
  fc.assert(
    fc.property(fc.uuid(), fc.string({ unit: "binary", maxLength: 200 }), (ns, name) => {
      expect(uuidV5(ns, name)).toBe(reference(ns, name));
    }),
    { numRuns: 500 },
  );
  expect(uuidV5(URL_NAMESPACE.toUpperCase(), "ü/𝄞")).toBe(reference(URL_NAMESPACE, "ü/𝄞"));
  expect(systemNamespace("CN-2402-CHI-00117")).toBe(reference(URL_NAMESPACE, "CN-2402-CHI-00117"));
});
