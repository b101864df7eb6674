// The differential property (STYLE §8): the compiled engine and the reference evaluator agree on every
// field of every decision, for generated snapshots and requests; plus the engine's own contract
// (never throws, fills a caller's `out`, answers the same twice) and a metamorphic property.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type Engine, createEngine } from "../../src/evaluate/index.js";
import { type Decision, type SystemSnapshot, formatIssues, outcomeOf, parseSnapshot } from "../../src/model/index.js";
import { addNoopRule, noopRuleSpecArb, snapshotAndRequestsArb } from "../arbitraries/index.js";
import { decideNaive } from "../reference/decideNaive.js";

const NUM_RUNS = Number(process.env.RSOP_PROPERTY_RUNS ?? 300);
/** A run costs a few milliseconds; long hunts (RSOP_PROPERTY_RUNS=100000) get the time they need. */
const TIMEOUT = 60_000 + NUM_RUNS * 20;
/**
 * Replays a reported failure: fast-check prints `{ seed, path }`; run with RSOP_PROPERTY_SEED=<seed>
 * RSOP_PROPERTY_PATH=<path> to get the same shrunk counterexample again.
 */
const REPLAY =
  process.env.RSOP_PROPERTY_SEED === undefined
    ? {}
    : { seed: Number(process.env.RSOP_PROPERTY_SEED), ...(process.env.RSOP_PROPERTY_PATH ? { path: process.env.RSOP_PROPERTY_PATH } : {}) };

const FIELDS = ["outcome", "topic", "reason", "holderId", "credentialId", "activeRuleId", "duress", "floors", "facilityCode", "credentialNumber"] as const;

/** A plain copy, so internal classes, frozen or reused arrays never decide the comparison. */
function plain(d: Decision): Decision {
  return { ...d, floors: [...d.floors] };
}

/** A filled-in decision, as a caller reusing one object would pass it. */
function staleDecision(): Decision {
  return {
    outcome: "allowed",
    topic: "device.request.allowed",
    reason: "ecard",
    holderId: "stale-holder",
    credentialId: "stale-credential",
    activeRuleId: "stale-rule",
    duress: true,
    floors: ["stale-floor"],
    facilityCode: 999,
    credentialNumber: 999,
  };
}

function parseOrFail(input: unknown): SystemSnapshot {
  const r = parseSnapshot(input);
  if (!r.ok) throw new Error(`generated snapshot refused:\n${formatIssues(r.issues)}\n${JSON.stringify(input)}`);
  return r.value;
}

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
  test("engine.decide equals decideNaive on every field; never throws; fills out; repeatable", () => {
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
  }, TIMEOUT);

  test("a rule for a group with no holders changes no decision (engine and reference)", () => {
    fc.assert(
      fc.property(snapshotAndRequestsArb({ maxRequests: 8 }), noopRuleSpecArb, ({ snapshot: input, requests }, extra) => {
        const before = parseOrFail(input);
        const after = parseOrFail(addNoopRule(input, extra));
        const engineBefore = createEngine(before);
        const engineAfter = createEngine(after);
        for (const r of requests) {
          assertSameDecision("engine after adding a no-op rule", r, decideOrFail(engineAfter, r), decideOrFail(engineBefore, r));
          assertSameDecision("reference after adding a no-op rule", r, decideNaive(after, r), decideNaive(before, r));
        }
      }),
      { numRuns: Math.ceil(NUM_RUNS / 2), ...REPLAY },
    );
  }, TIMEOUT);
});
