// Issue 4's properties: RSOP, who-can-access and access windows never disagree with decide.
// The oracle for "what would decide answer" is decide itself, fed the scan of docs/semantics.md Q1:
// a credential of the holder that the device accepts, card alone, then card + PIN on pinRequired.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type Engine, createEngine } from "../../src/evaluate/index.js";
import { type Decision, type SystemSnapshot, formatIssues, parseSnapshot } from "../../src/model/index.js";
import { type BuiltSnapshot, atSpecArb, builtSnapshotArb, resolveAt } from "../arbitraries/index.js";
import { NOT_ACCEPTED } from "./support.js";

// One run here computes RSOP for every holder and replays each entry through decide (~27 ms a run,
// against ~2.6 ms for the decide differential property), so long hunts scale these properties to
// 1/50 of RSOP_PROPERTY_RUNS: 1,000,000 runs of the differential property mean 20,000 here.
const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 150
    : Math.max(150, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 50));
const TIMEOUT = 60_000 + NUM_RUNS * 200; // generous: the machine may be shared

function parseOrFail(input: unknown): SystemSnapshot {
  const r = parseSnapshot(input);
  if (!r.ok) throw new Error(`generated snapshot refused:\n${formatIssues(r.issues)}`);
  return r.value;
}

/** Every way the holder could present one of their credentials at the device. */
function presentations(snap: SystemSnapshot, holderId: string, deviceId: string): Record<string, unknown>[] {
  const h = snap.holders.find((x) => x.id === holderId)!;
  const d = snap.devices.find((x) => x.id === deviceId)!;
  const inputs = d.inputTypes.includes("encryptedOsdp") ? ["encryptedOsdp", ...d.inputTypes] : [...d.inputTypes];
  const out: Record<string, unknown>[] = [];
  for (const c of h.credentials) {
    for (const input of inputs) {
      if (c.types.includes("card"))
        out.push({ input, credential: { credentialNumber: c.credentialNumber, facilityCode: c.facilityCode } });
      else
        for (const mobile of ["touch", "token"])
          if (c.types.includes(mobile as "touch")) out.push({ input, credential: { mobile, credentialId: c.id } });
    }
  }
  return out;
}

/** What decide answers for the Q1 scan, or null when the holder has no credential the device accepts. */
function scanByDecide(engine: Engine, holderId: string, deviceId: string, at: number): Decision | null {
  const snap = engine.snapshot;
  const h = snap.holders.find((x) => x.id === holderId)!;
  for (const p of presentations(snap, holderId, deviceId)) {
    const first = engine.decide({ deviceId, at, ...p });
    if (NOT_ACCEPTED.has(first.reason)) continue;
    expect(first.holderId).toBe(holderId);
    const pin = h.pin ?? h.duressPin;
    if (first.reason === "pinRequired" && pin !== null) return engine.decide({ deviceId, at, ...p, pin });
    return first;
  }
  return null;
}

const caseArb = fc.record({
  built: builtSnapshotArb,
  at: atSpecArb,
  holderPick: fc.nat(),
  spanMinutes: fc.integer({ min: 1, max: 4 * 24 * 60 }),
  probes: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
});

function instantFor(built: BuiltSnapshot, spec: Parameters<typeof resolveAt>[0], pick: number): number {
  const devices = built.meta.devices;
  const device = devices.length === 0 ? null : devices[pick % devices.length]!;
  return resolveAt(spec, built.meta, device);
}

