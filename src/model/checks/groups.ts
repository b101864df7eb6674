// Groups: ids and names unique; the partition exists.
import { checkId, checkName, ref } from "./common.js";
import type { Check } from "./lookups.js";

export const checkGroupId: Check<"groups"> = (v, i, L, add) => checkId("groups", v, i, L, add);
export const checkGroupName: Check<"groups"> = (v, i, L, add) => checkName("groups", "Group", v, i, L, add);
export const checkGroupRefs: Check<"groups"> = (g, i, L, add) => {
  ref(L, "partitions", g.partition, ["groups", i, "partition"], "partition", add);
};
