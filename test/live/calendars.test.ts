// ★ Calendars in the live system (docs/semantics.md C7): /calendars list, get, create, update,
// delete like the other resources; rule bodies take `calendar`; a calendar rules follow is not
// deleted (409), nor a partition a calendar is in; writes emit entity events; the engine follows.
import { describe, expect, test } from "vitest";
import { changeEvents } from "../../src/webhooks.js";
import { createEngine } from "../../src/evaluate/index.js";
import { accept, liveOf, read, refuse, scan } from "./fixture.js";

const WEEK = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
/** 2026-04-15 (the fixture's AT, a Wednesday, system zone UTC) is the holiday. */
const HOLIDAYS = { name: "Holidays", dates: ["2026-04-15"], recurring: [{ month: 12, day: 25 }] };

/** Cy (card 3003) through a rule at d-fan that follows `calendar`; returns the live system and ids. */
function withRule(calendar?: (id: string) => unknown) {
  const live = liveOf();
  accept(
    live,
    { method: "POST", path: "/holders/h-cy/credentials", body: { types: ["card"], credentialNumber: 3003 } },
    201,
  );
  const cal = accept(live, { method: "POST", path: "/calendars", body: HOLIDAYS }, 201).id!;
  const rule = {
    type: "door",
    groupId: "g-empty",
    devices: ["d-fan"],
    startTime: "00:00:00",
    stopTime: "24:00:00",
    recurring: WEEK,
    ...(calendar === undefined ? {} : { calendar: calendar(cal) }),
  };
  const r = accept(live, { method: "POST", path: "/rules", body: rule }, 201).id!;
  return { live, cal, r, rule };
}

