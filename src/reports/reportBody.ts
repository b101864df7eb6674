// The report body of the 2.0 systems API "Holder reports" and the 1.0 panel API "People reports": `reportId`,
// `partition`, `filters`, `output`, checked whole. Every problem is reported with its JSON path and a
// sentence (docs/semantics.md RP1–RP8); ids are checked against the snapshot the report reads.
import { type CardNumber, type Issue, type SystemSnapshot, cardNumberValue, isCardNumber } from "../model/index.js";
import { panelKey } from "../legacy1/index.js";
import { quote } from "../model/zodIssues.js";

/** Which interface a report speaks: 2.0 holder reports (string ids) or 1.0 people reports (integer ids). */
export type ReportFlavour = "holders" | "people";

export const TEXT_FIELDS = ["firstName", "lastName", "email"] as const;
export const TEXT_OPERATORS = ["equals", "does not equal", "contains", "does not contain"] as const;
export const FILTER_TYPES = [
  "firstName",
  "lastName",
  "email",
  "groups",
  "enabled",
  "credentials",
  "partition",
] as const;

export type TextOperator = (typeof TEXT_OPERATORS)[number];
export type FilterType = (typeof FILTER_TYPES)[number];

/** A checked filter; ids are 2.0 ids (a 1.0 integer id as the panel engine's key of it, `panelKey`). */
export type ReportFilter =
  | {
      readonly type: "firstName" | "lastName" | "email";
      readonly operator: TextOperator;
      readonly operand: string;
      readonly caseSensitive: boolean;
    }
  | { readonly type: "enabled"; readonly value: boolean }
  | {
      readonly type: "groups" | "partition";
      readonly memberOf: readonly string[] | null;
      readonly notMemberOf: readonly string[] | null;
    }
  | {
      readonly type: "credentials";
      /** `operand` in its one spelling (CN1): a wide number is its decimal string. */
      readonly cardNumber: { readonly operator: "equals" | "does not equal"; readonly operand: CardNumber } | null;
      readonly mobile: { readonly type: "touch" | "token"; readonly status: "accepted" | "pending" } | null;
    };

/** A checked report body: what the report selects and shows. */
export interface ReportQuery {
  /** The template the body named (`reportId`), else null. */
  readonly reportId: string | number | null;
  /** Only holders of this partition (2.0 id), else every holder the caller sees. */
  readonly partition: string | null;
  readonly filters: readonly ReportFilter[];
  /** The record properties, in order (the record's own key names). */
  readonly output: readonly string[];
}

/**
 * The holder report record properties (2.0), in the API's order.
 * @example
 * HOLDER_PROPERTIES[0]; //=> "id"
 */
export const HOLDER_PROPERTIES = [
  "id",
  "firstName",
  "lastName",
  "email",
  "partition",
  "cards",
  "groups",
  "pin",
  "duressPin",
  "enabled",
  "activeDate",
  "expireDate",
  "bluetooth",
  "pendingBluetooth",
  "mobileApp",
  "pendingMobileApp",
  "customFields",
] as const;

/**
 * The people report record properties (1.0, display names), in the API's order.
 * @example
 * PEOPLE_PROPERTIES[1]; //=> "First Name"
 */
export const PEOPLE_PROPERTIES = [
  "id",
  "First Name",
  "Last Name",
  "Cards",
  "Groups",
  "Email",
  "Enabled",
  "Pin",
  "Duress Pin",
  "Partition",
  "Active Date",
  "Expire Date",
  "Mobile App",
  "Pending Mobile App",
  "Bluetooth",
  "Pending Bluetooth",
  "Custom Fields",
] as const;

/** In a 1.0 `output` list the custom fields property is named `Custom Attributes`. */
export const PEOPLE_OUTPUT_ALIAS: Readonly<Record<string, string>> = { "Custom Attributes": "Custom Fields" };

/**
 * The cost bounds of a report body (RP15): a body over any of them is refused before any holder is
 * read, so the work of a preview or generation stays bounded by holders × maxFilters (each filter a
 * constant-time test: a set lookup or one comparison of a short operand).
 */
