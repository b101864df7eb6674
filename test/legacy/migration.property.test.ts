// Issue 5's property: migration changes nobody's access. For random panels, persons and instants,
// the 1.0 RSOP mapped through the mapping records equals the 2.0 RSOP of the migrated snapshot, and
// every 1.0 decision, mapped likewise, equals the migrated engine's decision.
import fc from "fast-check";
import { expect, test } from "vitest";
import { loadPanelEngineOrThrow } from "../../src/legacy1/panelEngine.js";
import { migratePanel } from "../../src/adapters/migration/migratePanel.js";
import { loadEngineOrThrow } from "../../src/evaluate/index.js";
import { formatIssues } from "../../src/model/index.js";
import { atSpecArb, resolveAt, snapshotAndRequestsArb } from "../arbitraries/index.js";
import { buildSnapshot, snapshotSpecArb } from "../arbitraries/snapshot.js";
import { systemToPanel } from "./systemToPanel.js";

const NUM_RUNS = process.env.RSOP_PROPERTY_RUNS === undefined ? 150 : Math.max(150, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 50));
const SYSTEM_ID = "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90";

type Json = Record<string, any>;

/**
 * The migrated snapshot with every rule renamed to an id that keeps the panel's numeric order
 * (`r` + the legacy id zero-padded): identical to the real migration but for the names SPEC §3's
 * "smallest id" tie-break compares (docs/semantics.md M3).
 */
function orderPreserving(snapshot: Json, mappings: { id: string; legacyId: number; type: string }[]): { snapshot: Json; rename: Map<string, string> } {
  const rename = new Map(mappings.filter((m) => m.type === "rule").map((m) => [m.id, `r${String(m.legacyId).padStart(16, "0")}`]));
  const r = (id: string) => rename.get(id) ?? id;
  return { snapshot: { ...snapshot, rules: snapshot.rules.map((x: Json) => ({ ...x, id: r(x.id) })) }, rename };
}

/** The ids of each mapped type in a migrated snapshot (card formats and credentials included). */
function idsByType(snapshot: Json): Map<string, Set<string>> {
  const ids = (list: Json[] | undefined) => new Set((list ?? []).map((x) => x.id as string));
  const nodes: Json[] = snapshot.cloudNodes ?? [];
  const holders: Json[] = snapshot.holders ?? [];
  return new Map([
    ["cardFormat", ids(nodes.flatMap((n) => n.cardFormat ?? []))],
    ["connection", ids(snapshot.connections)],
    ["credential", ids(holders.flatMap((h) => h.credentials ?? []))],
    ["device", ids(snapshot.devices)],
    ["floorGroup", ids(snapshot.floorGroups)],
    ["group", ids(snapshot.groups)],
    ["holder", ids(holders)],
    ["partition", ids(snapshot.partitions)],
    ["rule", ids(snapshot.rules)],
  ]);
}

function migrate(panel: unknown) {
  const m = migratePanel(panel, { systemId: SYSTEM_ID });
  if (!m.ok) throw new Error(`migration refused:\n${formatIssues(m.issues)}\n${JSON.stringify(m.preflight)}`);
  return m.value;
}