describe("calendars (C7)", () => {
  test("POST 201 {id} with the defaults; GET one and the list (search, paging); PUT replaces; DELETE 204", () => {
    const { live, cal } = withRule();
    expect(read(live, `/calendars/${cal}`).body).toEqual({ id: cal, partition: null, ...HOLIDAYS });
    const other = accept(
      live,
      { method: "POST", path: "/calendars", body: { name: "Shutdown", partition: "p-east" } },
      201,
    );
    expect(
      read(live, "/calendars")
        .body.map((c: { name: string }) => c.name)
        .sort(),
    ).toEqual(["Holidays", "Shutdown"]);
    expect(read(live, "/calendars?search=shut").body).toEqual([
      { id: other.id, name: "Shutdown", partition: "p-east", dates: [], recurring: [] },
    ]);
    expect(read(live, "/calendars?per_page=1&page=1").total).toBe(2);
    accept(live, { method: "PUT", path: `/calendars/${cal}`, body: { name: "Closed", dates: ["2026-01-01"] } }, 204);
    expect(read(live, `/calendars/${cal}`).body).toEqual({
      id: cal,
      name: "Closed",
      partition: null,
      dates: ["2026-01-01"],
      recurring: [],
    });
    accept(live, { method: "DELETE", path: `/calendars/${other.id}` }, 204);
    expect(refuse(live, { method: "GET", path: `/calendars/${other.id}` }, 404).paths).toEqual([""]);
  });

  test("every problem of a body at once, under body; unknown fields and ids refused; 404 for an unknown calendar", () => {
    const live = liveOf();
    const r = refuse(
      live,
      {
        method: "POST",
        path: "/calendars",
        body: { name: "", dates: ["2026-02-30"], recurring: [{ month: 4, day: 31 }], id: "x", colour: "red" },
      },
      400,
    );
    expect(r.paths.sort()).toEqual(["body.colour", "body.dates.0", "body.id", "body.name", "body.recurring.0.day"]);
    expect(refuse(live, { method: "PUT", path: "/calendars/nope", body: { name: "N" } }, 404).paths).toEqual([""]);
    expect(
      refuse(live, { method: "POST", path: "/calendars", body: { name: "P", partition: "p-nope" } }, 400).paths,
    ).toEqual(["body.partition"]);
  });

  test("C2: a rule body takes `calendar`; the engine follows the calendar and its changes", () => {
    const { live, cal, r, rule } = withRule((id) => ({ id, mode: "exclude" }));
    expect(read(live, `/rules/${r}`).body.calendar).toEqual({ id: cal, mode: "exclude" });
    expect(scan(live, "d-fan", 3003)).toMatchObject({ outcome: "denied", reason: "noActiveRule" });
    expect(scan(live, "d-fan", 3003, undefined, "2026-04-16T12:00:00Z")).toMatchObject({ outcome: "allowed" });
    // The calendar changes: the holiday moves to the 16th (the engine recompiles).
    accept(live, { method: "PUT", path: `/calendars/${cal}`, body: { name: "Holidays", dates: ["2026-04-16"] } }, 204);
    expect(scan(live, "d-fan", 3003)).toMatchObject({ outcome: "allowed", activeRuleId: r });
    expect(scan(live, "d-fan", 3003, undefined, "2026-04-16T12:00:00Z")).toMatchObject({ outcome: "denied" });
    // The rule switches to `only`.
    accept(live, { method: "PUT", path: `/rules/${r}`, body: { ...rule, calendar: { id: cal, mode: "only" } } }, 204);
    expect(scan(live, "d-fan", 3003)).toMatchObject({ outcome: "denied" });
    expect(scan(live, "d-fan", 3003, undefined, "2026-04-16T12:00:00Z")).toMatchObject({ outcome: "allowed" });
    // The live engine decides as a fresh compile of the same snapshot.
    const fresh = createEngine(live.snapshot);
    for (const at of ["2026-04-15T12:00:00Z", "2026-04-16T12:00:00Z"])
      expect(live.engine.decide({ deviceId: "d-fan", at, credential: { credentialNumber: 3003 } })).toEqual(
        fresh.decide({ deviceId: "d-fan", at, credential: { credentialNumber: 3003 } }),
      );
  });

  test("a rule naming an unknown calendar or mode is refused under body", () => {
    const { live, rule } = withRule();
    expect(
      refuse(
        live,
        { method: "POST", path: "/rules", body: { ...rule, calendar: { id: "nope", mode: "exclude" } } },
        400,
      ).paths,
    ).toEqual(["body.calendar.id"]);
    expect(
      refuse(live, { method: "POST", path: "/rules", body: { ...rule, calendar: { id: "x", mode: "never" } } }, 400)
        .paths,
    ).toEqual(["body.calendar.mode"]);
  });

  test("409: a calendar that rules follow is not deleted (naming each rule); nor a partition a calendar is in", () => {
    const { live, cal, r } = withRule((id) => ({ id, mode: "exclude" }));
    const refused = refuse(live, { method: "DELETE", path: `/calendars/${cal}` }, 409);
    expect(refused.paths).toHaveLength(1);
    expect(refused.paths[0]).toMatch(/^rules\.\d+\.calendar\.id$/);
    expect(refused.issues[0]!.message).toContain(`Rule "${r}" follows calendar "${cal}"`);
    accept(live, { method: "DELETE", path: `/rules/${r}` }, 204);
    accept(live, { method: "DELETE", path: `/calendars/${cal}` }, 204);
    const east = accept(live, { method: "POST", path: "/calendars", body: { name: "East", partition: "p-east" } }, 201);
    const p = refuse(live, { method: "DELETE", path: "/partitions/p-east" }, 409);
    expect(p.issues.map((i) => i.message)).toContain(`Calendar "${east.id}" is in partition "p-east".`);
  });

  test("W6: calendar writes emit entity.added, entity.modified and entity.removed of type calendar", () => {
    const live = liveOf();
    const events = (op: { method: "POST" | "PUT" | "DELETE"; path: string; body?: unknown }) => {
      const before = live.snapshot;
      const r = live.apply(op);
      if (!r.ok || !("patches" in r)) throw new Error(`${op.method} ${op.path} refused`);
      return {
        id: r.id,
        events: changeEvents({ before, after: live.snapshot, patches: r.patches, occurredAt: "t" }).map(
          (e) => `${e.topic} ${e.entityType} ${String(e.entityId)}`,
        ),
      };
    };
    const added = events({ method: "POST", path: "/calendars", body: HOLIDAYS });
    expect(added.events).toEqual([`entity.added calendar ${added.id}`]);
    expect(events({ method: "PUT", path: `/calendars/${added.id}`, body: { name: "H" } }).events).toEqual([
      `entity.modified calendar ${added.id}`,
    ]);
    expect(events({ method: "DELETE", path: `/calendars/${added.id}` }).events).toEqual([
      `entity.removed calendar ${added.id}`,
    ]);
  });
});
