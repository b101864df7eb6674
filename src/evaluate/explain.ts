// Why a scan was decided: decide run with a trace sink (DecideTrace), and the values it reported
// turned into one step per evaluation step that ran (docs/semantics.md E lines). Nothing here decides: the decision is decide's,
// and each step only describes what decide looked at (rules: every candidate with its verdict).
import {
  type CompiledDevice,
  type CompiledFormat,
  type CompiledNode,
  type CompiledSystem,
  FC_POLICY,
  AP_HARD,
  AP_NONE,
  RF_24X7,
  RF_ALLOW,
  RF_THREAT_SHIFT,
  RULE_STRIDE,
  R_FLAGS,
  R_POLICY,
  WIDE,
  ruleOpenWithoutCalendar,
  type WideCard,
  weekdayOf,
} from "../compile/index.js";
import {
  type CardNumber,
  type Decision,
  type Device,
  type Holder,
  MS_PER_DAY,
  type Reason,
  requestIssues,
} from "../model/index.js";
import { type DecideTrace, WIDE_ARG, decide } from "./decide.js";
import { isoInstant, isoLocal, isoOffset } from "./formatInstant.js";
import {
  MODE_ECARD,
  MODE_NORMAL,
  NONE,
  RULE_CLOSED,
  RULE_OFF_SCHEDULE,
  RULE_THREAT,
  type RuleOutcome,
} from "./ruleWalk.js";
import type { AccessStateView } from "./accessState.js";

/** The evaluation step a trace entry describes, in evaluation order, then the decision itself. */
export type TraceStepName =
  | "request"
  | "device"
  | "read"
  | "fallback"
  | "credential"
  | "holder"
  | "rules"
  | "policy"
  | "areas"
  | "decision";

/** One rule considered for the holder at the device (rules and authentication policy steps). */
export interface TraceRule {
  ruleId: string;
  name: string | null;
  groupId: string;
  allow: boolean;
  /** The window as written: `startTime`–`stopTime` on `recurring`, with its date bounds. */
  window: string;
  /** Whether the window contains the local time; null when time is not looked at (offline, time unknown). */
  open: boolean | null;
  /** Whether it is a 24x7 allow rule (every local time of the week). */
  is24x7: boolean;
  /** Applicable: an allow rule that passes the window (and, offline with policy 1, is 24x7), or an open deny rule. */
  applicable: boolean;
  /** Allow rules: the rule's policy combined with the device's (the more restrictive applies), and whether it accepts the factors presented. */
  effectivePolicy: string | null;
  acceptsFactors: boolean | null;
  /**
   * Only on a rule with a calendar (docs/semantics.md C4): the calendar, how the rule follows it, and
   * whether it closed the rule at this scan (the window alone would have been open).
   */
  calendar?: { id: string; mode: "exclude" | "only"; closedIt: boolean };
  /**
   * Only on an allow rule while its node's threat level is above 0 (docs/semantics.md TL5): the
   * level, the rule's `maxThreatLevel`, and whether the level set the rule aside at this scan.
   */
  threatLevel?: { level: number; max: number; setAside: boolean };
}

/**
 * One step of a trace: `step` names it, `summary` says in a sentence what it found, `details` holds
 * what it looked at, and `decided` is the reason when this step decided (the last step before
 * `decision`), else null.
 */
export interface TraceStep {
  step: TraceStepName;
  summary: string;
  decided: Reason | null;
  details: Record<string, unknown>;
}

/** What explain returns: exactly decide's decision, and the steps that led to it. */
export interface Explanation {
  decision: Decision;
  trace: TraceStep[];
}