export interface ReportLimits {
  /** Most filters in `filters`; default 32. */
  readonly maxFilters: number;
  /** Most ids in one `memberOf` or `notMemberOf` list; default 256. */
  readonly maxIdsPerList: number;
  /** Longest text operand (firstName, lastName, email filters), in characters; default 256. */
  readonly maxOperandLength: number;
}

/** The default report bounds (RP15). */
export const REPORT_LIMITS: ReportLimits = { maxFilters: 32, maxIdsPerList: 256, maxOperandLength: 256 };

/** How `parseReportBody` resolves a `reportId` (a template): the body it stands for, or undefined when unknown. */
export type TemplateLookup = (id: string | number) => unknown;

export interface ParseReportOptions {
  /** The snapshot whose groups and partitions the body may name (a caller's view of it). */
  readonly snapshot: SystemSnapshot;
  readonly flavour: ReportFlavour;
  /** Resolves `reportId`; without it every `reportId` is unknown. */
  readonly templates?: TemplateLookup;
  /** The cost bounds; default REPORT_LIMITS. */
  readonly limits?: ReportLimits;
}

type Path = readonly (string | number)[];
type Json = Record<string, unknown>;

const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);
const list = (xs: readonly string[]): string => xs.map((x) => `"${x}"`).join(", ");
const BODY_KEYS = ["reportId", "partition", "filters", "output"];

/**
 * Checks a report body (holder or people report) against `snapshot`.
 * @returns the query, or every problem with its JSON path.
 */
export function parseReportBody(
  body: unknown,
  options: ParseReportOptions,
): { ok: true; value: ReportQuery } | { ok: false; issues: Issue[] } {
  const issues: Issue[] = [];
  const add = (code: Issue["code"], path: Path, message: string) => issues.push({ code, path, message });
  const people = options.flavour === "people";
  if (body === undefined || body === null) body = {};
  if (!isObject(body)) {
    add("invalidType", [], "The report body must be a JSON object (every field is optional).");
    return { ok: false, issues };
  }
  for (const k of Object.keys(body))
    if (!BODY_KEYS.includes(k))
      add("unrecognizedKeys", [k], `Unknown report body field "${k}": use ${list(BODY_KEYS)}.`);

  if (body.reportId !== undefined) {
    const answer = parseReportId(body, options, issues, add);
    if (answer !== undefined) return answer;
  }

  const groupIds = new Set(options.snapshot.groups.map((g) => g.id));
  const partitionIds = new Set(options.snapshot.partitions.map((p) => p.id));
  const idOf = idParser(people, add);

  let partition: string | null = null;
  if (body.partition !== undefined && body.partition !== null)
    partition = idOf(body.partition, ["partition"], partitionIds, "partition");

  const limits = options.limits ?? REPORT_LIMITS;
  const filters = parseFilters(body.filters, issues, add, idOf, groupIds, partitionIds, limits);

  const output = parseOutput(body.output, people, add);
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: { reportId: null, partition, filters, output } };
}

type Add = (code: Issue["code"], path: Path, message: string) => void;
type IdOf = (v: unknown, path: Path, known: ReadonlySet<string>, what: string) => string | null;

/** The keys each filter type may carry, besides `type`. */
const FILTER_KEYS: Readonly<Record<FilterType, readonly string[]>> = {
  firstName: ["operator", "operand", "caseSensitive"],
  lastName: ["operator", "operand", "caseSensitive"],
  email: ["operator", "operand", "caseSensitive"],
  enabled: ["value"],
  groups: ["memberOf", "notMemberOf"],
  partition: ["memberOf", "notMemberOf"],
  credentials: ["cardNumber", "mobile"],
};

