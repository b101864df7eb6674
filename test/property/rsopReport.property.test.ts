// Issue 17: the RSOP report is engine.rsop entry for entry — one row per holder × device, then per
// floor group, in the holder report's order, with the same `allowed` and `activeRuleId`.
import fc from "fast-check";
import { expect, test } from "vitest";
import { createEngine } from "../../src/evaluate/index.js";
import { formatIssues, parseSnapshot } from "../../src/model/index.js";
import { rsopReport } from "../../src/reports/index.js";
import { atSpecArb, builtSnapshotArb, resolveAt } from "../arbitraries/index.js";

const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 100
    : Math.max(100, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 50));

test("rsopReport equals engine.rsop entry for entry", () => {
  fc.assert(
    fc.property(builtSnapshotArb, atSpecArb, (built, spec) => {
      const at = resolveAt(spec, built.meta, null);
      const parsed = parseSnapshot(built.input);
      if (!parsed.ok) throw new Error(formatIssues(parsed.issues));
      const engine = createEngine(parsed.value);
      const r = rsopReport(engine, { at });
      if (!r.ok) throw new Error(formatIssues(r.issues));
      // Holders in report order, then each holder's RSOP devices and floor groups in RSOP order.
      const holders = [...parsed.value.holders].sort((a, b) =>
        a.lastName !== b.lastName
          ? a.lastName < b.lastName
            ? -1
            : 1
          : a.firstName !== b.firstName
            ? a.firstName < b.firstName
              ? -1
              : 1
            : a.id < b.id
              ? -1
              : a.id > b.id
                ? 1
                : 0,
      );
      const rsop = engine.rsop(
        holders.map((h) => h.id),
        { at },
      );
      const expected = rsop.holders.flatMap((e, k) => [
        ...e.devices.map((d) => ({
          holderId: e.id,
          firstName: holders[k]!.firstName,
          lastName: holders[k]!.lastName,
          deviceId: d.id,
          floorGroupId: null,
          deviceName: d.name,
          cloudNode: d.cloudNode.name,
          allowed: d.allowed,
          activeRuleId: d.activeRuleId,
        })),
        ...e.floorGroups.map((f) => ({
          holderId: e.id,
          firstName: holders[k]!.firstName,
          lastName: holders[k]!.lastName,
          deviceId: null,
          floorGroupId: f.id,
          deviceName: f.name,
          cloudNode: f.readerPort.cloudNode.name,
          allowed: f.allowed,
          activeRuleId: f.activeRuleId,
        })),
      ]);
      expect(r.value.map(({ ruleName: _n, ...row }) => row)).toEqual(expected);
      for (const row of r.value)
        expect(row.ruleName).toBe(
          row.activeRuleId === null ? null : (parsed.value.rules.find((x) => x.id === row.activeRuleId)!.name ?? null),
        );
    }),
    { numRuns: NUM_RUNS },
  );
}, 120_000);
