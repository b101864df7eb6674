// The 1.0 panel live system, one scenario per seed 002 §4 write route (and the ★ ones of SPEC §9):
// status, effect on the panel and on decisions, required fields, defaults, limits and conflicts.
// Semantics lines LP1–LP10 (docs/semantics.md) are pinned by the tests named after them.
import { applyPatches } from "immer";
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { createPanelLiveSystem } from "../../src/legacy1/index.js";
import { loadPanelEngineOrThrow } from "../../src/legacy1/panelEngine.js";
import { AT, accept, panelLive, read, refuse, scan, smallPanel } from "./panelFixture.js";
import { encodeWiegand } from "../../src/model/index.js";

const smallIds = (list: readonly { id: number }[]): number[] => list.map((x) => x.id);

describe("people", () => {
  test("LP1 create takes the next free integer and answers 200 {id}; defaults enabled true, partition 0, no groups or credentials", () => {
    const live = panelLive();
    const r = accept(
      live,
      { method: "POST", path: "/api/persons", body: { firstName: "Cy", lastName: "Doe", email: "cy@example.com" } },
      200,
    );
    expect(r.id).toBe(3);
    const p = read(live, "/api/persons/3").body;
    expect(p).toMatchObject({
      id: 3,
      firstName: "Cy",
      lastName: "Doe",
      email: "cy@example.com",
      enabled: true,
      partition: 0,
      groups: [],
      credentials: [],
      metadata: null,
    });
    // The largest id in use decides, not the count: after deleting 1, the next person is still 4.
    accept(live, { method: "DELETE", path: "/api/persons/1" }, 204);
    expect(
      accept(live, { method: "POST", path: "/api/persons", body: { firstName: "Di", lastName: "Eve" } }, 200).id,
    ).toBe(4);
    // LP1: the id of a deleted largest entity is never given again (an integration would take the new person for the old).
    accept(live, { method: "DELETE", path: "/api/persons/4" }, 204);
    expect(
      accept(live, { method: "POST", path: "/api/persons", body: { firstName: "Ed", lastName: "Fox" } }, 200).id,
    ).toBe(5);
  });

  test("create requires firstName and lastName and reports every problem at its body path", () => {
    const live = panelLive();
    expect(
      refuse(live, { method: "POST", path: "/api/persons", body: { email: "x@example.com" } }, 400).map((i) =>
        i.path.join("."),
      ),
    ).toEqual(["body.firstName", "body.lastName"]);
    const issues = refuse(
      live,
      { method: "POST", path: "/api/persons", body: { firstName: "x".repeat(36), lastName: "Doe", pin: "12a" } },
      400,
    );
    expect(issues.map((i) => i.path.join("."))).toEqual(["body.firstName", "body.pin"]);
    refuse(live, { method: "POST", path: "/api/persons", body: "Ann" }, 400);
  });

  test("metadata is limited to 10 KB on writes (seed 002 §8)", () => {
    const live = panelLive();
    const big = { blob: "x".repeat(10 * 1024) };
    const issues = refuse(
      live,
      { method: "POST", path: "/api/persons", body: { firstName: "Cy", lastName: "Doe", metadata: big } },
      400,
    );
    expect(issues[0]!.path).toEqual(["body", "metadata"]);
    refuse(live, { method: "POST", path: "/api/groups", body: { name: "Big", metadata: big } }, 400);
    refuse(
      live,
      { method: "POST", path: "/api/devices", body: { name: "Big", connection: 1, port: 9, metadata: big } },
      400,
    );
    const fits = { blob: "x".repeat(10 * 1024 - 20) };
    accept(live, { method: "POST", path: "/api/groups", body: { name: "Fits", metadata: fits } }, 200);
  });

  test("LP11 metadata is at most 10,240 bytes of UTF-8 JSON, on every create and update that gives it (persons, groups, devices)", () => {
    const live = panelLive();
    // `{"blob":"…"}` is 11 bytes around the text: 10,229 ASCII characters make exactly 10,240 bytes.
    const exact = { blob: "x".repeat(10_240 - 11) };
    const over = { blob: "x".repeat(10_240 - 10) };
    // "é" is two bytes in UTF-8: 5,115 of them are 10,230 bytes of text, 10,241 in all.
    const wide = { blob: "é".repeat(5_115) };
    const tooBig = [{ code: "invalid", path: ["body", "metadata"], message: "Must be at most 10 KB as JSON." }];
    const person = {
      firstName: "Ann",
      lastName: "Lee",
      partition: 0,
      enabled: true,
      activeDate: null,
      expireDate: null,
      pin: "2468",
      duressPin: null,
    };
    const device = {
      name: "Back door",
      connection: 1,
      port: 3,
      type: "primaryReader",
      publicIcon: "swingingDoor",
      delay: 0,
      dwell: 30,
      dps: false,
      rex: false,
      autoOpenAfterFirstAllow: false,
      authenticationPolicy: null,
    };
    const writes = [
      { path: "/api/persons/1", body: person, read: "/api/persons/1" },
      { path: "/api/groups/2", body: { name: "Night", partition: 0 }, read: "/api/groups/2" },
      { path: "/api/devices/3", body: device, read: "/api/devices/3" },
    ];
    for (const w of writes) {
      for (const metadata of [over, wide])
        expect(refuse(live, { method: "PUT", path: w.path, body: { ...w.body, metadata } }, 400), w.path).toEqual(
          tooBig,
        );
      accept(live, { method: "PUT", path: w.path, body: { ...w.body, metadata: exact } }, 204);
      expect(read(live, w.read).body.metadata, w.path).toEqual(exact);
    }
    // Creates: the same limit, and the exact size is stored.
    expect(refuse(live, { method: "POST", path: "/api/groups", body: { name: "Wide", metadata: wide } }, 400)).toEqual(
      tooBig,
    );
    const g = accept(live, { method: "POST", path: "/api/groups", body: { name: "Exact", metadata: exact } }, 200).id;
    expect(read(live, `/api/groups/${g}`).body.metadata).toEqual(exact);
  });

  test("LP2 update requires the seed's eight fields; optional fields not given keep their value", () => {
    const live = panelLive();
    const issues = refuse(
      live,
      { method: "PUT", path: "/api/persons/1", body: { firstName: "Ann", lastName: "Lee" } },
      400,
    );
    expect(issues.map((i) => i.path.join("."))).toEqual([
      "body.partition",
      "body.enabled",
      "body.activeDate",
      "body.expireDate",
      "body.pin",
      "body.duressPin",
    ]);
    const body = {
      firstName: "Ann",
      lastName: "Lee",
      partition: 0,
      enabled: false,
      activeDate: null,
      expireDate: null,
      pin: null,
      duressPin: null,
    };
    expect(scan(live, 1, 1001).outcome).toBe("allowed");
    accept(live, { method: "PUT", path: "/api/persons/1", body }, 204);
    const p = read(live, "/api/persons/1").body;
    expect(p).toMatchObject({
      enabled: false,
      pin: null,
      customAttributes: { badge: "B-1" },
      groups: [{ id: 1, name: "Staff", partition: 0, metadata: { source: "HR" } }],
    });
    expect(scan(live, 1, 1001)).toMatchObject({ outcome: "denied", holderId: 1 });
    refuse(live, { method: "PUT", path: "/api/persons/99", body }, 404);
    refuse(live, { method: "PUT", path: "/api/persons/abc", body }, 404);
  });

  test("delete takes the person's credentials and memberships; the card becomes unknown", () => {
    const live = panelLive();
    accept(live, { method: "DELETE", path: "/api/persons/1" }, 204);
    expect(live.snapshot.persons.map((p) => p.id)).toEqual([2]);
    expect(scan(live, 1, 1001).outcome).toBe("unknown");
    refuse(live, { method: "DELETE", path: "/api/persons/1" }, 404);
  });

  test("LP8 photo: a base64 image data URL becomes the photoUrl; anything else is 400", () => {
    const live = panelLive();
    const url = "data:image/png;base64,iVBORw0KGgo=";
    accept(live, { method: "PUT", path: "/api/persons/1/photo", body: { base64: url } }, 204);
    expect(read(live, "/api/persons/1").body.photoUrl).toBe(url);
    expect(refuse(live, { method: "PUT", path: "/api/persons/1/photo", body: {} }, 400)[0]!.path).toEqual([
      "body",
      "base64",
    ]);
    expect(
      refuse(live, { method: "PUT", path: "/api/persons/1/photo", body: { base64: "http://x/y.png" } }, 400)[0]!.path,
    ).toEqual(["body", "base64"]);
  });
});

