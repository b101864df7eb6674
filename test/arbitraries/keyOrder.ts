// A snapshot with each list in key order: what an undo by inverse patches restores exactly. Keyed
// patches (semantics L21) put a removed element back at the end of its list, not where it was: the
// order of a snapshot's lists carries no meaning (L19), its elements do.
import { entityKey } from "../../src/model/checks/index.js";
import type { Collection } from "../../src/model/checks/index.js";

export function inKeyOrder<T extends object>(s: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s))
    out[k] = Array.isArray(v)
      ? [...v].sort((a, b) => {
          const x = entityKey(k as Collection, a);
          const y = entityKey(k as Collection, b);
          return x < y ? -1 : x > y ? 1 : 0;
        })
      : v;
  return out as T;
}
