// zod schemas of the `rsop-system/1` snapshot (docs/semantics.md S lines): the 2.0 systems API entity shapes, their limits and
// defaults, plus this project's additions to the API. Per-entity checks live here; checks across entities (references,
// uniqueness, ports) live in parseSnapshot.ts.
import { z } from "zod";
import { parseClock, parseInstant, parseLocalDate, parseLocalDateTime, WEEKDAYS } from "./time.js";
import { quote, zodMessage } from "./zodIssues.js";
import { customFieldSchema } from "./customFields.js";
import { type CardNumber, cardNumberProblem, cardNumberValue, isCardNumber } from "./cardNumber.js";

export const AUTHENTICATION_POLICIES = ["cardOnly", "pinOnly", "cardOrPin", "cardAndPin"] as const;
export const INPUT_TYPES = ["wiegand", "unencryptedOsdp", "encryptedOsdp"] as const;
export const DEVICE_TYPES = [
  "primaryReader",
  "additionalReader",
  "ioDevice",
  "premiumIoDevice",
  "elevatorReader",
  "additionalElevatorReader",
  "floorRelay",
] as const;
export const ELEVATOR_READER_TYPES: readonly string[] = ["elevatorReader", "additionalElevatorReader"];
export const PUBLIC_ICONS = [
  "swingingDoor",
  "swingingGate",
  "rollUpDoor",
  "alarm",
  "light",
  "fan",
  "panicButton",
  "sprinkler",
  "other",
] as const;
export const CONNECTION_TYPES = ["lockhub", "ethernet", "usb", "wirelessCoordinator", "wirelessGateway"] as const;
export const CREDENTIAL_TYPES = ["card", "touch", "token"] as const;
export const FACILITY_CODE_POLICIES = ["ENFORCED", "FILTER_LIST", "NOT_ENFORCED"] as const;

const id = z.string().min(1, { error: "Must be a non-empty id." });
const optionalText = z.string().nullable().default(null);
const digits = z.string().regex(/^[0-9]+$/, { error: "Must be a string of digits." });
const nonNegativeInt = z.number().int().min(0);
const refObject = z.looseObject({ id });
const safeCount = nonNegativeInt.max(Number.MAX_SAFE_INTEGER);
/**
 * A card number (docs/semantics.md CN1): a non-negative safe integer, or a canonical decimal string of
 * any value up to 2^512−1, normalized to its one spelling (a string of a safe value is the number).
 * A number keeps the messages a count always had (a number past 2^53−1 is one `tooBig`).
 */
export const cardNumberSchema = z.unknown().transform((v, ctx): CardNumber => {
  if (typeof v === "string") {
    if (isCardNumber(v)) return cardNumberValue(v);
    ctx.addIssue({ code: "custom", message: cardNumberProblem(v, false), input: v });
    return z.NEVER;
  }
  const r = safeCount.safeParse(v, { error: zodMessage });
  if (r.success) return r.data;
  for (const issue of r.error.issues) ctx.addIssue(issue as z.core.$ZodRawIssue);
  return z.NEVER;
});

/** An id, or a (partial) API object carrying one: normalized to the id. */
const idOrRef = z.union([id, refObject]).transform((v) => (typeof v === "string" ? v : v.id));

const localDateTime = z
  .string()
  .refine((s) => !Number.isNaN(parseLocalDateTime(s)), { error: "Must be a local date-time YYYY-MM-DDTHH:mm:ss." })
  .nullable()
  .default(null);
const localDate = z
  .string()
  .refine((s) => !Number.isNaN(parseLocalDate(s)), { error: "Must be a calendar date YYYY-MM-DD." })
  .nullable()
  .default(null);

export const partitionSchema = z.object({
  id,
  name: z.string().min(1),
  users: z.array(z.string()).nullable().default([]),
  default: z.boolean().default(false),
});

export const groupSchema = z.object({
  id,
  name: z.string().min(1).max(70),
  partition: z.string().nullable().default(null),
});

