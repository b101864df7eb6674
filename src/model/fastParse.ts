// Fast paths for the elements of a snapshot (all but cloud nodes and custom fields), when every field is plainly
// valid — as most of a real building's are. The schema's generic machinery costs about 13 µs a holder
// (1.3 s of a 100,000-holder load) and 10 µs a rule, measured; these a tenth of it. Whatever a fast
// path is unsure of — a wrong type, a value out of its limits, a group given as an object, custom
// fields the schema must check — it declines, and the schema parses that element as before, with its
// messages. When it answers, the answer equals the schema's (same values, same keys in the same
// order: test/property/fastParse.test.ts compares both over random near-valid elements).
import type { z } from "zod";
import {
  AUTHENTICATION_POLICIES,
  CONNECTION_TYPES,
  CREDENTIAL_TYPES,
  DEVICE_TYPES,
  INPUT_TYPES,
  PUBLIC_ICONS,
  type connectionSchema,
  type credentialSchema,
  type deviceSchema,
  type floorGroupSchema,
  type groupSchema,
  type partitionSchema,
  holderSchema,
  type ruleSchema,
  withConnectionDefaults,
} from "./systemSchema.js";
import { type CardNumber, cardNumberValue, isCardNumber } from "./cardNumber.js";
import { isCount, isDigits, isObject } from "./request.js";
import { WEEKDAYS, parseClock, parseLocalDate, parseLocalDateTime } from "./time.js";

type ParsedHolder = z.output<typeof holderSchema>;
type ParsedRule = z.output<typeof ruleSchema>;
type ParsedCredential = z.output<typeof credentialSchema>;
type ParsedDevice = z.output<typeof deviceSchema>;
type ParsedGroup = z.output<typeof groupSchema>;
type ParsedPartition = z.output<typeof partitionSchema>;
type ParsedFloorGroup = z.output<typeof floorGroupSchema>;
type ParsedConnection = z.output<typeof connectionSchema>;

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

/** A card number (cardNumberSchema) in its one spelling, or null. */
function optionalCardNumber(v: unknown): CardNumber | null | Declined {
  if (v === undefined || v === null) return null;
  if (typeof v === "number") return isCount(v) ? v : DECLINED;
  return isCardNumber(v) ? cardNumberValue(v as string) : DECLINED;
}

function credentialTypes(v: unknown): ParsedCredential["types"] | Declined {
  if (!Array.isArray(v) || v.length === 0) return DECLINED;
  for (let i = 0; i < v.length; i++) if (!(CREDENTIAL_TYPES as readonly unknown[]).includes(v[i])) return DECLINED;
  return v.slice() as ParsedCredential["types"];
}

/**
 * `v` as the credential schema parses it (a holder's credential), when it plainly passes; DECLINED
 * when the schema must look.
 * @param v - one credential, as given.
 * @param holderId - the holder it belongs to (a `holderId` it names must be this one).
 * @returns the parsed credential, or DECLINED.
 */
export function fastCredential(v: unknown, holderId: string): ParsedCredential | Declined {
  return credential(v, holderId);
}

