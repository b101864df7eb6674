// The differential property is only as good as the decisions its inputs reach. This pins that the
// generators reach every reason code of SPEC §3 (judged by the reference evaluator alone), with a
// fixed seed so the check is deterministic.
import fc from "fast-check";
import { expect, test } from "vitest";
import {
  type CardFormat,
  KNOWN_CARD_FORMATS,
  REASONS,
  type SystemSnapshot,
  parseSnapshot,
} from "../../src/model/index.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import { NaiveAccessState, decideNaive } from "../reference/decideNaive.js";
import { stateCaseArb } from "./support.js";

/** How the format that reads a Wiegand request decodes (SPEC §5), or null for any other request. */
function formatKind(snapshot: SystemSnapshot, request: unknown): string | null {
  const r = request as { deviceId?: unknown; credential?: { wiegand?: unknown } } | null;
  if (r === null || typeof r !== "object" || typeof r.credential?.wiegand !== "string") return null;
  const length = r.credential.wiegand.length;
  const device = snapshot.devices.find((d) => d.id === r.deviceId);
  const node = snapshot.cloudNodes.find((n) => n.id === device?.cloudNode);
  const f: CardFormat | undefined = node?.cardFormat.find(
    (x) => x.min_input_bits <= length && length <= x.max_input_bits,
  );
  if (f === undefined) return null;
  if (typeof f.layout === "string") return "layout name";
  if (f.layout !== null) return "custom layout";
  return Object.hasOwn(KNOWN_CARD_FORMATS, f.id) ? "well-known id" : "raw";
}

test("Wiegand reads through every kind of card format (SPEC §5) reach allowed and denied decisions", () => {
  const reasons = new Map<string, Set<string>>();
  // An allowed read through a custom layout is rare (0–5 in 400 samples): 1,500 reach every kind.
  for (const { snapshot, requests } of fc.sample(snapshotAndRequestsArb(), { numRuns: 1500, seed: 20_261_121 })) {
    const parsed = parseSnapshot(snapshot);
    if (!parsed.ok) throw new Error("generated snapshot refused");
    for (const r of requests) {
      const kind = formatKind(parsed.value, r);
      if (kind === null) continue;
      if (!reasons.has(kind)) reasons.set(kind, new Set());
      reasons.get(kind)!.add(decideNaive(parsed.value, r).reason);
    }
  }
  for (const kind of ["well-known id", "layout name", "custom layout", "raw"])
    expect([kind, [...(reasons.get(kind) ?? [])].includes("allowed")]).toEqual([kind, true]);
  // A raw read has no facility code and no parity (semantics S17).
  const raw = reasons.get("raw")!;
  expect(["unknownCredential", "facilityCodeMismatch", "facilityCodeNotAllowed"].filter((r) => !raw.has(r))).toEqual(
    [],
  );
  expect(raw.has("parityError")).toBe(false);
  expect(reasons.get("layout name")!.has("parityError")).toBe(true);
});

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
  // The reasons of SPEC §15 need threat levels, areas and a state (docs/semantics.md TL2, AB2–AB5):
  // the door-state generator reaches them.
  for (const c of fc.sample(stateCaseArb({ calendars: true, doorStates: true }), { numRuns: 400, seed: 20_261_121 })) {
    const parsed = parseSnapshot(c.snapshot);
    if (!parsed.ok) throw new Error("generated snapshot refused");
    const state = NaiveAccessState.from(c.state);
    for (const r of c.requests) {
      const reason = decideNaive(parsed.value, r, state).reason;
      count.set(reason, (count.get(reason) ?? 0) + 1);
    }
  }
  const rare = [...count].filter(([, n]) => n < 3).map(([r, n]) => `${r}: ${n}`);
  expect(rare).toEqual([]);
  expect(duress).toBeGreaterThan(10);
  expect(floors).toBeGreaterThan(3);
});