export const credentialSchema = z
  .object({
    id,
    holderId: z.string().optional(),
    credentialNumber: cardNumberSchema.nullable().default(null),
    facilityCode: nonNegativeInt.max(Number.MAX_SAFE_INTEGER).nullable().default(null),
    description: z.string().max(255).nullable().default(null),
    types: z.array(z.enum(CREDENTIAL_TYPES)).min(1, { error: "Must name at least one credential type." }),
  })
  .superRefine((c, ctx) => {
    const card = c.types.includes("card");
    if (card && c.credentialNumber === null)
      ctx.addIssue({
        code: "custom",
        path: ["credentialNumber"],
        message: "A card credential needs a credentialNumber.",
      });
    if (!card && c.facilityCode !== null)
      ctx.addIssue({ code: "custom", path: ["facilityCode"], message: "Only card credentials carry a facilityCode." });
  });

export const holderSchema = z
  .object({
    id,
    firstName: z.string().min(1).max(35),
    lastName: z.string().min(1).max(35),
    email: optionalText,
    photoUrl: optionalText,
    partition: z.string().nullable().default(null),
    enabled: z.boolean().default(true),
    activeDate: localDateTime,
    expireDate: localDateTime,
    pin: digits.nullable().default(null),
    duressPin: digits.nullable().default(null),
    customFields: z.record(z.string(), z.unknown()).nullable().default({}),
    groups: z.array(idOrRef).default([]),
    credentials: z.array(credentialSchema).default([]),
  })
  .superRefine((h, ctx) => {
    if (h.pin !== null && h.pin === h.duressPin)
      ctx.addIssue({
        code: "custom",
        path: ["duressPin"],
        message: "The duress PIN must differ from the holder's PIN.",
      });
    h.credentials.forEach((c, i) => {
      if (c.holderId !== undefined && c.holderId !== h.id)
        ctx.addIssue({
          code: "custom",
          path: ["credentials", i, "holderId"],
          message: `Names holder ${quote(c.holderId)} but sits under holder ${quote(h.id)}.`,
        });
    });
  });

const bitField = z.object({ offset: z.number().int().min(0).max(511), length: z.number().int().min(1).max(512) });

export const cardLayoutSchema = z.object({
  facilityCode: bitField.nullable().default(null),
  cardNumber: bitField,
  parity: z
    .array(
      z.object({
        position: z.number().int().min(0).max(511),
        type: z.enum(["even", "odd"]),
        range: bitField.optional(),
        mask: z
          .string()
          .regex(/^[01]{1,512}$/, { error: "Must be a string of 0 and 1, at most 512 long." })
          .optional(),
      }),
    )
    .default([]),
  // Marker bits every frame must hold (an addition to the API, docs/semantics.md E20); left out when there are none.
  fixed: z
    .array(
      z.object({
        position: z.number().int().min(0).max(511),
        value: z.union([z.literal(0), z.literal(1)], { error: "Must be 0 or 1." }),
      }),
    )
    .optional(),
});

type CardLayoutInput = z.input<typeof cardLayoutSchema>;
type CardLayoutOutput = z.output<typeof cardLayoutSchema>;

/**
 * `layout` (an addition to the API, docs/semantics.md S4): a well-known layout's name (checked against the table by validateCardFormat),
 * a custom layout object, or none (null). Dispatched on the value's type rather than by a zod union,
 * so that a custom layout's problems keep their own paths (`layout.parity.0.position`).
 */
const layoutSchema = z
  .custom<string | CardLayoutInput | null>(() => true)
  .transform((v, ctx): string | CardLayoutOutput | null => {
    if (v === null) return null;
    if (typeof v === "string") {
      if (v.length === 0)
        ctx.issues.push({
          code: "custom",
          input: v,
          path: [],
          message: "Must be a well-known layout name, not an empty string.",
        });
      return v;
    }
    if (typeof v !== "object" || Array.isArray(v)) {
      const what = Array.isArray(v) ? "an array" : typeof v;
      ctx.issues.push({
        code: "invalid_type",
        expected: "object",
        input: v,
        path: [],
        message: `Must be a well-known layout name (a string) or a layout object, not ${what}.`,
      });
      return z.NEVER;
    }
    const r = cardLayoutSchema.safeParse(v, { error: zodMessage });
    if (r.success) return r.data;
    for (const iss of r.error.issues) ctx.issues.push({ ...iss, input: undefined });
    return z.NEVER;
  })
  .default(null);