describe("credentials ★ and activation", () => {
  test("LP4 a card takes the next credential id of the whole panel and opens doors; numbers are unique (409)", () => {
    const live = panelLive();
    const r = accept(
      live,
      {
        method: "POST",
        path: "/api/persons/1/credentials",
        body: { types: ["card"], credentialNumber: 2002, facilityCode: 17 },
      },
      200,
    );
    expect(r.id).toBe(3);
    expect(scan(live, 1, 2002)).toMatchObject({ outcome: "allowed", holderId: 1, credentialId: 3 });
    expect(read(live, "/api/persons/1/credentials/3").body).toMatchObject({
      id: 3,
      personId: 1,
      credentialNumber: 2002,
    });
    const issues = refuse(
      live,
      {
        method: "POST",
        path: "/api/persons/2/credentials",
        body: { types: ["card"], credentialNumber: 2002, facilityCode: 17 },
      },
      409,
    );
    expect(issues[0]).toMatchObject({ code: "duplicateCredentialNumber", path: ["body", "credentialNumber"] });
    // Activating the earlier credential with a later card's number: the body's conflict, naming the card.
    const act = refuse(
      live,
      {
        method: "POST",
        path: "/api/persons/2/credentials/2/activate",
        body: { credentialNumber: 2002, description: "Pixel 8" },
      },
      409,
    );
    expect(act).toEqual([
      {
        code: "duplicateCredentialNumber",
        path: ["body", "credentialNumber"],
        message:
          "Credential number 2002 is already used by persons[0].credentials[1]; numbers are unique on a cloud node.",
      },
    ]);
    refuse(live, { method: "POST", path: "/api/persons/1/credentials", body: { types: ["card"] } }, 400);
    refuse(live, { method: "POST", path: "/api/persons/1/credentials", body: {} }, 400);
  });

  test("a digital credential is pending until activated (seed 002 §3); a second activation is 409", () => {
    const live = panelLive();
    const id = accept(live, { method: "POST", path: "/api/persons/1/credentials", body: { types: ["touch"] } }, 200).id;
    expect(read(live, `/api/persons/1/credentials/${id}`).body).toMatchObject({
      description: "Pending",
      credentialNumber: null,
    });
    refuse(
      live,
      { method: "POST", path: "/api/persons/1/credentials", body: { types: ["touch"], credentialNumber: 5 } },
      400,
    );
    accept(
      live,
      {
        method: "POST",
        path: "/api/persons/2/credentials/2/activate",
        body: { credentialNumber: 777001, description: "Pixel 8" },
      },
      204,
    );
    expect(live.snapshot.persons[1]!.credentials[0]).toMatchObject({
      credentialNumber: 777001,
      description: "Pixel 8",
    });
    refuse(
      live,
      {
        method: "POST",
        path: "/api/persons/2/credentials/2/activate",
        body: { credentialNumber: 777002, description: "Pixel 8" },
      },
      409,
    );
    refuse(
      live,
      {
        method: "POST",
        path: "/api/persons/1/credentials/1/activate",
        body: { credentialNumber: 1, description: "x" },
      },
      409,
    );
    refuse(
      live,
      {
        method: "POST",
        path: "/api/persons/1/credentials/2/activate",
        body: { credentialNumber: 1, description: "x" },
      },
      404,
    );
  });

  test("update changes a digital credential's types only; delete removes it", () => {
    const live = panelLive();
    accept(live, { method: "PUT", path: "/api/persons/2/credentials/2", body: { types: ["touch", "token"] } }, 204);
    expect(live.snapshot.persons[1]!.credentials[0]!.types).toEqual(["touch", "token"]);
    refuse(live, { method: "PUT", path: "/api/persons/1/credentials/1", body: { types: ["touch"] } }, 400);
    accept(live, { method: "DELETE", path: "/api/persons/1/credentials/1" }, 204);
    expect(scan(live, 1, 1001).outcome).toBe("unknown");
    refuse(live, { method: "DELETE", path: "/api/persons/1/credentials/1" }, 404);
  });
});

