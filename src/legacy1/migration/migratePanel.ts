// TRANSFORM_SCHEMA of the accounts API: a 1.0 panel becomes a 2.0 system snapshot plus one entity-mapping
// record per migrated entity. New ids are UUID v5 of (system id, type, legacy id), so migrating the
// same panel twice gives byte-identical output.
import { type Issue, type Result, type SystemSnapshotInput, err, ok, parseSnapshot } from "../../model/index.js";
import { type DroppedField, type IdMapper, type MappedType, panelToSystem } from "../panelToSystem.js";
import { panelSnapshotSchema } from "../panelSchema.js";
import { type Preflight, preflightBlocks, preflightPanel } from "./preflightPanel.js";
import { systemNamespace, uuidV5 } from "./uuidV5.js";

/**
 * An entity mapping record.
 */
export interface MappingRecord {
  id: string;
  legacyId: number;
  serialNumber: string;
  type: MappedType;
  systemId: string;
}

/**
 * The result of migrating one panel.
 */
export interface Migration {
  /** The 2.0 `rsop-system/1` snapshot, ready to write as JSON. */
  snapshot: SystemSnapshotInput;
  /** The UUID the panel's cloud node gets. */
  cloudNodeId: string;
  /** One record per migrated entity, by type (in the id-mapping endpoint's order) then legacy id. */
  mappings: MappingRecord[];
  /** What 2.0 has no place for, reported (never silently dropped). */
  dropped: DroppedField[];
}

/** Options of a migration. */
export interface MigrateOptions {
  /** The 2.0 system the panel moves into. */
  readonly systemId: string;
}

/** The accounts API: the `type` values of the id-mapping endpoint, in its order. */
const TYPE_ORDER: readonly MappedType[] = [
  "cardFormat",
  "connection",
  "credential",
  "device",
  "floorGroup",
  "group",
  "holder",
  "partition",
  "rule",
];

/**
 * The 2.0 id a 1.0 entity gets when its panel migrates into a system: UUID v5 of (system id, type,
 * legacy id), so migrating twice gives the same ids.
 * @param systemId - the 2.0 system (a UUID is used as the namespace; any other string is hashed first).
 * @param type - the mapping type (`holder`, `device`, …) or `cloudNode` (legacy id = serial number).
 * @param legacyId - the 1.0 integer id.
 * @returns the UUID.
 * @example
 * migratedId("0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90", "holder", 7); //=> a version-5 UUID, the same on every call
 */
export function migratedId(systemId: string, type: MappedType | "cloudNode", legacyId: number | string): string {
  return uuidV5(systemNamespace(systemId), `${type}:${legacyId}`);
}

/**
 * Migrates a 1.0 panel to a 2.0 system snapshot with entity-mapping records (the migration API's
 * TRANSFORM_SCHEMA). Refuses a panel whose preflight check finds errors, returning them as issues;
 * warnings (dropped fields, a raw card format) do not stop it.
 * @param input - an `rsop-panel/1` snapshot (parsed JSON).
 * @param options - `systemId`: the system the panel moves into.
 * @returns the snapshot, cloud node id, mappings and dropped fields — or the issues — plus the preflight report.
 * @example
 * const m = migratePanel(JSON.parse(readFileSync("examples/panel.json", "utf8")), { systemId: "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90" });
 * m.ok && m.value.mappings.filter((r) => r.type === "holder").length; //=> 262
 */
export function migratePanel(input: unknown, options: MigrateOptions): Result<Migration> & { preflight: Preflight } {
  const preflight = preflightPanel(input);
  if (preflightBlocks(preflight)) return { ...err(preflightIssues(preflight)), preflight };
  const panel = panelSnapshotSchema.parse(input);
  const systemId = options.systemId;
  const seen = new Map<string, { type: MappedType; legacyId: number }>();
  const id: IdMapper = (type, legacyId) => {
    const uuid = migratedId(systemId, type, legacyId);
    seen.set(`${type}:${legacyId}`, { type, legacyId });
    return uuid;
  };
  const cloudNodeId = migratedId(systemId, "cloudNode", panel.serialNumber);
  const { input: snapshot, dropped } = panelToSystem(panel, systemId, cloudNodeId, id, false);
  const checked = parseSnapshot(snapshot);
  if (!checked.ok) return { ...err(checked.issues), preflight };
  const mappings = [...seen.values()]
    .sort((a, b) => TYPE_ORDER.indexOf(a.type) - TYPE_ORDER.indexOf(b.type) || a.legacyId - b.legacyId)
    .map(({ type, legacyId }) => ({
      id: migratedId(systemId, type, legacyId),
      legacyId,
      serialNumber: panel.serialNumber,
      type,
      systemId,
    }));
  return { ...ok({ snapshot, cloudNodeId, mappings, dropped }), preflight };
}

function preflightIssues(p: Preflight): Issue[] {
  const issues: Issue[] = [...p.extensions.errors.invalidPanel];
  if (p.errors.personalInfoMissing)
    issues.push({
      code: "personalInfoMissing",
      path: ["persons"],
      message: "Some person lacks a first or last name, which 2.0 requires.",
    });
  for (const d of p.errors.invalidDevice)
    issues.push({
      code: "invalidDevice",
      path: ["devices"],
      message: `Device ${d.id} (${d.description}): 2.0 refuses a propDelay without propAlarm.`,
    });
  for (const n of p.extensions.errors.duplicateNames)
    issues.push({
      code: "duplicateName",
      path: ["partitions"],
      message: `The ${n.type} name "${n.name}" is used by ${n.legacyIds.join(", ")}; 2.0 names are unique within a system.`,
    });
  return issues;
}
