// findSlot finds a group's slot in a device's run by one load where the run has a dense table
// (slotOf_) and by a binary search where it has none. The differential suites' small random
// systems mostly get dense tables, so both ways are checked here directly, against indexOf, on runs
// dense and sparse.
import fc from "fast-check";
import { expect, test } from "vitest";
import { type CompiledDevice, denseSlots, findSlot } from "../../src/compile/index.js";
import { NUM_RUNS, TIMEOUT } from "./support.js";

/** A device with just a run's slot groups, and its dense table or none. */
function deviceWith(slotGroup: Int32Array, dense: boolean): CompiledDevice {
  return { slotGroup_: slotGroup, slotOf_: dense ? denseSlots(slotGroup) : null } as unknown as CompiledDevice;
}

const runs = fc
  .oneof(
    fc.uniqueArray(fc.nat({ max: 40 }), { minLength: 1, maxLength: 30 }),
    fc.uniqueArray(fc.nat({ max: 5_000 }), { minLength: 1, maxLength: 60 }),
  )
  .map((groups) => Int32Array.from(groups).sort());

test(
  "findSlot gives the slot indexOf gives, with the dense table and with the binary search",
  () => {
    fc.assert(
      fc.property(runs, fc.array(fc.nat({ max: 6_000 }), { maxLength: 20 }), (slotGroup, others) => {
        const last = slotGroup[slotGroup.length - 1]!;
        const table = denseSlots(slotGroup);
        // The table is made only where it is at most 4 entries per slot.
        expect(table === null).toBe(last + 1 > 4 * slotGroup.length);
        const dense = deviceWith(slotGroup, true);
        const searched = deviceWith(slotGroup, false);
        for (const g of [...slotGroup, ...others, 0, last, last + 1, last + 2]) {
          const want = slotGroup.indexOf(g);
          expect(findSlot(searched, g)).toBe(want);
          expect(findSlot(dense, g)).toBe(want);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  },
  TIMEOUT,
);
