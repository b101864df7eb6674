// "Who can open this door now?": every holder a scan would admit (scanAccess), found through the
// groups whose rules reach the device, so the cost grows with those groups' members only.
import type { CompiledDevice, CompiledSystem } from "../compile/index.js";
import { type Issue, QueryError } from "../model/index.js";
import { NONE, floorsOf, newRuleOutcome } from "./decide.js";
import { isoInstant } from "./formatInstant.js";
import { type AtOptions, queryInstant } from "./rsop.js";
import { minRankReaching, reachesFloorGroup, scanAccess } from "./scanAccess.js";

/** One holder who can get in, and the rule that lets them. */
export interface AccessEntry {
  holderId: string;
  activeRuleId: string;
  /** Elevator readers: the floors the holder's scan enables; empty for doors. */
  floors: readonly string[];
}

/**
 * Who can access one device or floor group at one instant, sorted by holder id.
 */
export interface WhoResult {
  date: string;
  deviceId: string | null;
  floorGroupId: string | null;
  holders: AccessEntry[];
}

function candidates(sys: CompiledSystem, device: CompiledDevice): number[] {
  const seen = new Set<number>();
  for (let slot = 0; slot < device.slotGroup_.length; slot++) for (const h of sys.holdersOfGroup_[device.slotGroup_[slot]!]!) seen.add(h);
  return [...seen];
}

function byHolderId(a: AccessEntry, b: AccessEntry): number {
  return a.holderId < b.holderId ? -1 : a.holderId > b.holderId ? 1 : 0;
}

/** Every holder whose scan at `deviceId` would be allowed at `at`. Throws QueryError on unknown ids. */
export function whoCanAccess(sys: CompiledSystem, deviceId: string, options: AtOptions): WhoResult {
  const issues: Issue[] = [];
  const at = queryInstant(options.at, "at", issues);
  const device = sys.deviceIndex_.get(deviceId);
  if (device === undefined) issues.push({ code: "unknownId", path: ["deviceId"], message: `Unknown device id "${deviceId}".` });
  if (issues.length > 0) throw new QueryError(issues);
  const dev = device!;
  const outcome = newRuleOutcome();
  const holders: AccessEntry[] = [];
  for (const h of candidates(sys, dev)) {
    const holder = sys.holders_[h]!;
    const access = scanAccess(sys, dev, holder, at, outcome);
    if (!access.allowed) continue;
    holders.push({ holderId: holder.id, activeRuleId: sys.rules_[access.rank]!.id, floors: floorsOf(dev, outcome) });
  }
  holders.sort(byHolderId);
  return { date: isoInstant(at), deviceId: dev.id, floorGroupId: null, holders };
}

/** Every holder whose scan at the floor group's reader would enable that floor group at `at`. */
export function whoCanAccessFloorGroup(sys: CompiledSystem, floorGroupId: string, options: AtOptions): WhoResult {
  const issues: Issue[] = [];
  const at = queryInstant(options.at, "at", issues);
  const index = sys.floorGroupIndex_.get(floorGroupId);
  if (index === undefined) issues.push({ code: "unknownId", path: ["floorGroupId"], message: `Unknown floor group id "${floorGroupId}".` });
  if (issues.length > 0) throw new QueryError(issues);
  const fg = sys.snapshot.floorGroups[index!]!;
  const reader = sys.deviceIndex_.get(fg.readerPort)!;
  const k = reader.floorGroups_.indexOf(fg.id);
  const outcome = newRuleOutcome();
  const holders: AccessEntry[] = [];
  for (const h of candidates(sys, reader)) {
    const holder = sys.holders_[h]!;
    const access = scanAccess(sys, reader, holder, at, outcome);
    if (!access.allowed || !reachesFloorGroup(reader, outcome, k)) continue;
    const rank = minRankReaching(sys, reader, holder, access.factor, access.local, k);
    if (rank === NONE) continue;
    holders.push({ holderId: holder.id, activeRuleId: sys.rules_[rank]!.id, floors: fg.floors });
  }
  holders.sort(byHolderId);
  return { date: isoInstant(at), deviceId: null, floorGroupId: fg.id, holders };
}
