// The access request (docs/semantics.md R lines) and its validation. One checker serves both the hot path (no sink:
// no strings are built) and the adapters (a sink collects every problem with its path).
import { type CardNumber, cardNumberProblem, cardNumberValue, isCardNumber } from "./cardNumber.js";
import type { Issue } from "./issue.js";
import { MAX_INSTANT, MIN_INSTANT, readInstant } from "./time.js";
import type { InputType } from "./types.js";

/** A credential presented at a reader: at most one of these shapes. */
export type CredentialInput =
  | { readonly wiegand: string }
  | {
      /** A non-negative safe integer, or a decimal string (any value up to 2^512−1; CN2). */
      readonly credentialNumber: CardNumber;
      readonly facilityCode?: number | null;
    }
  | { readonly mobile: "touch" | "token"; readonly credentialId: string };

/** The cloud node's connectivity when the scan happened. */
export type NodeState =
  | { readonly online: true }
  | { readonly online: false; readonly offlineSeconds?: number; readonly timeKnown?: boolean };

/**
 * One scan at one device.
 */
export interface AccessRequest {
  readonly deviceId: string;
  /** ISO 8601 with `Z` or an offset, or epoch milliseconds. */
  readonly at: string | number;
  readonly credential?: CredentialInput | null;
  /** Reader channel; default `wiegand`. */
  readonly input?: InputType;
  /** Keypad entry, digits. */
  readonly pin?: string | null;
  /** Default `{ online: true }`. */
  readonly node?: NodeState | null;
}

/** Longest Wiegand frame a request may carry. */
export const MAX_FRAME_BITS = 512;

/**
 * One request's fields, each read exactly once, and what checking them found. The caller owns it:
 * decide keeps one, and since every field is copied in only after the last getter of the request
 * has run, a getter that calls decide again (re-entrancy) cannot leave the outer call half-read.
 * Internal, like checkRequest.
 */
export class RequestFields {
  deviceId: unknown = undefined;
  at: unknown = undefined;
  /** request.credential is present (neither undefined nor null), and whether it is an object. */
  hasCredential = false;
  credentialIsObject = false;
  wiegand: unknown = undefined;
  /** After a successful check: a number, or the canonical string of a value past 2^53−1 (CN2). */
  credentialNumber: unknown = undefined;
  facilityCode: unknown = undefined;
  mobile: unknown = undefined;
  credentialId: unknown = undefined;
  input: unknown = undefined;
  pin: unknown = undefined;
  /** request.node is present, and whether it is an object. */
  hasNode = false;
  nodeIsObject = false;
  online: unknown = undefined;
  timeKnown: unknown = undefined;
  offlineSeconds: unknown = undefined;
  /** After a successful check: the instant of `at` in epoch ms (`instant_[0]`). */
  readonly instant_ = new Float64Array(1);
  /** After a successful check of a `wiegand` frame: bit i (0 or 1) of the frame at `[i]`. */
  readonly bits_ = new Uint8Array(MAX_FRAME_BITS);
}

// Which field was being read when reading threw (a throwing getter, a Proxy trap, a revoked Proxy).
const READ_OK = 0;
const NOT_AN_OBJECT = 1;
const UNREADABLE_PATHS: readonly (readonly (string | number)[])[] = [
  [],
  [],
  [],
  ["deviceId"],
  ["at"],
  ["credential"],
  ["credential", "wiegand"],
  ["credential", "credentialNumber"],
  ["credential", "mobile"],
  ["credential", "facilityCode"],
  ["credential", "credentialId"],
  ["input"],
  ["pin"],
  ["node"],
  ["node", "online"],
  ["node", "timeKnown"],
  ["node", "offlineSeconds"],
];

/** A JSON object: not null, not an array. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Reads every field of `req` that a decision looks at (docs/semantics.md R7), each exactly once, into locals; only when all
 * reads are done are they copied into `f`. Never throws.
 * @returns READ_OK, NOT_AN_OBJECT, or the index in UNREADABLE_PATHS of the field whose read threw.
 */
