import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { requestIssues } from "../../src/model/index.js";
import { buildRequest, requestSpecArb } from "./request.js";
import { buildSnapshot, snapshotSpecArb } from "./snapshot.js";

const RUNS = Number(process.env.RSOP_PROPERTY_RUNS ?? 300);

describe("request arbitrary", () => {
  test("well-formed specs give requests that pass the request check, malformed ones do not", () => {
    fc.assert(
      fc.property(snapshotSpecArb, fc.array(requestSpecArb, { minLength: 1, maxLength: 8 }), (spec, reqs) => {
        const { meta } = buildSnapshot(spec);
        for (const r of reqs) {
          const req = buildRequest(meta, r);
          const issues = requestIssues(req);
          // A request presenting neither a credential nor a PIN is malformed too (semantics R4).
          const wellFormed = r.malformed === null;
          if (wellFormed) expect(issues, JSON.stringify(req)).toEqual([]);
          else expect(issues.length, JSON.stringify(req)).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS },
    );
  });

  test("requests use the snapshot's devices, credentials and PINs most of the time", () => {
    let total = 0;
    let realDevice = 0;
    let realCredential = 0;
    let wiegand26 = 0;
    for (const [spec, reqs] of fc.sample(
      fc.tuple(snapshotSpecArb, fc.array(requestSpecArb, { minLength: 5, maxLength: 5 })),
      { numRuns: 200, seed: 7 },
    )) {
      const { meta } = buildSnapshot(spec);
      const numbers = new Set(meta.cards.map((c) => c.number));
      for (const r of reqs) {
        const req = buildRequest(meta, r) as Record<string, any> | null;
        total++;
        if (req === null || typeof req !== "object") continue;
        if (meta.devices.some((d) => d.id === req.deviceId)) realDevice++;
        const c = req.credential;
        if (c?.credentialNumber !== undefined && numbers.has(c.credentialNumber)) realCredential++;
        if (typeof c?.wiegand === "string" && c.wiegand.length === 26) wiegand26++;
      }
    }
    expect(realDevice / total).toBeGreaterThan(0.85);
    expect(realCredential / total).toBeGreaterThan(0.1);
    expect(wiegand26 / total).toBeGreaterThan(0.05);
  });
});