describe("groups and memberships", () => {
  test("create: name required, partition defaults to 0, names unique (409 at the snapshot path)", () => {
    const live = panelLive();
    expect(accept(live, { method: "POST", path: "/api/groups", body: { name: "Visitors" } }, 200).id).toBe(3);
    expect(read(live, "/api/groups/3").body).toEqual({ id: 3, name: "Visitors", partition: 0, metadata: null });
    expect(refuse(live, { method: "POST", path: "/api/groups", body: {} }, 400)[0]!.path).toEqual(["body", "name"]);
    const dup = refuse(live, { method: "POST", path: "/api/groups", body: { name: "Staff" } }, 409);
    expect(dup[0]).toMatchObject({ code: "duplicateName", path: ["body", "name"] });
    // L14: renaming the earlier group to a later group's name is the body's conflict too, naming the other party.
    const renamed = refuse(
      live,
      { method: "PUT", path: "/api/groups/1", body: { name: "Visitors", partition: 0 } },
      409,
    );
    expect(renamed).toEqual([
      { code: "duplicateName", path: ["body", "name"], message: 'The name "Visitors" is already used by groups[2].' },
    ]);
    expect(refuse(live, { method: "POST", path: "/api/groups", body: { name: "x".repeat(71) } }, 400)[0]!.path).toEqual(
      ["body", "name"],
    );
  });

  test("update requires name and partition; metadata not given stays", () => {
    const live = panelLive();
    refuse(live, { method: "PUT", path: "/api/groups/1", body: { name: "Team" } }, 400);
    accept(live, { method: "PUT", path: "/api/groups/1", body: { name: "Team", partition: 0 } }, 204);
    expect(read(live, "/api/groups/1").body).toEqual({ id: 1, name: "Team", partition: 0, metadata: { source: "HR" } });
  });

  test("LP6 delete: refused while rules use the group (409 naming each rule); memberships go with it", () => {
    const live = panelLive();
    const issues = refuse(live, { method: "DELETE", path: "/api/groups/1" }, 409);
    expect(issues.map((i) => i.path.join("."))).toEqual(["rules.0.groupId", "rules.1.groupId"]);
    accept(live, { method: "DELETE", path: "/api/groups/2" }, 204);
    expect(live.snapshot.persons[1]!.groups).toEqual([]);
  });

  test("replace a group's members, a person's groups, and remove one membership", () => {
    const live = panelLive();
    accept(live, { method: "PUT", path: "/api/groups/1/persons", body: { persons: [2] } }, 204);
    expect(scan(live, 1, 1001).outcome).toBe("denied");
    expect(read(live, "/api/groups/1/persons").body.map((p: { id: number }) => p.id)).toEqual([2]);
    accept(live, { method: "PUT", path: "/api/persons/1/groups", body: { groups: [2, 1] } }, 204);
    expect(scan(live, 1, 1001).outcome).toBe("allowed");
    expect(read(live, "/api/persons/1/groups").body.map((g: { id: number }) => g.id)).toEqual([1, 2]);
    accept(live, { method: "DELETE", path: "/api/persons/1/groups/1" }, 204);
    expect(scan(live, 1, 1001).outcome).toBe("denied");
    refuse(live, { method: "DELETE", path: "/api/persons/1/groups/1" }, 404);
    expect(
      refuse(live, { method: "PUT", path: "/api/persons/1/groups", body: { groups: [1, 9] } }, 400)[0]!.path,
    ).toEqual(["body", "groups", 1]);
    refuse(live, { method: "PUT", path: "/api/groups/1/persons", body: {} }, 400);
    refuse(live, { method: "PUT", path: "/api/groups/1/persons", body: { persons: ["1"] } }, 400);
  });
});

