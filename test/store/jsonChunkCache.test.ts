// The stores' snapshot serialization with the texts of the last snapshot's runs kept (jsonSlices.ts,
// JsonChunkCache): whatever changed between two values (elements replaced, added, removed, moved,
// lists shortened, gone or new, an element that is not frozen changed in place), the text is exactly
// JSON.stringify's.
import fc from "fast-check";
import { expect, test } from "vitest";
import { JsonChunkCache, jsonSteps } from "../../src/adapters/store/jsonSlices.js";

type Edit =
  | { kind: "replace"; at: number; n: number }
  | { kind: "append"; n: number }
  | { kind: "swapRemove"; at: number }
  | { kind: "truncate"; to: number }
  | { kind: "mutateLoose"; n: number }
  | { kind: "dropList" };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), n: fc.integer() }),
  fc.record({ kind: fc.constant("append" as const), n: fc.integer({ min: 1, max: 200 }) }),
  fc.record({ kind: fc.constant("swapRemove" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("truncate" as const), to: fc.nat({ max: 400 }) }),
  fc.record({ kind: fc.constant("mutateLoose" as const), n: fc.integer() }),
  fc.constant({ kind: "dropList" as const }),
);

test("a value serialized after another with the same cache is JSON.stringify's text, whatever changed", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 500 }), fc.array(edit, { maxLength: 30 }), (length, edits) => {
      let id = 0;
      const entity = () => Object.freeze({ id: `e-${++id}`, n: id, tags: Object.freeze(["a", String(id)]) });
      // One element is not frozen: the cache must never keep a run holding it.
      const loose = { id: "loose", n: 0 };
      let holders: unknown[] = Array.from({ length }, entity);
      if (holders.length > 70) holders[70] = loose;
      let groups: unknown[] | undefined = Array.from({ length: 130 }, entity);
      const cache = new JsonChunkCache();
      const check = () => {
        const value = { format: "x", holders, ...(groups === undefined ? {} : { groups }), n: holders.length };
        expect([...jsonSteps(value, cache)].join("")).toBe(JSON.stringify(value));
      };
      check();
      for (const e of edits) {
        // A new list each time, as a live system's snapshot after a change; unchanged elements kept.
        holders = holders.slice();
        if (e.kind === "replace" && holders.length > 0) holders[e.at % holders.length] = entity();
        else if (e.kind === "append") for (let k = 0; k < e.n; k++) holders.push(entity());
        else if (e.kind === "swapRemove" && holders.length > 0) {
          const at = e.at % holders.length;
          holders[at] = holders[holders.length - 1];
          holders.pop();
        } else if (e.kind === "truncate") holders.length = Math.min(holders.length, e.to);
        else if (e.kind === "mutateLoose") loose.n = e.n;
        else if (e.kind === "dropList") groups = groups === undefined ? Array.from({ length: 70 }, entity) : undefined;
        check();
      }
    }),
    { numRuns: 200 },
  );
});
