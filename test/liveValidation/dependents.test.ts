// Issue 13: a write is validated on what it touched plus the elements whose checks read it. Each
// test makes a change the seed routes never make (or make rarely) through applyPatches, and checks
// that the incremental verdict equals parseSnapshot's on the resulting snapshot, naming the
// dependent that breaks; a refusal leaves the live system (and its indexes) as they were.
import { type Draft, enablePatches, produceWithPatches } from "immer";
import { describe, expect, test } from "vitest";
import type { LiveSystem } from "../../src/live/index.js";
import { type SystemSnapshot, deviceSchema, parseSnapshot } from "../../src/model/index.js";
import { accept, liveOf } from "../live/fixture.js";

/** Removes list[i] on a draft as a delete route does (the last element moves into its place). */
function removeAt<T>(list: T[], i: number): void {
  const last = list.length - 1;
  if (i !== last) list[i] = list[last]!;
  list.length = last;
}

enablePatches();

/** Applies `edit` as patches; the verdict must be parseSnapshot's. Returns the issues as `code path`. */
function patched(live: LiveSystem, edit: (d: Draft<SystemSnapshot>) => void): string[] {
  const before = live.snapshot;
  const [next, patches] = produceWithPatches(before, edit);
  const expected = parseSnapshot(next);
  const r = live.applyPatches(patches);
  expect(r.ok ? [] : r.issues).toStrictEqual(expected.ok ? [] : expected.issues);
  if (!r.ok) expect(live.snapshot, "a refused change leaves the snapshot").toBe(before);
  return r.ok ? [] : r.issues.map((i) => `${i.code} ${i.path.join(".")}`);
}

const dev = (d: Draft<SystemSnapshot>, id: string) => d.devices.find((x) => x.id === id)!;

describe("a device's type or node, read by its referrers", () => {
  test("the reader of a floor group stops being an elevator reader", () => {
    const live = liveOf();
    expect(patched(live, (d) => void (dev(d, "d-lift").type = "floorRelay"))).toEqual(
      expect.arrayContaining([
        "invalidReference floorGroups.0.readerPort",
        "invalidReference floorGroups.1.readerPort",
      ]),
    );
    // The indexes are unchanged: a valid change is still accepted.
    expect(patched(live, (d) => void (dev(d, "d-lift").name = "Lift A"))).toEqual([]);
  });
  test("a floor relay becomes a door, or moves to another node", () => {
    const live = liveOf();
    expect(patched(live, (d) => void (dev(d, "d-floor-1").type = "elevatorReader"))).toContain(
      "invalidReference floorGroups.0.floors.0",
    );
    // Another node (with a connection of its own there): the floor group's reader is on n-main.
    const moved = patched(live, (d) => {
      d.connections.push({
        id: "x-annex",
        name: "Annex controller",
        type: "usb",
        cloudNode: "n-annex",
        port: 1,
        ipaddress: null,
        ipv6Address: null,
        macAddress: null,
      } as never);
      Object.assign(dev(d, "d-floor-2"), { cloudNode: "n-annex", connection: "x-annex", port: 9 });
    });
    expect(moved).toEqual(["inconsistentReference floorGroups.1.floors.0"]);
  });
  test("a door in a door rule becomes an elevator reader", () => {
    const live = liveOf();
    expect(
      patched(live, (d) => void Object.assign(dev(d, "d-side"), { type: "elevatorReader", publicIcon: null })),
    ).toEqual(["invalidReference rules.0.devices.1"]);
  });
  test("the primary reader of an additional reader stops being one", () => {
    const live = liveOf();
    expect(patched(live, (d) => void (dev(d, "d-front").type = "elevatorReader"))).toContain(
      "invalidReference devices.1.primaryReader",
    );
  });
});

describe("a connection's node and type, read by its devices", () => {
  test("a connection moves to another node: each of its devices is inconsistent", () => {
    const live = liveOf();
    expect(patched(live, (d) => void (d.connections[1]!.cloudNode = "n-annex"))).toEqual([
      "inconsistentReference devices.5.cloudNode",
      "inconsistentReference devices.6.cloudNode",
    ]);
  });
  test("a wireless address outlives its coordinator", () => {
    const live = liveOf();
    expect(
      patched(live, (d) => {
        // A wireless coordinator has no protocol or manufacturer (ethernet only): they go with the type.
        const spare = d.connections[2]! as Record<string, unknown>;
        spare.type = "wirelessCoordinator";
        delete spare.protocol;
        delete spare.manufacturer;
        d.devices.push({
          ...JSON.parse(JSON.stringify(d.devices[6])),
          id: "d-w",
          name: "Wireless",
          connection: "x-spare",
          port: 1,
          wirelessAddress: "w-1",
        });
      }),
    ).toEqual([]);
    expect(patched(live, (d) => void (d.connections[2]!.type = "ethernet"))).toEqual([
      "invalid devices.7.wirelessAddress",
    ]);
  });
});

