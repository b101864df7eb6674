// Seed 001 §4 "Partitions" (with replace/remove devices) and "Floor groups": statuses, required
// fields, unique names, the floor-group partition default, and the delete conflicts.
import { describe, expect, test } from "vitest";
import { accept, liveOf, read, refuse, scan } from "./fixture.js";

const partitionsOf = (live: ReturnType<typeof liveOf>, deviceId: string) =>
  read(live, `/cloud-nodes/n-main/devices/${deviceId}`).body.partition.map((p: { id: string }) => p.id);

describe("partitions", () => {
  test("POST 200 {id}; users optional (default none); name required and unique (409)", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/partitions", body: { name: "West Wing" } }, 200);
    expect(read(live, `/partitions/${r.id}`).body).toEqual({ id: r.id, name: "West Wing", users: [] });
    const u = accept(
      live,
      { method: "POST", path: "/partitions", body: { name: "North", users: ["u-7", "u-8"] } },
      200,
    );
    expect(read(live, `/partitions/${u.id}`).body.users).toEqual(["u-7", "u-8"]);
    expect(refuse(live, { method: "POST", path: "/partitions", body: {} }, 400).paths).toEqual(["body.name"]);
    expect(refuse(live, { method: "POST", path: "/partitions", body: { name: "East Wing" } }, 409).paths).toEqual([
      "body.name",
    ]);
    expect(refuse(live, { method: "POST", path: "/partitions", body: { name: "S", users: "u-1" } }, 400).paths).toEqual(
      ["body.users"],
    );
  });

  test("PUT requires name and users (null allowed); 204; a device's partition entry shows the new name", () => {
    const live = liveOf();
    expect(refuse(live, { method: "PUT", path: "/partitions/p-east", body: { name: "E" } }, 400).paths).toEqual([
      "body.users",
    ]);
    expect(refuse(live, { method: "PUT", path: "/partitions/p-east", body: { users: null } }, 400).paths).toEqual([
      "body.name",
    ]);
    accept(live, { method: "PUT", path: "/partitions/p-east", body: { name: "East", users: null } }, 204);
    // `default` only on the default partition (L24); a device's entries are `{id, name, default}` (L23).
    expect(read(live, "/partitions/p-east").body).toEqual({ id: "p-east", name: "East", users: [] });
    expect(read(live, "/cloud-nodes/n-main/devices/d-side").body.partition).toEqual([
      { id: "p-east", name: "East", default: false },
    ]);
    refuse(live, { method: "PUT", path: "/partitions/p-east", body: { name: "Default", users: [] } }, 409);
    refuse(live, { method: "PUT", path: "/partitions/p-nope", body: { name: "X", users: [] } }, 404);
  });

  test("PUT keeps the default flag of the default partition", () => {
    const live = liveOf();
    accept(live, { method: "PUT", path: "/partitions/p-default", body: { name: "Main", users: ["u-1"] } }, 204);
    expect(read(live, "/partitions/p-default").body).toEqual({
      id: "p-default",
      name: "Main",
      users: ["u-1"],
      default: true,
    });
  });

  test("DELETE: a partition with holders, groups, floor groups or devices → 409 naming each; an empty one → 204", () => {
    const live = liveOf();
    expect(refuse(live, { method: "DELETE", path: "/partitions/p-east" }, 409).paths).toEqual([
      "holders.2.partition",
      "groups.1.partition",
      "devices.5.partition.0",
    ]);
    expect(refuse(live, { method: "DELETE", path: "/partitions/p-default" }, 409).paths).toEqual([
      "partitions.0.default",
    ]); // L7
    const r = accept(live, { method: "POST", path: "/partitions", body: { name: "Temp" } }, 200);
    accept(live, { method: "DELETE", path: `/partitions/${r.id}` }, 204);
    refuse(live, { method: "GET", path: `/partitions/${r.id}` }, 404);
    refuse(live, { method: "DELETE", path: `/partitions/${r.id}` }, 404);
  });

  test("PUT /partitions/{p}/devices overwrites the partition's devices", () => {
    const live = liveOf();
    accept(live, { method: "PUT", path: "/partitions/p-east/devices", body: { devices: ["d-front", "d-fan"] } }, 204);
    expect(partitionsOf(live, "d-side")).toEqual([]);
    expect(partitionsOf(live, "d-front")).toEqual(["p-east"]);
    expect(read(live, "/cloud-nodes/n-main/devices/d-fan").body.partition).toEqual([
      { id: "p-east", name: "East Wing", default: false },
    ]);
    // a device may be in several partitions: adding it to another keeps the first
    accept(live, { method: "PUT", path: "/partitions/p-default/devices", body: { devices: ["d-front"] } }, 204);
    expect(partitionsOf(live, "d-front")).toEqual(["p-east", "p-default"]);
    expect(refuse(live, { method: "PUT", path: "/partitions/p-east/devices", body: {} }, 400).paths).toEqual([
      "body.devices",
    ]);
    expect(
      refuse(live, { method: "PUT", path: "/partitions/p-east/devices", body: { devices: ["d-front", "d-nope"] } }, 400)
        .paths,
    ).toEqual(["body.devices.1"]);
    refuse(live, { method: "PUT", path: "/partitions/p-nope/devices", body: { devices: [] } }, 404);
  });

  test("DELETE /partitions/{p}/devices/{d}: 204, then 404 when the device is not in it", () => {
    const live = liveOf();
    accept(live, { method: "DELETE", path: "/partitions/p-east/devices/d-side" }, 204);
    expect(partitionsOf(live, "d-side")).toEqual([]);
    refuse(live, { method: "DELETE", path: "/partitions/p-east/devices/d-side" }, 404);
    refuse(live, { method: "DELETE", path: "/partitions/p-east/devices/d-nope" }, 404);
    // now only the holder and the group keep p-east
    expect(refuse(live, { method: "DELETE", path: "/partitions/p-east" }, 409).paths).toEqual([
      "holders.2.partition",
      "groups.1.partition",
    ]);
  });
});