describe("devices and connections", () => {
  test("device create: name, connection, port required; type and publicIcon defaults; the port must be free", () => {
    const live = panelLive();
    expect(
      refuse(live, { method: "POST", path: "/api/devices", body: { name: "Side" } }, 400).map((i) => i.path.join(".")),
    ).toEqual(["body.connection", "body.port"]);
    expect(
      accept(live, { method: "POST", path: "/api/devices", body: { name: "Side door", connection: 1, port: 4 } }, 200)
        .id,
    ).toBe(7);
    const d = read(live, "/api/devices/7").body;
    expect(d).toMatchObject({ id: 7, type: "primaryReader", publicIcon: "swingingDoor", connection: 1, dwell: 30 });
    expect(
      refuse(live, { method: "POST", path: "/api/devices", body: { name: "Other", connection: 1, port: 4 } }, 409)[0],
    ).toMatchObject({ code: "portInUse", path: ["body", "port"] });
    expect(
      refuse(
        live,
        {
          method: "PUT",
          path: "/api/devices/3",
          body: {
            name: "Back door",
            connection: 1,
            port: 4,
            type: "primaryReader",
            publicIcon: "swingingDoor",
            delay: 0,
            dwell: 30,
            dps: false,
            rex: false,
            autoOpenAfterFirstAllow: false,
            authenticationPolicy: null,
          },
        },
        409,
      ),
    ).toEqual([
      { code: "portInUse", path: ["body", "port"], message: "Port 4 of connection 1 is already used by devices[6]." },
    ]);
    refuse(live, { method: "POST", path: "/api/devices", body: { name: "Other", connection: 9, port: 5 } }, 400);
    refuse(live, { method: "POST", path: "/api/devices", body: { name: "Front door", connection: 1, port: 5 } }, 409);
  });

  test("device ranges and enums as in 2.0 (name ≤ 70, delay 0–9999, dwell 1–9999, propDelay 0–9999, type, publicIcon); every default reads back", () => {
    const live = panelLive();
    const post = (extra: object) => ({
      method: "POST" as const,
      path: "/api/devices",
      body: { name: "Side door", connection: 1, port: 4, ...extra },
    });
    for (const [k, v] of [
      ["name", "n".repeat(71)],
      ["delay", 10_000],
      ["delay", -1],
      ["dwell", 0],
      ["dwell", 10_000],
      ["type", "door"],
      ["publicIcon", "door"],
      ["readerType", "blue"],
    ] as const)
      expect(
        refuse(live, post({ [k]: v }), 400).map((i) => i.path.join(".")),
        `${k}=${v}`,
      ).toEqual([`body.${k}`]);
    expect(
      refuse(live, post({ dps: true, propAlarm: true, propDelay: 10_000 }), 400).map((i) => i.path.join(".")),
    ).toEqual(["body.propDelay"]);
    const id = accept(live, post({}), 200).id;
    expect(read(live, `/api/devices/${id}`).body).toMatchObject({
      type: "primaryReader",
      publicIcon: "swingingDoor",
      inputTypes: ["wiegand", "unencryptedOsdp", "encryptedOsdp"],
      readerType: "standard",
      delay: 0,
      dwell: 30,
      dps: false,
      propAlarm: false,
      propDelay: 0,
      rex: false,
      forcedAlarm: false,
      autoOpenAfterFirstAllow: false,
      authenticationPolicy: null,
      supportBleCredentials: false,
      securedReadsOnly: false,
      metadata: null,
    });
    const edge = accept(
      live,
      post({ name: "n".repeat(70), port: 5, delay: 9999, dwell: 9999, dps: true, propAlarm: true, propDelay: 9999 }),
      200,
    ).id;
    expect(read(live, `/api/devices/${edge}`).body).toMatchObject({ delay: 9999, dwell: 9999, propDelay: 9999 });
  });

  test("device update requires the seed's eleven fields; a rule's device keeps deciding", () => {
    const live = panelLive();
    const body = {
      name: "Front door",
      connection: 1,
      port: 1,
      type: "primaryReader",
      publicIcon: "swingingDoor",
      delay: 0,
      dwell: 10,
      dps: false,
      rex: false,
      autoOpenAfterFirstAllow: false,
      authenticationPolicy: null,
    };
    expect(
      refuse(live, { method: "PUT", path: "/api/devices/1", body: { name: "x", connection: 1, port: 1 } }, 400).length,
    ).toBe(8);
    accept(live, { method: "PUT", path: "/api/devices/1", body: { ...body, dwell: 10 } }, 204);
    expect(read(live, "/api/devices/1").body.dwell).toBe(10);
    expect(scan(live, 1, 1001).outcome).toBe("allowed");
    expect(refuse(live, { method: "PUT", path: "/api/devices/1", body: { ...body, dwell: 0 } }, 400)[0]!.path).toEqual([
      "body",
      "dwell",
    ]);
  });

  test("LP2 device update (L1): an omitted optional field takes its create default; partition, metadata and what the body cannot write are kept", () => {
    const panel = smallPanel();
    panel.devices[2] = {
      ...panel.devices[2],
      readerType: "touch",
      dps: true,
      forcedAlarm: true,
      metadata: { room: "B1" },
      partition: [{ id: 0, name: "Main" }],
      bootloaderVersion: "1.2",
    };
    const live = panelLive(panel);
    const body = {
      name: "Back door",
      connection: 1,
      port: 3,
      type: "primaryReader",
      publicIcon: "swingingDoor",
      delay: 0,
      dwell: 30,
      dps: false,
      rex: false,
      autoOpenAfterFirstAllow: false,
      authenticationPolicy: null,
    };
    accept(live, { method: "PUT", path: "/api/devices/3", body }, 204);
    const d = live.snapshot.devices[2] as Record<string, unknown>;
    expect(d.readerType).toBeUndefined();
    expect(d.forcedAlarm).toBeUndefined();
    expect(read(live, "/api/devices/3").body).toMatchObject({
      forcedAlarm: false,
      metadata: { room: "B1" },
      partition: [{ id: 0, name: "Main" }],
      bootloaderVersion: "1.2",
    });
  });

  test("device delete is refused (409) while rules, floor groups or additional readers use it", () => {
    const live = panelLive();
    expect(refuse(live, { method: "DELETE", path: "/api/devices/1" }, 409).map((i) => i.path.join("."))).toEqual([
      "rules.0.devices.0",
      "devices.1.primaryReader",
    ]);
    expect(refuse(live, { method: "DELETE", path: "/api/devices/5" }, 409).map((i) => i.path.join("."))).toEqual([
      "floorGroups.0.floors.0",
    ]);
    accept(live, { method: "DELETE", path: "/api/devices/3" }, 204);
    refuse(live, { method: "DELETE", path: "/api/devices/3" }, 404);
  });

  test("connections: create (ethernet defaults IPv6 and VENDOR_B), update, delete conflict, configure network for VENDOR_A only", () => {
    const live = panelLive();
    const id = accept(
      live,
      {
        method: "POST",
        path: "/api/connections",
        body: { name: "Annex controller", type: "ethernet", ipaddress: "10.0.0.3", port: 4050 },
      },
      200,
    ).id;
    expect(id).toBe(3);
    expect(read(live, "/api/connections/3").body).toMatchObject({ protocol: "IPv6", manufacturer: "VENDOR_B" });
    expect(
      refuse(
        live,
        { method: "POST", path: "/api/connections", body: { name: "No ip", type: "ethernet", port: 1 } },
        400,
      )[0]!.path,
    ).toEqual(["body", "ipaddress"]);
    refuse(live, { method: "POST", path: "/api/connections", body: { type: "usb" } }, 400);
    accept(
      live,
      {
        method: "PUT",
        path: "/api/connections/3",
        body: { name: "Annex", type: "ethernet", ipaddress: "10.0.0.4", port: 4051, manufacturer: "VENDOR_A" },
      },
      204,
    );
    accept(
      live,
      { method: "POST", path: "/api/connections/3/configure", body: { dhcp: false, netmask: "255.255.255.0" } },
      204,
    );
    expect(read(live, "/api/connections/3").body).toMatchObject({
      dhcp: false,
      netmask: "255.255.255.0",
      ipaddress: "10.0.0.4",
    });
    refuse(live, { method: "POST", path: "/api/connections/1/configure", body: { dhcp: true } }, 409);
    refuse(live, { method: "POST", path: "/api/connections/3/configure", body: {} }, 400);
    expect(refuse(live, { method: "DELETE", path: "/api/connections/1" }, 409).length).toBe(3);
    accept(live, { method: "DELETE", path: "/api/connections/3" }, 204);
  });
});

