// `rsop decide` writes each 2.0 decision's line with decisionLine, not JSON.stringify: for generated
// snapshots and requests (well formed or not), the line is exactly `{"line":N,` + the rest of
// JSON.stringify(decision), field for field and in the same order — odd ids (quotes, backslashes,
// control characters, lone surrogates) included.
import fc from "fast-check";
import { expect, test } from "vitest";
import { decisionLine } from "../../src/adapters/cli/decideCommand.js";
import { createEngine, newDecision } from "../../src/evaluate/index.js";
import type { Decision } from "../../src/model/index.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import { NUM_RUNS, TIMEOUT } from "./support.js";
import { parseSnapshot } from "../../src/model/index.js";


test("decisionLine equals JSON.stringify of the decision, for the engine's decisions", () => {
  const toLine = decisionLine();
  fc.assert(
    fc.property(snapshotAndRequestsArb(), fc.nat(1_000_000), ({ snapshot, requests }, line) => {
      const parsed = parseSnapshot(snapshot);
      if (!parsed.ok) return;
      const engine = createEngine(parsed.value);
      const out = newDecision();
      for (const r of requests) {
        const d = engine.decide(r, out);
        expect(toLine(line, d)).toBe(`{"line":${line},${JSON.stringify(d).slice(1)}`);
      }
    }),
    { numRuns: Math.max(1, Math.floor(NUM_RUNS / 3)) },
  );
}, TIMEOUT);

test("decisionLine escapes any id as JSON.stringify does, and keeps the decision's field order", () => {
  const toLine = decisionLine();
  const id = fc.oneof(fc.constant(null), fc.string({ unit: "binary" }), fc.constantFrom('a"b', "a\\b", "\u0000\u001f", "\ud800", "é🚪"));
  fc.assert(
    fc.property(id, id, id, fc.array(fc.string({ unit: "binary" }), { maxLength: 3 }), fc.boolean(), fc.oneof(fc.constant(null), fc.nat()), fc.oneof(fc.constant(null), fc.nat()), (holderId, credentialId, activeRuleId, floors, duress, facilityCode, credentialNumber) => {
      const d = { ...newDecision(), outcome: "allowed", topic: "device.request.allowed", reason: "allowed", holderId, credentialId, activeRuleId, duress, floors, facilityCode, credentialNumber };
      expect(toLine(7, d as Decision)).toBe(`{"line":7,${JSON.stringify(d).slice(1)}`);
    }),
    { numRuns: NUM_RUNS },
  );
}, TIMEOUT);
