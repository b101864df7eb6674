// The reference evaluator: a line-by-line transcription of SPEC §2–§6 and docs/semantics.md, written
// to be obviously right, not fast. It loops over the snapshot arrays on every call, asks luxon for the
// local wall time on every call and reads Wiegand bits with string slices. The compiled engine
// (src/compile + src/evaluate) is differential-tested against it, so it shares no code with them:
// from the model layer it takes only the types, the request grammar (checkRequest, parseInstant) and
// the table of well-known card layouts (data: the specification of each format), and the type of the
// state a decision reads (AccessStateView, an interface). Threat levels, unlock rules and areas (SPEC
// §15, docs/semantics.md TL, UF, AB) are read here straight from the design's sentences.
import { DateTime } from "luxon";
import type { AccessStateView } from "../../src/evaluate/accessState.js";
import {
  type AccessRequest,
  type AuthenticationPolicy,
  type CardFormat,
  type CloudNode,
  type Decision,
  type Device,
  type FacilityCodePolicy,
  type Holder,
  type Outcome,
  type Reason,
  type Rule,
  type SystemSnapshot,
  type Topic,
  type Weekday,
  KNOWN_CARD_FORMATS,
  checkRequest,
  parseInstant,
} from "../../src/model/index.js";

// ---------------------------------------------------------------------------------------------
// Decisions
// ---------------------------------------------------------------------------------------------

/** SPEC §3: the outcome each reason code belongs to. */
const OUTCOME_OF_REASON: Record<Reason, Outcome> = {
  allowed: "allowed",
  ecard: "allowed",
  offline24x7: "allowed",
  offlineAnySchedule: "allowed",
  antiPassbackSoft: "allowed",
  unknownCardFormat: "unknown",
  unknownCredential: "unknown",
  facilityCodeMismatch: "unknown",
  unknownPin: "unknown",
  badRequest: "denied",
  unknownDevice: "denied",
  inputTypeNotAllowed: "denied",
  parityError: "denied",
  facilityCodeNotAllowed: "denied",
  offlineEcardOnly: "denied",
  offlineNot24x7: "denied",
  credentialPending: "denied",
  bleNotSupported: "denied",
  insecureRead: "denied",
  ambiguousPin: "denied",
  holderDisabled: "denied",
  holderNotYetActive: "denied",
  holderExpired: "denied",
  noActiveRule: "denied",
  deniedByRule: "denied",
  wrongPin: "denied",
  pinRequired: "denied",
  cardRequired: "denied",
  threatLevel: "denied",
  antiPassback: "denied",
  occupancyLimit: "denied",
};

const TOPIC_OF_OUTCOME: Record<Outcome, Topic> = {
  allowed: "device.request.allowed",
  denied: "device.request.denied",
  unknown: "device.request.unknown",
};

/** What is known so far while walking the steps; every decision is built from it. */
interface Known {
  /** The request's keypad entry (E9 needs it for `duress`). */
  pin: string | null;
  /** The holder, once step 4 identified one (E18). */
  holder: Holder | null;
  credentialId: string | null;
  /** From step 2 on (E1). */
  facilityCode: number | null;
  /** As the decision spells it (CN3): a number up to 2^53−1, else its decimal string. */
  credentialNumber: number | string | null;
  /** The same number as a BigInt: what the reference compares (CN4), whatever its width. */
  cardValue: bigint | null;
}

function emptyKnown(): Known {
  return { pin: null, holder: null, credentialId: null, facilityCode: null, credentialNumber: null, cardValue: null };
}

/** Builds the decision: exactly the SPEC §2 keys, in that order. */
function makeDecision(
  reason: Reason,
  known: Known,
  activeRuleId: string | null = null,
  floors: string[] = [],
): Decision {
  const outcome = OUTCOME_OF_REASON[reason];
  const holder = known.holder;
  // E9: duress exactly when the decision names a holder and the PIN is that holder's duress PIN.
  const duress = holder !== null && known.pin !== null && holder.duressPin !== null && known.pin === holder.duressPin;
  return {
    outcome,
    topic: TOPIC_OF_OUTCOME[outcome],
    reason,
    holderId: holder === null ? null : holder.id,
    credentialId: known.credentialId,
    activeRuleId,
    duress,
    floors,
    facilityCode: known.facilityCode,
    credentialNumber: known.credentialNumber,
  } as Decision; // outcome and topic follow from the reason, so this is one of the three shapes
}

