// A node's card format compiled for the hot path: field offsets and parity coverage in typed arrays,
// decoded by charCodeAt and arithmetic into a caller-owned scratch object (no allocation).
import {
  type CardFormat,
  type FacilityCodePolicy,
  type ResolvedLayout,
  die,
  entryLayout,
  resolveCustomLayout,
  wideFieldValue,
} from "../model/index.js";

export const FC_POLICY = { ENFORCED: 0, FILTER_LIST: 1, NOT_ENFORCED: 2 } as const;
export type FcPolicyCode = (typeof FC_POLICY)[keyof typeof FC_POLICY];

export interface CompiledFormat {
  readonly id: string;
  readonly min_: number;
  readonly max_: number;
  /** Facility-code field; length 0 when the layout has none. */
  readonly fcOffset_: number;
  readonly fcLength_: number;
  readonly cnOffset_: number;
  readonly cnLength_: number;
  /** A raw format: the card number is the whole frame, whatever its length; no facility code, no parity. */
  readonly raw_: boolean;
  readonly parityPos_: Int32Array;
  readonly parityOdd_: Uint8Array;
  /** Covered positions of parity bit i: `covers_[coverStart_[i]] … covers_[coverStart_[i + 1] - 1]`. */
  readonly coverStart_: Int32Array;
  readonly covers_: Int32Array;
  /** Marker bits: bit `markerPos_[i]` must be `markerVal_[i]`, else the read fails like parity. */
  readonly markerPos_: Int32Array;
  readonly markerVal_: Uint8Array;
  /**
   * Every field, parity bit and covered bit lies in the first 64 bits and each field has at most 53:
   * decodeInto reads the frame as two 32-bit words (PACKED_BITS), the fields by shifts and each
   * parity bit as the parity of the words under its masks `parityHi_[i]`, `parityLo_[i]` (the parity
   * bit and the bits it covers; bit 31 − p of the high word is position p, of the low word 63 − p).
   */
  readonly packed_: boolean;
  readonly parityHi_: Int32Array;
  readonly parityLo_: Int32Array;
  readonly enforceParity_: boolean;
  readonly fcPolicy_: FcPolicyCode;
  readonly allowedFc_: ReadonlySet<number>;
}

/**
 * What a read decoded to. -1: the format has no such field; -2 (OVERFLOW): a facility code exceeds
 * 2^53−1, reported as null, and never matches a credential (docs/semantics.md E17), not even one
 * without a facility code. A card number past 2^53−1 is WIDE (-3) with its decimal string in `wide_`
 * (CN3): only that read builds a string.
 */
export interface DecodeScratch {
  fc_: number;
  cn_: number;
  parityOk_: boolean;
  wide_: string;
}

/** The layout behind a format entry (validated at load); null for a raw format (docs/semantics.md S17). */
export function layoutOf(format: CardFormat): ResolvedLayout | null {
  const resolved = entryLayout(format);
  switch (resolved.kind) {
    case "known":
      return resolved.layout;
    case "custom":
      return resolveCustomLayout(resolved.layout);
    case "raw":
      return null;
    case "unknownName":
      die("unknownLayout", resolved.name);
  }
}

/** A raw format as a layout: no facility code, no parity, the card number read over the whole frame. */
const RAW_LAYOUT: ResolvedLayout = { bits: null, facilityCode: null, cardNumber: { offset: 0, length: 0 }, parity: [] };

export function compileCardFormat(format: CardFormat): CompiledFormat {
  const own = layoutOf(format);
  const layout = own ?? RAW_LAYOUT;
  const n = layout.parity.length;
  const coverStart = new Int32Array(n + 1);
  const covers: number[] = [];
  layout.parity.forEach((p, i) => {
    coverStart[i] = covers.length;
    covers.push(...p.covers);
  });
  coverStart[n] = covers.length;
  // Masks toggled per position: a position named twice cancels out, as it does in decodeInto's sum.
  const parityHi = new Int32Array(n);
  const parityLo = new Int32Array(n);
  layout.parity.forEach((p, i) => {
    for (const q of [p.position, ...p.covers]) {
      if (q < 32) parityHi[i]! ^= 1 << (31 - q);
      else if (q < 64) parityLo[i]! ^= 1 << (63 - q);
    }
  });
  const fits = (offset: number, length: number) => length <= PACKED_FIELD_BITS && offset + length <= PACKED_BITS;
  const packed =
    own !== null &&
    (layout.facilityCode === null || fits(layout.facilityCode.offset, layout.facilityCode.length)) &&
    fits(layout.cardNumber.offset, layout.cardNumber.length) &&
    layout.parity.every((p) => p.position < PACKED_BITS && p.covers.every((q) => q < PACKED_BITS));
  return {
    id: format.id,
    min_: format.min_input_bits,
    max_: format.max_input_bits,
    fcOffset_: layout.facilityCode?.offset ?? 0,
    fcLength_: layout.facilityCode?.length ?? 0,
    cnOffset_: layout.cardNumber.offset,
    cnLength_: layout.cardNumber.length,
    raw_: own === null,
    parityPos_: Int32Array.from(layout.parity.map((p) => p.position)),
    parityOdd_: Uint8Array.from(layout.parity.map((p) => (p.odd ? 1 : 0))),
    coverStart_: coverStart,
    covers_: Int32Array.from(covers),
    markerPos_: Int32Array.from(layout.markers ?? [], (m) => m.position),
    markerVal_: Uint8Array.from(layout.markers ?? [], (m) => m.value),
    packed_: packed,
    parityHi_: parityHi,
    parityLo_: parityLo,
    enforceParity_: format.enforce_parity,
    fcPolicy_: FC_POLICY[format.facility_code as FacilityCodePolicy],
    allowedFc_: new Set(format.allowed_facility_codes),
  };
}

