// Turns zod issues into our Issue shape: camelCase codes and one plain sentence each.
import type { z } from "zod";
import type { Issue, IssueCode } from "./issue.js";

/** Longest part of an input value that an issue message repeats. */
export const ECHO_LIMIT = 100;

/**
 * A string from the input as an issue message repeats it: in double quotes, cut after ECHO_LIMIT
 * characters (never inside a surrogate pair) with "…" and the full length, so that a message stays
 * short whatever the input holds.
 */
export function quote(value: string): string {
  if (value.length <= ECHO_LIMIT) return `"${value}"`;
  let end = ECHO_LIMIT;
  const c = value.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `"${value.slice(0, end)}…" (${value.length} characters)`;
}

/** Our code for each zod issue code (exhaustive: a code a new zod version adds fails the typecheck). */
const ZOD_CODES: Readonly<Record<z.core.$ZodIssueCode, IssueCode>> = {
  invalid_type: "invalidType",
  too_big: "tooBig",
  too_small: "tooSmall",
  invalid_format: "invalidFormat",
  not_multiple_of: "notMultipleOf",
  unrecognized_keys: "unrecognizedKeys",
  invalid_union: "invalidUnion",
  invalid_key: "invalidKey",
  invalid_element: "invalidElement",
  invalid_value: "invalidValue",
  custom: "invalid",
};

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}

function unitOf(origin: unknown): string {
  if (origin === "string") return " characters long";
  if (origin === "array" || origin === "set") return " items";
  return "";
}

/** A plain sentence for one zod issue (used as zod's error map and for issues it already built). */
export function zodMessage(iss: z.core.$ZodRawIssue | z.core.$ZodIssue): string | undefined {
  const i = iss as Record<string, unknown>;
  switch (iss.code) {
    case "invalid_type":
      if (i.input === undefined && !("received" in i)) return "Is required.";
      if (typeof i.input === "number" && (i.expected === "number" || i.expected === "int"))
        return Number.isFinite(i.input) ? "Must be an integer." : "Must be a finite number.";
      return `Must be ${String(i.expected)}, not ${describe(i.input)}.`;
    case "too_big": {
      const op = i.inclusive === false ? "less than" : "at most";
      return `Must be ${op} ${String(i.maximum)}${unitOf(i.origin)}.`;
    }
    case "too_small": {
      const op = i.inclusive === false ? "more than" : "at least";
      return `Must be ${op} ${String(i.minimum)}${unitOf(i.origin)}.`;
    }
    case "invalid_value": {
      const values = (i.values as unknown[] | undefined) ?? [];
      return values.length === 1
        ? `Must be ${JSON.stringify(values[0])}.`
        : `Must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}.`;
    }
    case "invalid_union":
      return "Does not match any accepted shape.";
    case "not_multiple_of":
      return `Must be a multiple of ${String(i.divisor)}.`;
    default:
      return undefined;
  }
}

/**
 * Maps a zod error's issues to ours, prefixing `base` to each path. An issue equal to one before it
 * (zod checks a number above 2^53 against both the safe-integer range and the schema's maximum) is
 * reported once.
 */
export function fromZodIssues(issues: readonly z.core.$ZodIssue[], base: readonly (string | number)[] = []): Issue[] {
  const out: Issue[] = [];
  const seen = new Set<string>();
  for (const iss of issues) {
    const issue: Issue = {
      code: ZOD_CODES[iss.code] ?? "invalid",
      path: [...base, ...(iss.path as (string | number)[])],
      message: iss.message,
    };
    const key = JSON.stringify([issue.code, issue.path, issue.message]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  return out;
}
