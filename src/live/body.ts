// Body checks shared by the operations: zod schemas of the snapshot entities, with paths under `body`;
// and the reading of an operation a caller gave, once, into a plain copy (HJ3).
import { z } from "zod";
import {
  areaSchema,
  calendarSchema,
  type Issue,
  deviceSchema,
  floorGroupSchema,
  fromZodIssues,
  groupSchema,
  holderSchema,
  ruleSchema,
  zodMessage,
} from "../model/index.js";
import type { Collection } from "../model/checks/index.js";
import { quote } from "../model/zodIssues.js";
import { plainCopy } from "../model/plainCopy.js";
import { type Operation, Refusal, type RefusedResult, refuse, refused } from "./operation.js";
import { MATCHED_ROUTE, type MatchedRoute } from "./routeTable.js";

const UNREADABLE = "Could not be read: reading it threw an error.";

/** Operations readOperation made: plain already, never read again (a batch's fall-back reads each twice). */
const READ = new WeakSet<object>();
/** The refusal of each operation readOperation could not read, answered when the operation's turn comes. */
const REFUSALS = new WeakMap<object, RefusedResult>();

/**
 * `op` as a plain operation read once (HJ3): `method`, `path` and `jsonBytes` as they read, and a
 * plain copy of `body` (plainCopy: nested at most JSON_MAX_DEPTH arrays and objects, the body counting
 * as one; nothing shared with the caller, no getters, no cycles). Something that is not an object is
 * given back for routeOperation to refuse. When a read throws or the body is too deep, the answer is
 * a placeholder whose refusal (400, every problem at its path) readRefusal gives: the operation is
 * refused when its turn comes, so a batch still names its first refused operation. Never throws.
 */
export function readOperation(op: unknown): Operation {
  if (typeof op !== "object" || op === null) return op as Operation;
  if (READ.has(op)) return op as Operation;
  const issues: Issue[] = [];
  const field = (k: string): unknown => {
    try {
      return (op as Record<string, unknown>)[k];
    } catch {
      issues.push({ code: "unreadable", path: [k], message: UNREADABLE });
      return undefined;
    }
  };
  const method = field("method");
  const path = field("path");
  const body = plainCopy(field("body"), issues, { prefix: ["body"] });
  const jsonBytes = plainCopy(field("jsonBytes"), issues, { prefix: ["jsonBytes"] });
  const out = {
    method,
    path,
    ...(body !== undefined ? { body } : {}),
    ...(jsonBytes !== undefined ? { jsonBytes } : {}),
  } as Operation;
  // The route the HTTP router matched stays with the copy, so it is not matched again.
  const route = field(MATCHED_ROUTE as unknown as string) as MatchedRoute | undefined;
  if (route !== undefined) Object.assign(out, { [MATCHED_ROUTE]: route });
  if (issues.length > 0) {
    const placeholder = { method: "", path: "" } as unknown as Operation;
    REFUSALS.set(placeholder, refused(400, issues));
    READ.add(placeholder);
    return placeholder;
  }
  READ.add(out);
  return out;
}

/** The refusal of an operation readOperation could not read, else undefined. */
export function readRefusal(op: Operation): RefusedResult | undefined {
  return typeof op === "object" && op !== null ? REFUSALS.get(op) : undefined;
}

/**
 * What `apply` was given, read once (HJ3): one operation, or a batch whose length and elements are
 * each read once (readOperation). A 400 when even that throws (a revoked Proxy, a throwing `length`).
 */
export function readInput(
  input: unknown,
): { readonly one: Operation } | { readonly many: readonly Operation[] } | { readonly refused: RefusedResult } {
  const unreadable = (path: (string | number)[]) => ({
    refused: refused(400, [{ code: "unreadable", path, message: UNREADABLE }]),
  });
  let n: number;
  try {
    if (!Array.isArray(input)) return { one: readOperation(input) };
    n = (input as unknown[]).length;
  } catch {
    return unreadable([]);
  }
  const many: Operation[] = [];
  for (let i = 0; i < n; i++) {
    let el: unknown;
    try {
      el = (input as unknown[])[i];
    } catch {
      // Refused at its turn, like any operation that cannot be read.
      const placeholder = { method: "", path: "" } as unknown as Operation;
      REFUSALS.set(placeholder, unreadable([]).refused);
      READ.add(placeholder);
      el = placeholder;
    }
    many.push(readOperation(el));
  }
  return { many };
}

/**
 * The problems of the body a write handler is reading, collected across its stages (HS6): while a
 * frame is open (collectBodyIssues), requireKeys, onlyKeys, reportBody and parseBody add their
 * problems here and the handler goes on, so one answer names every problem of the body, not only
 * those of the first stage that found one. Handlers are synchronous: a stack of frames is enough.
 */
interface BodyFrame {
  readonly issues: Issue[];
  /** Whether `id` names an element of `c` before the write (2.0): references are then checked even when the body does not parse. */
  readonly has: ((c: Collection, id: string) => boolean) | undefined;
}
const FRAMES: BodyFrame[] = [];

