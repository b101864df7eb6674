// Card numbers of any width up to 512 bits (docs/semantics.md CN lines). A number up to 2^53−1 is a
// JSON number, as it always was; a wider one (7-byte UIDs, 64-bit cards, PIV-I, FASC-N) is a decimal
// string, because JSON parsers round numbers past 2^53−1 to the nearest double and two cards would
// then share a spelling. A string naming a safe value is read as that number, so each card has
// exactly one spelling and `===` compares card numbers of every width.

/** A card or credential number: a non-negative safe integer, or the canonical decimal string of a wider value. */
export type CardNumber = number | string;

/** Widest card number: a frame carries at most 512 bits (MAX_FRAME_BITS). */
export const MAX_CARD_NUMBER_BITS = 512;
/** Digits of 2^512−1, the widest card number written out. */
export const MAX_CARD_NUMBER_DIGITS = 155;

const MAX_WIDE = (1n << BigInt(MAX_CARD_NUMBER_BITS)) - 1n;

/** Digits without a leading zero (or `0` alone), at most MAX_CARD_NUMBER_DIGITS: cheap to test before BigInt. */
function isCanonicalDigits(s: string): boolean {
  const n = s.length;
  if (n === 0 || n > MAX_CARD_NUMBER_DIGITS) return false;
  if (n > 1 && s.charCodeAt(0) === 48) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  // 155 digits can exceed 2^512−1; only then is the BigInt needed.
  return n < MAX_CARD_NUMBER_DIGITS || BigInt(s) <= MAX_WIDE;
}

/**
 * Whether `v` is a card number as a snapshot, request or API body may write it: a non-negative safe
 * integer, or a decimal string of 1 to 155 digits without leading zeros whose value is at most 2^512−1.
 * @example
 * isCardNumber("18446744073709551615"); //=> true
 * isCardNumber("0042"); //=> false (not canonical)
 */
export function isCardNumber(v: unknown): boolean {
  if (typeof v === "number") return Number.isSafeInteger(v) && v >= 0;
  return typeof v === "string" && isCanonicalDigits(v);
}

/**
 * The one spelling of a valid card number (isCardNumber): a string of a safe value becomes the number,
 * a wider one stays the string.
 * @example
 * cardNumberValue("42"); //=> 42
 */
export function cardNumberValue(v: number | string): CardNumber {
  if (typeof v === "number") return v;
  // 16 digits or fewer: the value is below 10^16, a double holds it exactly; test it against 2^53−1.
  if (v.length <= 16) {
    const n = Number(v);
    if (n <= Number.MAX_SAFE_INTEGER) return n;
  }
  return v;
}

/** What is wrong with a card number that isCardNumber refuses, in one sentence. */
export function cardNumberProblem(v: unknown, orNull: boolean): string {
  if (typeof v === "number" && !Number.isFinite(v)) return "Must be a finite number.";
  if (typeof v === "string")
    return `Must be a decimal string of digits without leading zeros, at most 2^${MAX_CARD_NUMBER_BITS}−1 (${MAX_CARD_NUMBER_DIGITS} digits).`;
  return orNull ? "Must be a non-negative integer or null." : "Must be a non-negative integer.";
}

/** A card number as a BigInt (for ordering and bit arithmetic off the hot path). */
export function cardNumberBig(v: CardNumber): bigint {
  return BigInt(v);
}

/** The card number of a BigInt value: a number while it is safe, else its decimal string. */
export function cardNumberOfBig(v: bigint): CardNumber {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

/** Orders card numbers by value (numbers below every wide string; wide strings by length, then digits). */
export function compareCardNumbers(a: CardNumber, b: CardNumber): number {
  if (typeof a === "number") return typeof b === "number" ? a - b : -1;
  if (typeof b === "number") return 1;
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The value of `length` bits read MSB first from `offset` of `bits` (one bit, 0 or 1, per element, or
 * a string of `0` and `1`) as a CardNumber. Builds a BigInt and a string only past 53 bits of value:
 * the decision path calls it only when its numeric read overflowed.
 */
export function wideFieldValue(bits: Uint8Array | string, offset: number, length: number): CardNumber {
  let v = 0n;
  // 32 bits at a time: one BigInt step per word instead of per bit.
  let i = offset;
  const end = offset + length;
  while (i < end) {
    const take = end - i < 32 ? end - i : 32;
    let w = 0;
    for (let k = 0; k < take; k++) w = w * 2 + bitAt(bits, i + k);
    v = (v << BigInt(take)) | BigInt(w);
    i += take;
  }
  return cardNumberOfBig(v);
}

function bitAt(bits: Uint8Array | string, i: number): number {
  return typeof bits === "string" ? bits.charCodeAt(i) - 48 : bits[i]!;
}