describe("floor groups", () => {
  const FG = { name: "Roof", readerPort: "d-lift", floors: ["d-floor-2"] };

  test("POST 200 {id}; the partition defaults to the default partition; reads back with partial devices", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/floor_groups", body: FG }, 200);
    expect(read(live, `/floor_groups/${r.id}`).body).toEqual({
      id: r.id,
      name: "Roof",
      partition: "p-default",
      readerPort: {
        id: "d-lift",
        name: "Lift",
        cloudNode: { id: "n-main", serialNumber: "SN-0001", name: "Main Gateway" },
      },
      floors: [{ id: "d-floor-2", name: "Floor 2", type: "floorRelay" }],
    });
    const n = accept(
      live,
      { method: "POST", path: "/floor_groups", body: { ...FG, name: "Roof 2", partition: null } },
      200,
    );
    expect(read(live, `/floor_groups/${n.id}`).body.partition).toBeNull();
  });

  test("name, readerPort and floors are required; name ≤ 70 and unique (409); at least one floor", () => {
    const live = liveOf();
    expect(refuse(live, { method: "POST", path: "/floor_groups", body: {} }, 400).paths.sort()).toEqual([
      "body.floors",
      "body.name",
      "body.readerPort",
    ]);
    expect(
      refuse(live, { method: "POST", path: "/floor_groups", body: { ...FG, name: "f".repeat(71) } }, 400).paths,
    ).toEqual(["body.name"]);
    expect(refuse(live, { method: "POST", path: "/floor_groups", body: { ...FG, floors: [] } }, 400).paths).toEqual([
      "body.floors",
    ]);
    expect(
      refuse(live, { method: "POST", path: "/floor_groups", body: { ...FG, name: "Low Floors" } }, 409).issues[0]!.code,
    ).toBe("duplicateName");
  });

  test("readerPort is an elevator reader, floors are floor relays, all known → else 400", () => {
    const live = liveOf();
    const at = (body: object) =>
      refuse(live, { method: "POST", path: "/floor_groups", body: { ...FG, ...body } }, 400).issues.map((i) => [
        i.code,
        i.path.join("."),
      ]);
    expect(at({ readerPort: "d-front" })).toEqual([["invalidReference", "body.readerPort"]]);
    expect(at({ floors: ["d-floor-2", "d-fan"] })).toEqual([["invalidReference", "body.floors.1"]]);
    expect(at({ floors: ["d-nope"] })).toEqual([["unknownReference", "body.floors.0"]]);
    expect(at({ floors: ["d-floor-2", "d-floor-2"] })).toEqual([["invalid", "body.floors"]]);
    expect(at({ partition: "p-nope" })).toEqual([["unknownReference", "body.partition"]]);
  });

  test("PUT takes the same body (204) and changes what an elevator rule opens", () => {
    const live = liveOf();
    expect(scan(live, "d-lift", 1002, 20)).toMatchObject({ outcome: "allowed", floors: ["d-floor-1"] });
    accept(
      live,
      {
        method: "PUT",
        path: "/floor_groups/f-low",
        body: { name: "Low Floors", readerPort: "d-lift", floors: ["d-floor-1", "d-floor-2"] },
      },
      204,
    );
    expect(scan(live, "d-lift", 1002, 20)).toMatchObject({ outcome: "allowed", floors: ["d-floor-1", "d-floor-2"] });
    expect(read(live, "/floor_groups/f-low").body.partition).toBe("p-default");
    expect(
      refuse(live, { method: "PUT", path: "/floor_groups/f-low", body: { name: "Low Floors" } }, 400).paths.sort(),
    ).toEqual(["body.floors", "body.readerPort"]);
    refuse(live, { method: "PUT", path: "/floor_groups/f-nope", body: FG }, 404);
  });

  test("DELETE: a floor group that elevator rules open → 409 naming each; else 204", () => {
    const live = liveOf();
    expect(refuse(live, { method: "DELETE", path: "/floor_groups/f-low" }, 409).paths).toEqual([
      "rules.1.floorGroups.0",
    ]);
    accept(live, { method: "DELETE", path: "/floor_groups/f-high" }, 204);
    refuse(live, { method: "GET", path: "/floor_groups/f-high" }, 404);
    refuse(live, { method: "DELETE", path: "/floor_groups/f-high" }, 404);
    // with the floor group gone, its floor relay can be deleted
    accept(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-floor-2" }, 204);
  });
});
