// Card-format layouts: the well-known table and the resolution of a node's `cardFormat` entry to
// field positions and parity coverage. Positions are 0-based from the first bit sent (MSB first).

/** A run of bits: `offset` is the 0-based position of its first (most significant) bit. */
export interface BitField {
  readonly offset: number;
  readonly length: number;
}

/** One parity bit of a custom layout: it covers either a `range` or the `1`s of a `mask`. */
export interface ParityBitSpec {
  readonly position: number;
  readonly type: "even" | "odd";
  readonly range?: BitField;
  /** A string of `0`/`1`, one per frame bit from position 0; `1` marks a covered bit. */
  readonly mask?: string;
}

/**
 * A bit a frame must hold: a marker such as Kastle's bit 1, always 1. A frame whose bit
 * differs fails like a parity error (`parityOk: false`; `denied/parityError` under `enforce_parity`).
 */
export interface FixedBit {
  readonly position: number;
  readonly value: 0 | 1;
}

/** A custom bit layout. */
export interface CardLayout {
  readonly facilityCode: BitField | null;
  readonly cardNumber: BitField;
  readonly parity: readonly ParityBitSpec[];
  /** Marker bits every frame must hold; none when left out. */
  readonly fixed?: readonly FixedBit[];
}

/** A parity bit with its coverage spelled out as positions (excluding the parity bit itself). */
export interface ResolvedParity {
  readonly position: number;
  readonly odd: boolean;
  readonly covers: readonly number[];
}

/** Bits a format holds at a set value without decoding or checking them (an OEM code, an issue level). */
export interface FixedBits extends BitField {
  /** What an encoder writes there, MSB first; decoding ignores these bits (parity still covers them). */
  readonly value: number;
}

/** A layout ready to decode: fixed `bits` for well-known formats, null for custom layouts. */
export interface ResolvedLayout {
  readonly bits: number | null;
  readonly facilityCode: BitField | null;
  readonly cardNumber: BitField;
  /** In encoding order: a later parity bit may cover an earlier one (HID Corporate 1000). */
  readonly parity: readonly ResolvedParity[];
  /** Runs of bits outside both fields that an encoder sets to a constant; absent when there are none. */
  readonly fixed?: readonly FixedBits[];
  /**
   * Marker bits: an encoder writes them, and a frame whose bit differs fails the parity check
   * as well; absent when there are none.
   */
  readonly markers?: readonly FixedBit[];
  /**
   * Set for a raw format (an entry without a layout whose id is not a well-known name): the whole
   * frame, whatever its length, is the card number, first bit sent first; `cardNumber` then spans the
   * longest frame the entry admits. Absent for every other layout.
   */
  readonly raw?: true;
}

/** An entry of the well-known table. */
export interface KnownCardFormat extends ResolvedLayout {
  readonly id: string;
  readonly description: string;
  readonly bits: number;
  /** Where the layout was taken from. */
  readonly source: string;
}

/** Positions `from`…`to`, both included. */
function span(from: number, to: number): number[] {
  const out: number[] = [];
  for (let p = from; p <= to; p++) out.push(p);
  return out;
}

/** Positions `from`…`to` taking two and skipping one, starting with two taken: 2,3,_,5,6,_,… */
function twoOfThree(from: number, to: number): number[] {
  return span(from, to).filter((p) => (p - from) % 3 !== 2);
}

/** The table as a null-prototype object, so ids such as `constructor` or `__proto__` are not found in it. */
function byId(entries: readonly KnownCardFormat[]): Readonly<Record<string, KnownCardFormat>> {
  const table: Record<string, KnownCardFormat> = Object.create(null);
  for (const e of entries) {
    for (const p of e.parity) Object.freeze(p.covers);
    Object.freeze(e.parity);
    if (e.fixed !== undefined) Object.freeze(e.fixed);
    if (e.markers !== undefined) Object.freeze(e.markers);
    table[e.id] = Object.freeze(e);
  }
  return Object.freeze(table);
}

const PM3 = "proxmark3 client/src/wiegand_formats.c";

