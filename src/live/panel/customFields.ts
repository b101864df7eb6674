// Custom fields of a 1.0 panel (seed 002 "Custom field": the seed 001 definition without
// `description`): the definitions a write may store, and a person's `customAttributes` checked
// against the definitions of the person's partition (SPEC §9).
import { z } from "zod";
import type { Issue } from "../../model/index.js";
import { parseBody } from "../body.js";

type Json = Record<string, unknown>;
type Path = (string | number)[];

const CHILD_TYPES = ["boolean", "enum", "number", "string"] as const;
const enumValues = z.array(z.looseObject({ id: z.string().min(1), displayName: z.string().optional() })).min(1, { error: "Must list at least one value." });
const regex = z
  .string()
  .max(255)
  .refine(
    (r) => {
      try {
        new RegExp(r);
        return true;
      } catch {
        return false;
      }
    },
    { error: "Must be a valid regular expression." },
  );

const bounds = {
  min: z.number().int().optional(),
  max: z.number().int().optional(),
  decimals: z.number().int().min(0).max(10).optional(),
  regex: regex.optional(),
  values: enumValues.optional(),
};

const childSchema = z.looseObject({ type: z.enum(CHILD_TYPES), ...bounds }).superRefine((d, ctx) => {
  if (d.type === "enum" && d.values === undefined) ctx.addIssue({ code: "custom", path: ["values"], message: "An enum field needs its values." });
});

/** One definition as a 1.0 write may store it (the partition is the path's). */
export const definitionSchema = z
  .looseObject({
    id: z.string().min(1),
    type: z.enum(["array", "boolean", "enum", "number", "object", "string"]),
    displayName: z.string().optional(),
    required: z.boolean().optional(),
    visibility: z.enum(["hidden", "readonly", "visible"]).optional(),
    items: childSchema.optional(),
    minLength: z.number().int().min(0).optional(),
    maxLength: z.number().int().min(0).optional(),
    fields: z.array(childSchema.and(z.looseObject({ id: z.string().min(1) }))).optional(),
    ...bounds,
  })
  .superRefine((d, ctx) => {
    if (d.type === "enum" && d.values === undefined) ctx.addIssue({ code: "custom", path: ["values"], message: "An enum field needs its values." });
    if (d.type === "array" && d.items === undefined) ctx.addIssue({ code: "custom", path: ["items"], message: "An array field needs its items definition." });
    if (d.type === "object" && d.fields === undefined) ctx.addIssue({ code: "custom", path: ["fields"], message: "An object field needs its child fields." });
    if (d.min !== undefined && d.max !== undefined && d.min > d.max) ctx.addIssue({ code: "custom", path: ["max"], message: "Must be at least min." });
    if (d.minLength !== undefined && d.maxLength !== undefined && d.minLength > d.maxLength) ctx.addIssue({ code: "custom", path: ["maxLength"], message: "Must be at least minLength." });
  });

/** A checked definition, or a 400 with every problem under `prefix`. */
export function parseDefinition(value: unknown, prefix: Path): Json {
  return parseBody(definitionSchema, value, prefix) as Json;
}

function decimalsOf(n: number): number {
  const s = String(n);
  const e = s.indexOf("e-");
  if (e >= 0) return Number(s.slice(e + 2)) + (s.slice(0, e).split(".")[1]?.length ?? 0);
  return s.split(".")[1]?.length ?? 0;
}

/** Problems of one value against its definition (child types only below arrays and objects). */
function valueIssues(def: Json, v: unknown, path: Path): Issue[] {
  const bad = (message: string): Issue[] => [{ code: "invalidValue", path, message }];
  switch (def.type) {
    case "string":
      if (typeof v !== "string") return bad("Must be a string.");
      if (typeof def.regex === "string" && !new RegExp(def.regex).test(v)) return bad(`Must match ${def.regex}.`);
      return [];
    case "boolean":
      return typeof v === "boolean" ? [] : bad("Must be true or false.");
    case "number":
      if (typeof v !== "number" || !Number.isFinite(v)) return bad("Must be a number.");
      if (typeof def.min === "number" && v < def.min) return bad(`Must be at least ${def.min}.`);
      if (typeof def.max === "number" && v > def.max) return bad(`Must be at most ${def.max}.`);
      if (typeof def.decimals === "number" && decimalsOf(v) > def.decimals) return bad(`Must have at most ${def.decimals} decimal places.`);
      return [];
    case "enum": {
      const ids = ((def.values as Json[] | undefined) ?? []).map((x) => x.id);
      return typeof v === "string" && ids.includes(v) ? [] : bad(`Must be one of ${ids.map((x) => `"${String(x)}"`).join(", ")}.`);
    }
    case "array": {
      if (!Array.isArray(v)) return bad("Must be an array.");
      if (typeof def.minLength === "number" && v.length < def.minLength) return bad(`Must have at least ${def.minLength} items.`);
      if (typeof def.maxLength === "number" && v.length > def.maxLength) return bad(`Must have at most ${def.maxLength} items.`);
      return v.flatMap((x, i) => valueIssues(def.items as Json, x, [...path, i]));
    }
    case "object": {
      if (v === null || typeof v !== "object" || Array.isArray(v)) return bad("Must be an object of its child fields.");
      const fields = new Map(((def.fields as Json[] | undefined) ?? []).map((f) => [f.id as string, f]));
      return Object.entries(v as Json).flatMap(([k, x]) => {
        const f = fields.get(k);
        return f === undefined ? [{ code: "invalidKey" as const, path: [...path, k], message: `Is not a child field of "${String(def.id)}".` }] : valueIssues(f, x, [...path, k]);
      });
    }
    default:
      return [];
  }
}

/**
 * Problems of a person's `customAttributes` against `defs` (its partition's definitions): unknown
 * keys, values that do not fit, and — when `checkRequired` — required fields without a value. A
 * null value is no value.
 */
export function attributeIssues(values: Json | null, defs: readonly Json[], prefix: Path, checkRequired: boolean): Issue[] {
  const byId = new Map(defs.map((d) => [d.id as string, d]));
  const v = values ?? {};
  const issues: Issue[] = [];
  for (const [k, x] of Object.entries(v)) {
    const d = byId.get(k);
    if (d === undefined) issues.push({ code: "invalidKey", path: [...prefix, k], message: "Is not a custom field of the person's partition." });
    else if (x !== null) issues.push(...valueIssues(d, x, [...prefix, k]));
  }
  if (checkRequired)
    for (const d of defs)
      if (d.required === true && (v[d.id as string] === undefined || v[d.id as string] === null))
        issues.push({ code: "required", path: [...prefix, d.id as string], message: "Is a required custom field." });
  return issues;
}

/** Problems of existing values with one field's new definition: each at the person's panel path. */
export function valuesAgainst(persons: readonly { partition: number; customAttributes: Json | null }[], partition: number, def: Json): Issue[] {
  const issues: Issue[] = [];
  persons.forEach((p, i) => {
    if (p.partition !== partition || p.customAttributes === null) return;
    const x = p.customAttributes[def.id as string];
    if (x !== undefined && x !== null)
      for (const issue of valueIssues(def, x, ["persons", i, "customAttributes", def.id as string]))
        issues.push({ code: "conflict", path: issue.path, message: `Person ${String((p as unknown as Json).id)}'s value does not fit the new definition: ${issue.message}` });
  });
  return issues;
}
