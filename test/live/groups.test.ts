// Seed 001 §4 "Groups" and the four membership routes: 200 {id} on create, name unique and ≤ 70,
// update needs name and partition, a group with rules is not deleted (409 naming each rule).
import { describe, expect, test } from "vitest";
import { accept, liveOf, read, refuse, scan } from "./fixture.js";

const ids = (list: { id: string }[]) => list.map((x) => x.id);

describe("POST /groups", () => {
  test("200 {id}; reads back; partition optional", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/groups", body: { name: "Cleaners" } }, 200);
    expect(read(live, `/groups/${r.id}`).body).toEqual({ id: r.id, name: "Cleaners", partition: null });
    const p = accept(live, { method: "POST", path: "/groups", body: { name: "Guards", partition: "p-east" } }, 200);
    expect(read(live, `/groups/${p.id}`).body.partition).toBe("p-east");
  });

  test("name is required, at most 70 characters, unique in the system (409)", () => {
    const live = liveOf();
    expect(refuse(live, { method: "POST", path: "/groups", body: {} }, 400).paths).toEqual(["body.name"]);
    expect(refuse(live, { method: "POST", path: "/groups", body: { name: "" } }, 400).paths).toEqual(["body.name"]);
    expect(refuse(live, { method: "POST", path: "/groups", body: { name: "g".repeat(71) } }, 400).paths).toEqual([
      "body.name",
    ]);
    accept(live, { method: "POST", path: "/groups", body: { name: "g".repeat(70) } }, 200);
    const dup = refuse(live, { method: "POST", path: "/groups", body: { name: "Staff" } }, 409);
    expect(dup.issues.map((i) => i.code)).toEqual(["duplicateName"]);
    expect(dup.paths).toEqual(["body.name"]);
    expect(dup.issues[0]!.message).toContain("Staff");
  });

  test("an unknown partition → 400", () => {
    const r = refuse(liveOf(), { method: "POST", path: "/groups", body: { name: "X", partition: "p-nope" } }, 400);
    expect(r.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["unknownReference", "body.partition"]]);
  });
});

describe("PUT /groups/{group_id}", () => {
  test("name and partition are both required (partition may be null); 204", () => {
    const live = liveOf();
    expect(refuse(live, { method: "PUT", path: "/groups/g-empty", body: { name: "Guests" } }, 400).paths).toEqual([
      "body.partition",
    ]);
    expect(refuse(live, { method: "PUT", path: "/groups/g-empty", body: { partition: null } }, 400).paths).toEqual([
      "body.name",
    ]);
    accept(live, { method: "PUT", path: "/groups/g-empty", body: { name: "Guests", partition: "p-east" } }, 204);
    expect(read(live, "/groups/g-empty").body).toEqual({ id: "g-empty", name: "Guests", partition: "p-east" });
    // the holder read shows the new name
    expect(read(live, "/holders/h-cy").body.groups).toEqual([{ id: "g-empty", name: "Guests", partition: "p-east" }]);
  });

  test("renaming onto another group's name → 409; keeping its own name is fine; unknown group → 404", () => {
    const live = liveOf();
    expect(
      refuse(live, { method: "PUT", path: "/groups/g-empty", body: { name: "Night Shift", partition: null } }, 409)
        .paths,
    ).toEqual(["body.name"]);
    accept(live, { method: "PUT", path: "/groups/g-night", body: { name: "Night Shift", partition: null } }, 204);
    refuse(live, { method: "PUT", path: "/groups/g-nope", body: { name: "X", partition: null } }, 404);
  });
});

describe("PUT /groups/{group_id}: limits", () => {
  test("name ≤ 70 as on create; an unknown partition → 400; the change reads back", () => {
    const live = liveOf();
    expect(
      refuse(live, { method: "PUT", path: "/groups/g-staff", body: { name: "g".repeat(71), partition: null } }, 400)
        .paths,
    ).toEqual(["body.name"]);
    expect(
      refuse(live, { method: "PUT", path: "/groups/g-staff", body: { name: "Staff", partition: "p-nope" } }, 400).paths,
    ).toEqual(["body.partition"]);
    accept(live, { method: "PUT", path: "/groups/g-staff", body: { name: "g".repeat(70), partition: "p-east" } }, 204);
    expect(read(live, "/groups/g-staff").body).toEqual({ id: "g-staff", name: "g".repeat(70), partition: "p-east" });
  });
});

describe("DELETE /groups/{group_id}", () => {
  test("a group that rules use → 409 naming each rule; nothing changes", () => {
    const live = liveOf();
    accept(
      live,
      {
        method: "POST",
        path: "/rules",
        body: {
          type: "door",
          groupId: "g-staff",
          devices: ["d-fan"],
          startTime: "08:00:00",
          stopTime: "09:00:00",
          recurring: ["Mon"],
        },
      },
      201,
    );
    const r = refuse(live, { method: "DELETE", path: "/groups/g-staff" }, 409);
    expect(r.paths).toEqual(["rules.0.groupId", "rules.2.groupId"]);
    expect(r.issues[0]!.message).toContain("r-staff-door");
    expect(r.issues.every((i) => i.code === "conflict")).toBe(true);
  });

  test("204; its memberships go with it", () => {
    const live = liveOf();
    accept(live, { method: "DELETE", path: "/groups/g-empty" }, 204);
    expect(read(live, "/holders/h-cy").body.groups).toEqual([]);
    refuse(live, { method: "GET", path: "/groups/g-empty" }, 404);
    refuse(live, { method: "DELETE", path: "/groups/g-empty" }, 404);
  });

  test("once its rule is gone the group can be deleted, and its members lose that access", () => {
    const live = liveOf();
    accept(live, { method: "DELETE", path: "/rules/r-night-lift" }, 204);
    accept(live, { method: "DELETE", path: "/groups/g-night" }, 204);
    expect(read(live, "/holders/h-bob").body.groups.map((g: { id: string }) => g.id)).toEqual(["g-staff"]);
  });
});

