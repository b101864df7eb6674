// The metamorphic property's extra rule: it names a new group that nobody belongs to, so it can
// match no scan, whatever its window, devices, policy or id (its ids sort before and after the
// generated ones, so a wrongly applied rule would also win "smallest id").
import fc from "fast-check";
import { type Policy, policyArb } from "./device.js";
import { type WindowInput, windowArb } from "./window.js";

export interface NoopRuleSpec {
  readonly id: string;
  readonly position: number;
  readonly elevator: boolean;
  readonly mask: number;
  readonly window: WindowInput;
  readonly allow: boolean;
  readonly authenticationPolicy: Policy | null | undefined;
  readonly enabled: boolean;
}

export const noopRuleSpecArb: fc.Arbitrary<NoopRuleSpec> = fc.record({
  id: fc.constantFrom("!", "0", "A", "r0", "r99", "zz"),
  position: fc.nat(),
  elevator: fc.boolean(),
  mask: fc.nat(15),
  window: fc.oneof(
    windowArb,
    fc.constant<WindowInput>({
      startTime: "00:00:00",
      stopTime: "24:00:00",
      recurring: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"],
    }),
  ),
  allow: fc.boolean(),
  authenticationPolicy: policyArb,
  enabled: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
});

type Json = Record<string, any>;

/** A copy of `snapshot` with an empty group and a rule for it that reaches real devices. */
export function addNoopRule(snapshot: unknown, spec: NoopRuleSpec): unknown {
  const s = snapshot as Json;
  const groups = [...(s.groups ?? []), { id: "g-nobody", name: "Nobody" }];
  const floorGroups: Json[] = s.floorGroups ?? [];
  const doors: string[] = (s.devices ?? [])
    .filter((d: Json) => !["elevatorReader", "additionalElevatorReader", "floorRelay"].includes(d.type))
    .map((d: Json) => d.id);
  const elevator = spec.elevator && floorGroups.length > 0;
  const rule: Json = {
    id: spec.id,
    type: elevator ? "elevator" : "door",
    groupId: "g-nobody",
    ...spec.window,
    enabled: spec.enabled,
  };
  if (elevator) rule.floorGroups = floorGroups.filter((_, i) => (spec.mask >> i) & 1).map((f) => f.id);
  else {
    rule.devices = doors.filter((_, i) => (spec.mask >> i) & 1);
    rule.allow = spec.allow;
  }
  if (spec.authenticationPolicy !== undefined) rule.authenticationPolicy = spec.authenticationPolicy;
  const rules = [...(s.rules ?? [])];
  rules.splice(spec.position % (rules.length + 1), 0, rule);
  return { ...s, groups, rules };
}
