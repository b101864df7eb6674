// The hot path: one scan → one decision, SPEC §3 step by step. No luxon/Intl, no string building,
// no closures and no allocation beyond the decision object (none when the caller passes `out`):
// every table it reads was built by compileSnapshot. `decide` never throws.
import {
  AMBIGUOUS,
  type CompiledDevice,
  type CompiledFormat,
  type CompiledHolder,
  type CompiledSystem,
  type DecodeScratch,
  FC_POLICY,
  decodeInto,
  floorsFor,
  offsetAt,
  unionFloors,
  windowContains,
} from "../compile/index.js";
import { type Decision, type Outcome, type Reason, _lastChecked, checkRequest } from "../model/index.js";

/** The shared empty `floors` of every non-elevator decision. */
const NO_FLOORS: readonly string[] = Object.freeze([]);
/** "No such rule" in rank minimums. */
export const NONE = 0x7fffffff;

export const MODE_NORMAL = 0;
const MODE_ECARD = 1;
const MODE_24X7 = 2;
const MODE_ANY = 3;

const KIND_NONE = 0;
const KIND_WIEGAND = 1;
const KIND_NUMBER = 2;
const KIND_MOBILE = 3;

// decide is synchronous and not re-entrant, so one module-level scratch object serves every call.
const SCRATCH: DecodeScratch = { fc_: -1, cn_: -1, parityOk_: true };

interface RequestView {
  deviceId: string;
  input?: string;
  pin?: string | null;
  credential?: {
    wiegand?: string;
    credentialNumber?: number;
    facilityCode?: number | null;
    mobile?: string;
    credentialId?: string;
  } | null;
  node?: { online: boolean; offlineSeconds?: number; timeKnown?: boolean } | null;
}

/** A fresh decision object with every field, in SPEC order. */
export function newDecision(): Decision {
  return {
    outcome: "denied",
    topic: "device.request.denied",
    reason: "badRequest",
    holderId: null,
    credentialId: null,
    activeRuleId: null,
    duress: false,
    floors: NO_FLOORS,
    facilityCode: null,
    credentialNumber: null,
  };
}

function fill(
  d: Decision,
  outcome: Outcome,
  reason: Reason,
  holder: CompiledHolder | null,
  credentialId: string | null,
  activeRuleId: string | null,
  duress: boolean,
  floors: readonly string[],
  fc: number,
  cn: number,
): Decision {
  d.outcome = outcome;
  d.topic = outcome === "allowed" ? "device.request.allowed" : outcome === "denied" ? "device.request.denied" : "device.request.unknown";
  d.reason = reason;
  d.holderId = holder === null ? null : holder.id;
  d.credentialId = credentialId;
  d.activeRuleId = activeRuleId;
  d.duress = duress;
  d.floors = floors;
  d.facilityCode = fc < 0 ? null : fc;
  d.credentialNumber = cn < 0 ? null : cn;
  return d;
}

function inputBit(input: string | undefined): number {
  if (input === undefined || input === "wiegand") return 1;
  return input === "unencryptedOsdp" ? 2 : 4;
}

function firstFormat(formats: readonly CompiledFormat[], length: number): CompiledFormat | null {
  for (let i = 0; i < formats.length; i++) {
    const f = formats[i]!;
    if (f.min_ <= length && length <= f.max_) return f;
  }
  return null;
}

/**
 * Decides one scan against a compiled system (SPEC §3).
 * @param sys - from compileSnapshot.
 * @param request - any value; a malformed one is `denied/badRequest`.
 * @param out - optional decision object to fill instead of allocating one.
 */
