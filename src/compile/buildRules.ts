// The rules segment: each rule's rank (its position in id order) and rank-indexed records — window
// and flags in `ruleData_`, its id, door devices and the cloud nodes it reaches — and per group the
// ranks of its enabled rules. updateCompiled rewrites one rule's records with writeRule.
import type { SystemSnapshot } from "../model/index.js";
import type { CompiledRule, CompiledSystem } from "./compiledSystem.js";
import { RULE_STRIDE, compileWindowInto } from "./compileWindow.js";
import { linkRule } from "./buildReach.js";
import { policyMask } from "./policyMask.js";

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Compiles every rule of `snapshot` into `sys` (whose rule lists are empty): ranks in id order,
 * records, `rulesOfGroup_`, and each enabled rule linked at the devices it reaches (the runs are
 * built afterwards, by rebuildDeviceRun).
 */
export function buildRules(sys: CompiledSystem, snapshot: SystemSnapshot): void {
  const order = [...snapshot.rules].sort((a, b) => compareIds(a.id, b.id));
  const ofGroup: number[][] = snapshot.groups.map(() => []);
  order.forEach((r, rank) => {
    const rule: CompiledRule = { id: r.id, rank_: rank, rule_: r, group_: -1 };
    sys.rules_.push(rule);
    sys.ruleIds_.push(r.id);
    sys.ruleDevices_.push(NO_DEVICES);
    sys.nodesOfRule_.push(NO_NODES);
    sys.ruleIndex_.set(r.id, rule);
    writeRule(sys, rule);
    if (r.enabled && r.action !== "unlock") ofGroup[sys.groupIndex_.get(r.groupId)!]!.push(rank);
    linkRule(sys, rule, null);
  });
  ofGroup.forEach((ranks, g) => {
    if (ranks.length > 0) sys.rulesOfGroup_[g] = Int32Array.from(ranks);
  });
}

const NO_NODES: ReadonlySet<string> = new Set();
const NO_DEVICES: readonly number[] = Object.freeze([]);

/** Writes rule `rule`'s rank-indexed records (window, door devices, nodes reached) from `rule.rule_`. */
export function writeRule(sys: CompiledSystem, rule: CompiledRule): void {
  const r = rule.rule_;
  const rank = rule.rank_;
  const calendar = r.calendar === undefined || r.calendar === null ? 0 : sys.calendarAt_.get(r.calendar.id)!;
  compileWindowInto(r, policyMask(r.authenticationPolicy), sys.ruleData_, rank * RULE_STRIDE, calendar);
  rule.group_ = sys.groupIndex_.get(r.groupId)!;
  sys.rules_[rank] = rule;
  sys.ruleIds_[rank] = r.id;
  const devices = r.devices.map((d) => sys.deviceIndex_.get(d)!);
  const nodes = devices.map((d) => d.node_);
  for (const fg of r.floorGroups) nodes.push(sys.devices_[sys.floorGroupAt_.get(fg)!.reader]!.node_);
  sys.ruleDevices_[rank] = devices.length === 0 ? NO_DEVICES : devices.map((d) => d.index_);
  sys.nodesOfRule_[rank] =
    nodes.length === 0
      ? NO_NODES
      : nodes.every((n) => n === nodes[0])
        ? nodes[0]!.alone_
        : new Set(nodes.map((n) => n.id));
}