export const cardFormatSchema = z.object({
  id,
  description: z.string().nullable().default(null),
  min_input_bits: z.number().int().min(9).max(512),
  max_input_bits: z.number().int().min(9).max(512),
  facility_code: z.enum(FACILITY_CODE_POLICIES).default("ENFORCED"),
  allowed_facility_codes: z.array(nonNegativeInt).default([]),
  enforce_parity: z.boolean().default(true),
  layout: layoutSchema,
});

/** The highest threat level a node may be raised to (docs/semantics.md TL1): LenelS2 uses eight; 255 leaves room. */
export const THREAT_LEVEL_MAX = 255;
/** The most self-help credential resets per month a node may allow (docs/semantics.md I85). */
export const CREDENTIAL_RESETS_MAX = 100;

export const cloudNodeSchema = z.object({
  id,
  name: z.string().min(1),
  description: optionalText,
  created: optionalText,
  serialNumber: optionalText,
  ecards: z.array(cardNumberSchema).nullable().default([]),
  offlinePolicy: z.union([z.literal(0), z.literal(1), z.literal(2)]).default(0),
  killTimer: z.number().int().min(300).default(259_200),
  timezone: z.string().nullable().default(null),
  locale: z.string().default("en"),
  cardFormat: z.array(cardFormatSchema).nullable().default([]),
  // An addition (docs/semantics.md TL1): absent means 0 (normal); optional, not defaulted, so that a
  // snapshot written before threat levels reads back unchanged. Set by PUT …/threat-level.
  threatLevel: z.number().int().min(0).max(THREAT_LEVEL_MAX).optional(),
  // The self-help credential resets a holder may make per month at this node (docs/semantics.md
  // I85; the accounts API's per-node setting): absent means the default, 1. Optional, as above.
  credentialResetsPerMonth: z.number().int().min(0).max(CREDENTIAL_RESETS_MAX).optional(),
});

/** A lockhub (wireless-lock hub) operates at most this many locks: devices on the connection. */
export const LOCKHUB_MAX_LOCKS = 64;

/** Connection fields only an ethernet controller has. */
const ETHERNET_ONLY = ["protocol", "ipv6Address", "manufacturer"] as const;
const article = (word: string): string => (/^[aeio]/i.test(word) ? "An" : "A"); // "a usb", "an ethernet"

/**
 * A connection with the defaults of its type in effect: an ethernet controller speaks `IPv6` and is a
 * `VENDOR_B` controller unless it says otherwise; other types have neither field (docs/semantics.md S13).
 */
export function withConnectionDefaults<T extends object>(
  c: T,
): T & { readonly protocol?: unknown; readonly manufacturer?: unknown } {
  const x = c as { readonly type?: unknown; readonly protocol?: unknown; readonly manufacturer?: unknown };
  return x.type === "ethernet"
    ? { ...c, protocol: x.protocol ?? "IPv6", manufacturer: x.manufacturer ?? "VENDOR_B" }
    : c;
}

