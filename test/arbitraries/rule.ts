// Rules: door and elevator, allow and deny, enabled or not, every authentication policy, with a
// window from window.ts. Ids come from a pool whose JavaScript string order differs from the order
// of the rules in the snapshot, so "smallest id" is really exercised.
import fc from "fast-check";
import { type Policy, policyArb } from "./device.js";
import { type WindowInput, windowArb } from "./window.js";

/** Rule ids in a deliberately confusing order: "R5" < "a" < "r01" < "r1" < "r10" < "r2" < "r3" < "ré". */
export const RULE_IDS = ["r2", "r10", "r1", "R5", "a", "r01", "r3", "ré", "r9", "r4"] as const;

export interface RuleSpec {
  readonly idPick: number;
  readonly elevator: boolean;
  readonly groupPick: number;
  readonly deviceMask: number;
  /** Elevator rules: floor groups by index (mod their count). */
  readonly floorGroupPicks: number[];
  readonly window: WindowInput;
  readonly allow: boolean | undefined;
  readonly authenticationPolicy: Policy | null | undefined;
  readonly enabled: boolean | undefined;
  readonly named: boolean;
}

export const ruleSpecArb: fc.Arbitrary<RuleSpec> = fc.record({
  idPick: fc.nat(RULE_IDS.length - 1),
  elevator: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  groupPick: fc.nat(),
  deviceMask: fc.nat(15),
  floorGroupPicks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
  window: windowArb,
  allow: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(undefined, true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
  authenticationPolicy: policyArb,
  enabled: fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(undefined, true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
  named: fc.boolean(),
});
