// The holder and rule fast paths against their schemas: over random near-valid elements, whenever a
// fast path answers, the schema accepts the same element and returns an equal value with the same keys
// in the same order; and it does answer for plainly valid ones (else it would be a fast path in name).
import fc from "fast-check";
import type { z } from "zod";
import { describe, expect, test } from "vitest";
import { DECLINED, fastHolder, fastRule } from "../../src/model/fastParse.js";
import { holderSchema, normalizeHolder, ruleSchema } from "../../src/model/index.js";
import { NUM_RUNS, REPLAY, TIMEOUT } from "./support.js";

/** Values and keys in order, arrays and objects alike: what toEqual would let differ in key order. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return { array: v.map(shape), length: v.length };
  if (typeof v === "object" && v !== null)
    return Object.keys(v).map((k) => [k, shape((v as Record<string, unknown>)[k])]);
  return Object.is(v, -0) ? "-0" : v;
}

type HolderOut = z.output<typeof holderSchema>;

/**
 * Over random elements: wherever `fast` answers, `schema` accepts the same element with an equal
 * value, keys in the same order (and `also` holds of both). The fast path answers for a good share of
 * the elements (about a quarter of these near-valid ones), so the comparison is not vacuous.
 */
function agreesWithSchema(
  arb: fc.Arbitrary<unknown>,
  fast: (raw: unknown) => unknown,
  schema: z.ZodType,
  also?: (fast: unknown, slow: unknown) => void,
): void {
  let answered = 0;
  fc.assert(
    fc.property(arb, (raw) => {
      const answer = fast(raw);
      if (answer === DECLINED) return;
      answered++;
      const slow = schema.safeParse(raw);
      expect(slow.success).toBe(true);
      expect(shape(answer)).toEqual(shape(slow.data));
      also?.(answer, slow.data);
    }),
    { numRuns: NUM_RUNS * 4, ...REPLAY },
  );
  expect(answered).toBeGreaterThan(NUM_RUNS / 2);
}

const UNDEFINED = fc.constant(undefined);
const odd = fc.oneof(
  fc.constant(null),
  UNDEFINED,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant({}),
  fc.constant([]),
  fc.string(),
);
const text = (max: number, min = 0) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, 40) }) },
    { weight: 1, arbitrary: fc.constantFrom("", "x".repeat(max), "x".repeat(max + 1)) },
  );
const dateTime = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("2026-03-01T08:00:00", "2024-02-29T23:59:59") },
  {
    weight: 1,
    arbitrary: fc.constantFrom("2026-02-30T08:00:00", "2026-03-01T24:00:00", "2026-03-01 08:00:00", "2026-03-01T08:00"),
  },
);
const digits = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[0-9]{1,6}$/) },
  { weight: 1, arbitrary: fc.constantFrom("12a4", "", "١٢٣") },
);
const count = fc.oneof(
  { weight: 8, arbitrary: fc.oneof(fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER), fc.constant(-0)) },
  { weight: 1, arbitrary: fc.constantFrom(Number.MAX_SAFE_INTEGER + 1, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY) },
);
/** Mostly a valid value, sometimes an odd one. */
const needed = <T>(valid: fc.Arbitrary<T>, rest: fc.Arbitrary<unknown> = odd) =>
  fc.oneof({ weight: 20, arbitrary: valid as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: rest });
/** The same, or absent. */
const field = <T>(valid: fc.Arbitrary<T>, rest: fc.Arbitrary<unknown> = odd) =>
  fc.option(needed(valid, rest), { nil: undefined, freq: 4 });
