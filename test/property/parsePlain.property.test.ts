// parseSnapshot's `plainJson` option skips the defensive copy for input that JSON.parse just made:
// for such input it must answer exactly what the default answers — valid snapshots (the same
// normalized snapshot), snapshots with a field broken, and any JSON value at all (the same issues).
import fc from "fast-check";
import { expect, test } from "vitest";
import { parseSnapshot } from "../../src/model/index.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import { NUM_RUNS, TIMEOUT } from "./support.js";

const fresh = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

test(
  "plainJson answers what the default answers, for generated snapshots, whole or with one field broken",
  () => {
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 1 }),
        fc.nat(),
        fc.constantFrom<unknown>(null, 7, "x", [], {}, true),
        ({ snapshot }, pick, junk) => {
          expect(parseSnapshot(fresh(snapshot), { plainJson: true })).toEqual(parseSnapshot(fresh(snapshot)));
          // One field of one entity replaced with junk.
          const broken = fresh(snapshot) as Record<string, unknown>;
          const lists = Object.keys(broken).filter(
            (k) => Array.isArray(broken[k]) && (broken[k] as unknown[]).length > 0,
          );
          if (lists.length > 0) {
            const list = broken[lists[pick % lists.length]!] as Record<string, unknown>[];
            const entity = list[pick % list.length]!;
            const keys = Object.keys(entity);
            if (keys.length > 0) entity[keys[pick % keys.length]!] = junk;
          }
          expect(parseSnapshot(fresh(broken), { plainJson: true })).toEqual(parseSnapshot(fresh(broken)));
        },
      ),
      { numRuns: Math.max(1, Math.floor(NUM_RUNS / 3)) },
    );
  },
  TIMEOUT,
);

test(
  "plainJson answers what the default answers, for any JSON value",
  () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(parseSnapshot(fresh(v), { plainJson: true })).toEqual(parseSnapshot(fresh(v)));
      }),
      { numRuns: NUM_RUNS },
    );
  },
  TIMEOUT,
);
