// docs/semantics.md section L (the live system): one test named after each line.
import { describe, expect, test } from "vitest";
import { AT, NOW, accept, building, liveOf, read, refuse } from "./fixture.js";

const DEVICE_UPDATE = {
  name: "Fan",
  type: "ioDevice",
  publicIcon: "fan",
  connection: "x-usb",
  port: 2,
  delay: 0,
  dwell: 30,
  dps: false,
  rex: false,
  autoOpenAfterFirstAllow: false,
  authenticationPolicy: null,
};

describe("L — the live system", () => {
  test("L1 PUT of a cloud node, connection, device or floor group replaces its writable fields: omitted ones take their create defaults", () => {
    const live = liveOf();
    const custom = {
      id: "site-16",
      min_input_bits: 16,
      max_input_bits: 16,
      layout: { cardNumber: { offset: 0, length: 12 } },
    };
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main",
        body: { name: "Main Gateway", killTimer: 600, cardFormat: [custom] },
      },
      204,
    );
    accept(live, { method: "PUT", path: "/cloud-nodes/n-main", body: { name: "Main Gateway" } }, 204);
    expect(read(live, "/cloud-nodes/n-main").body).toMatchObject({
      killTimer: 259_200,
      serialNumber: null,
      description: null,
      cardFormat: [{ id: "H10301" }],
      created: null,
    });
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main/devices/d-fan",
        body: { ...DEVICE_UPDATE, inputTypes: ["wiegand"], readerType: "red" },
      },
      204,
    );
    accept(live, { method: "PUT", path: "/cloud-nodes/n-main/devices/d-fan", body: DEVICE_UPDATE }, 204);
    expect(read(live, "/cloud-nodes/n-main/devices/d-fan").body).toMatchObject({
      inputTypes: ["wiegand", "unencryptedOsdp", "encryptedOsdp"],
      readerType: "standard",
    });
    accept(
      live,
      {
        method: "PUT",
        path: "/floor_groups/f-high",
        body: { name: "High Floors", readerPort: "d-lift", floors: ["d-floor-2"] },
      },
      204,
    );
    expect(read(live, "/floor_groups/f-high").body.partition).toBe("p-default");
    // what the route does not write is kept: the device's partitions, the connection's network settings
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main/devices/d-side",
        body: { ...DEVICE_UPDATE, name: "Side Gate", type: "primaryReader", publicIcon: "swingingGate", port: 1 },
      },
      204,
    );
    expect(read(live, "/cloud-nodes/n-main/devices/d-side").body.partition).toEqual([
      { id: "p-east", name: "East Wing", default: false },
    ]);
    accept(
      live,
      {
        method: "POST",
        path: "/cloud-nodes/n-main/connections/x-eth/configure",
        body: { dhcp: false, netmask: "255.0.0.0" },
      },
      204,
    );
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main/connections/x-eth",
        body: { name: "Controller A", type: "ethernet", ipaddress: "10.0.0.5", port: 4000, manufacturer: "VENDOR_A" },
      },
      204,
    );
    expect(read(live, "/cloud-nodes/n-main/connections/x-eth").body).toMatchObject({
      dhcp: false,
      netmask: "255.0.0.0",
      protocol: "IPv6",
    });
  });

  test("L2 PUT of a holder keeps email and customFields when absent (null clears them); groups and credentials change only through their own routes (HS5: in the body they are 400)", () => {
    const live = liveOf();
    const body = {
      firstName: "Ann",
      lastName: "Lee",
      partition: null,
      enabled: true,
      activeDate: null,
      expireDate: null,
      pin: "1234",
      duressPin: null,
    };
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-ann", body: { ...body, groups: [], credentials: [] } }, 400)
        .paths,
    ).toEqual(["body.groups", "body.credentials"]);
    accept(live, { method: "PUT", path: "/holders/h-ann", body }, 204);
    const h = read(live, "/holders/h-ann").body;
    expect(h.email).toBe("ann@example.com");
    expect(h.groups.map((g: { id: string }) => g.id)).toEqual(["g-staff"]);
    expect(h.credentials.map((c: { id: string }) => c.id)).toEqual(["c-ann"]);
    accept(live, { method: "PUT", path: "/holders/h-ann", body: { ...body, email: null } }, 204);
    expect(read(live, "/holders/h-ann").body.email).toBeNull();
  });

  test("L3 a digital credential is created Pending without a number; ★ POST …/activate sets number and model name once", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/holders/h-cy/credentials", body: { types: ["touch"] } }, 201);
    expect(read(live, `/holders/h-cy/credentials/${r.id}`).body).toMatchObject({
      credentialNumber: null,
      facilityCode: null,
      description: "Pending",
    });
    accept(
      live,
      {
        method: "POST",
        path: `/holders/h-cy/credentials/${r.id}/activate`,
        body: { credentialNumber: 8001, description: "Galaxy S24" },
      },
      204,
    );
    expect(read(live, `/holders/h-cy/credentials/${r.id}`).body).toMatchObject({
      credentialNumber: 8001,
      description: "Galaxy S24",
    });
    refuse(
      live,
      {
        method: "POST",
        path: `/holders/h-cy/credentials/${r.id}/activate`,
        body: { credentialNumber: 8002, description: "Galaxy S24" },
      },
      409,
    );
  });

  test("L4 search: unquoted is a case-insensitive substring; quoted is a case-insensitive whole value", () => {
    const live = liveOf();
    expect(read(live, "/holders?search=LEE").body.map((h: { id: string }) => h.id)).toEqual(["h-ann"]);
    expect(read(live, `/holders?search=${encodeURIComponent('"LEE"')}`).body.map((h: { id: string }) => h.id)).toEqual([
      "h-ann",
    ]);
    expect(read(live, `/holders?search=${encodeURIComponent('"Le"')}`).total).toBe(0);
    expect(read(live, "/groups?ids=g-staff, g-night").body.map((g: { id: string }) => g.id)).toEqual([
      "g-night",
      "g-staff",
    ]);
  });

  test("L5 page ≥ 0 and per_page 1…100 are whole numbers, else 400; a page past the end is empty with the total", () => {
    const live = liveOf();
    expect(read(live, "/holders?page=7")).toMatchObject({ body: [], total: 3 });
    expect(refuse(live, { method: "GET", path: "/holders?per_page=1e2" }, 400).paths).toEqual(["query.per_page"]);
  });

  test("L6 adding an existing membership is 204 with no patches; removing a missing one is 404", () => {
    const live = liveOf();
    expect(accept(live, { method: "PUT", path: "/holders/h-ann/groups/g-staff" }, 204).patches).toEqual([]);
    refuse(live, { method: "DELETE", path: "/holders/h-ann/groups/g-night" }, 404);
  });

  test("L7 the default partition cannot be deleted, keeps its flag on PUT, and no create makes another", () => {
    const input = building();
    input.groups = (input.groups as { partition?: string }[]).map((g) => ({ ...g, partition: null }));
    input.floorGroups = (input.floorGroups as object[]).map((f) => ({ ...f, partition: null }));
    const live = liveOf(input);
    const r = refuse(live, { method: "DELETE", path: "/partitions/p-default" }, 409);
    expect(r.paths).toEqual(["partitions.0.default"]);
    accept(
      live,
      { method: "PUT", path: "/partitions/p-default", body: { name: "Everyone", users: null, default: false } },
      204,
    );
    expect(read(live, "/partitions/p-default").body.default).toBe(true);
    const p = accept(live, { method: "POST", path: "/partitions", body: { name: "Other", default: true } }, 200);
    // Answered only on the default partition (L24): another carries no `default`.
    expect(read(live, `/partitions/${p.id}`).body).not.toHaveProperty("default");
    expect(live.snapshot.partitions.find((x) => x.id === p.id)!.default).toBe(false);
  });

  test("L8 a floor group's partition defaults to the system's default partition; null means none; without a default partition, none", () => {
    const live = liveOf();
    const fg = { name: "Roof", readerPort: "d-lift", floors: ["d-floor-2"] };
    expect(
      read(live, `/floor_groups/${accept(live, { method: "POST", path: "/floor_groups", body: fg }, 200).id}`).body
        .partition,
    ).toBe("p-default");
    expect(
      read(
        live,
        `/floor_groups/${accept(live, { method: "POST", path: "/floor_groups", body: { ...fg, name: "Roof 2", partition: null } }, 200).id}`,
      ).body.partition,
    ).toBeNull();
    const input = building();
    input.partitions = [{ id: "p-east", name: "East Wing" }];
    input.groups = (input.groups as object[]).map((g) => ({ ...g, partition: null }));
    input.floorGroups = (input.floorGroups as object[]).map((f) => ({ ...f, partition: null }));
    const bare = liveOf(input);
    expect(
      read(bare, `/floor_groups/${accept(bare, { method: "POST", path: "/floor_groups", body: fg }, 200).id}`).body
        .partition,
    ).toBeNull();
  });

  test("L9 a group's partition is optional on create (none) and required on update (null allowed)", () => {
    const live = liveOf();
    const g = accept(live, { method: "POST", path: "/groups", body: { name: "Temps" } }, 200);
    expect(read(live, `/groups/${g.id}`).body.partition).toBeNull();
    expect(refuse(live, { method: "PUT", path: `/groups/${g.id}`, body: { name: "Temps" } }, 400).paths).toEqual([
      "body.partition",
    ]);
  });

  test("L10 configure network on a connection that is not VENDOR_A (usb included) is a 409 conflict", () => {
    const live = liveOf();
    expect(
      refuse(
        live,
        { method: "POST", path: "/cloud-nodes/n-main/connections/x-usb/configure", body: { dhcp: true } },
        409,
      ).paths,
    ).toEqual(["manufacturer"]);
  });

  test("L11 an unknown route is 404 at `path`; a known path with another method is 405 at `method`, naming the allowed methods in the order GET, POST, PUT, DELETE", () => {
    const live = liveOf();
    expect(refuse(live, { method: "GET", path: "/nope" }, 404).paths).toEqual(["path"]);
    expect(refuse(live, { method: "POST", path: "/groups/g-staff" }, 405).issues[0]!.message).toBe(
      "/groups/g-staff takes GET, PUT, DELETE, not POST.",
    );
  });

  test("L12 ★ rules: POST /rules is 201 {id}; PUT and DELETE /rules/{rule_id} are 204", () => {
    const live = liveOf();
    const r = accept(
      live,
      {
        method: "POST",
        path: "/rules",
        body: {
          type: "door",
          groupId: "g-empty",
          devices: ["d-fan"],
          startTime: "08:00:00",
          stopTime: "17:00:00",
          recurring: ["Mon"],
        },
      },
      201,
    );
    accept(live, { method: "DELETE", path: `/rules/${r.id}` }, 204);
  });

  test("L13 ★ RSOP takes an optional `at` query (R2 instants); without it, the live system's clock", () => {
    const live = liveOf();
    const body = read(live, "/rsop/holders?ids=h-ann").body;
    expect(body).toEqual(live.engine.rsop(["h-ann"], { at: NOW }));
    expect(Date.parse(body.date)).toBe(NOW);
    expect(read(live, `/rsop/holders?ids=h-ann&at=${AT}`).body).toEqual(live.engine.rsop(["h-ann"], { at: AT }));
    expect(
      refuse(live, { method: "GET", path: "/rsop/holders?ids=h-ann&at=yesterday" }, 400).issues.length,
    ).toBeGreaterThan(0);
  });

  test("L14 snapshot problems in the written entity are reported at body.<field>; the other party of a conflict by snapshot path", () => {
    const live = liveOf();
    const r = refuse(
      live,
      {
        method: "POST",
        path: "/holders",
        body: {
          firstName: "Dee",
          lastName: "Ng",
          groups: ["g-staff", "g-x"],
          credentials: [{ types: ["card"], credentialNumber: 1002 }],
        },
      },
      409,
    );
    expect(r.issues.map((i) => [i.code, i.path.join(".")])).toEqual([
      ["unknownReference", "body.groups.1"],
      ["duplicateCredentialNumber", "body.credentials.0.credentialNumber"],
    ]);
    expect(r.issues[1]!.message).toContain("holders[1].credentials[0]");
    const moved = refuse(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main/devices/d-fan",
        body: { ...DEVICE_UPDATE, connection: "x-eth", port: 1 },
      },
      409,
    );
    expect(moved.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["portInUse", "body.port"]]);
    expect(moved.issues[0]!.message).toContain("devices[0]");
    // the written entity may come first in the snapshot: the conflict is still reported at the body
    const front = {
      ...DEVICE_UPDATE,
      name: "Front Door",
      type: "primaryReader",
      publicIcon: "swingingDoor",
      connection: "x-eth",
      port: 1,
    };
    const renamed = refuse(
      live,
      { method: "PUT", path: "/cloud-nodes/n-main/devices/d-front", body: { ...front, name: "Fan" } },
      409,
    );
    expect(renamed.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["duplicateName", "body.name"]]);
    expect(renamed.issues[0]!.message).toBe('The name "Fan" is already used by devices[6].');
    const ported = refuse(
      live,
      { method: "PUT", path: "/cloud-nodes/n-main/devices/d-front", body: { ...front, connection: "x-usb", port: 2 } },
      409,
    );
    expect(ported.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["portInUse", "body.port"]]);
    expect(ported.issues[0]!.message).toBe('Port 2 of connection "x-usb" is already used by devices[6].');
    const pending = accept(
      live,
      { method: "POST", path: "/holders/h-ann/credentials", body: { types: ["token"] } },
      201,
    );
    const number = refuse(
      live,
      {
        method: "POST",
        path: `/holders/h-ann/credentials/${pending.id}/activate`,
        body: { credentialNumber: 5001, description: "Pixel" },
      },
      409,
    );
    expect(number.issues.map((i) => [i.code, i.path.join(".")])).toEqual([
      ["duplicateCredentialNumber", "body.credentialNumber"],
    ]);
    expect(number.issues[0]!.message).toContain("holders[1].credentials[1]");
    // a problem outside the written entity keeps its snapshot path: the additional reader of a door made an ioDevice
    const demoted = refuse(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main/devices/d-front",
        body: { ...front, type: "ioDevice", publicIcon: "light" },
      },
      400,
    );
    expect(demoted.issues.map((i) => [i.code, i.path.join(".")])).toEqual([
      ["invalidReference", "devices.1.primaryReader"],
    ]);
  });

  test("L15 include values are checked per list; partition becomes {id, name}; rules, holders and devices are added by id", () => {
    const live = liveOf();
    expect(read(live, "/holders?search=annand&include=partition").body[0].partition).toEqual({
      id: "p-east",
      name: "East Wing",
    });
    expect(read(live, "/groups?ids=g-staff&include=rules").body[0].rules.map((r: { id: string }) => r.id)).toEqual([
      "r-staff-door",
    ]);
    expect(read(live, "/groups?ids=g-staff&include=holders").body[0].holders.map((h: { id: string }) => h.id)).toEqual([
      "h-ann",
      "h-bob",
    ]);
    expect(read(live, "/partitions?search=east&include=devices").body[0].devices).toEqual([
      { id: "d-side", name: "Side Gate", type: "primaryReader" },
    ]);
    expect(refuse(live, { method: "GET", path: "/groups?include=everything" }, 400).issues[0]!.message).toBe(
      'Unknown include "everything": use holders, partition, rules.',
    );
    expect(read(live, "/partitions?search=east&include=attributes").body[0].attributes).toEqual([]);
    accept(
      live,
      { method: "POST", path: "/partitions/p-east/custom-fields/single", body: { id: "desk", type: "string" } },
      200,
    );
    expect(read(live, "/partitions?search=east&include=attributes").body[0].attributes).toEqual([
      { id: "desk", type: "string", displayName: "desk", required: false, visibility: "visible" },
    ]);
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({});
  });

  test("L17 custom fields: create 200 {id}, read and list without partition, PUT replaces (path id wins), DELETE, POST /all per partition; 404; literal routes win", () => {
    const live = liveOf();
    const base = "/partitions/p-east/custom-fields";
    expect(
      accept(
        live,
        {
          method: "POST",
          path: `${base}/single`,
          body: { id: "desk", type: "string", displayName: "Desk", required: false },
        },
        200,
      ).id,
    ).toBe("desk");
    expect(
      refuse(live, { method: "POST", path: `${base}/single`, body: { id: "desk", type: "string" } }, 409).paths,
    ).toEqual(["body.id"]);
    accept(
      live,
      { method: "POST", path: "/partitions/p-default/custom-fields/single", body: { id: "desk", type: "boolean" } },
      200,
    );
    accept(
      live,
      { method: "PUT", path: `${base}/desk`, body: { id: "renamed", type: "number", partition: "p-default" } },
      204,
    );
    expect(read(live, `${base}/desk`).body).toEqual({
      id: "desk",
      type: "number",
      displayName: "desk",
      required: false,
      visibility: "visible",
    });
    expect(read(live, "/partitions/p-default/custom-fields/desk").body.type).toBe("boolean");
    accept(
      live,
      {
        method: "POST",
        path: `${base}/all`,
        body: [
          { id: "b", type: "boolean" },
          { id: "a", type: "string" },
        ],
      },
      204,
    );
    const list = read(live, base);
    expect([list.body.map((d: { id: string }) => d.id), list.total]).toEqual([["a", "b"], 2]);
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: `${base}/all`,
          body: [
            { id: "a", type: "string" },
            { id: "a", type: "string" },
          ],
        },
        409,
      ).paths,
    ).toEqual(["body.1.id"]);
    accept(live, { method: "DELETE", path: `${base}/a` }, 204);
    refuse(live, { method: "GET", path: `${base}/a` }, 404);
    refuse(live, { method: "GET", path: "/partitions/p-nope/custom-fields" }, 404);
    refuse(live, { method: "GET", path: `${base}/single` }, 405);
    expect(read(live, "/partitions/p-default/custom-fields").total).toBe(1);
  });

  test("L18 a definition change values no longer fit is 409 at each holder value; deletes take the values; holder writes are checked; a partition with fields is not deleted", () => {
    const live = liveOf();
    const base = "/partitions/p-east/custom-fields";
    accept(live, { method: "POST", path: `${base}/single`, body: { id: "level", type: "number", max: 5 } }, 200);
    const cy = {
      firstName: "Cy",
      lastName: "Annand",
      partition: "p-east",
      enabled: true,
      activeDate: null,
      expireDate: null,
      pin: null,
      duressPin: null,
    };
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-cy", body: { ...cy, customFields: { level: 6 } } }, 400).paths,
    ).toEqual(["body.customFields.level"]);
    accept(live, { method: "PUT", path: "/holders/h-cy", body: { ...cy, customFields: { level: 4 } } }, 204);
    expect(
      refuse(live, { method: "PUT", path: `${base}/level`, body: { type: "number", max: 3 } }, 409).issues,
    ).toEqual([
      {
        code: "conflict",
        path: ["holders", 2, "customFields", "level"],
        message: 'Holder "h-cy"\'s value does not fit the new definition: Must be at most 3.',
      },
    ]);
    expect(
      refuse(
        live,
        { method: "POST", path: `${base}/single`, body: { id: "desk", type: "string", required: true } },
        409,
      ).paths,
    ).toEqual(["holders.2.customFields.desk"]);
    // Moving a holder whose kept values have no field in the new partition.
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-cy", body: { ...cy, partition: "p-default" } }, 400).paths,
    ).toEqual(["body.customFields.level"]);
    expect(refuse(live, { method: "DELETE", path: "/partitions/p-east" }, 409).paths).toContain(
      "customFields.0.partition",
    );
    accept(live, { method: "DELETE", path: `${base}/level` }, 204);
    expect(read(live, "/holders/h-cy").body.customFields).toEqual({});
  });

  test("L16 a digital credential's create answers {id} only; sendEmail is not stored; activation takes that id", () => {
    const live = liveOf();
    const r = accept(
      live,
      { method: "POST", path: "/holders/h-cy/credentials", body: { types: ["token"], sendEmail: false } },
      201,
    );
    expect(Object.keys(r).sort()).toEqual(["id", "inversePatches", "ok", "patches", "status"]);
    expect(Object.keys(read(live, `/holders/h-cy/credentials/${r.id}`).body).sort()).toEqual([
      "credentialNumber",
      "description",
      "facilityCode",
      "holderId",
      "id",
      "types",
    ]);
    accept(
      live,
      {
        method: "POST",
        path: `/holders/h-cy/credentials/${r.id}/activate`,
        body: { credentialNumber: 8100, description: "Pixel 9" },
      },
      204,
    );
  });
});
