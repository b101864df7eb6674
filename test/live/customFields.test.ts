// seed 001 §4 "Custom fields" (under /partitions/{partition_id}/custom-fields): statuses, body
// checks at body paths, the seed shapes of the reads, and how definitions and holders' values keep
// each other valid (semantics L17, L18; the rules themselves are S15, S16).
import { describe, expect, test } from "vitest";
import { accept, building, liveOf, read, refuse, scan } from "./fixture.js";

type Json = Record<string, unknown>;
const BASE = "/partitions/p-east/custom-fields";

/** The fixture with two fields in the east wing, Cy's values, and Dee (also east) without values. */
function withFields(): ReturnType<typeof liveOf> {
  const b = building() as { holders: Json[]; customFields?: Json[] };
  b.customFields = [
    {
      id: "badge",
      type: "string",
      regex: "^B-[0-9]+$",
      description: "B- and digits",
      partition: "p-east",
      displayName: "Badge",
    },
    { id: "level", type: "number", min: 1, max: 5, partition: "p-east" },
  ];
  b.holders[2]!.customFields = { badge: "B-7", level: 3 };
  b.holders.push({ id: "h-dee", firstName: "Dee", lastName: "Ng", partition: "p-east" });
  return liveOf(b);
}

const holderBody = (h: Json): Json => ({
  firstName: h.firstName,
  lastName: h.lastName,
  partition: h.partition,
  enabled: true,
  activeDate: null,
  expireDate: null,
  pin: null,
  duressPin: null,
});