function parseFilter(
  f: unknown,
  path: Path,
  issues: Issue[],
  idOf: IdOf,
  groupIds: ReadonlySet<string>,
  partitionIds: ReadonlySet<string>,
  limits: ReportLimits,
): ReportFilter | null {
  const track: Add = (code, p, message) => issues.push({ code, path: p, message });
  const add = track;
  const before = issues.length;
  if (!isObject(f)) {
    add("invalidType", path, "Must be a filter object with a type.");
    return null;
  }
  const type = f.type;
  if (type === undefined) {
    add("required", [...path, "type"], `Is required: one of ${list(FILTER_TYPES)}.`);
    return null;
  }
  if (typeof type !== "string" || !(FILTER_TYPES as readonly string[]).includes(type)) {
    add("invalidValue", [...path, "type"], `Unknown filter type ${JSON.stringify(type)}: use ${list(FILTER_TYPES)}.`);
    return null;
  }
  const t = type as FilterType;
  for (const k of Object.keys(f))
    if (k !== "type" && !FILTER_KEYS[t].includes(k))
      track("unrecognizedKeys", [...path, k], `A ${t} filter takes ${list(FILTER_KEYS[t])}, not "${k}".`);

  let out: ReportFilter;
  if (t === "firstName" || t === "lastName" || t === "email") out = parseTextFilter(f, t, path, track, limits);
  else if (t === "enabled") {
    if (f.value === undefined)
      track("required", [...path, "value"], "Is required for an enabled filter: true or false.");
    else if (typeof f.value !== "boolean") track("invalidType", [...path, "value"], "Must be true or false.");
    out = { type: t, value: f.value as boolean };
  } else if (t === "groups" || t === "partition")
    out = parseIdListFilter(f, t, path, track, idOf, t === "groups" ? groupIds : partitionIds, limits);
  else out = parseCredentialsFilter(f, path, track);
  // A filter with any problem is not kept (the body is refused anyway).
  return issues.length === before ? out : null;
}

/**
 * The body names a template: every other field is refused, and the template's own body is checked in
 * its place. The answer, or undefined when no problem came up and the rest of the body is read.
 */
function parseReportId(
  body: Json,
  options: ParseReportOptions,
  issues: Issue[],
  add: Add,
): { ok: true; value: ReportQuery } | { ok: false; issues: Issue[] } | undefined {
  const people = options.flavour === "people";
  const id = body.reportId;
  const others = Object.keys(body).filter((k) => k !== "reportId" && BODY_KEYS.includes(k));
  for (const k of others) add("invalid", [k], "Must not be sent with reportId: a template decides the whole report.");
  if (people ? !(Number.isSafeInteger(id) && (id as number) >= 0) : typeof id !== "string" || id === "")
    add(
      "invalidType",
      ["reportId"],
      people ? "Must be a report id (a whole number)." : "Must be a report id (a non-empty string).",
    );
  else if (others.length === 0) {
    const reportId = id as string | number;
    const template = options.templates?.(reportId);
    if (template === undefined) add("unknownReference", ["reportId"], `No report has id ${JSON.stringify(id)}.`);
    else {
      // A template is a body of its own: its problems (a group deleted since) are reported at reportId.
      const inner = parseReportBody(isObject(template) ? { ...template, reportId: undefined } : template, {
        ...options,
        templates: undefined,
      });
      if (!inner.ok)
        for (const i of inner.issues) add(i.code, ["reportId", ...i.path], `In the template: ${i.message}`);
      else if (issues.length === 0) return { ok: true, value: { ...inner.value, reportId } };
    }
  }
  if (issues.length > 0) return { ok: false, issues };
}

/** Reads an id of the flavour (1.0 integer, 2.0 string) as a 2.0 id, or null after adding its problem. */
function idParser(people: boolean, add: Add): IdOf {
  return (v, path, known, what) => {
    if (people ? !(Number.isSafeInteger(v) && (v as number) >= 0) : typeof v !== "string" || v === "") {
      add(
        "invalidType",
        path,
        people ? `Must be a ${what} id (a whole number).` : `Must be a ${what} id (a non-empty string).`,
      );
      return null;
    }
    // A 1.0 integer id is the panel engine's key of it (zero-padded, see parsePanel).
    const id = people ? panelKey(v as number) : (v as string);
    if (!known.has(id)) {
      add("unknownReference", path, `No ${what} has id ${JSON.stringify(v)}.`);
      return null;
    }
    return id;
  };
}