/**
 * The well-known layouts, keyed by the industry id (as proxmark3's `wiegand list` spells it).
 * Source: proxmark3 `client/src/wiegand_formats.c` (Pack_/Unpack_ functions), restated in
 * this project's notes on Wiegand formats; positions are 0-based from the first bit sent.
 *
 * Left out on purpose, because their check is not "one parity bit over a set of positions" or their
 * public definition contradicts itself:
 * - `H10320` (37-bit BCD): the card number is 8 BCD digits, not a binary field.
 * - `P10001` (Honeywell 40-bit): bits 32–39 are an XOR checksum of the first four bytes, not parity.
 * - `HGen37` (HID Generic 37-bit): proxmark3's Pack and Unpack disagree on the odd parity bit's
 *   coverage (…,22,26,30,… against …,22,28,30,…), and its 32-bit number field is limited to 19 bits.
 * Formats of the proxmark3 list without parity bits are not in the table either (give a `layout`).
 *
 * Marker bits: of the layouts below only Kastle has one (bit 1, always 1; proxmark3's
 * Unpack_Kastle refuses a frame without it). The other fixed-marker formats of the list, H10320
 * (bit 0) and HGen37 (bit 36), are left out above, and P10001's fixed `0xF` comes with a checksum.
 * Fixed runs that are data with an encoder default (C15001's OEM code, S12906's and Kastle's issue
 * level) are not checked: proxmark3 reads them as values.
 * @example
 * KNOWN_CARD_FORMATS.H10301.bits; //=> 26
 */
