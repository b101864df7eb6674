// Holders: ids unique; partition and groups exist, each group named once; credential ids and
// numbers unique in the system (credentials sync to every cloud node of a system, so a number
// unique per node is unique system-wide).
import { quote } from "../zodIssues.js";
import { checkId, ref } from "./common.js";
import type { Check } from "./lookups.js";

export const checkHolderId: Check<"holders"> = (v, i, L, add) => checkId("holders", v, i, L, add);
/** A holder's groups exist, each named once: the part of checkHolderRefs a change of memberships alone can break. */
export const checkHolderGroups: Check<"holders"> = (h, i, L, add) => {
  h.groups.forEach((g, j) => ref(L, "groups", g, ["holders", i, "groups", j], "group", add));
  if (new Set(h.groups).size !== h.groups.length) add("invalid", ["holders", i, "groups"], "Names a group twice.");
};
export const checkHolderRefs: Check<"holders"> = (h, i, L, add) => {
  const base = ["holders", i];
  ref(L, "partitions", h.partition, [...base, "partition"], "partition", add);
  checkHolderGroups(h, i, L, add);
  h.credentials.forEach((cred, j) => {
    const first = L.credentialIdOwner(cred.id);
    if (first.i !== i || first.j !== j) add("duplicateId", [...base, "credentials", j, "id"], `Credential id ${quote(cred.id)} is used twice.`);
    if (cred.credentialNumber !== null) {
      const owner = L.credentialNumberOwner(cred.credentialNumber);
      if (owner.i !== i || owner.j !== j)
        add(
          "duplicateCredentialNumber",
          [...base, "credentials", j, "credentialNumber"],
          `Credential number ${cred.credentialNumber} is already used by holders[${owner.i}].credentials[${owner.j}]; numbers are unique on a cloud node.`,
        );
    }
  });
};
