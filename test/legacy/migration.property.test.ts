// Migration changes nobody's access, with SPEC §8's decided guarantee (semantics M3). For random
// panels, persons and instants, the 1.0 RSOP mapped through the mapping records equals the 2.0 RSOP
// of the migrated snapshot, and every 1.0 decision, mapped likewise, equals the migrated engine's
// decision — on every field; where `activeRuleId` differs, the migrated system's rule maps back to a
// legacy rule of the same tie set: made the panel's smallest id, that legacy rule decides the scan
// (or the RSOP entry) with every field as before. Each such case is checked and counted. The same
// check, run on a migration with a planted bug, must fail.
import fc from "fast-check";
import { expect, test } from "vitest";
import { migratePanel } from "../../src/legacy1/migration/migratePanel.js";
import { type MigrationCheck, compareMigration } from "../../src/legacy1/migration/verifyMigration.js";
import { formatIssues } from "../../src/model/index.js";
import { atSpecArb, resolveAt, snapshotAndRequestsArb } from "../arbitraries/index.js";
import { buildSnapshot, snapshotSpecArb } from "../arbitraries/snapshot.js";
import { systemToPanel } from "./systemToPanel.js";

const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 150
    : Math.max(150, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 50));
const SYSTEM_ID = "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90";

type Json = Record<string, any>;

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

/**
 * SPEC §8's guarantee for one panel, its requests (2.0 terms, as generated) and one instant:
 * compareMigration finds no difference. `plant` changes the migrated snapshot (planted-bug test).
 */
function checkGuarantee(
  panel: Json,
  ids: ReturnType<typeof systemToPanel>["ids"],
  requests: unknown[],
  at: string | number,
  plant?: (s: Json) => Json,
): MigrationCheck {
  const m = migrate(panel);
  // Every mapping record names an entity of its type that the migrated snapshot holds (semantics M7).
  const present = idsByType(m.snapshot as Json);
  expect(m.mappings.filter((r) => !present.get(r.type)?.has(r.id))).toEqual([]);
  // The requests in 1.0 terms: integer device and credential ids (an unknown one: an id no entity has).
  const legacyRequests = (requests as Json[]).flatMap((req) => {
    if (typeof req !== "object" || req === null || typeof req.deviceId !== "string") return [];
    const cred = req.credential;
    const credInt = cred?.credentialId !== undefined ? (ids.credential.get(cred.credentialId) ?? 9_999_999) : undefined;
    return [
      {
        ...req,
        deviceId: ids.device.get(req.deviceId) ?? 9_999_999,
        ...(credInt !== undefined ? { credential: { ...cred, credentialId: credInt } } : {}),
      },
    ];
  });
  const check = compareMigration(panel, m, legacyRequests, [at], plant === undefined ? {} : { plant });
  expect(check.differences, `${check.differenceCount} differences`).toEqual([]);
  return check;
}

const cases = () =>
  fc.tuple(snapshotAndRequestsArb(), snapshotSpecArb, atSpecArb).map(([{ snapshot, requests }, spec, atSpec]) => {
    const { panel, ids } = systemToPanel(snapshot);
    return {
      panel: panel as Json,
      ids,
      requests: requests as unknown[],
      at: resolveAt(atSpec, buildSnapshot(spec).meta, null),
    };
  });

test(
  "SPEC §8: decisions and RSOP equal through the mapping on every field; a different deciding rule is of the same tie set (each case checked, counted)",
  () => {
    const total = { compared: 0, ties: 0 };
    fc.assert(
      fc.property(cases(), ({ panel, ids, requests, at }) => {
        const o = checkGuarantee(panel, ids, requests, at);
        total.compared += o.decisions + o.rsopEntries;
        total.ties += o.ties;
      }),
      { numRuns: NUM_RUNS },
    );
    expect(total.compared).toBeGreaterThan(NUM_RUNS);
    // The tie-break case happens: the runs reach rules that decide alike under different names.
    expect(total.ties).toBeGreaterThan(0);
  },
  60_000 + NUM_RUNS * 200,
);

test("the same check fails on a planted bug: a migrated rule losing a weekday", () => {
  const dropWeekday = (s: Json): Json => ({
    ...s,
    rules: (s.rules ?? []).map((r: Json) => ({
      ...r,
      recurring: (r.recurring ?? []).filter((d: string) => d !== "Wed"),
    })),
  });
  const found = fc.check(
    fc.property(cases(), ({ panel, ids, requests, at }) => {
      checkGuarantee(panel, ids, requests, at, dropWeekday);
    }),
    { numRuns: 2000, seed: 7 },
  );
  expect(found.failed, "the planted bug is caught").toBe(true);
});
