// The query parameters a read route takes, checked before it answers (HS4): a parameter the route does
// not take, or one given twice, is a 400 naming it at `query.<name>`, never silently ignored — a
// misspelt filter (`?ids=` on a list that only searches) would answer every entity and look right.
import type { Issue } from "../model/index.js";
import { Refusal } from "./operation.js";

/** `page` and `per_page`, the paging parameters of every list (the accounts API). */
export const PAGING: readonly string[] = ["page", "per_page"];

/** Names a list of parameters for a sentence: `page and per_page`, `none`. */
function listed(keys: readonly string[]): string {
  if (keys.length === 0) return "no query parameters";
  return keys.length === 1 ? keys[0]! : `${keys.slice(0, -1).join(", ")} and ${keys.at(-1)!}`;
}

/**
 * Refuses a query that gives a parameter `allowed` does not name, or a parameter twice.
 * @throws Refusal 400 with one issue per parameter at `query.<name>`.
 */
export function checkQueryKeys(query: URLSearchParams, allowed: readonly string[]): void {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  for (const key of query.keys()) {
    if (seen.has(key)) continue;
    seen.add(key);
    if (!allowed.includes(key))
      issues.push({
        code: "unknownField",
        path: ["query", key],
        message: `Unknown query parameter: this route takes ${listed(allowed)}.`,
      });
    else if (query.getAll(key).length > 1)
      issues.push({
        code: "invalid",
        path: ["query", key],
        message: "Give it once (list several values comma-separated).",
      });
  }
  if (issues.length > 0) throw new Refusal(400, issues);
}

/** The query parameters each handler withQueryKeys made takes (the HTTP adapter documents them). */
const QUERY_KEYS = new WeakMap<object, readonly string[]>();

/** The query parameters a read handler takes, if withQueryKeys made it. */
export function queryKeysOf(handler: unknown): readonly string[] | undefined {
  return typeof handler === "function" ? QUERY_KEYS.get(handler) : undefined;
}

/**
 * `handlers` with each one checking its query first: `keys[name]` are the parameters handler `name`
 * takes. The returned functions are the ones routes and callers compare by identity.
 */
export function withQueryKeys<
  C extends { readonly query: URLSearchParams },
  A,
  H extends Record<string, (ctx: C) => A>,
>(handlers: H, keys: { readonly [K in keyof H]: readonly string[] }): H {
  const out: Record<string, (ctx: C) => A> = {};
  for (const name of Object.keys(handlers)) {
    const handler = handlers[name]!;
    const allowed = keys[name as keyof H];
    const checked = (ctx: C) => {
      checkQueryKeys(ctx.query, allowed);
      return handler(ctx);
    };
    QUERY_KEYS.set(checked, allowed);
    out[name] = checked;
  }
  return out as H;
}
