// hasRepeats, which finds a group named twice in a holder's list without a Set per holder, answers
// what a Set would, on lists short (compared pairwise) and long (a Set), with and without repeats.
import fc from "fast-check";
import { expect, test } from "vitest";
import { hasRepeats } from "../../src/model/checks/common.js";
import { NUM_RUNS, TIMEOUT } from "./support.js";

test(
  "hasRepeats is true exactly when a Set of the list is smaller than the list",
  () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a", "b", "c", "grp-1", "grp-10", "", "\u00e9"), { maxLength: 40 }),
        fc.uniqueArray(fc.string(), { maxLength: 40 }),
        (some, distinct) => {
          expect(hasRepeats(some)).toBe(new Set(some).size !== some.length);
          expect(hasRepeats(distinct)).toBe(false);
          if (distinct.length > 0) expect(hasRepeats([...distinct, distinct[0]!])).toBe(true);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  },
  TIMEOUT,
);
