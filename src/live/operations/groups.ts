// Groups and memberships (seed 001 §4 "Groups"). A group that rules still use is not deleted
// (409 naming each rule); its memberships go with it.
import { groupSchema } from "../../model/index.js";
import type { Issue } from "../../model/index.js";
import { objectBody, parseBody, requireKeys } from "../body.js";
import { Refusal, refuse } from "../operation.js";
import { type Created, type Mutable, NO_CONTENT, type WriteContext, indexOf, removeAt } from "./common.js";

export function createGroup({ draft, body, newId }: WriteContext): Created {
  const id = newId();
  draft.groups.push(parseBody(groupSchema, { ...objectBody(body), id }));
  return { status: 200, id };
}

export function updateGroup({ draft, params, body }: WriteContext): Created {
  const i = indexOf(draft.groups, params.groupId!, "group");
  const b = objectBody(body);
  requireKeys(b, ["name", "partition"]);
  const g = parseBody(groupSchema, { id: draft.groups[i]!.id, name: b.name, partition: b.partition });
  draft.groups[i]!.name = g.name;
  draft.groups[i]!.partition = g.partition;
  return NO_CONTENT;
}

export function deleteGroup({ draft, params }: WriteContext): Created {
  const id = params.groupId!;
  const i = indexOf(draft.groups, id, "group");
  const users = draft.rules.flatMap((r, j) => (r.groupId === id ? [j] : []));
  if (users.length > 0)
    throw new Refusal(
      409,
      users.map((j) => ({
        code: "conflict",
        path: ["rules", j, "groupId"],
        message: `Rule "${draft.rules[j]!.id}" applies to group "${id}": delete or move the rule first.`,
      })),
    );
  removeAt(draft.groups, i);
  for (const h of draft.holders) {
    const k = h.groups.indexOf(id);
    if (k >= 0) h.groups.splice(k, 1);
  }
  return NO_CONTENT;
}

function stringList(body: unknown, key: string): string[] {
  const b = objectBody(body);
  requireKeys(b, [key]);
  const list = b[key];
  if (!Array.isArray(list) || !list.every((x) => typeof x === "string"))
    refuse(400, "invalidType", ["body", key], "Must be an array of ids (strings).");
  const seen = new Set<string>();
  list.forEach((x: string, j: number) => {
    if (seen.has(x)) refuse(400, "invalid", ["body", key, j], `Names "${x}" twice.`);
    seen.add(x);
  });
  return list as string[];
}

function mustExist(draft: Mutable, coll: "holders" | "groups", ids: readonly string[], key: string): void {
  const known = new Set(draft[coll].map((x) => x.id));
  const issues = ids.flatMap((id, j): Issue[] =>
    known.has(id) ? [] : [{ code: "unknownReference", path: ["body", key, j], message: `Names ${coll === "holders" ? "holder" : "group"} "${id}", which does not exist.` }],
  );
  if (issues.length > 0) throw new Refusal(400, issues);
}

export function addMembership({ draft, params }: WriteContext): Created {
  const h = draft.holders[indexOf(draft.holders, params.holderId!, "holder")]!;
  indexOf(draft.groups, params.groupId!, "group");
  if (!h.groups.includes(params.groupId!)) h.groups.push(params.groupId!);
  return NO_CONTENT;
}

export function removeMembership({ draft, params }: WriteContext): Created {
  const h = draft.holders[indexOf(draft.holders, params.holderId!, "holder")]!;
  indexOf(draft.groups, params.groupId!, "group");
  const k = h.groups.indexOf(params.groupId!);
  if (k < 0) refuse(404, "notFound", [], `Holder "${h.id}" is not a member of group "${params.groupId}".`);
  h.groups.splice(k, 1);
  return NO_CONTENT;
}

export function replaceHolderGroups({ draft, params, body }: WriteContext): Created {
  const h = draft.holders[indexOf(draft.holders, params.holderId!, "holder")]!;
  const groups = stringList(body, "groups");
  mustExist(draft, "groups", groups, "groups");
  h.groups = groups;
  return NO_CONTENT;
}

export function replaceGroupHolders({ draft, params, body }: WriteContext): Created {
  const id = params.groupId!;
  indexOf(draft.groups, id, "group");
  const holders = new Set(stringList(body, "holders"));
  mustExist(draft, "holders", [...holders], "holders");
  for (const h of draft.holders) {
    const k = h.groups.indexOf(id);
    if (holders.has(h.id) && k < 0) h.groups.push(id);
    else if (!holders.has(h.id) && k >= 0) h.groups.splice(k, 1);
  }
  return NO_CONTENT;
}
