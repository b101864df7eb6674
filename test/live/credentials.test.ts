// Seed 001 §4 "Credentials" and §3 (digital credential activation): card vs digital create rules,
// the 255-character description, number uniqueness (409), types-only updates of digital credentials.
import { describe, expect, test } from "vitest";
import { AT, accept, liveOf, read, refuse, scan } from "./fixture.js";

const CARD = { types: ["card"], credentialNumber: 4242, facilityCode: 10, description: "Desk fob" };

describe("POST /holders/{holder_id}/credentials", () => {
  test("a card: 201 {id}; it reads back and opens what its holder may open", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/holders/h-ann/credentials", body: CARD }, 201);
    expect(read(live, `/holders/h-ann/credentials/${r.id}`).body).toEqual({ id: r.id, holderId: "h-ann", ...CARD });
    expect(scan(live, "d-front", 4242, 10)).toMatchObject({ outcome: "allowed", holderId: "h-ann" });
  });

  test("types is required; a card needs a credentialNumber", () => {
    const live = liveOf();
    expect(
      refuse(live, { method: "POST", path: "/holders/h-ann/credentials", body: { credentialNumber: 1 } }, 400).paths,
    ).toEqual(["body.types"]);
    expect(
      refuse(live, { method: "POST", path: "/holders/h-ann/credentials", body: { types: ["card"] } }, 400).paths,
    ).toEqual(["body.credentialNumber"]);
    expect(
      refuse(live, { method: "POST", path: "/holders/h-ann/credentials", body: { types: [] } }, 400).paths,
    ).toEqual(["body.types"]);
    expect(
      refuse(live, { method: "POST", path: "/holders/h-ann/credentials", body: { types: ["badge"] } }, 400).paths,
    ).toEqual(["body.types.0"]);
  });

  test("description: at most 255 characters", () => {
    const live = liveOf();
    accept(
      live,
      { method: "POST", path: "/holders/h-ann/credentials", body: { ...CARD, description: "d".repeat(255) } },
      201,
    );
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: "/holders/h-ann/credentials",
          body: { ...CARD, credentialNumber: 4243, description: "d".repeat(256) },
        },
        400,
      ).paths,
    ).toEqual(["body.description"]);
  });

  test("a credential number already in use anywhere in the system → 409", () => {
    const live = liveOf();
    const r = refuse(
      live,
      { method: "POST", path: "/holders/h-cy/credentials", body: { ...CARD, credentialNumber: 1002 } },
      409,
    );
    expect(r.issues.map((i) => i.code)).toEqual(["duplicateCredentialNumber"]);
    expect(r.paths).toEqual(["body.credentialNumber"]);
    // digital credentials' numbers count too (S1)
    expect(
      refuse(
        live,
        { method: "POST", path: "/holders/h-cy/credentials", body: { ...CARD, credentialNumber: 5001 } },
        409,
      ).issues[0]!.message,
    ).toContain("5001");
  });

  test("a digital credential: number, facility code and description must be omitted; it shows Pending with no number", () => {
    const live = liveOf();
    for (const k of ["credentialNumber", "facilityCode", "description"])
      expect(
        refuse(
          live,
          {
            method: "POST",
            path: "/holders/h-ann/credentials",
            body: { types: ["touch"], [k]: k === "description" ? "x" : 7 },
          },
          400,
        ).paths,
        k,
      ).toEqual([`body.${k}`]);
    expect(
      refuse(
        live,
        { method: "POST", path: "/holders/h-ann/credentials", body: { types: ["token"], sendEmail: "no" } },
        400,
      ).paths,
    ).toEqual(["body.sendEmail"]);
    expect(
      refuse(live, { method: "POST", path: "/holders/h-ann/credentials", body: { ...CARD, sendEmail: true } }, 400)
        .paths,
    ).toEqual(["body.sendEmail"]);
    const r = accept(
      live,
      { method: "POST", path: "/holders/h-ann/credentials", body: { types: ["touch", "token"], sendEmail: false } },
      201,
    );
    expect(read(live, `/holders/h-ann/credentials/${r.id}`).body).toEqual({
      id: r.id,
      holderId: "h-ann",
      types: ["touch", "token"],
      credentialNumber: null,
      facilityCode: null,
      description: "Pending",
    });
  });

  test("a pending digital credential opens nothing; after activation it does", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/holders/h-ann/credentials", body: { types: ["token"] } }, 201);
    const phone = () => {
      const d = live.engine.decide({
        deviceId: "d-front",
        at: AT,
        credential: { mobile: "token", credentialId: r.id },
      });
      return `${d.outcome}/${d.reason}`;
    };
    expect(phone()).toBe("denied/credentialPending");
    accept(
      live,
      {
        method: "POST",
        path: `/holders/h-ann/credentials/${r.id}/activate`,
        body: { credentialNumber: 7777, description: "Pixel 8" },
      },
      204,
    );
    expect(read(live, `/holders/h-ann/credentials/${r.id}`).body).toMatchObject({
      credentialNumber: 7777,
      description: "Pixel 8",
      types: ["token"],
    });
    expect(phone()).toBe("allowed/allowed");
  });

  test("activation is refused for active, card and number-clashing credentials, and needs both fields", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/holders/h-ann/credentials", body: { types: ["token"] } }, 201);
    const path = `/holders/h-ann/credentials/${r.id}/activate`;
    expect(refuse(live, { method: "POST", path, body: {} }, 400).paths.sort()).toEqual([
      "body.credentialNumber",
      "body.description",
    ]);
    expect(
      refuse(live, { method: "POST", path, body: { credentialNumber: 1001, description: "Pixel" } }, 409).paths,
    ).toEqual(["body.credentialNumber"]);
    refuse(
      live,
      {
        method: "POST",
        path: "/holders/h-ann/credentials/c-ann/activate",
        body: { credentialNumber: 7, description: "x" },
      },
      409,
    );
    refuse(
      live,
      {
        method: "POST",
        path: "/holders/h-bob/credentials/c-bob-phone/activate",
        body: { credentialNumber: 7, description: "x" },
      },
      409,
    );
  });

  test("with card present, touch and token are ignored: such a credential opens as a card, never as a phone", () => {
    const live = liveOf();
    const r = accept(
      live,
      {
        method: "POST",
        path: "/holders/h-ann/credentials",
        body: { types: ["card", "token"], credentialNumber: 4444 },
      },
      201,
    );
    expect(scan(live, "d-front", 4444)).toMatchObject({ outcome: "allowed", holderId: "h-ann" });
    const d = live.engine.decide({ deviceId: "d-front", at: AT, credential: { mobile: "token", credentialId: r.id } });
    expect(`${d.outcome}/${d.reason}`).toBe("unknown/unknownCredential");
    // and it is a card: its types cannot change
    refuse(live, { method: "PUT", path: `/holders/h-ann/credentials/${r.id}`, body: { types: ["token"] } }, 400);
  });

  test("unknown holder → 404", () => {
    refuse(liveOf(), { method: "POST", path: "/holders/h-nope/credentials", body: CARD }, 404);
  });
});