const STEP_OF_REASON: Readonly<Record<Reason, TraceStepName>> = {
  badRequest: "request",
  unknownDevice: "device",
  inputTypeNotAllowed: "device",
  unknownCardFormat: "read",
  parityError: "read",
  facilityCodeNotAllowed: "read",
  ecard: "fallback",
  offlineEcardOnly: "fallback",
  unknownCredential: "credential",
  facilityCodeMismatch: "credential",
  unknownPin: "credential",
  ambiguousPin: "credential",
  credentialPending: "credential",
  bleNotSupported: "credential",
  insecureRead: "credential",
  holderDisabled: "holder",
  holderNotYetActive: "holder",
  holderExpired: "holder",
  noActiveRule: "rules",
  deniedByRule: "rules",
  threatLevel: "rules",
  offlineNot24x7: "rules",
  allowed: "policy",
  offline24x7: "policy",
  offlineAnySchedule: "policy",
  wrongPin: "policy",
  pinRequired: "policy",
  cardRequired: "policy",
  antiPassback: "areas",
  antiPassbackSoft: "areas",
  occupancyLimit: "areas",
};

const MODE_NAMES = ["normal", "ecardOnly", "offline24x7", "offlineAnySchedule"] as const;
const FC_POLICY_NAMES = ["ENFORCED", "FILTER_LIST", "NOT_ENFORCED"] as const;
const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;

/** What decide reported, kept as it came (the sink allocates; decide without one does not). */
class Recorder implements DecideTrace {
  device_v: CompiledDevice | undefined = undefined;
  sawDevice = false;
  read: { format: CompiledFormat | null; fc: number; cn: CardNumber; parityOk: boolean } | null = null;
  mode = -1;
  card = -2;
  /** The wide card found for a number past 2^53−1 (CN4), when the read was one. */
  wide: WideCard | undefined = undefined;
  holder = -1;
  at = Number.NaN;
  local = Number.NaN;
  rules: {
    factor: number;
    mode: number;
    day: number;
    minDeny: number;
    minAllow: number;
    minAccepted: number;
  } | null = null;
  /** The rules the walk met, rank then verdict (RULE_*), in walk order. */
  readonly walked: number[] = [];

  device_(device: CompiledDevice | undefined): void {
    this.sawDevice = true;
    this.device_v = device;
  }
  read_(format: CompiledFormat | null, fc: number, cn: number, parityOk: boolean): void {
    // A number past 2^53−1 is kept as its decimal string (it is WIDE_ARG's only until the next decide).
    this.read = { format, fc, cn: cn === WIDE ? WIDE_ARG.wide_ : cn, parityOk };
  }
  mode_(mode: number): void {
    this.mode = mode;
  }
  card_(slot: number): void {
    this.card = slot;
  }
  wideCard_(card: WideCard | undefined): void {
    this.card = card === undefined ? -1 : -3;
    this.wide = card;
  }
  holder_(h: number): void {
    this.holder = h;
  }
  time_(at: number, local: number): void {
    this.at = at;
    this.local = local;
  }
  rule_(rank: number, _floorRef: number, verdict: number): void {
    this.walked.push(rank, verdict);
  }
  rules_(factor: number, mode: number, day: number, o: RuleOutcome): void {
    this.rules = {
      factor,
      mode,
      day,
      minDeny: o.minDeny_,
      minAllow: o.minAllow_,
      minAccepted: o.minAccepted_,
    };
  }
}

function field(v: CardNumber): CardNumber | null {
  return typeof v === "string" ? v : v < 0 ? null : v;
}

function factorName(factor: number): string {
  return factor === 1 ? "card" : factor === 2 ? "PIN" : "card + PIN";
}

/** The name of a policy mask (the policy table; the intersection of two is one of them). */
function policyName(mask: number): string {
  switch (mask & 7) {
    case 7:
      return "cardOrPin";
    case 5:
      return "cardOnly";
    case 6:
      return "pinOnly";
    case 4:
      return "cardAndPin";
    default:
      return "none";
  }
}