describe("create, read, list", () => {
  test("POST /single answers 200 {id}; the field reads back with its defaults and without partition", () => {
    const live = liveOf();
    const r = accept(
      live,
      {
        method: "POST",
        path: `${BASE}/single`,
        body: { id: "shift", type: "enum", values: [{ id: "day" }, { id: "night", displayName: "Night" }] },
      },
      200,
    );
    expect(r.id).toBe("shift");
    expect(read(live, `${BASE}/shift`).body).toEqual({
      id: "shift",
      type: "enum",
      values: [{ id: "day" }, { id: "night", displayName: "Night" }],
      displayName: "shift",
      required: false,
      visibility: "visible",
    });
    expect(live.snapshot.customFields).toEqual([
      {
        id: "shift",
        type: "enum",
        values: [{ id: "day" }, { id: "night", displayName: "Night" }],
        partition: "p-east",
        displayName: "shift",
        required: false,
        visibility: "visible",
      },
    ]);
  });

  test("the list answers the partition's fields by id, paged, with the total; other partitions' fields are not listed", () => {
    const live = withFields();
    accept(live, { method: "POST", path: `${BASE}/single`, body: { id: "alpha", type: "boolean" } }, 200);
    accept(
      live,
      { method: "POST", path: "/partitions/p-default/custom-fields/single", body: { id: "badge", type: "string" } },
      200,
    );
    const all = read(live, BASE);
    expect(all.body.map((d: Json) => d.id)).toEqual(["alpha", "badge", "level"]);
    expect(all.total).toBe(3);
    expect(all.body[1]).toEqual({
      id: "badge",
      type: "string",
      regex: "^B-[0-9]+$",
      description: "B- and digits",
      displayName: "Badge",
      required: false,
      visibility: "visible",
    });
    const page = read(live, `${BASE}?page=1&per_page=2`);
    expect([page.body.map((d: Json) => d.id), page.total]).toEqual([["level"], 3]);
    expect(read(live, "/partitions/p-default/custom-fields").body.map((d: Json) => [d.id, d.type])).toEqual([
      ["badge", "string"],
    ]);
    expect(refuse(live, { method: "GET", path: `${BASE}?per_page=101` }, 400).paths).toEqual(["query.per_page"]);
  });

  test("404: an unknown partition or field; 405: the literal routes", () => {
    const live = withFields();
    refuse(live, { method: "GET", path: "/partitions/p-nope/custom-fields" }, 404);
    refuse(live, { method: "GET", path: "/partitions/p-nope/custom-fields/badge" }, 404);
    refuse(live, { method: "GET", path: "/partitions/p-default/custom-fields/badge" }, 404);
    refuse(
      live,
      { method: "POST", path: "/partitions/p-nope/custom-fields/single", body: { id: "x", type: "string" } },
      404,
    );
    refuse(live, { method: "PUT", path: `${BASE}/nope`, body: { type: "string" } }, 404);
    refuse(live, { method: "DELETE", path: `${BASE}/nope` }, 404);
    refuse(live, { method: "POST", path: "/partitions/p-nope/custom-fields/all", body: [] }, 404);
    expect(refuse(live, { method: "GET", path: `${BASE}/all` }, 405).issues[0]!.message).toBe(
      `${BASE}/all takes POST, not GET.`,
    );
    refuse(live, { method: "POST", path: `${BASE}/badge` }, 405);
  });

  test("create requires id and type; every definition problem is a 400 at its body path", () => {
    const live = liveOf();
    const paths = (body: unknown) => refuse(live, { method: "POST", path: `${BASE}/single`, body }, 400).paths;
    expect(paths({})).toEqual(["body.id", "body.type"]);
    expect(paths([])).toEqual(["body"]);
    expect(paths({ id: "x", type: "date" })).toEqual(["body.type"]);
    expect(paths({ id: "x", type: "enum" })).toEqual(["body.values"]);
    expect(paths({ id: "x", type: "array" })).toEqual(["body.items"]);
    expect(paths({ id: "x", type: "array", items: { type: "object" } })).toEqual(["body.items.type"]);
    expect(paths({ id: "x", type: "object" })).toEqual(["body.fields"]);
    expect(paths({ id: "x", type: "object", fields: [{ id: "c", type: "array" }] })).toEqual(["body.fields.0.type"]);
    expect(paths({ id: "x", type: "number", min: 3, max: 2, decimals: 11 })).toEqual(["body.decimals", "body.max"]);
    expect(paths({ id: "x", type: "string", regex: "(", description: "d" })).toEqual(["body.regex"]);
    expect(paths({ id: "x", type: "string", regex: "a".repeat(256), description: "d" })).toEqual(["body.regex"]);
    expect(paths({ id: "x", type: "string", regex: "^a" })).toEqual(["body.description"]);
    expect(paths({ id: "x", type: "array", items: { type: "string" }, minLength: 2, maxLength: 1 })).toEqual([
      "body.maxLength",
    ]);
    expect(paths({ id: "x", type: "string", visibility: "secret" })).toEqual(["body.visibility"]);
    expect(live.snapshot.customFields).toEqual([]);
  });

  test("an id the partition already has is 409 duplicateId at body.id; another partition may use it", () => {
    const live = withFields();
    const r = refuse(live, { method: "POST", path: `${BASE}/single`, body: { id: "badge", type: "boolean" } }, 409);
    expect(r.issues).toEqual([
      {
        code: "duplicateId",
        path: ["body", "id"],
        message: 'Custom field id "badge" is used twice in partition "p-east".',
      },
    ]);
    accept(
      live,
      {
        method: "POST",
        path: "/partitions/p-default/custom-fields/single",
        body: { id: "badge", type: "boolean", partition: "p-east" },
      },
      200,
    );
    // The path names the partition; a body's `partition` is ignored.
    expect(live.snapshot.customFields.map((d) => [d.partition, d.id, d.type])).toContainEqual([
      "p-default",
      "badge",
      "boolean",
    ]);
  });

  test("a new field that existing values do not fit, or a new required field a holder lacks, is 409 naming each holder value", () => {
    const live = withFields();
    // Cy has no "floor" value: fine while it is optional.
    accept(live, { method: "POST", path: `${BASE}/single`, body: { id: "floor", type: "number" } }, 200);
    const r = refuse(
      live,
      { method: "POST", path: `${BASE}/single`, body: { id: "wing", type: "string", required: true } },
      409,
    );
    expect(r.issues).toEqual([
      {
        code: "conflict",
        path: ["holders", 2, "customFields", "wing"],
        message: 'Holder "h-cy" has no value for "wing", which the new definition makes required.',
      },
      {
        code: "conflict",
        path: ["holders", 3, "customFields", "wing"],
        message: 'Holder "h-dee" has no value for "wing", which the new definition makes required.',
      },
    ]);
  });
});

