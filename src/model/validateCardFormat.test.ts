import { describe, expect, test } from "vitest";
import { KNOWN_CARD_FORMATS } from "./cardFormats.js";
import { cardFormatSchema } from "./systemSchema.js";
import { validateCardFormat, validateLayout } from "./validateCardFormat.js";

/** A parsed card-format entry (zod defaults applied), 32…40 bits unless overridden. */
function entry(input: Record<string, unknown>) {
  return cardFormatSchema.parse({ id: "custom", min_input_bits: 32, max_input_bits: 40, ...input });
}

/** `[code, path]` of every issue, path rendered with dots. */
function issuesOf(input: Record<string, unknown>): [string, string][] {
  return validateCardFormat(entry(input)).map((i) => [i.code, i.path.join(".")]);
}

const fc8 = { offset: 1, length: 8 };
const cn16 = { offset: 9, length: 16 };

/** The test of fixed marker bits (its own function: the custom-layout block stays under 100 lines). */
function fixedMarkerBits() {
  const par = [{ position: 0, type: "even", range: { offset: 1, length: 30 } }];
  // A fixed bit may be covered by a parity bit (Kastle's bit 1 is).
  expect(
    issuesOf({
      layout: {
        facilityCode: fc8,
        cardNumber: cn16,
        parity: par,
        fixed: [
          { position: 25, value: 1 },
          { position: 31, value: 0 },
        ],
      },
    }),
  ).toEqual([]);
  expect(issuesOf({ layout: { cardNumber: cn16, fixed: [{ position: 32, value: 1 }] } })).toEqual([
    ["outOfRange", "layout.fixed.0.position"],
  ]);
  expect(issuesOf({ layout: { cardNumber: cn16, fixed: [{ position: 9, value: 1 }] } })).toEqual([
    ["overlap", "layout.fixed.0.position"],
  ]);
  expect(
    validateLayout({ facilityCode: null, cardNumber: cn16, parity: [], fixed: [{ position: 9, value: 1 }] }, 32)[0]
      ?.message,
  ).toBe("Bit 9 is used by both cardNumber and fixed[0].");
  expect(issuesOf({ layout: { cardNumber: cn16, parity: par, fixed: [{ position: 0, value: 1 }] } })).toEqual([
    ["overlap", "layout.fixed.0.position"],
  ]);
  expect(
    issuesOf({
      layout: {
        cardNumber: cn16,
        fixed: [
          { position: 30, value: 1 },
          { position: 30, value: 0 },
        ],
      },
    }),
  ).toEqual([["overlap", "layout.fixed.1.position"]]);
  const bad = cardFormatSchema.safeParse({
    id: "x",
    min_input_bits: 32,
    max_input_bits: 32,
    layout: { cardNumber: cn16, fixed: [{ position: 30, value: 2 }] },
  });
  expect(bad.success).toBe(false);
  expect(bad.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
    ["layout.fixed.0.value", "Must be 0 or 1."],
  ]);
  // Left out: none (a snapshot without `fixed` parses to the same entry as before).
  expect(entry({ layout: { cardNumber: cn16 } }).layout).not.toHaveProperty("fixed");
}

