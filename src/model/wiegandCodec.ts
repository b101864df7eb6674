// Wiegand simulation helpers: build the bit string a reader would send for a card, and read one back.
// Meant for people and tests (clear errors, BigInt where fields are wide); the decision hot path has
// its own compiled decoder in src/compile/. Both read a frame the same way: positions are 0-based from
// the first bit sent, fields are MSB first, fixed runs are not decoded, marker bits are checked.
import {
  type BitField,
  KNOWN_CARD_FORMATS,
  type ResolvedLayout,
  entryLayout,
  resolveCustomLayout,
} from "./cardFormats.js";
import { type CardNumber, cardNumberOfBig, isCardNumber } from "./cardNumber.js";
import { formatIssues } from "./issue.js";
import type { CardFormat } from "./types.js";
import { validateLayout } from "./validateCardFormat.js";

/**
 * The numbers to put on a card. `facilityCode` is 0 when left out, and must be left out or null for a
 * format without one. `cardNumber` is a CardNumber (a safe integer or a canonical decimal string) or a
 * BigInt, so that fields up to 512 bits can be written.
 */
export interface WiegandFields {
  readonly facilityCode?: number | null;
  readonly cardNumber: CardNumber | bigint;
}

/**
 * What a frame holds: null for a field the format lacks (and a facility code above 2^53−1). The card
 * number is exact at any width: a number up to 2^53−1, else its decimal string (CN3).
 */
export interface DecodedWiegand {
  readonly facilityCode: number | null;
  readonly cardNumber: CardNumber | null;
  /** True when every parity bit of the format checks out and every marker bit holds its value. */
  readonly parityOk: boolean;
}

/** Frames longer than the longest a card format may accept (`max_input_bits` ≤ 512) are refused. */
const MAX_FRAME_BITS = 512;

/**
 * Looks up the bit layout of a card format.
 *
 * @param format - A well-known id such as `"H10301"`, or a card-format entry: the well-known layout its
 *   `layout` names, its custom `layout` (checked against its `min_input_bits`), else the well-known
 *   layout of its `id`; an entry with neither a `layout` nor a well-known `id` is raw.
 * @returns The layout: field positions, parity bits in encoding order, and `bits` (null for a custom
 *   or raw layout). A raw format has `raw: true`, no facility code and no parity: the whole frame is
 *   the card number.
 * @throws Error when the id or layout name is not a well-known format, or the custom layout is invalid.
 * @example
 * resolveCardFormat("H10301").cardNumber
 * //=> { offset: 9, length: 16 }
 */
export function resolveCardFormat(format: string | CardFormat): ResolvedLayout {
  if (typeof format === "string") {
    const known = KNOWN_CARD_FORMATS[format];
    if (known === undefined) throw new Error(`Unknown card format "${format}". ${KNOWN_NAMES}`);
    return known;
  }
  const resolved = entryLayout({ id: format.id, layout: format.layout ?? null });
  switch (resolved.kind) {
    case "known":
      return resolved.layout;
    case "unknownName":
      throw new Error(`Card format "${format.id}" names an unknown layout "${resolved.name}". ${KNOWN_NAMES}`);
    case "custom": {
      const issues = validateLayout(resolved.layout, format.min_input_bits);
      if (issues.length > 0)
        throw new Error(`Card format "${format.id}" has an invalid layout:\n${formatIssues(issues)}`);
      return resolveCustomLayout(resolved.layout);
    }
    case "raw":
      return {
        bits: null,
        facilityCode: null,
        cardNumber: { offset: 0, length: format.max_input_bits },
        parity: [],
        raw: true,
      };
  }
}

const KNOWN_NAMES = `Well-known ids: ${Object.keys(KNOWN_CARD_FORMATS).join(", ")}; for any other format pass a card-format entry with a layout.`;

/**
 * Builds the Wiegand frame a reader sends for a card: fields and fixed bits written MSB first, then
 * each parity bit in list order over the frame as it stands.
 *
 * @param format - A well-known id or a card-format entry (see {@link resolveCardFormat}).
 * @param fields - The facility code (0 when left out; null or left out when the format has none), a
 *   non-negative safe integer, and the card number: a non-negative safe integer, a canonical decimal
 *   string or a non-negative BigInt, up to 512 bits.
 * @param bits - Frame length. Well-known formats have their own (passing another throws); a custom
 *   layout defaults to the smallest frame that holds every position it uses; extra bits are 0. A raw
 *   format writes the card number right-aligned over the whole frame, `min_input_bits` long by default.
 * @returns The frame as a string of `0` and `1`, first bit sent first.
 * @throws RangeError when a value is not a valid number (as above) or does not fit its field, when
 *   a facility code is given for a format without one, or when `bits` does not suit the layout.
 * @example
 * encodeWiegand("H10301", { facilityCode: 1, cardNumber: 1 })
 * //=> "10000000100000000000000010"
 */