function parseFilters(
  filters0: unknown,
  issues: Issue[],
  add: Add,
  idOf: IdOf,
  groupIds: ReadonlySet<string>,
  partitionIds: ReadonlySet<string>,
  limits: ReportLimits,
): ReportFilter[] {
  const filters: ReportFilter[] = [];
  if (filters0 !== undefined && filters0 !== null) {
    if (!Array.isArray(filters0)) add("invalidType", ["filters"], "Must be an array of filters.");
    // Over the bound the filters are not even looked at (RP15): the refusal costs no more than the parse.
    else if (filters0.length > limits.maxFilters)
      add(
        "tooBig",
        ["filters"],
        `Holds ${filters0.length} filters; a report takes at most ${limits.maxFilters} (the report filter bound).`,
      );
    else
      filters0.forEach((f, i) => {
        const checked = parseFilter(f, ["filters", i], issues, idOf, groupIds, partitionIds, limits);
        if (checked !== null) filters.push(checked);
      });
  }
  return filters;
}

/** The record properties to show, each once; every property when the body names none. */
function parseOutput(output0: unknown, people: boolean, add: Add): string[] {
  const all: readonly string[] = people ? PEOPLE_PROPERTIES : HOLDER_PROPERTIES;
  let output: string[] = [...all];
  if (output0 !== undefined && output0 !== null) {
    const names = people
      ? [...PEOPLE_PROPERTIES.filter((p) => p !== "Custom Fields"), "Custom Attributes"]
      : [...HOLDER_PROPERTIES];
    if (!Array.isArray(output0)) add("invalidType", ["output"], "Must be an array of record property names.");
    else if (output0.length === 0) add("tooSmall", ["output"], `Must name at least one property: ${list(names)}.`);
    // Each property at most once, so a longer list can only repeat names (RP15).
    else if (output0.length > all.length)
      add(
        "tooBig",
        ["output"],
        `Holds ${output0.length} entries; a report shows at most ${all.length} properties, each named once (the report output bound).`,
      );
    else {
      output = [];
      output0.forEach((name, j) => {
        const key = typeof name === "string" ? (people ? (PEOPLE_OUTPUT_ALIAS[name] ?? name) : name) : null;
        if (key === null || !all.includes(key) || (people && name === "Custom Fields"))
          add(
            "invalidValue",
            ["output", j],
            `Unknown property ${typeof name === "string" ? quote(name) : `(a ${name === null ? "null" : typeof name}, not a name)`}: use ${list(names)}.`,
          );
        else if (output.includes(key)) add("duplicateName", ["output", j], `Names ${quote(name as string)} twice.`);
        else output.push(key);
      });
    }
  }
  return output;
}

/** A firstName, lastName or email filter: an operator and a text operand. */
function parseTextFilter(
  f: Json,
  t: "firstName" | "lastName" | "email",
  path: Path,
  track: Add,
  limits: ReportLimits,
): ReportFilter {
  const { operator, operand, caseSensitive } = f;
  if (operator === undefined)
    track("required", [...path, "operator"], `Is required for a ${t} filter: one of ${list(TEXT_OPERATORS)}.`);
  else if (typeof operator !== "string" || !(TEXT_OPERATORS as readonly string[]).includes(operator))
    track(
      "invalidValue",
      [...path, "operator"],
      `Unknown operator ${JSON.stringify(operator)}: use ${list(TEXT_OPERATORS)}.`,
    );
  if (operand === undefined)
    track("required", [...path, "operand"], "Is required with an operator: the text to compare.");
  else if (typeof operand !== "string") track("invalidType", [...path, "operand"], "Must be a string.");
  else if (operand.length > limits.maxOperandLength)
    track(
      "tooBig",
      [...path, "operand"],
      `Has ${operand.length} characters; an operand has at most ${limits.maxOperandLength} (the report operand bound).`,
    );
  if (caseSensitive !== undefined && typeof caseSensitive !== "boolean")
    track("invalidType", [...path, "caseSensitive"], "Must be true or false.");
  return {
    type: t,
    operator: operator as TextOperator,
    operand: operand as string,
    caseSensitive: caseSensitive === true,
  };
}

