// The hot path: one scan → one decision, the evaluation order step by step (docs/semantics.md E lines). No luxon/Intl, no string building,
// no closures and no allocation beyond the decision object (none when the caller passes `out`):
// every table it reads was built by compileSnapshot. `decide` never throws. decide parses and
// checks the request and finds the device; decideCore, from the input check on, is shared with
// reader handles and columnar batches (reader.ts), so that all three walk the rules the same way:
// through evaluateRules (ruleWalk.ts), the one rule walk of the evaluate layer.
import {
  AMBIGUOUS,
  AP_HARD,
  AP_NONE,
  type CompiledDevice,
  type CompiledFormat,
  type CompiledNode,
  type CompiledSystem,
  type DecodeScratch,
  type WideCard,
  FC_POLICY,
  HOLDER_STRIDE,
  H_FROM,
  H_GROUP_FROM,
  H_GROUP_TO_ENABLED,
  H_TO,
  WIDE,
  decodeInto,
  findCard,
  offsetAt,
} from "../compile/index.js";
import {
  type Decision,
  MS_PER_DAY,
  OUTCOME_CODES,
  type Outcome,
  REASONS,
  type Reason,
  RequestFields,
  type Topic,
  checkRequest,
  die,
  outcomeOf,
} from "../model/index.js";
import {
  MODE_24X7,
  MODE_ANY,
  MODE_ECARD,
  MODE_NORMAL,
  NONE,
  NO_FLOORS,
  type RuleOutcome,
  type RuleSink,
  evaluateRules,
  floorsOf,
  newRuleOutcome,
} from "./ruleWalk.js";
import type { AccessStateView } from "./accessState.js";

/** The credential a request presents (decideCore's `kind`). */
export const KIND_NONE = 0;
export const KIND_WIEGAND = 1;
export const KIND_NUMBER = 2;
export const KIND_MOBILE = 3;

// Module-level scratch, written only after checkRequest has read every field of the request (each
// once, into REQUEST): from then on decide runs no code of the caller's, so a getter that calls
// decide again (re-entrancy) finishes before the outer call writes any of it.
const SCRATCH: DecodeScratch = { fc_: -1, cn_: -1, parityOk_: true, wide_: "" };
/**
 * A card number past 2^53−1 (CN3, CN4): decideCore's `cn` is then WIDE and the number's decimal
 * string is `WIDE_ARG.wide_`, written by the caller (an already-decoded number) or by the read (a
 * frame: the decode scratch is this same object).
 */
export const WIDE_ARG: { wide_: string } = SCRATCH;
/** wideCard's holder index, and its exit's reason code when it exited. */
const WIDE_HIT = new Int32Array(2);
const REQUEST = new RequestFields();

/** A fresh decision object with every field, in the documented field order. */
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

/** The outcome of each reason code (index into REASONS): 0 allowed, 1 denied, 2 unknown (OUTCOME_CODES). */
export const OUTCOME_OF_REASON: Uint8Array = Uint8Array.from(REASONS, (r) => OUTCOME_CODES.indexOf(outcomeOf(r)));
const TOPICS: readonly Topic[] = ["device.request.allowed", "device.request.denied", "device.request.unknown"];
/** Per reason code: its outcome and topic strings (one lookup each when a decision is filled). */
const OUTCOME_OF_CODE: readonly Outcome[] = REASONS.map((r) => outcomeOf(r));
const TOPIC_OF_CODE: readonly Topic[] = REASONS.map((r) => TOPICS[OUTCOME_CODES.indexOf(outcomeOf(r))]!);

function reasonCode(reason: Reason): number {
  const i = REASONS.indexOf(reason);
  if (i < 0) die("unknownReason", reason);
  return i;
}

