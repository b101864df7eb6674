// explain is decide with a trace sink: its decision equals decide's on every field, for generated
// snapshots and requests, and its trace agrees with that decision (the step that decided, the
// deciding rule among the candidates it lists).
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createEngine } from "../../src/evaluate/index.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import { FIELDS, NUM_RUNS, REPLAY, TIMEOUT, parseOrFail, plain } from "./support.js";

describe("explain", () => {
  test(
    "explain's decision equals decide's on every field, and its trace ends in it",
    () => {
      fc.assert(
        fc.property(snapshotAndRequestsArb(), ({ snapshot: input, requests }) => {
          const engine = createEngine(parseOrFail(input));
          for (const r of requests) {
            const decided = plain(engine.decide(r));
            const { decision, trace } = engine.explain(r);
            const explained = plain(decision);
            const diffs = FIELDS.filter((k) => JSON.stringify(explained[k]) !== JSON.stringify(decided[k]));
            if (diffs.length > 0)
              throw new Error(
                `explain differs from decide in ${diffs.join(", ")} for ${JSON.stringify(r)}:\n${JSON.stringify(explained)}\n${JSON.stringify(decided)}`,
              );
            expect(explained).toStrictEqual(decided);

            // The trace: JSON, steps in evaluation order, one deciding step, then the decision itself.
            expect(JSON.parse(JSON.stringify(trace))).toStrictEqual(trace);
            const last = trace.at(-1)!;
            expect(last.step).toBe("decision");
            expect(last.details).toStrictEqual(decided);
            const deciding = trace.filter((s) => s.step !== "decision" && s.decided !== null);
            expect(deciding.map((s) => s.decided)).toStrictEqual([decided.reason]);
            expect(trace.at(-2)).toBe(deciding[0]);
            const order = [
              "request",
              "device",
              "read",
              "fallback",
              "credential",
              "holder",
              "rules",
              "policy",
              "decision",
            ];
            const positions = trace.map((s) => order.indexOf(s.step));
            expect(positions).toStrictEqual([...positions].sort((a, b) => a - b));

            // The rules step lists the candidates decide chose from: the deciding rule is the
            // smallest applicable one of its kind.
            const rules = trace.find((s) => s.step === "rules");
            if (rules !== undefined) {
              const candidates = rules.details.candidates as {
                ruleId: string;
                allow: boolean;
                applicable: boolean;
                acceptsFactors: boolean | null;
              }[];
              const deny = candidates.filter((c) => !c.allow && c.applicable).map((c) => c.ruleId);
              const allow = candidates.filter((c) => c.allow && c.applicable);
              if (decided.reason === "deniedByRule") expect(decided.activeRuleId).toBe(deny[0]);
              else expect(deny).toEqual([]);
              if (decided.outcome === "allowed" && decided.reason !== "ecard")
                expect(decided.activeRuleId).toBe(allow.find((c) => c.acceptsFactors)?.ruleId);
              if (["wrongPin", "pinRequired", "cardRequired"].includes(decided.reason)) {
                expect(allow.some((c) => c.acceptsFactors)).toBe(false);
                expect(decided.activeRuleId).toBe(allow[0]?.ruleId);
              }
              if (decided.reason === "noActiveRule" || decided.reason === "offlineNot24x7") expect(allow).toEqual([]);
            }
          }
        }),
        { numRuns: NUM_RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );
});
