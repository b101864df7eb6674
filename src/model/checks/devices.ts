// Devices: ids and names unique; node, partitions, connection and primary reader exist; the device
// sits on its connection's node; a port of a connection is used once; a primaryReader is one.
import { quote } from "../zodIssues.js";
import { checkId, checkName, ref } from "./common.js";
import type { Check } from "./lookups.js";

export const checkDeviceId: Check<"devices"> = (v, i, L, add) => checkId("devices", v, i, L, add);
export const checkDeviceName: Check<"devices"> = (v, i, L, add) => checkName("devices", "Device", v, i, L, add);
export const checkDeviceRefs: Check<"devices"> = (d, i, L, add) => {
  const base = ["devices", i];
  ref(L, "cloudNodes", d.cloudNode, [...base, "cloudNode"], "cloud node", add);
  (d.partition ?? []).forEach((p, j) => ref(L, "partitions", p.id, [...base, "partition", j, "id"], "partition", add));
  if (ref(L, "connections", d.connection, [...base, "connection"], "connection", add)) {
    const conn = L.get("connections", d.connection);
    if (conn !== undefined) {
      if (conn.cloudNode !== d.cloudNode)
        add(
          "inconsistentReference",
          [...base, "cloudNode"],
          `Device sits on cloud node ${quote(d.cloudNode)} but its connection ${quote(conn.id)} belongs to ${quote(conn.cloudNode)}.`,
        );
      if (d.wirelessAddress !== null && conn.type !== "wirelessCoordinator")
        add(
          "invalid",
          [...base, "wirelessAddress"],
          "A wirelessAddress is only used on a wirelessCoordinator connection.",
        );
    }
    const owner = L.portOwner(d.connection, d.port);
    if (owner !== i)
      add(
        "portInUse",
        [...base, "port"],
        `Port ${d.port} of connection ${quote(d.connection)} is already used by devices[${owner}].`,
      );
  }
  if (d.primaryReader !== null && ref(L, "devices", d.primaryReader, [...base, "primaryReader"], "device", add)) {
    const primary = L.get("devices", d.primaryReader);
    if (primary !== undefined && primary.type !== "primaryReader")
      add(
        "invalidReference",
        [...base, "primaryReader"],
        `Device ${quote(primary.id)} is a ${primary.type}, not a primaryReader.`,
      );
  }
};
