// Floor groups: ids and names unique; the partition exists; the reader is an elevator reader and
// each floor a floor relay on the reader's node, named once.
import { ELEVATOR_READER_TYPES } from "../systemSchema.js";
import { quote } from "../zodIssues.js";
import { checkId, checkName, ref } from "./common.js";
import type { Check, ParsedEntities } from "./lookups.js";

export const checkFloorGroupId: Check<"floorGroups"> = (v, i, L, add) => checkId("floorGroups", v, i, L, add);
export const checkFloorGroupName: Check<"floorGroups"> = (v, i, L, add) =>
  checkName("floorGroups", "Floor group", v, i, L, add);
export const checkFloorGroupRefs: Check<"floorGroups"> = (fg, i, L, add) => {
  const base = ["floorGroups", i];
  ref(L, "partitions", fg.partition, [...base, "partition"], "partition", add);
  let reader: ParsedEntities["devices"] | undefined;
  if (ref(L, "devices", fg.readerPort, [...base, "readerPort"], "device", add)) {
    reader = L.get("devices", fg.readerPort);
    if (reader !== undefined && !ELEVATOR_READER_TYPES.includes(reader.type))
      add(
        "invalidReference",
        [...base, "readerPort"],
        `Device ${quote(reader.id)} is a ${reader.type}; a readerPort is an elevatorReader or additionalElevatorReader.`,
      );
  }
  fg.floors.forEach((f, j) => {
    if (!ref(L, "devices", f, [...base, "floors", j], "device", add)) return;
    const floor = L.get("devices", f);
    if (floor === undefined) return;
    if (floor.type !== "floorRelay")
      add(
        "invalidReference",
        [...base, "floors", j],
        `Device ${quote(floor.id)} is a ${floor.type}, not a floorRelay.`,
      );
    else if (reader !== undefined && floor.cloudNode !== reader.cloudNode)
      add(
        "inconsistentReference",
        [...base, "floors", j],
        `Floor relay ${quote(floor.id)} is on another cloud node than the reader ${quote(reader.id)}.`,
      );
  });
  if (new Set(fg.floors).size !== fg.floors.length) add("invalid", [...base, "floors"], "Names a floor twice.");
};
