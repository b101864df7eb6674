// Seed 001 §4 reads and seed 000 §4 paging through the live system: search (partial,
// case-insensitive; quoted = exact), search_fields, ids (≤ 50), page (0-based), per_page (default
// 10, max 100), order by id, total; RSOP; unknown route 404 and wrong method 405; batches.
import { describe, expect, test } from "vitest";
import type { Operation } from "../../src/live/index.js";
import { AT, accept, liveOf, read, refuse, scan } from "./fixture.js";

const ids = (list: { id: string }[]) => list.map((x) => x.id);

/** The fixture plus 12 holders "Zed 00"…"Zed 11" with ids z-00…z-11, created in reverse order. */
function crowded() {
  const live = liveOf();
  const holders = live.snapshot.holders;
  const more = Array.from({ length: 12 }, (_, i) => ({
    id: `z-${String(11 - i).padStart(2, "0")}`,
    firstName: "Zed",
    lastName: String(11 - i).padStart(2, "0"),
  }));
  return liveOf({ ...JSON.parse(JSON.stringify({ ...live.snapshot, holders: [...holders, ...more] })) });
}

describe("lists", () => {
  test("per_page defaults to 10, page to 0; order by id; total counts every match", () => {
    const live = crowded();
    const first = read(live, "/holders");
    expect(first.total).toBe(15);
    expect(ids(first.body)).toEqual(["h-ann", "h-bob", "h-cy", ...Array.from({ length: 7 }, (_, i) => `z-0${i}`)]);
    const second = read(live, "/holders?page=1");
    expect(ids(second.body)).toEqual(["z-07", "z-08", "z-09", "z-10", "z-11"]);
    expect(read(live, "/holders?page=2").body).toEqual([]);
    expect(ids(read(live, "/holders?page=1&per_page=4").body)).toEqual(["z-01", "z-02", "z-03", "z-04"]);
    expect(read(live, "/holders?per_page=100").body).toHaveLength(15);
  });

  test("per_page 1…100 and page ≥ 0 whole numbers, else 400 at query.<name>", () => {
    const live = liveOf();
    for (const q of ["per_page=101", "per_page=0", "per_page=ten", "page=-1", "page=1.5"])
      expect(refuse(live, { method: "GET", path: `/holders?${q}` }, 400).paths, q).toEqual([
        `query.${q.split("=")[0]}`,
      ]);
  });

  test("holder search: partial and case-insensitive over firstName, lastName, email by default", () => {
    const live = liveOf();
    expect(ids(read(live, "/holders?search=ann").body)).toEqual(["h-ann", "h-cy"]); // Ann, Annand
    expect(ids(read(live, "/holders?search=EXAMPLE.ORG").body)).toEqual(["h-bob"]);
    expect(read(live, "/holders?search=1234").total).toBe(0); // pin is not searched by default
    expect(read(live, "/holders?search=ann").total).toBe(2);
  });

  test('holder search: a quoted operand matches a whole value ("Ann" is not "Annand")', () => {
    const live = liveOf();
    expect(ids(read(live, `/holders?search=${encodeURIComponent('"ann"')}`).body)).toEqual(["h-ann"]);
    expect(read(live, `/holders?search=${encodeURIComponent('"Ann Lee"')}`).total).toBe(0);
    expect(ids(read(live, `/holders?search=${encodeURIComponent('"bob@example.org"')}`).body)).toEqual(["h-bob"]);
  });

  test("search_fields chooses among firstName, lastName, email, pin; anything else → 400", () => {
    const live = liveOf();
    expect(ids(read(live, "/holders?search=1234&search_fields=pin").body)).toEqual(["h-ann"]);
    expect(ids(read(live, "/holders?search=ann&search_fields=lastName").body)).toEqual(["h-cy"]);
    expect(ids(read(live, "/holders?search=ann&search_fields=firstName,email").body)).toEqual(["h-ann"]);
    expect(refuse(live, { method: "GET", path: "/holders?search=x&search_fields=partition" }, 400).paths).toEqual([
      "query.search_fields",
    ]);
    // an empty search_fields is the default set; spaces around names are allowed
    expect(ids(read(live, "/holders?search=ann&search_fields=").body)).toEqual(["h-ann", "h-cy"]);
    expect(ids(read(live, "/holders?search=1234&search_fields=firstName,%20pin").body)).toEqual(["h-ann"]);
  });

  test("groups: search on name, ids filter (≤ 50)", () => {
    const live = liveOf();
    expect(ids(read(live, "/groups?search=SHIFT").body)).toEqual(["g-night"]);
    expect(ids(read(live, "/groups?ids=g-staff,g-empty,g-nope").body)).toEqual(["g-empty", "g-staff"]);
    expect(ids(read(live, "/groups?ids=g-staff,g-night&search=night").body)).toEqual(["g-night"]);
    const fifty = Array.from({ length: 49 }, (_, i) => `x-${i}`).concat("g-staff");
    expect(ids(read(live, `/groups?ids=${fifty.join(",")}`).body)).toEqual(["g-staff"]);
    expect(refuse(live, { method: "GET", path: `/groups?ids=${fifty.join(",")},x-50` }, 400).paths).toEqual([
      "query.ids",
    ]);
  });

  test("cloud nodes: search on name, serialNumber and description; partitions and floor groups on name", () => {
    const live = liveOf();
    expect(ids(read(live, "/cloud-nodes?search=sn-0002").body)).toEqual(["n-annex"]);
    expect(ids(read(live, "/cloud-nodes?search=lobby").body)).toEqual(["n-main"]);
    expect(ids(read(live, "/cloud-nodes?search=a").body)).toEqual(["n-annex", "n-main"]);
    expect(ids(read(live, "/partitions?search=wing").body)).toEqual(["p-east"]);
    expect(ids(read(live, "/floor_groups?search=HIGH").body)).toEqual(["f-high"]);
    expect(read(live, "/floor_groups").total).toBe(2);
  });

  test("include: holders (partition, rules), groups (holders, partition, rules), partitions (devices, attributes); unknown → 400", () => {
    const live = liveOf();
    const ann = read(live, "/holders?search=lee&include=partition,rules,credentials,groups").body[0];
    expect(ann.partition).toBeNull();
    expect(ann.rules.map((r: { id: string }) => r.id)).toEqual(["r-staff-door"]);
    const cy = read(live, "/holders?search=annand&include=partition").body[0];
    expect(cy.partition).toEqual({ id: "p-east", name: "East Wing" });
    expect(read(live, "/holders?search=annand").body[0].partition).toBe("p-east");
    const night = read(live, "/groups?ids=g-night&include=holders,partition,rules").body[0];
    expect(night).toEqual({
      id: "g-night",
      name: "Night Shift",
      partition: { id: "p-east", name: "East Wing" },
      holders: [
        { id: "h-bob", firstName: "Bob", lastName: "Stone", enabled: true, partition: null, email: "bob@example.org" },
      ],
      rules: [live.snapshot.rules[1]],
    });
    expect(read(live, "/groups?ids=g-night").body[0]).toEqual({
      id: "g-night",
      name: "Night Shift",
      partition: "p-east",
    });
    const east = read(live, "/partitions?search=east&include=devices,users,attributes").body[0];
    expect(east).toEqual({
      id: "p-east",
      name: "East Wing",
      users: ["u-1"],
      devices: [{ id: "d-side", name: "Side Gate", type: "primaryReader" }],
      attributes: [],
    });
    expect(refuse(live, { method: "GET", path: "/holders?include=devices" }, 400).paths).toEqual(["query.include"]);
    expect(refuse(live, { method: "GET", path: "/groups?include=credentials" }, 400).paths).toEqual(["query.include"]);
    expect(refuse(live, { method: "GET", path: "/partitions?include=rules" }, 400).paths).toEqual(["query.include"]);
  });

  test("holders of a group are partial holders, paged", () => {
    const live = liveOf();
    const r = read(live, "/groups/g-staff/holders?per_page=1");
    expect(r.total).toBe(2);
    expect(r.body).toEqual([
      { id: "h-ann", firstName: "Ann", lastName: "Lee", enabled: true, partition: null, email: "ann@example.com" },
    ]);
    refuse(live, { method: "GET", path: "/groups/g-nope/holders" }, 404);
    refuse(live, { method: "GET", path: "/holders/h-nope/groups" }, 404);
  });

  test("a holder reads with groups as {id, name, partition} and credentials as objects", () => {
    const h = read(liveOf(), "/holders/h-bob").body;
    expect(h.groups).toEqual([
      { id: "g-staff", name: "Staff", partition: "p-default" },
      { id: "g-night", name: "Night Shift", partition: "p-east" },
    ]);
    expect(h.credentials.map((c: { id: string; holderId: string }) => [c.id, c.holderId])).toEqual([
      ["c-bob", "h-bob"],
      ["c-bob-phone", "h-bob"],
    ]);
  });
});

