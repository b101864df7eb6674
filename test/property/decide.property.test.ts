// The differential property (STYLE §8): the compiled engine and the reference evaluator agree on every
// field of every decision, for generated snapshots and requests; plus the engine's own contract
// (never throws, fills a caller's `out`, answers the same twice) and a metamorphic property.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type Engine, createEngine } from "../../src/evaluate/index.js";
import { type Decision, outcomeOf } from "../../src/model/index.js";
import { addNoopRule, noopRuleSpecArb, snapshotAndRequestsArb } from "../arbitraries/index.js";
import { decideNaive } from "../reference/decideNaive.js";
import { FIELDS, NUM_RUNS, REPLAY, TIMEOUT, parseOrFail, plain, staleDecision } from "./support.js";

function show(v: unknown): string {
  return JSON.stringify(v);
}

/** Throws a readable report when two decisions differ in any field (or carry extra ones). */
function assertSameDecision(what: string, request: unknown, actual: Decision, expected: Decision): void {
  const a = plain(actual);
  const e = plain(expected);
  const keys = new Set([...Object.keys(a), ...Object.keys(e), ...FIELDS]);
  const diffs = [...keys].filter((k) => show((a as never)[k]) !== show((e as never)[k]));
  if (diffs.length > 0)
    throw new Error(
      `${what}: differs in ${diffs.join(", ")}\n  request:  ${show(request)}\n  ${diffs.map((k) => `${k}: ${show((a as never)[k])} vs ${show((e as never)[k])}`).join("\n  ")}\n  actual:   ${show(a)}\n  expected: ${show(e)}`,
    );
  expect(a).toStrictEqual(e);
}

function decideOrFail(engine: Engine, request: unknown, out?: Decision): Decision {
  try {
    return engine.decide(request, out);
  } catch (e) {
    throw new Error(`engine.decide threw on ${show(request)}: ${(e as Error).stack ?? String(e)}`);
  }
}

describe("decide (differential against decideNaive)", () => {
  test(
    "engine.decide equals decideNaive on every field; never throws; fills out; repeatable",
    () => {
      fc.assert(
        fc.property(snapshotAndRequestsArb(), ({ snapshot: input, requests }) => {
          const snapshot = parseOrFail(input);
          const engine = createEngine(snapshot);
          const reused = staleDecision();
          for (const r of requests) {
            const fast = plain(decideOrFail(engine, r));
            const naive = decideNaive(snapshot, r);
            assertSameDecision("engine vs reference", r, fast, naive);
            if (fast.topic !== `device.request.${fast.outcome}` || fast.outcome !== outcomeOf(fast.reason))
              throw new Error(`inconsistent decision ${show(fast)} for ${show(r)}`);
            assertSameDecision("same request twice", r, decideOrFail(engine, r), fast);
            const out = staleDecision();
            const got = decideOrFail(engine, r, out);
            if (got !== out) throw new Error(`decide(request, out) returned another object for ${show(r)}`);
            assertSameDecision("decide into a stale out object", r, got, fast);
            const again = decideOrFail(engine, r, reused);
            if (again !== reused) throw new Error(`decide(request, out) returned another object for ${show(r)}`);
            assertSameDecision("decide into a reused out object", r, again, fast);
          }
        }),
        { numRuns: NUM_RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );

  test(
    "a rule for a group with no holders changes no decision (engine and reference)",
    () => {
      fc.assert(
        fc.property(
          snapshotAndRequestsArb({ maxRequests: 8 }),
          noopRuleSpecArb,
          ({ snapshot: input, requests }, extra) => {
            const before = parseOrFail(input);
            const after = parseOrFail(addNoopRule(input, extra));
            const engineBefore = createEngine(before);
            const engineAfter = createEngine(after);
            for (const r of requests) {
              assertSameDecision(
                "engine after adding a no-op rule",
                r,
                decideOrFail(engineAfter, r),
                decideOrFail(engineBefore, r),
              );
              assertSameDecision(
                "reference after adding a no-op rule",
                r,
                decideNaive(after, r),
                decideNaive(before, r),
              );
            }
          },
        ),
        { numRuns: Math.ceil(NUM_RUNS / 2), ...REPLAY },
      );
    },
    TIMEOUT,
  );
});
