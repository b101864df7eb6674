// ★ Areas in the live system (docs/semantics.md AB1, AB6, AB9, AB10): /areas list, get, create, update,
// delete like the other resources; `lastReset`/`forgiven` written by the reset and forgive routes
// only; a device an area names is not deleted (409); writes emit entity events of type area; the
// commands go through the store like every write (a reopened store has them).
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { changeEvents } from "../../src/webhooks.js";
import { openDurableSystem } from "../../src/service/store/durableSystem.js";
import { openSqliteStore } from "../../src/adapters/store/sqliteStore.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";
import { LiveRefusal, readInScope, scopeOf } from "../../src/service/auth/scope.js";
import { reads } from "../../src/live/operations/reads.js";
import { AT, NOW, accept, building, liveOf, read, refuse } from "./fixture.js";
import { AccessState } from "../../src/index.js";
import { createEngine } from "../../src/evaluate/index.js";

afterAll(removeTempDirs);

const LOBBY = {
  name: "Lobby",
  entries: ["d-front"],
  exits: ["d-front-out"],
  antiPassback: { mode: "hard", resetSeconds: 3600 },
  occupancyLimit: 40,
};
const NOW_ISO = new Date(NOW).toISOString();

describe("areas (AB1, AB6)", () => {
  test("POST 201 {id}; GET one and the list (search, paging); PUT replaces with the defaults; DELETE 204", () => {
    const live = liveOf();
    const lobby = accept(live, { method: "POST", path: "/areas", body: LOBBY }, 201).id!;
    expect(read(live, `/areas/${lobby}`).body).toEqual({ id: lobby, ...LOBBY });
    const yard = accept(live, { method: "POST", path: "/areas", body: { name: "Yard", entries: ["d-side"] } }, 201).id!;
    expect(read(live, `/areas/${yard}`).body).toEqual({
      id: yard,
      name: "Yard",
      entries: ["d-side"],
      exits: [],
      antiPassback: null,
      occupancyLimit: null,
    });
    expect(read(live, "/areas?search=yar").body.map((a: { id: string }) => a.id)).toEqual([yard]);
    const page = read(live, "/areas?per_page=1&page=1");
    expect(page.total).toBe(2);
    expect(page.body).toHaveLength(1);
    accept(live, { method: "PUT", path: `/areas/${lobby}`, body: { name: "Hall", entries: ["d-front"] } }, 204);
    expect(read(live, `/areas/${lobby}`).body).toEqual({
      id: lobby,
      name: "Hall",
      entries: ["d-front"],
      exits: [],
      antiPassback: null,
      occupancyLimit: null,
    });
    accept(live, { method: "DELETE", path: `/areas/${yard}` }, 204);
    expect(refuse(live, { method: "GET", path: `/areas/${yard}` }, 404).paths).toEqual([""]);
    expect(refuse(live, { method: "DELETE", path: `/areas/${yard}` }, 404).paths).toEqual([""]);
  });

  test("every problem of a body at once, under body with its path; lastReset and forgiven are not writable", () => {
    const live = liveOf();
    const r = refuse(
      live,
      {
        method: "POST",
        path: "/areas",
        body: {
          name: "",
          entries: ["d-nope", "d-front"],
          exits: ["d-front"],
          antiPassback: { mode: "never", resetSeconds: -1 },
          occupancyLimit: 0,
          lastReset: "2026-01-01T00:00:00Z",
          forgiven: {},
          id: "a-1",
        },
      },
      400,
    );
    expect(r.paths.sort()).toEqual(
      [
        "body.antiPassback.mode",
        "body.antiPassback.resetSeconds",
        "body.entries.0",
        "body.forgiven",
        "body.id",
        "body.lastReset",
        "body.name",
        "body.occupancyLimit",
      ].sort(),
    );
    expect(r.issues.find((i) => i.path.join(".") === "body.lastReset")!.message).toContain("/reset");
    // A device both entry and exit, or twice in a list (reported once the rest of the body parses).
    expect(
      refuse(
        live,
        { method: "POST", path: "/areas", body: { name: "Both", entries: ["d-front", "d-front"], exits: ["d-front"] } },
        400,
      ).paths.sort(),
    ).toEqual(["body.entries.1", "body.exits.0"]);
    // An area's devices on two nodes: its state could not be kept by one.
    const annex = building() as { connections: unknown[]; devices: unknown[] };
    annex.connections.push({ id: "x-annex", name: "Annex USB", type: "usb", cloudNode: "n-annex", port: 1 });
    annex.devices.push({
      id: "d-annex",
      name: "Annex Door",
      cloudNode: "n-annex",
      connection: "x-annex",
      port: 1,
      type: "primaryReader",
      publicIcon: "swingingDoor",
    });
    const twoNodes = refuse(
      liveOf(annex),
      { method: "POST", path: "/areas", body: { name: "Split", entries: ["d-front", "d-annex"] } },
      400,
    );
    expect(twoNodes.paths).toEqual(["body.entries.1"]);
    expect(refuse(live, { method: "POST", path: "/areas", body: { name: "Empty", entries: [] } }, 400).paths).toEqual([
      "body.entries",
    ]);
    const lobby = accept(live, { method: "POST", path: "/areas", body: LOBBY }, 201).id!;
    const put = refuse(live, { method: "PUT", path: `/areas/${lobby}`, body: { exits: [], lastReset: null } }, 400);
    expect(put.paths.sort()).toEqual(["body.entries", "body.lastReset", "body.name"]);
    expect(refuse(live, { method: "PUT", path: "/areas/a-nope", body: LOBBY }, 404).paths).toEqual([""]);
  });

  test("AB6: reset sets lastReset to now and clears forgiven; forgive sets forgiven[holderId] to now; a PUT keeps both", () => {
    const live = liveOf();
    const id = accept(live, { method: "POST", path: "/areas", body: LOBBY }, 201).id!;
    accept(live, { method: "POST", path: `/areas/${id}/forgive`, body: { holderId: "h-ann" } }, 204);
    accept(live, { method: "POST", path: `/areas/${id}/forgive`, body: { holderId: "h-bob" } }, 204);
    expect(read(live, `/areas/${id}`).body.forgiven).toEqual({ "h-ann": NOW_ISO, "h-bob": NOW_ISO });
    accept(live, { method: "PUT", path: `/areas/${id}`, body: { ...LOBBY, name: "Hall" } }, 204);
    expect(read(live, `/areas/${id}`).body).toMatchObject({ name: "Hall", forgiven: { "h-ann": NOW_ISO } });
    accept(live, { method: "POST", path: `/areas/${id}/reset` }, 204);
    expect(read(live, `/areas/${id}`).body.lastReset).toBe(NOW_ISO);
    // A second reset in the same millisecond still writes a new value, so a node sees it (AB7).
    accept(live, { method: "POST", path: `/areas/${id}/reset`, body: {} }, 204);
    const after = read(live, `/areas/${id}`).body;
    const NEXT_MS = new Date(NOW + 1).toISOString();
    expect(after.lastReset).toBe(NEXT_MS);
    expect(after).not.toHaveProperty("forgiven");
    accept(live, { method: "POST", path: `/areas/${id}/forgive`, body: { holderId: "h-ann" } }, 204);
    accept(live, { method: "POST", path: `/areas/${id}/forgive`, body: { holderId: "h-ann" } }, 204);
    expect(read(live, `/areas/${id}`).body.forgiven).toEqual({ "h-ann": NEXT_MS });
    accept(live, { method: "PUT", path: `/areas/${id}`, body: LOBBY }, 204);
    expect(read(live, `/areas/${id}`).body.lastReset).toBe(NEXT_MS);
  });

  test("AB6: forgive's body is {holderId}: 400 at body.holderId when missing or not a string, 404 for an unknown holder", () => {
    const live = liveOf();
    const id = accept(live, { method: "POST", path: "/areas", body: LOBBY }, 201).id!;
    const forgive = (body: unknown) => ({ method: "POST" as const, path: `/areas/${id}/forgive`, body });
    expect(refuse(live, forgive({}), 400).paths).toEqual(["body.holderId"]);
    expect(refuse(live, forgive({ holderId: 7 }), 400).paths).toEqual(["body.holderId"]);
    expect(refuse(live, forgive({ holderId: "h-ann", when: "now" }), 400).paths).toEqual(["body.when"]);
    expect(refuse(live, forgive({ holderId: "h-nobody" }), 404).paths).toEqual(["body.holderId"]);
    expect(refuse(live, forgive("h-ann"), 400).paths).toEqual(["body"]);
    expect(
      refuse(live, { method: "POST", path: "/areas/a-nope/forgive", body: { holderId: "h-ann" } }, 404).paths,
    ).toEqual([""]);
    expect(refuse(live, { method: "POST", path: `/areas/${id}/reset`, body: { all: true } }, 400).paths).toEqual([
      "body.all",
    ]);
  });

  test("AB6: a deleted holder's forgive goes with it (forgiven stays bounded)", () => {
    const live = liveOf();
    const id = accept(live, { method: "POST", path: "/areas", body: LOBBY }, 201).id!;
    accept(live, { method: "POST", path: `/areas/${id}/forgive`, body: { holderId: "h-ann" } }, 204);
    accept(live, { method: "POST", path: `/areas/${id}/forgive`, body: { holderId: "h-cy" } }, 204);
    const before = live.snapshot;
    const r = accept(live, { method: "DELETE", path: "/holders/h-cy" }, 204);
    expect(read(live, `/areas/${id}`).body.forgiven).toEqual({ "h-ann": NOW_ISO });
    const events = changeEvents({ before, after: live.snapshot, patches: r.patches, occurredAt: "t" });
    expect(events.map((e) => `${e.topic} ${e.entityType} ${String(e.entityId)}`)).toContain(
      `entity.modified area ${id}`,
    );
  });

  test("AB9: a device an area names is not deleted: 409 naming each areas[i].entries[j] / exits[j]", () => {
    const live = liveOf();
    // The fixture's d-front-out is referenced by nothing else; d-fan neither.
    const a = accept(live, { method: "POST", path: "/areas", body: { name: "A", entries: ["d-fan"] } }, 201).id!;
    const b = accept(
      live,
      { method: "POST", path: "/areas", body: { name: "B", entries: ["d-front-out"], exits: ["d-fan"] } },
      201,
    ).id!;
    const refused = refuse(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-fan" }, 409);
    expect(refused.paths.sort()).toEqual(["areas.0.entries.0", "areas.1.exits.0"]);
    expect(refused.issues.map((i) => i.message).join(" ")).toContain(`Area "${a}" has device "d-fan" as an entry`);
    expect(refused.issues.map((i) => i.message).join(" ")).toContain(`Area "${b}" has device "d-fan" as an exit`);
    accept(live, { method: "DELETE", path: `/areas/${a}` }, 204);
    accept(live, { method: "PUT", path: `/areas/${b}`, body: { name: "B", entries: ["d-front-out"] } }, 204);
    accept(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-fan" }, 204);
  });

  test("W6: area writes, reset and forgive emit entity.added, entity.modified and entity.removed of type area", () => {
    const live = liveOf();
    const events = (op: { method: "POST" | "PUT" | "DELETE"; path: string; body?: unknown }) => {
      const before = live.snapshot;
      const r = accept(live, op, op.method === "POST" && op.path === "/areas" ? 201 : 204);
      return {
        id: r.id,
        events: changeEvents({ before, after: live.snapshot, patches: r.patches, occurredAt: "t" }).map(
          (e) => `${e.topic} ${e.entityType} ${String(e.entityId)}`,
        ),
      };
    };
    const added = events({ method: "POST", path: "/areas", body: LOBBY });
    expect(added.events).toEqual([`entity.added area ${added.id}`]);
    const modified = [`entity.modified area ${added.id}`];
    expect(events({ method: "PUT", path: `/areas/${added.id}`, body: { ...LOBBY, name: "H" } }).events).toEqual(
      modified,
    );
    expect(events({ method: "POST", path: `/areas/${added.id}/reset` }).events).toEqual(modified);
    expect(events({ method: "POST", path: `/areas/${added.id}/forgive`, body: { holderId: "h-bob" } }).events).toEqual(
      modified,
    );
    expect(events({ method: "DELETE", path: `/areas/${added.id}` }).events).toEqual([
      `entity.removed area ${added.id}`,
    ]);
  });

  test("rule bodies take maxThreatLevel and action; a deny rule with a level and an unlock rule that is not a door allow rule are 400 at their path", () => {
    const live = liveOf();
    const rule = {
      type: "door",
      groupId: "g-empty",
      devices: ["d-fan"],
      startTime: "08:00:00",
      stopTime: "18:00:00",
      recurring: ["Mon", "Tue"],
    };
    const id = accept(live, { method: "POST", path: "/rules", body: { ...rule, maxThreatLevel: 3 } }, 201).id!;
    expect(read(live, `/rules/${id}`).body.maxThreatLevel).toBe(3);
    const unlock = accept(live, { method: "POST", path: "/rules", body: { ...rule, action: "unlock" } }, 201).id!;
    expect(read(live, `/rules/${unlock}`).body.action).toBe("unlock");
    accept(live, { method: "PUT", path: `/rules/${unlock}`, body: { ...rule, action: "access" } }, 204);
    expect(
      refuse(live, { method: "POST", path: "/rules", body: { ...rule, allow: false, maxThreatLevel: 2 } }, 400).paths,
    ).toEqual(["body.maxThreatLevel"]);
    expect(
      refuse(live, { method: "POST", path: "/rules", body: { ...rule, allow: false, action: "unlock" } }, 400).paths,
    ).toEqual(["body.action"]);
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: "/rules",
          body: { ...rule, type: "elevator", devices: [], floorGroups: ["f-low"], action: "unlock" },
        },
        400,
      ).paths,
    ).toEqual(["body.action"]);
    expect(
      refuse(live, { method: "PUT", path: `/rules/${id}`, body: { ...rule, maxThreatLevel: 256 } }, 400).paths,
    ).toEqual(["body.maxThreatLevel"]);
  });
});