describe("RSOP", () => {
  test("ids are required; unknown holders → 404; the answer is the engine's", () => {
    const live = liveOf();
    expect(refuse(live, { method: "GET", path: "/rsop/holders" }, 400).paths).toEqual(["query.ids"]);
    refuse(live, { method: "GET", path: "/rsop/holders?ids=h-nope" }, 404);
    const r = read(live, `/rsop/holders?ids=h-ann,h-bob&at=${AT}`).body;
    expect(r).toEqual(live.engine.rsop(["h-ann", "h-bob"], { at: AT }));
    expect(r.holders[0].devices.map((d: { id: string; allowed: boolean }) => [d.id, d.allowed])).toEqual([
      ["d-front", true],
      ["d-side", true],
    ]);
    expect(read(live, `/cloud-nodes/n-main/rsop/holders?ids=h-bob&at=${AT}`).body).toEqual(
      live.engine.rsop(["h-bob"], { at: AT, cloudNodeId: "n-main" }),
    );
  });

  test("after a membership change the RSOP answer follows", () => {
    const live = liveOf();
    accept(live, { method: "PUT", path: "/holders/h-cy/groups/g-night" }, 204);
    const r = read(live, `/rsop/holders?ids=h-cy&at=${AT}`).body;
    expect(r.holders[0].floorGroups.map((f: { id: string; allowed: boolean }) => f.id)).toEqual(["f-low"]);
  });
});