describe("custom layouts", () => {
  test(
    "fixed marker bits: inside the frame, on no field, parity bit or other fixed bit; value 0 or 1",
    fixedMarkerBits,
  );

  test("a sound layout has no issues", () => {
    expect(
      issuesOf({
        layout: {
          facilityCode: fc8,
          cardNumber: cn16,
          parity: [
            { position: 0, type: "even", range: { offset: 1, length: 12 } },
            { position: 25, type: "odd", mask: `${"0".repeat(13)}${"1".repeat(12)}` },
          ],
        },
      }),
    ).toEqual([]);
  });

  test("overlapping fields: one issue for the pair, at the later field, naming the bits", () => {
    const issues = validateCardFormat(entry({ layout: { facilityCode: { offset: 1, length: 12 }, cardNumber: cn16 } }));
    expect(issues).toEqual([
      {
        code: "overlap",
        path: ["layout", "cardNumber"],
        message: "Bits 9–12 are used by both facilityCode and cardNumber.",
      },
    ]);
  });

  test("a parity bit inside a field", () => {
    expect(
      issuesOf({
        layout: {
          facilityCode: fc8,
          cardNumber: cn16,
          parity: [{ position: 4, type: "even", range: { offset: 9, length: 4 } }],
        },
      }),
    ).toEqual([["overlap", "layout.parity.0.position"]]);
    expect(
      validateLayout(
        {
          facilityCode: fc8,
          cardNumber: cn16,
          parity: [{ position: 4, type: "even", range: { offset: 9, length: 4 } }],
        },
        32,
      )[0]?.message,
    ).toBe("Bit 4 is used by both facilityCode and parity[0].");
  });

  test("two parity bits at one position", () => {
    expect(
      issuesOf({
        layout: {
          cardNumber: cn16,
          parity: [
            { position: 0, type: "even", range: cn16 },
            { position: 0, type: "odd", range: cn16 },
          ],
        },
      }),
    ).toEqual([["overlap", "layout.parity.1.position"]]);
  });

  test("fields that do not fit in min_input_bits", () => {
    expect(issuesOf({ layout: { facilityCode: { offset: 30, length: 4 }, cardNumber: cn16 } })).toEqual([
      ["outOfRange", "layout.facilityCode"],
    ]);
    expect(issuesOf({ layout: { cardNumber: { offset: 20, length: 13 } } })).toEqual([
      ["outOfRange", "layout.cardNumber"],
    ]);
    // Exactly filling the frame is fine; max_input_bits does not count.
    expect(issuesOf({ layout: { cardNumber: { offset: 20, length: 12 } } })).toEqual([]);
  });

  test("parity bits and coverage outside min_input_bits", () => {
    expect(issuesOf({ layout: { cardNumber: cn16, parity: [{ position: 32, type: "odd", range: cn16 }] } })).toEqual([
      ["outOfRange", "layout.parity.0.position"],
    ]);
    expect(
      issuesOf({
        layout: { cardNumber: cn16, parity: [{ position: 0, type: "odd", range: { offset: 20, length: 13 } }] },
      }),
    ).toEqual([["outOfRange", "layout.parity.0"]]);
    expect(
      issuesOf({ layout: { cardNumber: cn16, parity: [{ position: 0, type: "odd", mask: `${"0".repeat(32)}1` }] } }),
    ).toEqual([["outOfRange", "layout.parity.0"]]);
    // A mask longer than the frame is fine while its extra characters are 0.
    expect(
      issuesOf({ layout: { cardNumber: cn16, parity: [{ position: 0, type: "odd", mask: `01${"0".repeat(40)}` }] } }),
    ).toEqual([]);
  });

  test("a parity bit needs exactly one of range and mask, and must cover another bit", () => {
    const both = { position: 0, type: "even", range: cn16, mask: "01" };
    const neither = { position: 0, type: "even" };
    const onlyItself = { position: 0, type: "even", range: { offset: 0, length: 1 } };
    expect(issuesOf({ layout: { cardNumber: cn16, parity: [both] } })).toEqual([["invalid", "layout.parity.0"]]);
    expect(issuesOf({ layout: { cardNumber: cn16, parity: [neither] } })).toEqual([["invalid", "layout.parity.0"]]);
    expect(issuesOf({ layout: { cardNumber: cn16, parity: [onlyItself] } })).toEqual([["invalid", "layout.parity.0"]]);
  });

  test("a layout wins over its id (S4), known or not", () => {
    expect(issuesOf({ id: "H10301", min_input_bits: 40, max_input_bits: 40, layout: { cardNumber: cn16 } })).toEqual(
      [],
    );
    expect(issuesOf({ id: "not-in-the-table", layout: { cardNumber: cn16 } })).toEqual([]);
  });
});

