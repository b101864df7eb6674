// The live 1.0 panel's differential property: for random panels and random seed 002 operation
// sequences, after every accepted operation the live PanelEngine equals a fresh loadPanelEngine of
// the resulting panel (decisions and RSOP); a refused operation changes nothing; inverse patches
// restore the previous panel exactly; replaying the patches on a second live panel reaches the
// same state.
import fc from "fast-check";
import { applyPatches } from "immer";
import { expect, test } from "vitest";
import { type PanelEngine, loadPanelEngine } from "../../src/legacy1/panelEngine.js";
import type { Operation } from "../../src/live/index.js";
import { type PanelLiveSystem, type PanelOperationResult, createPanelLiveSystem } from "../../src/legacy1/index.js";
import { formatIssues } from "../../src/model/index.js";
import { type PanelSnapshot, parsePanel } from "../../src/legacy1/index.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import {
  PANEL_OPERATION_KINDS,
  type PanelOperationSpec,
  panelOperationSpecArb,
  resolvePanelOperation,
} from "../arbitraries/panelOperation.js";
import { systemToPanel } from "../legacy/systemToPanel.js";

/**
 * 100 runs by default; RSOP_PROPERTY_RUNS scales it down by 100 (one run replays a panel's operations through PanelEngine loads (about 70 ms a run)), so that the
 * 1,000,000-run hunt gives 10,000 runs here.
 */
const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 100
    : Math.max(100, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 100));
const TIMEOUT = 60_000 + NUM_RUNS * 600; // generous: the machine may be shared
/**
 * The default run (the suite's) has a fixed seed, one whose 100 runs reach every kind accepted and
 * refused: with a fresh seed a rarely accepted kind (a network configuration needs a VENDOR_A
 * ethernet controller, about 1 panel in 20) was missed in 3 of 7 seeds tried, and the kind checks
 * below failed by chance. Hunts (RSOP_PROPERTY_RUNS) draw a fresh seed; RSOP_PROPERTY_SEED=N replays one.
 */
const SEED =
  process.env.RSOP_PROPERTY_SEED !== undefined
    ? Number(process.env.RSOP_PROPERTY_SEED)
    : process.env.RSOP_PROPERTY_RUNS === undefined
      ? 2
      : undefined;
const AT = ["2026-04-15T14:15:00Z", "2026-04-18T03:30:00Z", "2026-11-01T06:30:00Z"];

type Json = Record<string, any>;

function fresh(panel: PanelSnapshot): { panel: PanelSnapshot; engine: PanelEngine } {
  const json = JSON.parse(JSON.stringify(panel));
  const parsed = parsePanel(json);
  if (!parsed.ok) throw new Error(`the live panel does not load:\n${formatIssues(parsed.issues)}`);
  const engine = loadPanelEngine(json);
  if (!engine.ok) throw new Error("unreachable");
  return { panel: parsed.value.panel, engine: engine.value };
}

/** Requests for this panel: the generated ones (1.0 ids) plus each card at each device, and a PIN, at a few instants. */
function requestsFor(p: PanelSnapshot, generated: readonly unknown[]): unknown[] {
  const out = [...generated];
  const cards = p.persons
    .flatMap((h) => h.credentials.filter((c) => c.credentialNumber !== null && c.credentialNumber !== undefined))
    .slice(0, 6) as Json[];
  const pins = p.persons.filter((h) => typeof h.pin === "string").slice(0, 2) as Json[];
  for (const d of p.devices.slice(0, 5)) {
    for (const at of AT) {
      for (const c of cards)
        out.push({
          deviceId: d.id,
          at,
          credential: { credentialNumber: c.credentialNumber, facilityCode: c.facilityCode },
        });
      for (const h of pins) out.push({ deviceId: d.id, at, pin: h.pin });
    }
  }
  return out;
}

function assertSameAnswers(live: PanelLiveSystem, requests: readonly unknown[], what: string): number {
  const { panel, engine } = fresh(live.snapshot);
  expect(live.snapshot, `${what}: the live panel is what a fresh load normalizes it to`).toStrictEqual(panel);
  let compared = 0;
  for (const r of requests) {
    expect(live.engine.decide(r), `${what}: decision for ${JSON.stringify(r)}`).toStrictEqual(engine.decide(r));
    compared++;
  }
  const ids = panel.persons.map((p) => p.id).slice(0, 4);
  for (const at of AT) {
    expect(live.engine.rsop(ids, { at }), `${what}: RSOP at ${at}`).toStrictEqual(engine.rsop(ids, { at }));
    compared++;
  }
  return compared;
}