export function decide(sys: CompiledSystem, request: unknown, out?: Decision): Decision {
  const d = out ?? newDecision();
  if (!checkRequest(request, null)) return fill(d, "denied", "badRequest", null, null, null, false, NO_FLOORS, -1, -1);
  const at = _lastChecked.at_;
  const r = request as RequestView;

  // 1. Device.
  const device = sys.deviceIndex_.get(r.deviceId);
  if (device === undefined) return fill(d, "denied", "unknownDevice", null, null, null, false, NO_FLOORS, -1, -1);
  const input = inputBit(r.input);
  if ((device.inputMask_ & input) === 0) return fill(d, "denied", "inputTypeNotAllowed", null, null, null, false, NO_FLOORS, -1, -1);
  const node = device.node_;

  // 2. Read.
  const cred = r.credential;
  let kind = KIND_NONE;
  let fc = -1;
  let cn = -1;
  let format: CompiledFormat | null = null;
  if (cred !== undefined && cred !== null) {
    if (cred.wiegand !== undefined) {
      kind = KIND_WIEGAND;
      format = firstFormat(node.formats_, cred.wiegand.length);
      if (format === null) return fill(d, "unknown", "unknownCardFormat", null, null, null, false, NO_FLOORS, -1, -1);
      decodeInto(format, cred.wiegand, SCRATCH);
      fc = SCRATCH.fc_;
      cn = SCRATCH.cn_;
      if (format.enforceParity_ && !SCRATCH.parityOk_) return fill(d, "denied", "parityError", null, null, null, false, NO_FLOORS, fc, cn);
    } else if (cred.credentialNumber !== undefined) {
      kind = KIND_NUMBER;
      format = node.formats_[0]!;
      cn = cred.credentialNumber;
      fc = cred.facilityCode === undefined || cred.facilityCode === null ? -1 : cred.facilityCode;
    } else kind = KIND_MOBILE;
    if (format !== null && format.fcPolicy_ === FC_POLICY.FILTER_LIST && (fc < 0 || !format.allowedFc_.has(fc)))
      return fill(d, "denied", "facilityCodeNotAllowed", null, null, null, false, NO_FLOORS, fc, cn);
  }
  const isCard = kind === KIND_WIEGAND || kind === KIND_NUMBER;

  // 3. Fallback modes.
  let mode = MODE_NORMAL;
  const ns = r.node;
  if (ns !== undefined && ns !== null && !ns.online) {
    if (ns.timeKnown !== false) mode = (ns.offlineSeconds as number) <= node.killTimer_ ? MODE_NORMAL : MODE_ECARD;
    else mode = node.offlinePolicy_ === 0 ? MODE_ECARD : node.offlinePolicy_ === 1 ? MODE_24X7 : MODE_ANY;
  }
  if (mode !== MODE_NORMAL) {
    if (isCard && cn >= 0 && node.ecards_.has(cn)) return fill(d, "allowed", "ecard", null, null, null, false, NO_FLOORS, fc, cn);
    if (mode === MODE_ECARD) return fill(d, "denied", "offlineEcardOnly", null, null, null, false, NO_FLOORS, fc, cn);
  }

  // 4. Credential.
  const pin = r.pin === undefined ? null : r.pin;
  let holder: CompiledHolder;
  let credentialId: string | null = null;
  let pending = false;
  if (isCard) {
    const c = cn < 0 ? undefined : sys.cardByNumber_.get(cn);
    if (c === undefined) return fill(d, "unknown", "unknownCredential", null, null, null, false, NO_FLOORS, fc, cn);
    if ((format as CompiledFormat).fcPolicy_ === FC_POLICY.ENFORCED && c.fc_ !== fc)
      return fill(d, "unknown", "facilityCodeMismatch", null, null, null, false, NO_FLOORS, fc, cn);
    holder = c.holder_;
    credentialId = c.id;
  } else if (kind === KIND_MOBILE) {
    const m = cred as { mobile: string; credentialId: string };
    const bit = m.mobile === "touch" ? 2 : 4;
    const c = sys.digitalById_.get(m.credentialId);
    if (c === undefined || (c.types_ & bit) === 0) return fill(d, "unknown", "unknownCredential", null, null, null, false, NO_FLOORS, -1, -1);
    holder = c.holder_;
    credentialId = c.id;
    pending = c.pending_;
    if (!pending && bit === 2 && !device.ble_) {
      return fill(d, "denied", "bleNotSupported", holder, credentialId, null, pin !== null && holder.duressPin_ === pin, NO_FLOORS, -1, -1);
    }
  } else {
    const owner = sys.pinOwner_.get(pin as string);
    if (owner === undefined) return fill(d, "unknown", "unknownPin", null, null, null, false, NO_FLOORS, -1, -1);
    if (owner === AMBIGUOUS) return fill(d, "denied", "ambiguousPin", null, null, null, false, NO_FLOORS, -1, -1);
    holder = sys.holders_[owner]!;
  }
  const duress = pin !== null && holder.duressPin_ === pin;
  if (pending) return fill(d, "denied", "credentialPending", holder, credentialId, null, duress, NO_FLOORS, -1, -1);
  if (device.secured_ && kind !== KIND_MOBILE && input !== 4)
    return fill(d, "denied", "insecureRead", holder, credentialId, null, duress, NO_FLOORS, fc, cn);

  // 5. Holder.
  if (!holder.enabled_) return fill(d, "denied", "holderDisabled", holder, credentialId, null, duress, NO_FLOORS, fc, cn);
  const timeKnown = mode === MODE_NORMAL;
  let local = 0;
  if (timeKnown) {
    local = at + offsetAt(node.zone_, at);
    if (local < holder.activeFrom_) return fill(d, "denied", "holderNotYetActive", holder, credentialId, null, duress, NO_FLOORS, fc, cn);
    if (local >= holder.expiresAt_) return fill(d, "denied", "holderExpired", holder, credentialId, null, duress, NO_FLOORS, fc, cn);
  }

  // 6–8. Rules, authentication policy, floors.
  return decideRules(sys, d, device, holder, credentialId, kind !== KIND_NONE, pin, duress, mode, local, fc, cn);
}

