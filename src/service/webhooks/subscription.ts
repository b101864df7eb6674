// Webhook subscriptions: their fields and the checks of a create or update body. Every problem is
// reported, each at its path in the request (`body.events[2]`), with a sentence.
import { formatPath } from "../../model/index.js";
import { type Generation, TOPICS, type TopicCategory } from "../../events/topics.js";
import type { SecrecyLevel } from "../../events/types.js";

/** Longest subscription name. */
export const MAX_NAME = 70;
/** Longest subscription secret. */
export const MAX_SECRET = 255;

/** How a subscription authenticates to its receiver. */
export type SubscriptionAuthentication =
  | { readonly type: "None" }
  | { readonly type: "Basic"; readonly user: string; readonly password: string };

/** A subscription as served (retrieve, list). */
export interface Subscription {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly scope: string | readonly string[];
  readonly authentication: SubscriptionAuthentication;
  readonly events: readonly string[];
  readonly active: boolean;
  readonly sslVerification: boolean;
  readonly secrecyLevel: SecrecyLevel;
  readonly expiresAt: string | null;
  readonly userId: string | null;
  readonly odometer: number;
  readonly secret: string | null;
}

/** The fields a body sets (everything but id, userId and odometer). */
export type SubscriptionFields = Omit<Subscription, "id" | "userId" | "odometer">;

/** One problem of a subscription body: where (`body.events[2]`) and what. */
export interface SubscriptionIssue {
  readonly path: string;
  readonly message: string;
}

/** Where notifications may go, as the subscription checks need it. */
export interface DestinationPolicy {
  /** Why a URL is refused (its host a refused IP literal, or `localhost`), or null. */
  urlProblem(url: URL): string | null;
}

/** What the checks of a body need to know about the server. */
export interface SubscriptionContext {
  readonly generation: Generation;
  /**
   * 2.0: the cloud-node ids of the system; 1.0: the panel's serial number (a legacy organization's
   * panels' serial numbers); null for an organization without nodes (the root, a dealer: T46).
   */
  readonly nodeIds: ReadonlySet<string> | null;
  /** The current time (epoch ms), for `expiresAt`. */
  readonly now: number;
  /** Where notifications may go: a URL whose host is a refused IP literal (or `localhost`) is refused (HW1). */
  readonly destinations?: DestinationPolicy;
}

const SCOPES: Readonly<Record<Generation, readonly [string, string]>> = {
  "2.0": ["this", "recursive"],
  "1.0": ["ou", "ouRecursive"],
};
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
const show = (x: unknown): string =>
  typeof x === "string" ? `"${x.length > 100 ? `${x.slice(0, 100)}…` : x}"` : (JSON.stringify(x) ?? String(x));

/** An absolute HTTPS URL whose host, when an IP literal or `localhost`, the destination policy allows (HW1). */
function checkUrl(
  value: unknown,
  destinations: DestinationPolicy | undefined,
): { ok: true; url: string } | { ok: false; message: string } {
  let parsed: URL | null = null;
  if (typeof value === "string")
    try {
      parsed = new URL(value);
    } catch {
      parsed = null;
    }
  if (parsed === null) return { ok: false, message: `Must be an absolute HTTPS URL (https://…), not ${show(value)}.` };
  if (parsed.protocol !== "https:")
    return {
      ok: false,
      message: `Must be an HTTPS URL: notifications are sent over HTTPS only, not ${parsed.protocol.slice(0, -1)}.`,
    };
  const refused = destinations?.urlProblem(parsed) ?? null;
  return refused === null ? { ok: true, url: value as string } : { ok: false, message: refused };
}

/** The body being checked, and where its problems go: shared by the checks of each field. */
interface BodyCheck {
  readonly body: Record<string, unknown>;
  readonly mode: "create" | "update";
  /** The path of a field of the body. */
  at(key: string | number, ...rest: (string | number)[]): (string | number)[];
  add(path: (string | number)[], message: string): void;
  /** False (and a problem) when the field is missing. */
  required(key: string): boolean;
}

/**
 * Checks a create (`mode` "create") or update body and returns the subscription fields it sets.
 * An update keeps the current `expiresAt` and `secret` when the body omits them (null clears them).
 * @returns the fields, or every problem with its path.
 */
