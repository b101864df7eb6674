// The hot path: one scan → one decision, SPEC §3 step by step. No luxon/Intl, no string building,
// no closures and no allocation beyond the decision object (none when the caller passes `out`):
// every table it reads was built by compileSnapshot. `decide` never throws.
import {
  AMBIGUOUS,
  type CompiledDevice,
  type CompiledFormat,
  type CompiledSystem,
  type DecodeScratch,
  FC_POLICY,
  HOLDER_STRIDE,
  H_FROM,
  H_GROUP_FROM,
  H_GROUP_TO_ENABLED,
  H_TO,
  RF_24X7,
  RF_ALLOW,
  RULE_STRIDE,
  R_FLAGS,
  R_POLICY,
  decodeInto,
  findCard,
  findSlot,
  floorsFor,
  ruleOpen,
  unionFloors,
  weekdayOf,
} from "../compile/index.js";
import { type Decision, MS_PER_DAY, type Outcome, type Reason, RequestFields, checkRequest } from "../model/index.js";

/** The shared empty `floors` of every non-elevator decision. */
const NO_FLOORS: readonly string[] = Object.freeze([]);
/** "No such rule" in rank minimums. */
export const NONE = 0x7fffffff;

export const MODE_NORMAL = 0;
export const MODE_ECARD = 1;
export const MODE_24X7 = 2;
export const MODE_ANY = 3;

const KIND_NONE = 0;
const KIND_WIEGAND = 1;
const KIND_NUMBER = 2;
const KIND_MOBILE = 3;

// Module-level scratch, written only after checkRequest has read every field of the request (each
// once, into REQUEST): from then on decide runs no code of the caller's, so a getter that calls
// decide again (re-entrancy) finishes before the outer call writes any of it.
const SCRATCH: DecodeScratch = { fc_: -1, cn_: -1, parityOk_: true };
const REQUEST = new RequestFields();

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
  holderId: string | null,
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
  d.holderId = holderId;
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
 * What decide looked at, told as it goes (explain.ts builds the trace from it). decide calls a sink
 * only when one is given, with values it already holds: without one, each call site costs one
 * `undefined` test and nothing else (no allocation, no closure, no string; bench/decide.bench.ts).
 */
export interface DecideTrace {
  /** Step 1: the device found for the request's id (undefined: unknown). */
  device_(device: CompiledDevice | undefined): void;
  /** Step 2: the format chosen (null: none fits), the decoded fields (-1 none, -2 overflow) and the parity/marker check. */
  read_(format: CompiledFormat | null, fc: number, cn: number, parityOk: boolean): void;
  /** Step 3: the fallback mode (MODE_*). */
  mode_(mode: number): void;
  /** Step 4, card reads: the card table slot of the decoded number (-1: none). */
  card_(slot: number): void;
  /** Step 4: the holder identified (index into `holders_`). */
  holder_(h: number): void;
  /** Step 5: the instant and its local wall time (local epoch ms) the windows and holder dates are read at. */
  time_(at: number, local: number): void;
  /** Steps 6–7: the rule evaluation decide ran, with its arguments and outcome. */
  rules_(device: CompiledDevice, groupFrom: number, groupTo: number, factor: number, mode: number, day: number, tod: number, outcome: RuleOutcome): void;
}

/**
 * Decides one scan against a compiled system (SPEC §3).
 * @param sys - from compileSnapshot.
 * @param request - any value; a malformed one is `denied/badRequest`.
 * @param out - optional decision object to fill instead of allocating one.
 * @param trace - optional sink told what each step looked at (explain); absent on the hot path.
 */