function readFields(req: unknown, f: RequestFields): number {
  let step = 2;
  let deviceId: unknown;
  let at: unknown;
  let hasCredential = false;
  let credentialIsObject = false;
  let wiegand: unknown;
  let credentialNumber: unknown;
  let facilityCode: unknown;
  let mobile: unknown;
  let credentialId: unknown;
  let input: unknown;
  let pin: unknown;
  let hasNode = false;
  let nodeIsObject = false;
  let online: unknown;
  let timeKnown: unknown;
  let offlineSeconds: unknown;
  try {
    // Array.isArray throws on a revoked Proxy.
    if (!isObject(req)) return NOT_AN_OBJECT;
    step = 3;
    deviceId = req.deviceId;
    step = 4;
    at = req.at;
    step = 5;
    const cred = req.credential;
    hasCredential = cred !== undefined && cred !== null;
    if (hasCredential && isObject(cred)) {
      credentialIsObject = true;
      step = 6;
      wiegand = cred.wiegand;
      step = 7;
      credentialNumber = cred.credentialNumber;
      step = 8;
      mobile = cred.mobile;
      if (wiegand === undefined && mobile === undefined && credentialNumber !== undefined) {
        step = 9;
        facilityCode = cred.facilityCode;
      } else if (wiegand === undefined && credentialNumber === undefined && mobile !== undefined) {
        step = 10;
        credentialId = cred.credentialId;
      }
    }
    step = 11;
    input = req.input;
    step = 12;
    pin = req.pin;
    step = 13;
    const node = req.node;
    hasNode = node !== undefined && node !== null;
    if (hasNode && isObject(node)) {
      nodeIsObject = true;
      step = 14;
      online = node.online;
      if (online === false) {
        step = 15;
        timeKnown = node.timeKnown;
        step = 16;
        offlineSeconds = node.offlineSeconds;
      }
    }
  } catch {
    return step;
  }
  f.deviceId = deviceId;
  f.at = at;
  f.hasCredential = hasCredential;
  f.credentialIsObject = credentialIsObject;
  f.wiegand = wiegand;
  f.credentialNumber = credentialNumber;
  f.facilityCode = facilityCode;
  f.mobile = mobile;
  f.credentialId = credentialId;
  f.input = input;
  f.pin = pin;
  f.hasNode = hasNode;
  f.nodeIsObject = nodeIsObject;
  f.online = online;
  f.timeKnown = timeKnown;
  f.offlineSeconds = offlineSeconds;
  return READ_OK;
}