/** A decoded field beyond Number.MAX_SAFE_INTEGER. */
export const OVERFLOW = -2;
/** A card number beyond Number.MAX_SAFE_INTEGER, its decimal string beside it (DecodeScratch.wide_). */
export const WIDE = -3;

/** A packed format's bits lie in the frame's first PACKED_BITS, and its fields are at most PACKED_FIELD_BITS long (never an overflow). */
const PACKED_BITS = 64;
const PACKED_FIELD_BITS = 53;
/** 2^k for k = 0 … 32. */
const POW2 = Float64Array.from({ length: 33 }, (_, k) => 2 ** k);

/** Reads `length` bits MSB first at `offset`; OVERFLOW when the value exceeds Number.MAX_SAFE_INTEGER. */
export function readField(bits: Uint8Array, offset: number, length: number): number {
  if (length <= 31) {
    // Fits in a small integer: no overflow to check.
    let w = 0;
    for (let i = offset; i < offset + length; i++) w = (w << 1) | bits[i]!;
    return w;
  }
  let v = 0;
  for (let i = offset; i < offset + length; i++) {
    v = v * 2 + bits[i]!;
    if (v > Number.MAX_SAFE_INTEGER) return OVERFLOW;
  }
  return v;
}

/**
 * Decodes a frame of `length` bits (one bit, 0 or 1, per element; `bits` may be longer) already known
 * to fit the format's length range.
 */
export function decodeInto(f: CompiledFormat, bits: Uint8Array, length: number, out: DecodeScratch): void {
  if (f.raw_) {
    out.fc_ = -1;
    out.cn_ = readField(bits, 0, length);
    if (out.cn_ === OVERFLOW) wideInto(out, bits, 0, length);
    out.parityOk_ = true;
    return;
  }
  let ok = true;
  const marks = f.markerPos_;
  for (let i = 0; i < marks.length && ok; i++) ok = bits[marks[i]!] === f.markerVal_[i];
  if (f.packed_) {
    // The first 64 bits (or the whole frame, if shorter) as two words, MSB first.
    const n = length < PACKED_BITS ? length : PACKED_BITS;
    let hi = 0;
    let lo = 0;
    for (let i = 0; i < n && i < 32; i++) hi |= bits[i]! << (31 - i);
    for (let i = 32; i < n; i++) lo |= bits[i]! << (63 - i);
    out.fc_ = f.fcLength_ === 0 ? -1 : wordField(hi, lo, f.fcOffset_, f.fcLength_);
    out.cn_ = wordField(hi, lo, f.cnOffset_, f.cnLength_);
    const parityHi = f.parityHi_;
    for (let i = 0; i < parityHi.length && ok; i++)
      ok = parity32((hi & parityHi[i]!) ^ (lo & f.parityLo_[i]!)) === f.parityOdd_[i];
    out.parityOk_ = ok;
    return;
  }
  out.fc_ = f.fcLength_ === 0 ? -1 : readField(bits, f.fcOffset_, f.fcLength_);
  out.cn_ = readField(bits, f.cnOffset_, f.cnLength_);
  if (out.cn_ === OVERFLOW) wideInto(out, bits, f.cnOffset_, f.cnLength_);
  const pos = f.parityPos_;
  for (let i = 0; i < pos.length && ok; i++) {
    let ones = bits[pos[i]!]!;
    for (let k = f.coverStart_[i]!; k < f.coverStart_[i + 1]!; k++) ones += bits[f.covers_[k]!]!;
    ok = (ones & 1) === f.parityOdd_[i];
  }
  out.parityOk_ = ok;
}

/** A card number past 2^53−1, exactly (CN3): WIDE, its decimal string in `out.wide_`. Off the packed path. */
function wideInto(out: DecodeScratch, bits: Uint8Array, offset: number, length: number): void {
  out.cn_ = WIDE;
  out.wide_ = wideFieldValue(bits, offset, length) as string;
}

/** Bits `offset … offset + length - 1` (1 to 53 of them, ending by bit 63) of the 64-bit word `hi`:`lo`, MSB first. */
function wordField(hi: number, lo: number, offset: number, length: number): number {
  const end = offset + length;
  if (end <= 32) return (hi << offset) >>> (32 - length);
  if (offset >= 32) return (lo << (offset - 32)) >>> (32 - length);
  // Across the two words: the high word's last 32 − offset bits, then the low word's first end − 32.
  const fromLo = end - 32;
  return ((hi << offset) >>> offset) * POW2[fromLo]! + (lo >>> (32 - fromLo));
}

/** 1 when `x` has an odd number of set bits (of its low 32), else 0. */
function parity32(x: number): number {
  x ^= x >>> 16;
  x ^= x >>> 8;
  x ^= x >>> 4;
  x ^= x >>> 2;
  x ^= x >>> 1;
  return x & 1;
}