export function decide(sys: CompiledSystem, request: unknown, out?: Decision, trace?: DecideTrace): Decision {
  const d = out ?? newDecision();
  const r = REQUEST;
  if (!checkRequest(request, null, r)) return fill(d, "denied", "badRequest", null, null, null, false, NO_FLOORS, -1, -1);
  const at = r.instant_[0]!;

  // 1. Device.
  const device = sys.deviceIndex_.get(r.deviceId as string);
  if (trace !== undefined) trace.device_(device);
  if (device === undefined) return fill(d, "denied", "unknownDevice", null, null, null, false, NO_FLOORS, -1, -1);
  const input = inputBit(r.input as string | undefined);
  if ((device.inputMask_ & input) === 0) return fill(d, "denied", "inputTypeNotAllowed", null, null, null, false, NO_FLOORS, -1, -1);
  const node = device.node_;

  // 2. Read.
  let kind = KIND_NONE;
  let fc = -1;
  let cn = -1;
  let format: CompiledFormat | null = null;
  if (r.hasCredential) {
    if (r.wiegand !== undefined) {
      kind = KIND_WIEGAND;
      const length = (r.wiegand as string).length;
      format = firstFormat(node.formats_, length);
      if (format === null) {
        if (trace !== undefined) trace.read_(null, -1, -1, true);
        return fill(d, "unknown", "unknownCardFormat", null, null, null, false, NO_FLOORS, -1, -1);
      }
      decodeInto(format, r.bits_, length, SCRATCH);
      fc = SCRATCH.fc_;
      cn = SCRATCH.cn_;
      if (trace !== undefined) trace.read_(format, fc, cn, SCRATCH.parityOk_);
      if (format.enforceParity_ && !SCRATCH.parityOk_) return fill(d, "denied", "parityError", null, null, null, false, NO_FLOORS, fc, cn);
    } else if (r.credentialNumber !== undefined) {
      kind = KIND_NUMBER;
      format = node.formats_[0]!;
      cn = r.credentialNumber as number;
      fc = r.facilityCode === undefined || r.facilityCode === null ? -1 : (r.facilityCode as number);
      if (trace !== undefined) trace.read_(format, fc, cn, true);
    } else kind = KIND_MOBILE;
    if (format !== null && format.fcPolicy_ === FC_POLICY.FILTER_LIST && (fc < 0 || !format.allowedFc_.has(fc)))
      return fill(d, "denied", "facilityCodeNotAllowed", null, null, null, false, NO_FLOORS, fc, cn);
  }
  const isCard = kind === KIND_WIEGAND || kind === KIND_NUMBER;

  // 3. Fallback modes.
  let mode = MODE_NORMAL;
  if (r.hasNode && r.online === false) {
    if (r.timeKnown !== false) mode = (r.offlineSeconds as number) <= node.killTimer_ ? MODE_NORMAL : MODE_ECARD;
    else mode = node.offlinePolicy_ === 0 ? MODE_ECARD : node.offlinePolicy_ === 1 ? MODE_24X7 : MODE_ANY;
  }
  if (trace !== undefined) trace.mode_(mode);
  if (mode !== MODE_NORMAL) {
    if (isCard && cn >= 0 && node.ecards_.has(cn)) return fill(d, "allowed", "ecard", null, null, null, false, device.ecardFloors_, fc, cn);
    if (mode === MODE_ECARD) return fill(d, "denied", "offlineEcardOnly", null, null, null, false, NO_FLOORS, fc, cn);
  }

  // 4. Credential. The holder is an index; its hot fields are one record of `holderData_`.
  const pin = r.pin === undefined ? null : (r.pin as string | null);
  let h: number;
  let credentialId: string | null = null;
  let holderId: string | null = null;
  let pending = false;
  if (isCard) {
    const c = cn < 0 ? -1 : findCard(sys, cn);
    if (trace !== undefined) trace.card_(c);
    if (c < 0) return fill(d, "unknown", "unknownCredential", null, null, null, false, NO_FLOORS, fc, cn);
    const table = sys.cardTable_;
    if ((format as CompiledFormat).fcPolicy_ === FC_POLICY.ENFORCED && table[c + 1] !== fc)
      return fill(d, "unknown", "facilityCodeMismatch", null, null, null, false, NO_FLOORS, fc, cn);
    h = table[c + 2]! | 0;
    if (trace !== undefined) trace.holder_(h);
    const ids = table[c + 3]! | 0;
    credentialId = sys.cardIds_[ids]!;
    holderId = sys.cardIds_[ids + 1]!;
  } else if (kind === KIND_MOBILE) {
    const bit = r.mobile === "touch" ? 2 : 4;
    const c = sys.digitalById_.get(r.credentialId as string);
    if (c === undefined || (c.types_ & bit) === 0) return fill(d, "unknown", "unknownCredential", null, null, null, false, NO_FLOORS, -1, -1);
    h = c.holder_;
    if (trace !== undefined) trace.holder_(h);
    credentialId = c.id;
    pending = c.pending_;
    if (!pending && bit === 2 && !device.ble_) {
      const holder = sys.holders_[h]!;
      return fill(d, "denied", "bleNotSupported", holder.id, credentialId, null, pin !== null && holder.duressPin_ === pin, NO_FLOORS, -1, -1);
    }
  } else {
    const owner = sys.pinOwner_.get(pin as string);
    if (owner === undefined) return fill(d, "unknown", "unknownPin", null, null, null, false, NO_FLOORS, -1, -1);
    if (owner === AMBIGUOUS) return fill(d, "denied", "ambiguousPin", null, null, null, false, NO_FLOORS, -1, -1);
    h = owner;
    if (trace !== undefined) trace.holder_(h);
  }
  if (holderId === null) holderId = sys.holders_[h]!.id;
  const duress = pin !== null && sys.holders_[h]!.duressPin_ === pin;
  if (pending) return fill(d, "denied", "credentialPending", holderId, credentialId, null, duress, NO_FLOORS, -1, -1);
  if (device.secured_ && kind !== KIND_MOBILE && input !== 4)
    return fill(d, "denied", "insecureRead", holderId, credentialId, null, duress, NO_FLOORS, fc, cn);

  // 5. Holder.
  const hd = sys.holderData_;
  const hb = h * HOLDER_STRIDE;
  const groupsAndEnabled = hd[hb + H_GROUP_TO_ENABLED]! | 0;
  if ((groupsAndEnabled & 1) === 0) return fill(d, "denied", "holderDisabled", holderId, credentialId, null, duress, NO_FLOORS, fc, cn);
  // Local day and time of day as small integers (ms of day < 2^27): no double leaves this function.
  let day = 0;
  let tod = 0;
  if (mode === MODE_NORMAL) {
    // offsetAt, inlined: the offset in force at `at` (binary search over the zone's transitions).
    const starts = node.zone_.starts_;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    const local = at + node.zone_.offsets_[lo]!;
    if (trace !== undefined) trace.time_(at, local);
    if (local < hd[hb + H_FROM]!) return fill(d, "denied", "holderNotYetActive", holderId, credentialId, null, duress, NO_FLOORS, fc, cn);
    if (local >= hd[hb + H_TO]!) return fill(d, "denied", "holderExpired", holderId, credentialId, null, duress, NO_FLOORS, fc, cn);
    day = Math.floor(local / MS_PER_DAY);
    tod = local - day * MS_PER_DAY;
  }

  // 6–8. Rules, authentication policy, floors.
  const pinOk = pin !== null && (pin === sys.holders_[h]!.pin_ || duress);
  // Factor combinations as in policyMask: card 1, PIN 2, card + PIN 4. PIN alone is always correct.
  const factor = kind !== KIND_NONE ? (pinOk ? 4 : 1) : 2;
  evaluateRules(sys, device, hd[hb + H_GROUP_FROM]! | 0, groupsAndEnabled >> 1, factor, mode, day, tod, RULES);
  if (trace !== undefined) trace.rules_(device, hd[hb + H_GROUP_FROM]! | 0, groupsAndEnabled >> 1, factor, mode, day, tod, RULES);
  const ids = sys.ruleIds_;
  if (RULES.minDeny_ !== NONE) return fill(d, "denied", "deniedByRule", holderId, credentialId, ids[RULES.minDeny_]!, duress, NO_FLOORS, fc, cn);
  if (RULES.minAllow_ === NONE)
    return fill(d, "denied", mode === MODE_24X7 ? "offlineNot24x7" : "noActiveRule", holderId, credentialId, null, duress, NO_FLOORS, fc, cn);
  if (RULES.minAccepted_ !== NONE) {
    const reason: Reason = mode === MODE_NORMAL ? "allowed" : mode === MODE_24X7 ? "offline24x7" : "offlineAnySchedule";
    return fill(d, "allowed", reason, holderId, credentialId, ids[RULES.minAccepted_]!, duress, floorsOf(device, RULES), fc, cn);
  }
  // E11: the reason comes from the smallest-id applicable allow rule.
  const reason: Reason = pin !== null && !pinOk ? "wrongPin" : kind !== KIND_NONE ? "pinRequired" : "cardRequired";
  return fill(d, "denied", reason, holderId, credentialId, ids[RULES.minAllow_]!, duress, NO_FLOORS, fc, cn);
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
 * Evaluates the rules of a holder's groups (`holderGroups_[groupFrom … groupTo - 1]`) at a device
 * into `out`: windows (when `mode` is normal, at local day `day`, `tod` ms into it), deny rules, the
 * 24x7 filter, and which allow rules accept `factor` (a policyMask bit).
 */
export function evaluateRules(
  sys: CompiledSystem,
  device: CompiledDevice,
  groupFrom: number,
  groupTo: number,
  factor: number,
  mode: number,
  day: number,
  tod: number,
  out: RuleOutcome,
): void {
  const data = sys.ruleData_;
  const slotPairs = device.slotPairs_;
  const pairs = device.pairs_;
  const groups = sys.holderGroups_;
  const elevator = device.elevator_;
  const accepts = device.policy_ & factor;
  const wd = weekdayOf(day);
  let minDeny = NONE;
  let minAllow = NONE;
  let minAccepted = NONE;
  let mask = 0;
  let wideHits: Set<number> | null = null;
  const last = device.slotGroup_.length === 0 ? 0 : groupTo;
  for (let gi = groupFrom; gi < last; gi++) {
    const slot = findSlot(device, groups[gi]!);
    if (slot < 0) continue;
    const end = slotPairs[slot + 1]!;
    for (let k = slotPairs[slot]!; k < end; k += 2) {
      const rank = pairs[k]!;
      const base = rank * RULE_STRIDE;
      if (mode === MODE_NORMAL && !ruleOpen(data, base, day, wd, tod)) continue;
      const flags = data[base + R_FLAGS]!;
      if ((flags & RF_ALLOW) === 0) {
        if (rank < minDeny) minDeny = rank;
        continue;
      }
      if (mode === MODE_24X7 && (flags & RF_24X7) === 0) continue;
      if (rank < minAllow) minAllow = rank;
      if ((data[base + R_POLICY]! & accepts) === 0) continue;
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