function credential(v: unknown, holderId: string): ParsedCredential | Declined {
  if (!isObject(v)) return DECLINED;
  const id = str(v.id, 1, Infinity);
  const credentialNumber = optionalCardNumber(v.credentialNumber);
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
  // A rule with a calendar, a threat level or an action (rare) is the schema's: the fast answer keeps
  // the one shape of a rule without.
  if (!isObject(raw) || raw.calendar !== undefined || raw.maxThreatLevel !== undefined || raw.action !== undefined)
    return DECLINED;
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

/** `z.enum(values).nullable().default(null)`. */
function optionalOneOf<T extends string>(v: unknown, values: readonly T[]): T | null | Declined {
  if (v === undefined || v === null) return null;
  return (values as readonly unknown[]).includes(v) ? (v as T) : DECLINED;
}

/** `z.boolean().default(false)`. */
function flag(v: unknown): boolean | Declined {
  if (v === undefined) return false;
  return typeof v === "boolean" ? v : DECLINED;
}

/** `z.number().int().min(min).max(max).default(fallback)`. */
function intIn(v: unknown, min: number, max: number, fallback: number): number | Declined {
  if (v === undefined) return fallback;
  return typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max ? v : DECLINED;
}

/** A device's input types: the schema's default when absent, else a non-empty list of known ones. */
function inputTypes(v: unknown): ParsedDevice["inputTypes"] | Declined {
  if (v === undefined) return ["wiegand", "unencryptedOsdp", "encryptedOsdp"];
  if (!Array.isArray(v) || v.length === 0) return DECLINED;
  for (let i = 0; i < v.length; i++) if (!(INPUT_TYPES as readonly unknown[]).includes(v[i])) return DECLINED;
  return v.slice() as ParsedDevice["inputTypes"];
}

/** A device's partitions: absent is none, null stays null; only an empty list is read here. */
function devicePartitions(v: unknown): ParsedDevice["partition"] | Declined {
  if (v === undefined) return [];
  if (v === null) return null;
  return Array.isArray(v) && v.length === 0 ? [] : DECLINED;
}

/** The device's fields that need only a look at one value each; DECLINED when any does not pass. */
function deviceFields(
  raw: Record<string, unknown>,
):
  | Omit<
      ParsedDevice,
      | "id"
      | "name"
      | "cloudNode"
      | "connection"
      | "port"
      | "partition"
      | "type"
      | "publicIcon"
      | "primaryReader"
      | "inputTypes"
    >
  | Declined {
  const osdpAddress =
    raw.osdpAddress === undefined || raw.osdpAddress === null ? null : intIn(raw.osdpAddress, 0, 3, 0);
  const wirelessAddress = optionalStr(raw.wirelessAddress, Infinity);
  const readerType = raw.readerType === undefined ? "standard" : raw.readerType;
  const readerSerialNumber = optionalStr(raw.readerSerialNumber, Infinity);
  const supportBleCredentials = flag(raw.supportBleCredentials);
  const securedReadsOnly = flag(raw.securedReadsOnly);
  const delay = intIn(raw.delay, 0, 9999, 0);
  const dwell = intIn(raw.dwell, 1, 9999, 30);
  const dps = flag(raw.dps);
  const propAlarm = flag(raw.propAlarm);
  const propDelay = intIn(raw.propDelay, 0, 9999, 0);
  const rex = flag(raw.rex);
  const forcedAlarm = flag(raw.forcedAlarm);
  const autoOpenAfterFirstAllow = flag(raw.autoOpenAfterFirstAllow);
  const authenticationPolicy = optionalOneOf(raw.authenticationPolicy, AUTHENTICATION_POLICIES);
  const hardwareVersion = optionalStr(raw.hardwareVersion, Infinity);
  const serialNumber = optionalStr(raw.serialNumber, Infinity);
  const firmwareVersion = optionalStr(raw.firmwareVersion, Infinity);
  const created = optionalStr(raw.created, Infinity);
  if (
    osdpAddress === DECLINED ||
    wirelessAddress === DECLINED ||
    (readerType !== "standard" && readerType !== "touch" && readerType !== "red") ||
    readerSerialNumber === DECLINED ||
    supportBleCredentials === DECLINED ||
    securedReadsOnly === DECLINED ||
    delay === DECLINED ||
    dwell === DECLINED ||
    dps === DECLINED ||
    propAlarm === DECLINED ||
    propDelay === DECLINED ||
    rex === DECLINED ||
    forcedAlarm === DECLINED ||
    autoOpenAfterFirstAllow === DECLINED ||
    authenticationPolicy === DECLINED ||
    hardwareVersion === DECLINED ||
    serialNumber === DECLINED ||
    firmwareVersion === DECLINED ||
    created === DECLINED ||
    // The schema's checks across fields (its superRefine): any of them is the schema's to report.
    ((propAlarm || forcedAlarm) && !dps) ||
    (propDelay > 0 && !propAlarm)
  )
    return DECLINED;
  return {
    osdpAddress,
    wirelessAddress,
    readerType,
    readerSerialNumber,
    supportBleCredentials,
    securedReadsOnly,
    delay,
    dwell,
    dps,
    propAlarm,
    propDelay,
    rex,
    forcedAlarm,
    autoOpenAfterFirstAllow,
    authenticationPolicy,
    hardwareVersion,
    serialNumber,
    firmwareVersion,
    created,
  };
}

/**
 * `raw` as the device schema parses it, when it plainly passes; DECLINED when the schema must look
 * (references given as objects, partitions listed, anything its checks across fields would report).
 * @param raw - one element of a snapshot's `devices`, as given.
 * @returns the parsed device, or DECLINED.
 * @example
 * const d = fastDevice({ id: "d1", name: "Door", cloudNode: "n1", connection: "c1", port: 0, type: "floorRelay" });
 * (d as { dwell: number }).dwell; //=> 30
 */
export function fastDevice(raw: unknown): ParsedDevice | Declined {
  if (!isObject(raw)) return DECLINED;
  const id = str(raw.id, 1, Infinity);
  const name = str(raw.name, 1, 70);
  const cloudNode = str(raw.cloudNode, 1, Infinity);
  const connection = str(raw.connection, 1, Infinity);
  const port = raw.port;
  const partition = devicePartitions(raw.partition);
  const type = raw.type;
  const publicIcon = optionalOneOf(raw.publicIcon, PUBLIC_ICONS);
  const primaryReader =
    raw.primaryReader === undefined || raw.primaryReader === null ? null : str(raw.primaryReader, 1, Infinity);
  const types = inputTypes(raw.inputTypes);
  if (
    id === DECLINED ||
    name === DECLINED ||
    cloudNode === DECLINED ||
    connection === DECLINED ||
    !isCount(port) ||
    partition === DECLINED ||
    !(DEVICE_TYPES as readonly unknown[]).includes(type) ||
    publicIcon === DECLINED ||
    primaryReader === DECLINED ||
    types === DECLINED ||
    (publicIcon === null && (type === "primaryReader" || type === "ioDevice" || type === "premiumIoDevice")) ||
    (type === "additionalReader") !== (primaryReader !== null)
  )
    return DECLINED;
  const rest = deviceFields(raw);
  if (rest === DECLINED || (rest.osdpAddress !== null && !types.some((t) => t !== "wiegand"))) return DECLINED;
  return {
    id,
    name,
    cloudNode,
    connection,
    port: port as number,
    partition,
    type: type as ParsedDevice["type"],
    publicIcon,
    primaryReader,
    inputTypes: types,
    ...rest,
  };
}

/**
 * `raw` as the group schema parses it, when it plainly passes; DECLINED when the schema must look.
 * @param raw - one element of a snapshot's `groups`, as given.
 * @returns the parsed group, or DECLINED.
 * @example
 * (fastGroup({ id: "g1", name: "Staff" }) as { partition: string | null }).partition; //=> null
 */
export function fastGroup(raw: unknown): ParsedGroup | Declined {
  if (!isObject(raw)) return DECLINED;
  const id = str(raw.id, 1, Infinity);
  const name = str(raw.name, 1, 70);
  const partition = optionalStr(raw.partition, Infinity);
  if (id === DECLINED || name === DECLINED || partition === DECLINED) return DECLINED;
  return { id, name, partition };
}

/**
 * `raw` as the partition schema parses it, when it plainly passes; DECLINED when the schema must look.
 * @param raw - one element of a snapshot's `partitions`, as given.
 * @returns the parsed partition, or DECLINED.
 * @example
 * (fastPartition({ id: "p1", name: "Main" }) as { default: boolean }).default; //=> false
 */
export function fastPartition(raw: unknown): ParsedPartition | Declined {
  if (!isObject(raw)) return DECLINED;
  const id = str(raw.id, 1, Infinity);
  const name = str(raw.name, 1, Infinity);
  const given = raw.users;
  let users: string[] | null = null;
  if (given === undefined) users = [];
  else if (Array.isArray(given)) {
    for (let i = 0; i < given.length; i++) if (typeof given[i] !== "string") return DECLINED;
    users = given.slice() as string[];
  } else if (given !== null) return DECLINED;
  const isDefault = flag(raw.default);
  if (id === DECLINED || name === DECLINED || isDefault === DECLINED) return DECLINED;
  return { id, name, users, default: isDefault };
}

/**
 * `raw` as the floor group schema parses it, when it plainly passes (references given as ids);
 * DECLINED when the schema must look.
 * @param raw - one element of a snapshot's `floorGroups`, as given.
 * @returns the parsed floor group, or DECLINED.
 * @example
 * (fastFloorGroup({ id: "f1", name: "Lobby", readerPort: "d1", floors: ["d2"] }) as { partition: null }).partition; //=> null
 */
export function fastFloorGroup(raw: unknown): ParsedFloorGroup | Declined {
  if (!isObject(raw)) return DECLINED;
  const id = str(raw.id, 1, Infinity);
  const name = str(raw.name, 1, 70);
  const partition = optionalStr(raw.partition, Infinity);
  const readerPort = str(raw.readerPort, 1, Infinity);
  const floors = raw.floors === undefined ? DECLINED : ids(raw.floors);
  if (
    id === DECLINED ||
    name === DECLINED ||
    partition === DECLINED ||
    readerPort === DECLINED ||
    floors === DECLINED ||
    floors.length === 0
  )
    return DECLINED;
  return { id, name, partition, readerPort, floors };
}

/** The optional fields of a connection in the schema's order, each with the values it plainly takes. */
const CONNECTION_OPTIONAL: readonly (readonly [string, (v: unknown) => boolean])[] = [
  ["connected", (v) => typeof v === "boolean"],
  ["protocol", (v) => v === null || v === "IPv4" || v === "IPv6"],
  ["ipaddress", (v) => v === null || typeof v === "string"],
  ["ipv6Address", (v) => v === null || typeof v === "string"],
  ["port", () => false], // not optional: placed by fastConnection
  ["dhcp", (v) => typeof v === "boolean"],
  ["netmask", (v) => v === null || typeof v === "string"],
  ["gateway", (v) => v === null || typeof v === "string"],
  ["dns", (v) => v === null || typeof v === "string"],
  ["macAddress", (v) => v === null || typeof v === "string"],
  ["manufacturer", (v) => v === null || v === "VENDOR_A" || v === "VENDOR_B"],
];

/** Empty, absent or null: what the schema's checks across fields call missing. */
function missing(v: unknown): boolean {
  return v === undefined || v === null || v === "";
}

/**
 * `raw` as the connection schema parses it (with its type's defaults, S13), when it plainly passes;
 * DECLINED when the schema must look (anything its checks across fields would report included).
 * @param raw - one element of a snapshot's `connections`, as given.
 * @returns the parsed connection, or DECLINED.
 * @example
 * (fastConnection({ id: "c1", name: "C", type: "usb", cloudNode: "n1", port: 1 }) as { port: number }).port; //=> 1
 */
export function fastConnection(raw: unknown): ParsedConnection | Declined {
  if (!isObject(raw)) return DECLINED;
  const id = str(raw.id, 1, Infinity);
  const name = str(raw.name, 1, Infinity);
  const type = raw.type;
  const cloudNode = str(raw.cloudNode, 1, Infinity);
  const port = raw.port === undefined || raw.port === null ? null : intIn(raw.port, 0, 65_535, 0);
  if (
    id === DECLINED ||
    name === DECLINED ||
    !(CONNECTION_TYPES as readonly unknown[]).includes(type) ||
    cloudNode === DECLINED ||
    port === DECLINED ||
    (type !== "lockhub" && port === null) ||
    ((type === "ethernet" || type === "wirelessGateway") && missing(raw.ipaddress)) ||
    (type === "lockhub" && missing(raw.macAddress)) ||
    (type !== "ethernet" &&
      ((raw.protocol !== undefined && raw.protocol !== null) ||
        (raw.ipv6Address !== undefined && raw.ipv6Address !== null) ||
        (raw.manufacturer !== undefined && raw.manufacturer !== null)))
  )
    return DECLINED;
  const out: Record<string, unknown> = { id, name, type, cloudNode };
  for (const [key, plain] of CONNECTION_OPTIONAL) {
    if (key === "port") {
      out.port = port;
      continue;
    }
    const v = raw[key];
    if (v === undefined) {
      // Absent, the schema leaves the key out; present but undefined is the schema's to decide.
      if (key in raw) return DECLINED;
    } else if (plain(v)) out[key] = v;
    else return DECLINED;
  }
  return withConnectionDefaults(out) as ParsedConnection;
}