const pathKey = (i: Issue): string => JSON.stringify(i.path);

/** `first`, then each issue of `more` at a path `first` does not name already (one problem per field). */
export function mergeIssues(first: readonly Issue[], more: readonly Issue[]): Issue[] {
  const seen = new Set(first.map(pathKey));
  return [...first, ...more.filter((i) => !seen.has(pathKey(i)))];
}

function addTo(f: BodyFrame, issues: readonly Issue[]): void {
  const merged = mergeIssues(f.issues, issues);
  f.issues.length = 0;
  f.issues.push(...merged);
}

/**
 * Runs a write handler collecting its body's problems (HS6): answers its value and the problems
 * it went on past, or throws one Refusal naming every problem found before it stopped (a 404 of
 * the path alone: an unknown entity has no body to check). `has` (2.0): what exists before the write.
 */
export function collectBodyIssues<T>(
  run: () => T,
  has?: (c: Collection, id: string) => boolean,
): { readonly value: T; readonly issues: readonly Issue[] } {
  const frame: BodyFrame = { issues: [], has };
  FRAMES.push(frame);
  try {
    return { value: run(), issues: frame.issues };
  } catch (e) {
    if (!(e instanceof Refusal) || frame.issues.length === 0 || e.status === 404) throw e;
    throw new Refusal(400, mergeIssues(frame.issues, e.issues));
  } finally {
    FRAMES.pop();
  }
}

/** Reports problems of a body: collected when a frame is open (the handler goes on), else a 400 at once. */
export function reportBody(issues: readonly Issue[]): void {
  if (issues.length === 0) return;
  const f = FRAMES.at(-1);
  if (f === undefined) throw new Refusal(400, issues);
  addTo(f, issues);
}

/**
 * Parses `value` with an entity schema; every problem becomes a 400 issue under `prefix`. While a
 * frame is open (HS6) the problems are collected and the value is parsed again without the
 * top-level fields that have problems: when that parses (they were optional), the handler goes on
 * with it, so the checks of the other fields (references, the whole-snapshot checks) still run.
 * When it does not, the body's references are checked against the state before the write (2.0),
 * and the refusal names everything found.
 */
export function parseBody<T>(schema: z.ZodType<T>, value: unknown, prefix: readonly (string | number)[] = ["body"]): T {
  const r = schema.safeParse(value, { error: zodMessage });
  if (r.success) return r.data;
  const issues = fromZodIssues(r.error.issues, [...prefix]);
  const f = FRAMES.at(-1);
  if (f === undefined) throw new Refusal(400, issues);
  addTo(f, issues);
  const faulty = faultyKeys(issues, prefix);
  if (faulty !== null && isPlainObject(value)) {
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!faulty.has(k)) rest[k] = v;
    const again = schema.safeParse(rest, { error: zodMessage });
    if (again.success) return again.data;
    if (f.has !== undefined) addTo(f, referenceIssues(schema, value, prefix, faulty, f.has));
  }
  throw new Refusal(400, f.issues);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The top-level fields (below `prefix`) the issues name; null when one names the value itself. */
function faultyKeys(issues: readonly Issue[], prefix: readonly (string | number)[]): Set<string> | null {
  const keys = new Set<string>();
  for (const i of issues) {
    const k = i.path[prefix.length];
    if (typeof k !== "string") return null;
    keys.add(k);
  }
  return keys;
}

/** The fields of a 2.0 entity body that name other entities: field → [collection, what the message calls it]. */
const REFERENCES = new Map<unknown, Readonly<Record<string, readonly [Collection, string]>>>([
  [groupSchema, { partition: ["partitions", "partition"] }],
  [holderSchema, { partition: ["partitions", "partition"], groups: ["groups", "group"] }],
  [
    deviceSchema,
    {
      connection: ["connections", "connection"],
      primaryReader: ["devices", "device"],
      partition: ["partitions", "partition"],
    },
  ],
  [
    floorGroupSchema,
    { partition: ["partitions", "partition"], readerPort: ["devices", "device"], floors: ["devices", "device"] },
  ],
  [
    ruleSchema,
    {
      groupId: ["groups", "group"],
      devices: ["devices", "device"],
      floorGroups: ["floorGroups", "floor group"],
      calendar: ["calendars", "calendar"],
    },
  ],
  [calendarSchema, { partition: ["partitions", "partition"] }],
  [areaSchema, { entries: ["devices", "device"], exits: ["devices", "device"] }],
]);

/**
 * The unknown references of a body that does not parse, in the snapshot checks' words: the checks
 * of the resulting snapshot (which name them otherwise) run only on an entity that parses. Fields
 * with problems of their own are skipped; an id is a string, or a device partition's `{id}`.
 */
