// Connections: ids unique; the cloud node exists; a lockhub operates at most 64 locks.
import { LOCKHUB_MAX_LOCKS } from "../systemSchema.js";
import { quote } from "../zodIssues.js";
import { checkId, ref } from "./common.js";
import type { Check } from "./lookups.js";

export const checkConnectionId: Check<"connections"> = (v, i, L, add) => checkId("connections", v, i, L, add);
export const checkConnectionRefs: Check<"connections"> = (x, i, L, add) => {
  ref(L, "cloudNodes", x.cloudNode, ["connections", i, "cloudNode"], "cloud node", add);
};
/** A wireless-lock hub operates up to 64 locks: the devices on it (docs/semantics.md S14). */
export const checkConnectionLocks: Check<"connections"> = (x, i, L, add) => {
  if (x.type !== "lockhub") return;
  const n = L.devicesOn(x.id);
  if (n > LOCKHUB_MAX_LOCKS)
    add(
      "overCapacity",
      ["connections", i, "type"],
      `Lockhub ${quote(x.id)} has ${n} devices on it; a lockhub operates at most ${LOCKHUB_MAX_LOCKS} locks.`,
    );
};
