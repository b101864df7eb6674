// Custom fields (the 2.0 systems API "Custom fields", all under /partitions/{partition_id}/custom-fields):
// definitions of one partition, whose values holders carry in `customFields` (semantics L17). A
// definition change that a stored value no longer fits is refused (409 naming each value); a deleted
// (or replaced-away) definition takes its values with it.
import { type CustomField, type Issue, customFieldSchema, definitionConflicts } from "../../model/index.js";
import { duplicateCustomFieldMessage } from "../../model/checks/customFields.js";
import { objectBody, parseBody, reportBody, requireKeys } from "../body.js";
import { Refusal, refuse } from "../operation.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf } from "./common.js";

type Json = Record<string, unknown>;

/** The path's partition, or a 404. */
function partitionOf(ctx: WriteContext): string {
  return ctx.base.partitions[indexOf(ctx, "partitions", ctx.params.partitionId!, "partition")]!.id;
}

/** Position of the path's custom field in its partition, or a 404. */
function fieldIndex({ base }: WriteContext, partition: string, id: string): number {
  const i = base.customFields.findIndex((d) => d.partition === partition && d.id === id);
  if (i < 0) refuse(404, "notFound", [], `Partition "${partition}" has no custom field with id "${id}".`);
  return i;
}

/** A definition from a body: the path gives the partition (and, on update, the id). */
function definition(b: Json, partition: string, id: unknown, prefix: (string | number)[]): CustomField {
  const { partition: _ignored, ...rest } = b;
  return parseBody(customFieldSchema, { ...rest, id, partition }, prefix);
}

/** 409 naming each holder value (or missing required value) the new definitions do not accept. */
function refuseUnfitValues({ base }: WriteContext, partition: string, defs: readonly CustomField[]): void {
  const owners = base.holders.flatMap((h, i) =>
    h.partition === partition
      ? [{ at: ["holders", i, "customFields"], name: `Holder "${h.id}"`, values: h.customFields ?? null }]
      : [],
  );
  const issues = definitionConflicts(owners, defs);
  if (issues.length > 0) throw new Refusal(409, issues);
}

/** Values of fields of `partition` that `removed` names go with their definition, as a group's memberships do. */
function dropValues({ base, draft }: WriteContext, partition: string, removed: ReadonlySet<string>): void {
  base.holders.forEach((h, i) => {
    if (h.partition !== partition) return;
    // A holder stored through applyPatches may carry `customFields: null` (the schema's "no values").
    for (const k of Object.keys(h.customFields ?? {})) if (removed.has(k)) delete draft.holders[i]!.customFields[k];
  });
}

export function createCustomField(ctx: WriteContext): Created {
  const partition = partitionOf(ctx);
  const b = objectBody(ctx.body);
  requireKeys(b, ["id", "type"]);
  const def = definition(b, partition, b.id, ["body"]);
  // A taken id is the snapshot check's duplicateId (409 at body.id); its values are not the new field's.
  if (!ctx.base.customFields.some((d) => d.partition === partition && d.id === def.id))
    refuseUnfitValues(ctx, partition, [def]);
  ctx.append("customFields", def);
  return { status: 200, id: def.id };
}

export function updateCustomField(ctx: WriteContext): Created {
  const { draft, params } = ctx;
  const partition = partitionOf(ctx);
  const i = fieldIndex(ctx, partition, params.customFieldId!);
  const b = objectBody(ctx.body);
  requireKeys(b, ["type"]);
  const def = definition(b, partition, params.customFieldId!, ["body"]);
  refuseUnfitValues(ctx, partition, [def]);
  draft.customFields[i] = def;
  return NO_CONTENT;
}

export function deleteCustomField(ctx: WriteContext): Created {
  const partition = partitionOf(ctx);
  ctx.remove("customFields", fieldIndex(ctx, partition, ctx.params.customFieldId!));
  dropValues(ctx, partition, new Set([ctx.params.customFieldId!]));
  return NO_CONTENT;
}

/** The 2.0 systems API "Replace all": the body array becomes the partition's definitions; values of fields it leaves out go. */
export function replaceCustomFields(ctx: WriteContext): Created {
  const { base, body } = ctx;
  const partition = partitionOf(ctx);
  if (!Array.isArray(body)) refuse(400, "invalidType", ["body"], "Must be an array of custom field definitions.");
  const issues: Issue[] = [];
  const defs: CustomField[] = [];
  // Each definition's problems in body order, collected with the other problems of the body (HS6).
  let failed = false;
  const report = (found: readonly Issue[]) => {
    failed = true;
    reportBody(found);
  };
  (body as unknown[]).forEach((raw, k) => {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      report([{ code: "invalidType", path: ["body", k], message: "Must be a JSON object." }]);
      return;
    }
    const b = raw as Json;
    const missing = ["id", "type"].filter((f) => !Object.hasOwn(b, f));
    if (missing.length > 0) {
      report(missing.map((f) => ({ code: "required", path: ["body", k, f], message: "Is required." })));
      return;
    }
    try {
      defs.push(definition(b, partition, b.id, ["body", k]));
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      report(e.issues);
    }
  });
  if (failed) throw new Refusal(400, []);
  const seen = new Set<string>();
  defs.forEach((d, k) => {
    if (seen.has(d.id))
      issues.push({
        code: "duplicateId",
        path: ["body", k, "id"],
        message: duplicateCustomFieldMessage(d.id, partition),
      });
    seen.add(d.id);
  });
  if (issues.length > 0) throw new Refusal(409, issues);
  refuseUnfitValues(ctx, partition, defs);
  const removed = new Set<string>();
  // Descending, so that the element each removal moves into place is one that stays.
  for (let i = base.customFields.length - 1; i >= 0; i--) {
    const d = base.customFields[i]!;
    if (d.partition !== partition) continue;
    if (!seen.has(d.id)) removed.add(d.id);
    ctx.remove("customFields", i);
  }
  for (const d of defs) ctx.append("customFields", d);
  dropValues(ctx, partition, removed);
  return NO_CONTENT;
}
