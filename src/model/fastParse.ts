// Fast paths for the elements a snapshot has most of, holders and rules, when every field is plainly
// valid — as most of a real building's are. The schema's generic machinery costs about 13 µs a holder
// (1.3 s of a 100,000-holder load) and 10 µs a rule, measured; these a tenth of it. Whatever a fast
// path is unsure of — a wrong type, a value out of its limits, a group given as an object, custom
// fields the schema must check — it declines, and the schema parses that element as before, with its
// messages. When it answers, the answer equals the schema's (same values, same keys in the same
// order: test/property/fastParse.test.ts compares both over random near-valid elements).
import type { z } from "zod";
import {
  AUTHENTICATION_POLICIES,
  CREDENTIAL_TYPES,
  type credentialSchema,
  holderSchema,
  type ruleSchema,
} from "./systemSchema.js";
import { isCount, isDigits, isObject } from "./request.js";
import { WEEKDAYS, parseClock, parseLocalDate, parseLocalDateTime } from "./time.js";

type ParsedHolder = z.output<typeof holderSchema>;
type ParsedRule = z.output<typeof ruleSchema>;
type ParsedCredential = z.output<typeof credentialSchema>;

/** What a fast path answers when it leaves the element to the schema. */
export const DECLINED: unique symbol = Symbol("declined");
type Declined = typeof DECLINED;

const customFieldsSchema = holderSchema.shape.customFields;

/** A string of `min`..`max` UTF-16 units. */
function str(v: unknown, min: number, max: number): string | Declined {
  return typeof v === "string" && v.length >= min && v.length <= max ? v : DECLINED;
}

/** `z.string().max(max).nullable().default(null)`. */
function optionalStr(v: unknown, max: number): string | null | Declined {
  return v === undefined || v === null ? null : str(v, 0, max);
}

/** A string that `parse` reads (a local date-time, a date) or null. */
function optionalTime(v: unknown, parse: (s: string) => number): string | null | Declined {
  if (v === undefined || v === null) return null;
  return typeof v === "string" && !Number.isNaN(parse(v)) ? v : DECLINED;
}

/** A PIN (the schema's `^[0-9]+$`) or null. */
function optionalDigits(v: unknown): string | null | Declined {
  if (v === undefined || v === null) return null;
  return isDigits(v) ? (v as string) : DECLINED;
}

/** A safe non-negative integer or null. */
function optionalCount(v: unknown): number | null | Declined {
  if (v === undefined || v === null) return null;
  return isCount(v) ? (v as number) : DECLINED;
}

function credentialTypes(v: unknown): ParsedCredential["types"] | Declined {
  if (!Array.isArray(v) || v.length === 0) return DECLINED;
  for (let i = 0; i < v.length; i++) if (!(CREDENTIAL_TYPES as readonly unknown[]).includes(v[i])) return DECLINED;
  return v.slice() as ParsedCredential["types"];
}

function credential(v: unknown, holderId: string): ParsedCredential | Declined {
  if (!isObject(v)) return DECLINED;
  const id = str(v.id, 1, Infinity);
  const credentialNumber = optionalCount(v.credentialNumber);
  const facilityCode = optionalCount(v.facilityCode);
  const description = optionalStr(v.description, 255);
  const types = credentialTypes(v.types);
  if (
    id === DECLINED ||
    credentialNumber === DECLINED ||
    facilityCode === DECLINED ||
    description === DECLINED ||
    types === DECLINED
  )
    return DECLINED;
  const card = types.includes("card");
  if ((card && credentialNumber === null) || (!card && facilityCode !== null)) return DECLINED;
  const given = v.holderId;
  if (given === undefined) {
    // Absent, the schema leaves the key out; present but undefined is the schema's to decide.
    if ("holderId" in v) return DECLINED;
    return { id, credentialNumber, facilityCode, description, types };
  }
  if (given !== holderId) return DECLINED;
  return { id, holderId: given, credentialNumber, facilityCode, description, types };
}

/** `z.array(id).default([])`; also what holders' groups are when none is given as an object. */
function ids(v: unknown): string[] | Declined {
  if (v === undefined) return [];
  if (!Array.isArray(v)) return DECLINED;
  for (let i = 0; i < v.length; i++) {
    const g: unknown = v[i];
    if (typeof g !== "string" || g.length === 0) return DECLINED;
  }
  return v.slice() as string[];
}

function credentials(v: unknown, holderId: string): ParsedCredential[] | Declined {
  if (v === undefined) return [];
  if (!Array.isArray(v)) return DECLINED;
  const out: ParsedCredential[] = new Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const c = credential(v[i], holderId);
    if (c === DECLINED) return DECLINED;
    out[i] = c;
  }
  return out;
}

function customFields(v: unknown): Record<string, unknown> | null | Declined {
  if (v === undefined) return {};
  if (v === null) return null;
  const r = customFieldsSchema.safeParse(v);
  return r.success ? r.data : DECLINED;
}

/**
 * `raw` as the holder schema parses it, when it plainly passes; DECLINED when the schema must look
 * (it may still pass there).
 * @param raw - one element of a snapshot's `holders`, as given.
 * @returns the parsed holder, or DECLINED.
 * @example
 * (fastHolder({ id: "h1", firstName: "Ada", lastName: "Byron" }) as { enabled: boolean }).enabled; //=> true
 * fastHolder({ id: "h1", firstName: "", lastName: "Byron" }) === DECLINED; //=> true
 */
