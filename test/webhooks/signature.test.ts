// signBody / verifySignature: HMAC-SHA1 in lowercase hex (a published test vector), and a
// verification that accepts exactly the right signature.
import { expect, test } from "vitest";
import { signBody, verifySignature } from "../../src/webhooks.js";

const BODY = "The quick brown fox jumps over the lazy dog";
const SIGNATURE = "de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9"; // HMAC-SHA1, key "key" (RFC 2104 examples, Wikipedia)

test("signBody is the lowercase hex HMAC-SHA1 of the raw body, the same for a string and its UTF-8 bytes", () => {
  expect(signBody(BODY, "key")).toBe(SIGNATURE);
  expect(signBody(new TextEncoder().encode(BODY), "key")).toBe(SIGNATURE);
  expect(signBody('{"name":"Zoë"}', "s")).toBe(signBody(Buffer.from('{"name":"Zoë"}', "utf8"), "s"));
});

test("verifySignature accepts the signature (either case, trimmed) and refuses any other body, secret or header", () => {
  expect(verifySignature(BODY, SIGNATURE, "key")).toBe(true);
  expect(verifySignature(BODY, ` ${SIGNATURE.toUpperCase()} `, "key")).toBe(true);
  expect(verifySignature(`${BODY}.`, SIGNATURE, "key")).toBe(false);
  expect(verifySignature(BODY, SIGNATURE, "Key")).toBe(false);
  expect(verifySignature(BODY, `${SIGNATURE.slice(0, 39)}0`, "key")).toBe(false);
  expect(verifySignature(BODY, SIGNATURE.slice(0, 39), "key")).toBe(false);
  expect(verifySignature(BODY, `${SIGNATURE}00`, "key")).toBe(false);
  expect(verifySignature(BODY, `sha1=${SIGNATURE}`, "key")).toBe(false);
  expect(verifySignature(BODY, "", "key")).toBe(false);
  expect(verifySignature(BODY, null, "key")).toBe(false);
  expect(verifySignature(BODY, undefined, "key")).toBe(false);
});