export const connectionSchema = z
  .object({
    id,
    name: z.string().min(1),
    type: z.enum(CONNECTION_TYPES),
    cloudNode: id,
    connected: z.boolean().optional(),
    protocol: z.enum(["IPv4", "IPv6"]).nullable().optional(),
    ipaddress: z.string().nullable().optional(),
    ipv6Address: z.string().nullable().optional(),
    port: z.number().int().min(0).max(65_535).nullable().default(null),
    dhcp: z.boolean().optional(),
    netmask: z.string().nullable().optional(),
    gateway: z.string().nullable().optional(),
    dns: z.string().nullable().optional(),
    macAddress: z.string().nullable().optional(),
    manufacturer: z.enum(["VENDOR_A", "VENDOR_B"]).nullable().optional(),
  })
  .superRefine((c, ctx) => {
    // The 2.0 systems API "Connection body": what each type needs, and what only ethernet controllers have.
    const add = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    const missing = (v: string | null | undefined) => v === undefined || v === null || v === "";
    if ((c.type === "ethernet" || c.type === "wirelessGateway") && missing(c.ipaddress))
      add("ipaddress", `${article(c.type)} ${c.type} connection needs an ipaddress.`);
    if (c.type !== "lockhub" && c.port === null) add("port", `${article(c.type)} ${c.type} connection needs a port.`);
    if (c.type === "lockhub" && missing(c.macAddress)) add("macAddress", "A lockhub connection needs a macAddress.");
    if (c.type !== "ethernet")
      for (const k of ETHERNET_ONLY)
        if (c[k] !== undefined && c[k] !== null)
          add(
            k,
            `${k} is used by ethernet connections only; this is ${article(c.type).toLowerCase()} ${c.type} connection.`,
          );
  })
  .transform((c) => withConnectionDefaults(c));

export const deviceSchema = z
  .object({
    id,
    name: z.string().min(1).max(70),
    cloudNode: id,
    connection: idOrRef,
    port: z.number().int().min(0),
    partition: z
      .array(z.object({ id, name: z.string().optional(), default: z.boolean().optional() }))
      .nullable()
      .default([]),
    type: z.enum(DEVICE_TYPES),
    publicIcon: z.enum(PUBLIC_ICONS).nullable().default(null),
    primaryReader: z.union([idOrRef, z.null()]).default(null),
    inputTypes: z
      .array(z.enum(INPUT_TYPES))
      .min(1, { error: "Must allow at least one input type." })
      .default(["wiegand", "unencryptedOsdp", "encryptedOsdp"]),
    osdpAddress: z.number().int().min(0).max(3).nullable().default(null),
    wirelessAddress: z.string().nullable().default(null),
    readerType: z.enum(["standard", "touch", "red"]).default("standard"),
    readerSerialNumber: optionalText,
    supportBleCredentials: z.boolean().default(false),
    securedReadsOnly: z.boolean().default(false),
    delay: z.number().int().min(0).max(9999).default(0),
    dwell: z.number().int().min(1).max(9999).default(30),
    dps: z.boolean().default(false),
    propAlarm: z.boolean().default(false),
    propDelay: z.number().int().min(0).max(9999).default(0),
    rex: z.boolean().default(false),
    forcedAlarm: z.boolean().default(false),
    autoOpenAfterFirstAllow: z.boolean().default(false),
    authenticationPolicy: z.enum(AUTHENTICATION_POLICIES).nullable().default(null),
    hardwareVersion: optionalText,
    serialNumber: optionalText,
    firmwareVersion: optionalText,
    created: optionalText,
  })
  .superRefine((d, ctx) => {
    const add = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (d.publicIcon === null && (d.type === "primaryReader" || d.type === "ioDevice" || d.type === "premiumIoDevice"))
      add("publicIcon", `A ${d.type} needs a publicIcon.`);
    if (d.type === "additionalReader" && d.primaryReader === null)
      add("primaryReader", "An additionalReader names its primaryReader.");
    if (d.type !== "additionalReader" && d.primaryReader !== null)
      add("primaryReader", "Only an additionalReader has a primaryReader.");
    if (d.osdpAddress !== null && !d.inputTypes.some((t) => t !== "wiegand"))
      add("osdpAddress", "An osdpAddress needs an OSDP input type.");
    if (d.propAlarm && !d.dps) add("propAlarm", "A prop alarm needs the door position sensor (dps).");
    if (d.forcedAlarm && !d.dps) add("forcedAlarm", "A forced-open alarm needs the door position sensor (dps).");
    if (d.propDelay > 0 && !d.propAlarm) add("propDelay", "A propDelay is only used with propAlarm.");
  });