describe("routing", () => {
  test("an unknown route → 404 at path; a known path with another method → 405 naming the methods", () => {
    const live = liveOf();
    expect(refuse(live, { method: "GET", path: "/doors" }, 404).paths).toEqual(["path"]);
    expect(refuse(live, { method: "GET", path: "/holders/" }, 404).paths).toEqual(["path"]);
    expect(refuse(live, { method: "POST", path: "/holders/h-ann/credentials/c-ann/activate/now" }, 404).paths).toEqual([
      "path",
    ]);
    const m = refuse(live, { method: "DELETE", path: "/holders" }, 405);
    expect(m.paths).toEqual(["method"]);
    expect(m.issues[0]!.message).toContain("GET, POST");
    refuse(live, { method: "POST", path: "/cloud-nodes/n-main/devices/d-front" }, 405);
    refuse(live, { method: "PATCH" as "PUT", path: "/groups/g-staff" }, 405);
    expect(refuse(live, { method: "PUT" } as Operation, 400).paths).toEqual([""]);
  });

  test("literal segments win: /credentials/facility-codes is not a credential id", () => {
    expect(read(liveOf(), "/credentials/facility-codes").body).toEqual(["10", "20"]);
  });

  test("path segments are URL-decoded", () => {
    const live = liveOf({
      ...liveOf().snapshot,
      groups: [...liveOf().snapshot.groups, { id: "g 1/2", name: "Odd" }],
    } as unknown);
    expect(read(live, `/groups/${encodeURIComponent("g 1/2")}`).body.name).toBe("Odd");
  });
});

describe("batches", () => {
  test("all or nothing: a refused operation in a batch leaves the snapshot unchanged and says which", () => {
    const live = liveOf();
    const before = live.snapshot;
    const r = live.apply([
      { method: "POST", path: "/groups", body: { name: "Cleaners" } },
      { method: "PUT", path: "/holders/h-ann/groups/g-empty" },
      { method: "DELETE", path: "/groups/g-staff" },
    ]);
    expect(r.ok).toBe(false);
    expect(!r.ok && [r.status, r.index]).toEqual([409, 2]);
    expect(live.snapshot).toBe(before);
  });

  test("a later operation sees the earlier ones: create a group and a holder in it", () => {
    const live = liveOf();
    const r = live.apply([
      { method: "POST", path: "/groups", body: { name: "Cleaners" } },
      { method: "GET", path: "/groups?search=clean" },
    ]);
    expect(r.ok).toBe(true);
    const results = r.ok ? r.results : [];
    expect(results.map((x) => x.status)).toEqual([200, 200]);
    const created = results[0]! as { id: string };
    expect(ids((results[1] as { body: { id: string }[] }).body)).toEqual([created.id]);
    expect(ids(read(live, "/groups?search=clean").body)).toEqual([created.id]);
  });
});

