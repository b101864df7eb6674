// Custom fields: a definition's id is unique within its partition, which must exist; a holder's
// values are checked against the definitions of its partition (semantics S15, S16).
import { customFieldValueIssues } from "../customFields.js";
import { quote } from "../zodIssues.js";
import { customFieldKey, entityKey } from "./lookups.js";
import { ref } from "./common.js";
import type { Check } from "./lookups.js";

/** The sentence of a custom field id taken twice in one partition. */
export function duplicateCustomFieldMessage(id: string, partition: string): string {
  return `Custom field id ${quote(id)} is used twice in partition ${quote(partition)}.`;
}

export const checkCustomFieldId: Check<"customFields"> = (d, i, L, add) => {
  if (L.idOwner("customFields", entityKey("customFields", d)) !== i)
    add("duplicateId", ["customFields", i, "id"], duplicateCustomFieldMessage(d.id, d.partition));
};

export const checkCustomFieldRefs: Check<"customFields"> = (d, i, L, add) => {
  ref(L, "partitions", d.partition, ["customFields", i, "partition"], "partition", add);
};

export const checkHolderCustomFields: Check<"holders"> = (h, i, L, add) => {
  const prefix = ["holders", i, "customFields"];
  const partition = h.partition;
  if (partition === null) {
    for (const k of Object.keys(h.customFields ?? {}))
      add(
        "invalidKey",
        [...prefix, k],
        "Is not a custom field: the holder is in no partition, and custom fields belong to a partition.",
      );
    return;
  }
  const definition = (id: string) => {
    const key = customFieldKey(partition, id);
    return L.get("customFields", key) ?? (L.has("customFields", key) ? null : undefined);
  };
  const required = L.customFieldsOf(partition).filter((d) => d.required);
  for (const issue of customFieldValueIssues(h.customFields, definition, required, prefix))
    add(issue.code, [...issue.path], issue.message);
};
