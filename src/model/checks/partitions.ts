// Partitions: ids unique, names unique within the system.
import { checkId, checkName } from "./common.js";
import type { Check } from "./lookups.js";

export const checkPartitionId: Check<"partitions"> = (v, i, L, add) => checkId("partitions", v, i, L, add);
export const checkPartitionName: Check<"partitions"> = (v, i, L, add) =>
  checkName("partitions", "Partition", v, i, L, add);
