// Where new ids come from: random UUID v4 by default; a seeded source for tests and replays.

/** Returns a new id for each call. */
export type IdSource = () => string;

function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}

function v4(fill: (bytes: Uint8Array) => void): string {
  const b = new Uint8Array(16);
  fill(b);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  return hex(b);
}

/**
 * UUID v4 from the platform's cryptographic random source (Web Crypto, present in Node 20 and edge
 * runtimes): the default id source of a live system.
 * @example
 * randomIds(); //=> "3f2b8c1e-…-4…" (a fresh UUID v4 each call)
 */
export const randomIds: IdSource = () => v4((b) => globalThis.crypto.getRandomValues(b));

/**
 * UUID v4-shaped ids drawn from a PRNG seeded with `n` (mulberry32): the same number gives the same
 * sequence, so a replayed batch of creates gets the same ids.
 * @example
 * const ids = seededIds(7);
 * ids() === seededIds(7)(); //=> true
 */
export function seededIds(n: number): IdSource {
  let a = n >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  return () =>
    v4((b) => {
      for (let i = 0; i < 16; i += 4) {
        const x = next();
        b[i] = x & 0xff;
        b[i + 1] = (x >>> 8) & 0xff;
        b[i + 2] = (x >>> 16) & 0xff;
        b[i + 3] = x >>> 24;
      }
    });
}