describe("PUT /holders/{holder_id}/credentials/{credential_id}", () => {
  test("only a digital credential's types change (touch, token)", () => {
    const live = liveOf();
    accept(live, { method: "PUT", path: "/holders/h-bob/credentials/c-bob-phone", body: { types: ["token"] } }, 204);
    expect(read(live, "/holders/h-bob/credentials/c-bob-phone").body).toMatchObject({
      types: ["token"],
      credentialNumber: 5001,
      description: "iPhone 15",
    });
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-bob/credentials/c-bob-phone", body: { types: ["card"] } }, 400)
        .paths,
    ).toEqual(["body.types.0"]);
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-bob/credentials/c-bob-phone", body: { types: [] } }, 400).paths,
    ).toEqual(["body.types"]);
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-bob/credentials/c-bob-phone", body: {} }, 400).paths,
    ).toEqual(["body.types"]);
  });

  test("card credentials cannot change types", () => {
    const live = liveOf();
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-bob/credentials/c-bob", body: { types: ["touch"] } }, 400).paths,
    ).toEqual(["body.types"]);
    expect(
      refuse(live, { method: "PUT", path: "/holders/h-bob/credentials/c-bob", body: { types: ["card"] } }, 400).paths,
    ).toEqual(["body.types"]);
  });

  test("a credential of another holder, or unknown, → 404", () => {
    const live = liveOf();
    refuse(live, { method: "PUT", path: "/holders/h-ann/credentials/c-bob-phone", body: { types: ["token"] } }, 404);
    refuse(live, { method: "PUT", path: "/holders/h-bob/credentials/c-nope", body: { types: ["token"] } }, 404);
  });
});

describe("DELETE /holders/{holder_id}/credentials/{credential_id}", () => {
  test("204; the card no longer opens anything; its number is free", () => {
    const live = liveOf();
    accept(live, { method: "DELETE", path: "/holders/h-ann/credentials/c-ann" }, 204);
    expect(scan(live, "d-front", 1001, 10).outcome).toBe("unknown");
    expect(read(live, "/holders/h-ann/credentials").total).toBe(0);
    accept(
      live,
      { method: "POST", path: "/holders/h-cy/credentials", body: { types: ["card"], credentialNumber: 1001 } },
      201,
    );
    refuse(live, { method: "DELETE", path: "/holders/h-ann/credentials/c-ann" }, 404);
    refuse(live, { method: "DELETE", path: "/holders/h-ann/credentials/c-bob" }, 404);
  });
});

describe("credential lists", () => {
  test("GET /credentials lists all, by id; GET /credentials/facility-codes the distinct codes as strings", () => {
    const live = liveOf();
    const all = read(live, "/credentials");
    expect(all.body.map((c: { id: string }) => c.id)).toEqual(["c-ann", "c-bob", "c-bob-phone"]);
    expect(all.total).toBe(3);
    expect(read(live, "/credentials/facility-codes").body).toEqual(["10", "20"]);
    accept(
      live,
      {
        method: "POST",
        path: "/holders/h-cy/credentials",
        body: { types: ["card"], credentialNumber: 9, facilityCode: 3 },
      },
      201,
    );
    expect(read(live, "/credentials/facility-codes").body).toEqual(["3", "10", "20"]);
    expect(read(live, "/holders/h-bob/credentials").body.map((c: { id: string }) => c.id)).toEqual([
      "c-bob",
      "c-bob-phone",
    ]);
  });
});