const types = fc.oneof(
  { weight: 6, arbitrary: fc.subarray(["card", "touch", "token"], { minLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom([], ["card", "card"], ["badge"], "card", [1]) },
);

function credentialArb(holderId: fc.Arbitrary<string>) {
  return fc.record(
    {
      id: needed(fc.stringMatching(/^cred-[0-9]{1,3}$/), fc.constant("")),
      holderId: fc.oneof(
        { weight: 8, arbitrary: UNDEFINED },
        { weight: 4, arbitrary: holderId },
        { weight: 1, arbitrary: fc.constant("someone-else") },
      ),
      credentialNumber: field(count),
      facilityCode: field(count),
      description: field(text(255)),
      types: needed(types),
      extra: field(fc.string()),
    },
    { requiredKeys: ["id", "types"] },
  );
}

const holderArb = fc.constantFrom("h1", "h2").chain((id) =>
  fc.record(
    {
      id: fc.oneof({ weight: 8, arbitrary: fc.constant(id) }, { weight: 1, arbitrary: odd }),
      firstName: needed(text(35, 1)),
      lastName: needed(text(35, 1)),
      email: field(fc.constantFrom("ada@example.org", "")),
      photoUrl: field(fc.constantFrom("https://example.org/a.png", "x".repeat(300))),
      partition: field(fc.constantFrom("part-1", "")),
      enabled: field(fc.boolean()),
      activeDate: field(dateTime),
      expireDate: field(dateTime),
      pin: field(digits),
      duressPin: field(digits),
      customFields: field(
        fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom("badge", "__proto__", "floor"), fc.jsonValue())),
      ),
      groups: field(
        fc.array(
          fc.oneof(
            { weight: 20, arbitrary: fc.constantFrom("g1", "g2", "g3") },
            { weight: 1, arbitrary: fc.constantFrom("", { id: "g1" }, 7) },
          ),
          { maxLength: 4 },
        ),
      ),
      credentials: field(fc.array(credentialArb(fc.constant(id)), { maxLength: 3 })),
      somethingElse: field(fc.string()),
    },
    { requiredKeys: ["id", "firstName", "lastName"] },
  ),
);