export function parseSubscriptionBody(
  body: unknown,
  mode: "create" | "update",
  ctx: SubscriptionContext,
  current?: SubscriptionFields,
): { ok: true; value: SubscriptionFields } | { ok: false; issues: SubscriptionIssue[] } {
  const issues: SubscriptionIssue[] = [];
  const add = (path: (string | number)[], message: string) => {
    issues.push({ path: formatPath(path), message });
  };
  if (!isObject(body)) {
    add(["body"], "Must be a JSON object with the subscription's fields.");
    return { ok: false, issues };
  }
  const at = (key: string | number, ...rest: (string | number)[]) => ["body", key, ...rest];
  const c: BodyCheck = {
    body,
    mode,
    at,
    add,
    required: (key) => {
      if (body[key] === undefined) {
        add(at(key), `Is required${mode === "update" ? " on an update" : ""}.`);
        return false;
      }
      return true;
    },
  };
  const name = checkName(c);
  let url = "";
  if (c.required("url")) {
    const checked = checkUrl(body.url, ctx.destinations);
    if (checked.ok) url = checked.url;
    else add(at("url"), checked.message);
  }
  const nodeWord = ctx.generation === "2.0" ? "cloud-node id" : "cloud-node serial number";
  const scope = checkScope(c, ctx, nodeWord);
  const authentication = checkAuthentication(c);
  const events = checkEvents(c, ctx, nodeWord);
  const active = checkFlag(c, "active", true);
  const sslVerification = checkFlag(c, "sslVerification", true);
  const secrecyLevel = checkSecrecyLevel(c);
  const expiresAt = checkExpiresAt(c, ctx, current?.expiresAt ?? null);
  const secret = checkSecret(c, current?.secret ?? null);
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    value: { name, url, scope, authentication, events, active, sslVerification, secrecyLevel, expiresAt, secret },
  };
}

function checkName({ body, at, add, required }: BodyCheck): string {
  let name = "";
  if (required("name")) {
    if (typeof body.name !== "string" || body.name.trim() === "") add(at("name"), "Must be a non-empty string.");
    else if (body.name.length > MAX_NAME)
      add(at("name"), `Must be at most ${MAX_NAME} characters; it has ${body.name.length}.`);
    else name = body.name;
  }
  return name;
}

/** This node, recursive, or an array of the system's node ids (1.0: the panel's serial number). */
function checkScope(c: BodyCheck, ctx: SubscriptionContext, nodeWord: string): string | string[] {
  const { at, add } = c;
  const [own, recursive] = SCOPES[ctx.generation];
  let scope: string | string[] = own;
  if (c.required("scope")) {
    const s = c.body.scope;
    if (s === own || s === recursive) scope = s;
    else if (Array.isArray(s) && ctx.nodeIds === null)
      add(
        at("scope"),
        `This organization has no cloud nodes (it is the root or a dealer): the scope must be "${own}" or "${recursive}".`,
      );
    else if (Array.isArray(s)) {
      const nodeIds = ctx.nodeIds ?? new Set<string>();
      if (s.length === 0) add(at("scope"), `An array scope must name at least one ${nodeWord}.`);
      s.forEach((id, i) => {
        if (typeof id !== "string") add(at("scope", i), `Must be a ${nodeWord} (a string).`);
        else if (!nodeIds.has(id))
          add(
            at("scope", i),
            ctx.generation === "2.0"
              ? `Names cloud node ${show(id)}, which is not in this system.`
              : `Names cloud node ${show(id)}, which is not this organization's panel.`,
          );
      });
      scope = s.filter((x): x is string => typeof x === "string");
    } else add(at("scope"), `Must be "${own}", "${recursive}" or an array of ${nodeWord}s, not ${show(s)}.`);
  }
  return scope;
}

function checkAuthentication(c: BodyCheck): SubscriptionAuthentication {
  const { at, add } = c;
  let authentication: SubscriptionAuthentication = { type: "None" };
  if (c.required("authentication")) {
    const a = c.body.authentication;
    if (!isObject(a))
      add(at("authentication"), 'Must be an object: {"type": "None"} or {"type": "Basic", "user", "password"}.');
    else if (a.type === "None") authentication = { type: "None" };
    else if (a.type === "Basic") {
      const ok = (k: "user" | "password") => {
        if (typeof a[k] === "string" && a[k] !== "") return true;
        add(at("authentication", k), `Is required with Basic authentication (a non-empty string).`);
        return false;
      };
      const u = ok("user");
      const p = ok("password");
      if (u && typeof a.user === "string" && a.user.includes(":"))
        add(
          at("authentication", "user"),
          "May not contain a colon: Basic authentication separates user and password with one.",
        );
      else if (u && p) authentication = { type: "Basic", user: a.user as string, password: a.password as string };
    } else add(at("authentication", "type"), `Must be "None" or "Basic", not ${show(a.type)}.`);
  }
  return authentication;
}

