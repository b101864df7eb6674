// applySnapshotPatches applies a write's patches (those under a top-level list) itself, a list copied
// once, instead of through immer; it must make exactly what immer.applyPatches makes, frozen where a
// live snapshot is frozen, and leave the base as it was.
import fc from "fast-check";
import { Immer, type Patch, enablePatches, freeze } from "immer";
import { describe, expect, test } from "vitest";
import { applySnapshotPatches, freezeSnapshot } from "../../src/live/transition.js";

enablePatches();
const immer = new Immer({ autoFreeze: false });

type Snap = { format: string; holders: Record<string, unknown>[]; rules: Record<string, unknown>[] };

function base(): Snap {
  return freezeSnapshot({
    format: "rsop-system/1",
    holders: [0, 1, 2, 3].map((i) => ({
      id: `h${i}`,
      groups: ["g1"],
      credentials: [{ id: `c${i}`, types: ["card"] }],
    })),
    rules: [{ id: "r1", devices: ["d1"] }],
  });
}

const h = (id: string) => ({ id, groups: [], credentials: [] as unknown[] });

const CASES: Record<string, Patch[]> = {
  "one append": [{ op: "add", path: ["holders", 4], value: h("h4") }],
  "appends with '-' and by index, then a change of an appended one": [
    { op: "add", path: ["holders", "-"], value: h("h4") },
    { op: "add", path: ["holders", 5], value: h("h5") },
    { op: "replace", path: ["holders", 4, "groups"], value: ["g2"] },
    { op: "add", path: ["holders", 6], value: h("h6") },
  ],
  "an insert in the middle and a removal": [
    { op: "add", path: ["holders", 1], value: h("hx") },
    { op: "remove", path: ["holders", 3] },
  ],
  "the last element moved into a removed one's place": [
    { op: "replace", path: ["holders", 1], value: h("h3") },
    { op: "remove", path: ["holders", 3] },
  ],
  "deep edits of one entity": [
    { op: "add", path: ["holders", 2, "groups", 1], value: "g7" },
    { op: "remove", path: ["holders", 2, "credentials", 0] },
    { op: "replace", path: ["rules", 0, "devices"], value: ["d2", "d3"] },
  ],
  "an index past the end": [{ op: "add", path: ["holders", 9], value: h("h9") }],
  "a top-level field (immer applies these)": [{ op: "replace", path: ["format"], value: "other" }],
  "a whole list (immer applies these)": [{ op: "replace", path: ["rules"], value: [] }],
};

describe("applySnapshotPatches", () => {
  test.each(Object.entries(CASES))("%s: what immer makes", (_, patches) => {
    const b = base();
    const before = JSON.stringify(b);
    const mine = applySnapshotPatches(b, patches);
    expect(mine).toEqual(immer.applyPatches(b, patches));
    expect(JSON.stringify(b)).toBe(before);
    expect(Object.isFrozen(mine)).toBe(true);
    for (const p of patches) {
      const top = (mine as Record<string, unknown>)[p.path[0] as string];
      if (Array.isArray(top) && typeof p.path[1] === "number" && top[p.path[1]] !== undefined)
        expect(Object.isFrozen(top[p.path[1]])).toBe(true);
    }
  });

  test("a patch value is copied, not kept", () => {
    const value = h("h4");
    const next = applySnapshotPatches(base(), [{ op: "add", path: ["holders", 4], value }]);
    expect(next.holders[4]).toEqual(value);
    expect(next.holders[4]).not.toBe(value);
  });

  test("no patches: the same snapshot", () => {
    const b = base();
    expect(applySnapshotPatches(b, [])).toBe(b);
  });

  test("an operation immer does not know throws as immer's does", () => {
    const patches = [{ op: "test", path: ["holders", 0], value: h("h0") }] as unknown as Patch[];
    expect(() => immer.applyPatches(base(), patches)).toThrow();
    expect(() => applySnapshotPatches(base(), patches)).toThrow();
  });

  test("a patch that does not apply throws as immer's does", () => {
    const patches: Patch[] = [{ op: "replace", path: ["holders", 7, "groups"], value: [] }];
    expect(() => immer.applyPatches(base(), patches)).toThrow();
    expect(() => applySnapshotPatches(base(), patches)).toThrow();
  });

  test("random sequences of list edits: what immer makes", () => {
    const edit = fc.oneof(
      fc.record({ op: fc.constant("add" as const), at: fc.nat(8), id: fc.constantFrom("a", "b") }),
      fc.record({ op: fc.constant("remove" as const), at: fc.nat(8) }),
      fc.record({ op: fc.constant("replace" as const), at: fc.nat(8), id: fc.constantFrom("c", "d") }),
      fc.record({ op: fc.constant("deep" as const), at: fc.nat(8), id: fc.constantFrom("g8", "g9") }),
    );
    fc.assert(
      fc.property(fc.array(edit, { maxLength: 8 }), (edits) => {
        // Patches a write could make: indexes within the list as it is at that point.
        let n = 4;
        const patches: Patch[] = [];
        for (const e of edits) {
          if (e.op === "add") {
            patches.push({ op: "add", path: ["holders", Math.min(e.at, n)], value: h(e.id) });
            n++;
          } else if (n > 0 && e.op === "remove") {
            patches.push({ op: "remove", path: ["holders", e.at % n] });
            n--;
          } else if (n > 0 && e.op === "replace")
            patches.push({ op: "replace", path: ["holders", e.at % n], value: h(e.id) });
          else if (n > 0 && e.op === "deep")
            patches.push({ op: "replace", path: ["holders", e.at % n, "groups"], value: [e.id] });
        }
        const b = base();
        expect(applySnapshotPatches(b, patches)).toEqual(immer.applyPatches(freeze(b, true), patches));
      }),
      { numRuns: 300 },
    );
  });
});
