// Rules: ids unique; the group, devices and floor groups exist; a door rule's devices are no
// elevator readers or floor relays.
import { ELEVATOR_READER_TYPES } from "../systemSchema.js";
import { quote } from "../zodIssues.js";
import { checkId, ref } from "./common.js";
import type { Check } from "./lookups.js";

export const checkRuleId: Check<"rules"> = (v, i, L, add) => checkId("rules", v, i, L, add);
export const checkRuleRefs: Check<"rules"> = (r, i, L, add) => {
  const base = ["rules", i];
  ref(L, "groups", r.groupId, [...base, "groupId"], "group", add);
  r.devices.forEach((d, j) => {
    // One lookup for the common case, a device that is there; ref reports the others.
    const dev = L.get("devices", d);
    if (dev === undefined) {
      ref(L, "devices", d, [...base, "devices", j], "device", add);
      return;
    }
    if (ELEVATOR_READER_TYPES.includes(dev.type) || dev.type === "floorRelay")
      add("invalidReference", [...base, "devices", j], `Device ${quote(d)} is a ${dev.type}; elevators are reached through floor groups in elevator rules.`);
  });
  r.floorGroups.forEach((f, j) => ref(L, "floorGroups", f, [...base, "floorGroups", j], "floor group", add));
};
