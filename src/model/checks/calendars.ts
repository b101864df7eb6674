// Calendars (docs/semantics.md C1): ids unique; the partition exists. Rules check their own calendar (rules.ts).
import { checkId, ref } from "./common.js";
import type { Check } from "./lookups.js";

export const checkCalendarId: Check<"calendars"> = (v, i, L, add) => checkId("calendars", v, i, L, add);
export const checkCalendarRefs: Check<"calendars"> = (c, i, L, add) => {
  ref(L, "partitions", c.partition, ["calendars", i, "partition"], "partition", add);
};
