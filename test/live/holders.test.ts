// Seed 001 §4 "Holders": create (201 {id}), update (every required key), delete (takes credentials
// and memberships), with the §2 limits and defaults; effects read back and checked with decisions.
import { describe, expect, test } from "vitest";
import { accept, liveOf, read, refuse, scan } from "./fixture.js";

const UPDATE = {
  firstName: "Ann",
  lastName: "Lee-Park",
  partition: "p-east",
  enabled: true,
  activeDate: null,
  expireDate: null,
  pin: "4321",
  duressPin: null,
};

describe("POST /holders", () => {
  test("creates with 201 {id} and the seed defaults: enabled true, no groups, no credentials", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/holders", body: { firstName: "Dee", lastName: "Ng" } }, 201);
    expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const h = read(live, `/holders/${r.id}`).body;
    expect(h).toMatchObject({
      id: r.id,
      firstName: "Dee",
      lastName: "Ng",
      enabled: true,
      email: null,
      partition: null,
      activeDate: null,
      expireDate: null,
      pin: null,
      duressPin: null,
      groups: [],
      credentials: [],
      customFields: {},
    });
  });

  test("firstName and lastName are required: each missing one is reported at body.<field>", () => {
    const live = liveOf();
    expect(refuse(live, { method: "POST", path: "/holders", body: {} }, 400).paths.sort()).toEqual([
      "body.firstName",
      "body.lastName",
    ]);
    expect(refuse(live, { method: "POST", path: "/holders", body: { firstName: "Dee" } }, 400).paths).toEqual([
      "body.lastName",
    ]);
    expect(refuse(live, { method: "POST", path: "/holders", body: "Dee Ng" }, 400).paths).toEqual(["body"]);
  });

  test("names are at most 35 characters", () => {
    const live = liveOf();
    accept(
      live,
      { method: "POST", path: "/holders", body: { firstName: "x".repeat(35), lastName: "y".repeat(35) } },
      201,
    );
    expect(
      refuse(live, { method: "POST", path: "/holders", body: { firstName: "x".repeat(36), lastName: "Ng" } }, 400)
        .paths,
    ).toEqual(["body.firstName"]);
    expect(
      refuse(live, { method: "POST", path: "/holders", body: { firstName: "Dee", lastName: "y".repeat(36) } }, 400)
        .paths,
    ).toEqual(["body.lastName"]);
  });

  test("groups and credentials given on creation take effect at once", () => {
    const live = liveOf();
    expect(scan(live, "d-front", 3001, 10).outcome).toBe("unknown");
    const r = accept(
      live,
      {
        method: "POST",
        path: "/holders",
        body: {
          firstName: "Dee",
          lastName: "Ng",
          groups: ["g-staff"],
          credentials: [{ types: ["card"], credentialNumber: 3001, facilityCode: 10 }],
        },
      },
      201,
    );
    expect(scan(live, "d-front", 3001, 10)).toMatchObject({
      outcome: "allowed",
      holderId: r.id,
      activeRuleId: "r-staff-door",
    });
    const h = read(live, `/holders/${r.id}`).body;
    expect(h.groups).toEqual([{ id: "g-staff", name: "Staff", partition: "p-default" }]);
    expect(h.credentials).toHaveLength(1);
    expect(h.credentials[0]).toMatchObject({
      holderId: r.id,
      credentialNumber: 3001,
      facilityCode: 10,
      types: ["card"],
    });
  });

  test("credentials given on creation follow the credential-create rules: a digital one starts Pending with no number", () => {
    const live = liveOf();
    const r = accept(
      live,
      {
        method: "POST",
        path: "/holders",
        body: {
          firstName: "Dee",
          lastName: "Ng",
          credentials: [{ types: ["touch"] }, { types: ["card"], credentialNumber: 3001 }],
        },
      },
      201,
    );
    const creds = read(live, `/holders/${r.id}/credentials`).body;
    expect(
      creds
        .map((c: { types: string[]; credentialNumber: number | null; description: string | null }) => [
          c.types,
          c.credentialNumber,
          c.description,
        ])
        .sort(),
    ).toEqual([
      [["card"], 3001, null],
      [["touch"], null, "Pending"],
    ]);
    const bad = refuse(
      live,
      {
        method: "POST",
        path: "/holders",
        body: {
          lastName: "Ng",
          credentials: [{ types: ["token"], credentialNumber: 77 }, { types: ["card"] }, { credentialNumber: 5 }],
        },
      },
      400,
    );
    expect(bad.paths.sort()).toEqual([
      "body.credentials.0.credentialNumber",
      "body.credentials.1.credentialNumber",
      "body.credentials.2.types",
      "body.firstName",
    ]);
  });

  test("enabled false is kept, and such a holder is denied", () => {
    const live = liveOf();
    accept(
      live,
      {
        method: "POST",
        path: "/holders",
        body: {
          firstName: "Dee",
          lastName: "Ng",
          enabled: false,
          groups: ["g-staff"],
          credentials: [{ types: ["card"], credentialNumber: 3001, facilityCode: 10 }],
        },
      },
      201,
    );
    expect(scan(live, "d-front", 3001, 10).outcome).toBe("denied");
  });

  test("field types and formats: enabled boolean, dates YYYY-MM-DDTHH:mm:ss, PINs of digits", () => {
    const live = liveOf();
    const base = { firstName: "Dee", lastName: "Ng" };
    expect(refuse(live, { method: "POST", path: "/holders", body: { ...base, enabled: "yes" } }, 400).paths).toEqual([
      "body.enabled",
    ]);
    expect(
      refuse(live, { method: "POST", path: "/holders", body: { ...base, activeDate: "2026-04-15" } }, 400).paths,
    ).toEqual(["body.activeDate"]);
    expect(refuse(live, { method: "POST", path: "/holders", body: { ...base, pin: "12a4" } }, 400).paths).toEqual([
      "body.pin",
    ]);
    expect(
      refuse(live, { method: "POST", path: "/holders", body: { ...base, pin: "1111", duressPin: "1111" } }, 400).paths,
    ).toEqual(["body.duressPin"]);
    accept(
      live,
      {
        method: "POST",
        path: "/holders",
        body: { ...base, activeDate: "2026-04-01T08:00:00", expireDate: null, pin: "0042" },
      },
      201,
    );
  });

  test("unknown group or partition → 400; a credential number already in use → 409", () => {
    const live = liveOf();
    const g = refuse(
      live,
      { method: "POST", path: "/holders", body: { firstName: "Dee", lastName: "Ng", groups: ["g-nope"] } },
      400,
    );
    expect(g.issues.map((i) => i.code)).toEqual(["unknownReference"]);
    expect(g.paths).toEqual(["body.groups.0"]);
    const p = refuse(
      live,
      { method: "POST", path: "/holders", body: { firstName: "Dee", lastName: "Ng", partition: "p-nope" } },
      400,
    );
    expect(p.paths).toEqual(["body.partition"]);
    const c = refuse(
      live,
      {
        method: "POST",
        path: "/holders",
        body: { firstName: "Dee", lastName: "Ng", credentials: [{ types: ["card"], credentialNumber: 1001 }] },
      },
      409,
    );
    expect(c.issues.map((i) => i.code)).toEqual(["duplicateCredentialNumber"]);
    expect(c.paths).toEqual(["body.credentials.0.credentialNumber"]);
    expect(c.issues[0]!.message).toContain("holders[0].credentials[0]");
  });
});

