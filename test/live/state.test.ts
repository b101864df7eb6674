// semantics L21: the live state changes in place and costs what it touches; patches address
// elements by key; `snapshot` never changes, `current` is the state itself.
import { describe, expect, test } from "vitest";
import { applySnapshotPatches, createLiveSystem, seededIds } from "../../src/live/index.js";
import type { OperationResult, WriteResult } from "../../src/live/index.js";
import { inKeyOrder } from "../arbitraries/index.js";
import { readFileSync } from "node:fs";

const building = JSON.parse(readFileSync(new URL("../../examples/building.json", import.meta.url), "utf8"));

function start() {
  const r = createLiveSystem(building, { newId: seededIds(7) });
  if (!r.ok) throw new Error("example refused");
  return r.value;
}

function written(r: OperationResult): WriteResult {
  if (!r.ok || !("patches" in r)) throw new Error(`not accepted: ${JSON.stringify(r)}`);
  return r;
}

describe("L21 keyed patches, in-place state, snapshots made when read", () => {
  test("a create, a membership add and a delete make patches by key, with the whole element", () => {
    const live = start();
    const group = live.snapshot.groups[0]!.id;
    const created = written(
      live.apply({ method: "POST", path: "/holders", body: { firstName: "Kay", lastName: "Eye" } }),
    );
    const id = created.id!;
    expect(created.patches).toEqual([{ op: "add", path: ["holders", id], value: expect.objectContaining({ id }) }]);
    expect(created.inversePatches).toEqual([{ op: "remove", path: ["holders", id] }]);
    const member = written(live.apply({ method: "PUT", path: `/holders/${id}/groups/${group}` }));
    expect(member.patches).toEqual([
      { op: "replace", path: ["holders", id], value: expect.objectContaining({ id, groups: [group] }) },
    ]);
    expect(member.inversePatches).toEqual([
      { op: "replace", path: ["holders", id], value: expect.objectContaining({ id, groups: [] }) },
    ]);
    const first = live.snapshot.holders[0]!.id;
    const removed = written(live.apply({ method: "DELETE", path: `/holders/${first}` }));
    expect(removed.patches).toEqual([{ op: "remove", path: ["holders", first] }]);
    expect(removed.inversePatches).toEqual([
      { op: "add", path: ["holders", first], value: expect.objectContaining({ id: first }) },
    ]);
    // The last holder took the removed one's place: order carries no meaning.
    expect(live.snapshot.holders[0]!.id).toBe(id);
  });

  test("a snapshot read before a write never changes; current is the state, without a copy", () => {
    const live = start();
    const before = live.snapshot;
    const holdersBefore = [...before.holders];
    const list = live.current.holders;
    const root = live.current;
    written(live.apply({ method: "POST", path: "/holders", body: { firstName: "New", lastName: "One" } }));
    expect(before.holders).toEqual(holdersBefore);
    expect(Object.isFrozen(before)).toBe(true);
    expect(live.current.holders).toBe(list); // the same array, changed in place
    expect(live.current).not.toBe(root); // a new object after the change
    expect(live.current.holders.length).toBe(holdersBefore.length + 1);
    const after = live.snapshot;
    expect(after).not.toBe(before);
    expect(after.holders).not.toBe(list); // a copy of the list that changed …
    expect(after.rules).toBe(before.rules); // … and the lists that did not are shared
    expect(live.snapshot).toBe(after); // made once per change
  });

  test("a refused write changes nothing: the same snapshot, the same engine answers", () => {
    const live = start();
    const before = live.snapshot;
    const r = live.apply({
      method: "POST",
      path: "/holders",
      body: { firstName: "No", lastName: "Groups", groups: ["nope"] },
    });
    expect(r.ok).toBe(false);
    expect(live.snapshot).toBe(before);
  });

  test("a replica fed the patches by key reaches the same snapshot; inverse patches restore its elements", () => {
    const live = start();
    const replica = start();
    const group = live.snapshot.groups[1]!.id;
    const writes = [
      written(live.apply({ method: "POST", path: "/groups", body: { name: "Night" } })),
      written(live.apply({ method: "DELETE", path: `/holders/${live.snapshot.holders[3]!.id}` })),
      written(live.apply({ method: "PUT", path: `/holders/${live.snapshot.holders[5]!.id}/groups/${group}` })),
    ];
    for (const w of writes) expect(replica.applyPatches(w.patches).ok).toBe(true);
    expect(replica.snapshot).toStrictEqual(live.snapshot);
    let undone = live.snapshot;
    for (const w of [...writes].reverse()) undone = applySnapshotPatches(undone, w.inversePatches);
    expect(inKeyOrder(undone)).toStrictEqual(inKeyOrder(start().snapshot));
  });

  test("patches by position (an older log's) still apply: the whole system is validated", () => {
    const live = start();
    const i = live.snapshot.holders.length;
    const holder = { id: "h-old-log", firstName: "Old", lastName: "Log", groups: [], credentials: [] };
    expect(live.applyPatches([{ op: "add", path: ["holders", i], value: holder }]).ok).toBe(true);
    expect(live.snapshot.holders.some((h) => h.id === "h-old-log")).toBe(true);
    const bad = live.applyPatches([{ op: "add", path: ["holders", i + 1], value: { ...holder } }]);
    expect(bad.ok).toBe(false);
  });

  test("a keyed patch that names no element, or adds one that exists, is refused and changes nothing", () => {
    const live = start();
    const before = live.snapshot;
    const h = before.holders[0]!;
    expect(live.applyPatches([{ op: "remove", path: ["holders", "no-such"] }]).ok).toBe(false);
    expect(live.applyPatches([{ op: "add", path: ["holders", h.id], value: h }]).ok).toBe(false);
    expect(live.applyPatches([{ op: "replace", path: ["holders", h.id], value: { ...h, id: "other" } }]).ok).toBe(
      false,
    );
    expect(live.snapshot).toBe(before);
  });
});