describe("AB10: a manager's or reporter's view of areas", () => {
  test("holds the areas with a device of its partitions; another area is 404 as an unknown one; forgiven names only its holders", () => {
    const live = liveOf();
    const lobby = accept(live, { method: "POST", path: "/areas", body: LOBBY }, 201).id!;
    const east = accept(live, { method: "POST", path: "/areas", body: { name: "East", entries: ["d-side"] } }, 201).id!;
    for (const h of ["h-ann", "h-cy"])
      accept(live, { method: "POST", path: `/areas/${lobby}/forgive`, body: { holderId: h } }, 204);
    const scope = scopeOf(live.snapshot, { role: "manager", partitions: new Set(["p-default"]) });
    const ctx = (params: Record<string, string>) => ({
      engine: live.engine,
      params,
      query: new URLSearchParams(),
      now: () => NOW,
    });
    const listed = readInScope(reads.areas, scope, ctx({}));
    expect(listed.body).toEqual([{ id: lobby, ...LOBBY, forgiven: { "h-ann": NOW_ISO } }]);
    expect(listed.total).toBe(1);
    expect(() => readInScope(reads.area, scope, ctx({ areaId: east }))).toThrow(LiveRefusal);
    // An admin reads both, and every forgive.
    const all = scopeOf(live.snapshot, { role: "admin", partitions: null });
    expect(readInScope(reads.areas, all, ctx({})).total).toBe(2);
    const whole = readInScope(reads.area, all, ctx({ areaId: lobby })).body as { forgiven: Record<string, string> };
    expect(Object.keys(whole.forgiven).sort()).toEqual(["h-ann", "h-cy"]);
  });
});

