// Holders and their credentials: enabled or not, activation and expiry dates, PINs drawn from a
// small pool (so holders share them) and duress PINs, card credentials with or without facility
// codes, digital credentials (touch, token, pending). Numbers come from small pools so cards,
// e-cards and requests meet; duplicates are dropped when the snapshot is built.
import fc from "fast-check";
import { FACILITY_CODES } from "./cardFormat.js";
import { clockSecondsArb, dayArb } from "./window.js";

export const PIN_POOL = ["1234", "4321", "0000", "1111", "98765", "07", "2468", "13579", "8080", "5150"] as const;

export type CredentialKind = "card" | "cardTouch" | "touch" | "token" | "touchToken" | "pendingTouch" | "pendingToken";

export interface CredentialSpec {
  readonly kind: CredentialKind;
  /** A number, or the decimal string of one past 2^53−1 (CN1). */
  readonly number: number | string;
  readonly facilityCode: number | null;
  readonly withHolderId: boolean;
}

/** A local date-time as day number + seconds, or null / absent. */
export type LocalDateTimeSpec = { readonly day: number; readonly seconds: number } | null | undefined;

export interface HolderSpec {
  readonly enabled: boolean | undefined;
  readonly activeDate: LocalDateTimeSpec;
  readonly expireDate: LocalDateTimeSpec;
  /** Index into PIN_POOL, or null / absent. */
  readonly pin: number | null | undefined;
  readonly duressPin: number | null | undefined;
  readonly groupMask: number;
  readonly groupsAsObjects: boolean;
  readonly credentials: CredentialSpec[];
}

/**
 * Card numbers: tiny (collide with e-cards and guesses), 16-bit (H10301), sometimes huge, and past
 * 2^53−1 as the decimal strings a snapshot writes them in (CN1): 2^53 itself, 56- and 64-bit UIDs,
 * and 128- to 512-bit values (PIV-I, FASC-N).
 */
export const cardNumberArb: fc.Arbitrary<number | string> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 20 }) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 65_535 }) },
  { weight: 1, arbitrary: fc.integer({ min: 65_536, max: 2 ** 31 }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.MAX_SAFE_INTEGER, 2 ** 52, 2 ** 53 - 2) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom(2n ** 53n, 2n ** 53n + 1n, 2n ** 64n - 1n, 2n ** 512n - 1n),
        fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n - 1n }),
        fc.bigInt({ min: 2n ** 53n, max: 2n ** 200n - 1n }),
      )
      .map((v) => v.toString()),
  },
);

export const facilityCodeArb: fc.Arbitrary<number | null> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 5, arbitrary: fc.constantFrom(...FACILITY_CODES) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 4095 }) },
);

const credentialSpecArb: fc.Arbitrary<CredentialSpec> = fc.record({
  kind: fc.oneof(
    { weight: 6, arbitrary: fc.constant<CredentialKind>("card") },
    { weight: 1, arbitrary: fc.constant<CredentialKind>("cardTouch") },
    { weight: 3, arbitrary: fc.constantFrom<CredentialKind>("touch", "token", "touchToken") },
    { weight: 1, arbitrary: fc.constantFrom<CredentialKind>("pendingTouch", "pendingToken") },
  ),
  number: cardNumberArb,
  facilityCode: facilityCodeArb,
  withHolderId: fc.boolean(),
});

const localDateTimeSpecArb: fc.Arbitrary<LocalDateTimeSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(null, undefined) },
  { weight: 1, arbitrary: fc.record({ day: dayArb, seconds: clockSecondsArb }) },
);

const pinPickArb: fc.Arbitrary<number | null | undefined> = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(null, undefined) },
  { weight: 3, arbitrary: fc.nat(PIN_POOL.length - 1) },
);

export const holderSpecArb: fc.Arbitrary<HolderSpec> = fc.record({
  enabled: fc.oneof(
    { weight: 7, arbitrary: fc.constantFrom(undefined, true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
  activeDate: localDateTimeSpecArb,
  expireDate: localDateTimeSpecArb,
  pin: pinPickArb,
  duressPin: fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(null, undefined) },
    { weight: 1, arbitrary: fc.nat(PIN_POOL.length - 1) },
  ),
  groupMask: fc.nat(15),
  groupsAsObjects: fc.boolean(),
  credentials: fc.oneof(
    { weight: 1, arbitrary: fc.constant(null).map((): CredentialSpec[] => []) },
    { weight: 5, arbitrary: fc.array(credentialSpecArb, { minLength: 1, maxLength: 3 }) },
  ),
});
