// Broken invariants: what the code's own checks make impossible (a validated snapshot with an unknown
// layout, a reason code missing from its table). They all go through `die`, so a bug report carries
// one code to search for and the messages sit in one table. Errors a caller can cause keep their own
// classes: SnapshotError, QueryError, a live write's Refusal, the Wiegand codec's RangeError.

/** The message of each invariant, from the arguments `die` was given. */
const INVARIANTS = {
  intlOutput: (text: string, zone: string) => `unexpected Intl output "${text}" for zone ${zone}`,
  invalidZone: (zone: string) => `invalid time zone "${zone}"`,
  unknownLayout: (name: string) => `unknown card layout "${name}"`,
  unknownReason: (reason: string) => `no reason code ${reason}`,
  unknownRelation: (from: string, to: string) => `no reference from ${from} to ${to}`,
  namespaceNotUuid: (namespace: string) => `namespace "${namespace}" is not a UUID`,
} as const;

/** The code of a broken invariant. */
export type InvariantCode = keyof typeof INVARIANTS;

/**
 * Throws the Error of a broken invariant: a bug in this library, never a caller's mistake.
 * @param code - which invariant broke.
 * @param args - what its message names.
 */
export function die<C extends InvariantCode>(code: C, ...args: Parameters<(typeof INVARIANTS)[C]>): never {
  const message = (INVARIANTS[code] as (...a: readonly string[]) => string)(...args);
  throw new Error(`rsop-engine internal error (${code}): ${message}`);
}
