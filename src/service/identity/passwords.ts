// Passwords and client secrets, stored as a salted memory-hard hash (semantics I2): node's scrypt
// with N = 2^15, r = 8, p = 1 (32 MiB and about 65 ms per hash on this project's CI machine), a
// 16-byte random salt, a 32-byte key. The stored form names its parameters, so that they can grow
// later without breaking what is stored: `scrypt$15$8$1$<salt b64url>$<key b64url>`.
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
// scrypt needs 128·N·r bytes; node's default ceiling (32 MiB) is exactly that, so allow a margin.
const MAX_MEM = 64 * 1024 * 1024;

function derive(secret: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret.normalize("NFC"), salt, KEY_BYTES, { N: 2 ** logN, r, p, maxmem: MAX_MEM }, (e, key) =>
      e === null ? resolve(key) : reject(e),
    ),
  );
}

/** The stored form of a password or client secret (a new random salt each time). */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(secret, salt, LOG_N, R, P);
  return `scrypt$${LOG_N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** A hash of nothing anyone knows: verified against when no user or client matches, so that the time says nothing. */
let decoy: Promise<string> | undefined;

/**
 * Whether `secret` is the one `stored` was made from, compared in constant time. `stored` undefined
 * (no such user or client): a decoy hash is checked so that an unknown name costs the same time.
 */
export async function verifySecret(secret: string, stored: string | undefined): Promise<boolean> {
  const used = stored ?? (await (decoy ??= hashSecret(randomBytes(16).toString("base64url"))));
  const parts = used.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [logN, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (!(logN >= 10 && logN <= 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16)) return false;
  const expected = Buffer.from(parts[5]!, "base64url");
  const key = await derive(secret, Buffer.from(parts[4]!, "base64url"), logN, r, p);
  return stored !== undefined && expected.length === key.length && timingSafeEqual(expected, key);
}
