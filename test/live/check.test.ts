// LiveSystem.check: the answers `apply` would give one after the other, without any change; the
// accepted results' patches, applied in order, then give exactly what `apply` would have.
import type { Patch } from "immer";
import { expect, test } from "vitest";
import { type Operation, createLiveSystem, seededIds } from "../../src/live/index.js";
import { NOW, building } from "./fixture.js";

const OPS: readonly Operation[] = [
  { method: "POST", path: "/groups", body: { name: "Night Owls" } },
  {
    method: "POST",
    path: "/holders",
    body: {
      firstName: "Ada",
      lastName: "B",
      credentials: [{ types: ["card"], credentialNumber: 77_001, facilityCode: 10 }],
    },
  },
  // The same card again: refused because of the create before it (left out of what follows).
  {
    method: "POST",
    path: "/holders",
    body: {
      firstName: "Eve",
      lastName: "C",
      credentials: [{ types: ["card"], credentialNumber: 77_001, facilityCode: 10 }],
    },
  },
  { method: "POST", path: "/groups", body: { name: "Night Owls" } },
  { method: "PUT", path: "/holders/h-ann/groups/g-night" },
  { method: "DELETE", path: "/groups/g-empty" },
];

function live() {
  const r = createLiveSystem(building(), { newId: seededIds(7), now: () => NOW });
  if (!r.ok) throw new Error("fixture");
  return r.value;
}

test("check answers as apply one after the other, changes nothing, and its patches replay to apply's snapshot", () => {
  const applied = live();
  const expected = OPS.map((op) => applied.apply(op));
  expect(expected.map((r) => r.status)).toEqual([200, 201, 409, 409, 204, 204]);

  const previewed = live();
  const before = previewed.snapshot;
  const engine = previewed.engine;
  const results = previewed.check(OPS);
  expect(results).toEqual(expected);
  expect(previewed.snapshot).toBe(before);
  expect(previewed.engine).toBe(engine);
  for (const r of results)
    if (r.ok && "patches" in r) expect(previewed.applyPatches(r.patches as Patch[]).ok).toBe(true);
  expect(previewed.snapshot).toEqual(applied.snapshot);
});
