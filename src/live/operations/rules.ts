// ★ Rules: the seeds show no rule endpoints; the body is the snapshot Rule without `id`.
import { ruleSchema } from "../../model/index.js";
import { objectBody, parseBody } from "../body.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf } from "./common.js";

export function createRule(ctx: WriteContext): Created {
  const { body, newId } = ctx;
  const id = newId();
  ctx.append("rules", parseBody(ruleSchema, { ...objectBody(body), id }));
  return { status: 201, id };
}

export function updateRule(ctx: WriteContext): Created {
  const { draft, params, body } = ctx;
  const i = indexOf(ctx, "rules", params.ruleId!, "rule");
  draft.rules[i] = parseBody(ruleSchema, { ...objectBody(body), id: params.ruleId! });
  return NO_CONTENT;
}

export function deleteRule(ctx: WriteContext): Created {
  ctx.remove("rules", indexOf(ctx, "rules", ctx.params.ruleId!, "rule"));
  return NO_CONTENT;
}
