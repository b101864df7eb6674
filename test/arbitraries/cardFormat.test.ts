import fc from "fast-check";
import { expect, test } from "vitest";
import { decodeWiegand } from "../../src/model/index.js";
import { KNOWN_FORMAT_IDS, cardFormatArb, knownLayout } from "./cardFormat.js";
import { encodeLayout } from "./wiegand.js";

test("the generator draws every well-known card format", () => {
  const ids = new Set(fc.sample(cardFormatArb, { numRuns: 4000, seed: 7 }).map((f) => f.id));
  for (const id of KNOWN_FORMAT_IDS) expect(ids, id).toContain(id);
});

test("the test encoder and the library's decoder agree on every well-known format", () => {
  for (const id of KNOWN_FORMAT_IDS) {
    const layout = knownLayout(id);
    const frame = encodeLayout(layout, layout.parity.reduce((n, p) => Math.max(n, p.mask!.length), 0), 1, 1);
    expect({ id, ...decodeWiegand(id, frame) }).toEqual({ id, facilityCode: layout.facilityCode === null ? null : 1, cardNumber: 1, parityOk: true });
  }
});
