// Roles and partitions over the live system (semantics H17–H22): a thin layer of the HTTP adapter
// that filters the operations a token sends to the live system and the answers it gets back. The
// live system itself knows nothing of tokens.
//
// A manager or reporter sees the system through a view of its snapshot: the partitions of its token,
// their custom fields, the holders and groups of those partitions (an entity without a partition is in
// the system's default partition, H18), and the rules of those groups. Reads of the view answer 404
// for an id outside it, exactly as for an id that does not exist, and lists and totals count only
// what the view holds. Writes (managers only) are checked against the view before they reach the
// live system.
import type { Area, Device, Group, Holder, Issue, SystemSnapshot } from "../../model/index.js";
import type { RsopResult } from "../../evaluate/index.js";
import { Refusal, notFound } from "../../live/operation.js";
import type { ReadHandler } from "../../live/routes.js";
import { HttpError } from "../httpError.js";
import type { Grant } from "./grant.js";

/** What a token may see of one snapshot. */
export interface Scope {
  /** The snapshot as the token sees it (the very snapshot for admin and integrator). */
  readonly view: SystemSnapshot;
  readonly holder: (id: string) => boolean;
  readonly group: (id: string) => boolean;
  readonly rule: (id: string) => boolean;
  /** Whether a holder or group with this partition (null: none) is the token's. */
  readonly partition: (id: string | null) => boolean;
  /** Whether a device is in one of the token's partitions (one in none is in the default partition, HS1). */
  readonly device: (id: string) => boolean;
  /** Whether a floor group is in one of the token's partitions (none: the default partition, HS1). */
  readonly floorGroup: (id: string) => boolean;
  /** Whether the view's holders carry masked PINs (a reporter's, HS2). */
  readonly pinsMasked: boolean;
}

/** What a reporter reads in place of a PIN that is set (HS2): never digits, so never taken for a PIN. */
export const MASKED_PIN = "****";

const mask = (pin: string | null): string | null => (pin === null ? null : MASKED_PIN);

const views = new WeakMap<SystemSnapshot, WeakMap<Grant, Scope>>();

/**
 * The scope of `grant` in `snapshot` (cached per snapshot and grant: a snapshot never changes, and a
 * burst of reads between two writes filters it once).
 */
export function scopeOf(snapshot: SystemSnapshot, grant: Grant): Scope {
  const parts = grant.partitions;
  if (parts === null) {
    const all = () => true;
    return {
      view: snapshot,
      holder: all,
      group: all,
      rule: all,
      partition: all,
      device: all,
      floorGroup: all,
      pinsMasked: false,
    };
  }
  let byGrant = views.get(snapshot);
  if (byGrant === undefined) views.set(snapshot, (byGrant = new WeakMap()));
  const cached = byGrant.get(grant);
  if (cached !== undefined) return cached;
  const defaultId = snapshot.partitions.find((p) => p.default === true)?.id ?? null;
  const partition = (id: string | null): boolean => {
    const effective = id ?? defaultId;
    return effective !== null && parts.has(effective);
  };
  const groups = snapshot.groups.filter((g: Group) => partition(g.partition));
  const groupIds = new Set(groups.map((g) => g.id));
  const masked = grant.role === "reporter";
  const holders = snapshot.holders
    .filter((h: Holder) => partition(h.partition))
    .map((h) =>
      h.groups.every((g) => groupIds.has(g)) ? h : { ...h, groups: h.groups.filter((g) => groupIds.has(g)) },
    )
    .map((h) =>
      masked && (h.pin !== null || h.duressPin !== null) ? { ...h, pin: mask(h.pin), duressPin: mask(h.duressPin) } : h,
    );
  const holderIds = new Set(holders.map((h) => h.id));
  const rules = snapshot.rules.filter((r) => groupIds.has(r.groupId));
  const ruleIds = new Set(rules.map((r) => r.id));
  // A calendar of the token's partitions, or one a visible rule follows (C5: a rule may follow a
  // calendar of any partition, and its answers must stay what they are for everyone).
  const followed = new Set(rules.flatMap((r) => (r.calendar ? [r.calendar.id] : [])));
  const calendars = snapshot.calendars.filter((c) => partition(c.partition) || followed.has(c.id));
  const deviceIds = new Set(
    snapshot.devices
      .filter((d: Device) => (d.partition.length === 0 ? partition(null) : d.partition.some((p) => parts.has(p.id))))
      .map((d) => d.id),
  );
  const view: SystemSnapshot = {
    ...snapshot,
    calendars,
    areas: areasInView(snapshot.areas, deviceIds, holderIds),
    partitions: snapshot.partitions.filter((p) => parts.has(p.id)),
    customFields: snapshot.customFields.filter((f) => parts.has(f.partition)),
    groups,
    holders,
    rules,
  };
  const floorGroupIds = new Set(snapshot.floorGroups.filter((f) => partition(f.partition)).map((f) => f.id));
  const scope: Scope = {
    view,
    holder: (id) => holderIds.has(id),
    group: (id) => groupIds.has(id),
    rule: (id) => ruleIds.has(id),
    partition,
    device: (id) => deviceIds.has(id),
    floorGroup: (id) => floorGroupIds.has(id),
    pinsMasked: masked,
  };
  byGrant.set(grant, scope);
  return scope;
}

