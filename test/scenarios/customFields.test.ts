// Custom fields in the snapshot (semantics S15, S16): every definition rule and every value rule,
// each reported by parseSnapshot at its path with its sentence; the normalized definitions.
import { describe, expect, test } from "vitest";
import { type Issue, parseSnapshot } from "../../src/model/index.js";

type Json = Record<string, unknown>;

function snapshot(customFields: Json[], holders: Json[] = []): Json {
  return {
    format: "rsop-system/1",
    systemId: "s",
    partitions: [
      { id: "p1", name: "One" },
      { id: "p2", name: "Two" },
    ],
    customFields,
    holders: holders.map((h, i) => ({ id: `h${i + 1}`, firstName: "A", lastName: "B", partition: "p1", ...h })),
  };
}

function issues(customFields: Json[], holders: Json[] = []): [string, string, string][] {
  const r = parseSnapshot(snapshot(customFields, holders));
  if (r.ok) throw new Error("expected the snapshot to be refused");
  return r.issues.map((i: Issue) => [i.path.join("."), i.code, i.message]);
}

const field = (def: Json): Json => ({ id: "f", partition: "p1", ...def });

describe("definitions (S15)", () => {
  test("a valid definition of each type loads, with displayName = id, required false and visibility visible by default", () => {
    const defs = [
      field({ id: "s", type: "string", regex: "^B-", description: "Starts with B-", displayName: "Badge" }),
      field({ id: "n", type: "number", min: 0, max: 10, decimals: 2 }),
      field({ id: "b", type: "boolean", required: true, visibility: "hidden" }),
      field({ id: "e", type: "enum", values: [{ id: "red" }, { id: "blue", displayName: "Blue" }] }),
      field({ id: "a", type: "array", items: { type: "enum", values: [{ id: "x" }] }, minLength: 0, maxLength: 2 }),
      field({
        id: "o",
        type: "object",
        fields: [
          { id: "city", type: "string" },
          { id: "zip", type: "string", regex: "^[0-9]{5}$", description: "Five digits" },
        ],
      }),
      field({ id: "unknownKeys", type: "string", shoeSize: 42 }),
    ];
    const r = parseSnapshot(snapshot(defs, [{ customFields: { b: true } }]));
    expect(r.ok ? null : r.issues).toBeNull();
    if (!r.ok) return;
    expect(r.value.customFields.map((d) => [d.id, d.displayName, d.required, d.visibility])).toEqual([
      ["s", "Badge", false, "visible"],
      ["n", "n", false, "visible"],
      ["b", "b", true, "hidden"],
      ["e", "e", false, "visible"],
      ["a", "a", false, "visible"],
      ["o", "o", false, "visible"],
      ["unknownKeys", "unknownKeys", false, "visible"],
    ]);
    expect(r.value.customFields[6]).not.toHaveProperty("shoeSize");
    expect(r.value.customFields[1]).toEqual({
      id: "n",
      type: "number",
      min: 0,
      max: 10,
      decimals: 2,
      partition: "p1",
      displayName: "n",
      required: false,
      visibility: "visible",
    });
    // Loading the loaded snapshot again changes nothing.
    const again = parseSnapshot(r.value);
    expect(again.ok && again.value).toEqual(r.value);
  });

  test.each([
    ["an unknown type", { type: "date" }, "customFields.0.type", "invalidValue"],
    ["an enum without values", { type: "enum" }, "customFields.0.values", "invalid"],
    ["an enum with no value", { type: "enum", values: [] }, "customFields.0.values", "tooSmall"],
    [
      "an enum value without id",
      { type: "enum", values: [{ displayName: "Red" }] },
      "customFields.0.values.0.id",
      "invalidType",
    ],
    [
      "an enum value twice",
      { type: "enum", values: [{ id: "x" }, { id: "x" }] },
      "customFields.0.values.1.id",
      "invalid",
    ],
    ["an array without items", { type: "array" }, "customFields.0.items", "invalid"],
    [
      "array items of type object",
      { type: "array", items: { type: "object" } },
      "customFields.0.items.type",
      "invalidValue",
    ],
    [
      "array items of type array",
      { type: "array", items: { type: "array" } },
      "customFields.0.items.type",
      "invalidValue",
    ],
    ["enum items without values", { type: "array", items: { type: "enum" } }, "customFields.0.items.values", "invalid"],
    ["an object without fields", { type: "object" }, "customFields.0.fields", "invalid"],
    [
      "a child of type object",
      { type: "object", fields: [{ id: "c", type: "object" }] },
      "customFields.0.fields.0.type",
      "invalidValue",
    ],
    [
      "a child without id",
      { type: "object", fields: [{ type: "string" }] },
      "customFields.0.fields.0.id",
      "invalidType",
    ],
    [
      "a child id twice",
      {
        type: "object",
        fields: [
          { id: "c", type: "string" },
          { id: "c", type: "number" },
        ],
      },
      "customFields.0.fields.1.id",
      "invalid",
    ],
    ["min above max", { type: "number", min: 5, max: 4 }, "customFields.0.max", "invalid"],
    ["a fractional min", { type: "number", min: 0.5 }, "customFields.0.min", "invalidType"],
    ["decimals 11", { type: "number", decimals: 11 }, "customFields.0.decimals", "tooBig"],
    ["decimals -1", { type: "number", decimals: -1 }, "customFields.0.decimals", "tooSmall"],
    [
      "minLength above maxLength",
      { type: "array", items: { type: "string" }, minLength: 3, maxLength: 2 },
      "customFields.0.maxLength",
      "invalid",
    ],
    [
      "a negative minLength",
      { type: "array", items: { type: "string" }, minLength: -1 },
      "customFields.0.minLength",
      "tooSmall",
    ],
    ["an invalid regex", { type: "string", regex: "(", description: "d" }, "customFields.0.regex", "invalid"],
    [
      "a regex of 256 characters",
      { type: "string", regex: "a".repeat(256), description: "d" },
      "customFields.0.regex",
      "tooBig",
    ],
    ["a regex without description", { type: "string", regex: "^a" }, "customFields.0.description", "invalid"],
    [
      "a child regex without description",
      { type: "object", fields: [{ id: "c", type: "string", regex: "^a" }] },
      "customFields.0.fields.0.description",
      "invalid",
    ],
    [
      "an items regex without description",
      { type: "array", items: { type: "string", regex: "^a" } },
      "customFields.0.items.description",
      "invalid",
    ],
    ["an unknown visibility", { type: "string", visibility: "secret" }, "customFields.0.visibility", "invalidValue"],
    ["required not a boolean", { type: "string", required: "yes" }, "customFields.0.required", "invalidType"],
    ["no id", { id: undefined, type: "string" }, "customFields.0.id", "invalidType"],
    ["no type", { type: undefined }, "customFields.0.type", "invalidValue"],
    ["no partition", { type: "string", partition: undefined }, "customFields.0.partition", "invalidType"],
    ["a null partition", { type: "string", partition: null }, "customFields.0.partition", "invalidType"],
  ])("%s is refused at its path", (_what, def, path, code) => {
    expect(issues([field(def as Json)]).map(([p, c]) => [p, c])).toEqual([[path, code]]);
  });

  test("a regex of 255 characters and decimals 0 and 10 are accepted (the limits)", () => {
    const r = parseSnapshot(
      snapshot([
        field({ id: "r", type: "string", regex: "a".repeat(255), description: "a's" }),
        field({ id: "d0", type: "number", decimals: 0 }),
        field({ id: "d10", type: "number", decimals: 10 }),
      ]),
    );
    expect(r.ok).toBe(true);
  });

  test("the sentences say what is wrong", () => {
    expect(issues([field({ type: "string", regex: "^a" })])[0]![2]).toBe(
      "Is required when regex is given: it tells people what the expression accepts.",
    );
    expect(issues([field({ type: "enum" })])[0]![2]).toBe("An enum field needs its values.");
    expect(issues([field({ type: "array" })])[0]![2]).toBe("An array field needs its items definition.");
    expect(issues([field({ type: "object" })])[0]![2]).toBe("An object field needs its child fields.");
    expect(issues([field({ type: "string", regex: "[", description: "d" })])[0]![2]).toBe(
      "Must be a valid regular expression.",
    );
  });

  test("an id is unique within its partition; the same id in two partitions is two fields", () => {
    expect(parseSnapshot(snapshot([field({ type: "string" }), field({ type: "number", partition: "p2" })])).ok).toBe(
      true,
    );
    expect(issues([field({ type: "string" }), field({ type: "number" })])).toEqual([
      ["customFields.1.id", "duplicateId", 'Custom field id "f" is used twice in partition "p1".'],
    ]);
  });

  test("the partition must be listed", () => {
    expect(issues([field({ type: "string", partition: "p9" })])).toEqual([
      ["customFields.0.partition", "unknownReference", 'Names partition "p9", which is not in the snapshot.'],
    ]);
  });
});

