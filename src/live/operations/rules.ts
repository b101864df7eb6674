// ★ Rules: the seeds show no rule endpoints; the body is the snapshot Rule without `id`.
import { ruleSchema } from "../../model/index.js";
import { objectBody, parseBody } from "../body.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf, removeAt } from "./common.js";

export function createRule({ draft, body, newId }: WriteContext): Created {
  const id = newId();
  draft.rules.push(parseBody(ruleSchema, { ...objectBody(body), id }));
  return { status: 201, id };
}

export function updateRule({ draft, params, body }: WriteContext): Created {
  const i = indexOf(draft.rules, params.ruleId!, "rule");
  draft.rules[i] = parseBody(ruleSchema, { ...objectBody(body), id: params.ruleId! });
  return NO_CONTENT;
}

export function deleteRule({ draft, params }: WriteContext): Created {
  removeAt(draft.rules, indexOf(draft.rules, params.ruleId!, "rule"));
  return NO_CONTENT;
}