export const floorGroupSchema = z.object({
  id,
  name: z.string().min(1).max(70),
  partition: z.string().nullable().default(null),
  readerPort: idOrRef,
  floors: z.array(idOrRef).min(1, { error: "A floor group opens at least one floor." }),
});

/** What a rule does (docs/semantics.md UF1): grants access to its group, or holds its doors unlocked. */
export const RULE_ACTIONS = ["access", "unlock"] as const;

/** How a rule follows its calendar (docs/semantics.md C2): closed on its days, or open on its days alone. */
export const CALENDAR_MODES = ["exclude", "only"] as const;
/** Bounds of one calendar (docs/semantics.md C1). */
export const CALENDAR_MAX_DATES = 10_000;
export const CALENDAR_MAX_RECURRING = 366;
/** Days of each month (index 1–12) a yearly date may name: February 29 is allowed (it falls in leap years only). */
const RECURRING_MONTH_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A calendar of days (an addition to the API, docs/semantics.md C1): dates, and month-days every year. */
export const calendarSchema = z
  .object({
    id,
    name: z.string().min(1).max(70),
    partition: z.string().nullable().default(null),
    dates: z
      .array(
        z.string().refine((s) => !Number.isNaN(parseLocalDate(s)), { error: "Must be a calendar date YYYY-MM-DD." }),
      )
      .max(CALENDAR_MAX_DATES, { error: `A calendar holds at most ${CALENDAR_MAX_DATES} dates.` })
      .default([]),
    recurring: z
      .array(z.object({ month: z.number().int().min(1).max(12), day: z.number().int().min(1).max(31) }))
      .max(CALENDAR_MAX_RECURRING, { error: `A calendar holds at most ${CALENDAR_MAX_RECURRING} yearly dates.` })
      .default([]),
  })
  .superRefine((c, ctx) => {
    c.recurring.forEach((r, j) => {
      if (r.day > RECURRING_MONTH_DAYS[r.month]!)
        ctx.addIssue({
          code: "custom",
          path: ["recurring", j, "day"],
          message: `Month ${r.month} has no day ${r.day}.`,
        });
    });
  });

const clock = z
  .string()
  .refine((s) => !Number.isNaN(parseClock(s)), { error: "Must be a time HH:mm:ss (00:00:00 to 23:59:59)." });
const stopClock = z
  .string()
  .refine((s) => !Number.isNaN(parseClock(s, true)), { error: "Must be a time HH:mm:ss (00:00:00 to 24:00:00)." });

export const ruleSchema = z
  .object({
    id,
    name: z.string().max(70).nullable().default(null),
    type: z.enum(["door", "elevator"]),
    groupId: id,
    devices: z.array(id).default([]),
    floorGroups: z.array(id).default([]),
    startTime: clock,
    stopTime: stopClock,
    recurring: z.array(z.enum(WEEKDAYS)),
    allow: z.boolean().default(true),
    authenticationPolicy: z.enum(AUTHENTICATION_POLICIES).nullable().default(null),
    enabled: z.boolean().default(true),
    startDate: localDate,
    endDate: localDate,
    // An addition (docs/semantics.md C2): absent (or null) when the rule follows no calendar; optional,
    // not defaulted, so that the rules of a snapshot written before calendars read back unchanged.
    calendar: z
      .object({ id, mode: z.enum(CALENDAR_MODES) })
      .nullable()
      .optional(),
    // Additions (docs/semantics.md TL2, UF1), optional for the same reason: absent means 0 and "access".
    maxThreatLevel: z.number().int().min(0).max(THREAT_LEVEL_MAX).optional(),
    action: z.enum(RULE_ACTIONS).optional(),
  })
  .superRefine((r, ctx) => {
    const add = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
    if (r.type === "door" && r.floorGroups.length > 0)
      add(["floorGroups"], "A door rule names devices, not floor groups.");
    if (r.type === "elevator" && r.devices.length > 0)
      add(["devices"], "An elevator rule names floor groups, not devices.");
    if (r.type === "elevator" && !r.allow) add(["allow"], "Deny rules are door rules only.");
    if (new Set(r.recurring).size !== r.recurring.length) add(["recurring"], "Names a weekday twice.");
    if (r.startDate !== null && r.endDate !== null && r.startDate > r.endDate)
      add(["endDate"], "Ends before it starts.");
    if (r.action === "unlock" && r.type !== "door")
      add(["action"], "An unlock rule holds doors unlocked: it is a door rule.");
    else if (r.action === "unlock" && !r.allow) add(["action"], "An unlock rule is an allow rule.");
    if (!r.allow && r.maxThreatLevel !== undefined && r.maxThreatLevel > 0)
      add(["maxThreatLevel"], "A deny rule applies at every threat level; maxThreatLevel is for allow rules.");
  });

