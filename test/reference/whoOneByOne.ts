// The oracle of who can access: the one-holder-at-a-time evaluation the engine used before it
// evaluated each door in one pass (docs/semantics.md WA1). Every holder of every group whose rules
// reach the device goes through scanAccess — the building block that RSOP uses, property-tested
// against decide — and the result is sorted by comparing ids. Slow on purpose, and obviously the
// definition: what a scan by each holder would answer.
import type { CompiledDevice, CompiledSystem } from "../../src/compile/index.js";
import { NONE, floorsOf, newRuleOutcome } from "../../src/evaluate/ruleWalk.js";
import { minRankReaching, reachesFloorGroup, scanAccess } from "../../src/evaluate/scanAccess.js";
import type { AccessEntry } from "../../src/evaluate/who.js";

function candidates(sys: CompiledSystem, device: CompiledDevice): number[] {
  const seen = new Set<number>();
  for (let slot = 0; slot < device.slotGroup_.length; slot++)
    for (const h of sys.holdersOfGroup_[device.slotGroup_[slot]!]!) seen.add(h);
  return [...seen];
}

function byHolderId(a: AccessEntry, b: AccessEntry): number {
  return a.holderId < b.holderId ? -1 : a.holderId > b.holderId ? 1 : 0;
}

/** whoCanAccess(deviceId).holders, one holder at a time. */
export function whoOneByOne(sys: CompiledSystem, deviceId: string, at: number): AccessEntry[] {
  const dev = sys.deviceIndex_.get(deviceId)!;
  const outcome = newRuleOutcome();
  const holders: AccessEntry[] = [];
  for (const h of candidates(sys, dev)) {
    const holder = sys.holders_[h]!;
    const access = scanAccess(sys, dev, h, at, outcome);
    if (!access.allowed) continue;
    holders.push({ holderId: holder.id, activeRuleId: sys.rules_[access.rank]!.id, floors: floorsOf(dev, outcome) });
  }
  return holders.sort(byHolderId);
}

/** whoCanAccessFloorGroup(floorGroupId).holders, one holder at a time. */
export function whoFloorGroupOneByOne(sys: CompiledSystem, floorGroupId: string, at: number): AccessEntry[] {
  const fg = sys.snapshot.floorGroups[sys.floorGroupIndex_.get(floorGroupId)!]!;
  const reader = sys.deviceIndex_.get(fg.readerPort)!;
  const k = reader.floorGroups_.indexOf(fg.id);
  const outcome = newRuleOutcome();
  const holders: AccessEntry[] = [];
  for (const h of candidates(sys, reader)) {
    const holder = sys.holders_[h]!;
    const access = scanAccess(sys, reader, h, at, outcome);
    if (!access.allowed || !reachesFloorGroup(reader, outcome, k)) continue;
    const rank = minRankReaching(sys, reader, h, access.factor, access.local, k);
    if (rank === NONE) continue;
    holders.push({ holderId: holder.id, activeRuleId: sys.rules_[rank]!.id, floors: fg.floors });
  }
  return holders.sort(byHolderId);
}
