// The authorizer of `rsop serve --token`: one shared secret, compared in constant time.
import { createHash, timingSafeEqual } from "node:crypto";
import { isBearerToken } from "../../service/auth/bearerToken.js";

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

/**
 * An `authorize` function that accepts exactly `token`, for every system id. Both sides are hashed
 * first so that the comparison takes the same time whatever the length or content of the guess.
 * @param token - the expected bearer token: letters, digits, `-._~+/`, then `=` padding.
 * @returns the authorizer.
 * @throws TypeError for a token no client could send.
 */
export function tokenAuthorizer(token: string): (presented: string, systemId: string) => boolean {
  if (!isBearerToken(token))
    throw new TypeError("a bearer token is letters, digits and -._~+/ (then = padding), and not empty");
  const expected = digest(token);
  return (presented) => timingSafeEqual(digest(presented), expected);
}