/** A groups or partition filter: memberOf and/or notMemberOf, lists of known ids. */
function parseIdListFilter(
  f: Json,
  t: "groups" | "partition",
  path: Path,
  track: Add,
  idOf: IdOf,
  known: ReadonlySet<string>,
  limits: ReportLimits,
): ReportFilter {
  const what = t === "groups" ? "group" : "partition";
  const ids = (key: "memberOf" | "notMemberOf"): string[] | null => {
    const v = f[key];
    if (v === undefined || v === null) return null;
    if (!Array.isArray(v) || v.length === 0) {
      track("invalidType", [...path, key], `Must be a non-empty array of ${what} ids.`);
      return null;
    }
    if (v.length > limits.maxIdsPerList) {
      track(
        "tooBig",
        [...path, key],
        `Holds ${v.length} ids; a ${key} list takes at most ${limits.maxIdsPerList} (the report id-list bound).`,
      );
      return null;
    }
    const got = v.map((x, j) => idOf(x, [...path, key, j], known, what));
    return got.filter((x): x is string => x !== null);
  };
  const memberOf = ids("memberOf");
  const notMemberOf = ids("notMemberOf");
  if ((f.memberOf === undefined || f.memberOf === null) && (f.notMemberOf === undefined || f.notMemberOf === null))
    track("required", path, `A ${t} filter needs memberOf or notMemberOf (a list of ${what} ids).`);
  return { type: t, memberOf, notMemberOf };
}

/** A credentials filter: a card number comparison and/or a mobile credential's type and status. */
function parseCredentialsFilter(f: Json, path: Path, track: Add): ReportFilter {
  const card = f.cardNumber;
  const mobile = f.mobile;
  let cardNumber: Extract<ReportFilter, { type: "credentials" }>["cardNumber"] = null;
  let mob: Extract<ReportFilter, { type: "credentials" }>["mobile"] = null;
  if ((card === undefined || card === null) && (mobile === undefined || mobile === null))
    track("required", path, "A credentials filter needs cardNumber ({operator, operand}) or mobile ({type, status}).");
  if (card !== undefined && card !== null) {
    const p = [...path, "cardNumber"];
    if (!isObject(card))
      track("invalidType", p, 'Must be an object {operator: "equals" | "does not equal", operand: card number}.');
    else {
      for (const k of Object.keys(card))
        if (k !== "operator" && k !== "operand")
          track("unrecognizedKeys", [...p, k], `cardNumber takes "operator" and "operand", not "${k}".`);
      if (card.operator === undefined)
        track("required", [...p, "operator"], 'Is required: "equals" or "does not equal".');
      else if (card.operator !== "equals" && card.operator !== "does not equal")
        track(
          "invalidValue",
          [...p, "operator"],
          `Unknown operator ${JSON.stringify(card.operator)}: use "equals" or "does not equal".`,
        );
      if (card.operand === undefined)
        track("required", [...p, "operand"], "Is required: the card number (a whole number).");
      else if (!isCardNumber(card.operand))
        track(
          "invalidType",
          [...p, "operand"],
          "Must be a card number (a whole number, 0 or more; past 2^53−1 a decimal string of digits).",
        );
      const operand = isCardNumber(card.operand) ? cardNumberValue(card.operand as CardNumber) : 0;
      cardNumber = { operator: card.operator as "equals", operand };
    }
  }
  if (mobile !== undefined && mobile !== null) {
    const p = [...path, "mobile"];
    if (!isObject(mobile))
      track("invalidType", p, 'Must be an object {type: "touch" | "token", status: "accepted" | "pending"}.');
    else {
      for (const k of Object.keys(mobile))
        if (k !== "type" && k !== "status")
          track("unrecognizedKeys", [...p, k], `mobile takes "type" and "status", not "${k}".`);
      if (mobile.type === undefined) track("required", [...p, "type"], 'Is required: "touch" or "token".');
      else if (mobile.type !== "touch" && mobile.type !== "token")
        track(
          "invalidValue",
          [...p, "type"],
          `Unknown mobile type ${JSON.stringify(mobile.type)}: use "touch" or "token".`,
        );
      if (mobile.status === undefined) track("required", [...p, "status"], 'Is required: "accepted" or "pending".');
      else if (mobile.status !== "accepted" && mobile.status !== "pending")
        track(
          "invalidValue",
          [...p, "status"],
          `Unknown status ${JSON.stringify(mobile.status)}: use "accepted" or "pending".`,
        );
      mob = { type: mobile.type as "touch", status: mobile.status as "accepted" };
    }
  }
  return { type: "credentials", cardNumber, mobile: mob };
}