describe("TL1 in the live system", () => {
  test("PUT /cloud-nodes/{id}/threat-level sets the level; reads show threatLevel, 0 when none is set; the same level again changes nothing; a node PUT keeps it", () => {
    const live = liveOf();
    expect(read(live, "/cloud-nodes/n-main").body.threatLevel).toBe(0);
    accept(live, { method: "PUT", path: "/cloud-nodes/n-main/threat-level", body: { level: 4 } }, 204);
    expect(read(live, "/cloud-nodes/n-main").body.threatLevel).toBe(4);
    expect(
      read(live, "/cloud-nodes")
        .body.map((n: { id: string; threatLevel: number }) => `${n.id}:${n.threatLevel}`)
        .sort(),
    ).toEqual(["n-annex:0", "n-main:4"]);
    const same = accept(live, { method: "PUT", path: "/cloud-nodes/n-main/threat-level", body: { level: 4 } }, 204);
    expect(same.patches).toEqual([]);
    accept(live, { method: "PUT", path: "/cloud-nodes/n-main", body: { name: "Main", threatLevel: 9 } }, 204);
    expect(read(live, "/cloud-nodes/n-main").body).toMatchObject({ name: "Main", threatLevel: 4 });
    // Back to normal: the node is stored as before any threat.
    accept(live, { method: "PUT", path: "/cloud-nodes/n-main/threat-level", body: { level: 0 } }, 204);
    expect(live.snapshot.cloudNodes.find((n) => n.id === "n-main")).not.toHaveProperty("threatLevel");
    expect(read(live, "/cloud-nodes/n-main").body.threatLevel).toBe(0);
  });

  test("TL1: a level that is not a whole number 0–255 is 400 at body.level; an unknown node 404", () => {
    const live = liveOf();
    const put = (body: unknown, node = "n-main") => ({
      method: "PUT" as const,
      path: `/cloud-nodes/${node}/threat-level`,
      body,
    });
    for (const level of [-1, 256, 2.5, "3", null, true])
      expect(refuse(live, put({ level }), 400).paths, JSON.stringify(level)).toEqual(["body.level"]);
    expect(refuse(live, put({}), 400).paths).toEqual(["body.level"]);
    expect(refuse(live, put({ level: 1, reason: "drill" }), 400).paths).toEqual(["body.reason"]);
    expect(refuse(live, put({ level: 1 }, "n-nope"), 404).paths).toEqual([""]);
  });
});