// Reason codes: positions in REASONS (what decideBatch writes).
export const C_ALLOWED = reasonCode("allowed");
const C_ECARD = reasonCode("ecard");
const C_OFFLINE_24X7 = reasonCode("offline24x7");
const C_OFFLINE_ANY = reasonCode("offlineAnySchedule");
const C_UNKNOWN_CARD_FORMAT = reasonCode("unknownCardFormat");
const C_UNKNOWN_CREDENTIAL = reasonCode("unknownCredential");
const C_FC_MISMATCH = reasonCode("facilityCodeMismatch");
const C_UNKNOWN_PIN = reasonCode("unknownPin");
export const C_BAD_REQUEST = reasonCode("badRequest");
export const C_UNKNOWN_DEVICE = reasonCode("unknownDevice");
const C_INPUT_NOT_ALLOWED = reasonCode("inputTypeNotAllowed");
const C_PARITY = reasonCode("parityError");
const C_FC_NOT_ALLOWED = reasonCode("facilityCodeNotAllowed");
const C_OFFLINE_ECARD_ONLY = reasonCode("offlineEcardOnly");
const C_OFFLINE_NOT_24X7 = reasonCode("offlineNot24x7");
const C_PENDING = reasonCode("credentialPending");
const C_BLE = reasonCode("bleNotSupported");
const C_INSECURE = reasonCode("insecureRead");
const C_AMBIGUOUS_PIN = reasonCode("ambiguousPin");
const C_DISABLED = reasonCode("holderDisabled");
const C_NOT_YET = reasonCode("holderNotYetActive");
const C_EXPIRED = reasonCode("holderExpired");
const C_NO_RULE = reasonCode("noActiveRule");
const C_DENIED_BY_RULE = reasonCode("deniedByRule");
const C_WRONG_PIN = reasonCode("wrongPin");
const C_PIN_REQUIRED = reasonCode("pinRequired");
const C_CARD_REQUIRED = reasonCode("cardRequired");
const C_THREAT = reasonCode("threatLevel");
const C_ANTI_PASSBACK = reasonCode("antiPassback");
const C_OCCUPANCY = reasonCode("occupancyLimit");
const C_ANTI_PASSBACK_SOFT = reasonCode("antiPassbackSoft");

/** `floors_` of a CoreResult: none, the device's e-card floors, or those of the accepting rules (RULES). */
const FLOORS_NONE = 0;
const FLOORS_ECARD = 1;
const FLOORS_RULES = 2;

/** The deciding rule's rank at decideCore's last exit (-1: none): what a batch writes. */
export const LAST_RULE = new Int32Array(1);

/**
 * An exit of decideCore: fills `d` (when there is one: decide and reader handles; a batch passes
 * null and reads only the code and LAST_RULE), returns `code`. `rule` a rank (-1 none), `floors`
 * FLOORS_*, `fc` and `cn` the numbers read (-1 none).
 */
function exit(
  d: Decision | null,
  sys: CompiledSystem,
  device: CompiledDevice | null,
  code: number,
  holderId: string | null,
  credentialId: string | null,
  rule: number,
  duress: boolean,
  floors: number,
  fc: number,
  cn: number,
): number {
  LAST_RULE[0] = rule;
  if (d === null) return code;
  d.outcome = OUTCOME_OF_CODE[code]!;
  d.topic = TOPIC_OF_CODE[code]!;
  d.reason = REASONS[code]!;
  d.holderId = holderId;
  d.credentialId = credentialId;
  d.activeRuleId = rule < 0 ? null : sys.ruleIds_[rule]!;
  d.duress = duress;
  d.floors =
    floors === FLOORS_NONE || device === null
      ? NO_FLOORS
      : floors === FLOORS_ECARD
        ? device.ecardFloors_
        : floorsOf(device, RULES);
  d.facilityCode = fc < 0 ? null : fc;
  d.credentialNumber = cn >= 0 ? cn : cn === WIDE ? WIDE_ARG.wide_ : null;
  return code;
}

/** An exit before any credential was read (every field empty); returns `code`. */
export function exitEmpty(d: Decision | null, sys: CompiledSystem, code: number): number {
  return exit(d, sys, null, code, null, null, -1, false, FLOORS_NONE, -1, -1);
}