describe("update, delete, replace all", () => {
  test("PUT requires type, takes the whole definition (omitted fields take their defaults) and keeps the path's id; 204", () => {
    const live = withFields();
    expect(refuse(live, { method: "PUT", path: `${BASE}/badge`, body: { displayName: "B" } }, 400).paths).toEqual([
      "body.type",
    ]);
    accept(
      live,
      { method: "PUT", path: `${BASE}/badge`, body: { id: "other", type: "string", visibility: "readonly" } },
      204,
    );
    expect(read(live, `${BASE}/badge`).body).toEqual({
      id: "badge",
      type: "string",
      displayName: "badge",
      required: false,
      visibility: "readonly",
    });
    refuse(live, { method: "GET", path: `${BASE}/other` }, 404);
  });

  test("PUT that a stored value no longer fits is 409 at the holder's value; one that still fits is accepted", () => {
    const live = withFields();
    const r = refuse(live, { method: "PUT", path: `${BASE}/level`, body: { type: "number", min: 4 } }, 409);
    expect(r.issues).toEqual([
      {
        code: "conflict",
        path: ["holders", 2, "customFields", "level"],
        message: 'Holder "h-cy"\'s value does not fit the new definition: Must be at least 4.',
      },
    ]);
    expect(refuse(live, { method: "PUT", path: `${BASE}/badge`, body: { type: "boolean" } }, 409).paths).toEqual([
      "holders.2.customFields.badge",
    ]);
    expect(
      refuse(live, { method: "PUT", path: `${BASE}/badge`, body: { type: "string", required: true } }, 409).paths,
    ).toEqual(["holders.3.customFields.badge"]);
    expect(
      refuse(live, { method: "PUT", path: `${BASE}/badge`, body: { type: "string", regex: "^B-" } }, 400).paths,
    ).toEqual(["body.description"]);
    accept(live, { method: "PUT", path: `${BASE}/level`, body: { type: "number", min: 3, max: 3 } }, 204);
  });

  test("DELETE 204 removes the field and its values from the partition's holders only", () => {
    const live = withFields();
    accept(
      live,
      { method: "POST", path: "/partitions/p-default/custom-fields/single", body: { id: "badge", type: "string" } },
      200,
    );
    accept(
      live,
      {
        method: "PUT",
        path: "/holders/h-ann",
        body: {
          ...holderBody({ firstName: "Ann", lastName: "Lee", partition: "p-default" }),
          customFields: { badge: "default wing" },
        },
      },
      204,
    );
    accept(live, { method: "DELETE", path: `${BASE}/badge` }, 204);
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({ level: 3 });
    expect(read(live, "/holders/h-ann").body.customFields).toEqual({ badge: "default wing" });
    expect(read(live, BASE).body.map((d: Json) => d.id)).toEqual(["level"]);
    refuse(live, { method: "DELETE", path: `${BASE}/badge` }, 404);
  });

  test("POST /all 204 replaces the partition's fields; values of fields it leaves out go; other partitions keep theirs", () => {
    const live = withFields();
    accept(
      live,
      { method: "POST", path: "/partitions/p-default/custom-fields/single", body: { id: "keep", type: "boolean" } },
      200,
    );
    accept(
      live,
      {
        method: "POST",
        path: `${BASE}/all`,
        body: [
          { id: "level", type: "number", max: 9 },
          { id: "vip", type: "boolean" },
        ],
      },
      204,
    );
    expect(read(live, BASE).body.map((d: Json) => [d.id, d.type])).toEqual([
      ["level", "number"],
      ["vip", "boolean"],
    ]);
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({ level: 3 });
    expect(read(live, "/partitions/p-default/custom-fields").body.map((d: Json) => d.id)).toEqual(["keep"]);
    accept(live, { method: "POST", path: `${BASE}/all`, body: [] }, 204);
    expect(read(live, BASE).total).toBe(0);
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({});
  });

  test("POST /all: a non-array is 400; each definition's problems at body.<i>; an id twice 409 at body.<i>.id; unfit values 409", () => {
    const live = withFields();
    expect(refuse(live, { method: "POST", path: `${BASE}/all`, body: { id: "x" } }, 400).paths).toEqual(["body"]);
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: `${BASE}/all`,
          body: [{ id: "a", type: "string" }, 7, { type: "string" }, { id: "b", type: "enum" }],
        },
        400,
      ).paths,
    ).toEqual(["body.1", "body.2.id", "body.3.values"]);
    const twice = refuse(
      live,
      {
        method: "POST",
        path: `${BASE}/all`,
        body: [
          { id: "a", type: "string" },
          { id: "a", type: "number" },
        ],
      },
      409,
    );
    expect(twice.issues).toEqual([
      {
        code: "duplicateId",
        path: ["body", 1, "id"],
        message: 'Custom field id "a" is used twice in partition "p-east".',
      },
    ]);
    expect(
      refuse(live, { method: "POST", path: `${BASE}/all`, body: [{ id: "level", type: "string" }] }, 409).paths,
    ).toEqual(["holders.2.customFields.level"]);
  });
});