describe("connections: the 2.0 connection rules (S13, S14)", () => {
  test("S13 a 1.0 connection body follows the 2.0 type rules, at the body's own field names; the resource spells macAddress", () => {
    const live = panelLive();
    const post = (body: object) => ({ method: "POST" as const, path: "/api/connections", body });
    expect(refuse(live, post({ name: "Hub", type: "lockhub" }), 400)).toEqual([
      { code: "invalid", path: ["body", "macaddress"], message: "A lockhub connection needs a macAddress." },
    ]);
    expect(refuse(live, post({ name: "Board", type: "usb" }), 400).map((i) => i.path.join("."))).toEqual(["body.port"]);
    expect(
      refuse(live, post({ name: "GW", type: "wirelessGateway", port: 7 }), 400).map((i) => i.path.join(".")),
    ).toEqual(["body.ipaddress"]);
    expect(refuse(live, post({ name: "Board", type: "usb", port: 2, protocol: "IPv4" }), 400)).toEqual([
      {
        code: "invalid",
        path: ["body", "protocol"],
        message: "protocol is used by ethernet connections only; this is a usb connection.",
      },
    ]);
    const hub = accept(live, post({ name: "Hub", type: "lockhub", macaddress: "00:1B:2C:4A:11:09" }), 200).id;
    const got = read(live, `/api/connections/${hub}`).body;
    expect(got).toMatchObject({ id: hub, name: "Hub", type: "lockhub", macAddress: "00:1B:2C:4A:11:09" });
    expect(got).not.toHaveProperty("macaddress");
    expect(got).not.toHaveProperty("protocol");
    expect(got).not.toHaveProperty("manufacturer");
  });

  test("S13 an ethernet connection a panel lists without protocol or manufacturer reads IPv6 and VENDOR_B, and is no VENDOR_A controller to configure", () => {
    const panel = smallPanel();
    panel.connections.push({ id: 3, name: "Old controller", type: "ethernet", ipaddress: "10.0.0.3", port: 4051 });
    const live = panelLive(panel);
    expect(read(live, "/api/connections/3").body).toMatchObject({ protocol: "IPv6", manufacturer: "VENDOR_B" });
    expect(read(live, "/api/connections").body.find((c: { id: number }) => c.id === 3)).toMatchObject({
      protocol: "IPv6",
      manufacturer: "VENDOR_B",
    });
    expect(
      refuse(live, { method: "POST", path: "/api/connections/3/configure", body: { dhcp: true } }, 409)[0]!.message,
    ).toContain("a VENDOR_B controller");
    // A panel whose lockhub has no MAC address does not load: the same rule as a write.
    const bad = smallPanel();
    bad.connections.push({ id: 3, name: "Hub", type: "lockhub" });
    const r = createPanelLiveSystem(bad);
    expect(r.ok ? [] : r.issues.map((i) => `${i.code} ${i.path.join(".")}`)).toEqual([
      "invalid connections.2.macAddress",
    ]);
  });

  test("S14 a 1.0 lockhub operates at most 64 locks: the 65th device is a 409 at body.connection", () => {
    const live = panelLive();
    const hub = accept(
      live,
      {
        method: "POST",
        path: "/api/connections",
        body: { name: "Hub", type: "lockhub", macaddress: "00:1B:2C:4A:11:09" },
      },
      200,
    ).id;
    const lock = (k: number) => ({
      method: "POST" as const,
      path: "/api/devices",
      body: { name: `Lock ${k}`, type: "ioDevice", publicIcon: "other", connection: hub, port: k },
    });
    expect(live.apply(Array.from({ length: 64 }, (_, k) => lock(k + 1))).ok).toBe(true);
    expect(read(live, "/api/devices?per_page=100").total).toBe(6 + 64);
    expect(refuse(live, lock(65), 409)).toEqual([
      {
        code: "overCapacity",
        path: ["body", "connection"],
        message: `Lockhub "${hub}" has 65 devices on it; a lockhub operates at most 64 locks.`,
      },
    ]);
    accept(live, { method: "DELETE", path: "/api/devices/7" }, 204);
    accept(live, lock(65), 200);
  });
});

