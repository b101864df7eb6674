// Card-format layouts: the well-known table and the resolution of a node's `cardFormat` entry to
// field positions and parity coverage. Positions are 0-based from the first bit sent (MSB first).

/** A run of bits: `offset` is the 0-based position of its first (most significant) bit. */
export interface BitField {
  readonly offset: number;
  readonly length: number;
}

/** ★ One parity bit of a custom layout: it covers either a `range` or the `1`s of a `mask`. */
export interface ParityBitSpec {
  readonly position: number;
  readonly type: "even" | "odd";
  readonly range?: BitField;
  /** A string of `0`/`1`, one per frame bit from position 0; `1` marks a covered bit. */
  readonly mask?: string;
}

/** ★ A custom bit layout (SPEC §5). */
export interface CardLayout {
  readonly facilityCode: BitField | null;
  readonly cardNumber: BitField;
  readonly parity: readonly ParityBitSpec[];
}

/** A parity bit with its coverage spelled out as positions (excluding the parity bit itself). */
export interface ResolvedParity {
  readonly position: number;
  readonly odd: boolean;
  readonly covers: readonly number[];
}

/** A layout ready to decode: fixed `bits` for well-known formats, null for custom layouts. */
export interface ResolvedLayout {
  readonly bits: number | null;
  readonly facilityCode: BitField | null;
  readonly cardNumber: BitField;
  /** In encoding order: a later parity bit may cover an earlier one (HID Corporate 1000). */
  readonly parity: readonly ResolvedParity[];
}

/** An entry of the well-known table. */
export interface KnownCardFormat extends ResolvedLayout {
  readonly id: string;
  readonly description: string;
  readonly bits: number;
  /** Where the layout was taken from. */
  readonly source: string;
}

function span(from: number, to: number): number[] {
  const out: number[] = [];
  for (let p = from; p <= to; p++) out.push(p);
  return out;
}

/**
 * The well-known layouts, keyed by the industry id.
 * Source: proxmark3 `client/src/wiegand_formats.c` (Pack_/Unpack_ functions), restated in
 * shared/reference/wiegand-formats.md; positions are 0-based from the first bit sent.
 */
export const KNOWN_CARD_FORMATS: Readonly<Record<string, KnownCardFormat>> = /* @__PURE__ */ Object.freeze({
  H10301: {
    id: "H10301",
    description: "HID H10301 standard 26-bit",
    bits: 26,
    facilityCode: { offset: 1, length: 8 },
    cardNumber: { offset: 9, length: 16 },
    parity: [
      { position: 0, odd: false, covers: span(1, 12) },
      { position: 25, odd: true, covers: span(13, 24) },
    ],
    source: "proxmark3 wiegand_formats.c Pack_H10301",
  },
});

/** The node default when it lists no card format: the standard 26-bit format (seed 001 §2). */
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
  return {
    bits: null,
    facilityCode: layout.facilityCode,
    cardNumber: layout.cardNumber,
    parity: layout.parity.map((p) => ({ position: p.position, odd: p.type === "odd", covers: resolveParityCoverage(p) ?? [] })),
  };
}