describe("memberships", () => {
  test("PUT /holders/{h}/groups/{g} adds (204, idempotent) and grants the group's rules", () => {
    const live = liveOf();
    expect(scan(live, "d-lift", 1001, 10).outcome).toBe("denied");
    accept(live, { method: "PUT", path: "/holders/h-ann/groups/g-night" }, 204);
    expect(scan(live, "d-lift", 1001, 10)).toMatchObject({ outcome: "allowed", floors: ["d-floor-1"] });
    const again = accept(live, { method: "PUT", path: "/holders/h-ann/groups/g-night" }, 204);
    expect(again.patches).toEqual([]);
    expect(ids(read(live, "/holders/h-ann/groups").body)).toEqual(["g-night", "g-staff"]);
  });

  test("DELETE /holders/{h}/groups/{g} removes (204) and takes the access; not a member → 404", () => {
    const live = liveOf();
    accept(live, { method: "DELETE", path: "/holders/h-ann/groups/g-staff" }, 204);
    expect(scan(live, "d-front", 1001, 10).outcome).toBe("denied");
    refuse(live, { method: "DELETE", path: "/holders/h-ann/groups/g-staff" }, 404);
  });

  test("unknown holder or group in the path → 404", () => {
    const live = liveOf();
    for (const method of ["PUT", "DELETE"] as const) {
      expect(refuse(live, { method, path: "/holders/h-nope/groups/g-staff" }, 404).issues[0]!.message).toContain(
        "h-nope",
      );
      expect(refuse(live, { method, path: "/holders/h-ann/groups/g-nope" }, 404).issues[0]!.message).toContain(
        "g-nope",
      );
    }
  });

  test("PUT /holders/{h}/groups overwrites all of a holder's groups", () => {
    const live = liveOf();
    accept(live, { method: "PUT", path: "/holders/h-bob/groups", body: { groups: ["g-empty"] } }, 204);
    expect(ids(read(live, "/holders/h-bob/groups").body)).toEqual(["g-empty"]);
    expect(scan(live, "d-front", 1002, 20).outcome).toBe("denied");
    accept(live, { method: "PUT", path: "/holders/h-bob/groups", body: { groups: [] } }, 204);
    expect(read(live, "/holders/h-bob/groups").total).toBe(0);
  });

  test("PUT /holders/{h}/groups: groups required, ids only, each known, none twice", () => {
    const live = liveOf();
    expect(refuse(live, { method: "PUT", path: "/holders/h-bob/groups", body: {} }, 400).paths).toEqual([
      "body.groups",
    ]);
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-bob/groups", body: { groups: "g-staff" } }, 400).paths,
    ).toEqual(["body.groups"]);
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-bob/groups", body: { groups: ["g-staff", "g-x", "g-y"] } }, 400)
        .paths,
    ).toEqual(["body.groups.1", "body.groups.2"]);
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-bob/groups", body: { groups: ["g-staff", "g-staff"] } }, 400)
        .paths,
    ).toEqual(["body.groups.1"]);
    refuse(live, { method: "PUT", path: "/holders/h-nope/groups", body: { groups: [] } }, 404);
  });

  test("PUT /groups/{g}/holders overwrites all of a group's holders", () => {
    const live = liveOf();
    accept(
      live,
      { method: "POST", path: "/holders/h-cy/credentials", body: { types: ["card"], credentialNumber: 3003 } },
      201,
    );
    accept(live, { method: "PUT", path: "/groups/g-staff/holders", body: { holders: ["h-cy"] } }, 204);
    const members = read(live, "/groups/g-staff/holders");
    expect(members.body).toEqual([
      { id: "h-cy", firstName: "Cy", lastName: "Annand", enabled: true, partition: "p-east", email: null },
    ]);
    expect(scan(live, "d-front", 1001, 10).outcome).toBe("denied");
    expect(scan(live, "d-front", 3003).outcome).toBe("allowed");
    // the other memberships of the removed holders stay
    expect(ids(read(live, "/holders/h-bob/groups").body)).toEqual(["g-night"]);
    expect(refuse(live, { method: "PUT", path: "/groups/g-staff/holders", body: {} }, 400).paths).toEqual([
      "body.holders",
    ]);
    expect(
      refuse(live, { method: "PUT", path: "/groups/g-staff/holders", body: { holders: ["h-x"] } }, 400).paths,
    ).toEqual(["body.holders.0"]);
    refuse(live, { method: "PUT", path: "/groups/g-nope/holders", body: { holders: [] } }, 404);
  });
});
