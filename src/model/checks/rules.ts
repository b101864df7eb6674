// Rules: ids unique; the group, devices and floor groups exist; a door rule's devices are no
// elevator readers or floor relays; the calendar exists.
import { ELEVATOR_READER_TYPES } from "../systemSchema.js";
import { quote } from "../zodIssues.js";
import { checkId, ref, refAt } from "./common.js";
import type { Check } from "./lookups.js";

export const checkRuleId: Check<"rules"> = (v, i, L, add) => checkId("rules", v, i, L, add);
export const checkRuleRefs: Check<"rules"> = (r, i, L, add) => {
  refAt(L, "groups", r.groupId, "rules", i, "groupId", -1, "group", add);
  const devices = r.devices;
  for (let j = 0; j < devices.length; j++) {
    const d = devices[j]!;
    // One lookup for the common case, a device that is there; refAt reports the others.
    const dev = L.get("devices", d);
    if (dev === undefined) refAt(L, "devices", d, "rules", i, "devices", j, "device", add);
    else if (ELEVATOR_READER_TYPES.includes(dev.type) || dev.type === "floorRelay")
      add(
        "invalidReference",
        ["rules", i, "devices", j],
        `Device ${quote(d)} is a ${dev.type}; elevators are reached through floor groups in elevator rules.`,
      );
  }
  const floorGroups = r.floorGroups;
  for (let j = 0; j < floorGroups.length; j++)
    refAt(L, "floorGroups", floorGroups[j]!, "rules", i, "floorGroups", j, "floor group", add);
  const calendar = r.calendar;
  if (calendar !== undefined && calendar !== null)
    ref(L, "calendars", calendar.id, ["rules", i, "calendar", "id"], "calendar", add);
};