describe("values (S16)", () => {
  const defs = [
    field({ id: "badge", type: "string", regex: "^B-[0-9]+$", description: "B- and digits", required: true }),
    field({ id: "level", type: "number", min: 1, max: 5, decimals: 1 }),
    field({ id: "vip", type: "boolean" }),
    field({ id: "colour", type: "enum", values: [{ id: "red" }, { id: "blue" }] }),
    field({ id: "tags", type: "array", items: { type: "number", max: 9 }, minLength: 1, maxLength: 2 }),
    field({
      id: "address",
      type: "object",
      fields: [
        { id: "city", type: "string" },
        { id: "floor", type: "number", min: 0 },
      ],
    }),
    field({ id: "other", type: "string", partition: "p2" }),
  ];
  const ok = { badge: "B-1" };

  test("values that fit load; null is no value; values are kept as given", () => {
    const values = {
      badge: "B-12",
      level: 4.5,
      vip: false,
      colour: "blue",
      tags: [1, 9],
      address: { city: "Lyon" },
      ...{},
    };
    const r = parseSnapshot(
      snapshot(defs, [{ customFields: values }, { customFields: { badge: "B-2", level: null } }]),
    );
    expect(r.ok ? null : r.issues).toBeNull();
    expect(r.ok && r.value.holders[0]!.customFields).toEqual(values);
  });

  test.each([
    [
      "a key of no field",
      { nope: 1 },
      "holders.0.customFields.nope",
      "invalidKey",
      "Is not a custom field of its partition.",
    ],
    [
      "a field of another partition",
      { other: "x" },
      "holders.0.customFields.other",
      "invalidKey",
      "Is not a custom field of its partition.",
    ],
    [
      "a string that does not match",
      { badge: "X-1" },
      "holders.0.customFields.badge",
      "invalidValue",
      "Must match ^B-[0-9]+$.",
    ],
    ["a number as string", { badge: 7 }, "holders.0.customFields.badge", "invalidValue", "Must be a string."],
    ["a number below min", { level: 0 }, "holders.0.customFields.level", "invalidValue", "Must be at least 1."],
    ["a number above max", { level: 6 }, "holders.0.customFields.level", "invalidValue", "Must be at most 5."],
    [
      "too many decimals",
      { level: 1.25 },
      "holders.0.customFields.level",
      "invalidValue",
      "Must have at most 1 decimal places.",
    ],
    ["a string as number", { level: "3" }, "holders.0.customFields.level", "invalidValue", "Must be a number."],
    ["a string as boolean", { vip: "yes" }, "holders.0.customFields.vip", "invalidValue", "Must be true or false."],
    [
      "an unknown enum value",
      { colour: "green" },
      "holders.0.customFields.colour",
      "invalidValue",
      'Must be one of "red", "blue".',
    ],
    ["an array too short", { tags: [] }, "holders.0.customFields.tags", "invalidValue", "Must have at least 1 items."],
    [
      "an array too long",
      { tags: [1, 2, 3] },
      "holders.0.customFields.tags",
      "invalidValue",
      "Must have at most 2 items.",
    ],
    [
      "an item that does not fit",
      { tags: [1, 10] },
      "holders.0.customFields.tags.1",
      "invalidValue",
      "Must be at most 9.",
    ],
    ["a non-array", { tags: 1 }, "holders.0.customFields.tags", "invalidValue", "Must be an array."],
    [
      "an unknown child",
      { address: { planet: "Mars" } },
      "holders.0.customFields.address.planet",
      "invalidKey",
      'Is not a child field of "address".',
    ],
    [
      "a child that does not fit",
      { address: { floor: -1 } },
      "holders.0.customFields.address.floor",
      "invalidValue",
      "Must be at least 0.",
    ],
    [
      "an array as object",
      { address: [] },
      "holders.0.customFields.address",
      "invalidValue",
      "Must be an object of its child fields.",
    ],
  ])("%s is refused at its path", (_what, values, path, code, message) => {
    expect(issues(defs, [{ customFields: { ...ok, ...values } }])).toEqual([[path, code, message]]);
  });

  test("a required field needs a value: missing, null, or a holder with no customFields at all", () => {
    const required = ["holders.%.customFields.badge", "required", "Is a required custom field of its partition."];
    expect(issues(defs, [{ customFields: {} }, { customFields: { badge: null } }, { customFields: null }, {}])).toEqual(
      [0, 1, 2, 3].map((i) => [required[0]!.replace("%", String(i)), required[1], required[2]]),
    );
    // Holders of another partition, or of none, are not asked for it.
    expect(parseSnapshot(snapshot(defs, [{ partition: "p2" }, { partition: null }])).ok).toBe(true);
  });

  test("a holder with no partition has no custom fields", () => {
    expect(issues(defs, [{ partition: null, customFields: { badge: "B-1" } }])).toEqual([
      [
        "holders.0.customFields.badge",
        "invalidKey",
        "Is not a custom field: the holder is in no partition, and custom fields belong to a partition.",
      ],
    ]);
  });

  test("a value under a broken definition is not checked: the definition's problem is the one reported", () => {
    expect(
      issues(
        [field({ id: "badge", type: "string", regex: "(", description: "d", required: true })],
        [{ customFields: { badge: 5 } }, {}],
      ),
    ).toEqual([["customFields.0.regex", "invalid", "Must be a valid regular expression."]]);
  });
});
