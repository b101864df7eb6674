// Card-format entries of a cloud node (SPEC §5): the standard H10301 with every facility-code policy
// and parity setting; old-style entries whose well-known id names the layout; entries whose `layout`
// string names a well-known layout under another id (a plain name, a UUID, or another well-known id);
// raw formats (an id outside the table without a layout: the whole frame is the card number, some of
// them longer than 53 bits); plus a few custom layouts (a 32-bit one with room for longer frames, a wide
// 60-bit one whose card number can exceed 2^53−1, a 9-bit one without facility code or parity,
// a 26-bit layout under the id "H10301" whose last parity bit covers the first, and a 36-bit one
// with fixed marker bits, one of them covered by parity).
import fc from "fast-check";
import { KNOWN_CARD_FORMATS } from "../../src/model/index.js";

export interface BitFieldInput {
  offset: number;
  length: number;
}
export interface ParityInput {
  position: number;
  type: "even" | "odd";
  range?: BitFieldInput;
  mask?: string;
}
export interface FixedInput {
  position: number;
  value: 0 | 1;
}
export interface LayoutInput {
  facilityCode: BitFieldInput | null;
  cardNumber: BitFieldInput;
  parity: ParityInput[];
  fixed?: FixedInput[];
}
export interface CardFormatInput {
  id: string;
  description?: string | null;
  min_input_bits: number;
  max_input_bits: number;
  facility_code?: "ENFORCED" | "FILTER_LIST" | "NOT_ENFORCED";
  allowed_facility_codes?: number[];
  enforce_parity?: boolean;
  /** A custom layout, a well-known layout's name, or none (the id's well-known layout, else raw). */
  layout?: LayoutInput | string | null;
}

/** The H10301 layout written out, for the encoder (positions 0-based from the first bit sent). */
export const H10301_LAYOUT: LayoutInput = {
  facilityCode: { offset: 1, length: 8 },
  cardNumber: { offset: 9, length: 16 },
  parity: [
    { position: 0, type: "even", range: { offset: 1, length: 12 } },
    { position: 25, type: "odd", range: { offset: 13, length: 12 } },
  ],
};

/** Custom layouts, with the frame lengths they accept. */
export const CUSTOM_FORMATS: readonly (Pick<CardFormatInput, "id" | "min_input_bits" | "max_input_bits"> & {
  layout: LayoutInput;
})[] = [
  {
    id: "C32",
    min_input_bits: 32,
    max_input_bits: 34,
    layout: {
      facilityCode: { offset: 1, length: 12 },
      cardNumber: { offset: 13, length: 18 },
      parity: [
        { position: 0, type: "even", range: { offset: 1, length: 15 } },
        { position: 31, type: "odd", range: { offset: 16, length: 15 } },
      ],
    },
  },
  {
    id: "W60",
    min_input_bits: 60,
    max_input_bits: 64,
    layout: {
      facilityCode: null,
      cardNumber: { offset: 1, length: 58 },
      parity: [
        { position: 0, type: "even", range: { offset: 1, length: 29 } },
        { position: 59, type: "odd", range: { offset: 30, length: 29 } },
      ],
    },
  },
  {
    id: "S9",
    min_input_bits: 9,
    max_input_bits: 12,
    layout: { facilityCode: null, cardNumber: { offset: 0, length: 9 }, parity: [] },
  },
  {
    id: "H10301",
    min_input_bits: 26,
    max_input_bits: 26,
    layout: {
      facilityCode: { offset: 1, length: 4 },
      cardNumber: { offset: 5, length: 20 },
      parity: [
        { position: 0, type: "even", mask: "0111111111111" },
        { position: 25, type: "odd", mask: "1".repeat(25) },
      ],
    },
  },
  {
    id: "F36",
    min_input_bits: 36,
    max_input_bits: 38,
    layout: {
      facilityCode: { offset: 2, length: 10 },
      cardNumber: { offset: 12, length: 20 },
      parity: [
        { position: 0, type: "even", range: { offset: 1, length: 17 } },
        { position: 35, type: "odd", range: { offset: 17, length: 16 } },
      ],
      // Bit 1 is covered by parity bit 0, bit 32 by parity bit 35, bit 33 by none.
      fixed: [
        { position: 1, value: 1 },
        { position: 33, value: 0 },
        { position: 32, value: 1 },
      ],
    },
  },
];

/** Facility codes shared by credentials, filter lists and requests, so that they meet. */
export const FACILITY_CODES = [0, 1, 2, 17, 255] as const;

const policyArb = fc.constantFrom<CardFormatInput["facility_code"] | undefined>(
  undefined,
  "ENFORCED",
  "FILTER_LIST",
  "NOT_ENFORCED",
);

/** Policy fields of a format entry; FILTER_LIST always carries codes (the snapshot requires it). */
const policyFieldsArb = fc
  .record({
    policy: policyArb,
    codes: fc.oneof(
      fc.subarray([...FACILITY_CODES], { minLength: 1 }),
      fc.array(fc.integer({ min: 0, max: 4095 }), { minLength: 1, maxLength: 3 }),
    ),
    extraCodes: fc.boolean(),
    parity: fc.constantFrom<boolean | undefined>(undefined, true, false),
  })
  .map(({ policy, codes, extraCodes, parity }) => {
    const out: Pick<CardFormatInput, "facility_code" | "allowed_facility_codes" | "enforce_parity"> = {};
    if (policy !== undefined) out.facility_code = policy;
    // Codes under another policy are allowed and must be ignored.
    if (policy === "FILTER_LIST" || extraCodes) out.allowed_facility_codes = codes;
    if (parity !== undefined) out.enforce_parity = parity;
    return out;
  });

