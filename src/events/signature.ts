// The notification signature: lowercase hex HMAC-SHA1 of the raw body with the subscription secret,
// sent as X-SERVICE-SIGNATURE; receivers compare it in constant time.
import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The signature header's name, as every notification spells it (HTTP header names are
 * case-insensitive: Node's `request.headers` has it as `x-service-signature`).
 * @example
 * SIGNATURE_HEADER; //=> "X-SERVICE-SIGNATURE"
 */
export const SIGNATURE_HEADER = "X-SERVICE-SIGNATURE";

/**
 * Signs a notification body.
 * @param body - the raw body exactly as sent (a string is signed as its UTF-8 bytes).
 * @param secret - the subscription's secret.
 * @returns the lowercase hexadecimal HMAC-SHA1 (40 characters).
 * @example
 * signBody('{"topic":"entity.added"}', "s3cret"); //=> "b35a7f8492f294766003e50bb5fa243cd210da92"
 */
export function signBody(body: string | Uint8Array, secret: string): string {
  return createHmac("sha1", secret).update(body).digest("hex");
}

/**
 * Whether `header` is the signature of `body` with `secret`, compared in constant time (the time
 * says nothing about how much of a forged signature is right). The header may be upper or lower
 * case hex, with surrounding spaces; anything but 40 hex digits is false.
 * @param body - the raw body exactly as received (bytes, or the string it decodes to as UTF-8).
 * @param header - the X-SERVICE-SIGNATURE header (null or undefined when absent: false).
 * @param secret - the subscription's secret.
 * @returns true when the signature matches.
 * @example
 * verifySignature(body, request.headers["x-service-signature"], process.env.WEBHOOK_SECRET); //=> true
 */
export function verifySignature(body: string | Uint8Array, header: string | null | undefined, secret: string): boolean {
  if (typeof header !== "string") return false;
  const given = header.trim().toLowerCase();
  const expected = Buffer.from(signBody(body, secret), "ascii");
  // A malformed header is compared against the expected value anyway, so that its shape costs the
  // same time as a well-formed wrong one.
  const ok = /^[0-9a-f]{40}$/.test(given);
  const presented = Buffer.from(ok ? given : "0".repeat(40), "ascii");
  return timingSafeEqual(presented, expected) && ok;
}