describe("custom fields (attributes)", () => {
  test("create, retrieve, update, list custom fields", () => {
    const live = panelLive();
    const r = accept(
      live,
      {
        method: "POST",
        path: "/api/partitions/0/attributes/single",
        body: { id: "shift", type: "string", displayName: "Shift" },
      },
      200,
    );
    expect(r.id).toBe("shift");
    // As 2.0 answers a custom field (L17, LP13): its defaults in effect, no `partition` (the path names it).
    expect(read(live, "/api/partitions/0/attributes/shift").body).toEqual({
      id: "shift",
      type: "string",
      displayName: "Shift",
      required: false,
      visibility: "visible",
    });
    expect(live.snapshot.attributes.find((a) => a.id === "shift")!.partition).toBe(0);
    expect(read(live, "/api/partitions/0/attributes").total).toBe(2);
    refuse(
      live,
      { method: "POST", path: "/api/partitions/0/attributes/single", body: { id: "shift", type: "string" } },
      409,
    );
    refuse(live, { method: "POST", path: "/api/partitions/0/attributes/single", body: { type: "string" } }, 400);
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: "/api/partitions/0/attributes/single",
          body: { id: "x", type: "string", description: "no" },
        },
        400,
      )[0]!.path,
    ).toEqual(["body", "description"]);
    accept(
      live,
      {
        method: "PUT",
        path: "/api/partitions/0/attributes/shift",
        body: { type: "string", displayName: "Work shift" },
      },
      204,
    );
    expect(read(live, "/api/partitions/0/attributes/shift").body.displayName).toBe("Work shift");
    refuse(live, { method: "PUT", path: "/api/partitions/0/attributes/nope", body: { type: "string" } }, 404);
  });

  test("LP10 values are checked against the partition's definitions on person writes; a definition that existing values no longer fit is 409", () => {
    const live = panelLive();
    const person = {
      firstName: "Ann",
      lastName: "Lee",
      partition: 0,
      enabled: true,
      activeDate: null,
      expireDate: null,
      pin: null,
      duressPin: null,
    };
    expect(
      refuse(
        live,
        { method: "PUT", path: "/api/persons/1", body: { ...person, customAttributes: { badge: 5 } } },
        400,
      )[0],
    ).toMatchObject({ path: ["body", "customAttributes", "badge"] });
    expect(
      refuse(
        live,
        { method: "PUT", path: "/api/persons/1", body: { ...person, customAttributes: { nope: "x" } } },
        400,
      )[0],
    ).toMatchObject({ code: "invalidKey", path: ["body", "customAttributes", "nope"] });
    // A new required field that persons of the partition have no value for is a conflict, naming each of them.
    const colour = { id: "colour", type: "enum", values: [{ id: "blue" }, { id: "red" }], required: true };
    const missing = refuse(live, { method: "POST", path: "/api/partitions/0/attributes/single", body: colour }, 409);
    expect(missing.map((i) => [i.code, i.path.join(".")])).toEqual([
      ["conflict", "persons.0.customAttributes.colour"],
      ["conflict", "persons.1.customAttributes.colour"],
    ]);
    accept(
      live,
      { method: "POST", path: "/api/partitions/0/attributes/single", body: { ...colour, required: false } },
      200,
    );
    accept(
      live,
      {
        method: "PUT",
        path: "/api/persons/1",
        body: { ...person, customAttributes: { badge: "B-1", colour: "blue" } },
      },
      204,
    );
    accept(
      live,
      {
        method: "PUT",
        path: "/api/persons/2",
        body: { ...person, firstName: "Bob", lastName: "Roy", customAttributes: { colour: "red" } },
      },
      204,
    );
    accept(live, { method: "PUT", path: "/api/partitions/0/attributes/colour", body: colour }, 204);
    expect(
      refuse(live, { method: "POST", path: "/api/persons", body: { firstName: "Cy", lastName: "Doe" } }, 400)[0],
    ).toMatchObject({ code: "required", path: ["body", "customAttributes", "colour"] });
    refuse(
      live,
      {
        method: "POST",
        path: "/api/persons",
        body: { firstName: "Cy", lastName: "Doe", customAttributes: { colour: "green" } },
      },
      400,
    );
    accept(
      live,
      {
        method: "POST",
        path: "/api/persons",
        body: { firstName: "Cy", lastName: "Doe", customAttributes: { colour: "red" } },
      },
      200,
    );
    // A person update that does not write the values keeps them.
    accept(live, { method: "PUT", path: "/api/persons/1", body: person }, 204);
    expect(live.snapshot.persons[0]!.customAttributes).toEqual({ badge: "B-1", colour: "blue" });
    const unfit = refuse(
      live,
      { method: "PUT", path: "/api/partitions/0/attributes/badge", body: { type: "number" } },
      409,
    );
    expect(unfit.map((i) => i.path.join("."))).toEqual(["persons.0.customAttributes.badge"]);
    expect(
      refuse(
        live,
        { method: "POST", path: "/api/partitions/0/attributes/single", body: { id: "k", type: "bogus" } },
        400,
      )[0]!.path,
    ).toEqual(["body", "type"]);
    expect(
      refuse(
        live,
        { method: "POST", path: "/api/partitions/0/attributes/single", body: { id: "k", type: "enum" } },
        400,
      )[0]!.path,
    ).toEqual(["body", "values"]);
    expect(
      refuse(
        live,
        { method: "POST", path: "/api/partitions/0/attributes/single", body: { id: "k", type: "string", regex: "(" } },
        400,
      )[0]!.path,
    ).toEqual(["body", "regex"]);
    accept(
      live,
      {
        method: "POST",
        path: "/api/partitions/0/attributes/single",
        body: { id: "code", type: "string", regex: "^E[0-9]+$" },
      },
      200,
    );
    refuse(
      live,
      {
        method: "POST",
        path: "/api/persons",
        body: { firstName: "Di", lastName: "Eve", customAttributes: { colour: "red", code: "X1" } },
      },
      400,
    );
    accept(
      live,
      {
        method: "POST",
        path: "/api/persons",
        body: { firstName: "Di", lastName: "Eve", customAttributes: { colour: "red", code: "E1" } },
      },
      200,
    );
  });

  test("LP5 deleting a definition, or replacing all without it, drops its values from the persons of the partition", () => {
    const live = panelLive();
    accept(live, { method: "DELETE", path: "/api/partitions/0/attributes/badge" }, 204);
    expect(live.snapshot.persons[0]!.customAttributes).toEqual({});
    const live2 = panelLive();
    accept(
      live2,
      { method: "POST", path: "/api/partitions/0/attributes/all", body: [{ id: "floor", type: "string" }] },
      204,
    );
    expect(live2.snapshot.attributes.map((a) => a.id)).toEqual(["floor"]);
    expect(live2.snapshot.persons[0]!.customAttributes).toEqual({});
    refuse(
      live2,
      {
        method: "POST",
        path: "/api/partitions/0/attributes/all",
        body: [
          { id: "a", type: "string" },
          { id: "a", type: "string" },
        ],
      },
      409,
    );
    refuse(live2, { method: "POST", path: "/api/partitions/0/attributes/all", body: { id: "a" } }, 400);
    refuse(live2, { method: "GET", path: "/api/partitions/0/attributes/all" }, 405);
  });
});

describe("floor groups", () => {
  test("create: name, readerPort, floors required; partition defaults to 0; update; delete conflict with elevator rules", () => {
    const live = panelLive();
    expect(
      refuse(live, { method: "POST", path: "/api/floor_groups", body: { name: "Top" } }, 400).map((i) =>
        i.path.join("."),
      ),
    ).toEqual(["body.readerPort", "body.floors"]);
    refuse(
      live,
      { method: "POST", path: "/api/floor_groups", body: { name: "Top", readerPort: "4", floors: [6] } },
      400,
    );
    expect(
      accept(
        live,
        { method: "POST", path: "/api/floor_groups", body: { name: "Top", readerPort: 4, floors: [6] } },
        200,
      ).id,
    ).toBe(2);
    expect(read(live, "/api/floor_groups/2").body).toEqual({
      id: 2,
      name: "Top",
      partition: 0,
      readerPort: { id: 4, name: "Lift reader" },
      floors: [{ id: 6, name: "Floor 2", type: "floorRelay" }],
    });
    refuse(live, { method: "POST", path: "/api/floor_groups", body: { name: "Bad", readerPort: 1, floors: [6] } }, 400);
    accept(
      live,
      { method: "PUT", path: "/api/floor_groups/2", body: { name: "Top", partition: 1, readerPort: 4, floors: [6] } },
      204,
    );
    expect(live.snapshot.floorGroups[1]!.partition).toBe(1);
    // LP2 (L1): "same body" — without `partition` the floor group goes back to partition 0.
    accept(
      live,
      { method: "PUT", path: "/api/floor_groups/2", body: { name: "Top", readerPort: 4, floors: [6] } },
      204,
    );
    expect(live.snapshot.floorGroups[1]!.partition).toBe(0);
    accept(
      live,
      { method: "PUT", path: "/api/floor_groups/1", body: { name: "Lower floors", readerPort: 4, floors: [5] } },
      204,
    );
    expect(scan(live, 4, 1001).floors).toEqual([5]);
    expect(refuse(live, { method: "DELETE", path: "/api/floor_groups/1" }, 409)[0]!.path).toEqual([
      "rules",
      1,
      "floorGroups",
      0,
    ]);
    accept(live, { method: "DELETE", path: "/api/floor_groups/2" }, 204);
  });
});