export function encodeWiegand(format: string | CardFormat, fields: WiegandFields, bits?: number): string {
  const layout = resolveCardFormat(format);
  const name = formatName(format);
  if (layout.raw === true) return encodeRaw(format as CardFormat, fields, bits);
  const needed = smallestFrame(layout);
  let length: number;
  if (layout.bits !== null) {
    if (bits !== undefined && bits !== layout.bits)
      throw new RangeError(`${name} frames are exactly ${layout.bits} bits; cannot encode ${bits}.`);
    length = layout.bits;
  } else {
    length = bits ?? needed;
    if (!Number.isInteger(length) || length < needed || length > MAX_FRAME_BITS)
      throw new RangeError(
        `The layout of ${name} needs a frame of ${needed} to ${MAX_FRAME_BITS} bits; got ${String(bits)}.`,
      );
  }

  const frame = new Uint8Array(length);
  for (const f of layout.fixed ?? [])
    write(frame, f, fieldValue(f.value, f, `${name} fixed bits ${f.offset}–${f.offset + f.length - 1}`));
  for (const m of layout.markers ?? []) frame[m.position] = m.value;
  const fc = fields.facilityCode ?? null;
  if (layout.facilityCode === null) {
    if (fc !== null)
      throw new RangeError(`${name} has no facility-code field; leave facilityCode out or null (got ${fc}).`);
  } else {
    write(frame, layout.facilityCode, fieldValue(fc ?? 0, layout.facilityCode, `${name} facilityCode`));
  }
  write(frame, layout.cardNumber, cardValue(fields.cardNumber, layout.cardNumber, `${name} cardNumber`));

  for (const p of layout.parity) {
    let ones = 0;
    for (const c of p.covers) ones += frame[c]!;
    // Even: the bit makes the count of 1s over it and its coverage even; odd: odd.
    frame[p.position] = (ones & 1) ^ (p.odd ? 1 : 0);
  }
  return frame.join("");
}

/**
 * Reads a Wiegand frame: its facility code, card number, and whether its parity checks out.
 *
 * @param format - A well-known id or a card-format entry (see {@link resolveCardFormat}).
 * @param bits - The frame as a string of `0` and `1`, first bit sent first. A well-known format needs
 *   exactly its length; a custom layout needs every position it uses, and bits past those are ignored;
 *   a raw format reads the whole frame as the card number.
 * @returns The decoded fields (null when the format has no such field, or for a facility code above
 *   2^53−1; a card number past 2^53−1 is its decimal string) and `parityOk`, false when a parity bit or a marker bit (Kastle's bit 1, a custom layout's
 *   `fixed` bits) is wrong; such a failure does not stop the fields from being read.
 * @throws TypeError when `bits` holds anything but `0` and `1`; RangeError when its length does not suit the format.
 * @example
 * decodeWiegand("H10301", "10000000100000000000000010")
 * //=> { facilityCode: 1, cardNumber: 1, parityOk: true }
 */
export function decodeWiegand(format: string | CardFormat, bits: string): DecodedWiegand {
  const layout = resolveCardFormat(format);
  const name = formatName(format);
  if (typeof bits !== "string" || !/^[01]*$/.test(bits))
    throw new TypeError("A Wiegand frame is a string of 0 and 1 characters.");
  if (layout.bits !== null && bits.length !== layout.bits)
    throw new RangeError(`${name} frames are exactly ${layout.bits} bits; got ${bits.length}.`);
  if (layout.raw === true) {
    if (bits.length === 0 || bits.length > MAX_FRAME_BITS)
      throw new RangeError(`${name} reads frames raw: 1 to ${MAX_FRAME_BITS} bits; got ${bits.length}.`);
    return { facilityCode: null, cardNumber: readCard(bits, { offset: 0, length: bits.length }), parityOk: true };
  }
  const needed = smallestFrame(layout);
  if (bits.length < needed)
    throw new RangeError(
      `The layout of ${name} reads bits up to position ${needed - 1}; the frame has ${bits.length}.`,
    );

  let parityOk = true;
  for (const p of layout.parity) {
    let ones = bit(bits, p.position);
    for (const c of p.covers) ones += bit(bits, c);
    if ((ones & 1) !== (p.odd ? 1 : 0)) parityOk = false;
  }
  for (const m of layout.markers ?? []) if (bit(bits, m.position) !== m.value) parityOk = false;
  return {
    facilityCode: layout.facilityCode === null ? null : read(bits, layout.facilityCode),
    cardNumber: readCard(bits, layout.cardNumber),
    parityOk,
  };
}

