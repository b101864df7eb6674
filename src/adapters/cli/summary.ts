import type { SystemSnapshot } from "../../model/index.js";

/** Counts of a snapshot's entities, for one-line summaries. */
export function loadSnapshotSummary(s: SystemSnapshot) {
  return {
    systemId: s.systemId,
    cloudNodes: s.cloudNodes.length,
    devices: s.devices.length,
    holders: s.holders.length,
    credentials: s.holders.reduce((n, h) => n + h.credentials.length, 0),
    groups: s.groups.length,
    rules: s.rules.length,
  };
}
