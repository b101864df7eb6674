// Connections: ids unique; the cloud node exists.
import { checkId, ref } from "./common.js";
import type { Check } from "./lookups.js";

export const checkConnectionId: Check<"connections"> = (v, i, L, add) => checkId("connections", v, i, L, add);
export const checkConnectionRefs: Check<"connections"> = (x, i, L, add) => {
  ref(L, "cloudNodes", x.cloudNode, ["connections", i, "cloudNode"], "cloud node", add);
};