/** Known event names, each once, of one category (organization or cloud node; node events only with a node scope). */
function checkEvents(c: BodyCheck, ctx: SubscriptionContext, nodeWord: string): string[] {
  const { body, at, add } = c;
  const events: string[] = [];
  if (c.required("events")) {
    const e = body.events;
    const known = TOPICS[ctx.generation];
    if (!Array.isArray(e) || e.length === 0) add(at("events"), "Must be a non-empty array of event names.");
    else {
      const byCategory = new Map<TopicCategory, string[]>();
      e.forEach((t, i) => {
        const category = typeof t === "string" ? known.get(t) : undefined;
        if (category === undefined) {
          add(at("events", i), `Unknown event ${show(t)}; the known events are ${[...known.keys()].join(", ")}.`);
          return;
        }
        if (events.includes(t as string)) add(at("events", i), `Names ${show(t)} twice.`);
        events.push(t as string);
        byCategory.set(category, [...(byCategory.get(category) ?? []), t as string]);
        if (Array.isArray(body.scope) && category !== "cloudNode")
          add(
            at("events", i),
            `${show(t)} is not a cloud-node event: a scope of ${nodeWord}s admits cloud-node events only.`,
          );
      });
      const org = byCategory.get("organization");
      const node = byCategory.get("cloudNode");
      if (org !== undefined && node !== undefined)
        add(
          at("events"),
          `Mixes organization events (${org.join(", ")}) with cloud-node events (${node.join(", ")}): subscribe to each kind separately.`,
        );
    }
  }
  return events;
}

/** A boolean field: default `dflt` on a create, required on an update. */
function checkFlag(c: BodyCheck, key: "active" | "sslVerification", dflt: boolean): boolean {
  const v = c.body[key];
  if (v === undefined) {
    if (c.mode === "update") c.required(key);
    return dflt;
  }
  if (typeof v !== "boolean") c.add(c.at(key), `Must be true or false, not ${show(v)}.`);
  return v === true;
}

function checkSecrecyLevel(c: BodyCheck): SecrecyLevel {
  const { body } = c;
  let secrecyLevel: SecrecyLevel = 1;
  if (body.secrecyLevel === undefined) {
    if (c.mode === "update") c.required("secrecyLevel");
  } else if (body.secrecyLevel === 0 || body.secrecyLevel === 1 || body.secrecyLevel === 2)
    secrecyLevel = body.secrecyLevel;
  else
    c.add(
      c.at("secrecyLevel"),
      `Must be 0 (no filtering), 1 (no PINs or credentials) or 2 (also no names), not ${show(body.secrecyLevel)}.`,
    );
  return secrecyLevel;
}

/** An instant in the future, or null; `current` when the body omits it. */
function checkExpiresAt(c: BodyCheck, ctx: SubscriptionContext, current: string | null): string | null {
  const { body, at, add } = c;
  let expiresAt = current;
  if (body.expiresAt === null) expiresAt = null;
  else if (body.expiresAt !== undefined) {
    const v = body.expiresAt;
    const ms = typeof v === "string" && ISO_INSTANT.test(v) ? Date.parse(v) : NaN;
    if (Number.isNaN(ms))
      add(
        at("expiresAt"),
        `Must be an ISO 8601 instant with a time zone offset (e.g. 2027-01-01T00:00:00Z) or null, not ${show(v)}.`,
      );
    else if (ms <= ctx.now)
      add(at("expiresAt"), `Must be in the future; ${v} is not after ${new Date(ctx.now).toISOString()}.`);
    else expiresAt = new Date(ms).toISOString();
  }
  return expiresAt;
}

/** A string of at most MAX_SECRET characters ("" or null: none); `current` when the body omits it. */
function checkSecret(c: BodyCheck, current: string | null): string | null {
  const { body, at, add } = c;
  let secret = current;
  if (body.secret === null) secret = null;
  else if (body.secret !== undefined) {
    if (typeof body.secret !== "string") add(at("secret"), "Must be a string or null.");
    else if (body.secret.length > MAX_SECRET)
      add(at("secret"), `Must be at most ${MAX_SECRET} characters; it has ${body.secret.length}.`);
    else secret = body.secret === "" ? null : body.secret;
  }
  return secret;
}