describe("holders' values and partitions", () => {
  test("GET holder answers customFields; holder writes are checked against the partition's definitions at body.customFields", () => {
    const live = withFields();
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({ badge: "B-7", level: 3 });
    const cy = holderBody({ firstName: "Cy", lastName: "Annand", partition: "p-east" });
    expect(
      refuse(
        live,
        { method: "PUT", path: "/holders/h-cy", body: { ...cy, customFields: { badge: "X", level: 9, nope: true } } },
        400,
      ).issues,
    ).toEqual([
      { code: "invalidValue", path: ["body", "customFields", "badge"], message: "Must match ^B-[0-9]+$." },
      { code: "invalidValue", path: ["body", "customFields", "level"], message: "Must be at most 5." },
      {
        code: "invalidKey",
        path: ["body", "customFields", "nope"],
        message: "Is not a custom field of its partition.",
      },
    ]);
    accept(live, { method: "PUT", path: "/holders/h-cy", body: { ...cy, customFields: { badge: "B-8" } } }, 204);
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({ badge: "B-8" });
    // L2: values the body leaves out are kept.
    accept(live, { method: "PUT", path: "/holders/h-cy", body: { ...cy, firstName: "Cyd" } }, 204);
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({ badge: "B-8" });
    // Moving to a partition without these fields: the kept values no longer have a field.
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-cy", body: { ...cy, partition: "p-default" } }, 400).paths,
    ).toEqual(["body.customFields.badge"]);
    accept(
      live,
      { method: "PUT", path: "/holders/h-cy", body: { ...cy, partition: "p-default", customFields: null } },
      204,
    );
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({});
  });

  test("a holder create is checked too: required fields, unknown keys, and a holder without partition has none", () => {
    const live = withFields();
    accept(
      live,
      {
        method: "PUT",
        path: "/holders/h-dee",
        body: {
          ...holderBody({ firstName: "Dee", lastName: "Ng", partition: "p-east" }),
          customFields: { badge: "B-1" },
        },
      },
      204,
    );
    accept(live, { method: "PUT", path: `${BASE}/badge`, body: { type: "string", required: true } }, 204);
    const missing = refuse(
      live,
      {
        method: "POST",
        path: "/holders",
        body: { firstName: "Eve", lastName: "Ox", partition: "p-east", customFields: { level: 2 } },
      },
      400,
    );
    expect(missing.issues).toEqual([
      {
        code: "required",
        path: ["body", "customFields", "badge"],
        message: "Is a required custom field of its partition.",
      },
    ]);
    const r = accept(
      live,
      {
        method: "POST",
        path: "/holders",
        body: { firstName: "Eve", lastName: "Ox", partition: "p-east", customFields: { badge: "B-9", level: null } },
      },
      201,
    );
    expect(read(live, `/holders/${r.id}`).body.customFields).toEqual({ badge: "B-9", level: null });
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: "/holders",
          body: { firstName: "Fay", lastName: "Po", customFields: { badge: "B-1" } },
        },
        400,
      ).issues[0],
    ).toMatchObject({
      code: "invalidKey",
      path: ["body", "customFields", "badge"],
    });
  });

  test("deleting a partition that has custom fields is 409 naming each; include=attributes lists them", () => {
    const live = withFields();
    accept(live, { method: "POST", path: "/partitions", body: { name: "West" } }, 200);
    const west = live.snapshot.partitions[2]!.id;
    accept(
      live,
      { method: "POST", path: `/partitions/${west}/custom-fields/single`, body: { id: "desk", type: "string" } },
      200,
    );
    expect(read(live, "/partitions?search=west&include=attributes").body[0].attributes).toEqual([
      { id: "desk", type: "string", displayName: "desk", required: false, visibility: "visible" },
    ]);
    expect(read(live, "/partitions?search=east&include=attributes").body[0].attributes.map((d: Json) => d.id)).toEqual([
      "badge",
      "level",
    ]);
    const r = refuse(live, { method: "DELETE", path: `/partitions/${west}` }, 409);
    expect(r.issues).toEqual([
      {
        code: "conflict",
        path: ["customFields", 2, "partition"],
        message: `Custom field "desk" belongs to partition "${west}".`,
      },
    ]);
    accept(live, { method: "DELETE", path: `/partitions/${west}/custom-fields/desk` }, 204);
    accept(live, { method: "DELETE", path: `/partitions/${west}` }, 204);
  });

  test("custom field writes leave decisions alone, yield patches that undo, and the engine stays in step", () => {
    const live = withFields();
    const before = scan(live, "d-front", 1001, 10);
    const r = accept(live, { method: "POST", path: `${BASE}/all`, body: [{ id: "vip", type: "boolean" }] }, 204);
    expect(scan(live, "d-front", 1001, 10)).toEqual(before);
    expect(r.patches.every((p) => p.path[0] === "customFields" || p.path[0] === "holders")).toBe(true);
    const undo = live.applyPatches(r.inversePatches);
    expect(undo.ok).toBe(true);
    expect(read(live, BASE).body.map((d: Json) => d.id)).toEqual(["badge", "level"]);
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({ badge: "B-7", level: 3 });
  });
});

describe("holders whose values are null (stored through applyPatches)", () => {
  test("deleting, changing and replacing definitions of their partition works: null is no values", () => {
    const live = withFields();
    const i = live.snapshot.holders.findIndex((h) => h.id === "h-dee");
    expect(live.applyPatches([{ op: "replace", path: ["holders", i, "customFields"], value: null }]).ok).toBe(true);
    expect(live.snapshot.holders[i]!.customFields).toBeNull();
    accept(live, { method: "PUT", path: `${BASE}/level`, body: { type: "number", min: 1, max: 9 } }, 204);
    // A field made required that Dee has no value for: 409 at Dee's values.
    const refused = refuse(
      live,
      { method: "PUT", path: `${BASE}/level`, body: { type: "number", required: true } },
      409,
    );
    expect(refused.paths).toContain(`holders.${i}.customFields.level`);
    accept(live, { method: "DELETE", path: `${BASE}/badge` }, 204);
    accept(live, { method: "POST", path: `${BASE}/all`, body: [{ id: "desk", type: "string" }] }, 204);
    expect(read(live, BASE).body.map((d: Json) => d.id)).toEqual(["desk"]);
  });
});
