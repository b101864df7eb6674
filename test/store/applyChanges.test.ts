// applyChanges: how a replica catches up and a store replays — several changes' patches applied
// together give the state one-at-a-time gives; when a batch does not apply, the changes before the
// bad one are applied, it is named, and the caller is told how far it got.
import { expect, test } from "vitest";
import type { Patch } from "immer";
import { type DurableLive, applyChanges, createTarget } from "../../src/service/store/durableSystem.js";
import type { StoredChange } from "../../src/service/store/store.js";
import { NOW, building } from "../live/fixture.js";

function system(): DurableLive & { kind: "system" } {
  const t = createTarget("system", building(), () => NOW);
  if (!("kind" in t) || t.kind !== "system") throw new Error("fixture invalid");
  return t as DurableLive & { kind: "system" };
}

/** Five accepted writes on a system of their own, as the log would hold them. */
function logOfFive(): StoredChange[] {
  const source = system();
  return Array.from({ length: 5 }, (_, i) => {
    const r = source.live.apply({ method: "POST", path: "/groups", body: { name: `Crew ${i}` } });
    if (!r.ok || !("patches" in r)) throw new Error("write refused");
    return { seq: i + 1, time: "t", operation: {}, patches: r.patches as unknown[] };
  });
}

test("a batch of changes applied together equals one change at a time", () => {
  const log = logOfFive();
  const together = system();
  const told: number[] = [];
  expect(applyChanges(together, log, (seq) => told.push(seq))).toBeNull();
  expect(told).toEqual([5]);
  const oneByOne = system();
  for (const c of log) expect(oneByOne.live.applyPatches(c.patches as Patch[]).ok).toBe(true);
  expect(together.live.snapshot).toEqual(oneByOne.live.snapshot);
  expect(together.live.snapshot.groups.map((g) => g.name)).toContain("Crew 4");
});

test("a batch that does not apply: the changes before the bad one are applied, the bad one is named, the rest are not applied", () => {
  const log = logOfFive();
  // Change 3 adds a group whose name another already has: refused by validation.
  const bad = structuredClone(log);
  (bad[2]!.patches as Patch[]).forEach((p) => {
    if (p.op === "add" && typeof p.value === "object" && p.value !== null && "name" in p.value)
      (p.value as { name: string }).name = "Staff";
  });
  const target = system();
  const told: number[] = [];
  const result = applyChanges(target, bad, (seq) => told.push(seq));
  expect(result?.seq).toBe(3);
  expect(result!.issues.length).toBeGreaterThan(0);
  expect(told).toEqual([1, 2]);
  const names = target.live.snapshot.groups.map((g) => g.name);
  expect(names).toContain("Crew 1");
  expect(names).not.toContain("Crew 2");
  expect(names).not.toContain("Crew 3");
});
