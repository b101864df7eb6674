// Holders (the 2.0 systems API "Holders"): create, update, delete; credentials go with a deleted holder.
import { holderSchema, normalizeHolder } from "../../model/index.js";
import { DECLINED, fastHolder } from "../../model/fastParse.js";
import type { Holder, Issue } from "../../model/index.js";
import { Refusal } from "../operation.js";
import { credentialInput, credentialIssues } from "./credentials.js";
import { objectBody, parseBody, pick, requireKeys } from "../body.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf, onlyKeys } from "./common.js";

const UPDATE_REQUIRED = [
  "firstName",
  "lastName",
  "partition",
  "enabled",
  "activeDate",
  "expireDate",
  "pin",
  "duressPin",
] as const;
const UPDATE_WRITABLE = [...UPDATE_REQUIRED, "email", "customFields"] as const;
/** The fields of a holder create: the 2.0 systems API's list, and the snapshot's `photoUrl`. */
const CREATE_FIELDS = [
  "firstName",
  "lastName",
  "email",
  "photoUrl",
  "partition",
  "enabled",
  "activeDate",
  "expireDate",
  "pin",
  "duressPin",
  "customFields",
  "groups",
  "credentials",
];

/** Where an update writes what a holder update does not take (HS5). */
const UPDATE_HINTS: Readonly<Record<string, string>> = {
  groups:
    "A holder update does not change memberships: use PUT /holders/{holder_id}/groups (or add and remove one group).",
  credentials: "A holder update does not change credentials: use the routes under /holders/{holder_id}/credentials.",
  id: "A holder's id never changes: the path names the holder.",
};

/**
 * A holder body as the holder schema parses it: a plainly valid one through the snapshot loader's
 * fast path (the same result, S19), anything else through the schema, whose refusal names each problem.
 */
function parseHolder(value: unknown): ReturnType<typeof holderSchema.parse> {
  const fast = fastHolder(value);
  return fast === DECLINED ? parseBody(holderSchema, value) : (fast as ReturnType<typeof holderSchema.parse>);
}

export function createHolder(ctx: WriteContext): Created {
  const { body, newId } = ctx;
  const b = objectBody(body);
  onlyKeys(b, CREATE_FIELDS, { id: "A holder's id is drawn by the system: leave it out." });
  const id = newId();
  // Credentials given on creation follow the credential-create rules (a digital one starts Pending).
  const issues: Issue[] = [];
  const credentials = Array.isArray(b.credentials)
    ? b.credentials.map((c: unknown, j: number) => {
        if (c === null || typeof c !== "object" || Array.isArray(c)) return c;
        const cb = c as Record<string, unknown>;
        issues.push(...credentialIssues(cb, ["body", "credentials", j]));
        return credentialInput(cb, typeof cb.id === "string" ? cb.id : newId());
      })
    : b.credentials;
  let holder: Holder;
  try {
    holder = normalizeHolder(parseHolder({ ...b, id, credentials }));
  } catch (e) {
    if (!(e instanceof Refusal)) throw e;
    const seen = new Set(issues.map((i) => i.path.join(".")));
    throw new Refusal(400, [...issues, ...e.issues.filter((i) => !seen.has(i.path.join(".")))]);
  }
  if (issues.length > 0) throw new Refusal(400, issues);
  ctx.append("holders", holder);
  return { status: 201, id };
}

export function updateHolder(ctx: WriteContext): Created {
  const { draft, params, body } = ctx;
  const i = indexOf(ctx, "holders", params.holderId!, "holder");
  const b = objectBody(body);
  onlyKeys(b, UPDATE_WRITABLE, UPDATE_HINTS);
  requireKeys(b, UPDATE_REQUIRED);
  // Read from the plain base, not the draft (spreading a draft makes a proxy of every nested value).
  const current = ctx.base.holders[i]!;
  const merged = { ...current, ...pick(b, UPDATE_WRITABLE), id: current.id };
  const next = normalizeHolder(parseHolder(merged));
  const written: Record<string, unknown> = { ...current };
  for (const k of UPDATE_WRITABLE) written[k] = next[k];
  draft.holders[i] = written as typeof current;
  return NO_CONTENT;
}

export function deleteHolder(ctx: WriteContext): Created {
  const id = ctx.params.holderId!;
  const i = indexOf(ctx, "holders", id, "holder");
  // A deleted holder's forgive (AB6) goes with it: `forgiven` names holders that exist, so it
  // stays as small as the holders are many (ids are never given again).
  ctx.base.areas.forEach((a, k) => {
    if (a.forgiven === undefined || !Object.hasOwn(a.forgiven, id)) return;
    const { [id]: _gone, ...rest } = a.forgiven;
    ctx.setField("areas", k, "forgiven", rest);
  });
  ctx.remove("holders", i);
  return NO_CONTENT;
}