describe("areas go through the store (AB6: the commands are ordinary writes)", () => {
  test("an area, its reset and its forgive are in a reopened store", async () => {
    const db = join(tempDir(), "data.db");
    const durable = await openDurableSystem(await openSqliteStore(db), {
      initial: { kind: "system", json: building() },
      now: () => NOW,
    });
    const made = await durable.write({ method: "POST", path: "/areas", body: LOBBY });
    expect(made.ok).toBe(true);
    const id = (made as { id: string }).id;
    expect((await durable.write({ method: "POST", path: `/areas/${id}/reset` })).ok).toBe(true);
    const forgive = { method: "POST" as const, path: `/areas/${id}/forgive`, body: { holderId: "h-bob" } };
    expect((await durable.write(forgive)).ok).toBe(true);
    const level = { method: "PUT" as const, path: "/cloud-nodes/n-main/threat-level", body: { level: 2 } };
    expect((await durable.write(level)).ok).toBe(true);
    await durable.close();
    const again = await openDurableSystem(await openSqliteStore(db));
    try {
      const live = again.target.live as unknown as { snapshot: { areas: unknown[]; cloudNodes: unknown[] } };
      expect(live.snapshot.areas).toEqual([{ id, ...LOBBY, lastReset: NOW_ISO, forgiven: { "h-bob": NOW_ISO } }]);
      expect(live.snapshot.cloudNodes).toContainEqual(expect.objectContaining({ id: "n-main", threatLevel: 2 }));
    } finally {
      await again.close();
    }
  });
});

