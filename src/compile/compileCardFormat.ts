// A node's card format compiled for the hot path: field offsets and parity coverage in typed arrays,
// decoded by charCodeAt and arithmetic into a caller-owned scratch object (no allocation).
import {
  type CardFormat,
  type FacilityCodePolicy,
  type ResolvedLayout,
  entryLayout,
  resolveCustomLayout,
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
  readonly enforceParity_: boolean;
  readonly fcPolicy_: FcPolicyCode;
  readonly allowedFc_: ReadonlySet<number>;
}

/**
 * What a read decoded to. -1: the format has no such field; -2 (OVERFLOW): the value exceeds
 * 2^53−1. Both are reported as null, but an overflowed code never matches a credential (SPEC §5),
 * not even one without a facility code.
 */
export interface DecodeScratch {
  fc_: number;
  cn_: number;
  parityOk_: boolean;
}

/** The layout behind a format entry (validated at load); null for a raw format (SPEC §5). */
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
      throw new Error(`unknown card layout "${resolved.name}"`);
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
    enforceParity_: format.enforce_parity,
    fcPolicy_: FC_POLICY[format.facility_code as FacilityCodePolicy],
    allowedFc_: new Set(format.allowed_facility_codes),
  };
}

/** A decoded field beyond Number.MAX_SAFE_INTEGER. */
export const OVERFLOW = -2;

/** Reads `length` bits MSB first at `offset`; OVERFLOW when the value exceeds Number.MAX_SAFE_INTEGER. */
export function readField(bits: Uint8Array, offset: number, length: number): number {
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
    out.parityOk_ = true;
    return;
  }
  out.fc_ = f.fcLength_ === 0 ? -1 : readField(bits, f.fcOffset_, f.fcLength_);
  out.cn_ = readField(bits, f.cnOffset_, f.cnLength_);
  let ok = true;
  const marks = f.markerPos_;
  for (let i = 0; i < marks.length && ok; i++) ok = bits[marks[i]!] === f.markerVal_[i];
  const pos = f.parityPos_;
  for (let i = 0; i < pos.length && ok; i++) {
    let ones = bits[pos[i]!]!;
    for (let k = f.coverStart_[i]!; k < f.coverStart_[i + 1]!; k++) ones += bits[f.covers_[k]!]!;
    ok = (ones & 1) === f.parityOdd_[i];
  }
  out.parityOk_ = ok;
}