describe("entry checks", () => {
  test("FILTER_LIST without codes", () => {
    expect(issuesOf({ id: "H10301", min_input_bits: 26, max_input_bits: 26, facility_code: "FILTER_LIST" })).toEqual([
      ["invalid", "allowed_facility_codes"],
    ]);
    expect(
      issuesOf({
        id: "H10301",
        min_input_bits: 26,
        max_input_bits: 26,
        facility_code: "FILTER_LIST",
        allowed_facility_codes: [1],
      }),
    ).toEqual([]);
  });

  test("an unknown id without a layout is a raw format: any bit range, any policy, either parity setting (S4, S17)", () => {
    expect(issuesOf({ id: "H99999" })).toEqual([]);
    expect(issuesOf({ id: "constructor" })).toEqual([]);
    expect(
      issuesOf({
        id: "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90",
        min_input_bits: 9,
        max_input_bits: 512,
        enforce_parity: true,
      }),
    ).toEqual([]);
    expect(issuesOf({ id: "raw", facility_code: "FILTER_LIST", allowed_facility_codes: [5] })).toEqual([]);
    // The entry checks still apply.
    expect(issuesOf({ id: "raw", facility_code: "FILTER_LIST" })).toEqual([["invalid", "allowed_facility_codes"]]);
    expect(issuesOf({ id: "raw", min_input_bits: 40, max_input_bits: 32 })).toEqual([
      ["invalidRange", "max_input_bits"],
    ]);
  });

  test("a layout string names a well-known layout and takes its length rules, whatever the id (S4)", () => {
    expect(issuesOf({ id: "front-readers", layout: "H10306", min_input_bits: 34, max_input_bits: 34 })).toEqual([]);
    // The layout, not the id, fixes the length: H10301 as an id, H10306 as the layout.
    expect(issuesOf({ id: "H10301", layout: "H10306", min_input_bits: 34, max_input_bits: 34 })).toEqual([]);
    expect(issuesOf({ id: "H10301", layout: "H10306", min_input_bits: 26, max_input_bits: 26 })).toEqual([
      ["invalidRange", "min_input_bits"],
      ["invalidRange", "max_input_bits"],
    ]);
    expect(
      validateCardFormat(entry({ id: "x", layout: "C1k35s", min_input_bits: 35, max_input_bits: 36 }))[0]?.message,
    ).toBe("C1k35s reads exactly 35 bits; set min_input_bits and max_input_bits to 35.");
    for (const [name, f] of Object.entries(KNOWN_CARD_FORMATS))
      expect(issuesOf({ id: "any", layout: name, min_input_bits: f.bits, max_input_bits: f.bits }), name).toEqual([]);
  });

  test("an unknown layout name is refused at layout, naming the known layouts", () => {
    expect(issuesOf({ id: "x", layout: "H99999" })).toEqual([["unknownCardFormat", "layout"]]);
    expect(issuesOf({ id: "x", layout: "constructor" })).toEqual([["unknownCardFormat", "layout"]]);
    // Names are matched as the table spells them; a near miss in case is pointed out.
    const [issue] = validateCardFormat(entry({ id: "x", layout: "h10301", min_input_bits: 26, max_input_bits: 26 }));
    expect(issue).toMatchObject({ code: "unknownCardFormat", path: ["layout"] });
    expect(issue!.message).toMatch(
      /^"h10301" is not a well-known layout \(did you mean "H10301"\?\)\. Known layouts: H10301, .*C1k35s.*; for any other frame give a layout object\.$/,
    );
    // A well-known id does not rescue an unknown layout name.
    expect(issuesOf({ id: "H10301", layout: "nope", min_input_bits: 26, max_input_bits: 26 })).toEqual([
      ["unknownCardFormat", "layout"],
    ]);
  });

  test("layout shapes: a string, an object or null; anything else is refused at layout", () => {
    const shape = (layout: unknown) =>
      cardFormatSchema
        .safeParse({ id: "x", min_input_bits: 26, max_input_bits: 26, layout })
        .error?.issues.map((i) => [i.path.join("."), i.message]);
    expect(shape("H10301")).toBeUndefined();
    expect(shape(null)).toBeUndefined();
    expect(shape(7)).toEqual([
      ["layout", "Must be a well-known layout name (a string) or a layout object, not number."],
    ]);
    expect(shape([])).toEqual([
      ["layout", "Must be a well-known layout name (a string) or a layout object, not an array."],
    ]);
    expect(shape("")).toEqual([["layout", "Must be a well-known layout name, not an empty string."]]);
    // A custom layout's own problems keep their paths.
    expect(shape({ cardNumber: { offset: 0 } })?.map(([p]) => p)).toEqual(["layout.cardNumber.length"]);
    expect(cardFormatSchema.parse({ id: "x", min_input_bits: 26, max_input_bits: 26 }).layout).toBeNull();
  });

  test("a known id with a bit range other than its own length (S3)", () => {
    const known = (min: number, max: number) => issuesOf({ id: "H10301", min_input_bits: min, max_input_bits: max });
    expect(known(26, 26)).toEqual([]);
    expect(known(26, 34)).toEqual([["invalidRange", "max_input_bits"]]);
    expect(known(24, 26)).toEqual([["invalidRange", "min_input_bits"]]);
    expect(known(34, 34)).toEqual([
      ["invalidRange", "min_input_bits"],
      ["invalidRange", "max_input_bits"],
    ]);
    expect(validateCardFormat(entry({ id: "C1k48s", min_input_bits: 48, max_input_bits: 50 }))[0]?.message).toBe(
      "C1k48s reads exactly 48 bits; set min_input_bits and max_input_bits to 48.",
    );
  });

  test("min_input_bits above max_input_bits", () => {
    expect(issuesOf({ min_input_bits: 40, max_input_bits: 32, layout: { cardNumber: cn16 } })).toEqual([
      ["invalidRange", "max_input_bits"],
    ]);
  });

  test("every well-known id is accepted at its own length", () => {
    for (const [id, f] of Object.entries(KNOWN_CARD_FORMATS))
      expect(issuesOf({ id, min_input_bits: f.bits, max_input_bits: f.bits }), id).toEqual([]);
  });
});