function describeWindow(rule: {
  startTime: string;
  stopTime: string;
  recurring: readonly string[];
  startDate?: string | null;
  endDate?: string | null;
  calendar?: { id: string; mode: string } | null;
}): string {
  const days =
    rule.recurring.length === 7 ? "every day" : rule.recurring.length === 0 ? "no day" : rule.recurring.join(",");
  const dates = rule.startDate || rule.endDate ? ` (${rule.startDate ?? "…"} to ${rule.endDate ?? "…"})` : "";
  const cal = rule.calendar;
  const calendar = cal ? ` (${cal.mode === "only" ? "only on" : "except on"} the days of calendar ${cal.id})` : "";
  return `${rule.startTime}–${rule.stopTime} ${days}${dates}${calendar}`;
}

/** Reads a request field without letting a hostile value throw out of explain. */
function peek(request: unknown, key: string): unknown {
  try {
    return request !== null && typeof request === "object" ? (request as Record<string, unknown>)[key] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Decides `request` exactly as decide does, with a trace of the evaluation steps: what each step that ran looked
 * at and found, ending in the decision. Never throws.
 */
export function explain(sys: CompiledSystem, request: unknown, state?: AccessStateView): Explanation {
  const rec = new Recorder();
  const decision = decide(sys, request, undefined, rec, state);
  const trace: TraceStep[] = [];
  const decidedAt = STEP_OF_REASON[decision.reason];
  const push = (step: TraceStepName, summary: string, details: Record<string, unknown>): void => {
    trace.push({ step, summary, decided: step === decidedAt ? decision.reason : null, details });
  };
  try {
    build(sys, request, rec, decision, push, state);
  } catch {
    // A trace is an aid: a request hostile enough to break its description still gets its decision.
  }
  trace.push({
    step: "decision",
    summary: `${decision.outcome}/${decision.reason}${decision.activeRuleId !== null ? ` by rule ${decision.activeRuleId}` : ""}`,
    decided: decision.reason,
    details: { ...decision, floors: [...decision.floors] },
  });
  return { decision, trace };
}

function build(
  sys: CompiledSystem,
  request: unknown,
  rec: Recorder,
  decision: Decision,
  push: (step: TraceStepName, summary: string, details: Record<string, unknown>) => void,
  state: AccessStateView | undefined,
): void {
  // The request.
  if (decision.reason === "badRequest") {
    const issues = requestIssues(request).map((i) => ({ path: i.path.join("."), message: i.message }));
    push("request", `The request is malformed (${issues.length} problem${issues.length === 1 ? "" : "s"}).`, {
      issues,
    });
    return;
  }
  const at = peek(request, "at");
  const credential = peek(request, "credential") as Record<string, unknown> | null | undefined;
  const pin = peek(request, "pin");
  const input = (peek(request, "input") as string | undefined) ?? "wiegand";
  const nodeState = peek(request, "node") as Record<string, unknown> | null | undefined;
  const kind =
    credential === undefined || credential === null
      ? "pin"
      : credential.wiegand !== undefined
        ? "wiegand"
        : credential.credentialNumber !== undefined
          ? "credentialNumber"
          : "mobile";
  push(
    "request",
    `Well-formed: ${kind === "pin" ? "a PIN alone" : kind === "wiegand" ? "a Wiegand frame" : kind === "mobile" ? "a mobile credential" : "a decoded card number"}${kind !== "pin" && pin !== undefined ? " and a PIN" : ""} over ${input}.`,
    {
      at,
      credential: kind,
      input,
      pinGiven: pin !== undefined,
    },
  );

  // 1. Device.
  const device = rec.device_v;
  if (device === undefined) {
    push("device", `No device has id ${JSON.stringify(peek(request, "deviceId"))}.`, {
      deviceId: peek(request, "deviceId"),
    });
    return;
  }
  const d = sys.snapshot.devices[device.index_]!;
  const node = device.node_;
  const nodeSnap = sys.snapshot.cloudNodes.find((n) => n.id === node.id);
  const zone = (nodeSnap as { timezone?: string } | undefined)?.timezone ?? sys.snapshot.timezone;
  const inputAllowed = decision.reason !== "inputTypeNotAllowed";
  push(
    "device",
    `${d.name} (${d.type}) on cloud node ${node.id}; input ${input} ${inputAllowed ? "is accepted" : `is not among its input types (${(d.inputTypes ?? []).join(", ")})`}.`,
    {
      deviceId: d.id,
      name: d.name,
      type: d.type,
      cloudNodeId: node.id,
      timezone: zone,
      inputTypes: d.inputTypes ?? null,
      inputAllowed,
    },
  );
  if (!inputAllowed) return;
  const c: Seen = { sys, rec, decision, push, kind, credential, pin, nodeState, device, d, node, zone };
  if (!describeRead(c) || !describeFallback(c)) return;
  const holder = describeCredential(c);
  if (holder !== null && describeHolder(c, holder) && describeRules(c)) describeAreas(c, holder, state);
}

/** After the rules allowed at an entry of areas, with state (AB2–AB5): each area's check. */
function describeAreas(c: Seen, holder: Holder, state: AccessStateView | undefined): void {
  const { device, decision, push, rec } = c;
  if (state === undefined || device.entryOf_.length === 0 || decision.holderId === null) return;
  const areas = device.entryOf_.map((a) => ({
    areaId: a.id,
    antiPassback: a.antiPassback_ === AP_NONE ? null : a.antiPassback_ === AP_HARD ? "hard" : "soft",
    resetSeconds: a.resetMs_ / 1000,
    occupancyLimit: a.limit_ < 0 ? null : a.limit_,
    enteredAt: state.enteredAt(a.id, holder.id) ?? null,
    occupancy: state.occupancy(a.id),
  }));
  const inside = areas.filter((a) => a.enteredAt !== null).map((a) => a.areaId);
  push(
    "areas",
    `An entry of ${areas.map((a) => a.areaId).join(", ")}; the holder is ${inside.length === 0 ? "inside none" : `inside ${inside.join(", ")}`}${STEP_OF_REASON[decision.reason] === "areas" ? ` — ${decision.reason}` : ": the areas let the holder in"}.`,
    { at: rec.at, areas },
  );
}

/** What the steps after the device share: the call's arguments and what the first steps found. */
interface Seen {
  readonly sys: CompiledSystem;
  readonly rec: Recorder;
  readonly decision: Decision;
  readonly push: (step: TraceStepName, summary: string, details: Record<string, unknown>) => void;
  readonly kind: "pin" | "wiegand" | "credentialNumber" | "mobile";
  readonly credential: Record<string, unknown> | null | undefined;
  readonly pin: unknown;
  readonly nodeState: Record<string, unknown> | null | undefined;
  readonly device: CompiledDevice;
  readonly d: Device;
  readonly node: CompiledNode;
  readonly zone: string;
}

/** Step 2: the read (formats, decoded fields, facility-code policy); false when it decided. */
function describeRead(c: Seen): boolean {
  const { rec, decision, push, kind, credential, node } = c;
  // 2. Read.
  const read = rec.read;
  if (kind === "wiegand") {
    const bits = String(credential!.wiegand);
    if (read === null || read.format === null) {
      push("read", `No card format of the node reads ${bits.length} bits.`, {
        bits: bits.length,
        formats: node.formats_.map((f) => ({ id: f.id, minBits: f.min_, maxBits: f.max_ })),
      });
      return false;
    }
    const f = read.format;
    const fcOk = decision.reason !== "facilityCodeNotAllowed";
    push(
      "read",
      `Format ${f.id} (${f.min_}…${f.max_} bits) decodes ${bits.length} bits: facility code ${field(read.fc) ?? "none"}, card number ${field(read.cn) ?? "none"}; parity ${read.parityOk ? "ok" : f.enforceParity_ ? "fails (enforced)" : "fails (not enforced)"}; facility-code policy ${FC_POLICY_NAMES[f.fcPolicy_]}${f.fcPolicy_ === FC_POLICY.FILTER_LIST ? (fcOk ? ", code allowed" : ", code not in the list") : ""}.`,
      {
        bits: bits.length,
        format: f.id,
        facilityCode: field(read.fc),
        credentialNumber: field(read.cn),
        parityOk: read.parityOk,
        enforceParity: f.enforceParity_,
        facilityCodePolicy: FC_POLICY_NAMES[f.fcPolicy_],
        ...(f.fcPolicy_ === FC_POLICY.FILTER_LIST
          ? { allowedFacilityCodes: [...f.allowedFc_].sort((a, b) => a - b) }
          : {}),
      },
    );
  } else if (kind === "credentialNumber" && read !== null && read.format !== null) {
    const f = read.format;
    push(
      "read",
      `Already decoded: facility code ${field(read.fc) ?? "none"}, card number ${read.cn}; facility-code policy ${FC_POLICY_NAMES[f.fcPolicy_]} of the node's first format ${f.id}.`,
      {
        format: f.id,
        facilityCode: field(read.fc),
        credentialNumber: field(read.cn),
        facilityCodePolicy: FC_POLICY_NAMES[f.fcPolicy_],
      },
    );
  } else
    push("read", kind === "mobile" ? "A mobile credential: nothing to decode." : "A PIN alone: nothing to decode.", {});
  return STEP_OF_REASON[decision.reason] !== "read";
}

/** Step 3: the fallback mode; false when it decided. */
function describeFallback(c: Seen): boolean {
  const { rec, decision, push, nodeState, node } = c;
  // 3. Fallback modes.
  const mode = rec.mode;
  const online = nodeState === undefined || nodeState === null || nodeState.online !== false;
  const level = node.threatLevel_;
  // TL4: a raised threat level lets e-cards through, online too.
  const threat =
    level === 0
      ? ""
      : ` Threat level ${level}: ${decision.reason === "ecard" ? "the card is an e-card, which passes" : "e-cards pass; this is no e-card read"}.`;
  push(
    "fallback",
    online
      ? `The node is online: no fallback.${threat}`
      : `The node is offline (${nodeState!.timeKnown === false ? "time unknown" : `${String(nodeState!.offlineSeconds)} s, kill timer ${node.killTimer_} s`}, offline policy ${node.offlinePolicy_}): mode ${MODE_NAMES[mode]}${mode !== MODE_NORMAL ? `; ${decision.reason === "ecard" ? "the card is an e-card" : "not an e-card"}` : ""}.${threat}`,
    {
      online,
      threatLevel: level,
      mode: MODE_NAMES[mode],
      killTimer: node.killTimer_,
      offlinePolicy: node.offlinePolicy_,
      ...(online
        ? {}
        : { offlineSeconds: nodeState!.offlineSeconds ?? null, timeKnown: nodeState!.timeKnown !== false }),
    },
  );
  return STEP_OF_REASON[decision.reason] !== "fallback" && mode !== MODE_ECARD;
}

/** Step 4: the credential and its holder; the holder, or null when this step decided. */
function describeCredential(c: Seen): Holder | null {
  const { sys, rec, decision, push, kind, credential, pin, device } = c;
  const read = rec.read;
  // 4. Credential.
  if (rec.holder < 0) {
    const slot = rec.card;
    const summary =
      decision.reason === "facilityCodeMismatch"
        ? `Credential ${rec.wide?.id_ ?? sys.cardIds_[sys.cardTable_[slot + 3]! | 0]} has number ${read?.cn} but facility code ${field(rec.wide?.fc_ ?? sys.cardTable_[slot + 1]!) ?? "none"}, not ${field(read?.fc ?? -1) ?? "none"} (ENFORCED).`
        : decision.reason === "unknownPin"
          ? "No holder has this PIN."
          : decision.reason === "ambiguousPin"
            ? "More than one holder has this PIN."
            : kind === "mobile"
              ? `No ${String(credential!.mobile)} credential has id ${JSON.stringify(credential!.credentialId)}.`
              : `No card credential has number ${field(read?.cn ?? -1) ?? "(none)"}.`;
    push("credential", summary, {});
    return null;
  }
  const holder = sys.holders_[rec.holder]!;
  const pinStr = typeof pin === "string" ? pin : null;
  const pinOk = pinStr !== null && (pinStr === holder.pin || pinStr === holder.duressPin);
  const how = kind === "pin" ? "PIN" : kind === "mobile" ? `${String(credential!.mobile)} credential` : "card";
  push(
    "credential",
    `${how === "PIN" ? "The PIN" : `The ${how} ${decision.credentialId}`} belongs to holder ${holder.id} (${holder.firstName} ${holder.lastName})${pinStr !== null && kind !== "pin" ? `; the PIN ${pinOk ? "is correct" : "matches neither of the holder's PINs"}` : ""}${decision.duress ? "; it is the duress PIN" : ""}${STEP_OF_REASON[decision.reason] === "credential" ? ` — ${decision.reason}` : ""}.`,
    {
      holderId: holder.id,
      credentialId: decision.credentialId,
      by: how,
      pinCorrect: pinStr === null ? null : pinOk,
      duress: decision.duress,
      secureReadsOnly: device.secured_,
      bleSupported: device.ble_,
    },
  );
  return STEP_OF_REASON[decision.reason] === "credential" ? null : holder;
}

/** Step 5: the holder's state and the local time; false when it decided (or no rule was walked). */
function describeHolder(c: Seen, holder: Holder): boolean {
  const { rec, decision, push, zone } = c;
  // 5. Holder.
  const timeKnown = !Number.isNaN(rec.local);
  const offset = rec.local - rec.at;
  const localIso = timeKnown ? isoLocal(rec.local - offset, offset) : null;
  push(
    "holder",
    `${holder.enabled ? "Enabled" : "Disabled"}; valid from ${holder.activeDate ?? "always"} until ${holder.expireDate ?? "never"}${timeKnown ? `; local time at the node ${localIso} (${zone})` : "; time not looked at (offline, time unknown)"}${STEP_OF_REASON[decision.reason] === "holder" ? ` — ${decision.reason}` : ""}.`,
    {
      holderId: holder.id,
      enabled: holder.enabled,
      activeDate: holder.activeDate ?? null,
      expireDate: holder.expireDate ?? null,
      localTime: localIso,
      utc: timeKnown ? isoInstant(rec.local - offset) : null,
      timezone: zone,
      utcOffset: timeKnown ? isoOffset(offset) : null,
    },
  );
  return STEP_OF_REASON[decision.reason] !== "holder" && rec.rules !== null;
}

/** Steps 6–8: every rule decide's walk met, with its verdict; then the authentication policy and floors. False when the rules decided. */
function describeRules(c: Seen): boolean {
  const { sys, rec, decision, push, device, d } = c;
  // 6. Rules: every rule of the holder's groups that reaches the device, with its verdict.
  const r = rec.rules!;
  const candidates = candidateRules(sys, device, rec.walked, r.factor, r.mode, r.day, rec.local);
  const applicable = candidates.filter((c) => c.applicable);
  const byCalendar = candidates.filter((c) => c.calendar?.closedIt === true);
  const byLevel = candidates.filter((c) => c.threatLevel?.setAside === true);
  const calendarNote =
    (byCalendar.length === 0
      ? ""
      : `; closed by ${byCalendar.length === 1 ? "its calendar" : "their calendars"}: ${byCalendar.map((c) => `${c.ruleId} (calendar ${c.calendar!.id})`).join(", ")}`) +
    (byLevel.length === 0
      ? ""
      : `; set aside by threat level ${device.node_.threatLevel_}: ${byLevel.map((c) => `${c.ruleId} (up to level ${c.threatLevel!.max})`).join(", ")}`);
  push(
    "rules",
    candidates.length === 0
      ? "No rule of the holder's groups reaches this device."
      : `${candidates.length} rule${candidates.length === 1 ? "" : "s"} of the holder's groups reach${candidates.length === 1 ? "es" : ""} this device; ${applicable.length} applicable${calendarNote}${r.minDeny !== NONE ? `; deny rule ${sys.ruleIds_[r.minDeny]} decides` : r.minAllow === NONE ? "; no allow rule applies" : ""}.`,
    { localWeekday: WEEKDAYS[weekdayOf(r.day)], mode: MODE_NAMES[r.mode], candidates },
  );
  if (STEP_OF_REASON[decision.reason] === "rules") return false;

  // 7–8. Authentication policy, floors.
  const policySummary =
    r.minAccepted !== NONE
      ? `Factors presented: ${factorName(r.factor)}. Rule ${sys.ruleIds_[r.minAccepted]} (smallest id accepting them) allows${device.elevator_ ? `; floors ${decision.floors.join(", ")}` : ""}.`
      : `Factors presented: ${factorName(r.factor)}. No applicable allow rule accepts them; rule ${sys.ruleIds_[r.minAllow]} (smallest id) gives ${decision.reason}.`;
  push("policy", policySummary, {
    factors: factorName(r.factor),
    devicePolicy: d.authenticationPolicy ?? null,
    acceptingRuleId: r.minAccepted === NONE ? null : sys.ruleIds_[r.minAccepted],
    floors: [...decision.floors],
  });
  return r.minAccepted !== NONE;
}

/** The rules decide's walk met (`walked`: rank, verdict), each once, with what it found, by id. */
function candidateRules(
  sys: CompiledSystem,
  device: CompiledDevice,
  walked: readonly number[],
  factor: number,
  mode: number,
  day: number,
  local: number,
): TraceRule[] {
  const out: TraceRule[] = [];
  const data = sys.ruleData_;
  const tod = local - day * MS_PER_DAY;
  const seen = new Set<number>();
  for (let j = 0; j < walked.length; j += 2) {
    const rank = walked[j]!;
    const verdict = walked[j + 1]!;
    if (seen.has(rank)) continue;
    seen.add(rank);
    const base = rank * RULE_STRIDE;
    const flags = data[base + R_FLAGS]!;
    const allow = (flags & RF_ALLOW) !== 0;
    const mask = data[base + R_POLICY]! & device.policy_;
    const rule = sys.rules_[rank]!.rule_;
    const calendar =
      rule.calendar === undefined || rule.calendar === null
        ? undefined
        : {
            id: rule.calendar.id,
            mode: rule.calendar.mode,
            closedIt:
              mode === MODE_NORMAL &&
              verdict === RULE_CLOSED &&
              ruleOpenWithoutCalendar(data, sys.calendarData_, base, day, weekdayOf(day), tod),
          };
    out.push({
      ruleId: rule.id,
      name: rule.name ?? null,
      groupId: rule.groupId,
      allow,
      window: describeWindow(rule),
      open: mode === MODE_NORMAL ? verdict !== RULE_CLOSED : null,
      is24x7: allow && (flags & RF_24X7) !== 0,
      applicable: verdict !== RULE_CLOSED && verdict !== RULE_OFF_SCHEDULE && verdict !== RULE_THREAT,
      effectivePolicy: allow ? policyName(mask) : null,
      acceptsFactors: allow ? (mask & factor) !== 0 : null,
      ...(calendar === undefined ? {} : { calendar }),
      ...(allow && device.node_.threatLevel_ > 0
        ? {
            threatLevel: {
              level: device.node_.threatLevel_,
              max: flags >>> RF_THREAT_SHIFT,
              setAside: verdict === RULE_THREAT,
            },
          }
        : {}),
    });
  }
  out.sort((a, b) => (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0));
  return out;
}
