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
import type { Group, Holder, Issue, SystemSnapshot } from "../../model/index.js";
import { Refusal, notFound } from "../../live/operation.js";
import type { ReadHandler } from "../../live/routes.js";
import { HttpError } from "./httpError.js";
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
}

const views = new WeakMap<SystemSnapshot, WeakMap<Grant, Scope>>();

/**
 * The scope of `grant` in `snapshot` (cached per snapshot and grant: a snapshot never changes, and a
 * burst of reads between two writes filters it once).
 */
export function scopeOf(snapshot: SystemSnapshot, grant: Grant): Scope {
  const parts = grant.partitions;
  if (parts === null) return { view: snapshot, holder: () => true, group: () => true, rule: () => true, partition: () => true };
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
  const holders = snapshot.holders
    .filter((h: Holder) => partition(h.partition))
    .map((h) => (h.groups.every((g) => groupIds.has(g)) ? h : { ...h, groups: h.groups.filter((g) => groupIds.has(g)) }));
  const holderIds = new Set(holders.map((h) => h.id));
  const rules = snapshot.rules.filter((r) => groupIds.has(r.groupId));
  const ruleIds = new Set(rules.map((r) => r.id));
  const view: SystemSnapshot = {
    ...snapshot,
    partitions: snapshot.partitions.filter((p) => parts.has(p.id)),
    customFields: snapshot.customFields.filter((f) => parts.has(f.partition)),
    groups,
    holders,
    rules,
  };
  const scope: Scope = { view, holder: (id) => holderIds.has(id), group: (id) => groupIds.has(id), rule: (id) => ruleIds.has(id), partition };
  byGrant.set(grant, scope);
  return scope;
}

/** Runs a read route on the token's view; a refusal of the route (404 outside the view, 400) is raised as the live system would answer it. */
export function readInScope(
  handler: ReadHandler,
  scope: Scope,
  ctx: Omit<Parameters<ReadHandler>[0], "snapshot">,
): { body: unknown; total?: number } {
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
 * replace list keeps the memberships outside the scope, which the token cannot see).
 * @throws HttpError 403 (reporter; a manager's write outside holders, groups and rules; a holder or
 *   group put in a partition not the token's), LiveRefusal 404 (a path id outside the scope) or 400
 *   (a body id outside the scope, answered as an id that does not exist).
 */
export function checkWrite(grant: Grant, snapshot: SystemSnapshot, method: string, path: string, params: Readonly<Record<string, string>>, body: unknown): unknown {
  if (grant.role === "admin" || grant.role === "integrator") return body;
  if (grant.role === "reporter") throw new HttpError(403, "This token is a reporter's: it may only read.", [{ path: "method", message: `A reporter may not ${method}.` }]);
  // The route by its literal segments (decoded, as the route table matched them; the ids are in params).
  const seg = path.split("/").slice(1).map(decodeURIComponent);
  const first = seg[0] ?? "";
  const route = (...literal: (string | null)[]) => seg.length === literal.length && literal.every((x, i) => x === null || x === seg[i]);
  if (!MANAGED.has(first))
    throw new HttpError(403, "A manager changes only holders, groups and rules.", [{ path: "path", message: `A manager may not ${method} /${first}.` }]);
  const scope = scopeOf(snapshot, grant);
  if (params.holderId !== undefined && !scope.holder(params.holderId)) unknown("holder", params.holderId);
  if (params.groupId !== undefined && !scope.group(params.groupId)) unknown("group", params.groupId);
  if (params.ruleId !== undefined && !scope.rule(params.ruleId)) unknown("rule", params.ruleId);
  if (!isObject(body)) return body;

  // A holder or group is created in, or moved to, one of the token's partitions only.
  const entity = (first === "holders" || first === "groups") && (method === "POST" ? route(first) : route(first, null));
  if (entity && (method === "POST" || "partition" in body)) {
    const p = body.partition === undefined ? null : body.partition;
    if ((p === null || typeof p === "string") && !scope.partition(p))
      throw new HttpError(403, `A manager puts ${first} only in its partitions.`, [
        { path: "body.partition", message: `${p === null ? "No partition (the default partition)" : `Partition "${p}"`} is not one of this token's: ${partitionList(grant)}.` },
      ]);
  }

  // Ids a body names: one outside the scope is answered as the live system answers one that does not
  // exist (a replace list's own check, else the snapshot check of the result).
  const missing = (what: string, id: string, replace: boolean) => (replace ? `Names ${what} "${id}", which does not exist.` : `Names ${what} "${id}", which is not in the snapshot.`);
  const refs = (key: string, visible: (id: string) => boolean, exists: (id: string) => boolean, what: string, replace: boolean) => {
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
    throw new LiveRefusal(400, [{ code: "unknownReference", path: ["body", "groupId"], message: missing("group", body.groupId, false) }]);

  // Replace lists: what the token cannot see stays as it is.
  if (holderGroups && Array.isArray(body.groups)) {
    const h = snapshot.holders.find((x) => x.id === params.holderId)!;
    return { ...body, groups: [...body.groups, ...h.groups.filter((g) => !scope.group(g))] };
  }
  if (groupHolders && Array.isArray(body.holders)) {
    const hidden = snapshot.holders.filter((h) => h.groups.includes(params.groupId!) && !scope.holder(h.id)).map((h) => h.id);
    return { ...body, holders: [...body.holders, ...hidden] };
  }
  return body;
}

/**
 * Checks the holder ids of an RSOP read (`ids`): when one is outside the scope, every id the token
 * cannot see is answered as the engine answers an id that does not exist (404 at `ids.<i>`, counted
 * after de-duplication, H4).
 */
export function checkRsopIds(scope: Scope, snapshot: SystemSnapshot, ids: string | null): void {
  if (ids === null) return;
  const issues = hiddenRsopIds(scope, snapshot, [...new Set(ids.split(",").map((s) => s.trim()).filter((s) => s !== ""))]);
  if (issues !== null) throw new LiveRefusal(404, issues);
}

/**
 * The engine's issues for RSOP `ids` (distinct, in order) when one of them is outside the scope: every
 * id the token cannot see, as an unknown id at `ids.<i>`; null when the token sees each existing one.
 */
export function hiddenRsopIds(scope: Scope, snapshot: SystemSnapshot, ids: readonly string[]): Issue[] | null {
  const exists = new Set(snapshot.holders.map((h) => h.id));
  if (!ids.some((id) => exists.has(id) && !scope.holder(id))) return null;
  return ids.flatMap((id, i): Issue[] => (scope.holder(id) ? [] : [{ code: "unknownId", path: ["ids", i], message: `Unknown holder id "${id}".` }]));
}

/** The 403 of decisions and who-can-access for a manager or reporter (H21). */
export function engineRouteRefusal(grant: Grant): HttpError {
  return new HttpError(403, `A ${grant.role} may not ask decisions or who can access a device: they name holders of every partition.`);
}
