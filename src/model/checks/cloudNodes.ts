// Cloud nodes: the node's own time zone and card formats, and ids unique.
import { isValidZone } from "../zones.js";
import { validateCardFormat } from "../validateCardFormat.js";
import { quote } from "../zodIssues.js";
import { checkId } from "./common.js";
import type { Check } from "./lookups.js";

/** The node's time zone is an IANA zone; each card format it lists is consistent. */
export const checkCloudNodeOwn: Check<"cloudNodes"> = (n, i, _L, add) => {
  if (n.timezone !== null && !isValidZone(n.timezone))
    add("invalidTimezone", ["cloudNodes", i, "timezone"], `${quote(n.timezone)} is not an IANA time zone.`);
  if (n.cardFormat !== null)
    n.cardFormat.forEach((f, j) => {
      for (const issue of validateCardFormat(f))
        add(issue.code, ["cloudNodes", i, "cardFormat", j, ...issue.path], issue.message);
    });
};
export const checkCloudNodeId: Check<"cloudNodes"> = (v, i, L, add) => checkId("cloudNodes", v, i, L, add);