test(
  "1.0 RSOP through the mapping equals the 2.0 RSOP of the migrated snapshot; so does every decision",
  () => {
    let compared = 0;
    fc.assert(
      fc.property(snapshotAndRequestsArb(), snapshotSpecArb, atSpecArb, ({ snapshot, requests }, _spec, atSpec) => {
        const { panel, ids } = systemToPanel(snapshot);
        const legacy = loadPanelEngineOrThrow(panel);
        const m = migrate(panel);
        // Every mapping record names an entity of its type that the migrated snapshot holds (semantics M7).
        const present = idsByType(m.snapshot as Json);
        expect(m.mappings.filter((r) => !present.get(r.type)?.has(r.id))).toEqual([]);
        const migrated = loadEngineOrThrow(m.snapshot);
        const variant = orderPreserving(m.snapshot as Json, m.mappings);
        const ordered = loadEngineOrThrow(variant.snapshot);
        const uuid = new Map(m.mappings.map((r) => [`${r.type}:${r.legacyId}`, variant.rename.get(r.id) ?? r.id]));
        const to2 = (type: string, id: number | null) => (id === null ? null : uuid.get(`${type}:${id}`) ?? `missing ${type}:${id}`);
        const back = new Map([...variant.rename].map(([a, b]) => [b, a]));
        /** The real migration's view: rule ids as UUIDs, and activeRuleId blanked (the tie-break differs). */
        const blankRule = <T extends { activeRuleId: string | null }>(x: T) => ({ ...x, activeRuleId: x.activeRuleId === null ? null : "some rule" });

        const built = buildSnapshot(_spec);
        const at = resolveAt(atSpec, built.meta, null);
        const persons = legacy.loaded.panel.persons.map((p) => p.id);
        const r1 = legacy.rsop(persons, { at });
        const r2 = ordered.rsop(persons.map((p) => to2("holder", p)!), { at, cloudNodeId: m.cloudNodeId });
        const r2real = migrated.rsop(persons.map((p) => to2("holder", p)!), { at, cloudNodeId: m.cloudNodeId });
        // The real migration differs from the order-preserving one only in the deciding rule's name.
        const unrename = (h: Json) => ({
          ...h,
          rules: h.rules.map((x: Json) => ({ ...x, id: back.get(x.id) ?? x.id })).sort((a: Json, b: Json) => (a.id < b.id ? -1 : 1)),
          devices: h.devices.map(blankRule),
          floorGroups: h.floorGroups.map(blankRule),
        });
        expect(r2.holders.map(unrename)).toEqual(r2real.holders.map(unrename));
        const mapped = r1.persons.map((p) => ({
          id: to2("holder", p.id),
          enabled: p.enabled,
          groups: p.groups.map((g) => ({ id: to2("group", g.id), name: g.name })),
          rules: p.rules.map((x) => ({ id: to2("rule", x.id), type: x.type, active: x.active, startTime: `${x.startTime}:00`, stopTime: `${x.stopTime}:00`, recurring: x.recurring, authenticationPolicy: x.authenticationPolicy })),
          devices: p.doors.map((d) => ({ id: to2("device", d.id), allowed: d.allowed, activeRuleId: to2("rule", d.activeRuleId) })),
          floorGroups: p.floorGroups.map((f) => ({ id: to2("floorGroup", f.id), allowed: f.allowed, activeRuleId: to2("rule", f.activeRuleId), floors: f.floors.map((x) => to2("device", x.id)) })),
        }));
        const projected = r2.holders.map((h) => ({
          id: h.id,
          enabled: h.enabled,
          groups: h.groups,
          rules: h.rules.map((x) => ({ id: x.id, type: x.type, active: x.active, startTime: x.startTime, stopTime: x.stopTime, recurring: x.recurring, authenticationPolicy: x.authenticationPolicy })),
          devices: h.devices.map((d) => ({ id: d.id, allowed: d.allowed, activeRuleId: d.activeRuleId })),
          floorGroups: h.floorGroups.map((f) => ({ id: f.id, allowed: f.allowed, activeRuleId: f.activeRuleId, floors: f.floors.map((x) => x.id) })),
        }));
        // 2.0 lists by UUID, 1.0 by integer id: compare as sets keyed by id.
        const byId = (xs: Json[]) => [...xs].sort((a, b) => (a.id < b.id ? -1 : 1));
        const norm = (hs: Json[]) => hs.map((h) => ({ ...h, rules: byId(h.rules), devices: byId(h.devices), floorGroups: byId(h.floorGroups) }));
        expect(norm(mapped)).toEqual(norm(projected));
        expect(r1.date).toBe(r2.date);

        for (const req of requests as Json[]) {
          if (typeof req !== "object" || req === null || typeof req.deviceId !== "string") continue;
          const deviceInt = ids.device.get(req.deviceId) ?? 9_999_999;
          const cred = req.credential;
          const credInt = cred?.credentialId !== undefined ? (ids.credential.get(cred.credentialId) ?? 9_999_999) : undefined;
          const req1 = { ...req, deviceId: deviceInt, ...(credInt !== undefined ? { credential: { ...cred, credentialId: credInt } } : {}) };
          const req2 = {
            ...req,
            deviceId: to2("device", deviceInt),
            ...(credInt !== undefined ? { credential: { ...cred, credentialId: to2("credential", credInt) } } : {}),
          };
          const d1 = legacy.decide(req1);
          const d2 = ordered.decide(req2);
          const d2real = migrated.decide(req2);
          expect(blankRule(d2real)).toEqual(blankRule({ ...d2, activeRuleId: d2.activeRuleId === null ? null : (back.get(d2.activeRuleId) ?? d2.activeRuleId) }));
          compared++;
          expect({
            ...d1,
            topic: d1.topic.replace("door.", "device."),
            holderId: to2("holder", d1.holderId),
            credentialId: to2("credential", d1.credentialId),
            activeRuleId: to2("rule", d1.activeRuleId),
            floors: d1.floors.map((f) => to2("device", f)).sort(),
          }).toEqual({ ...d2, floors: [...d2.floors] });
        }
      }),
      { numRuns: NUM_RUNS },
    );
    expect(compared).toBeGreaterThan(NUM_RUNS);
  },
  60_000 + NUM_RUNS * 200,
);