/**
 * The areas a manager's or reporter's view holds (docs/semantics.md AB10): those with an entry or exit
 * among the devices of its partitions (an area is where its doors are), each with `forgiven` naming
 * only holders of the view, so that no holder id outside it is read.
 */
function areasInView(areas: readonly Area[], devices: ReadonlySet<string>, holders: ReadonlySet<string>): Area[] {
  return areas
    .filter((a) => a.entries.some((d) => devices.has(d)) || a.exits.some((d) => devices.has(d)))
    .map((a) => {
      if (a.forgiven === undefined) return a;
      const seen = Object.entries(a.forgiven).filter(([h]) => holders.has(h));
      return seen.length === Object.keys(a.forgiven).length ? a : { ...a, forgiven: Object.fromEntries(seen) };
    });
}

/** Runs a read route on the token's view; a refusal of the route (404 outside the view, 400) is raised as the live system would answer it. */
export function readInScope(
  handler: ReadHandler,
  scope: Scope,
  ctx: Omit<Parameters<ReadHandler>[0], "snapshot">,
): { body: unknown; total?: number } {
  // Searching by PIN would find a masked PIN's digits one guess at a time (HS2); only the holder list takes search_fields.
  if (scope.pinsMasked && (ctx.query.get("search_fields") ?? "").split(",").some((f) => f.trim() === "pin"))
    throw new HttpError(403, "A reporter does not see PINs, so it may not search by them.", [
      { path: "query.search_fields", message: 'Leave out "pin": a reporter searches firstName, lastName and email.' },
    ]);
  try {
    return handler({ ...ctx, snapshot: scope.view });
  } catch (e) {
    if (e instanceof Refusal) throw new LiveRefusal(e.status, e.issues);
    throw e;
  }
}

/** A refusal worded by the live system's own helpers, answered like one of its refusals. */
export class LiveRefusal extends Error {
  constructor(
    readonly status: Refusal["status"],
    readonly issues: Refusal["issues"],
  ) {
    super("refused");
  }
}

/** The refusal the live system gives an id that does not exist, for an id outside the scope. */
function unknown(what: string, id: string): never {
  try {
    notFound(what, id);
  } catch (e) {
    if (e instanceof Refusal) throw new LiveRefusal(e.status, e.issues);
    throw e;
  }
}

/** The first path segment of a seed route whose writes a manager may send. */
const MANAGED = new Set(["holders", "groups", "rules"]);

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** Names each partition of the grant, for a 403's sentence. */
function partitionList(grant: Grant): string {
  return [...(grant.partitions ?? [])].map((p) => `"${p}"`).join(", ");
}