describe("floor groups: names and references", () => {
  test("name ≤ 70 and unique on the node (409 at body.name); readerPort an elevator reader and floors floor relays (400 at the field)", () => {
    const live = panelLive();
    const post = (body: object) => ({
      method: "POST" as const,
      path: "/api/floor_groups",
      body: { name: "Top", readerPort: 4, floors: [6], ...body },
    });
    expect(refuse(live, post({ name: "t".repeat(71) }), 400).map((i) => i.path.join("."))).toEqual(["body.name"]);
    expect(refuse(live, post({ name: "Lower floors" }), 409)).toEqual([
      { code: "duplicateName", path: ["body", "name"], message: expect.stringContaining("floorGroups[0]") },
    ]);
    expect(refuse(live, post({ readerPort: 1 }), 400).map((i) => [i.code, i.path.join(".")])).toEqual([
      ["invalidReference", "body.readerPort"],
    ]);
    expect(refuse(live, post({ floors: [6, 1] }), 400).map((i) => [i.code, i.path.join(".")])).toEqual([
      ["invalidReference", "body.floors.1"],
    ]);
    expect(refuse(live, post({ floors: [] }), 400).map((i) => i.path.join("."))).toEqual(["body.floors"]);
    expect(refuse(live, post({ floors: [99] }), 400).map((i) => [i.code, i.path.join(".")])).toEqual([
      ["unknownReference", "body.floors.0"],
    ]);
    const id = accept(live, post({ name: "t".repeat(70) }), 200).id;
    expect(read(live, `/api/floor_groups/${id}`).body).toMatchObject({ name: "t".repeat(70), partition: 0 });
  });
});

describe("rules ★", () => {
  test("create, update and delete change decisions; references and times are checked", () => {
    const live = panelLive();
    expect(scan(live, 3, 1001).outcome).toBe("denied");
    const body = {
      name: "Back door",
      type: "door",
      groupId: 1,
      devices: [3],
      startTime: "00:00",
      stopTime: "24:00",
      recurring: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
      allow: true,
    };
    expect(accept(live, { method: "POST", path: "/api/rules", body }, 200).id).toBe(3);
    expect(scan(live, 3, 1001)).toMatchObject({ outcome: "allowed", activeRuleId: 3 });
    accept(live, { method: "PUT", path: "/api/rules/3", body: { ...body, startTime: "20:00" } }, 204);
    expect(scan(live, 3, 1001).outcome).toBe("denied");
    expect(
      refuse(live, { method: "PUT", path: "/api/rules/3", body: { ...body, startTime: "25:00" } }, 400)[0]!.path,
    ).toEqual(["body", "startTime"]);
    refuse(live, { method: "POST", path: "/api/rules", body: { ...body, groupId: 9 } }, 400);
    refuse(live, { method: "POST", path: "/api/rules", body: { name: "x" } }, 400);
    accept(live, { method: "DELETE", path: "/api/rules/3" }, 204);
    refuse(live, { method: "DELETE", path: "/api/rules/3" }, 404);
  });
});

describe("configuration", () => {
  test("LP3 PUT /api/config changes the fields given and keeps the others; unknown fields are 400", () => {
    const live = panelLive();
    accept(live, { method: "PUT", path: "/api/config", body: { offlinePolicy: 2, killTimer: 3600 } }, 204);
    expect(read(live, "/api/config").body).toMatchObject({
      timezone: "Europe/Paris",
      offlinePolicy: 2,
      killTimer: 3600,
      logPurgeDays: 30,
      locale: "en",
    });
    expect(refuse(live, { method: "PUT", path: "/api/config", body: { killTimer: 10 } }, 400)[0]!.path).toEqual([
      "body",
      "killTimer",
    ]);
    expect(refuse(live, { method: "PUT", path: "/api/config", body: { colour: "red" } }, 400)[0]!.path).toEqual([
      "body",
      "colour",
    ]);
    // The zone decides when rules are active: 20:00–24:00 Paris is not 14:15 Paris.
    accept(
      live,
      {
        method: "PUT",
        path: "/api/rules/1",
        body: {
          name: "Evening",
          type: "door",
          groupId: 1,
          devices: [1],
          startTime: "14:00",
          stopTime: "15:00",
          recurring: ["Wed"],
          allow: true,
        },
      },
      204,
    );
    expect(scan(live, 1, 1001).outcome).toBe("allowed");
    accept(live, { method: "PUT", path: "/api/config", body: { timezone: "America/New_York" } }, 204);
    expect(scan(live, 1, 1001).outcome).toBe("denied");
  });
});

describe("card format", () => {
  test("PUT /api/config cardFormat follows SPEC §5 (semantics S4, S17): a layout name, a raw format; an unknown layout name is 400 at body.cardFormat.layout", () => {
    const live = panelLive();
    const wiegand = (frame: string) => {
      const d = live.engine.decide({ deviceId: 1, at: AT, credential: { wiegand: frame } });
      return [d.outcome, d.reason, d.facilityCode, d.credentialNumber];
    };
    accept(
      live,
      {
        method: "PUT",
        path: "/api/config",
        body: { cardFormat: { id: "lobby", min_input_bits: 34, max_input_bits: 34, layout: "H10306" } },
      },
      204,
    );
    expect(read(live, "/api/config").body.cardFormat).toMatchObject({ id: "lobby", layout: "H10306" });
    expect(wiegand(encodeWiegand("H10306", { facilityCode: 17, cardNumber: 1001 }))).toEqual([
      "allowed",
      "allowed",
      17,
      1001,
    ]);
    const refused = refuse(
      live,
      {
        method: "PUT",
        path: "/api/config",
        body: { cardFormat: { id: "lobby", min_input_bits: 34, max_input_bits: 34, layout: "H10036" } },
      },
      400,
    );
    expect(refused.map((i) => i.path.join("."))).toEqual(["body.cardFormat.layout"]);
    // Raw: the whole frame is the card number, no facility code.
    accept(
      live,
      {
        method: "PUT",
        path: "/api/config",
        body: { cardFormat: { id: "site-raw", min_input_bits: 26, max_input_bits: 40, facility_code: "NOT_ENFORCED" } },
      },
      204,
    );
    expect(wiegand((1001).toString(2).padStart(32, "0"))).toEqual(["allowed", "allowed", null, 1001]);
  });
});

describe("ids in paths", () => {
  test("LP7 a path id that is not an integer names nothing (404); unknown ids in replace lists are 400 at their body path", () => {
    const live = panelLive();
    refuse(live, { method: "DELETE", path: "/api/persons/one" }, 404);
    refuse(live, { method: "GET", path: "/api/groups/1.5" }, 404);
    refuse(live, { method: "DELETE", path: "/api/devices/-1" }, 404);
    expect(
      refuse(live, { method: "PUT", path: "/api/groups/1/persons", body: { persons: [1, 42] } }, 400)[0]!.path,
    ).toEqual(["body", "persons", 1]);
    refuse(live, { method: "DELETE", path: "/api/persons/2/groups/1" }, 404);
  });
});

