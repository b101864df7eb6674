// `Authorization: Bearer <token>` (RFC 6750 §2.1).

// token68 of RFC 7235: the characters a bearer token may have.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Whether `s` can be sent as a bearer token at all (letters, digits, `-._~+/`, then `=` padding). */
export function isBearerToken(s: string): boolean {
  return TOKEN68.test(s);
}

/**
 * The bearer token of an Authorization header value.
 * @returns the token, or null when the header is missing, uses another scheme or is malformed.
 */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null;
  const m = BEARER.exec(header);
  return m === null ? null : m[1]!;
}