/**
 * Checks a write of `grant` against its scope and returns the body to send to the live system (a
 * replace list keeps the memberships outside the scope, which the token cannot see): checkWritePath,
 * then checkWriteBody. `pattern` is the route's pattern in the live route table (`/holders/:holderId`).
 * @throws HttpError 403 (reporter; a manager's write outside holders, groups and rules; a holder or
 *   group put in a partition not the token's), LiveRefusal 404 (a path id outside the scope) or 400
 *   (a body id outside the scope, answered as an id that does not exist).
 */
export function checkWrite(
  grant: Grant,
  snapshot: SystemSnapshot,
  method: string,
  pattern: string,
  params: Readonly<Record<string, string>>,
  body: unknown,
): unknown {
  if (!checkWritePath(grant, snapshot, method, pattern, params)) return body;
  return checkWriteBody(grant, snapshot, method, pattern, params, body);
}

/** The literal segments of a route pattern, and whether it has the shape `literal` (null: a parameter). */
function shapeOf(pattern: string): { first: string; is: (...literal: (string | null)[]) => boolean } {
  const seg = pattern.split("/").slice(1);
  return {
    first: seg[0] ?? "",
    is: (...literal) => seg.length === literal.length && literal.every((x, i) => x === null || x === seg[i]),
  };
}

/**
 * The checks of a write that its route and path ids decide, before its body is read (H14's order):
 * the role, a manager's resources, and the path ids in scope.
 * @returns whether the body must be checked too (checkWriteBody): true for a manager's write.
 */
export function checkWritePath(
  grant: Grant,
  snapshot: SystemSnapshot,
  method: string,
  pattern: string,
  params: Readonly<Record<string, string>>,
): boolean {
  if (grant.role === "admin" || grant.role === "integrator") return false;
  if (grant.role === "reporter")
    throw new HttpError(403, "This token is a reporter's: it may only read.", [
      { path: "method", message: `A reporter may not ${method}.` },
    ]);
  const { first } = shapeOf(pattern);
  if (!MANAGED.has(first))
    throw new HttpError(403, "A manager changes only holders, groups and rules.", [
      { path: "path", message: `A manager may not ${method} /${first}.` },
    ]);
  const scope = scopeOf(snapshot, grant);
  if (params.holderId !== undefined && !scope.holder(params.holderId)) unknown("holder", params.holderId);
  if (params.groupId !== undefined && !scope.group(params.groupId)) unknown("group", params.groupId);
  if (params.ruleId !== undefined && !scope.rule(params.ruleId)) unknown("rule", params.ruleId);
  if (params.ruleId !== undefined) ruleInScope(grant, scope, snapshot, params.ruleId);
  return true;
}

/**
 * The checks of a manager's write body (after checkWritePath), and the body to send to the live
 * system: partitions and ids the body names must be the token's.
 */
