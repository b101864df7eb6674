// Groups and memberships (the 2.0 systems API "Groups"). A group that rules still use is not deleted
// (409 naming each rule); its memberships go with it.
import { groupSchema } from "../../model/index.js";
import type { Issue } from "../../model/index.js";
import { quote } from "../../model/zodIssues.js";
import { objectBody, parseBody, requireKeys } from "../body.js";
import { Refusal, refuse } from "../operation.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf, onlyKeys } from "./common.js";

/** The fields of a group create and update (the 2.0 systems API), and where the others are written (HS5). */
const GROUP_FIELDS = ["name", "partition"];
const GROUP_HINTS: Readonly<Record<string, string>> = {
  holders: "Members are not written here: use PUT /groups/{group_id}/holders (or add and remove one holder).",
  id: "A group's id is drawn by the system and never changes.",
};

export function createGroup(ctx: WriteContext): Created {
  const { body, newId } = ctx;
  const b = objectBody(body);
  onlyKeys(b, GROUP_FIELDS, GROUP_HINTS);
  const id = newId();
  ctx.append("groups", parseBody(groupSchema, { ...b, id }));
  return { status: 200, id };
}

export function updateGroup(ctx: WriteContext): Created {
  const { draft, params, body } = ctx;
  const i = indexOf(ctx, "groups", params.groupId!, "group");
  const b = objectBody(body);
  onlyKeys(b, GROUP_FIELDS, GROUP_HINTS);
  requireKeys(b, ["name", "partition"]);
  const g = parseBody(groupSchema, { id: draft.groups[i]!.id, name: b.name, partition: b.partition });
  draft.groups[i]!.name = g.name;
  draft.groups[i]!.partition = g.partition;
  return NO_CONTENT;
}

export function deleteGroup(ctx: WriteContext): Created {
  const { base, params } = ctx;
  const id = params.groupId!;
  const i = indexOf(ctx, "groups", id, "group");
  const users = ctx.referrers("rules", "groups", id);
  if (users.length > 0)
    throw new Refusal(
      409,
      users.map((j) => ({
        code: "conflict",
        path: ["rules", j, "groupId"],
        message: `Rule "${base.rules[j]!.id}" applies to group "${id}": delete or move the rule first.`,
      })),
    );
  ctx.remove("groups", i);
  for (const j of ctx.referrers("holders", "groups", id))
    ctx.setField("holders", j, "groups", without(base.holders[j]!.groups, id));
  return NO_CONTENT;
}

/**
 * The ids of a replace-all body (`groups`, `holders`), each problem of it in one refusal: a value
 * that is not a string, an id named twice, an id that names nothing (400 at `body.<key>.<j>`, as
 * every unknown reference of a body; semantics L22).
 */
function idList(ctx: WriteContext, coll: "holders" | "groups", key: string): string[] {
  const b = objectBody(ctx.body);
  requireKeys(b, [key]);
  const list = b[key];
  if (!Object.hasOwn(b, key)) throw new Refusal(400, []);
  if (!Array.isArray(list)) refuse(400, "invalidType", ["body", key], "Must be an array of ids (strings).");
  const issues: Issue[] = [];
  const seen = new Set<string>();
  list.forEach((x: unknown, j: number) => {
    if (typeof x !== "string")
      issues.push({ code: "invalidType", path: ["body", key, j], message: "Must be an id (a string)." });
    else if (seen.has(x)) issues.push({ code: "invalid", path: ["body", key, j], message: `Names ${quote(x)} twice.` });
    else if (ctx.find(coll, x) < 0)
      issues.push({
        code: "unknownReference",
        path: ["body", key, j],
        message: `Names ${coll === "holders" ? "holder" : "group"} ${quote(x)}, which does not exist.`,
      });
    if (typeof x === "string") seen.add(x);
  });
  if (issues.length > 0) throw new Refusal(400, issues);
  return list as string[];
}

export function addMembership(ctx: WriteContext): Created {
  const { draft, params } = ctx;
  const h = draft.holders[indexOf(ctx, "holders", params.holderId!, "holder")]!;
  indexOf(ctx, "groups", params.groupId!, "group");
  if (!h.groups.includes(params.groupId!)) h.groups.push(params.groupId!);
  return NO_CONTENT;
}

export function removeMembership(ctx: WriteContext): Created {
  const { draft, params } = ctx;
  const h = draft.holders[indexOf(ctx, "holders", params.holderId!, "holder")]!;
  indexOf(ctx, "groups", params.groupId!, "group");
  const k = h.groups.indexOf(params.groupId!);
  if (k < 0) refuse(404, "notFound", [], `Holder "${h.id}" is not a member of group "${params.groupId}".`);
  h.groups.splice(k, 1);
  return NO_CONTENT;
}

export function replaceHolderGroups(ctx: WriteContext): Created {
  const { draft, params } = ctx;
  const h = draft.holders[indexOf(ctx, "holders", params.holderId!, "holder")]!;
  const groups = idList(ctx, "groups", "groups");
  h.groups = groups;
  return NO_CONTENT;
}

export function replaceGroupHolders(ctx: WriteContext): Created {
  const { base, params } = ctx;
  const id = params.groupId!;
  indexOf(ctx, "groups", id, "group");
  const holders = new Set(idList(ctx, "holders", "holders"));
  const members = ctx.referrers("holders", "groups", id);
  for (const j of members) {
    const h = base.holders[j]!;
    if (!holders.has(h.id)) ctx.setField("holders", j, "groups", without(h.groups, id));
  }
  const already = new Set(members.map((j) => base.holders[j]!.id));
  for (const h of holders) {
    const j = ctx.find("holders", h);
    if (!already.has(h)) ctx.setField("holders", j, "groups", [...base.holders[j]!.groups, id]);
  }
  return NO_CONTENT;
}

/** `list` without `id`. */
function without(list: readonly string[], id: string): string[] {
  return list.filter((x) => x !== id);
}