describe("RSOP agrees with decide", () => {
  test(
    "devices[].allowed/activeRuleId and floorGroups[] equal decide's answer for the Q1 scan",
    () => {
      const seen = { compared: 0, allowed: 0, floors: 0 };
      fc.assert(
        fc.property(caseArb, ({ built, at: atSpec, holderPick }) => {
          const snap = parseOrFail(built.input);
          const engine = createEngine(snap);
          const at = instantFor(built, atSpec, holderPick);
          if (snap.holders.length === 0) return;
          const result = engine.rsop(
            snap.holders.map((h) => h.id),
            { at },
          );
          expect(result.holders.map((h) => h.id)).toEqual(snap.holders.map((h) => h.id));
          for (const rh of result.holders) {
            for (const d of rh.devices) {
              const expected = scanByDecide(engine, rh.id, d.id, at);
              if (expected === null) continue;
              seen.compared++;
              if (d.allowed) seen.allowed++;
              expect({ holder: rh.id, device: d.id, allowed: d.allowed, activeRuleId: d.activeRuleId }).toEqual({
                holder: rh.id,
                device: d.id,
                allowed: expected.outcome === "allowed",
                activeRuleId: expected.activeRuleId,
              });
            }
            const readers = new Set(rh.floorGroups.map((fg) => fg.readerPort.id));
            for (const reader of readers) {
              const expected = scanByDecide(engine, rh.id, reader, at);
              if (expected === null) continue;
              const here = rh.floorGroups.filter((fg) => fg.readerPort.id === reader);
              seen.floors++;
              const union = [
                ...new Set(here.filter((fg) => fg.allowed).flatMap((fg) => fg.floors.map((f) => f.id))),
              ].sort();
              expect({ holder: rh.id, reader, floors: union }).toEqual({
                holder: rh.id,
                reader,
                floors: [...expected.floors],
              });
              for (const fg of here) {
                if (fg.allowed) expect(expected.outcome).toBe("allowed");
                // An allowed floor group names an accepting rule that reaches it; a closed one names none.
                expect(fg.activeRuleId === null).toBe(!fg.allowed);
              }
            }
          }
        }),
        { numRuns: NUM_RUNS },
      );
      // Not vacuous: most runs compare doors, some of them allowed, and elevator readers.
      expect(seen.compared).toBeGreaterThan(NUM_RUNS);
      expect(seen.allowed).toBeGreaterThan(NUM_RUNS / 10);
      expect(seen.floors).toBeGreaterThan(NUM_RUNS / 10);
    },
    TIMEOUT,
  );

  test(
    "whoCanAccess(d, t) is exactly the holders whose RSOP at t has d allowed, with the same rule",
    () => {
      let entries = 0;
      fc.assert(
        fc.property(caseArb, ({ built, at: atSpec, holderPick }) => {
          const snap = parseOrFail(built.input);
          const engine = createEngine(snap);
          const at = instantFor(built, atSpec, holderPick);
          const rsop = engine.rsop(
            snap.holders.map((h) => h.id),
            { at },
          );
          for (const device of snap.devices) {
            if (device.type === "floorRelay") continue;
            const who = engine
              .whoCanAccess(device.id, { at })
              .holders.map((h) => ({ id: h.holderId, rule: h.activeRuleId }));
            entries += who.length;
            const fromRsop = rsop.holders
              .flatMap((h) =>
                h.devices
                  .filter((d) => d.id === device.id && d.allowed)
                  .map((d) => ({ id: h.id, rule: d.activeRuleId })),
              )
              .sort((a, b) => (a.id < b.id ? -1 : 1));
            if (device.type === "elevatorReader" || device.type === "additionalElevatorReader") {
              const ids = rsop.holders
                .filter((h) => h.floorGroups.some((fg) => fg.readerPort.id === device.id && fg.allowed))
                .map((h) => h.id);
              expect(who.map((w) => w.id)).toEqual([...ids].sort());
            } else expect(who).toEqual(fromRsop);
          }
          for (const fg of snap.floorGroups) {
            const who = engine
              .whoCanAccessFloorGroup(fg.id, { at })
              .holders.map((h) => ({ id: h.holderId, rule: h.activeRuleId }));
            const fromRsop = rsop.holders
              .flatMap((h) =>
                h.floorGroups
                  .filter((x) => x.id === fg.id && x.allowed)
                  .map((x) => ({ id: h.id, rule: x.activeRuleId })),
              )
              .sort((a, b) => (a.id < b.id ? -1 : 1));
            expect(who).toEqual(fromRsop);
          }
        }),
        { numRuns: NUM_RUNS },
      );
      expect(entries).toBeGreaterThan(NUM_RUNS / 5);
    },
    TIMEOUT,
  );
});

describe("accessWindows agrees with decide", () => {
  test(
    "inside every interval, at both edges, and at random instants of the period",
    () => {
      const seen = { checks: 0, windows: 0 };
      fc.assert(
        fc.property(caseArb, ({ built, at: atSpec, holderPick, spanMinutes, probes }) => {
          const snap = parseOrFail(built.input);
          const engine = createEngine(snap);
          if (snap.holders.length === 0) return;
          const from = Math.max(0, Math.min(instantFor(built, atSpec, holderPick), 4_102_444_800_000 - 5 * 86_400_000));
          const to = from + spanMinutes * 60_000;
          const holder = snap.holders[holderPick % snap.holders.length]!;
          for (const device of snap.devices) {
            if (device.type === "floorRelay") continue;
            const { windows } = engine.accessWindows(holder.id, device.id, { from, to });
            seen.windows += windows.length;
            const ranges = windows.map((w) => ({
              start: Date.parse(w.start),
              end: Date.parse(w.end),
              rule: w.activeRuleId,
            }));
            const expectedAt = (t: number) => {
              const inside = ranges.find((r) => r.start <= t && t < r.end);
              return inside === undefined ? { allowed: false } : { allowed: true, rule: inside.rule };
            };
            const check = (t: number) => {
              const d = scanByDecide(engine, holder.id, device.id, t);
              if (d === null) return;
              seen.checks++;
              const got = d.outcome === "allowed" ? { allowed: true, rule: d.activeRuleId } : { allowed: false };
              expect({ t: new Date(t).toISOString(), ...got }).toEqual({
                t: new Date(t).toISOString(),
                ...expectedAt(t),
              });
            };
            for (const r of ranges) {
              check(r.start);
              check(r.end - 1);
              if (r.end < to) check(r.end);
            }
            for (const p of probes) check(from + Math.floor(p * (to - from - 1)));
          }
        }),
        { numRuns: NUM_RUNS },
      );
      expect(seen.checks).toBeGreaterThan(NUM_RUNS);
      expect(seen.windows).toBeGreaterThan(NUM_RUNS / 5);
    },
    TIMEOUT,
  );
});
