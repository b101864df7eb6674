// Calendars in the differential properties (docs/semantics.md C1–C4): with generated calendars (dense
// yearly dates, DST days, random dates) and rules that follow them (exclude or only), the engine
// equals the naive reference on every decision field, and RSOP's `active` equals the reference's
// window (system zone for system-wide RSOP, the node's zone for node-scoped RSOP).
import fc from "fast-check";
import { describe, test } from "vitest";
import { createEngine } from "../../src/evaluate/index.js";
import {
  atSpecArb,
  buildSnapshot,
  calendarSnapshotSpecArb,
  resolveAt,
  snapshotAndRequestsArb,
} from "../arbitraries/index.js";
import { decideNaive, naiveRuleActive } from "../reference/decideNaive.js";
import { NUM_RUNS, REPLAY, TIMEOUT, parseOrFail, plain } from "./support.js";

describe("calendars (differential against the reference)", () => {
  test(
    "C2, C3: engine.decide equals decideNaive on every field when rules follow calendars",
    () => {
      let withCalendar = 0;
      fc.assert(
        fc.property(snapshotAndRequestsArb({ calendars: true }), ({ snapshot: input, requests }) => {
          const snapshot = parseOrFail(input);
          const engine = createEngine(snapshot);
          if (snapshot.rules.some((r) => r.calendar)) withCalendar++;
          for (const r of requests) {
            const fast = plain(engine.decide(r));
            const naive = plain(decideNaive(snapshot, r));
            if (JSON.stringify(fast) !== JSON.stringify(naive))
              throw new Error(
                `differs for ${JSON.stringify(r)}:\n  engine    ${JSON.stringify(fast)}\n  reference ${JSON.stringify(naive)}`,
              );
          }
        }),
        { numRuns: NUM_RUNS, ...REPLAY },
      );
      if (withCalendar === 0) throw new Error("no generated snapshot had a rule with a calendar");
    },
    TIMEOUT,
  );

  test(
    "C4: RSOP `active` equals the reference window, system-wide and node-scoped",
    () => {
      fc.assert(
        fc.property(calendarSnapshotSpecArb, atSpecArb, fc.nat(), (spec, atSpec, pick) => {
          const built = buildSnapshot(spec);
          const snapshot = parseOrFail(built.input);
          if (snapshot.holders.length === 0) return;
          const devices = built.meta.devices;
          const at = resolveAt(atSpec, built.meta, devices.length === 0 ? null : devices[pick % devices.length]!);
          const engine = createEngine(snapshot);
          const ids = snapshot.holders.map((h) => h.id);
          const check = (zone: string, cloudNodeId?: string) => {
            const result = engine.rsop(ids, cloudNodeId === undefined ? { at } : { at, cloudNodeId });
            for (const h of result.holders)
              for (const r of h.rules) {
                const rule = snapshot.rules.find((x) => x.id === r.id)!;
                const want = naiveRuleActive(snapshot, rule, at, zone);
                if (r.active !== want)
                  throw new Error(`rule ${r.id} at ${at} in ${zone}: active ${r.active}, reference ${want}`);
              }
          };
          check(snapshot.timezone);
          const node = snapshot.cloudNodes[pick % snapshot.cloudNodes.length]!;
          check(node.timezone, node.id);
        }),
        { numRuns: NUM_RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );
});
