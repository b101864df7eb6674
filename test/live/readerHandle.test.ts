// A reader handle and a batch's indexes across a live system's changes (docs/semantics.md RH5, RH8):
// the handle follows incremental updates and full recompiles, answers unknownDevice once its device
// is deleted; device indexes move when devices are removed.
import { expect, test } from "vitest";
import { AT, accept, liveOf } from "./fixture.js";

const at = Date.parse(AT);

test("RH4 RH8 a handle taken before changes follows them: incremental, a full recompile, its device deleted; indexes move", () => {
  const live = liveOf();
  const front = live.engine.reader("d-front")!;
  const fan = live.engine.reader("d-fan")!;
  expect(front).not.toBeNull();
  expect(live.engine.reader("d-nowhere")).toBeNull();
  const scan = () => front.card(1001, 10, at);
  expect(scan()).toMatchObject({
    outcome: "allowed",
    reason: "allowed",
    holderId: "h-ann",
    activeRuleId: "r-staff-door",
  });

  // Incremental: Ann leaves Staff (the compiled system is changed in place).
  const compiled = live.engine.compiled_;
  accept(live, { method: "DELETE", path: "/holders/h-ann/groups/g-staff" }, 204);
  expect(live.engine.compiled_).toBe(compiled);
  expect(scan()).toMatchObject({ outcome: "denied", reason: "noActiveRule", holderId: "h-ann" });
  accept(live, { method: "PUT", path: "/holders/h-ann/groups/g-staff" }, 204);
  expect(scan()).toMatchObject({ outcome: "allowed", activeRuleId: "r-staff-door" });

  // A device deleted: everything is recompiled; the handle of the deleted device says unknownDevice.
  const indexBefore = live.engine.deviceIndex("d-side");
  accept(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-fan" }, 204);
  expect(live.engine.compiled_).not.toBe(compiled);
  expect({ ...scan() }).toStrictEqual({
    ...live.engine.decide({ deviceId: "d-front", at, credential: { credentialNumber: 1001, facilityCode: 10 } }),
  });
  expect(scan().outcome).toBe("allowed");
  expect(fan.card(1001, 10, at)).toMatchObject({ outcome: "denied", reason: "unknownDevice", holderId: null });
  expect(fan.pin("x1", at).reason).toBe("badRequest"); // a malformed scan stays badRequest, as in decide
  expect(live.engine.deviceIndex("d-fan")).toBe(-1);
  expect(live.engine.deviceIndex("d-side")).toBe(indexBefore); // d-fan came after it

  // A batch against the live engine: indexes from deviceIndex, codes back to names.
  const out = { outcome: new Uint8Array(2), reason: new Uint8Array(2), rule: new Int32Array(2) };
  live.engine.decideBatch(
    {
      device: Uint32Array.of(live.engine.deviceIndex("d-side"), 999),
      card: Float64Array.of(1002, 1002),
      facility: Float64Array.of(20, -1),
      atMs: Float64Array.of(at, at),
    },
    out,
  );
  expect([
    live.engine.outcomeCodes[out.outcome[0]!],
    live.engine.reasonCodes[out.reason[0]!],
    live.engine.ruleId(out.rule[0]!),
  ]).toEqual(["allowed", "allowed", "r-staff-door"]);
  expect([live.engine.outcomeCodes[out.outcome[1]!], live.engine.reasonCodes[out.reason[1]!], out.rule[1]]).toEqual([
    "denied",
    "unknownDevice",
    -1,
  ]);
});

test("RH5 decideBatch refuses columns of the wrong type or too short, before writing anything", () => {
  const engine = liveOf().engine;
  const out = {
    outcome: new Uint8Array(2).fill(9),
    reason: new Uint8Array(2).fill(9),
    rule: new Int32Array(2).fill(9),
  };
  const good = {
    device: Uint32Array.of(0, 0),
    card: Float64Array.of(1, 2),
    facility: Float64Array.of(-1, -1),
    atMs: Float64Array.of(at, at),
  };
  expect(() => engine.decideBatch({ ...good, card: [1, 2] as never }, out)).toThrow(TypeError);
  expect(() => engine.decideBatch({ ...good, facility: Int32Array.of(-1, -1) as never }, out)).toThrow(TypeError);
  expect(() => engine.decideBatch({ ...good, atMs: Float64Array.of(at) }, out)).toThrow(RangeError);
  expect(() => engine.decideBatch(good, { ...out, rule: new Int32Array(1) })).toThrow(RangeError);
  expect([...out.outcome, ...out.reason, ...out.rule]).toEqual([9, 9, 9, 9, 9, 9]);
  engine.decideBatch({ ...good, length: 1 }, out);
  expect(out.reason[1]).toBe(9);
  expect(engine.reasonCodes[out.reason[0]!]).toBe("unknownCredential");
});
