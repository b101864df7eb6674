// Holders: ids unique; partition and groups exist, each group named once; credential ids and
// numbers unique in the system (credentials sync to every cloud node of a system, so a number
// unique per node is unique system-wide).
import { quote } from "../zodIssues.js";
import { checkId, hasRepeats, refAt } from "./common.js";
import type { Check } from "./lookups.js";

export const checkHolderId: Check<"holders"> = (v, i, L, add) => checkId("holders", v, i, L, add);
/** A holder's groups exist, each named once: the part of checkHolderRefs a change of memberships alone can break. */
export const checkHolderGroups: Check<"holders"> = (h, i, L, add) => {
  const groups = h.groups;
  for (let j = 0; j < groups.length; j++) refAt(L, "groups", groups[j]!, "holders", i, "groups", j, "group", add);
  if (hasRepeats(groups)) add("invalid", ["holders", i, "groups"], "Names a group twice.");
};
export const checkHolderRefs: Check<"holders"> = (h, i, L, add) => {
  refAt(L, "partitions", h.partition, "holders", i, "partition", -1, "partition", add);
  checkHolderGroups(h, i, L, add);
  if (L.credentialsUnique === true) return;
  h.credentials.forEach((cred, j) => {
    const first = L.credentialIdOwner(cred.id);
    if (first.i !== i || first.j !== j)
      add("duplicateId", ["holders", i, "credentials", j, "id"], `Credential id ${quote(cred.id)} is used twice.`);
    if (cred.credentialNumber !== null) {
      const owner = L.credentialNumberOwner(cred.credentialNumber);
      if (owner.i !== i || owner.j !== j)
        add(
          "duplicateCredentialNumber",
          ["holders", i, "credentials", j, "credentialNumber"],
          `Credential number ${cred.credentialNumber} is already used by holders[${owner.i}].credentials[${owner.j}]; numbers are unique on a cloud node.`,
        );
    }
  });
};
