// Rules (an addition to the API: it has no rule endpoints); the body is the snapshot Rule without `id`.
import { ruleSchema } from "../../model/index.js";
import { objectBody, parseBody } from "../body.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf, onlyKeys } from "./common.js";

/** The fields of a rule body: the snapshot Rule's, without `id` (HS5). */
const RULE_FIELDS = [
  "name",
  "type",
  "groupId",
  "devices",
  "floorGroups",
  "startTime",
  "stopTime",
  "recurring",
  "allow",
  "authenticationPolicy",
  "enabled",
  "startDate",
  "endDate",
  "calendar",
  "maxThreatLevel",
  "action",
];
const RULE_HINTS = { id: "A rule's id is drawn by the system and never changes." };

export function createRule(ctx: WriteContext): Created {
  const { body, newId } = ctx;
  const b = objectBody(body);
  onlyKeys(b, RULE_FIELDS, RULE_HINTS);
  const id = newId();
  ctx.append("rules", parseBody(ruleSchema, { ...b, id }));
  return { status: 201, id };
}

export function updateRule(ctx: WriteContext): Created {
  const { draft, params, body } = ctx;
  const i = indexOf(ctx, "rules", params.ruleId!, "rule");
  const b = objectBody(body);
  onlyKeys(b, RULE_FIELDS, RULE_HINTS);
  draft.rules[i] = parseBody(ruleSchema, { ...b, id: params.ruleId! });
  return NO_CONTENT;
}

export function deleteRule(ctx: WriteContext): Created {
  ctx.remove("rules", indexOf(ctx, "rules", ctx.params.ruleId!, "rule"));
  return NO_CONTENT;
}
