import fc from "fast-check";
import { expect, test } from "vitest";
import { cardFormatSchema, decodeWiegand } from "../../src/model/index.js";
import {
  CUSTOM_FORMATS,
  KNOWN_FORMAT_IDS,
  NAMED_LAYOUT_IDS,
  RAW_FORMATS,
  cardFormatArb,
  isRawInput,
  knownLayout,
  layoutOfInput,
} from "./cardFormat.js";
import { encodeLayout } from "./wiegand.js";

test("the generator draws every well-known card format", () => {
  const ids = new Set(fc.sample(cardFormatArb, { numRuns: 4000, seed: 7 }).map((f) => f.id));
  for (const id of KNOWN_FORMAT_IDS) expect(ids, id).toContain(id);
});

test("the generator draws layout names under other ids, raw formats (layout absent or null) and old-style ids", () => {
  const sample = fc.sample(cardFormatArb, { numRuns: 4000, seed: 7 });
  const names = new Set(sample.filter((f) => typeof f.layout === "string").map((f) => f.layout));
  for (const id of KNOWN_FORMAT_IDS) expect(names, id).toContain(id);
  expect(new Set(sample.filter((f) => typeof f.layout === "string").map((f) => f.id))).toEqual(
    new Set(NAMED_LAYOUT_IDS),
  );
  const raw = sample.filter(isRawInput);
  expect(new Set(raw.map((f) => `${f.id}/${f.min_input_bits}-${f.max_input_bits}`))).toEqual(
    new Set(RAW_FORMATS.map((f) => `${f.id}/${f.min_input_bits}-${f.max_input_bits}`)),
  );
  expect(raw.some((f) => f.layout === null) && raw.some((f) => !("layout" in f))).toBe(true);
  expect(sample.some((f) => f.id !== "H10301" && f.layout === undefined && KNOWN_FORMAT_IDS.includes(f.id))).toBe(true);
  // Every generated entry is a valid one.
  for (const f of sample) expect(cardFormatSchema.safeParse(f).success).toBe(true);
});

test("the test encoder and the library's decoder agree on raw formats and layout names", () => {
  for (const f of RAW_FORMATS)
    for (const length of [f.min_input_bits, f.max_input_bits]) {
      const frame = encodeLayout(layoutOfInput(f, length), length, 0, 300);
      expect(frame).toHaveLength(length);
      expect(decodeWiegand(cardFormatSchema.parse(f), frame)).toEqual({
        facilityCode: null,
        cardNumber: 300,
        parityOk: true,
      });
    }
  const named = cardFormatSchema.parse({
    id: NAMED_LAYOUT_IDS[2],
    layout: "C1k48s",
    min_input_bits: 48,
    max_input_bits: 48,
  });
  expect(
    decodeWiegand(
      named,
      encodeLayout(
        layoutOfInput({ id: "H10301", layout: "C1k48s", min_input_bits: 48, max_input_bits: 48 }, 48),
        48,
        9,
        77,
      ),
    ),
  ).toEqual({ facilityCode: 9, cardNumber: 77, parityOk: true });
});

test("the test encoder and the library's decoder agree on every well-known format", () => {
  for (const id of KNOWN_FORMAT_IDS) {
    const layout = knownLayout(id);
    const frame = encodeLayout(
      layout,
      layout.parity.reduce((n, p) => Math.max(n, p.mask!.length), 0),
      1,
      1,
    );
    expect({ id, ...decodeWiegand(id, frame) }).toEqual({
      id,
      facilityCode: layout.facilityCode === null ? null : 1,
      cardNumber: 1,
      parityOk: true,
    });
  }
});

test("a frame with a wrong fixed bit keeps its parity and is refused only by the marker check (SPEC §5)", () => {
  const marked = [
    ...KNOWN_FORMAT_IDS.filter((id) => knownLayout(id).fixed !== undefined).map((id) => ({
      format: id as string | ReturnType<typeof cardFormatSchema.parse>,
      layout: knownLayout(id),
      bits: knownLayout(id).parity[0]!.mask!.length,
    })),
    ...CUSTOM_FORMATS.filter((f) => f.layout.fixed !== undefined).map((f) => ({
      format: cardFormatSchema.parse(f),
      layout: f.layout,
      bits: f.min_input_bits,
    })),
  ];
  expect(marked.map((m) => (typeof m.format === "string" ? m.format : m.format.id))).toEqual(["Kastle", "F36"]);
  for (const { format, layout, bits } of marked) {
    const fixed = layout.fixed!;
    expect(decodeWiegand(format, encodeLayout(layout, bits, 1, 1)).parityOk).toBe(true);
    for (let k = 0; k < fixed.length; k++) {
      const frame = encodeLayout(layout, bits, 1, 1, 0, k);
      expect(frame[fixed[k]!.position]).toBe(String(1 - fixed[k]!.value));
      expect(decodeWiegand(format, frame)).toEqual({ facilityCode: 1, cardNumber: 1, parityOk: false });
    }
  }
});