/** How anti-passback treats a second entry (docs/semantics.md AB2). */
export const ANTI_PASSBACK_MODES = ["hard", "soft"] as const;
/** A year: the longest anti-passback reset (docs/semantics.md AB2). */
export const RESET_SECONDS_MAX = 31_536_000;
/** Bounds of one area (docs/semantics.md AB1). */
export const AREA_MAX_DEVICES = 1_000;
export const OCCUPANCY_LIMIT_MAX = 1_000_000;

const instant = z.string().refine((s) => !Number.isNaN(parseInstant(s)), { error: "Must be an ISO 8601 instant." });

/**
 * An area (an addition to the API, docs/semantics.md AB1): the devices that lead in and out of it,
 * and what its state may refuse. `lastReset` and `forgiven` are written by the reset and forgive
 * routes only (AB6): they carry those commands to the nodes through the change feed.
 */
export const areaSchema = z
  .object({
    id,
    name: z.string().min(1).max(70),
    entries: z
      .array(id)
      .min(1, { error: "An area has at least one entry." })
      .max(AREA_MAX_DEVICES, { error: `An area has at most ${AREA_MAX_DEVICES} entries.` }),
    exits: z
      .array(id)
      .max(AREA_MAX_DEVICES, { error: `An area has at most ${AREA_MAX_DEVICES} exits.` })
      .default([]),
    antiPassback: z
      .object({ mode: z.enum(ANTI_PASSBACK_MODES), resetSeconds: z.number().int().min(0).max(RESET_SECONDS_MAX) })
      .nullable()
      .default(null),
    occupancyLimit: z.number().int().min(1).max(OCCUPANCY_LIMIT_MAX).nullable().default(null),
    lastReset: instant.nullable().optional(),
    forgiven: z.record(z.string(), instant).optional(),
  })
  .superRefine((a, ctx) => {
    const add = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
    const seen = new Map<string, string>();
    for (const list of ["entries", "exits"] as const)
      a[list].forEach((d, j) => {
        const before = seen.get(d);
        if (before === undefined) seen.set(d, list);
        else
          add(
            [list, j],
            before === list
              ? `Names device "${d}" twice.`
              : `Device "${d}" is already an entry; a device leads either in or out of one area.`,
          );
      });
  });

export const systemSnapshotSchema = z.object({
  format: z.literal("rsop-system/1", { error: 'Must be exactly "rsop-system/1".' }),
  systemId: id,
  timezone: z.string().default("UTC"),
  partitions: z.array(partitionSchema).default([]),
  groups: z.array(groupSchema).default([]),
  holders: z.array(holderSchema).default([]),
  cloudNodes: z.array(cloudNodeSchema).default([]),
  connections: z.array(connectionSchema).default([]),
  devices: z.array(deviceSchema).default([]),
  floorGroups: z.array(floorGroupSchema).default([]),
  rules: z.array(ruleSchema).default([]),
  customFields: z.array(customFieldSchema).default([]),
  calendars: z.array(calendarSchema).default([]),
  areas: z.array(areaSchema).default([]),
});

/** The input shape of a system snapshot (what a JSON file may hold). */
export type SystemSnapshotInput = z.input<typeof systemSnapshotSchema>;
