// The building block behind RSOP, who-can-access and access windows: what decide would answer for
// a scan by a known holder at a device, node online, presenting a credential the device accepts,
// and the holder's PIN whenever a policy asks for one (docs/semantics.md Q1).
import {
  type CompiledDevice,
  type CompiledSystem,
  HOLDER_STRIDE,
  H_FROM,
  H_GROUP_FROM,
  H_GROUP_TO_ENABLED,
  H_TO,
  holderGroupFrom,
  holderGroupTo,
  offsetAt,
} from "../compile/index.js";
import { MS_PER_DAY } from "../model/index.js";
import { MODE_NORMAL, NONE, type RuleOutcome, evaluateRules, minRankReachingAt } from "./ruleWalk.js";

/** Card alone, then card + PIN: the factor combinations of policyMask. */
const CARD = 1;
const CARD_AND_PIN = 4;

export interface ScanAccess {
  readonly allowed: boolean;
  /** Rank of the deciding rule (deny, accepting allow, or the E11 allow rule), NONE when none decided. */
  readonly rank: number;
  /** The factor combination presented (card, or card + PIN). */
  readonly factor: number;
  /** Local wall time of the scan at the device's node (local epoch ms). */
  readonly local: number;
}

/**
 * Evaluation steps 5–8 for a holder who presents a credential the device accepts: card alone; if
 * that is refused for want of a PIN and the holder has one, card and PIN. `rules` receives the rule
 * outcome of the presented factors (floors for elevators). `h` is the holder's index.
 */
export function scanAccess(
  sys: CompiledSystem,
  device: CompiledDevice,
  h: number,
  at: number,
  rules: RuleOutcome,
): ScanAccess {
  const local = at + offsetAt(device.node_.zone_, at);
  const hd = sys.holderData_;
  const hb = h * HOLDER_STRIDE;
  const groupsAndEnabled = hd[hb + H_GROUP_TO_ENABLED]!;
  if (groupsAndEnabled % 2 === 0 || local < hd[hb + H_FROM]! || local >= hd[hb + H_TO]!)
    return { allowed: false, rank: NONE, factor: CARD, local };
  const day = Math.floor(local / MS_PER_DAY);
  const tod = local - day * MS_PER_DAY;
  const from = hd[hb + H_GROUP_FROM]!;
  const to = (groupsAndEnabled - 1) / 2;
  evaluateRules(sys, device, from, to, CARD, MODE_NORMAL, day, tod, rules);
  if (rules.minDeny_ !== NONE) return { allowed: false, rank: rules.minDeny_, factor: CARD, local };
  // No allow rule applies: the rule set aside by the threat level names the denial, as decide's does (TL2).
  if (rules.minAllow_ === NONE) return { allowed: false, rank: rules.minThreat_, factor: CARD, local };
  if (rules.minAccepted_ !== NONE) return { allowed: true, rank: rules.minAccepted_, factor: CARD, local };
  // Every policy accepts card + PIN, so with the PIN the smallest applicable allow rule decides.
  const holder = sys.holders_[h]!;
  if ((holder.pin ?? holder.duressPin) === null) return { allowed: false, rank: rules.minAllow_, factor: CARD, local };
  evaluateRules(sys, device, from, to, CARD_AND_PIN, MODE_NORMAL, day, tod, rules);
  return { allowed: true, rank: rules.minAccepted_, factor: CARD_AND_PIN, local };
}

/** True when local floor group `k` of an elevator reader is among those `rules` reached. */
export function reachesFloorGroup(device: CompiledDevice, rules: RuleOutcome, k: number): boolean {
  if (device.wide_) return rules.wideHits_ !== null && rules.wideHits_.has(k);
  return ((rules.mask_ >> k) & 1) === 1;
}

/**
 * The smallest rank among the holder's accepting allow rules that reach local floor group `k` of an
 * elevator reader (windows at `local`, factors `factor`); NONE when none does. `h` is the holder's index.
 */
export function minRankReaching(
  sys: CompiledSystem,
  device: CompiledDevice,
  h: number,
  factor: number,
  local: number,
  k: number,
): number {
  const day = Math.floor(local / MS_PER_DAY);
  const tod = local - day * MS_PER_DAY;
  return minRankReachingAt(sys, device, holderGroupFrom(sys, h), holderGroupTo(sys, h), factor, day, tod, k);
}
