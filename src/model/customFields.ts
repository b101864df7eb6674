// Custom fields (the 2.0 systems API "Custom field"; the 1.0 panel API "Custom field (attribute)"): the definition
// rules and the checks of a holder's (1.0: person's) values against its partition's definitions.
// One source for both architectures: the 2.0 snapshot loader (checks/customFields.ts), the 2.0 live
// routes and the 1.0 panel routes all use these.
import { RE2JS } from "re2js";
import { z } from "zod";
import type { Issue } from "./issue.js";
import { quote } from "./zodIssues.js";

type Json = Record<string, unknown>;
type Path = (string | number)[];

export const CUSTOM_FIELD_TYPES = ["array", "boolean", "enum", "number", "object", "string"] as const;
/** The types of an array's `items` and of an object's child `fields`. */
export const CUSTOM_FIELD_CHILD_TYPES = ["boolean", "enum", "number", "string"] as const;
export const CUSTOM_FIELD_VISIBILITIES = ["hidden", "readonly", "visible"] as const;
/** A regex is at most 255 characters (and decimals 0 to 10). */
export const CUSTOM_FIELD_REGEX_MAX = 255;
export const CUSTOM_FIELD_DECIMALS_MAX = 10;

/** Whether `r` is a JavaScript regular expression (compiling one takes time linear in its length). */
function isRegExp(r: string): boolean {
  try {
    new RegExp(r);
    return true;
  } catch {
    return false;
  }
}

/**
 * `r` in RE2 syntax: JavaScript's `\uXXXX` is RE2's `\x{XXXX}` (an escaped backslash stays as it is);
 * everything else is written alike in both (HJ5).
 */
function re2Syntax(r: string): string {
  return r.replace(/\\(u[0-9a-fA-F]{4}|[\s\S])/g, (m, e: string) => (e.length === 5 ? `\\x{${e.slice(1)}}` : m));
}

/** Compiled matchers by pattern, or RE2's reason for refusing it: a write or a load compiles each pattern once (HJ5). */
const MATCHERS = new Map<string, RE2JS | string>();
/** Most patterns kept: beyond, the oldest is dropped, so a stream of new patterns cannot grow it. */
const MATCHERS_KEPT = 512;