describe("a lockhub's count of devices, read by the hub (S14)", () => {
  test("a device added to, moved onto, or renamed off a full hub re-checks the hub", () => {
    const live = liveOf();
    const lock = (k: number) => ({
      ...deviceSchema.parse({
        id: `lock-${k}`,
        name: `Lock ${k}`,
        cloudNode: "n-annex",
        connection: "x-hub",
        port: k,
        type: "ioDevice",
        publicIcon: "other",
      }),
      partition: [],
    });
    // A hub with 64 locks, in one change: at the limit.
    expect(
      patched(live, (d) => {
        d.connections.push({
          id: "x-hub",
          name: "Annex hub",
          type: "lockhub",
          cloudNode: "n-annex",
          port: null,
          macAddress: "00:1B:2C:4A:11:08",
        } as never);
        for (let k = 1; k <= 64; k++) d.devices.push(lock(k) as never);
      }),
    ).toEqual([]);
    const hub = live.snapshot.connections.findIndex((c) => c.id === "x-hub");
    // The 65th lock, appended: the hub (untouched by the change) is reported.
    expect(patched(live, (d) => void d.devices.push(lock(65) as never))).toEqual([
      `overCapacity connections.${hub}.type`,
    ]);
    // A device of another connection moved onto the hub: the same.
    expect(
      patched(
        live,
        (d) => void Object.assign(dev(d, "d-fan"), { cloudNode: "n-annex", connection: "x-hub", port: 65 }),
      ),
    ).toEqual([`overCapacity connections.${hub}.type`]);
    // Replacing a lock by another (one out, one in) keeps 64; removing one and adding two does not.
    expect(
      patched(
        live,
        (d) =>
          void d.devices.splice(
            d.devices.findIndex((x) => x.id === "lock-1"),
            1,
            lock(65) as never,
          ),
      ),
    ).toEqual([]);
    expect(
      patched(live, (d) => {
        removeAt(
          d.devices,
          d.devices.findIndex((x) => x.id === "lock-2"),
        );
        d.devices.push(lock(66) as never, lock(67) as never);
      }),
    ).toEqual([`overCapacity connections.${hub}.type`]);
    // A lock whose schema breaks no longer counts; a lock moved to another connection frees a place.
    expect(
      patched(live, (d) => {
        Object.assign(dev(d, "lock-3"), { connection: "x-usb", cloudNode: "n-main", port: 3 });
        d.devices.push(lock(68) as never);
      }),
    ).toEqual([]);
    const lock4 = live.snapshot.devices.findIndex((x) => x.id === "lock-4");
    expect(
      patched(live, (d) => {
        (dev(d, "lock-4") as { dwell: number }).dwell = 0;
        d.devices.push(lock(69) as never);
      }),
    ).toEqual([`tooSmall devices.${lock4}.dwell`]);
  });
});

describe("removed or renamed elements: every referrer", () => {
  test("a group removed under its members and rules", () => {
    const live = liveOf();
    expect(patched(live, (d) => removeAt(d.groups, 0))).toEqual([
      "unknownReference holders.0.groups.0",
      "unknownReference holders.1.groups.0",
      "unknownReference rules.0.groupId",
    ]);
  });
  test("a partition, a cloud node, a floor group removed", () => {
    const live = liveOf();
    expect(patched(live, (d) => removeAt(d.partitions, 1))).toEqual([
      "unknownReference groups.1.partition",
      "unknownReference devices.5.partition.0.id",
      "unknownReference holders.2.partition",
    ]);
    expect(patched(live, (d) => removeAt(d.cloudNodes, 0))).toHaveLength(3 + 7);
    expect(patched(live, (d) => removeAt(d.floorGroups, 0))).toEqual(["unknownReference rules.1.floorGroups.0"]);
  });
  test("a device's id changes: its old id dangles wherever it was named", () => {
    const live = liveOf();
    expect(patched(live, (d) => void (dev(d, "d-lift").id = "d-lift-2"))).toEqual([
      "unknownReference floorGroups.0.readerPort",
      "unknownReference floorGroups.1.readerPort",
    ]);
  });
  test("elements shifted by a splice (a JSON-patch remove in the middle of a list) are all checked", () => {
    const live = liveOf();
    expect(patched(live, (d) => void d.devices.splice(1, 1))).toEqual([]);
    // The indexes follow the shift: d-fan moved from devices[6] to devices[5].
    expect(patched(live, (d) => void (d.devices[5]!.name = "Front Door"))).toEqual(["duplicateName devices.5.name"]);
    accept(live, { method: "PUT", path: "/holders/h-ann/groups/g-night" }, 204);
  });
});