const clock = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("00:00:00", "08:30:00", "23:59:59") },
  { weight: 1, arbitrary: fc.constantFrom("24:00:00", "24:00:01", "8:30:00", "12:60:00", "") },
);
const ruleArb = fc.record(
  {
    id: needed(fc.constantFrom("r1", "r2"), fc.constant("")),
    name: field(text(70)),
    type: needed(fc.constantFrom("door", "elevator")),
    groupId: needed(fc.constantFrom("g1", "g2"), fc.constant("")),
    devices: field(fc.array(needed(fc.constantFrom("d1", "d2"), fc.constantFrom("", 3)), { maxLength: 3 })),
    floorGroups: field(
      fc.array(needed(fc.constantFrom("f1", "f2"), fc.constantFrom("", { id: "f1" })), { maxLength: 3 }),
    ),
    startTime: needed(clock),
    stopTime: needed(clock),
    recurring: needed(
      fc.oneof(
        { weight: 8, arbitrary: fc.subarray(["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]) },
        { weight: 1, arbitrary: fc.constantFrom(["Mon", "Mon"], ["mon"], []) },
      ),
    ),
    allow: field(fc.boolean()),
    authenticationPolicy: field(
      fc.constantFrom("cardOnly", "pinOnly", "cardOrPin", "cardAndPin", null),
      fc.constantFrom("card", ""),
    ),
    enabled: field(fc.boolean()),
    startDate: field(fc.constantFrom("2026-01-01", "2026-06-30"), fc.constantFrom("2026-02-30", "2026-1-01")),
    endDate: field(fc.constantFrom("2026-03-01", "2026-12-31"), fc.constantFrom("2026-13-01", "")),
    other: field(fc.string()),
  },
  { requiredKeys: ["id", "type", "groupId", "startTime", "stopTime", "recurring"] },
);

describe("rule fast path", () => {
  test(
    "answers only what the rule schema answers, keys in the same order",
    () => agreesWithSchema(ruleArb, fastRule, ruleSchema),
    TIMEOUT,
  );

  test("declines what only the schema can report", () => {
    const base = {
      id: "r1",
      type: "door",
      groupId: "g1",
      devices: ["d1"],
      startTime: "08:00:00",
      stopTime: "17:00:00",
      recurring: ["Mon"],
    };
    expect(fastRule(base)).not.toBe(DECLINED);
    for (const odd of [
      { floorGroups: ["f1"] },
      { type: "elevator" },
      { type: "elevator", devices: [], floorGroups: ["f1"], allow: false },
      { recurring: ["Mon", "Mon"] },
      { startDate: "2026-05-01", endDate: "2026-04-01" },
      { startTime: "24:00:00" },
      { recurring: undefined },
    ])
      expect(fastRule({ ...base, ...odd }), JSON.stringify(odd)).toBe(DECLINED);
  });
});

describe("holder fast path", () => {
  test(
    "answers only what the holder schema answers, keys in the same order",
    () =>
      agreesWithSchema(holderArb, fastHolder, holderSchema, (fast, slow) =>
        expect(shape(normalizeHolder(fast as HolderOut))).toEqual(shape(normalizeHolder(slow as HolderOut))),
      ),
    TIMEOUT,
  );

  test("answers for plainly valid holders, with every default the schema fills in", () => {
    const raw = {
      id: "h1",
      firstName: "Ada",
      lastName: "Byron",
      groups: ["g1"],
      credentials: [
        { id: "c1", credentialNumber: 7, facilityCode: 1, types: ["card"] },
        { id: "c2", types: ["touch"], holderId: "h1" },
      ],
    };
    const fast = fastHolder(raw);
    expect(fast).not.toBe(DECLINED);
    expect(shape(fast)).toEqual(shape(holderSchema.parse(raw)));
    expect(fast).toMatchObject({
      email: null,
      photoUrl: null,
      partition: null,
      enabled: true,
      activeDate: null,
      pin: null,
      customFields: {},
    });
  });

  test("declines what only the schema can report or normalize", () => {
    const base = { id: "h1", firstName: "Ada", lastName: "Byron" };
    for (const odd of [
      { groups: [{ id: "g1" }] },
      { pin: "1234", duressPin: "1234" },
      { credentials: [{ id: "c1", types: ["card"] }] },
      { credentials: [{ id: "c1", types: ["touch"], facilityCode: 3 }] },
      { credentials: [{ id: "c1", types: ["touch"], holderId: "h2" }] },
      { customFields: [] },
      { enabled: "yes" },
      { firstName: "x".repeat(36) },
    ])
      expect(fastHolder({ ...base, ...odd }), JSON.stringify(odd)).toBe(DECLINED);
  });

  test("normalizeHolder keeps every key the schema gives a holder and shares one empty custom-fields object and equal type lists", () => {
    const a = normalizeHolder(
      holderSchema.parse({
        id: "h1",
        firstName: "Ada",
        lastName: "Byron",
        credentials: [{ id: "c1", types: ["touch"] }],
      }),
    );
    const b = normalizeHolder(holderSchema.parse({ id: "h2", firstName: "Bo", lastName: "Li", customFields: null }));
    expect(Object.keys(a)).toEqual(Object.keys(holderSchema.parse({ id: "h1", firstName: "Ada", lastName: "Byron" })));
    expect(Object.keys(a.credentials[0]!)).toEqual([
      "id",
      "credentialNumber",
      "facilityCode",
      "description",
      "types",
      "holderId",
    ]);
    expect(a.customFields).toBe(b.customFields);
    expect(Object.isFrozen(a.customFields)).toBe(true);
    const c = normalizeHolder(
      holderSchema.parse({ id: "h3", firstName: "Cy", lastName: "Ng", customFields: { badge: 3 } }),
    );
    expect(c.customFields).toEqual({ badge: 3 });
    // Equal lists of credential types are one frozen array.
    const d = normalizeHolder(
      holderSchema.parse({
        id: "h4",
        firstName: "Di",
        lastName: "Ox",
        credentials: [
          { id: "c4", types: ["touch"] },
          { id: "c5", types: ["card", "touch"], credentialNumber: 5 },
        ],
      }),
    );
    expect(d.credentials[0]!.types).toBe(a.credentials[0]!.types);
    expect(Object.isFrozen(d.credentials[1]!.types)).toBe(true);
    expect(d.credentials[1]!.types).toEqual(["card", "touch"]);
  });
});
