// `rsop decide` writes each 2.0 decision's line as bytes (AnswerBuffer.decision), not with
// JSON.stringify: for generated snapshots and requests (well formed or not), the line is exactly
// `{"line":N,` + the rest of JSON.stringify(decision) and "\n", field for field and in the same
// order — odd ids (quotes, backslashes, control characters, lone surrogates, characters of several
// UTF-8 bytes) and numbers of every kind included, the buffer growing from a few bytes.
import fc from "fast-check";
import { expect, test } from "vitest";
import { AnswerBuffer, decisionHead } from "../../src/adapters/cli/answerBuffer.js";
import { createEngine, newDecision } from "../../src/evaluate/index.js";
import type { Decision } from "../../src/model/index.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import { NUM_RUNS, TIMEOUT } from "./support.js";
import { parseSnapshot } from "../../src/model/index.js";

const expected = (line: number, d: Decision) => `{"line":${line},${JSON.stringify(d).slice(1)}\n`;

test(
  "AnswerBuffer.decision writes JSON.stringify's text of the engine's decisions",
  () => {
    const head = decisionHead();
    fc.assert(
      fc.property(snapshotAndRequestsArb(), fc.nat(1_000_000), ({ snapshot, requests }, line) => {
        const parsed = parseSnapshot(snapshot);
        if (!parsed.ok) return;
        const engine = createEngine(parsed.value);
        const d = newDecision();
        const out = new AnswerBuffer(8);
        let want = "";
        for (const r of requests) {
          engine.decide(r, d);
          out.decision(line, d, head(d));
          want += expected(line, d);
        }
        expect(out.take().toString("utf8")).toBe(want);
      }),
      { numRuns: Math.max(1, Math.floor(NUM_RUNS / 3)) },
    );
  },
  TIMEOUT,
);

test(
  "AnswerBuffer.decision escapes any id and writes any number as JSON.stringify does, in the decision's field order",
  () => {
    const head = decisionHead();
    const id = fc.oneof(
      fc.constant(null),
      fc.string({ unit: "binary" }),
      fc.string({ unit: "grapheme-ascii" }),
      fc.constantFrom('a"b', "a\\b", "\u0000\u001f", "\u007f", "\ud800", "é🚪"),
    );
    const num = fc.oneof(fc.constant(null), fc.nat(), fc.maxSafeNat(), fc.double(), fc.integer());
    const out = new AnswerBuffer(4);
    fc.assert(
      fc.property(
        fc.maxSafeNat(),
        fc.constantFrom(
          ["allowed", "device.request.allowed", "allowed"],
          ["denied", "device.request.denied", "noActiveRule"],
          ["unknown", "device.request.unknown", "nodeOffline"],
        ),
        id,
        id,
        id,
        fc.array(fc.string({ unit: "binary" }), { maxLength: 3 }),
        fc.boolean(),
        num,
        num,
        (
          line,
          [outcome, topic, reason],
          holderId,
          credentialId,
          activeRuleId,
          floors,
          duress,
          facilityCode,
          credentialNumber,
        ) => {
          const d = {
            ...newDecision(),
            outcome,
            topic,
            reason,
            holderId,
            credentialId,
            activeRuleId,
            duress,
            floors,
            facilityCode,
            credentialNumber,
          } as Decision;
          out.decision(line, d, head(d));
          out.line("between");
          expect(out.take().toString("utf8")).toBe(`${expected(line, d)}between\n`);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  },
  TIMEOUT,
);