/** The input channel bit of an `input` value (INPUT_BIT; absent: wiegand). */
export function inputBit(input: string | undefined): number {
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
export interface DecideTrace extends RuleSink {
  /** Step 1: the device found for the request's id (undefined: unknown). */
  device_(device: CompiledDevice | undefined): void;
  /** Step 2: the format chosen (null: none fits), the decoded fields (-1 none, -2 overflow, -3 WIDE: the number is WIDE_ARG's) and the parity/marker check. */
  read_(format: CompiledFormat | null, fc: number, cn: number, parityOk: boolean): void;
  /** Step 3: the fallback mode (MODE_*). */
  mode_(mode: number): void;
  /** Step 4, card reads: the card table slot of the decoded number (-1: none). */
  card_(slot: number): void;
  /** Step 4, card reads past 2^53−1 (CN4): the wide card of the number (undefined: none). */
  wideCard_(card: WideCard | undefined): void;
  /** Step 4: the holder identified (index into `holders_`). */
  holder_(h: number): void;
  /** Step 5: the instant and its local wall time (local epoch ms) the windows and holder dates are read at. */
  time_(at: number, local: number): void;
  /**
   * Steps 6–7, after the walk told `rule_` (RuleSink) each rule it met: the factors presented, the
   * mode, the local day and what the rules came to.
   */
  rules_(factor: number, mode: number, day: number, outcome: RuleOutcome): void;
}

/**
 * Decides one scan against a compiled system, in the evaluation order.
 * @param sys - from compileSnapshot.
 * @param request - any value; a malformed one is `denied/badRequest`.
 * @param out - optional decision object to fill instead of allocating one.
 * @param trace - optional sink told what each step looked at (explain); absent on the hot path.
 * @param state - optional area state (docs/semantics.md AB2–AB5); without it areas are not consulted.
 */
export function decide(
  sys: CompiledSystem,
  request: unknown,
  out?: Decision,
  trace?: DecideTrace,
  state?: AccessStateView,
): Decision {
  const d = out ?? newDecision();
  const r = REQUEST;
  if (!checkRequest(request, null, r)) {
    exitEmpty(d, sys, C_BAD_REQUEST);
    return d;
  }

  // 1. Device.
  const device = sys.deviceIndex_.get(r.deviceId as string);
  if (trace !== undefined) trace.device_(device);
  if (device === undefined) {
    exitEmpty(d, sys, C_UNKNOWN_DEVICE);
    return d;
  }

  // The request's fields as decideCore takes them.
  let kind = KIND_NONE;
  let length = 0;
  let cn = -1;
  let fc = -1;
  let mobileBit = 0;
  let credentialId: string | null = null;
  if (r.hasCredential) {
    if (r.wiegand !== undefined) {
      kind = KIND_WIEGAND;
      length = (r.wiegand as string).length;
    } else if (r.credentialNumber !== undefined) {
      kind = KIND_NUMBER;
      // checkRequest left a number, or the decimal string of a value past 2^53−1 (CN2).
      const n = r.credentialNumber as number | string;
      if (typeof n === "number") cn = n;
      else {
        cn = WIDE;
        WIDE_ARG.wide_ = n;
      }
      fc = r.facilityCode === undefined || r.facilityCode === null ? -1 : (r.facilityCode as number);
    } else {
      kind = KIND_MOBILE;
      mobileBit = r.mobile === "touch" ? 2 : 4;
      credentialId = r.credentialId as string;
    }
  }
  const offline =
    !r.hasNode || r.online !== false ? ONLINE : r.timeKnown === false ? OFFLINE_NO_CLOCK : (r.offlineSeconds as number);
  const pin = r.pin === undefined ? null : (r.pin as string | null);
  NUMBERS[ARG_AT] = r.instant_[0]!;
  const code = decideCore(
    d,
    sys,
    device,
    inputBit(r.input as string | undefined),
    kind,
    r.bits_,
    length,
    cn,
    fc,
    mobileBit,
    credentialId,
    pin,
    offline,
    trace,
  );
  // Cheapest first: most decisions with a state are denials, and entryOf_ may be a cold line (bench/doorStates.bench.ts).
  if (state !== undefined && OUTCOME_OF_REASON[code] === 0 && d.holderId !== null && device.entryOf_.length > 0)
    areaCheck(d, device, d.holderId, offline !== OFFLINE_NO_CLOCK, state);
  return d;
}

/**
 * After the rules allowed a holder at an entry of areas (docs/semantics.md AB2–AB5): anti-passback
 * for each area in id order (a hard violation denies at once), then the occupancy limits; a soft
 * violation alone turns the reason into `antiPassbackSoft`. `timeKnown`: whether a reset may have
 * elapsed (offline without a clock, none has). The instant is NUMBERS[ARG_AT] (no boxed double).
 */
function areaCheck(
  d: Decision,
  device: CompiledDevice,
  holderId: string,
  timeKnown: boolean,
  state: AccessStateView,
): void {
  const at = NUMBERS[ARG_AT]!;
  const areas = device.entryOf_;
  let soft = false;
  for (let i = 0; i < areas.length; i++) {
    const a = areas[i]!;
    if (a.antiPassback_ === AP_NONE) continue;
    const t = state.enteredAt(a.id, holderId);
    if (t === undefined || (a.resetMs_ > 0 && timeKnown && at - t >= a.resetMs_)) continue;
    if (a.antiPassback_ === AP_HARD) {
      areaDenial(d, C_ANTI_PASSBACK);
      return;
    }
    soft = true;
  }
  for (let i = 0; i < areas.length; i++) {
    const a = areas[i]!;
    // The count first: below its limit (the usual case) an area needs no lookup of the holder (AB3).
    if (a.limit_ >= 0 && state.occupancy(a.id) >= a.limit_ && state.enteredAt(a.id, holderId) === undefined) {
      areaDenial(d, C_OCCUPANCY);
      return;
    }
  }
  if (soft) d.reason = REASONS[C_ANTI_PASSBACK_SOFT]!;
}

/** An area's denial (AB5): holder and credential kept, no deciding rule, no floors. */
function areaDenial(d: Decision, code: number): void {
  d.outcome = OUTCOME_OF_CODE[code]!;
  d.topic = TOPIC_OF_CODE[code]!;
  d.reason = REASONS[code]!;
  d.activeRuleId = null;
  d.floors = NO_FLOORS;
}

/**
 * decideCore's numeric arguments, written by its caller just before the call: a double passed as an
 * argument to a function V8 does not inline is boxed (an allocation per decision), a typed array
 * slot is not. `at`: the instant (epoch ms, a safe integer in range).
 */
export const NUMBERS = new Float64Array(1);
export const ARG_AT = 0;

/** `offline` of decideCore: the node is online; offline without a clock (else: seconds offline, ≥ 0). */
export const ONLINE = -1;
export const OFFLINE_NO_CLOCK = -2;

/**
 * The evaluation order from step 1's input check on, for a well-formed request already resolved to its device:
 * what decide, reader handles and batches share. Fills `d` (null: a batch, which reads only the
 * returned reason code, an index into REASONS, and LAST_RULE). No string is built, nothing allocated.
 * @param input - the channel's INPUT_BIT.
 * @param kind - KIND_NONE (PIN only), KIND_WIEGAND (`bits[0 … length - 1]`), KIND_NUMBER (`cn`, `fc` -1 for none) or KIND_MOBILE (`mobileBit` 2 touch / 4 token, `credentialId`).
 * @param offline - ONLINE, OFFLINE_NO_CLOCK or the seconds the node has been offline.
 * The instant is NUMBERS[ARG_AT].
 */
export function decideCore(
  d: Decision | null,
  sys: CompiledSystem,
  device: CompiledDevice,
  input: number,
  kind: number,
  bits: Uint8Array,
  length: number,
  cn: number,
  fc: number,
  mobileBit: number,
  mobileId: string | null,
  pin: string | null,
  offline: number,
  trace: DecideTrace | undefined,
): number {
  if ((device.inputMask_ & input) === 0) return exitEmpty(d, sys, C_INPUT_NOT_ALLOWED);
  const node = device.node_;
  const at = NUMBERS[ARG_AT]!;

  // 2. Read.
  let format: CompiledFormat | null = null;
  if (kind === KIND_WIEGAND) {
    format = firstFormat(node.formats_, length);
    if (format === null) {
      if (trace !== undefined) trace.read_(null, -1, -1, true);
      return exitEmpty(d, sys, C_UNKNOWN_CARD_FORMAT);
    }
    decodeInto(format, bits, length, SCRATCH);
    fc = SCRATCH.fc_;
    cn = SCRATCH.cn_;
    if (trace !== undefined) trace.read_(format, fc, cn, SCRATCH.parityOk_);
    if (format.enforceParity_ && !SCRATCH.parityOk_)
      return exit(d, sys, device, C_PARITY, null, null, -1, false, FLOORS_NONE, fc, cn);
  } else if (kind === KIND_NUMBER) {
    format = node.formats_[0]!;
    if (trace !== undefined) trace.read_(format, fc, cn, true);
  }
  if (format !== null && format.fcPolicy_ === FC_POLICY.FILTER_LIST && (fc < 0 || !format.allowedFc_.has(fc)))
    return exit(d, sys, device, C_FC_NOT_ALLOWED, null, null, -1, false, FLOORS_NONE, fc, cn);
  const isCard = kind === KIND_WIEGAND || kind === KIND_NUMBER;

  // 3. Fallback modes; while the node's threat level is raised, e-cards pass online too (TL4).
  const mode = fallbackMode(node, offline);
  if (trace !== undefined) trace.mode_(mode);
  if (mode !== MODE_NORMAL || node.threatLevel_ > 0) {
    if (isCard && (cn >= 0 ? node.ecards_.has(cn) : cn === WIDE && node.ecards_.has(WIDE_ARG.wide_)))
      return exit(d, sys, device, C_ECARD, null, null, -1, false, FLOORS_ECARD, fc, cn);
    if (mode === MODE_ECARD)
      return exit(d, sys, device, C_OFFLINE_ECARD_ONLY, null, null, -1, false, FLOORS_NONE, fc, cn);
  }

  // 4. Credential. The holder is an index; its hot fields are one record of `holderData_`.
  let h: number;
  let holderId: string | null = null; // Ids are read once the holder is known: their misses overlap the rules'.
  let credentialId: string | null = null;
  let pending = false;
  let bleRefused = false;
  if (isCard && cn !== WIDE) {
    const c = cn < 0 ? -1 : findCard(sys, cn);
    if (trace !== undefined) trace.card_(c);
    if (c < 0) return exit(d, sys, device, C_UNKNOWN_CREDENTIAL, null, null, -1, false, FLOORS_NONE, fc, cn);
    const table = sys.cardTable_;
    if ((format as CompiledFormat).fcPolicy_ === FC_POLICY.ENFORCED && table[c + 1] !== fc)
      return exit(d, sys, device, C_FC_MISMATCH, null, null, -1, false, FLOORS_NONE, fc, cn);
    h = table[c + 2]! | 0;
    if (trace !== undefined) trace.holder_(h);
    if (d !== null) {
      const ids = table[c + 3]! | 0;
      credentialId = sys.cardIds_[ids]!;
      holderId = sys.cardIds_[ids + 1]!;
    }
  } else if (isCard) {
    credentialId = wideCard(d, sys, device, format as CompiledFormat, fc, trace);
    if (credentialId === null) return WIDE_HIT[1]!;
    h = WIDE_HIT[0]!;
  } else if (kind === KIND_MOBILE) {
    const c = sys.digitalById_.get(mobileId as string);
    if (c === undefined || (c.types_ & mobileBit) === 0) return exitEmpty(d, sys, C_UNKNOWN_CREDENTIAL);
    h = c.holder_;
    if (trace !== undefined) trace.holder_(h);
    credentialId = c.id;
    pending = c.pending_;
    bleRefused = !pending && mobileBit === 2 && !device.ble_;
  } else {
    const owner = sys.pinOwner_.get(pin as string);
    if (owner === undefined) return exitEmpty(d, sys, C_UNKNOWN_PIN);
    if (owner === AMBIGUOUS) return exitEmpty(d, sys, C_AMBIGUOUS_PIN);
    h = owner;
    if (trace !== undefined) trace.holder_(h);
  }
  if (d !== null && holderId === null) holderId = sys.holders_[h]!.id;
  const duress = pin !== null && sys.holders_[h]!.duressPin === pin;
  if (pending) return exit(d, sys, device, C_PENDING, holderId, credentialId, -1, duress, FLOORS_NONE, -1, -1);
  if (bleRefused) return exit(d, sys, device, C_BLE, holderId, credentialId, -1, duress, FLOORS_NONE, -1, -1);
  if (device.secured_ && kind !== KIND_MOBILE && input !== 4)
    return exit(d, sys, device, C_INSECURE, holderId, credentialId, -1, duress, FLOORS_NONE, fc, cn);

  // 5. Holder.
  const hd = sys.holderData_;
  const hb = h * HOLDER_STRIDE;
  const groupsAndEnabled = hd[hb + H_GROUP_TO_ENABLED]! | 0;
  if ((groupsAndEnabled & 1) === 0)
    return exit(d, sys, device, C_DISABLED, holderId, credentialId, -1, duress, FLOORS_NONE, fc, cn);
  // Local day and time of day as small integers (ms of day < 2^27): no double leaves this function.
  let day = 0;
  let tod = 0;
  if (mode === MODE_NORMAL) {
    const local = at + offsetAt(node.zone_, at);
    if (trace !== undefined) trace.time_(at, local);
    if (local < hd[hb + H_FROM]!)
      return exit(d, sys, device, C_NOT_YET, holderId, credentialId, -1, duress, FLOORS_NONE, fc, cn);
    if (local >= hd[hb + H_TO]!)
      return exit(d, sys, device, C_EXPIRED, holderId, credentialId, -1, duress, FLOORS_NONE, fc, cn);
    day = Math.floor(local / MS_PER_DAY);
    tod = local - day * MS_PER_DAY;
  }

  // 6–8. Rules, authentication policy, floors.
  const pinOk = pin !== null && (pin === sys.holders_[h]!.pin || duress);
  // Factor combinations as in policyMask: card 1, PIN 2, card + PIN 4. PIN alone is always correct.
  const factor = kind !== KIND_NONE ? (pinOk ? 4 : 1) : 2;
  evaluateRules(sys, device, hd[hb + H_GROUP_FROM]! | 0, groupsAndEnabled >> 1, factor, mode, day, tod, RULES, trace);
  if (trace !== undefined) trace.rules_(factor, mode, day, RULES);
  const code = ruleCode(mode, kind, pin !== null && !pinOk);
  return exit(d, sys, device, code, holderId, credentialId, RULES_RANK[0]!, duress, RULES_FLOORS[0]!, fc, cn);
}

/**
 * Step 4 for a card number past 2^53−1 (CN4), looked up by its decimal string apart from the
 * numeric table: the credential id, its holder in WIDE_HIT[0]; or null after exiting as the numeric
 * lookup does (unknownCredential, facilityCodeMismatch), the code in WIDE_HIT[1].
 */
function wideCard(
  d: Decision | null,
  sys: CompiledSystem,
  device: CompiledDevice,
  format: CompiledFormat,
  fc: number,
  trace: DecideTrace | undefined,
): string | null {
  const w = sys.wideCards_.get(WIDE_ARG.wide_);
  if (trace !== undefined) trace.wideCard_(w);
  const code =
    w === undefined
      ? C_UNKNOWN_CREDENTIAL
      : format.fcPolicy_ === FC_POLICY.ENFORCED && w.fc_ !== fc
        ? C_FC_MISMATCH
        : -1;
  if (code >= 0) {
    WIDE_HIT[1] = exit(d, sys, device, code, null, null, -1, false, FLOORS_NONE, fc, WIDE);
    return null;
  }
  const card = w as WideCard;
  WIDE_HIT[0] = card.holder_;
  if (trace !== undefined) trace.holder_(card.holder_);
  return card.id_;
}

/** Step 3: the fallback mode (MODE_*) of a node `offline` (ONLINE, OFFLINE_NO_CLOCK or seconds offline). */
function fallbackMode(node: CompiledNode, offline: number): number {
  if (offline === ONLINE) return MODE_NORMAL;
  if (offline !== OFFLINE_NO_CLOCK) return offline <= node.killTimer_ ? MODE_NORMAL : MODE_ECARD;
  return node.offlinePolicy_ === 0 ? MODE_ECARD : node.offlinePolicy_ === 1 ? MODE_24X7 : MODE_ANY;
}

/** ruleCode's deciding rank (-1: none) and FLOORS_* of the decision, beside its returned code. */
const RULES_RANK = new Int32Array(1);
const RULES_FLOORS = new Int32Array(1);

/**
 * Steps 6–8 on the rule outcome in RULES: the reason code, with the deciding rank and the floors in
 * RULES_RANK and RULES_FLOORS. `wrongPin`: a PIN was given and is not the holder's.
 */
function ruleCode(mode: number, kind: number, wrongPin: boolean): number {
  RULES_FLOORS[0] = FLOORS_NONE;
  if (RULES.minDeny_ !== NONE) {
    RULES_RANK[0] = RULES.minDeny_;
    return C_DENIED_BY_RULE;
  }
  if (RULES.minAllow_ === NONE) {
    // TL2: no allow rule applies, and one would have but for the threat level.
    if (RULES.minThreat_ !== NONE) {
      RULES_RANK[0] = RULES.minThreat_;
      return C_THREAT;
    }
    RULES_RANK[0] = -1;
    return mode === MODE_24X7 ? C_OFFLINE_NOT_24X7 : C_NO_RULE;
  }
  if (RULES.minAccepted_ !== NONE) {
    RULES_RANK[0] = RULES.minAccepted_;
    RULES_FLOORS[0] = FLOORS_RULES;
    return mode === MODE_NORMAL ? C_ALLOWED : mode === MODE_24X7 ? C_OFFLINE_24X7 : C_OFFLINE_ANY;
  }
  // E11: the reason comes from the smallest-id applicable allow rule, which refuses the factors presented.
  RULES_RANK[0] = RULES.minAllow_;
  return wrongPin ? C_WRONG_PIN : kind !== KIND_NONE ? C_PIN_REQUIRED : C_CARD_REQUIRED;
}

const RULES = newRuleOutcome();
