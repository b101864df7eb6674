// The access question in Cedar (wasm): holders are entities whose parents are their groups; one
// `permit` per enabled allow rule and one `forbid` per enabled deny rule, scoped to the group, with
// the rule's devices, weekly window, date bounds and accepted factors in `when`; one `forbid` for
// holder validity. The request's local wall time and presented factor travel in `context`.
//
// Each call passes only the entities it needs (the holder and the device), and the policy set is
// parsed once (`preparsePolicySet` + `statefulIsAuthorized`), Cedar's fastest path from JavaScript.
import {
  type EntityJson,
  type StatefulAuthorizationCall,
  preparsePolicySet,
  statefulIsAuthorized,
} from "@cedar-policy/cedar-wasm/nodejs";
import { type PeerInput, policyAccepts } from "../fixtures.js";
import { type RawRule, type RawSnapshot, clockMs } from "./rawSnapshot.js";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const POLICY_SET_ID = "rsop-bench";

const dayNumber = (date: string) => {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, d) / 86_400_000;
};
const str = (s: string) => JSON.stringify(s);

/** The `when` condition of a rule's window: SPEC §4, with date bounds on the occurrence's start day. */
function windowCondition(r: RawRule): string {
  const days = r.recurring.map((d) => WEEKDAYS.indexOf(d)).sort();
  const onDay = (v: string) => (days.length === 7 ? "true" : `[${days.join(", ")}].contains(context.${v})`);
  const bounds = (v: string) => {
    const parts: string[] = [];
    if (r.startDate) parts.push(`context.${v} >= ${dayNumber(r.startDate)}`);
    if (r.endDate) parts.push(`context.${v} <= ${dayNumber(r.endDate)}`);
    return parts.length === 0 ? "" : ` && ${parts.join(" && ")}`;
  };
  const start = clockMs(r.startTime);
  const stop = clockMs(r.stopTime);
  if (start < stop) return `${onDay("wd")} && context.tod >= ${start} && context.tod < ${stop}${bounds("day")}`;
  return `((${onDay("wd")} && context.tod >= ${start}${bounds("day")}) || (${onDay("pwd")} && context.tod < ${stop}${bounds("pday")}))`;
}

function factors(mask: number): number[] {
  return [1, 2, 4].filter((f) => (mask & f) !== 0);
}

export interface CedarPeer {
  readonly policies: number;
  readonly policyTextBytes: number;
  /** The call of a PeerInput (built once, outside the timed path). */
  call(input: PeerInput): StatefulAuthorizationCall;
}

export function cedarPeer(snapshotJson: unknown): CedarPeer {
  const snapshot = snapshotJson as RawSnapshot;
  const readerOf = new Map(snapshot.floorGroups.map((fg) => [fg.id, fg.readerPort]));
  const policies: Record<string, string> = {
    "holder-validity": `forbid (principal, action, resource) unless { principal.enabled && context.local >= principal.from && context.local < principal.to };`,
  };
  for (const r of snapshot.rules) {
    if (r.enabled === false) continue;
    const devices =
      r.type === "door" ? (r.devices ?? []) : [...new Set((r.floorGroups ?? []).map((fg) => readerOf.get(fg)!))];
    const where = `[${devices.map((d) => `Device::${str(d)}`).join(", ")}].contains(resource)`;
    const scope = `(principal in Group::${str(r.groupId)}, action == Action::"open", resource)`;
    if (r.allow === false) policies[r.id] = `forbid ${scope} when { ${where} && ${windowCondition(r)} };`;
    else {
      const accepted = factors(policyAccepts(r.authenticationPolicy));
      const factor = accepted.length === 3 ? "" : ` && [${accepted.join(", ")}].contains(context.factor)`;
      policies[r.id] =
        `permit ${scope} when { ${where} && ${windowCondition(r)}${factor} && resource.accepts.contains(context.factor) };`;
    }
  }
  const parsed = preparsePolicySet(POLICY_SET_ID, { staticPolicies: policies });
  if (parsed.type !== "success")
    throw new Error(`Cedar policies do not parse: ${JSON.stringify(parsed.errors.slice(0, 3))}`);

  const holderEntities = new Map<string, EntityJson>();
  const unknownHolder = (id: string): EntityJson => ({
    uid: { type: "Holder", id },
    attrs: { enabled: false, from: 0, to: 0 },
    parents: [],
  });
  const groupsOf = new Map(snapshot.holders.map((h) => [h.id, h.groups]));
  const holderEntity = (input: PeerInput): EntityJson => {
    if (input.holderId === null) return unknownHolder("(unknown credential)");
    let e = holderEntities.get(input.holderId);
    if (e === undefined) {
      e = {
        uid: { type: "Holder", id: input.holderId },
        attrs: { enabled: input.enabled, from: input.from, to: input.to },
        parents: groupsOf.get(input.holderId)!.map((g) => ({ type: "Group", id: g })),
      };
      holderEntities.set(input.holderId, e);
    }
    return e;
  };
  const deviceEntities = new Map<string, EntityJson>();
  const deviceEntity = (input: PeerInput): EntityJson => {
    let e = deviceEntities.get(input.deviceId);
    if (e === undefined) {
      e = {
        uid: { type: "Device", id: input.deviceId },
        attrs: { accepts: factors(input.deviceAccepts) },
        parents: [],
      };
      deviceEntities.set(input.deviceId, e);
    }
    return e;
  };
  return {
    policies: Object.keys(policies).length,
    policyTextBytes: Object.values(policies).reduce((s, p) => s + p.length, 0),
    call: (input) => {
      const principal = holderEntity(input);
      const resource = deviceEntity(input);
      return {
        principal: principal.uid,
        action: { type: "Action", id: "open" },
        resource: resource.uid,
        context: {
          wd: input.wd,
          pwd: input.pwd,
          tod: input.tod,
          day: input.day,
          pday: input.pday,
          local: input.local,
          factor: input.factor,
        },
        preparsedPolicySetId: POLICY_SET_ID,
        entities: [principal, resource],
      };
    },
  };
}

/** Cedar's decision for a prepared call; throws when Cedar reports a failure. */
export function cedarAllows(call: StatefulAuthorizationCall): boolean {
  const answer = statefulIsAuthorized(call);
  if (answer.type !== "success") throw new Error(`Cedar failed: ${JSON.stringify(answer.errors.slice(0, 2))}`);
  return answer.response.decision === "allow";
}
