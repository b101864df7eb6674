// The access request of SPEC §2 and its validation. One checker serves both the hot path (no sink:
// no strings are built) and the adapters (a sink collects every problem with its path).
import type { Issue } from "./issue.js";
import { MAX_INSTANT, MIN_INSTANT, readInstant } from "./time.js";
import type { InputType } from "./types.js";

/** A credential presented at a reader: at most one of these shapes. */
export type CredentialInput =
  | { readonly wiegand: string }
  | { readonly credentialNumber: number; readonly facilityCode?: number | null }
  | { readonly mobile: "touch" | "token"; readonly credentialId: string };

/** The cloud node's connectivity when the scan happened. */
export type NodeState =
  | { readonly online: true }
  | { readonly online: false; readonly offlineSeconds?: number; readonly timeKnown?: boolean };

/**
 * One scan at one device (SPEC §2).
 * CAUTION: this type is publicly exported; its shape is part of the API.
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isDigits(s: unknown): boolean {
  if (typeof s !== "string" || s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** Longest Wiegand frame a request may carry. */
export const MAX_FRAME_BITS = 512;

/**
 * `[i]`: bit i (0 or 1) of the `wiegand` frame of the last request checkRequest accepted, so that
 * decide reads each character of the frame once. Internal, like `_checkedAt`.
 */
export const _checkedBits = new Uint8Array(MAX_FRAME_BITS);

/** A frame of 9 to 512 `0`/`1` characters; copies its bits into `_checkedBits` on the way. */
function isBits(s: unknown): boolean {
  if (typeof s !== "string" || s.length < 9 || s.length > MAX_FRAME_BITS) return false;
  const bits = _checkedBits;
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

function isCount(v: unknown): boolean {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/**
 * `[0]`: the instant of the last request checkRequest accepted, so that decide parses `at` only once
 * and reads it without a boxed number. Internal: valid only right after a successful checkRequest on
 * the same request.
 */
export const _checkedAt = new Float64Array(1);

/**
 * Checks a request against SPEC §2. With a `sink`, every problem is pushed with its path and a
 * sentence; without one, it stops at the first problem and builds no string (the hot path).
 * @returns true when the request is well formed.
 */
export function checkRequest(req: unknown, sink: Issue[] | null): boolean {
  if (!isObject(req)) {
    if (sink !== null) sink.push({ code: "invalidType", path: [], message: "A request is a JSON object." });
    return false;
  }
  const before = sink === null ? 0 : sink.length;
  const bad = report;
  if (typeof req.deviceId !== "string" || req.deviceId.length === 0) {
    if (!bad(sink, ["deviceId"], "Must be a non-empty device id.")) return false;
  }
  const ok = readInstant(req.at, _checkedAt);
  const at = _checkedAt[0]!;
  if (!ok) {
    if (!bad(sink, ["at"], "Must be an ISO 8601 instant with Z or an offset, or epoch milliseconds.")) return false;
  } else if (at < MIN_INSTANT || at >= MAX_INSTANT) {
    if (!bad(sink, ["at"], "Must lie between 1970-01-01T00:00:00Z and 2100-01-01T00:00:00Z.")) return false;
  }
  const cred = req.credential;
  const hasCredential = cred !== undefined && cred !== null;
  if (hasCredential) {
    if (!isObject(cred)) {
      if (!bad(sink, ["credential"], "Must be an object with wiegand, credentialNumber or mobile.")) return false;
    } else {
      const kinds = (cred.wiegand !== undefined ? 1 : 0) + (cred.credentialNumber !== undefined ? 1 : 0) + (cred.mobile !== undefined ? 1 : 0);
      if (kinds !== 1) {
        if (!bad(sink, ["credential"], "Must hold exactly one of wiegand, credentialNumber or mobile.")) return false;
      } else if (cred.wiegand !== undefined) {
        if (!isBits(cred.wiegand) && !bad(sink, ["credential", "wiegand"], "Must be 9 to 512 characters of 0 and 1.")) return false;
      } else if (cred.credentialNumber !== undefined) {
        if (!isCount(cred.credentialNumber) && !bad(sink, ["credential", "credentialNumber"], "Must be a non-negative integer.")) return false;
        const fc = cred.facilityCode;
        if (fc !== undefined && fc !== null && !isCount(fc) && !bad(sink, ["credential", "facilityCode"], "Must be a non-negative integer or null."))
          return false;
      } else {
        if (cred.mobile !== "touch" && cred.mobile !== "token" && !bad(sink, ["credential", "mobile"], 'Must be "touch" or "token".')) return false;
        if ((typeof cred.credentialId !== "string" || cred.credentialId.length === 0) && !bad(sink, ["credential", "credentialId"], "Must be a non-empty credential id."))
          return false;
      }
    }
  }
  const input = req.input;
  if (input !== undefined && input !== "wiegand" && input !== "unencryptedOsdp" && input !== "encryptedOsdp") {
    if (!bad(sink, ["input"], 'Must be "wiegand", "unencryptedOsdp" or "encryptedOsdp".')) return false;
  }
  const pin = req.pin;
  const hasPin = pin !== undefined && pin !== null;
  if (hasPin && !isDigits(pin)) {
    if (!bad(sink, ["pin"], "Must be a non-empty string of digits.")) return false;
  }
  if (!hasCredential && !hasPin) {
    if (!bad(sink, [], "Present a credential, a PIN, or both.")) return false;
  }
  const node = req.node;
  if (node !== undefined && node !== null) {
    if (!isObject(node) || typeof node.online !== "boolean") {
      if (!bad(sink, ["node", "online"], "Must be true or false.")) return false;
    } else if (!node.online) {
      const tk = node.timeKnown;
      if (tk !== undefined && typeof tk !== "boolean") {
        if (!bad(sink, ["node", "timeKnown"], "Must be true or false.")) return false;
      }
      const os = node.offlineSeconds;
      if (tk !== false && os === undefined) {
        if (!bad(sink, ["node", "offlineSeconds"], "Is required when the node is offline and knows the time.")) return false;
      } else if (os !== undefined && !isCount(os)) {
        if (!bad(sink, ["node", "offlineSeconds"], "Must be a non-negative integer.")) return false;
      }
    }
  }
  // Without a sink every problem returned early; with one, no new issue means well formed.
  return sink === null || sink.length === before;
}

/**
 * Every problem of an access request (SPEC §2), with paths; what adapters check before deciding.
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