export function fastHolder(raw: unknown): ParsedHolder | Declined {
  if (!isObject(raw)) return DECLINED;
  const id = str(raw.id, 1, Infinity);
  if (id === DECLINED) return DECLINED;
  const firstName = str(raw.firstName, 1, 35);
  const lastName = str(raw.lastName, 1, 35);
  const email = optionalStr(raw.email, Infinity);
  const photoUrl = optionalStr(raw.photoUrl, Infinity);
  const partition = optionalStr(raw.partition, Infinity);
  const enabledRaw = raw.enabled;
  const activeDate = optionalTime(raw.activeDate, parseLocalDateTime);
  const expireDate = optionalTime(raw.expireDate, parseLocalDateTime);
  const pin = optionalDigits(raw.pin);
  const duressPin = optionalDigits(raw.duressPin);
  if (
    firstName === DECLINED ||
    lastName === DECLINED ||
    email === DECLINED ||
    photoUrl === DECLINED ||
    partition === DECLINED ||
    (enabledRaw !== undefined && typeof enabledRaw !== "boolean") ||
    activeDate === DECLINED ||
    expireDate === DECLINED ||
    pin === DECLINED ||
    duressPin === DECLINED ||
    (pin !== null && pin === duressPin)
  )
    return DECLINED;
  const groups = ids(raw.groups);
  if (groups === DECLINED) return DECLINED;
  const creds = credentials(raw.credentials, id);
  if (creds === DECLINED) return DECLINED;
  const fields = customFields(raw.customFields);
  if (fields === DECLINED) return DECLINED;
  return {
    id,
    firstName,
    lastName,
    email,
    photoUrl,
    partition,
    enabled: enabledRaw ?? true,
    activeDate,
    expireDate,
    pin,
    duressPin,
    customFields: fields,
    groups,
    credentials: creds,
  };
}

/** Weekdays, each named once (the schema reports a weekday named twice). */
function weekdays(v: unknown): ParsedRule["recurring"] | Declined {
  if (!Array.isArray(v)) return DECLINED;
  let seen = 0;
  for (let i = 0; i < v.length; i++) {
    const day = (WEEKDAYS as readonly unknown[]).indexOf(v[i]);
    if (day < 0 || (seen & (1 << day)) !== 0) return DECLINED;
    seen |= 1 << day;
  }
  return v.slice() as ParsedRule["recurring"];
}

/**
 * `raw` as the rule schema parses it, when it plainly passes; DECLINED when the schema must look.
 * @param raw - one element of a snapshot's `rules`, as given.
 * @returns the parsed rule, or DECLINED.
 * @example
 * const r = fastRule({ id: "r1", type: "door", groupId: "g1", devices: ["d1"], startTime: "08:00:00", stopTime: "24:00:00", recurring: ["Mon"] });
 * (r as { allow: boolean }).allow; //=> true
 */
export function fastRule(raw: unknown): ParsedRule | Declined {
  if (!isObject(raw)) return DECLINED;
  const id = str(raw.id, 1, Infinity);
  const name = optionalStr(raw.name, 70);
  const type = raw.type;
  const groupId = str(raw.groupId, 1, Infinity);
  const startTime = raw.startTime;
  const stopTime = raw.stopTime;
  const allowRaw = raw.allow;
  const policy = raw.authenticationPolicy;
  const enabledRaw = raw.enabled;
  const startDate = optionalTime(raw.startDate, parseLocalDate);
  const endDate = optionalTime(raw.endDate, parseLocalDate);
  if (
    id === DECLINED ||
    name === DECLINED ||
    (type !== "door" && type !== "elevator") ||
    groupId === DECLINED ||
    typeof startTime !== "string" ||
    Number.isNaN(parseClock(startTime)) ||
    typeof stopTime !== "string" ||
    Number.isNaN(parseClock(stopTime, true)) ||
    (allowRaw !== undefined && typeof allowRaw !== "boolean") ||
    (policy !== undefined && policy !== null && !(AUTHENTICATION_POLICIES as readonly unknown[]).includes(policy)) ||
    (enabledRaw !== undefined && typeof enabledRaw !== "boolean") ||
    startDate === DECLINED ||
    endDate === DECLINED ||
    (startDate !== null && endDate !== null && startDate > endDate)
  )
    return DECLINED;
  const devices = ids(raw.devices);
  const floorGroups = ids(raw.floorGroups);
  const recurring = weekdays(raw.recurring);
  if (devices === DECLINED || floorGroups === DECLINED || recurring === DECLINED) return DECLINED;
  const allow = allowRaw ?? true;
  if (type === "door" ? floorGroups.length > 0 : devices.length > 0 || !allow) return DECLINED;
  return {
    id,
    name,
    type,
    groupId,
    devices,
    floorGroups,
    startTime,
    stopTime,
    recurring,
    allow,
    authenticationPolicy: (policy ?? null) as ParsedRule["authenticationPolicy"],
    enabled: enabledRaw ?? true,
    startDate,
    endDate,
  };
}