export function checkWriteBody(
  grant: Grant,
  snapshot: SystemSnapshot,
  method: string,
  pattern: string,
  params: Readonly<Record<string, string>>,
  body: unknown,
): unknown {
  if (!isObject(body)) return body;
  const { first, is: route } = shapeOf(pattern);
  const scope = scopeOf(snapshot, grant);
  if (first === "rules") ruleBodyInScope(grant, scope, body);

  // A holder or group is created in, or moved to, one of the token's partitions only.
  const entity = (first === "holders" || first === "groups") && (method === "POST" ? route(first) : route(first, null));
  if (entity && (method === "POST" || "partition" in body)) {
    const p = body.partition === undefined ? null : body.partition;
    if ((p === null || typeof p === "string") && !scope.partition(p))
      throw new HttpError(403, `A manager puts ${first} only in its partitions.`, [
        {
          path: "body.partition",
          message: `${p === null ? "No partition (the default partition)" : `Partition "${p}"`} is not one of this token's: ${partitionList(grant)}.`,
        },
      ]);
  }

  // Ids a body names: one outside the scope is answered as the live system answers one that does not
  // exist (a replace list's own check, else the snapshot check of the result).
  const missing = (what: string, id: string, replace: boolean) =>
    replace ? `Names ${what} "${id}", which does not exist.` : `Names ${what} "${id}", which is not in the snapshot.`;
  const refs = (
    key: string,
    visible: (id: string) => boolean,
    exists: (id: string) => boolean,
    what: string,
    replace: boolean,
  ) => {
    const list = body[key];
    if (!Array.isArray(list)) return;
    const issues = list.flatMap((id, j) =>
      typeof id === "string" && exists(id) && !visible(id)
        ? [{ code: "unknownReference" as const, path: ["body", key, j], message: missing(what, id, replace) }]
        : [],
    );
    if (issues.length > 0) throw new LiveRefusal(400, issues);
  };
  const holderExists = (id: string) => snapshot.holders.some((h) => h.id === id);
  const groupExists = (id: string) => snapshot.groups.some((g) => g.id === id);
  const holderGroups = method === "PUT" && route("holders", null, "groups");
  const groupHolders = method === "PUT" && route("groups", null, "holders");
  if (method === "POST" && route("holders")) refs("groups", scope.group, groupExists, "group", false);
  if (holderGroups) refs("groups", scope.group, groupExists, "group", true);
  if (groupHolders) refs("holders", scope.holder, holderExists, "holder", true);
  if (first === "rules" && typeof body.groupId === "string" && groupExists(body.groupId) && !scope.group(body.groupId))
    throw new LiveRefusal(400, [
      { code: "unknownReference", path: ["body", "groupId"], message: missing("group", body.groupId, false) },
    ]);

  // Replace lists: what the token cannot see stays as it is.
  if (holderGroups && Array.isArray(body.groups)) {
    const h = snapshot.holders.find((x) => x.id === params.holderId)!;
    return { ...body, groups: [...body.groups, ...h.groups.filter((g) => !scope.group(g))] };
  }
  if (groupHolders && Array.isArray(body.holders)) {
    const hidden = snapshot.holders
      .filter((h) => h.groups.includes(params.groupId!) && !scope.holder(h.id))
      .map((h) => h.id);
    return { ...body, holders: [...body.holders, ...hidden] };
  }
  return body;
}

/** The device and floor group ids of a rule (or rule body) that are outside the scope, with their place. */
function outsideScope(
  scope: Scope,
  rule: Readonly<Record<string, unknown>>,
): { key: "devices" | "floorGroups"; i: number; id: string }[] {
  const out: { key: "devices" | "floorGroups"; i: number; id: string }[] = [];
  for (const key of ["devices", "floorGroups"] as const) {
    const list = rule[key];
    if (!Array.isArray(list)) continue;
    const inScope = key === "devices" ? scope.device : scope.floorGroup;
    list.forEach((id: unknown, i) => {
      if (typeof id === "string" && !inScope(id)) out.push({ key, i, id });
    });
  }
  return out;
}

/**
 * A manager's rule may name only devices and floor groups of its partitions (HS1): a body naming
 * another is 403 at `body.devices.<i>` / `body.floorGroups.<i>` — whether or not it exists, so the
 * answer tells nothing of other partitions. An id that exists nowhere in scope is refused the same way.
 */
function ruleBodyInScope(grant: Grant, scope: Scope, body: Record<string, unknown>): void {
  const out = outsideScope(scope, body);
  if (out.length === 0) return;
  throw new HttpError(
    403,
    "A manager's rule names only devices and floor groups of its partitions.",
    out.map(({ key, i, id }) => ({
      path: `body.${key}.${i}`,
      message: `${key === "devices" ? "Device" : "Floor group"} "${id}" is not in this token's partitions: ${partitionList(grant)}.`,
    })),
  );
}