describe("the live engine follows area and threat-level writes (AB1–AB6, TL1; a fresh compile answers the same)", () => {
  // Found by the README example: the live system changes its lists in place, so the compiled system
  // must keep its own copy of each area to notice that a write changed one (updateCompiled).
  test("after each write, decisions with a state equal those of a fresh engine of the snapshot", () => {
    const live = liveOf();
    const state = new AccessState();
    state.enter("never-made", "h-ann", 0);
    const requests = ["d-front", "d-front-out", "d-side"].flatMap((deviceId) =>
      [
        [1001, 10],
        [1002, 20],
      ].map(([credentialNumber, facilityCode]) => ({
        deviceId,
        at: AT,
        credential: { credentialNumber, facilityCode },
      })),
    );
    const same = (what: string) => {
      const fresh = createEngine(live.snapshot);
      for (const r of requests)
        expect(live.engine.decide(r, undefined, state), `${what}: ${JSON.stringify(r)}`).toStrictEqual(
          fresh.decide(r, undefined, state),
        );
      return fresh;
    };
    const lobby = accept(live, { method: "POST", path: "/areas", body: { ...LOBBY, occupancyLimit: 1 } }, 201).id!;
    state.enter(lobby, "h-someone", Date.parse(AT) - 1000);
    expect(same("created").decide(requests[0], undefined, state).reason).toBe("occupancyLimit");
    accept(live, { method: "PUT", path: `/areas/${lobby}`, body: { ...LOBBY, occupancyLimit: 2 } }, 204);
    same("limit raised");
    accept(live, { method: "POST", path: `/areas/${lobby}/reset` }, 204);
    accept(live, { method: "POST", path: `/areas/${lobby}/forgive`, body: { holderId: "h-ann" } }, 204);
    same("reset and forgiven");
    accept(live, { method: "PUT", path: "/cloud-nodes/n-main/threat-level", body: { level: 3 } }, 204);
    expect(same("threat level 3").decide(requests[0]).reason).toBe("threatLevel");
    accept(live, { method: "PUT", path: "/cloud-nodes/n-main/threat-level", body: { level: 0 } }, 204);
    same("threat level back to 0");
    accept(live, { method: "DELETE", path: `/areas/${lobby}` }, 204);
    expect(same("deleted").decide(requests[0], undefined, state).reason).not.toBe("occupancyLimit");
  });
});
