// Resultant set of policy (SPEC §7): per holder, the rules of its groups and every door and floor
// group they reach, each with what decide would answer for a scan at that instant (scanAccess).
// The cost of one holder grows with the rules that reach it, not with the size of the system.
import { type CompiledSystem, offsetAt, windowContains } from "../compile/index.js";
import { type Issue, MAX_INSTANT, MIN_INSTANT, QueryError, parseInstant } from "../model/index.js";
import type { AuthenticationPolicy, Weekday } from "../model/index.js";
import { NONE, newRuleOutcome } from "./decide.js";
import { isoInstant } from "./formatInstant.js";
import { minRankReaching, reachesFloorGroup, scanAccess } from "./scanAccess.js";

/** A cloud node as RSOP shows it. */
export interface RsopNodeRef {
  id: string;
  serialNumber: string | null;
  name: string;
}

/** One rule of an RSOP holder. */
export interface RsopRule {
  type: "door" | "elevator";
  id: string;
  startTime: string;
  stopTime: string;
  recurring: Weekday[];
  allow: boolean;
  authenticationPolicy: AuthenticationPolicy | null;
  groupId: string;
  /** Its window contains the instant (system zone for system-wide RSOP, the node's when scoped). */
  active: boolean;
}

/** One door of an RSOP holder. */
export interface RsopDevice {
  id: string;
  name: string;
  created: string | null;
  type: string;
  publicIcon: string | null;
  readerType: string;
  cloudNode: RsopNodeRef;
  allowed: boolean;
  activeRuleId: string | null;
}

/** One floor group of an RSOP holder. */
export interface RsopFloorGroup {
  id: string;
  name: string;
  readerPort: { id: string; name: string; cloudNode: RsopNodeRef };
  floors: { id: string; name: string; type: string }[];
  allowed: boolean;
  activeRuleId: string | null;
}

/** One holder of an RSOP result. */
export interface RsopHolder {
  id: string;
  enabled: boolean;
  groups: { id: string; name: string }[];
  rules: RsopRule[];
  devices: RsopDevice[];
  floorGroups: RsopFloorGroup[];
}

/**
 * An RSOP result, in the 2.0 API's shape.
 */
export interface RsopResult {
  date: string;
  holders: RsopHolder[];
}

/** Options of an RSOP or who-can-access query. */
export interface AtOptions {
  /** The instant: ISO 8601 with Z or an offset, or epoch milliseconds. */
  readonly at: string | number;
}

/** Options of an RSOP query. */
export interface RsopOptions extends AtOptions {
  /** Scope the result to one cloud node's devices, floor groups and the rules that reach them. */
  readonly cloudNodeId?: string;
}

/** Parses a query instant or pushes an issue at `path`. */
export function queryInstant(at: unknown, path: string, issues: Issue[]): number {
  const t = parseInstant(at);
  if (Number.isNaN(t)) issues.push({ code: "invalid", path: [path], message: "Must be an ISO 8601 instant with Z or an offset, or epoch milliseconds." });
  else if (t < MIN_INSTANT || t >= MAX_INSTANT)
    issues.push({ code: "invalid", path: [path], message: "Must lie between 1970-01-01T00:00:00Z and 2100-01-01T00:00:00Z." });
  return t;
}

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

/** Computes RSOP (SPEC §7). Throws QueryError naming every unknown id or bad option. */
export function computeRsop(sys: CompiledSystem, holderIds: readonly string[], options: RsopOptions): RsopResult {
  const issues: Issue[] = [];
  const at = queryInstant(options.at, "at", issues);
  const scope = options.cloudNodeId;
  const scopeNode = scope === undefined ? undefined : sys.nodeIndex_.get(scope);
  if (scope !== undefined && scopeNode === undefined) issues.push({ code: "unknownId", path: ["cloudNodeId"], message: `Unknown cloud node id "${scope}".` });
  holderIds.forEach((id, i) => {
    if (!sys.holderIndex_.has(id)) issues.push({ code: "unknownId", path: ["ids", i], message: `Unknown holder id "${id}".` });
  });
  if (issues.length > 0) throw new QueryError(issues);

  const snap = sys.snapshot;
  const activeZone = scopeNode === undefined ? sys.systemZone_ : scopeNode.zone_;
  const activeLocal = at + offsetAt(activeZone, at);
  const outcome = newRuleOutcome();
  const inScope = (nodeId: string) => scope === undefined || nodeId === scope;
  const nodeRef = nodeRefs(sys);

  const holders = holderIds.map(function rsopOfHolder(id): RsopHolder {
    const holder = sys.holderIndex_.get(id)!;
    const h = holder.holder_;
    const ranks = new Set<number>();
    for (const g of sys.holderGroups_.subarray(holder.groupFrom_, holder.groupTo_)) for (const rank of sys.rulesOfGroup_[g]!) if (scope === undefined || sys.nodesOfRule_[rank]!.has(scope)) ranks.add(rank);
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
        active: windowContains(sys.ruleData_, rank, activeLocal),
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
      const access = scanAccess(sys, device, holder, at, outcome);
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
      const access = scanAccess(sys, reader, holder, at, outcome);
      const k = reader.floorGroups_.indexOf(fgId);
      const allowed = access.allowed && reachesFloorGroup(reader, outcome, k);
      const rank = allowed ? minRankReaching(sys, reader, holder, access.factor, access.local, k) : NONE;
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