export const KNOWN_CARD_FORMATS: Readonly<Record<string, KnownCardFormat>> = /* @__PURE__ */ byId([
  {
    id: "H10301",
    description: "HID H10301 standard 26-bit",
    bits: 26,
    facilityCode: { offset: 1, length: 8 },
    cardNumber: { offset: 9, length: 16 },
    parity: [
      { position: 0, odd: false, covers: span(1, 12) },
      { position: 25, odd: true, covers: span(13, 24) },
    ],
    source: `${PM3} Pack_H10301`,
  },
  {
    id: "ind26",
    description: "Indala 26-bit",
    bits: 26,
    facilityCode: { offset: 1, length: 12 },
    cardNumber: { offset: 13, length: 12 },
    // Same parity coverage as H10301, with the field boundary moved to position 13.
    parity: [
      { position: 0, odd: false, covers: span(1, 12) },
      { position: 25, odd: true, covers: span(13, 24) },
    ],
    source: `${PM3} Pack_ind26`,
  },
  {
    id: "Kastle",
    description: "Kastle 32-bit",
    bits: 32,
    facilityCode: { offset: 7, length: 8 },
    cardNumber: { offset: 15, length: 16 },
    parity: [
      { position: 0, odd: false, covers: span(1, 16) },
      { position: 31, odd: true, covers: span(14, 30) },
    ],
    // Position 1 is always 1 (checked); positions 2–6 hold an issue level, not decoded here (encoded as 0).
    markers: [{ position: 1, value: 1 }],
    fixed: [{ offset: 2, length: 5, value: 0 }],
    source: `${PM3} Pack_Kastle`,
  },
  {
    id: "D10202",
    description: "HID D10202 33-bit",
    bits: 33,
    facilityCode: { offset: 1, length: 7 },
    cardNumber: { offset: 8, length: 24 },
    // Position 16 is covered by both parity bits.
    parity: [
      { position: 0, odd: false, covers: span(1, 16) },
      { position: 32, odd: true, covers: span(16, 31) },
    ],
    source: `${PM3} Pack_D10202`,
  },
  {
    id: "H10306",
    description: "HID H10306 34-bit",
    bits: 34,
    facilityCode: { offset: 1, length: 16 },
    cardNumber: { offset: 17, length: 16 },
    parity: [
      { position: 0, odd: false, covers: span(1, 16) },
      { position: 33, odd: true, covers: span(17, 32) },
    ],
    source: `${PM3} Pack_H10306 (Bot/Mid word masks restated as positions)`,
  },
  {
    id: "N10002",
    description: "Honeywell/Northern N10002 34-bit",
    bits: 34,
    facilityCode: { offset: 1, length: 16 },
    cardNumber: { offset: 17, length: 16 },
    // The same layout and parity as H10306.
    parity: [
      { position: 0, odd: false, covers: span(1, 16) },
      { position: 33, odd: true, covers: span(17, 32) },
    ],
    source: `${PM3} Pack_N10002`,
  },
  {
    id: "BQT34",
    description: "BQT 34-bit",
    bits: 34,
    facilityCode: { offset: 1, length: 8 },
    cardNumber: { offset: 9, length: 24 },
    // The parity halves split at position 17, not at the field boundary (9).
    parity: [
      { position: 0, odd: false, covers: span(1, 16) },
      { position: 33, odd: true, covers: span(17, 32) },
    ],
    source: `${PM3} Pack_bqt34`,
  },
  {
    id: "C1k35s",
    description: "HID Corporate 1000 35-bit standard",
    bits: 35,
    facilityCode: { offset: 2, length: 12 },
    cardNumber: { offset: 14, length: 20 },
    // Encoding order matters: bit 34 covers parity bit 1, and bit 0 covers both 1 and 34.
    parity: [
      { position: 1, odd: false, covers: twoOfThree(2, 33) },
      { position: 34, odd: true, covers: twoOfThree(1, 32) },
      { position: 0, odd: true, covers: span(1, 34) },
    ],
    source: `${PM3} Pack_C1k35s (Bot/Mid word masks 0xB6DB6DB6, 0x6DB6DB6C restated as positions)`,
  },
  {
    id: "C15001",
    description: "HID KeyScan 36-bit",
    bits: 36,
    facilityCode: { offset: 11, length: 8 },
    cardNumber: { offset: 19, length: 16 },
    parity: [
      { position: 0, odd: false, covers: span(1, 17) },
      { position: 35, odd: true, covers: span(18, 34) },
    ],
    // Positions 1–10 hold an OEM code, not decoded here; encoded as proxmark3's default, 900.
    fixed: [{ offset: 1, length: 10, value: 900 }],
    source: `${PM3} Pack_C15001`,
  },
  {
    id: "S12906",
    description: "HID Simplex 36-bit",
    bits: 36,
    facilityCode: { offset: 1, length: 8 },
    cardNumber: { offset: 11, length: 24 },
    // Both parity bits are odd; position 17 is covered by both.
    parity: [
      { position: 0, odd: true, covers: span(1, 17) },
      { position: 35, odd: true, covers: span(17, 34) },
    ],
    // Positions 9–10 hold an issue level, not decoded here (encoded as 0).
    fixed: [{ offset: 9, length: 2, value: 0 }],
    source: `${PM3} Pack_S12906`,
  },
  {
    id: "Sie36",
    description: "HID Siemens 36-bit",
    bits: 36,
    facilityCode: { offset: 1, length: 18 },
    cardNumber: { offset: 19, length: 16 },
    // Interleaved coverage; the sets come from the position lists of Pack_Sie36 (older proxmark3
    // versions checked bit 35 as odd in Unpack_Sie36 while Pack wrote it even; both now say even).
    parity: [
      { position: 0, odd: true, covers: [1, ...twoOfThree(3, 34)] },
      { position: 35, odd: false, covers: [...twoOfThree(1, 32), 34] },
    ],
    source: `${PM3} Pack_Sie36`,
  },
  {
    id: "H10302",
    description: "HID H10302 37-bit (card number only)",
    bits: 37,
    facilityCode: null,
    cardNumber: { offset: 1, length: 35 },
    // Position 18 is covered by both parity bits.
    parity: [
      { position: 0, odd: false, covers: span(1, 18) },
      { position: 36, odd: true, covers: span(18, 35) },
    ],
    source: `${PM3} Pack_H10302`,
  },
  {
    id: "H10304",
    description: "HID H10304 37-bit",
    bits: 37,
    facilityCode: { offset: 1, length: 16 },
    cardNumber: { offset: 17, length: 19 },
    parity: [
      { position: 0, odd: false, covers: span(1, 18) },
      { position: 36, odd: true, covers: span(18, 35) },
    ],
    source: `${PM3} Pack_H10304`,
  },
  {
    id: "Verkada40",
    description: "Verkada 40-bit",
    bits: 40,
    facilityCode: { offset: 1, length: 10 },
    cardNumber: { offset: 11, length: 28 },
    // Both parity bits are even.
    parity: [
      { position: 0, odd: false, covers: span(1, 10) },
      { position: 39, odd: false, covers: span(11, 38) },
    ],
    source: `${PM3} Pack_Verkada40`,
  },
  {
    id: "H800002",
    description: "HID H800002 46-bit",
    bits: 46,
    facilityCode: { offset: 1, length: 14 },
    cardNumber: { offset: 15, length: 30 },
    // Both parity bits cover the same 44 data bits, so bit 45 is always the inverse of bit 0.
    parity: [
      { position: 0, odd: false, covers: span(1, 44) },
      { position: 45, odd: true, covers: span(1, 44) },
    ],
    source: `${PM3} Pack_H800002`,
  },
  {
    id: "C1k48s",
    description: "HID Corporate 1000 48-bit standard",
    bits: 48,
    facilityCode: { offset: 2, length: 22 },
    cardNumber: { offset: 24, length: 23 },
    // Encoding order matters: bit 0 covers parity bits 1 and 47 (which do not cover each other).
    parity: [
      { position: 1, odd: false, covers: twoOfThree(3, 46) },
      { position: 47, odd: true, covers: twoOfThree(2, 45) },
      { position: 0, odd: true, covers: span(1, 47) },
    ],
    source: `${PM3} Pack_C1k48s (Bot/Mid word masks 0x1B6D/0xB6DB6DB6, 0x36DB/0x6DB6DB6C restated as positions)`,
  },
  {
    id: "Avig56",
    description: "Avigilon 56-bit",
    bits: 56,
    facilityCode: { offset: 1, length: 20 },
    cardNumber: { offset: 21, length: 34 },
    // proxmark3 states it as "even over 0–27 and odd over 28–55, each including its parity bit".
    parity: [
      { position: 0, odd: false, covers: span(1, 27) },
      { position: 55, odd: true, covers: span(28, 54) },
    ],
    source: `${PM3} Pack_Avig56`,
  },
]);

