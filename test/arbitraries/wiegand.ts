// Wiegand frame encoders, written independently of src/: the standard 26-bit H10301 by hand, and any
// layout of cardFormat.ts by its field and parity description.
import type { LayoutInput } from "./cardFormat.js";

/** Writes `value` MSB first into `bits[offset…offset+length)`; higher bits of value are dropped. */
function writeField(bits: number[], offset: number, length: number, value: bigint): void {
  for (let i = 0; i < length; i++) bits[offset + length - 1 - i] = Number((value >> BigInt(i)) & 1n);
}

/**
 * H10301: bit 0 = even parity over bits 1–12, bits 1–8 facility code, bits 9–24 card number,
 * bit 25 = odd parity over bits 13–24. Values wider than their field are truncated.
 */
export function encodeH10301(facilityCode: number, cardNumber: number): string {
  const bits = new Array<number>(26).fill(0);
  writeField(bits, 1, 8, BigInt(facilityCode));
  writeField(bits, 9, 16, BigInt(cardNumber));
  let ones = 0;
  for (let i = 1; i <= 12; i++) ones += bits[i]!;
  bits[0] = ones % 2; // even: total including the parity bit is even
  ones = 0;
  for (let i = 13; i <= 24; i++) ones += bits[i]!;
  bits[25] = ones % 2 === 0 ? 1 : 0; // odd
  return bits.join("");
}

/**
 * Encodes with a layout into a `length`-bit frame: fields, then fixed (marker) bits, then parity bits
 * in list order. `wrongFixed` ≥ 0 inverts fixed bit `wrongFixed % count` before parity is computed,
 * so that the frame's parity holds and only its marker is wrong (nothing when the layout has none).
 */
export function encodeLayout(
  layout: LayoutInput,
  length: number,
  facilityCode: number,
  cardNumber: bigint | number,
  fill = 0,
  wrongFixed = -1,
): string {
  const bits = new Array<number>(length).fill(fill);
  if (layout.facilityCode !== null)
    writeField(bits, layout.facilityCode.offset, layout.facilityCode.length, BigInt(facilityCode));
  writeField(bits, layout.cardNumber.offset, layout.cardNumber.length, BigInt(cardNumber));
  const fixed = layout.fixed ?? [];
  fixed.forEach((f, i) => {
    bits[f.position] = wrongFixed >= 0 && wrongFixed % fixed.length === i ? 1 - f.value : f.value;
  });
  for (const p of layout.parity) {
    let ones = 0;
    if (p.range !== undefined) {
      for (let i = p.range.offset; i < p.range.offset + p.range.length; i++) if (i !== p.position) ones += bits[i]!;
    } else if (p.mask !== undefined) {
      for (let i = 0; i < p.mask.length; i++) if (p.mask[i] === "1" && i !== p.position) ones += bits[i]!;
    }
    bits[p.position] = p.type === "even" ? ones % 2 : ones % 2 === 0 ? 1 : 0;
  }
  return bits.join("");
}

/** The frame with bit `i` inverted. */
export function flipBit(bits: string, i: number): string {
  const j = i % bits.length;
  return bits.slice(0, j) + (bits[j] === "1" ? "0" : "1") + bits.slice(j + 1);
}
