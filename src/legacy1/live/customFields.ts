// Custom fields of a 1.0 panel (the 1.0 panel API "Custom field": the 2.0 systems API definition without
// `description`): the definitions a write may store, and a person's `customAttributes` checked
// against the definitions of the person's partition (docs/semantics.md S16). The rules themselves are the 2.0
// ones, in model/customFields.ts.
import { type Issue, customFieldValueIssues, definitionConflicts, panelCustomFieldSchema } from "../../model/index.js";
import { parseBody } from "../../live/body.js";

type Json = Record<string, unknown>;
type Path = (string | number)[];

/** A checked definition, or a 400 with every problem under `prefix`. */
export function parseDefinition(value: unknown, prefix: Path): Json {
  return parseBody(panelCustomFieldSchema, value, prefix) as Json;
}

/**
 * Problems of a person's `customAttributes` against `defs` (its partition's definitions): unknown
 * keys, values that do not fit, and required fields without a value (null is no value).
 */
export function attributeIssues(values: Json | null, defs: readonly Json[], prefix: Path): Issue[] {
  const byId = new Map(defs.map((d) => [d.id as string, d]));
  return customFieldValueIssues(
    values,
    (id) => byId.get(id),
    defs.filter((d) => d.required === true),
    prefix,
  );
}

/** Conflicts of new definitions with the values of the partition's persons: each at the person's panel path. */
export function valuesAgainst(
  persons: readonly { id: number; partition: number; customAttributes: Json | null }[],
  partition: number,
  defs: readonly Json[],
): Issue[] {
  const owners = persons.flatMap((p, i) =>
    p.partition === partition
      ? [{ at: ["persons", i, "customAttributes"], name: `Person ${p.id}`, values: p.customAttributes }]
      : [],
  );
  return definitionConflicts(owners, defs);
}