/** JS default string order (E19). */
function compareIds(a: string, b: string): number {
  if (a < b) return -1;
  if (a > b) return 1;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Card formats (SPEC §5)
// ---------------------------------------------------------------------------------------------

interface Field {
  offset: number;
  length: number;
}

/** One parity bit: its position, its kind and the other positions it covers. */
interface ParityCheck {
  position: number;
  odd: boolean;
  covers: number[];
}

/** A bit every frame must hold (SPEC §5 marker bits). */
interface MarkerCheck {
  position: number;
  value: 0 | 1;
}

interface Layout {
  facilityCode: Field | null;
  cardNumber: Field;
  parity: ParityCheck[];
  markers: MarkerCheck[];
}

/**
 * Marker bits of the well-known layouts, transcribed from SPEC §5 ("Kastle's bit 1 is always 1") and
 * shared/reference/wiegand-formats.md §1.2 rather than read from the engine's table, so that a marker
 * missing from the table shows up as a disagreement.
 */
const WELL_KNOWN_MARKERS: Readonly<Record<string, readonly MarkerCheck[]>> = { Kastle: [{ position: 1, value: 1 }] };

/**
 * A card-format entry's layout (SPEC §5): a `layout` string names a well-known layout; a `layout`
 * object is a custom layout (S4); without a `layout`, a well-known `id` names its layout and any other
 * id makes the format raw (null here): the whole frame is the card number, no facility code, no parity.
 */
function layoutOf(format: CardFormat): Layout | null {
  if (typeof format.layout === "object" && format.layout !== null) {
    const parity: ParityCheck[] = [];
    for (const p of format.layout.parity) {
      const covers: number[] = [];
      if (p.range !== undefined) {
        for (let i = p.range.offset; i < p.range.offset + p.range.length; i++) {
          if (i !== p.position) covers.push(i);
        }
      } else if (p.mask !== undefined) {
        for (let i = 0; i < p.mask.length; i++) {
          if (p.mask[i] === "1" && i !== p.position) covers.push(i);
        }
      }
      parity.push({ position: p.position, odd: p.type === "odd", covers });
    }
    const markers: MarkerCheck[] = [];
    for (const f of format.layout.fixed ?? []) markers.push({ position: f.position, value: f.value });
    return { facilityCode: format.layout.facilityCode, cardNumber: format.layout.cardNumber, parity, markers };
  }
  let name: string;
  if (typeof format.layout === "string") name = format.layout;
  else if (Object.hasOwn(KNOWN_CARD_FORMATS, format.id)) name = format.id;
  else return null;
  if (!Object.hasOwn(KNOWN_CARD_FORMATS, name))
    throw new Error(`reference: card format "${format.id}" names an unknown layout "${name}"`);
  const known = KNOWN_CARD_FORMATS[name]!;
  const parity: ParityCheck[] = [];
  for (const p of known.parity) {
    const covers: number[] = [];
    for (const c of p.covers) if (c !== p.position) covers.push(c);
    parity.push({ position: p.position, odd: p.odd, covers });
  }
  const markers = Object.hasOwn(WELL_KNOWN_MARKERS, name) ? [...WELL_KNOWN_MARKERS[name]!] : [];
  return { facilityCode: known.facilityCode, cardNumber: known.cardNumber, parity, markers };
}

/** A field's value, MSB first; null when it does not fit in 2^53−1 (SPEC §5, E1, E17). */
function readField(bits: string, field: Field): number | null {
  const slice = bits.slice(field.offset, field.offset + field.length);
  if (slice.length <= 53) return parseInt(slice, 2);
  const big = BigInt(`0b${slice}`);
  if (big > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(big);
}

/** A card-number field, exactly, at any width up to 512 bits (CN3). */
function readCardField(bits: string, field: Field): bigint {
  return BigInt(`0b0${bits.slice(field.offset, field.offset + field.length)}`);
}

/** The one spelling of a card number (CN1): a number up to 2^53−1, else its decimal string. */
function spell(v: bigint): number | string {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

/** Ones over the covered positions plus the parity bit itself: even → even count, odd → odd count. */
function parityHolds(bits: string, check: ParityCheck): boolean {
  let ones = bits[check.position] === "1" ? 1 : 0;
  for (const p of check.covers) if (bits[p] === "1") ones++;
  return check.odd ? ones % 2 === 1 : ones % 2 === 0;
}

// ---------------------------------------------------------------------------------------------
// Local time (SPEC §3, §4; E14–E16)
// ---------------------------------------------------------------------------------------------

const WEEKDAY_NAMES: readonly Weekday[] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

interface LocalTime {
  /** Local calendar date, `YYYY-MM-DD`. */
  date: string;
  weekday: Weekday;
  /** The calendar day before `date`, and its weekday. */
  previousDate: string;
  previousWeekday: Weekday;
  /** Milliseconds since local midnight (wall clock). */
  msOfDay: number;
  /** `YYYY-MM-DDTHH:mm:ss.SSS`, the wall clock. */
  stamp: string;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

function isoDate(year: number, month: number, day: number): string {
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
}

function localTimeOf(at: number, zone: string): LocalTime {
  const dt = DateTime.fromMillis(at, { zone });
  // luxon: 1 = Monday … 7 = Sunday.
  const weekday = WEEKDAY_NAMES[dt.weekday % 7]!;
  // The previous calendar day, counted on a plain calendar (no zone, so no DST surprises).
  const prev = DateTime.fromObject({ year: dt.year, month: dt.month, day: dt.day }, { zone: "UTC" }).minus({ days: 1 });
  const date = isoDate(dt.year, dt.month, dt.day);
  return {
    date,
    weekday,
    previousDate: isoDate(prev.year, prev.month, prev.day),
    previousWeekday: WEEKDAY_NAMES[prev.weekday % 7]!,
    msOfDay: dt.hour * 3_600_000 + dt.minute * 60_000 + dt.second * 1000 + dt.millisecond,
    stamp: `${date}T${pad(dt.hour, 2)}:${pad(dt.minute, 2)}:${pad(dt.second, 2)}.${pad(dt.millisecond, 3)}`,
  };
}

/** `HH:mm:ss` (up to `24:00:00`) → milliseconds since midnight. */
function clockToMs(s: string): number {
  const h = parseInt(s.slice(0, 2), 10);
  const m = parseInt(s.slice(3, 5), 10);
  const sec = parseInt(s.slice(6, 8), 10);
  return (h * 3600 + m * 60 + sec) * 1000;
}

/**
 * E15: startDate/endDate bound the local calendar day on which the occurrence starts; C2: so does the
 * rule's calendar (`exclude`: not on its days; `only`: on its days alone), read as plain strings.
 */
function startDayInRange(snapshot: SystemSnapshot, rule: Rule, startDay: string): boolean {
  if (rule.startDate !== null && startDay < rule.startDate) return false;
  if (rule.endDate !== null && startDay > rule.endDate) return false;
  if (rule.calendar === undefined || rule.calendar === null) return true;
  const id = rule.calendar.id;
  const calendar = snapshot.calendars.find((c) => c.id === id)!;
  const monthDay = startDay.slice(5);
  const onIt =
    calendar.dates.includes(startDay) ||
    calendar.recurring.some((r) => `${pad(r.month, 2)}-${pad(r.day, 2)}` === monthDay);
  return rule.calendar.mode === "only" ? onIt : !onIt;
}

/** SPEC §4: does the rule's window contain the local time? */
function windowContains(snapshot: SystemSnapshot, rule: Rule, t: LocalTime): boolean {
  const start = clockToMs(rule.startTime);
  const stop = clockToMs(rule.stopTime);
  if (start < stop) {
    return (
      rule.recurring.includes(t.weekday) &&
      start <= t.msOfDay &&
      t.msOfDay < stop &&
      startDayInRange(snapshot, rule, t.date)
    );
  }
  // Crosses midnight (equal means 24 hours).
  const startedToday =
    rule.recurring.includes(t.weekday) && t.msOfDay >= start && startDayInRange(snapshot, rule, t.date);
  const startedYesterday =
    rule.recurring.includes(t.previousWeekday) && t.msOfDay < stop && startDayInRange(snapshot, rule, t.previousDate);
  return startedToday || startedYesterday;
}

/** E4: 24x7 is a property of the rule alone; dates ignored. */
function is24x7(rule: Rule): boolean {
  if (!rule.enabled || !rule.allow) return false;
  for (const day of WEEKDAY_NAMES) if (!rule.recurring.includes(day)) return false;
  return (rule.startTime === "00:00:00" && rule.stopTime === "24:00:00") || rule.startTime === rule.stopTime;
}

// ---------------------------------------------------------------------------------------------
// Authentication policies (SPEC §6)
// ---------------------------------------------------------------------------------------------

type Factors = "cardAlone" | "pinAlone" | "cardAndPin";

/** SPEC §6, the table as written: which factor combinations each policy accepts. */
const POLICY_ACCEPTS: Record<"none" | AuthenticationPolicy, Record<Factors, boolean>> = {
  none: { cardAlone: true, pinAlone: true, cardAndPin: true },
  cardOrPin: { cardAlone: true, pinAlone: true, cardAndPin: true },
  cardOnly: { cardAlone: true, pinAlone: false, cardAndPin: true },
  pinOnly: { cardAlone: false, pinAlone: true, cardAndPin: true },
  cardAndPin: { cardAlone: false, pinAlone: false, cardAndPin: true },
};

function policyAccepts(policy: AuthenticationPolicy | null, factors: Factors): boolean {
  return POLICY_ACCEPTS[policy ?? "none"][factors];
}

/** Rule policy ∩ device policy: a combination is accepted when both accept it. */
function effectiveAccepts(rule: Rule, device: Device, factors: Factors): boolean {
  return policyAccepts(rule.authenticationPolicy, factors) && policyAccepts(device.authenticationPolicy, factors);
}

// ---------------------------------------------------------------------------------------------
// Rules reaching the device
// ---------------------------------------------------------------------------------------------

function isElevatorReader(device: Device): boolean {
  return device.type === "elevatorReader" || device.type === "additionalElevatorReader";
}

/** Door rules name the device; elevator rules name a floor group whose readerPort is the device. */
function ruleReachesDevice(snapshot: SystemSnapshot, rule: Rule, device: Device): boolean {
  if (rule.type === "door") return rule.devices.includes(device.id);
  for (const fgId of rule.floorGroups) {
    for (const fg of snapshot.floorGroups) {
      if (fg.id === fgId && fg.readerPort === device.id) return true;
    }
  }
  return false;
}

/** Floor relays opened at this reader by one rule. */
function floorsOfRule(snapshot: SystemSnapshot, rule: Rule, device: Device): string[] {
  const out: string[] = [];
  if (rule.type !== "elevator") return out;
  for (const fgId of rule.floorGroups) {
    for (const fg of snapshot.floorGroups) {
      if (fg.id === fgId && fg.readerPort === device.id) out.push(...fg.floors);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// decideNaive
// ---------------------------------------------------------------------------------------------

type Mode = "online" | "ecardOnly" | "offline24x7" | "offlineAnySchedule";

/**
 * Decides one scan by walking SPEC §3 step by step. Never throws on a request.
 * @param snapshot - a snapshot returned by parseSnapshot.
 * @param request - anything; a malformed request is `denied/badRequest`.
 * @param state - who is inside which area (AB2–AB5); without it the areas are not consulted.
 */
export function decideNaive(snapshot: SystemSnapshot, request: unknown, state?: AccessStateView): Decision {
  const known = emptyKnown();

  // R1: the request is checked whole before step 1.
  if (!checkRequest(request, null)) return makeDecision("badRequest", known);
  const req = request as AccessRequest;
  const at = parseInstant(req.at);
  const credentialIn = req.credential ?? null;
  const pin = req.pin ?? null;
  const input = req.input ?? "wiegand";
  const nodeState = req.node ?? { online: true };
  known.pin = pin;

  // ---- Step 1: device -------------------------------------------------------------------------
  let device: Device | null = null;
  for (const d of snapshot.devices) if (d.id === req.deviceId) device = d;
  if (device === null) return makeDecision("unknownDevice", known);
  if (!device.inputTypes.includes(input)) return makeDecision("inputTypeNotAllowed", known);
  let node: CloudNode | null = null;
  for (const n of snapshot.cloudNodes) if (n.id === device.cloudNode) node = n;
  if (node === null) throw new Error(`reference: device "${device.id}" names a missing cloud node`);

  // ---- Step 2: read ---------------------------------------------------------------------------
  // kind: a card read (raw bits or already decoded), a mobile credential, or a PIN alone.
  let kind: "card" | "mobile" | "pin";
  let facilityCodePolicy: FacilityCodePolicy = "ENFORCED";
  // SPEC §5: a decoded number that does not fit in 2^53−1 never matches; the decision shows null.
  let facilityCodeOverflow = false;
  // Which shape was presented: the key whose value is defined (checkRequest's reading of R5).
  const presented = credentialIn as {
    wiegand?: string;
    credentialNumber?: number | string;
    facilityCode?: number | null;
  } | null;
  if (presented !== null && presented.wiegand !== undefined) {
    kind = "card";
    const bits = presented.wiegand;
    let format: CardFormat | null = null;
    for (const f of node.cardFormat) {
      if (format === null && f.min_input_bits <= bits.length && bits.length <= f.max_input_bits) format = f;
    }
    if (format === null) return makeDecision("unknownCardFormat", known);
    // A raw format (SPEC §5): the whole frame is the card number; no facility code, no parity bits.
    const layout = layoutOf(format) ?? {
      facilityCode: null,
      cardNumber: { offset: 0, length: bits.length },
      parity: [],
      markers: [],
    };
    known.facilityCode = layout.facilityCode === null ? null : readField(bits, layout.facilityCode);
    facilityCodeOverflow = layout.facilityCode !== null && known.facilityCode === null;
    known.cardValue = readCardField(bits, layout.cardNumber);
    known.credentialNumber = spell(known.cardValue);
    let parityOk = true;
    for (const check of layout.parity) if (!parityHolds(bits, check)) parityOk = false;
    // SPEC §5: a marker bit that differs is treated like a parity failure.
    for (const m of layout.markers) if (bits[m.position] !== String(m.value)) parityOk = false;
    if (!parityOk && format.enforce_parity) return makeDecision("parityError", known);
    facilityCodePolicy = format.facility_code;
    if (format.facility_code === "FILTER_LIST") {
      if (known.facilityCode === null || !format.allowed_facility_codes.includes(known.facilityCode))
        return makeDecision("facilityCodeNotAllowed", known);
    }
  } else if (presented !== null && presented.credentialNumber !== undefined) {
    kind = "card";
    // CN2: a number, or a canonical decimal string (checkRequest refused any other).
    known.cardValue = BigInt(presented.credentialNumber);
    known.credentialNumber = spell(known.cardValue);
    known.facilityCode = presented.facilityCode ?? null;
    const first = node.cardFormat[0]!;
    facilityCodePolicy = first.facility_code;
    if (first.facility_code === "FILTER_LIST") {
      if (known.facilityCode === null || !first.allowed_facility_codes.includes(known.facilityCode))
        return makeDecision("facilityCodeNotAllowed", known);
    }
  } else if (credentialIn !== null) {
    kind = "mobile";
  } else {
    kind = "pin";
  }

  // ---- Step 3: fallback modes -----------------------------------------------------------------
  let mode: Mode = "online";
  if (nodeState.online === false) {
    const timeKnown = nodeState.timeKnown ?? true;
    if (timeKnown) {
      const offlineSeconds = nodeState.offlineSeconds as number;
      mode = offlineSeconds <= node.killTimer ? "online" : "ecardOnly";
    } else if (node.offlinePolicy === 0) mode = "ecardOnly";
    else if (node.offlinePolicy === 1) mode = "offline24x7";
    else mode = "offlineAnySchedule";
  }
  // E2: card number only; E17: a number too big is never an e-card (it is null).
  const isEcard = kind === "card" && known.cardValue !== null && node.ecards.some((e) => BigInt(e) === known.cardValue);
  // SPEC §3 step 3: at an elevator reader an e-card enables every floor of every floor group whose
  // readerPort is that reader, their sorted union; at a door, none.
  const ecardFloors: string[] = [];
  if (isElevatorReader(device)) {
    for (const fg of snapshot.floorGroups)
      if (fg.readerPort === device.id) for (const f of fg.floors) if (!ecardFloors.includes(f)) ecardFloors.push(f);
    ecardFloors.sort(compareIds);
  }
  if (mode === "ecardOnly")
    return isEcard ? makeDecision("ecard", known, null, ecardFloors) : makeDecision("offlineEcardOnly", known);
  if ((mode === "offline24x7" || mode === "offlineAnySchedule") && isEcard)
    return makeDecision("ecard", known, null, ecardFloors);
  // TL4: while the node's threat level is above 0, an e-card passes as in fallback mode, whatever the rules.
  const level = node.threatLevel ?? 0;
  if (level > 0 && isEcard) return makeDecision("ecard", known, null, ecardFloors);

  // ---- Step 4: credential ---------------------------------------------------------------------
  let holder: Holder | null = null;
  if (kind === "card") {
    if (known.cardValue === null) return makeDecision("unknownCredential", known);
    let credentialFacilityCode: number | null = null;
    for (const h of snapshot.holders) {
      for (const c of h.credentials) {
        if (c.types.includes("card") && c.credentialNumber !== null && BigInt(c.credentialNumber) === known.cardValue) {
          holder = h;
          known.credentialId = c.id;
          credentialFacilityCode = c.facilityCode;
        }
      }
    }
    if (holder === null) {
      known.credentialId = null;
      return makeDecision("unknownCredential", known);
    }
    if (facilityCodePolicy === "ENFORCED" && (facilityCodeOverflow || credentialFacilityCode !== known.facilityCode)) {
      known.credentialId = null;
      return makeDecision("facilityCodeMismatch", known);
    }
  } else if (kind === "mobile") {
    const mobile = credentialIn as { mobile: "touch" | "token"; credentialId: string };
    let pending = false;
    for (const h of snapshot.holders) {
      for (const c of h.credentials) {
        if (c.id === mobile.credentialId && !c.types.includes("card") && c.types.includes(mobile.mobile)) {
          holder = h;
          known.credentialId = c.id;
          pending = c.credentialNumber === null;
        }
      }
    }
    if (holder === null) return makeDecision("unknownCredential", known);
    known.holder = holder;
    if (pending) return makeDecision("credentialPending", known);
    if (mobile.mobile === "touch" && !device.supportBleCredentials) return makeDecision("bleNotSupported", known);
  } else {
    // PIN alone (E8): every holder, enabled or not, counted once.
    const matches: Holder[] = [];
    for (const h of snapshot.holders) {
      if (h.pin === pin || h.duressPin === pin) matches.push(h);
    }
    if (matches.length === 0) return makeDecision("unknownPin", known);
    if (matches.length > 1) return makeDecision("ambiguousPin", known);
    holder = matches[0]!;
  }
  known.holder = holder;
  // E7: mobile credentials and encryptedOsdp reads only.
  if (device.securedReadsOnly && kind !== "mobile" && input !== "encryptedOsdp")
    return makeDecision("insecureRead", known);

  // ---- Step 5: holder -------------------------------------------------------------------------
  if (!holder.enabled) return makeDecision("holderDisabled", known);
  const clockKnown = mode === "online";
  const local = clockKnown ? localTimeOf(at, node.timezone) : null;
  if (local !== null) {
    // E14: activeDate ≤ t < expireDate, wall clock with milliseconds.
    if (holder.activeDate !== null && local.stamp < `${holder.activeDate}.000`)
      return makeDecision("holderNotYetActive", known);
    if (holder.expireDate !== null && local.stamp >= `${holder.expireDate}.000`)
      return makeDecision("holderExpired", known);
  }

  // ---- Step 6: rules --------------------------------------------------------------------------
  // UF1: unlock rules are not access rules; a decision never sees them.
  const holderRules: Rule[] = [];
  for (const r of snapshot.rules) {
    if (
      r.enabled &&
      r.action !== "unlock" &&
      holder.groups.includes(r.groupId) &&
      ruleReachesDevice(snapshot, r, device)
    )
      holderRules.push(r);
  }
  // TL2: an allow rule whose maxThreatLevel is below the node's level does not apply; TL3: deny rules always do.
  const levelSetsAside = (r: Rule) => r.allow && level > (r.maxThreatLevel ?? 0);
  let allowRules: Rule[] = [];
  if (local !== null) {
    const applicable: Rule[] = [];
    const setAside: Rule[] = [];
    for (const r of holderRules) {
      if (!windowContains(snapshot, r, local)) continue;
      if (levelSetsAside(r)) setAside.push(r);
      else applicable.push(r);
    }
    if (applicable.length === 0) {
      if (setAside.length > 0) {
        setAside.sort((a, b) => compareIds(a.id, b.id));
        return makeDecision("threatLevel", known, setAside[0]!.id);
      }
      return makeDecision("noActiveRule", known);
    }
    const deny: Rule[] = [];
    for (const r of applicable) if (!r.allow) deny.push(r);
    if (deny.length > 0) {
      deny.sort((a, b) => compareIds(a.id, b.id));
      return makeDecision("deniedByRule", known, deny[0]!.id);
    }
    allowRules = applicable;
  } else {
    // E3: no clock: windows and dates ignored; any deny rule denies.
    const deny: Rule[] = [];
    for (const r of holderRules) if (!r.allow) deny.push(r);
    if (deny.length > 0) {
      deny.sort((a, b) => compareIds(a.id, b.id));
      return makeDecision("deniedByRule", known, deny[0]!.id);
    }
    const setAside: Rule[] = [];
    for (const r of holderRules) {
      if (!(mode === "offline24x7" ? is24x7(r) : r.allow)) continue;
      if (levelSetsAside(r)) setAside.push(r);
      else allowRules.push(r);
    }
    if (allowRules.length === 0) {
      if (setAside.length > 0) {
        setAside.sort((a, b) => compareIds(a.id, b.id));
        return makeDecision("threatLevel", known, setAside[0]!.id);
      }
      return makeDecision(mode === "offline24x7" ? "offlineNot24x7" : "noActiveRule", known);
    }
  }
  allowRules.sort((a, b) => compareIds(a.id, b.id));

  // ---- Step 7: authentication policy ----------------------------------------------------------
  const hasCard = kind !== "pin";
  const pinGiven = pin !== null;
  const pinCorrect = pinGiven && (pin === holder.pin || pin === holder.duressPin);
  let factors: Factors;
  if (hasCard && pinCorrect) factors = "cardAndPin";
  else if (hasCard)
    factors = "cardAlone"; // E10: a wrong PIN is no factor
  else factors = "pinAlone";
  const accepted: Rule[] = [];
  for (const r of allowRules) if (effectiveAccepts(r, device, factors)) accepted.push(r);
  if (accepted.length === 0) {
    // E11: reason from the smallest-id applicable allow rule.
    const first = allowRules[0]!;
    if (pinGiven && !pinCorrect) return makeDecision("wrongPin", known, first.id);
    const withPin: Factors = hasCard ? "cardAndPin" : "pinAlone";
    if (effectiveAccepts(first, device, withPin)) return makeDecision("pinRequired", known, first.id);
    return makeDecision("cardRequired", known, first.id);
  }

  // ---- Step 8: elevators ----------------------------------------------------------------------
  let floors: string[] = [];
  if (isElevatorReader(device)) {
    const set = new Set<string>();
    for (const r of accepted) for (const f of floorsOfRule(snapshot, r, device)) set.add(f);
    floors = [...set].sort(compareIds);
    // SPEC §3.8 "allowed iff non-empty": never empty here (S6: a floor group opens a floor).
  }
  const reason: Reason =
    mode === "offline24x7" ? "offline24x7" : mode === "offlineAnySchedule" ? "offlineAnySchedule" : "allowed";
  if (state !== undefined) {
    // AB2: with the time unknown offline, an entry is never reset by time.
    const refusal = areaVerdict(snapshot, device.id, holder.id, clockKnown ? at : null, state);
    if (refusal === "antiPassback" || refusal === "occupancyLimit") return makeDecision(refusal, known);
    if (refusal === "soft") return makeDecision("antiPassbackSoft", known, accepted[0]!.id, floors);
  }
  return makeDecision(reason, known, accepted[0]!.id, floors);
}

// ---------------------------------------------------------------------------------------------
// Areas (docs/semantics.md AB1–AB5)
// ---------------------------------------------------------------------------------------------

/** The areas the device leads into, by id (AB5: id order). */
function areasEnteredBy(snapshot: SystemSnapshot, deviceId: string) {
  return snapshot.areas.filter((a) => a.entries.includes(deviceId)).sort((a, b) => compareIds(a.id, b.id));
}

/**
 * What the areas say about an entry the rules allowed (AB2–AB5): a hard anti-passback denial in any
 * area first, then a full area, else a soft flag, else nothing. `at` null: the time is unknown, so no
 * entry is old enough to be reset.
 * Design silence: a soft area whose reset time has passed flags nothing (the entry is stale there, as
 * a hard area would let it through).
 */
function areaVerdict(
  snapshot: SystemSnapshot,
  deviceId: string,
  holderId: string,
  at: number | null,
  state: AccessStateView,
): "antiPassback" | "occupancyLimit" | "soft" | null {
  const areas = areasEnteredBy(snapshot, deviceId);
  let soft = false;
  for (const area of areas) {
    if (area.antiPassback === null) continue;
    const since = state.enteredAt(area.id, holderId);
    if (since === undefined) continue;
    const reset = area.antiPassback.resetSeconds;
    const expired = at !== null && reset > 0 && at - since >= reset * 1000;
    if (expired) continue;
    if (area.antiPassback.mode === "hard") return "antiPassback";
    soft = true;
  }
  for (const area of areas) {
    if (area.occupancyLimit === null) continue;
    // AB3: a holder already inside is never refused by the limit.
    if (state.enteredAt(area.id, holderId) !== undefined) continue;
    if (state.occupancy(area.id) >= area.occupancyLimit) return "occupancyLimit";
  }
  return soft ? "soft" : null;
}

/**
 * Is the rule's window (its dates and calendar too, C2) open at instant `at` in zone `zone`? The
 * reference of RSOP's `active` (SPEC §7), read the naive way: luxon's wall clock, string dates.
 */
export function naiveRuleActive(snapshot: SystemSnapshot, rule: Rule, at: number, zone: string): boolean {
  return windowContains(snapshot, rule, localTimeOf(at, zone));
}

// ---------------------------------------------------------------------------------------------
// Door states: unlock rules and first person in (docs/semantics.md UF1–UF3)
// ---------------------------------------------------------------------------------------------

/** What `engine.doorState` answers (UF2). */
export interface DoorStateNaive {
  deviceId: string;
  unlocked: boolean;
  ruleId: string | null;
  waitingForFirstAllow: boolean;
}

/** The local calendar day on which the occurrence of the rule's window that contains `t` started; null when closed. */
function occurrenceStartDay(snapshot: SystemSnapshot, rule: Rule, t: LocalTime): string | null {
  if (!windowContains(snapshot, rule, t)) return null;
  const start = clockToMs(rule.startTime);
  const stop = clockToMs(rule.stopTime);
  if (start < stop) return t.date;
  // Crossing midnight: started today when the clock is past the start (and today's occurrence is open).
  const startedToday =
    rule.recurring.includes(t.weekday) && t.msOfDay >= start && startDayInRange(snapshot, rule, t.date);
  return startedToday ? t.date : t.previousDate;
}

/** Is the wall clock at `at` in `zone` at or after (day, msOfDay)? Compared as strings, as the reference does dates. */
function wallAtOrAfter(at: number, zone: string, day: string, msOfDay: number): boolean {
  const t = localTimeOf(at, zone);
  return t.date > day || (t.date === day && t.msOfDay >= msOfDay);
}

/**
 * The first instant at which the zone's wall clock shows `day` at `msOfDay` or later: the start of an
 * occurrence. A start the clocks skip (spring forward, Apia's missing day) is the jump itself; a start
 * the clocks repeat (fall back) is its first pass. Found by bisection between two instants 15 hours
 * either side (no zone is more than 14 hours from UTC), then moved back to an earlier pass of the same
 * wall time when the clocks went back meanwhile.
 */
function firstWallInstant(zone: string, day: string, msOfDay: number): number {
  const asUtc = Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) + msOfDay;
  let lo = asUtc - 15 * 3_600_000; // before: the wall clock is at least an hour short of it
  let hi = asUtc + 15 * 3_600_000; // after
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (wallAtOrAfter(mid, zone, day, msOfDay)) hi = mid;
    else lo = mid;
  }
  let first = hi;
  const t = localTimeOf(hi, zone);
  if (t.date === day && t.msOfDay === msOfDay)
    for (const back of [30, 60, 120].map((m) => m * 60_000)) {
      const earlier = localTimeOf(hi - back, zone);
      if (earlier.date === day && earlier.msOfDay === msOfDay) first = Math.min(first, hi - back);
    }
  return first;
}

/**
 * UF2: is the device held unlocked at `at`? An unlock rule of the device is open (window, dates,
 * calendar, threat level ≤ its max, enabled) in the node's zone; with `autoOpenAfterFirstAllow`, only
 * once the first allowed scan of that rule's current occurrence happened (between its start and `at`).
 * @returns null for an unknown device or an invalid instant.
 */
export function doorStateNaive(
  snapshot: SystemSnapshot,
  deviceId: string,
  at: number | string,
  state?: AccessStateView,
): DoorStateNaive | null {
  const device = snapshot.devices.find((d) => d.id === deviceId);
  if (device === undefined) return null;
  const node = snapshot.cloudNodes.find((n) => n.id === device.cloudNode)!;
  const instant = parseInstant(at);
  // Design silence: an instant that is no instant (R2, R3) answers null, as an unknown device does.
  if (Number.isNaN(instant)) return null;
  const local = localTimeOf(instant, node.timezone);
  const level = node.threatLevel ?? 0;
  const open = snapshot.rules
    .filter(
      (r) =>
        r.enabled &&
        r.action === "unlock" &&
        r.type === "door" &&
        r.devices.includes(deviceId) &&
        level <= (r.maxThreatLevel ?? 0) &&
        windowContains(snapshot, r, local),
    )
    .sort((a, b) => compareIds(a.id, b.id));
  if (open.length === 0) return { deviceId, unlocked: false, ruleId: null, waitingForFirstAllow: false };
  if (!device.autoOpenAfterFirstAllow)
    return { deviceId, unlocked: true, ruleId: open[0]!.id, waitingForFirstAllow: false };
  const first = state?.firstAllowAt(deviceId);
  if (first !== undefined)
    for (const r of open) {
      const start = firstWallInstant(node.timezone, occurrenceStartDay(snapshot, r, local)!, clockToMs(r.startTime));
      if (start <= first && first <= instant)
        return { deviceId, unlocked: true, ruleId: r.id, waitingForFirstAllow: false };
    }
  return { deviceId, unlocked: false, ruleId: open[0]!.id, waitingForFirstAllow: true };
}

/** The start of the occurrence of an unlock rule open at `at` (for scenario tests and reports). */
export function naiveOccurrenceStart(snapshot: SystemSnapshot, rule: Rule, at: number, zone: string): number | null {
  const day = occurrenceStartDay(snapshot, rule, localTimeOf(at, zone));
  return day === null ? null : firstWallInstant(zone, day, clockToMs(rule.startTime));
}

// ---------------------------------------------------------------------------------------------
// State after a decision (docs/semantics.md AB1, UF3)
// ---------------------------------------------------------------------------------------------

/** The access state, kept the obvious way: lists of facts, scanned on every read. */
export class NaiveAccessState implements AccessStateView {
  inside: { areaId: string; holderId: string; at: number }[] = [];
  firstAllows: { deviceId: string; at: number }[] = [];

  enteredAt(areaId: string, holderId: string): number | undefined {
    return this.inside.find((e) => e.areaId === areaId && e.holderId === holderId)?.at;
  }
  occupancy(areaId: string): number {
    return this.inside.filter((e) => e.areaId === areaId).length;
  }
  firstAllowAt(deviceId: string): number | undefined {
    return this.firstAllows.find((f) => f.deviceId === deviceId)?.at;
  }
  enter(areaId: string, holderId: string, at: number): void {
    this.exit(areaId, holderId);
    this.inside.push({ areaId, holderId, at });
  }
  exit(areaId: string, holderId: string): void {
    this.inside = this.inside.filter((e) => !(e.areaId === areaId && e.holderId === holderId));
  }
  setFirstAllow(deviceId: string, at: number): void {
    this.firstAllows = this.firstAllows.filter((f) => f.deviceId !== deviceId);
    this.firstAllows.push({ deviceId, at });
  }
  /** AccessStateJson's shape: an area nobody is inside is not listed. */
  toJSON(): { areas: Record<string, Record<string, number>>; firstAllow: Record<string, number> } {
    const areas: Record<string, Record<string, number>> = {};
    for (const e of this.inside) {
      if (!Object.hasOwn(areas, e.areaId)) Object.defineProperty(areas, e.areaId, own({}));
      Object.defineProperty(areas[e.areaId]!, e.holderId, own(e.at));
    }
    const firstAllow: Record<string, number> = {};
    for (const f of this.firstAllows) Object.defineProperty(firstAllow, f.deviceId, own(f.at));
    return { areas, firstAllow };
  }
  /** A copy, for a state to be given to both deciders. */
  static from(view: { areas: Record<string, Record<string, number>>; firstAllow: Record<string, number> }) {
    const s = new NaiveAccessState();
    for (const [a, hs] of Object.entries(view.areas)) for (const [h, at] of Object.entries(hs)) s.enter(a, h, at);
    for (const [d, at] of Object.entries(view.firstAllow)) s.setFirstAllow(d, at);
    return s;
  }
}

/** An own enumerable property, so that an id `__proto__` is a key like any other. */
function own(value: unknown): PropertyDescriptor {
  return { value, enumerable: true, writable: true, configurable: true };
}

/**
 * What `engine.record` does after a decision (AB1, UF3): an allowed decision naming a holder moves
 * them into each area the device is an entry of (since the request's instant) and out of each area it
 * is an exit of; an allowed decision of any reason (e-cards too) at an `autoOpenAfterFirstAllow` device
 * whose unlock window is open and waiting starts the unlock.
 */
export function recordNaive(
  snapshot: SystemSnapshot,
  request: unknown,
  decision: Decision,
  state: NaiveAccessState,
): void {
  if (decision.outcome !== "allowed" || !checkRequest(request, null)) return;
  const req = request as AccessRequest;
  const device = snapshot.devices.find((d) => d.id === req.deviceId);
  if (device === undefined) return;
  const at = parseInstant(req.at);
  if (decision.holderId !== null)
    for (const area of snapshot.areas) {
      if (area.entries.includes(device.id)) state.enter(area.id, decision.holderId, at);
      if (area.exits.includes(device.id)) state.exit(area.id, decision.holderId);
    }
  if (device.autoOpenAfterFirstAllow && doorStateNaive(snapshot, device.id, at, state)!.waitingForFirstAllow)
    state.setFirstAllow(device.id, at);
}
