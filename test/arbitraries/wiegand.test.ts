import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { CUSTOM_FORMATS, H10301_LAYOUT } from "./cardFormat.js";
import { encodeH10301, encodeLayout, flipBit } from "./wiegand.js";
import { ZONES, dstTransitions, dstTransitionsInYear, fastOffsetMinutes, offsetMinutes } from "./zone.js";

/** Parity of every bit of a layout, checked from scratch. */
function parityHolds(bits: string, layout: (typeof CUSTOM_FORMATS)[number]["layout"]): boolean {
  return layout.parity.every((p) => {
    let ones = Number(bits[p.position]);
    for (let i = 0; i < bits.length; i++) {
      if (i === p.position) continue;
      const covered =
        p.range !== undefined ? i >= p.range.offset && i < p.range.offset + p.range.length : p.mask?.[i] === "1";
      if (covered) ones += Number(bits[i]);
    }
    return p.type === "even" ? ones % 2 === 0 : ones % 2 === 1;
  });
}

describe("wiegand encoder", () => {
  test("H10301 known vectors", () => {
    // FC 1, CN 1 is 0x2020002 in every public 26-bit table.
    expect(encodeH10301(1, 1)).toBe((0x2020002).toString(2).padStart(26, "0"));
    expect(encodeH10301(0, 0)).toBe("00000000000000000000000001");
    expect(encodeH10301(255, 65535)).toBe("01111111111111111111111111");
  });

  test("the generic encoder agrees with the hand-written H10301 and keeps every parity", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 65_535 }), (fcode, cn) => {
        const bits = encodeH10301(fcode, cn);
        expect(encodeLayout(H10301_LAYOUT, 26, fcode, cn)).toBe(bits);
        expect(parseInt(bits.slice(1, 9), 2)).toBe(fcode);
        expect(parseInt(bits.slice(9, 25), 2)).toBe(cn);
        expect(parityHolds(bits, H10301_LAYOUT)).toBe(true);
        expect(parityHolds(flipBit(bits, cn % 26), H10301_LAYOUT)).toBe(false);
      }),
    );
    for (const f of CUSTOM_FORMATS) {
      fc.assert(
        fc.property(fc.nat(), fc.nat(), fc.constantFrom(0 as const, 1 as const), (fcode, cn, fill) => {
          expect(parityHolds(encodeLayout(f.layout, f.max_input_bits, fcode, cn, fill), f.layout)).toBe(true);
        }),
        { numRuns: 50 },
      );
    }
  });

  test("DST transitions: two a year in each DST zone, none in UTC, 30 minutes on Lord Howe, Samoa's jump", () => {
    expect(dstTransitions("UTC")).toEqual([]);
    for (const z of ["America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Santiago"]) {
      const t = dstTransitions(z);
      expect(t.length).toBe(22);
      for (const ms of t) expect(offsetMinutes(z, ms)).not.toBe(offsetMinutes(z, ms - 1));
    }
    // Samoa kept DST until April 2021; in 2011 it jumped the date line (offset −10:00 → +14:00).
    expect(dstTransitions("Pacific/Apia").length).toBe(3);
    expect(dstTransitionsInYear("Pacific/Apia", 2011).map((t) => offsetMinutes("Pacific/Apia", t))).toContain(14 * 60);
    const lh = dstTransitions("Australia/Lord_Howe")[0]!;
    // The generators' cached offsets agree with luxon's.
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: 0, max: 4_102_444_799_999 }), (z, ms) => {
        expect(fastOffsetMinutes(z, ms)).toBe(offsetMinutes(z, ms));
      }),
      { numRuns: 500 },
    );
    for (const z of ZONES)
      for (const t of dstTransitions(z))
        for (const ms of [t - 1, t]) expect(fastOffsetMinutes(z, ms)).toBe(offsetMinutes(z, ms));
    expect(Math.abs(offsetMinutes("Australia/Lord_Howe", lh) - offsetMinutes("Australia/Lord_Howe", lh - 1))).toBe(30);
  });
});