/** A non-empty string of ASCII digits (a PIN); the reader handles check theirs with it too. */
export function isDigits(s: unknown): boolean {
  if (typeof s !== "string" || s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** A frame of 9 to 512 `0`/`1` characters; copies its bits into `bits` on the way. */
function isBits(s: unknown, bits: Uint8Array): boolean {
  if (typeof s !== "string" || s.length < 9 || s.length > MAX_FRAME_BITS) return false;
  for (let i = 0; i < s.length; i++) {
    const b = s.charCodeAt(i) - 48;
    if (b !== 0 && b !== 1) return false;
    bits[i] = b;
  }
  return true;
}

/** Records one problem; tells the caller whether to go on (only when collecting). */
function report(sink: Issue[] | null, path: (string | number)[], message: string): boolean {
  if (sink === null) return false;
  sink.push({ code: "invalid", path, message });
  return true;
}

/** A non-negative safe integer (a card number, a facility code, a count). */
export function isCount(v: unknown): boolean {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/** What is wrong with a number field that is not a count: NaN and ±Infinity say so. */
function countProblem(v: unknown, orNull: boolean): string {
  if (typeof v === "number" && !Number.isFinite(v)) return "Must be a finite number.";
  return orNull ? "Must be a non-negative integer or null." : "Must be a non-negative integer.";
}

/**
 * Checks a request against docs/semantics.md R1–R7. Each field of `req` is read exactly once, into `fields`, before
 * any is checked; a request that cannot be read (a getter or Proxy trap throws, a revoked Proxy) is
 * malformed. With a `sink`, every problem is pushed with its path and a sentence; without one, it
 * stops at the first problem and builds no string (the hot path). Never throws.
 * @param fields - owned by the caller; after a true answer it holds the fields to decide with.
 * @returns true when the request is well formed.
 */
export function checkRequest(req: unknown, sink: Issue[] | null, fields: RequestFields = new RequestFields()): boolean {
  const read = readFields(req, fields);
  if (read !== READ_OK) {
    if (sink !== null) {
      if (read === NOT_AN_OBJECT) sink.push({ code: "invalidType", path: [], message: "A request is a JSON object." });
      else
        sink.push({
          code: "unreadable",
          path: [...UNREADABLE_PATHS[read]!],
          message: "Could not be read: reading it threw an error.",
        });
    }
    return false;
  }
  const f = fields;
  const before = sink === null ? 0 : sink.length;
  const bad = report;
  const deviceId = f.deviceId;
  if (typeof deviceId !== "string" || deviceId.length === 0) {
    if (!bad(sink, ["deviceId"], "Must be a non-empty device id.")) return false;
  }
  const ok = readInstant(f.at, f.instant_);
  const at = f.instant_[0]!;
  if (!ok) {
    const atProblem =
      typeof f.at === "number" && !Number.isFinite(f.at)
        ? "Must be a finite number."
        : "Must be an ISO 8601 instant with Z or an offset, or epoch milliseconds.";
    if (!bad(sink, ["at"], atProblem)) return false;
  } else if (at < MIN_INSTANT || at >= MAX_INSTANT) {
    if (!bad(sink, ["at"], "Must lie between 1970-01-01T00:00:00Z and 2100-01-01T00:00:00Z.")) return false;
  }
  const hasCredential = f.hasCredential;
  if (hasCredential) {
    if (!f.credentialIsObject) {
      if (!bad(sink, ["credential"], "Must be an object with wiegand, credentialNumber or mobile.")) return false;
    } else {
      const wiegand = f.wiegand;
      const credentialNumber = f.credentialNumber;
      const mobile = f.mobile;
      const kinds =
        (wiegand !== undefined ? 1 : 0) + (credentialNumber !== undefined ? 1 : 0) + (mobile !== undefined ? 1 : 0);
      if (kinds !== 1) {
        if (!bad(sink, ["credential"], "Must hold exactly one of wiegand, credentialNumber or mobile.")) return false;
      } else if (wiegand !== undefined) {
        if (
          !isBits(wiegand, f.bits_) &&
          !bad(sink, ["credential", "wiegand"], "Must be 9 to 512 characters of 0 and 1.")
        )
          return false;
      } else if (credentialNumber !== undefined) {
        if (typeof credentialNumber === "string") {
          // CN2: a decimal string, in its one spelling from here on (a safe value becomes the number).
          if (isCardNumber(credentialNumber)) f.credentialNumber = cardNumberValue(credentialNumber);
          else if (!bad(sink, ["credential", "credentialNumber"], cardNumberProblem(credentialNumber, false)))
            return false;
        } else if (
          !isCount(credentialNumber) &&
          !bad(sink, ["credential", "credentialNumber"], countProblem(credentialNumber, false))
        )
          return false;
        const fc = f.facilityCode;
        if (
          fc !== undefined &&
          fc !== null &&
          !isCount(fc) &&
          !bad(sink, ["credential", "facilityCode"], countProblem(fc, true))
        )
          return false;
      } else {
        if (
          mobile !== "touch" &&
          mobile !== "token" &&
          !bad(sink, ["credential", "mobile"], 'Must be "touch" or "token".')
        )
          return false;
        const credentialId = f.credentialId;
        if (
          (typeof credentialId !== "string" || credentialId.length === 0) &&
          !bad(sink, ["credential", "credentialId"], "Must be a non-empty credential id.")
        )
          return false;
      }
    }
  }
  const input = f.input;
  if (input !== undefined && input !== "wiegand" && input !== "unencryptedOsdp" && input !== "encryptedOsdp") {
    if (!bad(sink, ["input"], 'Must be "wiegand", "unencryptedOsdp" or "encryptedOsdp".')) return false;
  }
  const pin = f.pin;
  const hasPin = pin !== undefined && pin !== null;
  if (hasPin && !isDigits(pin)) {
    if (!bad(sink, ["pin"], "Must be a non-empty string of digits.")) return false;
  }
  if (!hasCredential && !hasPin) {
    if (!bad(sink, [], "Present a credential, a PIN, or both.")) return false;
  }
  if (f.hasNode) {
    const online = f.online;
    if (!f.nodeIsObject || typeof online !== "boolean") {
      if (!bad(sink, ["node", "online"], "Must be true or false.")) return false;
    } else if (!online) {
      const tk = f.timeKnown;
      if (tk !== undefined && typeof tk !== "boolean") {
        if (!bad(sink, ["node", "timeKnown"], "Must be true or false.")) return false;
      }
      const os = f.offlineSeconds;
      if (tk !== false && os === undefined) {
        if (!bad(sink, ["node", "offlineSeconds"], "Is required when the node is offline and knows the time."))
          return false;
      } else if (os !== undefined && !isCount(os)) {
        if (!bad(sink, ["node", "offlineSeconds"], countProblem(os, false))) return false;
      }
    }
  }
  // Without a sink every problem returned early; with one, no new issue means well formed.
  return sink === null || sink.length === before;
}

/**
 * Every problem of an access request, with paths; what adapters check before deciding.
 * Never throws: each field is read once, and a field that cannot be read (a throwing getter or
 * Proxy trap, a revoked Proxy) is an `unreadable` issue at its path.
 * @param req - parsed JSON of any shape.
 * @returns the problems, empty when the request is well formed.
 * @example
 * requestIssues({ deviceId: "d1", at: "2026-11-21 14:03" }).map((i) => i.path.join("."));
 * //=> ["at", ""]   (no offset in `at`; neither a credential nor a PIN)
 */
export function requestIssues(req: unknown): Issue[] {
  const sink: Issue[] = [];
  checkRequest(req, sink);
  return sink;
}