/**
 * A stored rule that names a device or floor group outside the manager's partitions (an admin made it
 * so) is changed or deleted by an admin only (HS1): an update could widen, and a deleted deny rule
 * would open, a door the manager does not manage.
 */
function ruleInScope(grant: Grant, scope: Scope, snapshot: SystemSnapshot, ruleId: string): void {
  const rule = snapshot.rules.find((r) => r.id === ruleId);
  if (rule === undefined) return;
  const out = outsideScope(scope, rule as unknown as Record<string, unknown>);
  if (out.length === 0) return;
  throw new HttpError(
    403,
    "This rule names devices or floor groups outside this token's partitions: an admin changes it.",
    out.map(({ key, i, id }) => ({
      path: `rule_id`,
      message: `Rule "${ruleId}" names ${key === "devices" ? "device" : "floor group"} "${id}" (${key}[${i}]), which is not in this token's partitions: ${partitionList(grant)}.`,
    })),
  );
}

/**
 * An RSOP answer as a manager or reporter may read it (HS3): each holder's `groups` and `rules` only
 * those of the token's view, and a door's or floor group's `activeRuleId` null when the rule deciding
 * it is outside the view. `allowed` stays the holder's resultant access through every group: it is
 * the truth about the holder, and names nothing outside the view.
 */
export function rsopInScope(scope: Scope, result: RsopResult): RsopResult {
  const ruleId = (id: string | null) => (id !== null && scope.rule(id) ? id : null);
  return {
    ...result,
    holders: result.holders.map((h) => ({
      ...h,
      groups: h.groups.filter((g) => scope.group(g.id)),
      rules: h.rules.filter((r) => scope.rule(r.id)),
      devices: h.devices.map((d) => ({ ...d, activeRuleId: ruleId(d.activeRuleId) })),
      floorGroups: h.floorGroups.map((f) => ({ ...f, activeRuleId: ruleId(f.activeRuleId) })),
    })),
  };
}

/** A live system's RSOP read result with its answer as `rsopInScope` makes it (a refusal as it is). */
export function rsopResultInScope<R extends { readonly ok: boolean }>(scope: Scope, result: R): R {
  if (!result.ok || !("body" in result)) return result;
  return { ...result, body: rsopInScope(scope, (result as unknown as { body: RsopResult }).body) };
}

/**
 * Checks the holder ids of an RSOP read (`ids`): when one is outside the scope, every id the token
 * cannot see is answered as the engine answers an id that does not exist (404 at `ids.<i>`, counted
 * after de-duplication, H4).
 */
export function checkRsopIds(scope: Scope, snapshot: SystemSnapshot, ids: string | null): void {
  if (ids === null) return;
  const issues = hiddenRsopIds(scope, snapshot, [
    ...new Set(
      ids
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== ""),
    ),
  ]);
  if (issues !== null) throw new LiveRefusal(404, issues);
}

/**
 * The engine's issues for RSOP `ids` (distinct, in order) when one of them is outside the scope: every
 * id the token cannot see, as an unknown id at `ids.<i>`; null when the token sees each existing one.
 */
export function hiddenRsopIds(scope: Scope, snapshot: SystemSnapshot, ids: readonly string[]): Issue[] | null {
  const exists = new Set(snapshot.holders.map((h) => h.id));
  if (!ids.some((id) => exists.has(id) && !scope.holder(id))) return null;
  return ids.flatMap((id, i): Issue[] =>
    scope.holder(id) ? [] : [{ code: "unknownId", path: ["ids", i], message: `Unknown holder id "${id}".` }],
  );
}

/** The 403 of decisions and who-can-access for a manager or reporter (H21). */
export function engineRouteRefusal(grant: Grant): HttpError {
  return new HttpError(
    403,
    `A ${grant.role} may not ask decisions or who can access a device: they name holders of every partition.`,
  );
}
