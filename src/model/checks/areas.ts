// Areas (docs/semantics.md AB1): ids unique; every entry and exit is a device, and all of an area's
// devices are on one cloud node, because the area's state (who is inside) is kept by that node (docs/semantics.md AB1).
import { quote } from "../zodIssues.js";
import { checkId, refAt } from "./common.js";
import type { Check } from "./lookups.js";

export const checkAreaId: Check<"areas"> = (v, i, L, add) => checkId("areas", v, i, L, add);
export const checkAreaRefs: Check<"areas"> = (a, i, L, add) => {
  let node: string | undefined;
  let first = "";
  for (const list of ["entries", "exits"] as const) {
    const ids = a[list];
    for (let j = 0; j < ids.length; j++) {
      const dev = L.get("devices", ids[j]!);
      if (dev === undefined) {
        refAt(L, "devices", ids[j]!, "areas", i, list, j, "device", add);
        continue;
      }
      if (node === undefined) {
        node = dev.cloudNode;
        first = dev.id;
      } else if (dev.cloudNode !== node)
        add(
          "invalidReference",
          ["areas", i, list, j],
          `Device ${quote(dev.id)} is on cloud node ${quote(dev.cloudNode)}, device ${quote(first)} on ${quote(node)}: an area's state is kept by one node, so its devices share it.`,
        );
    }
  }
};