/** The node default when it lists no card format: the standard 26-bit format (the 2.0 systems API). */
export const DEFAULT_CARD_FORMAT_ID = "H10301";

/** Coverage of a custom parity bit as positions, or null when both or neither of range/mask are set. */
export function resolveParityCoverage(p: ParityBitSpec): number[] | null {
  if ((p.range === undefined) === (p.mask === undefined)) return null;
  const covers: number[] = [];
  if (p.range !== undefined) {
    for (let i = p.range.offset; i < p.range.offset + p.range.length; i++) if (i !== p.position) covers.push(i);
  } else {
    const mask = p.mask as string;
    for (let i = 0; i < mask.length; i++) if (mask.charCodeAt(i) === 49 && i !== p.position) covers.push(i);
  }
  return covers;
}

/** Resolves a custom layout to positions (assumes it passed validation). */
export function resolveCustomLayout(layout: CardLayout): ResolvedLayout {
  const resolved: ResolvedLayout = {
    bits: null,
    facilityCode: layout.facilityCode,
    cardNumber: layout.cardNumber,
    parity: layout.parity.map((p) => ({
      position: p.position,
      odd: p.type === "odd",
      covers: resolveParityCoverage(p) ?? [],
    })),
  };
  const fixed = layout.fixed ?? [];
  return fixed.length === 0
    ? resolved
    : { ...resolved, markers: fixed.map((f) => ({ position: f.position, value: f.value })) };
}

/**
 * The well-known layout named `name`, or undefined when the table has no such name. Names are
 * matched exactly, as the table spells them (`C1k35s`, not `c1k35s`).
 * @example
 * wellKnownLayout("H10306")?.bits; //=> 34
 */
export function wellKnownLayout(name: string): KnownCardFormat | undefined {
  return KNOWN_CARD_FORMATS[name];
}

/** How one card-format entry decodes: a well-known layout, a custom layout, or the raw frame. */
export type EntryLayout =
  | { readonly kind: "known"; readonly layout: KnownCardFormat }
  | { readonly kind: "custom"; readonly layout: CardLayout }
  | { readonly kind: "raw" }
  | { readonly kind: "unknownName"; readonly name: string };

/** The part of a card-format entry that says how it decodes. */
export interface CardFormatLayoutFields {
  readonly id: string;
  readonly layout: string | CardLayout | null;
}

/**
 * Which layout a card-format entry decodes with: a `layout` string names a well-known layout
 * (`unknownName` when the table has none of that name), a `layout` object is a custom layout; without
 * a `layout`, a well-known `id` names its layout and any other id makes the format raw (the whole
 * frame, first bit sent first, is the card number, with no facility code and no parity).
 * @example
 * entryLayout({ id: "0b6f8a52", layout: "H10306" }).kind; //=> "known"
 * entryLayout({ id: "H10301", layout: null }).kind; //=> "known"
 * entryLayout({ id: "site-reader", layout: null }).kind; //=> "raw"
 */
export function entryLayout(format: CardFormatLayoutFields): EntryLayout {
  const { layout } = format;
  if (typeof layout === "string") {
    const known = wellKnownLayout(layout);
    return known === undefined ? { kind: "unknownName", name: layout } : { kind: "known", layout: known };
  }
  if (layout !== null) return { kind: "custom", layout };
  const known = wellKnownLayout(format.id);
  return known === undefined ? { kind: "raw" } : { kind: "known", layout: known };
}