describe("batches of creates (run on one draft, validated once: semantics L20)", () => {
  const creates = (n: number, group = "g-staff") =>
    Array.from({ length: n }, (_, k) => ({
      method: "POST" as const,
      path: "/holders",
      body: {
        firstName: "Bat",
        lastName: `Ch${k}`,
        groups: [group],
        credentials: [{ types: ["card"], credentialNumber: 7000 + k, facilityCode: 10 }],
      },
    }));

  test("answer, snapshot, patches and ids equal those of the same creates applied one at a time", () => {
    const ops = [
      ...creates(5),
      { method: "POST" as const, path: "/groups", body: { name: "Cleaners" } },
      {
        method: "POST" as const,
        path: "/rules",
        body: {
          type: "door",
          groupId: "g-staff",
          devices: ["d-front"],
          startTime: "00:00:00",
          stopTime: "24:00:00",
          recurring: ["Mon"],
        },
      },
    ];
    const batched = liveOf();
    const single = liveOf();
    const r = batched.apply(ops);
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    const one = ops.map((op) => single.apply(op));
    expect(r.results).toEqual(one);
    expect(batched.snapshot).toEqual(single.snapshot);
    // Each result's inverse undoes it: undone last to first, the snapshot is back where it started.
    for (const x of [...r.results].reverse())
      expect(batched.applyPatches((x as unknown as { inversePatches: never[] }).inversePatches).ok).toBe(true);
    expect(batched.snapshot).toEqual(liveOf().snapshot);
    // The engine answers for the new holders as a fresh load does.
    const fresh = liveOf(single.snapshot);
    expect(scan(single, "d-front", 7003, 10)).toEqual(scan(fresh, "d-front", 7003, 10));
    expect(scan(single, "d-front", 7003, 10).outcome).toBe("allowed");
  });

  test("a refused create names its index and problems as one-at-a-time would, changes nothing, and the ids drawn are used again", () => {
    // The third create reuses the first one's card number; two more follow it.
    const ops = creates(5).map((op, k) =>
      k === 2
        ? { ...op, body: { ...op.body, credentials: [{ types: ["card"], credentialNumber: 7000, facilityCode: 10 }] } }
        : op,
    );
    const live = liveOf();
    const before = live.snapshot;
    const r = live.apply(ops);
    expect(r.ok).toBe(false);
    const sequential = liveOf();
    const expected = (() => {
      for (let i = 0; i < ops.length; i++) {
        const x = sequential.apply(ops[i]!);
        if (!x.ok) return { ...x, index: i };
      }
      return null;
    })();
    expect(r).toEqual(expected);
    expect(!r.ok && [r.status, r.index]).toEqual([409, 2]);
    expect(live.snapshot).toBe(before);
    // Later creates get the ids that a system running the operations one at a time, up to the refused
    // one, gives them (that system kept the two creates before it: a batch keeps none).
    const later = creates(3).map((op, k) => ({
      ...op,
      body: { ...op.body, credentials: [{ types: ["card"], credentialNumber: 8000 + k, facilityCode: 10 }] },
    }));
    for (const op of later) {
      const [a, b] = [live.apply(op), sequential.apply(op)];
      expect([a.status, b.status]).toEqual([201, 201]);
      expect((a as { id: string }).id).toBe((b as { id: string }).id);
    }
  });

  test("a create that names what a later create of the batch makes is refused as one at a time would refuse it", () => {
    // seededIds makes ids predictable: the group the second operation creates has the id drawn second.
    const probe = liveOf();
    probe.apply({ method: "POST", path: "/groups", body: { name: "First" } });
    const second = (probe.apply({ method: "POST", path: "/groups", body: { name: "Second" } }) as { id: string }).id;
    const live = liveOf();
    const r = live.apply([
      { method: "POST", path: "/groups", body: { name: "First" } },
      {
        method: "POST",
        path: "/rules",
        body: {
          type: "door",
          groupId: second,
          devices: ["d-front"],
          startTime: "00:00:00",
          stopTime: "24:00:00",
          recurring: ["Mon"],
        },
      },
      { method: "POST", path: "/groups", body: { name: "Second" } },
    ]);
    expect(!r.ok && [r.status, r.index, r.issues.map((i) => i.path.join("."))]).toEqual([400, 1, ["body.groupId"]]);
  });
});

describe("what a live snapshot freezes (semantics L19)", () => {
  test("entities, new and changed, and the root are frozen; the top-level lists are read-only by type only", () => {
    const live = liveOf();
    expect(Object.isFrozen(live.snapshot)).toBe(true);
    expect(Object.isFrozen(live.snapshot.holders[0])).toBe(true);
    expect(Object.isFrozen(live.snapshot.holders[0]!.credentials[0])).toBe(true);
    const created = accept(
      live,
      { method: "POST", path: "/holders", body: { firstName: "New", lastName: "Person", groups: ["g-staff"] } },
      201,
    );
    accept(live, { method: "PUT", path: "/holders/h-ann/groups/g-night" }, 204);
    const s = live.snapshot;
    const ann = s.holders.find((h) => h.id === "h-ann")!;
    const made = s.holders.find((h) => h.id === created.id)!;
    for (const x of [s, ann, ann.groups, ann.credentials, made, made.groups]) expect(Object.isFrozen(x)).toBe(true);
    expect(Object.isFrozen(s.holders)).toBe(false);
    expect(() => {
      (ann.groups as string[]).push("g-empty");
    }).toThrow(TypeError);
  });
});
