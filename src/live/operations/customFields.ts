// Custom fields (seed 001 §4 "Custom fields", all under /partitions/{partition_id}/custom-fields):
// definitions of one partition, whose values holders carry in `customFields` (semantics L17). A
// definition change that a stored value no longer fits is refused (409 naming each value); a deleted
// (or replaced-away) definition takes its values with it.
import { type CustomField, type Issue, customFieldSchema, definitionConflicts } from "../../model/index.js";
import { duplicateCustomFieldMessage } from "../../model/checks/customFields.js";
import { objectBody, parseBody, requireKeys } from "../body.js";
import { Refusal, refuse } from "../operation.js";
import { type Created, type Mutable, NO_CONTENT, type WriteContext, indexOf, removeAt } from "./common.js";

type Json = Record<string, unknown>;

/** The path's partition, or a 404. */
function partitionOf(draft: Mutable, params: Readonly<Record<string, string>>): string {
  return draft.partitions[indexOf(draft.partitions, params.partitionId!, "partition")]!.id;
}

/** Position of the path's custom field in its partition, or a 404. */
function fieldIndex(draft: Mutable, partition: string, id: string): number {
  const i = draft.customFields.findIndex((d) => d.partition === partition && d.id === id);
  if (i < 0) refuse(404, "notFound", [], `Partition "${partition}" has no custom field with id "${id}".`);
  return i;
}

/** A definition from a body: the path gives the partition (and, on update, the id). */
function definition(b: Json, partition: string, id: unknown, prefix: (string | number)[]): CustomField {
  const { partition: _ignored, ...rest } = b;
  return parseBody(customFieldSchema, { ...rest, id, partition }, prefix);
}

/** 409 naming each holder value (or missing required value) the new definitions do not accept. */
function refuseUnfitValues(draft: Mutable, partition: string, defs: readonly CustomField[]): void {
  const owners = draft.holders.flatMap((h, i) => (h.partition === partition ? [{ at: ["holders", i, "customFields"], name: `Holder "${h.id}"`, values: h.customFields }] : []));
  const issues = definitionConflicts(owners, defs);
  if (issues.length > 0) throw new Refusal(409, issues);
}

/** Values of fields of `partition` that `removed` names go with their definition, as a group's memberships do. */
function dropValues(draft: Mutable, partition: string, removed: ReadonlySet<string>): void {
  for (const h of draft.holders) {
    if (h.partition !== partition) continue;
    for (const k of Object.keys(h.customFields)) if (removed.has(k)) delete h.customFields[k];
  }
}

export function createCustomField({ draft, params, body }: WriteContext): Created {
  const partition = partitionOf(draft, params);
  const b = objectBody(body);
  requireKeys(b, ["id", "type"]);
  const def = definition(b, partition, b.id, ["body"]);
  // A taken id is the snapshot check's duplicateId (409 at body.id); its values are not the new field's.
  if (!draft.customFields.some((d) => d.partition === partition && d.id === def.id)) refuseUnfitValues(draft, partition, [def]);
  draft.customFields.push(def);
  return { status: 200, id: def.id };
}

export function updateCustomField({ draft, params, body }: WriteContext): Created {
  const partition = partitionOf(draft, params);
  const i = fieldIndex(draft, partition, params.customFieldId!);
  const b = objectBody(body);
  requireKeys(b, ["type"]);
  const def = definition(b, partition, params.customFieldId!, ["body"]);
  refuseUnfitValues(draft, partition, [def]);
  draft.customFields[i] = def;
  return NO_CONTENT;
}

export function deleteCustomField({ draft, params }: WriteContext): Created {
  const partition = partitionOf(draft, params);
  removeAt(draft.customFields, fieldIndex(draft, partition, params.customFieldId!));
  dropValues(draft, partition, new Set([params.customFieldId!]));
  return NO_CONTENT;
}

/** seed "Replace all": the body array becomes the partition's definitions; values of fields it leaves out go. */
export function replaceCustomFields({ draft, params, body }: WriteContext): Created {
  const partition = partitionOf(draft, params);
  if (!Array.isArray(body)) refuse(400, "invalidType", ["body"], "Must be an array of custom field definitions.");
  const issues: Issue[] = [];
  const defs: CustomField[] = [];
  (body as unknown[]).forEach((raw, k) => {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      issues.push({ code: "invalidType", path: ["body", k], message: "Must be a JSON object." });
      return;
    }
    const b = raw as Json;
    const missing = ["id", "type"].filter((f) => !Object.hasOwn(b, f));
    for (const f of missing) issues.push({ code: "required", path: ["body", k, f], message: "Is required." });
    if (missing.length > 0) return;
    try {
      defs.push(definition(b, partition, b.id, ["body", k]));
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      issues.push(...e.issues);
    }
  });
  if (issues.length > 0) throw new Refusal(400, issues);
  const seen = new Set<string>();
  defs.forEach((d, k) => {
    if (seen.has(d.id)) issues.push({ code: "duplicateId", path: ["body", k, "id"], message: duplicateCustomFieldMessage(d.id, partition) });
    seen.add(d.id);
  });
  if (issues.length > 0) throw new Refusal(409, issues);
  refuseUnfitValues(draft, partition, defs);
  const removed = new Set<string>();
  for (let i = draft.customFields.length - 1; i >= 0; i--) {
    const d = draft.customFields[i]!;
    if (d.partition !== partition) continue;
    if (!seen.has(d.id)) removed.add(d.id);
    removeAt(draft.customFields, i);
  }
  draft.customFields.push(...defs);
  dropValues(draft, partition, removed);
  return NO_CONTENT;
}