function referenceIssues(
  schema: unknown,
  value: Record<string, unknown>,
  prefix: readonly (string | number)[],
  faulty: ReadonlySet<string>,
  has: (c: Collection, id: string) => boolean,
): Issue[] {
  const fields = REFERENCES.get(schema);
  if (fields === undefined) return [];
  const issues: Issue[] = [];
  const check = (c: Collection, what: string, id: unknown, path: (string | number)[]) => {
    if (typeof id === "string" && !has(c, id))
      issues.push({
        code: "unknownReference",
        path,
        message: `Names ${what} ${quote(id)}, which is not in the snapshot.`,
      });
  };
  for (const [k, [c, what]] of Object.entries(fields)) {
    if (faulty.has(k) || !Object.hasOwn(value, k)) continue;
    const v = value[k];
    // A rule's `calendar: {id, mode}` names its calendar by `id`.
    if (isPlainObject(v)) check(c, what, v.id, [...prefix, k, "id"]);
    else if (!Array.isArray(v)) check(c, what, v, [...prefix, k]);
    else
      v.forEach((x, j) =>
        isPlainObject(x) ? check(c, what, x.id, [...prefix, k, j, "id"]) : check(c, what, x, [...prefix, k, j]),
      );
  }
  return issues;
}

/** The body as a plain object, or a 400 saying it must be one. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new Refusal(400, [{ code: "invalidType", path: ["body"], message: "Must be a JSON object." }]);
  return body as Record<string, unknown>;
}

/** 400 for every key of `required` the body does not carry (null counts as given); collected in a frame (HS6). */
export function requireKeys(body: Record<string, unknown>, required: readonly string[]): void {
  reportBody(
    required
      .filter((k) => !Object.hasOwn(body, k))
      .map((k) => ({ code: "required", path: ["body", k], message: "Is required." })),
  );
}

/** The keys of `body` that `writable` names, for merging an update into an entity. */
export function pick(body: Record<string, unknown>, writable: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of writable) if (Object.hasOwn(body, k)) out[k] = body[k];
  return out;
}

/** The writable fields of a connection body (create and update alike). */
const CONNECTION_WRITABLE = ["name", "type", "protocol", "ipaddress", "ipv6Address", "port", "manufacturer"];

/**
 * The connection fields a connection body gives, for create and update alike: `name` and `type` are
 * required (else 400), and the body's `macaddress` is the resource's `macAddress`. What each type
 * needs or may not have, and its defaults, are the connection schema's (one rule for snapshots and writes).
 */
export function connectionFields(b: Record<string, unknown>): Record<string, unknown> {
  requireKeys(b, ["name", "type"]);
  const out = pick(b, CONNECTION_WRITABLE);
  if (Object.hasOwn(b, "macaddress")) out.macAddress = b.macaddress;
  return out;
}

/** A problem of the connection a body became, at the body's own spelling: `body.macAddress` is `body.macaddress`. */
export function connectionBodyIssue(i: Issue): Issue {
  return i.path[0] === "body" && i.path[1] === "macAddress"
    ? { ...i, path: ["body", "macaddress", ...i.path.slice(2)] }
    : i;
}

/** Parses a connection made from a body with `schema`; every problem is a 400 at the body's own field. */
export function parseConnectionBody<T>(schema: z.ZodType<T>, value: unknown): T {
  const f = FRAMES.at(-1);
  const from = f?.issues.length ?? 0;
  try {
    return parseBody(schema, value);
  } catch (e) {
    if (e instanceof Refusal) throw new Refusal(e.status, e.issues.map(connectionBodyIssue));
    throw e;
  } finally {
    // What the frame collected from this parse is at the body's own spelling too.
    if (f !== undefined) for (let k = from; k < f.issues.length; k++) f.issues[k] = connectionBodyIssue(f.issues[k]!);
  }
}

const NETWORK = z.object({
  dhcp: z.boolean(),
  netmask: z.string().nullable().optional(),
  gateway: z.string().nullable().optional(),
  dns: z.string().nullable().optional(),
});

/** The network settings configure network stores on a connection. */
interface NetworkFields {
  dhcp?: boolean | null;
  netmask?: string | null;
  gateway?: string | null;
  dns?: string | null;
}

/**
 * Configure network (2.0 and 1.0): only a VENDOR_A controller takes it (409 otherwise, naming the
 * connection as `label`); `dhcp` is required, and the body's `netmask`/`gateway`/`dns` are stored
 * (null clears one), the others kept.
 */
export function configureNetwork(c: NetworkFields, manufacturer: unknown, label: string, body: unknown): void {
  if (manufacturer !== "VENDOR_A")
    refuse(
      409,
      "conflict",
      ["manufacturer"],
      `Connection ${label} is ${manufacturer == null ? "of no known manufacturer" : `a ${String(manufacturer)} controller`}; network configuration applies to VENDOR_A controllers only.`,
    );
  const b = objectBody(body);
  requireKeys(b, ["dhcp"]);
  const parsed = parseBody(NETWORK, pick(b, ["dhcp", "netmask", "gateway", "dns"]));
  c.dhcp = parsed.dhcp;
  for (const k of ["netmask", "gateway", "dns"] as const) if (Object.hasOwn(b, k)) c[k] = parsed[k] ?? null;
}
