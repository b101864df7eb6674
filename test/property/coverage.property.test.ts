// The differential property is only as good as the decisions its inputs reach. This pins that the
// generators reach every reason code of SPEC §3 (judged by the reference evaluator alone), with a
// fixed seed so the check is deterministic.
import fc from "fast-check";
import { expect, test } from "vitest";
import { REASONS, parseSnapshot } from "../../src/model/index.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import { decideNaive } from "../reference/decideNaive.js";

test("generated requests reach every reason code, each several times", () => {
  const count = new Map<string, number>(REASONS.map((r) => [r, 0]));
  let duress = 0;
  let floors = 0;
  for (const { snapshot, requests } of fc.sample(snapshotAndRequestsArb(), { numRuns: 400, seed: 20_261_121 })) {
    const parsed = parseSnapshot(snapshot);
    if (!parsed.ok) throw new Error("generated snapshot refused");
    for (const r of requests) {
      const d = decideNaive(parsed.value, r);
      count.set(d.reason, (count.get(d.reason) ?? 0) + 1);
      if (d.duress) duress++;
      if (d.floors.length > 1) floors++;
    }
  }
  const rare = [...count].filter(([, n]) => n < 3).map(([r, n]) => `${r}: ${n}`);
  expect(rare).toEqual([]);
  expect(duress).toBeGreaterThan(10);
  expect(floors).toBeGreaterThan(3);
});