/** Every well-known format of the table (SPEC §5), by id: the table is data, the encoder here is our own. */
export const KNOWN_FORMAT_IDS: readonly string[] = Object.keys(KNOWN_CARD_FORMATS);

/** A well-known layout written as a custom one (parity coverage as masks), for the encoder. */
export function knownLayout(id: string): LayoutInput {
  const k = KNOWN_CARD_FORMATS[id]!;
  return {
    facilityCode: k.facilityCode,
    cardNumber: k.cardNumber,
    ...(k.markers === undefined ? {} : { fixed: k.markers.map((m) => ({ position: m.position, value: m.value })) }),
    parity: k.parity.map((p) => {
      const mask = new Array<string>(k.bits).fill("0");
      for (const c of p.covers) mask[c] = "1";
      return { position: p.position, type: p.odd ? "odd" : "even", mask: mask.join("") };
    }),
  };
}

/** Ids under which a `layout` string names a layout: a plain name, a UUID (a migrated entry), and a well-known id that is not the layout. */
export const NAMED_LAYOUT_IDS: readonly string[] = ["lobby-readers", "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90", "H10301"];

/** Raw formats (unknown id, no layout): frame ranges, some admitting frames longer than 53 bits. */
export const RAW_FORMATS: readonly Pick<CardFormatInput, "id" | "min_input_bits" | "max_input_bits">[] = [
  { id: "site-raw", min_input_bits: 26, max_input_bits: 26 },
  { id: "site-raw", min_input_bits: 9, max_input_bits: 40 },
  { id: "7d0e55c2-9a1b-5c3d-8e4f-0a1b2c3d4e5f", min_input_bits: 32, max_input_bits: 64 },
  // Differs from a table name only in case: raw, not H10301.
  { id: "h10301", min_input_bits: 26, max_input_bits: 30 },
];

/**
 * One format entry: mostly the standard H10301, sometimes another old-style well-known id, a layout
 * string under another id, a raw format, or a custom layout.
 */
export const cardFormatArb: fc.Arbitrary<CardFormatInput> = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: fc.constant(-1) },
      { weight: 3, arbitrary: fc.nat(CUSTOM_FORMATS.length - 1) },
      { weight: 3, arbitrary: fc.nat(KNOWN_FORMAT_IDS.length - 1).map((k) => 100 + k) },
      { weight: 2, arbitrary: fc.nat(KNOWN_FORMAT_IDS.length * NAMED_LAYOUT_IDS.length - 1).map((k) => 1000 + k) },
      { weight: 3, arbitrary: fc.nat(RAW_FORMATS.length * 2 - 1).map((k) => 2000 + k) },
    ),
    policyFieldsArb,
  )
  .map(([which, fields]): CardFormatInput => {
    if (which < 0)
      return {
        id: "H10301",
        min_input_bits: 26,
        max_input_bits: 26,
        ...(fields.enforce_parity === false ? { layout: null } : {}),
        ...fields,
      };
    if (which >= 2000) {
      // An absent layout and an explicit null mean the same: raw.
      const f = RAW_FORMATS[(which - 2000) >> 1]!;
      return { ...f, ...((which & 1) === 1 ? { layout: null } : {}), ...fields };
    }
    if (which >= 1000) {
      const name = KNOWN_FORMAT_IDS[(which - 1000) % KNOWN_FORMAT_IDS.length]!;
      const id = NAMED_LAYOUT_IDS[Math.floor((which - 1000) / KNOWN_FORMAT_IDS.length)]!;
      const bits = KNOWN_CARD_FORMATS[name]!.bits;
      return { id, min_input_bits: bits, max_input_bits: bits, layout: name, ...fields };
    }
    if (which >= 100) {
      const id = KNOWN_FORMAT_IDS[which - 100]!;
      const bits = KNOWN_CARD_FORMATS[id]!.bits;
      return { id, min_input_bits: bits, max_input_bits: bits, ...fields };
    }
    const f = CUSTOM_FORMATS[which]!;
    return {
      id: f.id,
      min_input_bits: f.min_input_bits,
      max_input_bits: f.max_input_bits,
      layout: f.layout,
      ...fields,
    };
  });

/** A node's `cardFormat`: absent, null, empty (all the default) or one to three entries. */
export const nodeCardFormatsArb: fc.Arbitrary<CardFormatInput[] | null | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant(null).map((): CardFormatInput[] => []) },
  { weight: 5, arbitrary: fc.array(cardFormatArb, { minLength: 1, maxLength: 3 }) },
);

/** Whether an entry is raw: no layout and an id outside the well-known table (SPEC §5). */
export function isRawInput(f: CardFormatInput): boolean {
  return (f.layout === undefined || f.layout === null) && !Object.hasOwn(KNOWN_CARD_FORMATS, f.id);
}

/**
 * The layout an entry decodes a `length`-bit frame with: its custom layout, the well-known layout its
 * `layout` string or (without a layout) its id names, or — raw — the whole frame as the card number.
 */
export function layoutOfInput(f: CardFormatInput, length: number): LayoutInput {
  if (typeof f.layout === "object" && f.layout !== null) return f.layout;
  if (typeof f.layout === "string") return knownLayout(f.layout);
  if (Object.hasOwn(KNOWN_CARD_FORMATS, f.id)) return knownLayout(f.id);
  return { facilityCode: null, cardNumber: { offset: 0, length }, parity: [] };
}

/** The formats a node actually uses: its entries, or the default H10301 when it lists none. */
export function effectiveFormats(formats: CardFormatInput[] | null | undefined): CardFormatInput[] {
  return formats === undefined || formats === null || formats.length === 0
    ? [{ id: "H10301", min_input_bits: 26, max_input_bits: 26 }]
    : formats;
}