describe("reads, routes, batches, patches", () => {
  test("LP9 lists are paged in id order with their total; retrieve answers 404 for unknown ids", () => {
    const live = panelLive();
    for (let i = 0; i < 12; i++)
      accept(live, { method: "POST", path: "/api/persons", body: { firstName: `P${i}`, lastName: "X" } }, 200);
    const first = read(live, "/api/persons");
    expect(first.total).toBe(14);
    expect(first.body.map((p: { id: number }) => p.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(read(live, "/api/persons?page=1&per_page=5").body.map((p: { id: number }) => p.id)).toEqual([
      6, 7, 8, 9, 10,
    ]);
    refuse(live, { method: "GET", path: "/api/persons?per_page=101" }, 400);
    refuse(live, { method: "GET", path: "/api/persons/99" }, 404);
    expect(read(live, "/api/devices").total).toBe(6);
    expect(read(live, "/api/connections").total).toBe(2);
    expect(read(live, "/api/floor_groups").body[0].readerPort).toEqual({ id: 4, name: "Lift reader" });
    expect(read(live, "/api/rules").total).toBe(2);
    expect(read(live, "/api/search?q=lee").body).toEqual([{ id: 1, type: "person", name: "Ann Lee", image: null }]);
    expect(read(live, "/api/hardware").body).toEqual([]);
    expect(read(live, "/api/diagnostics/wireless").body).toEqual([]);
    expect(read(live, "/api/info").body).toEqual({
      online: true,
      // The software version, as `rsop --version` prints it (LP9), not the snapshot format.
      version: JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version,
      elevatorsPresent: true,
      facilityCodesSupported: "required",
    });
    const rsop = read(live, `/api/rsop/persons?ids=1&at=${AT}`).body;
    expect(rsop).toEqual(live.engine.rsop([1], { at: AT }));
    expect(rsop.persons[0].doors.find((d: { id: number }) => d.id === 1).allowed).toBe(true);
    refuse(live, { method: "GET", path: "/api/rsop/persons?ids=99" }, 404);
    // Without `at`, RSOP is computed at the live panel's clock (L13).
    const clocked = createPanelLiveSystem(smallPanel(), { now: () => Date.parse(AT) });
    if (!clocked.ok) throw new Error("fixture");
    expect(read(clocked.value, "/api/rsop/persons?ids=1,2").body).toEqual(
      clocked.value.engine.rsop([1, 2], { at: AT }),
    );
    refuse(live, { method: "GET", path: "/api/rsop/persons" }, 400);
  });

  test("unknown routes are 404, wrong methods 405, and a batch is all or nothing", () => {
    const live = panelLive();
    refuse(live, { method: "POST", path: "/api/people", body: {} }, 404);
    expect(refuse(live, { method: "POST", path: "/api/persons/1", body: {} }, 405)[0]!.message).toBe(
      "/api/persons/1 takes GET, PUT, DELETE, not POST.",
    );
    refuse(live, { method: "POST", path: "/holders", body: {} }, 404);
    const before = live.snapshot;
    const r = live.apply([
      { method: "POST", path: "/api/groups", body: { name: "A" } },
      { method: "POST", path: "/api/groups", body: { name: "A" } },
    ]);
    expect(r).toMatchObject({ ok: false, status: 409, index: 1 });
    expect(live.snapshot).toBe(before);
    const ok = live.apply([
      { method: "POST", path: "/api/groups", body: { name: "A" } },
      { method: "PUT", path: "/api/persons/1/groups", body: { groups: [1, 3] } },
      { method: "GET", path: "/api/persons/1/groups" },
    ]);
    expect(ok.ok).toBe(true);
    if (!ok.ok) return;
    expect(ok.results[0]).toMatchObject({ status: 200, id: 3 });
    expect((ok.results[2] as { body: { id: number }[] }).body.map((g) => g.id)).toEqual([1, 3]);
  });

  test("patches undo and replay; the engine always equals a fresh load of the panel", () => {
    const live = panelLive();
    const replica = panelLive();
    const before = live.snapshot;
    const w = accept(
      live,
      {
        method: "POST",
        path: "/api/persons/1/credentials",
        body: { types: ["card"], credentialNumber: 3003, facilityCode: 17 },
      },
      200,
    );
    expect(applyPatches(live.snapshot, [...w.inversePatches])).toStrictEqual(before);
    expect(replica.applyPatches(w.patches).ok).toBe(true);
    expect(replica.snapshot).toStrictEqual(live.snapshot);
    const fresh = loadPanelEngineOrThrow(JSON.parse(JSON.stringify(live.snapshot)));
    expect(
      live.engine.decide({ deviceId: 1, at: AT, credential: { credentialNumber: 3003, facilityCode: 17 } }),
    ).toStrictEqual(fresh.decide({ deviceId: 1, at: AT, credential: { credentialNumber: 3003, facilityCode: 17 } }));
    // Patches that break the panel are refused and change nothing.
    const snap = replica.snapshot;
    expect(replica.applyPatches([{ op: "replace", path: ["rules", 0, "groupId"], value: 99 }]).ok).toBe(false);
    expect(replica.snapshot).toBe(snap);
  });

  test("examples/panel.json runs live: a new person with a card joins a group and is let in", () => {
    const r = createPanelLiveSystem(
      JSON.parse(readFileSync(new URL("../../examples/panel.json", import.meta.url), "utf8")),
    );
    if (!r.ok) throw new Error("examples/panel.json does not load");
    const live = r.value;
    const id = accept(
      live,
      { method: "POST", path: "/api/persons", body: { firstName: "New", lastName: "Nurse" } },
      200,
    ).id;
    expect(id).toBe(Math.max(...smallIds(live.snapshot.persons)));
    accept(
      live,
      {
        method: "POST",
        path: `/api/persons/${id}/credentials`,
        body: { types: ["card"], credentialNumber: 64001, facilityCode: 17 },
      },
      200,
    );
    const at = "2026-04-15T14:15:00Z";
    expect(
      live.engine.decide({ deviceId: 1, at, credential: { credentialNumber: 64001, facilityCode: 17 } }).outcome,
    ).toBe("denied");
    accept(live, { method: "PUT", path: `/api/persons/${id}/groups`, body: { groups: [1] } }, 204);
    expect(
      live.engine.decide({ deviceId: 1, at, credential: { credentialNumber: 64001, facilityCode: 17 } }),
    ).toMatchObject({ outcome: "allowed", holderId: id });
  });
});