describe("unique keys: the conflict is reported at the later element, even when that one was not touched", () => {
  test("names, ports, ids", () => {
    const live = liveOf();
    expect(patched(live, (d) => void (d.devices[0]!.name = "Fan"))).toEqual(["duplicateName devices.6.name"]);
    expect(patched(live, (d) => void (d.devices[0]!.port = 3))).toEqual(["portInUse devices.2.port"]);
    expect(patched(live, (d) => void (d.groups[0]!.id = "g-empty"))).toEqual(
      expect.arrayContaining([
        "duplicateId groups.2.id",
        "unknownReference holders.0.groups.0",
        "unknownReference rules.0.groupId",
      ]),
    );
  });
  test("credential numbers and ids", () => {
    const live = liveOf();
    expect(patched(live, (d) => void (d.holders[0]!.credentials[0]!.credentialNumber = 1002))).toEqual([
      "duplicateCredentialNumber holders.1.credentials.0.credentialNumber",
    ]);
    expect(patched(live, (d) => void (d.holders[0]!.credentials[0]!.id = "c-bob-phone"))).toEqual([
      "duplicateId holders.1.credentials.1.id",
    ]);
  });
  test("an element that fails its schema still holds its id", () => {
    const live = liveOf();
    const issues = patched(live, (d) => {
      d.devices.push({ ...JSON.parse(JSON.stringify(d.devices[0])), name: "" });
    });
    expect(issues).toEqual(["tooSmall devices.7.name", "duplicateId devices.0.id"]);
  });
});

describe("batches", () => {
  test("a refused batch steps the indexes back; each operation sees the ones before it", () => {
    const live = liveOf();
    const r = live.apply([
      { method: "POST", path: "/groups", body: { name: "Cleaners" } },
      { method: "POST", path: "/groups", body: { name: "Cleaners" } },
    ]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.code)).toEqual(["duplicateName"]);
    // Had the indexes kept the first create, this would be refused as a duplicate name.
    accept(live, { method: "POST", path: "/groups", body: { name: "Cleaners" } }, 200);
    expect(live.apply({ method: "POST", path: "/groups", body: { name: "Cleaners" } }).status).toBe(409);
  });
});

describe("a holder whose memberships alone changed is checked in part, unless another change claims its keys", () => {
  const holder = (d: Draft<SystemSnapshot>, id: string) => d.holders.find((x) => x.id === id)!;
  test("its groups are checked: an unknown group, a group named twice", () => {
    const live = liveOf();
    expect(patched(live, (d) => void holder(d, "h-bob").groups.push("g-nowhere"))).toEqual([
      "unknownReference holders.1.groups.2",
    ]);
    expect(patched(live, (d) => void holder(d, "h-bob").groups.push("g-staff"))).toEqual(["invalid holders.1.groups"]);
  });
  test("an earlier holder takes its card number, or its id, in the same change: the issue is still on it", () => {
    const live = liveOf();
    expect(
      patched(live, (d) => {
        holder(d, "h-bob").groups.push("g-empty");
        holder(d, "h-ann").credentials[0]!.credentialNumber = 1002;
      }),
    ).toEqual(["duplicateCredentialNumber holders.1.credentials.0.credentialNumber"]);
    expect(
      patched(live, (d) => {
        holder(d, "h-bob").groups.push("g-empty");
        holder(d, "h-ann").id = "h-bob";
      }),
    ).toEqual(expect.arrayContaining(["duplicateId holders.1.id"]));
  });
  test("its partition goes in the same change: the partition is checked too", () => {
    const live = liveOf();
    const i = live.snapshot.partitions.findIndex((p) => p.id === "p-east");
    const issues = patched(live, (d) => {
      holder(d, "h-cy").groups.push("g-staff");
      removeAt(d.partitions, i);
    });
    expect(issues).toContain("unknownReference holders.2.partition");
  });
});
