// What in a 1.0 panel would block or degrade its migration to 2.0, in the spirit of seed 000's
// preflight check (`ok`, `warnings`, `errors`). The members the service fills from live panel
// status (software and controller versions, offline controllers) cannot be known from a snapshot
// and stay empty; ★ members are ours.
import { type DroppedField, type Issue, type PanelSnapshot, panelSnapshotSchema, panelToSystem, parsePanel, wellKnownLayout, zodMessage } from "../../model/index.js";

/** A device 2.0 will not accept as it is. */
export interface InvalidDevice {
  id: number;
  connection: number;
  wirelessAddress: string | null;
  description: string;
  propDelay: number;
}

/**
 * The preflight report.
 */
export interface Preflight {
  ok: boolean;
  warnings: {
    integrations: string[];
    /** Data 2.0 has no place for; migration reports it and goes on. */
    droppedFields: DroppedField[];
    /**
     * The id of the panel's card format when it is not a well-known layout and the format has no
     * layout: the panel reads each frame raw (the whole frame is the card number), and so will the
     * migrated system, until a layout is given. Null otherwise.
     */
    unknownCardFormat: string | null;
  };
  errors: {
    integrations: string[];
    /** Some person lacks a first or last name, which 2.0 requires. */
    personalInfoMissing: boolean;
    controllerOffline: unknown[];
    controllerVersion: unknown[];
    legacyDevice: unknown[];
    invalidDevice: InvalidDevice[];
    /** Names 2.0 requires unique within a system that the panel repeats. */
    duplicateNames: { type: string; name: string; legacyIds: number[] }[];
    /** Every other problem that keeps the panel from loading, with its path. */
    invalidPanel: Issue[];
  };
}

function emptyPreflight(): Preflight {
  return {
    ok: true,
    warnings: { integrations: [], droppedFields: [], unknownCardFormat: null },
    errors: {
      integrations: [],
      personalInfoMissing: false,
      controllerOffline: [],
      controllerVersion: [],
      legacyDevice: [],
      invalidDevice: [],
      duplicateNames: [],
      invalidPanel: [],
    },
  };
}

/**
 * Checks a 1.0 panel for what would block (errors) or degrade (warnings) its migration to 2.0.
 * @param input - an `rsop-panel/1` snapshot (parsed JSON).
 * @returns the report; `ok` is true when nothing blocks.
 * @example
 * preflightPanel(JSON.parse(readFileSync("examples/panel.json", "utf8"))).ok; //=> true
 */
export function preflightPanel(input: unknown): Preflight {
  const out = emptyPreflight();
  const shape = panelSnapshotSchema.safeParse(input, { error: zodMessage });
  if (shape.success) checkShape(shape.data, out);
  const loaded = parsePanel(input);
  if (!loaded.ok) {
    for (const issue of loaded.issues) {
      const last = issue.path[issue.path.length - 1];
      if (issue.path[0] === "persons" && (last === "firstName" || last === "lastName")) out.errors.personalInfoMissing = true;
      else if (issue.code === "duplicateName" && issue.path[0] === "partitions") continue; // reported as duplicateNames
      else out.errors.invalidPanel.push(issue);
    }
  }
  const e = out.errors;
  out.ok =
    !e.personalInfoMissing &&
    e.invalidDevice.length === 0 &&
    e.duplicateNames.length === 0 &&
    e.invalidPanel.length === 0 &&
    e.integrations.length === 0;
  return out;
}

function checkShape(panel: PanelSnapshot, out: Preflight): void {
  // 1.0 tolerates a prop delay on a door without a prop alarm; 2.0 refuses it.
  for (const d of panel.devices) {
    const dev = d as Record<string, unknown>;
    const propDelay = typeof dev.propDelay === "number" ? dev.propDelay : 0;
    if (propDelay > 0 && dev.propAlarm !== true)
      out.errors.invalidDevice.push({
        id: d.id,
        connection: d.connection,
        wirelessAddress: typeof dev.wirelessAddress === "string" ? dev.wirelessAddress : null,
        description: `${String(dev.name)}: propDelay ${propDelay} without propAlarm`,
        propDelay,
      });
  }
  // Partition names must be unique within a 2.0 system.
  const { input: converted, dropped } = panelToSystem(panel, "preflight", "preflight", (_t, id) => String(id), false);
  const byName = new Map<string, number[]>();
  for (const p of converted.partitions ?? []) {
    const ids = byName.get(p.name) ?? [];
    ids.push(Number(p.id));
    byName.set(p.name, ids);
  }
  for (const [name, legacyIds] of byName) if (legacyIds.length > 1) out.errors.duplicateNames.push({ type: "partition", name, legacyIds });
  out.warnings.droppedFields = dropped;
  // An unknown id without a layout is a raw format (SPEC §5): not a blocker, but worth knowing.
  const format = panel.config.cardFormat;
  if (format !== null && (format.layout === undefined || format.layout === null) && typeof format.id === "string" && wellKnownLayout(format.id) === undefined)
    out.warnings.unknownCardFormat = format.id;
}