/** A raw frame: the card number over the whole frame (`bits` long, `min_input_bits` by default). */
function encodeRaw(format: CardFormat, fields: WiegandFields, bits: number | undefined): string {
  const name = formatName(format);
  const fc = fields.facilityCode ?? null;
  if (fc !== null)
    throw new RangeError(
      `${name} reads frames raw and has no facility-code field; leave facilityCode out or null (got ${fc}).`,
    );
  const length = bits ?? format.min_input_bits;
  if (!Number.isInteger(length) || length < 1 || length > MAX_FRAME_BITS)
    throw new RangeError(`${name} reads frames raw: 1 to ${MAX_FRAME_BITS} bits; got ${String(bits)}.`);
  const field = { offset: 0, length };
  const frame = new Uint8Array(length);
  write(frame, field, cardValue(fields.cardNumber, field, `${name} cardNumber`));
  return frame.join("");
}

function formatName(format: string | CardFormat): string {
  return `"${typeof format === "string" ? format : format.id}"`;
}

/** One past the last position a layout writes or reads. */
function smallestFrame(layout: ResolvedLayout): number {
  let end = 0;
  const field = (f: BitField | null) => {
    if (f !== null) end = Math.max(end, f.offset + f.length);
  };
  field(layout.facilityCode);
  field(layout.cardNumber);
  for (const f of layout.fixed ?? []) field(f);
  for (const m of layout.markers ?? []) end = Math.max(end, m.position + 1);
  for (const p of layout.parity) {
    end = Math.max(end, p.position + 1);
    for (const c of p.covers) end = Math.max(end, c + 1);
  }
  return end;
}

/** `value` as a BigInt after checking it is a non-negative safe integer that fits `field`. */
function fieldValue(value: number, field: BitField, what: string): bigint {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${what} must be a non-negative integer no larger than 2^53−1; got ${String(value)}.`);
  return fits(BigInt(value), field, what);
}

/** A card number (CardNumber or BigInt) as a BigInt, after checking it is valid and fits `field`. */
function cardValue(value: CardNumber | bigint, field: BitField, what: string): bigint {
  if (typeof value === "bigint") {
    if (value < 0n || value >> BigInt(MAX_FRAME_BITS) !== 0n)
      throw new RangeError(`${what} must be a non-negative integer below 2^${MAX_FRAME_BITS}; got ${value}.`);
    return fits(value, field, what);
  }
  if (typeof value === "string") {
    if (!isCardNumber(value))
      throw new RangeError(
        `${what} must be a decimal string of digits without leading zeros, at most 2^${MAX_FRAME_BITS}−1; got "${value.slice(0, 100)}".`,
      );
    return fits(BigInt(value), field, what);
  }
  return fieldValue(value, field, what);
}

/** `v` after checking it fits in `field`'s bits. */
function fits(v: bigint, field: BitField, what: string): bigint {
  if (v >> BigInt(field.length) !== 0n) {
    const max = field.length <= 53 ? String(2 ** field.length - 1) : `2^${field.length}−1`;
    throw new RangeError(`${what} ${v} does not fit in its ${field.length}-bit field (0 to ${max}).`);
  }
  return v;
}

function write(frame: Uint8Array, field: BitField, value: bigint): void {
  for (let i = 0; i < field.length; i++) frame[field.offset + i] = Number((value >> BigInt(field.length - 1 - i)) & 1n);
}

function bit(bits: string, position: number): number {
  return bits.charCodeAt(position) - 48;
}

/** A card-number field read MSB first, exactly: a number up to 2^53−1, else its decimal string. */
function readCard(bits: string, field: BitField): CardNumber {
  const v = read(bits, field);
  if (v !== null) return v;
  let big = 0n;
  for (let i = field.offset; i < field.offset + field.length; i++) big = (big << 1n) | BigInt(bit(bits, i));
  return cardNumberOfBig(big);
}

/** A field read MSB first; null once it passes 2^53−1 (leading zeros of a wide field are fine). */
function read(bits: string, field: BitField): number | null {
  let v = 0;
  for (let i = field.offset; i < field.offset + field.length; i++) {
    v = v * 2 + bit(bits, i);
    if (v > Number.MAX_SAFE_INTEGER) return null;
  }
  return v;
}
