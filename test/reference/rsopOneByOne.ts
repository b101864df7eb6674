// The oracle of RSOP's shape and values: the entry-by-entry evaluation the engine used before it
// accumulated each holder's rules per device and reused device records across calls (docs/semantics.md
// WA4–WA5). Every device and floor group goes through scanAccess — the building block property-tested
// against decide — and every entry is built from the snapshot's objects on each call.
import {
  type CompiledSystem,
  holderGroupFrom,
  holderGroupTo,
  offsetAt,
  windowContains,
} from "../../src/compile/index.js";
import { type Issue, QueryError } from "../../src/model/index.js";
import { NONE, newRuleOutcome } from "../../src/evaluate/ruleWalk.js";
import { isoInstant } from "../../src/evaluate/formatInstant.js";
import {
  type RsopDevice,
  type RsopFloorGroup,
  type RsopHolder,
  type RsopNodeRef,
  type RsopOptions,
  type RsopResult,
  type RsopRule,
  queryInstant,
} from "../../src/evaluate/rsop.js";
import { minRankReaching, reachesFloorGroup, scanAccess } from "../../src/evaluate/scanAccess.js";

/** A cloud node reference maker for one result: every device of a node shares one object there. */
function nodeRefs(sys: CompiledSystem): (nodeId: string) => RsopNodeRef {
  const made = new Map<string, RsopNodeRef>();
  return (nodeId) => {
    let ref = made.get(nodeId);
    if (ref === undefined) {
      const n = sys.snapshot.cloudNodes[sys.nodeIndex_.get(nodeId)!.index_]!;
      ref = { id: n.id, serialNumber: n.serialNumber, name: n.name };
      made.set(nodeId, ref);
    }
    return ref;
  };
}

/** RSOP as the engine computed it before shared device records (docs/semantics.md WA4): ids and options already checked. */
export function rsopOneByOne(sys: CompiledSystem, holderIds: readonly string[], options: RsopOptions): RsopResult {
  const issues: Issue[] = [];
  const at = queryInstant(options.at, "at", issues);
  const scope = options.cloudNodeId;
  const scopeNode = scope === undefined ? undefined : sys.nodeIndex_.get(scope);
  if (scope !== undefined && scopeNode === undefined)
    issues.push({ code: "unknownId", path: ["cloudNodeId"], message: `Unknown cloud node id "${scope}".` });
  holderIds.forEach((id, i) => {
    if (!sys.holderIndex_.has(id))
      issues.push({ code: "unknownId", path: ["ids", i], message: `Unknown holder id "${id}".` });
  });
  if (issues.length > 0) throw new QueryError(issues);

  const snap = sys.snapshot;
  const activeZone = scopeNode === undefined ? sys.systemZone_ : scopeNode.zone_;
  const activeLocal = at + offsetAt(activeZone, at);
  const outcome = newRuleOutcome();
  const inScope = (nodeId: string) => scope === undefined || nodeId === scope;
  const nodeRef = nodeRefs(sys);

  const holders = holderIds.map(function rsopOfHolder(id): RsopHolder {
    const index = sys.holderIndex_.get(id)!;
    const h = sys.holders_[index]!;
    const ranks = new Set<number>();
    for (const g of sys.holderGroups_.subarray(holderGroupFrom(sys, index), holderGroupTo(sys, index)))
      for (const rank of sys.rulesOfGroup_[g]!)
        if (scope === undefined || sys.nodesOfRule_[rank]!.has(scope)) ranks.add(rank);
    const sorted = [...ranks].sort((a, b) => a - b);
    const rules = sorted.map((rank): RsopRule => {
      const r = sys.rules_[rank]!.rule_;
      return {
        type: r.type,
        id: r.id,
        startTime: r.startTime,
        stopTime: r.stopTime,
        recurring: [...r.recurring],
        allow: r.allow,
        authenticationPolicy: r.authenticationPolicy,
        groupId: r.groupId,
        active: windowContains(sys.ruleData_, sys.calendarData_, rank, activeLocal),
      };
    });
    // Devices of the holder's door rules, once each (a mark per device), listed in id order.
    const seen = new Uint8Array(sys.devices_.length);
    const reached: number[] = [];
    const floorGroupIds = new Set<string>();
    for (const rank of sorted) {
      for (const d of sys.ruleDevices_[rank]!) {
        if (seen[d] === 1) continue;
        seen[d] = 1;
        if (inScope(sys.devices_[d]!.node_.id)) reached.push(sys.deviceIdOrder_[d]!);
      }
      const r = sys.rules_[rank]!.rule_;
      for (const fg of r.floorGroups) {
        const reader = snap.floorGroups[sys.floorGroupIndex_.get(fg)!]!.readerPort;
        if (inScope(sys.deviceIndex_.get(reader)!.node_.id)) floorGroupIds.add(fg);
      }
    }
    const byIdOrder = new Int32Array(reached).sort();
    const devices: RsopDevice[] = new Array(byIdOrder.length);
    for (let i = 0; i < byIdOrder.length; i++) {
      const device = sys.devicesById_[byIdOrder[i]!]!;
      const d = snap.devices[device.index_]!;
      const access = scanAccess(sys, device, index, at, outcome);
      devices[i] = {
        id: d.id,
        name: d.name,
        created: d.created,
        type: d.type,
        publicIcon: d.publicIcon,
        readerType: d.readerType,
        cloudNode: nodeRef(d.cloudNode),
        allowed: access.allowed,
        activeRuleId: access.rank === NONE ? null : sys.ruleIds_[access.rank]!,
      };
    }
    const floorGroups = [...floorGroupIds].sort().map((fgId): RsopFloorGroup => {
      const fg = snap.floorGroups[sys.floorGroupIndex_.get(fgId)!]!;
      const reader = sys.deviceIndex_.get(fg.readerPort)!;
      const readerDevice = snap.devices[reader.index_]!;
      const access = scanAccess(sys, reader, index, at, outcome);
      const k = reader.floorGroups_.indexOf(fgId);
      const allowed = access.allowed && reachesFloorGroup(reader, outcome, k);
      const rank = allowed ? minRankReaching(sys, reader, index, access.factor, access.local, k) : NONE;
      return {
        id: fg.id,
        name: fg.name,
        readerPort: { id: readerDevice.id, name: readerDevice.name, cloudNode: nodeRef(readerDevice.cloudNode) },
        floors: fg.floors.map((f) => {
          const dev = snap.devices[sys.deviceIndex_.get(f)!.index_]!;
          return { id: dev.id, name: dev.name, type: dev.type };
        }),
        allowed,
        activeRuleId: rank === NONE ? null : sys.rules_[rank]!.id,
      };
    });
    return {
      id: h.id,
      enabled: h.enabled,
      groups: h.groups.map((g) => ({ id: g, name: sys.groups_[sys.groupIndex_.get(g)!]!.name })),
      rules,
      devices,
      floorGroups,
    };
  });
  return { date: isoInstant(at), holders };
}
