// ★ Rules (SPEC §9: the seeds show no rule endpoints): POST /rules 201 {id}, PUT/DELETE 204, the
// body being the §1 Rule without `id`; checked against the snapshot rules and decisions.
import { describe, expect, test } from "vitest";
import { accept, liveOf, read, refuse, scan } from "./fixture.js";

const WEEK = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const DOOR = {
  type: "door",
  groupId: "g-empty",
  devices: ["d-fan"],
  startTime: "00:00:00",
  stopTime: "24:00:00",
  recurring: WEEK,
};

describe("rules", () => {
  test("POST 201 {id} with the rule defaults; the rule takes effect", () => {
    const live = liveOf();
    accept(
      live,
      { method: "POST", path: "/holders/h-cy/credentials", body: { types: ["card"], credentialNumber: 3003 } },
      201,
    );
    expect(scan(live, "d-fan", 3003).outcome).toBe("denied");
    const r = accept(live, { method: "POST", path: "/rules", body: DOOR }, 201);
    expect(read(live, `/rules/${r.id}`).body).toEqual({
      id: r.id,
      name: null,
      ...DOOR,
      floorGroups: [],
      allow: true,
      authenticationPolicy: null,
      enabled: true,
      startDate: null,
      endDate: null,
    });
    expect(scan(live, "d-fan", 3003)).toMatchObject({ outcome: "allowed", activeRuleId: r.id });
  });

  test("required fields and rule checks are reported under body", () => {
    const live = liveOf();
    expect(refuse(live, { method: "POST", path: "/rules", body: {} }, 400).paths.sort()).toEqual([
      "body.groupId",
      "body.recurring",
      "body.startTime",
      "body.stopTime",
      "body.type",
    ]);
    expect(
      refuse(live, { method: "POST", path: "/rules", body: { ...DOOR, startTime: "25:00:00" } }, 400).paths,
    ).toEqual(["body.startTime"]);
    expect(
      refuse(live, { method: "POST", path: "/rules", body: { ...DOOR, recurring: ["Mon", "Mon"] } }, 400).paths,
    ).toEqual(["body.recurring"]);
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: "/rules",
          body: { ...DOOR, type: "elevator", allow: false, devices: [], floorGroups: ["f-low"] },
        },
        400,
      ).paths,
    ).toEqual(["body.allow"]);
    expect(
      refuse(
        live,
        { method: "POST", path: "/rules", body: { ...DOOR, startDate: "2026-05-01", endDate: "2026-04-01" } },
        400,
      ).paths,
    ).toEqual(["body.endDate"]);
    expect(refuse(live, { method: "POST", path: "/rules", body: { ...DOOR, type: "elevator" } }, 400).paths).toEqual([
      "body.devices",
    ]);
    expect(
      refuse(live, { method: "POST", path: "/rules", body: { ...DOOR, floorGroups: ["f-low"] } }, 400).paths,
    ).toEqual(["body.floorGroups"]);
    expect(
      refuse(live, { method: "POST", path: "/rules", body: { ...DOOR, name: "r".repeat(71) } }, 400).paths,
    ).toEqual(["body.name"]);
  });

  test("unknown group, device or floor group → 400; door rules cannot name elevator hardware", () => {
    const live = liveOf();
    const at = (body: object) =>
      refuse(live, { method: "POST", path: "/rules", body: { ...DOOR, ...body } }, 400).issues.map((i) => [
        i.code,
        i.path.join("."),
      ]);
    expect(at({ groupId: "g-nope" })).toEqual([["unknownReference", "body.groupId"]]);
    expect(at({ devices: ["d-fan", "d-nope"] })).toEqual([["unknownReference", "body.devices.1"]]);
    expect(at({ devices: ["d-lift"] })).toEqual([["invalidReference", "body.devices.0"]]);
    expect(at({ type: "elevator", devices: [], floorGroups: ["f-nope"] })).toEqual([
      ["unknownReference", "body.floorGroups.0"],
    ]);
  });

  test("PUT 204 replaces the rule: a deny rule at the front door denies the staff", () => {
    const live = liveOf();
    accept(
      live,
      {
        method: "PUT",
        path: "/rules/r-staff-door",
        body: {
          type: "door",
          groupId: "g-staff",
          devices: ["d-front"],
          startTime: "00:00:00",
          stopTime: "24:00:00",
          recurring: WEEK,
          allow: false,
        },
      },
      204,
    );
    expect(scan(live, "d-front", 1001, 10)).toMatchObject({ outcome: "denied", activeRuleId: "r-staff-door" });
    expect(scan(live, "d-side", 1001, 10).outcome).toBe("denied");
    refuse(live, { method: "PUT", path: "/rules/r-nope", body: DOOR }, 404);
  });

  test("DELETE 204 takes the access away; unknown rule → 404", () => {
    const live = liveOf();
    accept(live, { method: "DELETE", path: "/rules/r-night-lift" }, 204);
    expect(scan(live, "d-lift", 1002, 20).outcome).toBe("denied");
    refuse(live, { method: "DELETE", path: "/rules/r-night-lift" }, 404);
    expect(read(live, "/rules").body.map((r: { id: string }) => r.id)).toEqual(["r-staff-door"]);
  });
});
