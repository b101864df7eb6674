// The decision shape and its reason codes (docs/semantics.md E lines).
import type { CardNumber } from "./cardNumber.js";

/** What a scan came to: `unknown` when the credential could not be tied to a holder. */
export type Outcome = "allowed" | "denied" | "unknown";
/** The event topic of a decision, one per outcome. */
export type Topic = "device.request.allowed" | "device.request.denied" | "device.request.unknown";

/**
 * Every outcome, in the order of its code in decideBatch's `outcome` column (0 allowed, 1 denied, 2 unknown).
 * @example
 * OUTCOME_CODES[1]; //=> "denied"
 */
export const OUTCOME_CODES: readonly Outcome[] = ["allowed", "denied", "unknown"];

/** Reasons of an `allowed` decision. */
export type AllowedReason = "allowed" | "ecard" | "offline24x7" | "offlineAnySchedule" | "antiPassbackSoft";
/** Reasons of an `unknown` decision: the credential could not be tied to a holder. */
export type UnknownReason = "unknownCardFormat" | "unknownCredential" | "facilityCodeMismatch" | "unknownPin";
/** Reasons of a `denied` decision. */
export type DeniedReason =
  | "badRequest"
  | "unknownDevice"
  | "inputTypeNotAllowed"
  | "parityError"
  | "facilityCodeNotAllowed"
  | "offlineEcardOnly"
  | "offlineNot24x7"
  | "credentialPending"
  | "bleNotSupported"
  | "insecureRead"
  | "ambiguousPin"
  | "holderDisabled"
  | "holderNotYetActive"
  | "holderExpired"
  | "noActiveRule"
  | "deniedByRule"
  | "wrongPin"
  | "pinRequired"
  | "cardRequired"
  | "threatLevel"
  | "antiPassback"
  | "occupancyLimit";
/** Every reason code. */
export type Reason = AllowedReason | UnknownReason | DeniedReason;

export const ALLOWED_REASONS: readonly AllowedReason[] = [
  "allowed",
  "ecard",
  "offline24x7",
  "offlineAnySchedule",
  "antiPassbackSoft",
];
export const UNKNOWN_REASONS: readonly UnknownReason[] = [
  "unknownCardFormat",
  "unknownCredential",
  "facilityCodeMismatch",
  "unknownPin",
];
export const DENIED_REASONS: readonly DeniedReason[] = [
  "badRequest",
  "unknownDevice",
  "inputTypeNotAllowed",
  "parityError",
  "facilityCodeNotAllowed",
  "offlineEcardOnly",
  "offlineNot24x7",
  "credentialPending",
  "bleNotSupported",
  "insecureRead",
  "ambiguousPin",
  "holderDisabled",
  "holderNotYetActive",
  "holderExpired",
  "noActiveRule",
  "deniedByRule",
  "wrongPin",
  "pinRequired",
  "cardRequired",
  "threatLevel",
  "antiPassback",
  "occupancyLimit",
];

/**
 * Every reason code, each exactly once: allowed, then unknown, then denied reasons.
 * @example
 * REASONS.includes("deniedByRule"); //=> true
 */
export const REASONS: readonly Reason[] = [...ALLOWED_REASONS, ...UNKNOWN_REASONS, ...DENIED_REASONS];

/**
 * The outcome a reason code belongs to.
 * @param reason - a reason code.
 * @returns `allowed`, `denied` or `unknown`.
 * @example
 * outcomeOf("facilityCodeMismatch"); //=> "unknown"
 */
export function outcomeOf(reason: Reason): Outcome {
  if ((ALLOWED_REASONS as readonly string[]).includes(reason)) return "allowed";
  if ((UNKNOWN_REASONS as readonly string[]).includes(reason)) return "unknown";
  return "denied";
}

/** The fields every decision has besides `outcome`, `topic` and `reason`. */
export interface DecisionFields {
  holderId: string | null;
  credentialId: string | null;
  activeRuleId: string | null;
  duress: boolean;
  /** Elevator readers: the floor-relay device ids enabled, sorted; empty elsewhere. */
  floors: readonly string[];
  facilityCode: number | null;
  /** The number read: a number up to 2^53−1, else its decimal string (CN3). */
  credentialNumber: CardNumber | null;
}

/** A decision that opened the door: `reason` is one of the {@link AllowedReason}s. */
export interface AllowedDecision extends DecisionFields {
  outcome: "allowed";
  topic: "device.request.allowed";
  reason: AllowedReason;
}

/** A decision that kept the door closed for a known or unidentifiable request: a {@link DeniedReason}. */
export interface DeniedDecision extends DecisionFields {
  outcome: "denied";
  topic: "device.request.denied";
  reason: DeniedReason;
}

/** A decision for a credential that could not be tied to a holder: an {@link UnknownReason}. */
export interface UnknownDecision extends DecisionFields {
  outcome: "unknown";
  topic: "device.request.unknown";
  reason: UnknownReason;
}

/**
 * The answer to one scan. Every field is always present, in this order: outcome, topic, reason,
 * holderId, credentialId, activeRuleId, duress, floors, facilityCode, credentialNumber.
 * `outcome` tells which of the three it is, so checking it narrows `topic` and `reason`. Which
 * reason a scan gets, and every choice behind it, is described in docs/semantics.md (shipped with
 * the package):
 *
 * ```ts
 * const d = engine.decide(request);
 * if (d.outcome === "allowed") d.reason; // AllowedReason: "allowed" | "ecard" | "offline24x7" | "offlineAnySchedule"
 * ```
 */
export type Decision = AllowedDecision | DeniedDecision | UnknownDecision;