/** What the rules applicable to one holder at one device come to (SPEC §3 steps 6–7). */
export interface RuleOutcome {
  /** Smallest rank of an applicable deny rule, of an applicable allow rule, of an accepting allow rule; NONE if none. */
  minDeny_: number;
  minAllow_: number;
  minAccepted_: number;
  /** Elevators: floor groups reached through accepting rules (mask, or wideHits_ beyond 31). */
  mask_: number;
  wideHits_: Set<number> | null;
}

/** A fresh RuleOutcome; decide keeps one in module scope, rsop one per call. */
export function newRuleOutcome(): RuleOutcome {
  return { minDeny_: NONE, minAllow_: NONE, minAccepted_: NONE, mask_: 0, wideHits_: null };
}

/**
 * Evaluates the holder's rules at a device into `out`: windows (when `mode` is normal, at `local`),
 * deny rules, the 24x7 filter, and which allow rules accept `factor` (a policyMask bit).
 */
export function evaluateRules(sys: CompiledSystem, device: CompiledDevice, holder: CompiledHolder, factor: number, mode: number, local: number, out: RuleOutcome): void {
  const rules = sys.rules_;
  const groups = holder.groups_;
  const elevator = device.elevator_;
  let minDeny = NONE;
  let minAllow = NONE;
  let minAccepted = NONE;
  let mask = 0;
  let wideHits: Set<number> | null = null;
  for (let gi = 0; gi < groups.length; gi++) {
    const pairs = device.rulesByGroup_.get(groups[gi]!);
    if (pairs === undefined) continue;
    for (let k = 0; k < pairs.length; k += 2) {
      const rank = pairs[k]!;
      const rule = rules[rank]!;
      if (mode === MODE_NORMAL && !windowContains(rule.window_, local)) continue;
      if (!rule.allow_) {
        if (rank < minDeny) minDeny = rank;
        continue;
      }
      if (mode === MODE_24X7 && !rule.is24x7_) continue;
      if (rank < minAllow) minAllow = rank;
      if ((rule.policy_ & device.policy_ & factor) === 0) continue;
      if (rank < minAccepted) minAccepted = rank;
      if (!elevator) continue;
      if (!device.wide_) mask |= pairs[k + 1]!;
      else {
        // More than 31 floor groups at one reader: rare, so a Set is acceptable here.
        wideHits ??= new Set<number>();
        const ks = device.wideSets_[pairs[k + 1]!]!;
        for (let j = 0; j < ks.length; j++) wideHits.add(ks[j]!);
      }
    }
  }
  out.minDeny_ = minDeny;
  out.minAllow_ = minAllow;
  out.minAccepted_ = minAccepted;
  out.mask_ = mask;
  out.wideHits_ = wideHits;
}

/** The sorted floors an accepted outcome enables at a device: interned per floor-group mask; [] at doors. */
export function floorsOf(device: CompiledDevice, outcome: RuleOutcome): readonly string[] {
  if (!device.elevator_) return NO_FLOORS;
  return outcome.wideHits_ !== null ? unionFloors(device, outcome.wideHits_) : floorsFor(device, outcome.mask_);
}

const RULES = newRuleOutcome();

function decideRules(
  sys: CompiledSystem,
  d: Decision,
  device: CompiledDevice,
  holder: CompiledHolder,
  credentialId: string | null,
  hasCard: boolean,
  pin: string | null,
  duress: boolean,
  mode: number,
  local: number,
  fc: number,
  cn: number,
): Decision {
  const pinOk = pin !== null && (pin === holder.pin_ || pin === holder.duressPin_);
  // Factor combinations as in policyMask: card 1, PIN 2, card + PIN 4. PIN alone is always correct.
  const factor = hasCard ? (pinOk ? 4 : 1) : 2;
  evaluateRules(sys, device, holder, factor, mode, local, RULES);
  const rules = sys.rules_;
  if (RULES.minDeny_ !== NONE) return fill(d, "denied", "deniedByRule", holder, credentialId, rules[RULES.minDeny_]!.id, duress, NO_FLOORS, fc, cn);
  if (RULES.minAllow_ === NONE)
    return fill(d, "denied", mode === MODE_24X7 ? "offlineNot24x7" : "noActiveRule", holder, credentialId, null, duress, NO_FLOORS, fc, cn);
  if (RULES.minAccepted_ !== NONE) {
    const reason: Reason = mode === MODE_NORMAL ? "allowed" : mode === MODE_24X7 ? "offline24x7" : "offlineAnySchedule";
    return fill(d, "allowed", reason, holder, credentialId, rules[RULES.minAccepted_]!.id, duress, floorsOf(device, RULES), fc, cn);
  }
  // E11: the reason comes from the smallest-id applicable allow rule.
  const reason: Reason = pin !== null && !pinOk ? "wrongPin" : hasCard ? "pinRequired" : "cardRequired";
  return fill(d, "denied", reason, holder, credentialId, rules[RULES.minAllow_]!.id, duress, NO_FLOORS, fc, cn);
}