/** The linear-time matcher of `r`, or why RE2 refuses it, without repeating the pattern (HJ5). */
function re2(r: string): RE2JS | string {
  const kept = MATCHERS.get(r);
  if (kept !== undefined) return kept;
  let m: RE2JS | string;
  try {
    m = RE2JS.compile(re2Syntax(r));
  } catch (e) {
    m = String((e as Error).message)
      .replace(/^error parsing regexp: /, "")
      .replace(/: `[\s\S]*$/, "");
  }
  if (MATCHERS.size >= MATCHERS_KEPT) MATCHERS.delete(MATCHERS.keys().next().value!);
  MATCHERS.set(r, m);
  return m;
}

/** The definition check of `regex` (S15, HJ5): valid JavaScript, and within the linear-time RE2 subset. */
function regexRule(r: string, ctx: Ctx): void {
  if (!isRegExp(r)) {
    add(ctx, [], "Must be a valid regular expression.");
    return;
  }
  const m = re2(r);
  if (typeof m === "string")
    add(
      ctx,
      [],
      `Must be a regular expression of the linear-time (RE2) subset, which has no backreferences, lookahead or lookbehind: ${m}.`,
    );
}

/** Which architecture's definitions: 1.0 keeps unknown keys and has no `description`. */
interface Flavor {
  readonly loose: boolean;
  readonly describe: boolean;
}

type Ctx = z.core.$RefinementCtx;
const add = (ctx: Ctx, path: Path, message: string): void => ctx.addIssue({ code: "custom", path, message });

/** The rules every definition follows, children included (semantics S15). */
function commonRules(d: Json, ctx: Ctx, f: Flavor): void {
  if (d.type === "enum" && d.values === undefined) add(ctx, ["values"], "An enum field needs its values.");
  if (typeof d.min === "number" && typeof d.max === "number" && d.min > d.max)
    add(ctx, ["max"], "Must be at least min.");
  if (f.describe && d.regex !== undefined && d.description === undefined)
    add(ctx, ["description"], "Is required when regex is given: it tells people what the expression accepts.");
  const seen = new Set<unknown>();
  ((d.values as Json[] | undefined) ?? []).forEach((v, j) => {
    if (seen.has(v.id)) add(ctx, ["values", j, "id"], `Names value ${quote(String(v.id))} twice.`);
    seen.add(v.id);
  });
}

// `described` is the flavor's extra keys (2.0's `description`), passed in rather than spread from a
// conditional: that spread's type `description?: … | undefined` is no zod shape for consumers of the
// emitted declarations who compile with `exactOptionalPropertyTypes`.
function shapes<D extends z.core.$ZodLooseShape>(f: Flavor, described: D) {
  const obj = <S extends z.core.$ZodLooseShape>(shape: S) => (f.loose ? z.looseObject(shape) : z.object(shape));
  const regex = z.string().max(CUSTOM_FIELD_REGEX_MAX).superRefine(regexRule);
  const enumValue = obj({ id: z.string().min(1), displayName: z.string().optional() });
  const bounds = {
    displayName: z.string().optional(),
    values: z.array(enumValue).min(1, { error: "Must list at least one value." }).optional(),
    min: z.number().int().optional(),
    max: z.number().int().optional(),
    decimals: z.number().int().min(0).max(CUSTOM_FIELD_DECIMALS_MAX).optional(),
    regex: regex.optional(),
    ...described,
  };
  const items = obj({ type: z.enum(CUSTOM_FIELD_CHILD_TYPES), ...bounds }).superRefine((d, ctx) =>
    commonRules(d, ctx, f),
  );
  const child = obj({ id: z.string().min(1), type: z.enum(CUSTOM_FIELD_CHILD_TYPES), ...bounds }).superRefine(
    (d, ctx) => commonRules(d, ctx, f),
  );
  return {
    id: z.string().min(1, { error: "Must be a non-empty id." }),
    type: z.enum(CUSTOM_FIELD_TYPES),
    ...bounds,
    required: z.boolean().optional(),
    visibility: z.enum(CUSTOM_FIELD_VISIBILITIES).optional(),
    items: items.optional(),
    minLength: z.number().int().min(0).optional(),
    maxLength: z.number().int().min(0).optional(),
    fields: z.array(child).optional(),
  };
}

/** The rules of a top-level definition beyond its children's. */
function definitionRules(d: Json, ctx: Ctx, f: Flavor): void {
  commonRules(d, ctx, f);
  if (d.type === "array" && d.items === undefined) add(ctx, ["items"], "An array field needs its items definition.");
  if (d.type === "object" && d.fields === undefined) add(ctx, ["fields"], "An object field needs its child fields.");
  if (typeof d.minLength === "number" && typeof d.maxLength === "number" && d.minLength > d.maxLength)
    add(ctx, ["maxLength"], "Must be at least minLength.");
  const seen = new Set<unknown>();
  ((d.fields as Json[] | undefined) ?? []).forEach((c, j) => {
    if (seen.has(c.id)) add(ctx, ["fields", j, "id"], `Names child field ${quote(String(c.id))} twice.`);
    seen.add(c.id);
  });
}

const FLAVOR_1_0: Flavor = { loose: true, describe: false };
const FLAVOR_2_0: Flavor = { loose: false, describe: true };

/** One 1.0 definition (1.0 has no `description`); unknown keys are kept, as the panel stores them. */
export const panelCustomFieldSchema = z
  .looseObject(shapes(FLAVOR_1_0, {}))
  .superRefine((d, ctx) => definitionRules(d, ctx, FLAVOR_1_0));

/**
 * One 2.0 definition of the snapshot's `customFields`, with its `partition`: unknown keys are
 * dropped; `displayName` defaults to the id, `required` to false, `visibility` to `visible`.
 */
export const customFieldSchema = z
  .object({
    ...shapes(FLAVOR_2_0, { description: z.string().optional() }),
    partition: z.string().min(1, { error: "Must be a non-empty id." }),
  })
  .superRefine((d, ctx) => definitionRules(d, ctx, FLAVOR_2_0))
  .transform((d) => ({
    ...d,
    displayName: d.displayName ?? d.id,
    required: d.required ?? false,
    visibility: d.visibility ?? "visible",
  }));

/** A checked definition as far as the value checks read it. */
export type FieldDefinition = Readonly<Json>;

function decimalsOf(n: number): number {
  const s = String(n);
  const e = s.indexOf("e-");
  if (e >= 0) return Number(s.slice(e + 2)) + (s.slice(0, e).split(".")[1]?.length ?? 0);
  return s.split(".")[1]?.length ?? 0;
}

/** Problems of one value against its definition (child types only below arrays and objects). */
function valueIssues(def: FieldDefinition, v: unknown, path: Path): Issue[] {
  const bad = (message: string): Issue[] => [{ code: "invalidValue", path, message }];
  switch (def.type) {
    case "string":
      if (typeof v !== "string") return bad("Must be a string.");
      // RE2 matches in time linear in the value (HJ5); a pattern it refuses is a broken definition, never checked here.
      if (typeof def.regex === "string") {
        const m = re2(def.regex);
        if (typeof m !== "string" && !m.test(v)) return bad(`Must match ${def.regex}.`);
      }
      return [];
    case "boolean":
      return typeof v === "boolean" ? [] : bad("Must be true or false.");
    case "number":
      if (typeof v !== "number" || !Number.isFinite(v)) return bad("Must be a number.");
      if (typeof def.min === "number" && v < def.min) return bad(`Must be at least ${def.min}.`);
      if (typeof def.max === "number" && v > def.max) return bad(`Must be at most ${def.max}.`);
      if (typeof def.decimals === "number" && decimalsOf(v) > def.decimals)
        return bad(`Must have at most ${def.decimals} decimal places.`);
      return [];
    case "enum": {
      const ids = ((def.values as Json[] | undefined) ?? []).map((x) => x.id);
      return typeof v === "string" && ids.includes(v)
        ? []
        : bad(`Must be one of ${ids.map((x) => quote(String(x))).join(", ")}.`);
    }
    case "array": {
      if (!Array.isArray(v)) return bad("Must be an array.");
      if (typeof def.minLength === "number" && v.length < def.minLength)
        return bad(`Must have at least ${def.minLength} items.`);
      if (typeof def.maxLength === "number" && v.length > def.maxLength)
        return bad(`Must have at most ${def.maxLength} items.`);
      return v.flatMap((x, i) => valueIssues(def.items as Json, x, [...path, i]));
    }
    case "object": {
      if (v === null || typeof v !== "object" || Array.isArray(v)) return bad("Must be an object of its child fields.");
      const fields = new Map(((def.fields as Json[] | undefined) ?? []).map((f) => [f.id as string, f]));
      return Object.entries(v as Json).flatMap(([k, x]) => {
        const f = fields.get(k);
        return f === undefined
          ? [
              {
                code: "invalidKey" as const,
                path: [...path, k],
                message: `Is not a child field of ${quote(String(def.id))}.`,
              },
            ]
          : valueIssues(f, x, [...path, k]);
      });
    }
    default:
      return [];
  }
}

/**
 * Problems of a holder's (person's) custom field values: a key `definition` does not know
 * (undefined) is unknown; a value that does not fit its definition is invalid; a key whose
 * definition is itself broken (null) is not checked; a null value is no value. `required` lists the
 * partition's required definitions: each needs a value.
 */
export function customFieldValueIssues(
  values: Readonly<Json> | null,
  definition: (id: string) => FieldDefinition | null | undefined,
  required: readonly FieldDefinition[],
  prefix: Path,
): Issue[] {
  const v = values ?? {};
  const issues: Issue[] = [];
  for (const [k, x] of Object.entries(v)) {
    const d = definition(k);
    if (d === undefined)
      issues.push({ code: "invalidKey", path: [...prefix, k], message: "Is not a custom field of its partition." });
    else if (d !== null && x !== null) issues.push(...valueIssues(d, x, [...prefix, k]));
  }
  for (const d of required) {
    const x = Object.hasOwn(v, d.id as string) ? v[d.id as string] : undefined;
    if (x === undefined || x === null)
      issues.push({
        code: "required",
        path: [...prefix, d.id as string],
        message: "Is a required custom field of its partition.",
      });
  }
  return issues;
}

/** Someone whose values a definition change reaches: where its values sit, and how to name it. */
export interface ValueOwner {
  /** Path of the owner's values object (`holders[3].customFields`). */
  readonly at: Path;
  /** The owner as a message names it (`Holder "h-1"`, `Person 3`). */
  readonly name: string;
  readonly values: Readonly<Json> | null;
}

/**
 * The conflicts of new definitions with the values stored under them (one partition's owners): each
 * value that does not fit, and each owner without a value for a required field, at the value's path.
 */
export function definitionConflicts(owners: readonly ValueOwner[], defs: readonly FieldDefinition[]): Issue[] {
  const issues: Issue[] = [];
  for (const o of owners)
    for (const d of defs) {
      const id = d.id as string;
      const x = o.values !== null && Object.hasOwn(o.values, id) ? o.values[id] : undefined;
      if (x === undefined || x === null) {
        if (d.required === true)
          issues.push({
            code: "conflict",
            path: [...o.at, id],
            message: `${o.name} has no value for ${quote(id)}, which the new definition makes required.`,
          });
        continue;
      }
      for (const issue of valueIssues(d, x, [...o.at, id]))
        issues.push({
          code: "conflict",
          path: issue.path,
          message: `${o.name}'s value does not fit the new definition: ${issue.message}`,
        });
    }
  return issues;
}
