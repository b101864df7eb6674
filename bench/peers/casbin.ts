// The access question in node-casbin: RBAC for group membership (g: holder → group) and door sets
// (g2: device → the rule's door set), ABAC for the rest — weekly windows, date bounds, deny rules
// ("deny-override" effect), holder validity and the authentication policy, all in the matcher over
// request attributes. One policy line per enabled rule:
//
//   p = group, door set, weekdays mask, start ms, stop ms, first day, last day, accepted factors, allow|deny
//
// Numbers in policy lines are strings (casbin's CSV model): times are zero-padded to 8 digits so that
// `p.start < p.stop` compares correctly; comparisons with request numbers convert to numbers.
import { type Enforcer, newEnforcer, newModelFromString } from "casbin";
import type { PeerInput } from "../fixtures.js";
import { policyAccepts } from "../fixtures.js";
import { type RawSnapshot, clockMs } from "./rawSnapshot.js";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

// casbin's matcher parser rewrites `r.` / `p.` only after a space or an operator, so a computed
// index is written `p.days[ r.c.wd]`. Bitwise operators are refused by its parser, hence the masks
// as strings of 0/1 indexed by weekday or by factor (1 card, 2 PIN, 4 card + PIN).
export const CASBIN_MODEL = `
[request_definition]
r = sub, obj, c

[policy_definition]
p = sub, obj, days, start, stop, first, last, acc, eft

[role_definition]
g = _, _
g2 = _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = r.c.enabled && r.c.local >= r.c.from && r.c.local < r.c.to && g2(r.obj, p.obj) && g(r.sub, p.sub) && \
  ((p.start < p.stop && p.days[ r.c.wd] == "1" && r.c.tod >= p.start && r.c.tod < p.stop && r.c.day >= p.first && r.c.day <= p.last) || \
   (p.start >= p.stop && ((p.days[ r.c.wd] == "1" && r.c.tod >= p.start && r.c.day >= p.first && r.c.day <= p.last) || \
                          (p.days[ r.c.pwd] == "1" && r.c.tod < p.stop && r.c.pday >= p.first && r.c.pday <= p.last)))) && \
  (p.eft == "deny" || (p.acc[ r.c.factor] == "1" && r.c.accepts[ r.c.factor] == "1"))
`;

const ms8 = (clock: string) => String(clockMs(clock)).padStart(8, "0");
const day = (date: string | null | undefined, fallback: string) => {
  if (date === null || date === undefined) return fallback;
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return String(Date.UTC(y, m - 1, d) / 86_400_000);
};
/** A weekday mask as a string of 0/1 indexed by weekday (0 = Sunday). */
const weekdays = (mask: number) => Array.from({ length: 7 }, (_, i) => ((mask >> i) & 1 ? "1" : "0")).join("");
/** A factor mask as a string of 0/1 indexed by factor value: position 1 card, 2 PIN, 4 card + PIN. */
const byFactor = (mask: number) =>
  ["0", mask & 1 ? "1" : "0", mask & 2 ? "1" : "0", "0", mask & 4 ? "1" : "0"].join("");

export interface CasbinPeer {
  readonly enforcer: Enforcer;
  readonly policies: number;
  readonly links: number;
  /** The request arguments of a PeerInput (built once, outside the timed path). */
  args(input: PeerInput): [string, string, Record<string, unknown>];
}

export async function casbinPeer(snapshotJson: unknown): Promise<CasbinPeer> {
  const snapshot = snapshotJson as RawSnapshot;
  const enforcer = await newEnforcer(newModelFromString(CASBIN_MODEL));
  const readerOf = new Map(snapshot.floorGroups.map((fg) => [fg.id, fg.readerPort]));
  const policies: string[][] = [];
  const doorLinks: string[][] = [];
  for (const r of snapshot.rules) {
    if (r.enabled === false) continue;
    let days = 0;
    for (const d of r.recurring) days |= 1 << WEEKDAYS.indexOf(d);
    const set = `doors:${r.id}`;
    policies.push([
      r.groupId,
      set,
      weekdays(days),
      ms8(r.startTime),
      ms8(r.stopTime),
      day(r.startDate, "-1000000000"),
      day(r.endDate, "1000000000"),
      byFactor(policyAccepts(r.authenticationPolicy)),
      r.allow === false ? "deny" : "allow",
    ]);
    const devices =
      r.type === "door" ? (r.devices ?? []) : [...new Set((r.floorGroups ?? []).map((fg) => readerOf.get(fg)!))];
    for (const d of devices) doorLinks.push([d, set]);
  }
  const members: string[][] = [];
  for (const h of snapshot.holders) for (const g of h.groups) members.push([h.id, g]);
  await enforcer.addPolicies(policies);
  await enforcer.addGroupingPolicies(members);
  await enforcer.addNamedGroupingPolicies("g2", doorLinks);
  return {
    enforcer,
    policies: policies.length,
    links: members.length + doorLinks.length,
    args: (input) => [
      input.holderId ?? "(unknown credential)",
      input.deviceId,
      {
        enabled: input.enabled,
        local: input.local,
        from: input.from,
        to: input.to,
        wd: input.wd,
        pwd: input.pwd,
        tod: input.tod,
        day: input.day,
        pday: input.pday,
        factor: input.factor,
        accepts: byFactor(input.deviceAccepts),
      },
    ],
  };
}