describe("POST /holders: cross-entity rules of the resulting snapshot", () => {
  test("a group named twice → 400 at body.groups; a credential id already used → 409 at body.credentials.<j>.id", () => {
    const live = liveOf();
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: "/holders",
          body: { firstName: "Dee", lastName: "Ng", groups: ["g-staff", "g-staff"] },
        },
        400,
      ).paths,
    ).toEqual(["body.groups"]);
    const dup = refuse(
      live,
      {
        method: "POST",
        path: "/holders",
        body: {
          firstName: "Dee",
          lastName: "Ng",
          credentials: [{ id: "c-ann", types: ["card"], credentialNumber: 3001 }],
        },
      },
      409,
    );
    expect(dup.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["duplicateId", "body.credentials.0.id"]]);
  });
});

describe("PUT /holders/{holder_id}", () => {
  test("every required field is named when missing (dates and PINs accept null)", () => {
    const live = liveOf();
    const r = refuse(live, { method: "PUT", path: "/holders/h-ann", body: {} }, 400);
    expect(r.paths.sort()).toEqual(
      ["activeDate", "duressPin", "enabled", "expireDate", "firstName", "lastName", "partition", "pin"]
        .map((k) => `body.${k}`)
        .sort(),
    );
    for (const k of Object.keys(UPDATE)) {
      const { [k]: _dropped, ...body } = UPDATE as Record<string, unknown>;
      expect(refuse(live, { method: "PUT", path: "/holders/h-ann", body }, 400).paths, k).toEqual([`body.${k}`]);
    }
  });

  test("204; the change reads back; email and customFields are optional and kept when absent", () => {
    const live = liveOf();
    const r = accept(live, { method: "PUT", path: "/holders/h-ann", body: UPDATE }, 204);
    expect(r.id).toBeUndefined();
    const h = read(live, "/holders/h-ann").body;
    expect(h).toMatchObject({ ...UPDATE, email: "ann@example.com" });
    // groups and credentials are not part of the update body: untouched.
    expect(h.groups.map((g: { id: string }) => g.id)).toEqual(["g-staff"]);
    expect(h.credentials.map((c: { id: string }) => c.id)).toEqual(["c-ann"]);
    accept(live, { method: "PUT", path: "/holders/h-ann", body: { ...UPDATE, email: null } }, 204);
    expect(read(live, "/holders/h-ann").body.email).toBeNull();
  });

  test("disabling a holder denies its card; an expireDate in the past too", () => {
    const live = liveOf();
    expect(scan(live, "d-front", 1001, 10).outcome).toBe("allowed");
    accept(live, { method: "PUT", path: "/holders/h-ann", body: { ...UPDATE, enabled: false } }, 204);
    expect(scan(live, "d-front", 1001, 10).outcome).toBe("denied");
    accept(
      live,
      { method: "PUT", path: "/holders/h-ann", body: { ...UPDATE, expireDate: "2026-04-01T00:00:00" } },
      204,
    );
    expect(scan(live, "d-front", 1001, 10).outcome).toBe("denied");
    accept(live, { method: "PUT", path: "/holders/h-ann", body: UPDATE }, 204);
    expect(scan(live, "d-front", 1001, 10).outcome).toBe("allowed");
  });

  test("limits and references as on create; unknown holder → 404", () => {
    const live = liveOf();
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-ann", body: { ...UPDATE, lastName: "z".repeat(36) } }, 400).paths,
    ).toEqual(["body.lastName"]);
    const unknown = refuse(
      live,
      { method: "PUT", path: "/holders/h-ann", body: { ...UPDATE, partition: "p-nope" } },
      400,
    );
    expect(unknown.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["unknownReference", "body.partition"]]);
    expect(refuse(live, { method: "PUT", path: "/holders/h-nope", body: UPDATE }, 404).issues[0]!.code).toBe(
      "notFound",
    );
  });
});

describe("DELETE /holders/{holder_id}", () => {
  test("204; the holder's credentials and memberships go with it, and its card number is free again", () => {
    const live = liveOf();
    accept(live, { method: "DELETE", path: "/holders/h-bob" }, 204);
    refuse(live, { method: "GET", path: "/holders/h-bob" }, 404);
    expect(read(live, "/credentials").body.map((c: { id: string }) => c.id)).not.toContain("c-bob");
    expect(read(live, "/groups/g-staff/holders").body.map((h: { id: string }) => h.id)).toEqual(["h-ann"]);
    expect(read(live, "/groups/g-night/holders").total).toBe(0);
    expect(scan(live, "d-front", 1002, 20).outcome).toBe("unknown");
    accept(
      live,
      {
        method: "POST",
        path: "/holders",
        body: { firstName: "Eve", lastName: "Ho", credentials: [{ types: ["card"], credentialNumber: 1002 }] },
      },
      201,
    );
  });

  test("unknown holder → 404", () => {
    expect(refuse(liveOf(), { method: "DELETE", path: "/holders/h-nope" }, 404).issues[0]!.message).toContain("h-nope");
  });
});