/** Generated 2.0 requests with the panel's integer device and credential ids. */
function panelRequests(requests: readonly unknown[], ids: ReturnType<typeof systemToPanel>["ids"]): unknown[] {
  return requests.flatMap((req) => {
    if (typeof req !== "object" || req === null || typeof (req as Json).deviceId !== "string") return [];
    const r = req as Json;
    const cred = r.credential;
    return [
      {
        ...r,
        deviceId: ids.device.get(r.deviceId) ?? 9_999_999,
        ...(cred?.credentialId !== undefined
          ? { credential: { ...cred, credentialId: ids.credential.get(cred.credentialId) ?? 9_999_999 } }
          : {}),
      },
    ];
  });
}

const stepArb = fc.oneof(
  { weight: 6, arbitrary: panelOperationSpecArb.map((s) => [s]) },
  { weight: 1, arbitrary: fc.array(panelOperationSpecArb, { minLength: 2, maxLength: 3 }) },
);

test(
  "live panel equals a fresh load after every operation; refusals change nothing; patches undo and replay",
  () => {
    const counts = { accepted: 0, refused: 0, reads: 0, batches: 0, compared: 0 };
    const acceptedKinds = new Set<string>();
    const refusedKinds = new Set<string>();
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 6 }),
        fc.array(stepArb, { minLength: 10, maxLength: 40 }),
        ({ snapshot, requests }, steps) => {
          const { panel: converted, ids } = systemToPanel(snapshot);
          // Custom fields of the default partition, so attribute routes have definitions to change.
          // The converted ones come first (persons carry their values); each test field unless already defined.
          const own = (converted.attributes ?? []) as { id: string }[];
          const extra = [
            { id: "badge", type: "string", displayName: "Badge", partition: 0 },
            { id: "level", type: "number", partition: 0 },
          ].filter((a) => !own.some((x) => x.id === a.id));
          const input = { ...converted, attributes: [...own, ...extra] };
          const made = createPanelLiveSystem(input);
          const replica = createPanelLiveSystem(input);
          if (!made.ok || !replica.ok)
            throw new Error(`generated panel refused:\n${made.ok ? "" : formatIssues(made.issues)}`);
          const live = made.value;
          const generated = panelRequests(requests, ids);
          for (const specs of steps) {
            const before = live.snapshot;
            const engineBefore = live.engine;
            const ops: Operation[] = specs.map((spec: PanelOperationSpec) =>
              resolvePanelOperation(live.snapshot, spec),
            );
            const batch = ops.length > 1;
            const result = batch ? live.apply(ops) : live.apply(ops[0]!);
            const what = JSON.stringify(batch ? ops : ops[0]).slice(0, 400);
            if (!batch) (result.ok ? acceptedKinds : refusedKinds).add(specs[0]!.kind);
            if (!result.ok) {
              counts.refused++;
              expect(live.snapshot, `${what} was refused (${JSON.stringify(result)}) but changed the panel`).toBe(
                before,
              );
              expect(live.engine, `${what} was refused but changed the engine`).toBe(engineBefore);
              expect(result.issues.length, `${what}: a refusal names its problems`).toBeGreaterThan(0);
              continue;
            }
            const results: PanelOperationResult[] = batch
              ? [...(result as { readonly results: readonly PanelOperationResult[] }).results]
              : [result as PanelOperationResult];
            if (batch) counts.batches++;
            const writes = results.filter(
              (r): r is Extract<PanelOperationResult, { patches: unknown }> => "patches" in r,
            );
            if (writes.length === 0) {
              counts.reads++;
              expect(live.snapshot).toBe(before);
              continue;
            }
            counts.accepted++;
            counts.compared += assertSameAnswers(live, requestsFor(live.snapshot, generated), what);
            let undone: PanelSnapshot = live.snapshot;
            for (const w of [...writes].reverse()) undone = applyPatches(undone, [...w.inversePatches]);
            expect(undone, `${what}: inverse patches restore the panel`).toStrictEqual(before);
            for (const w of writes) {
              const r = replica.value.applyPatches(w.patches);
              if (!r.ok) throw new Error(`replica refused the patches of ${what}:\n${formatIssues(r.issues)}`);
            }
            expect(replica.value.snapshot, `${what}: the replica reaches the same panel`).toStrictEqual(live.snapshot);
          }
        },
      ),
      { numRuns: NUM_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
    expect(counts.accepted).toBeGreaterThan(NUM_RUNS / 2);
    expect(counts.refused).toBeGreaterThan(NUM_RUNS / 4);
    expect(counts.reads).toBeGreaterThan(0);
    expect(counts.batches).toBeGreaterThan(0);
    expect(counts.compared).toBeGreaterThan(NUM_RUNS);
    if (NUM_RUNS >= 100) {
      expect(
        PANEL_OPERATION_KINDS.filter((k) => k !== "garbage" && !acceptedKinds.has(k)),
        "kinds never accepted",
      ).toEqual([]);
      expect(
        PANEL_OPERATION_KINDS.filter((k) => k !== "read" && !refusedKinds.has(k)),
        "kinds never refused",
      ).toEqual([]);
    }
  },
  TIMEOUT,
);
