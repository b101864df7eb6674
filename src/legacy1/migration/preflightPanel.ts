// What in a 1.0 panel would block or degrade its migration to 2.0: the accounts API's preflight check,
// letter for letter (`ok`, `warnings: {integrations}`, `errors: {softwareVersion, integrations,
// personalInfoMissing, controllerOffline, controllerVersion, legacyDevice, invalidDevice}`, every
// member always present), plus an `extensions` object with what this library finds beyond the API's
// members (the routes answer without it: preflightResponse). The members the service fills from live
// panel status (versions of the running software and controllers, offline controllers) cannot be
// known from a snapshot and stay empty (semantics M6).
import { type Issue, wellKnownLayout, zodMessage } from "../../model/index.js";
import { type DroppedField, panelToSystem } from "../panelToSystem.js";
import { type PanelSnapshot, panelSnapshotSchema } from "../panelSchema.js";
import { parsePanel } from "../parsePanel.js";

/** A controller or device as the preflight response lists it. */
export interface PreflightDevice {
  id: number;
  connection: number;
  wirelessAddress: string | null;
  description: string;
}

/** A device 2.0 will not accept as it is. */
export interface InvalidDevice extends PreflightDevice {
  propDelay: number;
}

/** A controller whose firmware is too old; never filled from a snapshot. */
export interface ControllerVersion extends PreflightDevice {
  firmwareVersion: string;
  stageFirmwareVersion: string;
  linkType: string;
  updateRunning: boolean;
}

/**
 * The preflight report, in the service's preflight response shape. Migration may proceed when `ok`:
 * when every warning and error list is empty, those in `extensions` included. Errors block; warnings
 * need to be accepted (`acceptWarnings`) to initiate a migration.
 */
export interface Preflight {
  ok: boolean;
  warnings: {
    integrations: string[];
  };
  errors: {
    /** Versions of the node's software components, by component; `{}` from a snapshot, which knows none. */
    softwareVersion: Record<string, string>;
    integrations: string[];
    /** Some person lacks a first or last name, which 2.0 requires. */
    personalInfoMissing: boolean;
    controllerOffline: PreflightDevice[];
    controllerVersion: ControllerVersion[];
    legacyDevice: PreflightDevice[];
    invalidDevice: InvalidDevice[];
  };
  /** What this library finds beyond the service's own members; counted in `ok` all the same. */
  extensions: {
    errors: {
      /** Names 2.0 requires unique within a system that the panel repeats. */
      duplicateNames: { type: string; name: string; legacyIds: number[] }[];
      /** Every other problem that keeps the panel from loading, with its path. */
      invalidPanel: Issue[];
    };
    warnings: {
      /** Data 2.0 has no place for; migration reports it and goes on. */
      droppedFields: DroppedField[];
      /**
       * The id of the panel's card format when it is not a well-known layout and the format has no
       * layout: the panel reads each frame raw (the whole frame is the card number), and so will the
       * migrated system, until a layout is given. Null otherwise.
       */
      unknownCardFormat: string | null;
    };
  };
}

/** The preflight check's response: the accounts API's members only (M6). */
export type PreflightResponse = Pick<Preflight, "ok" | "warnings" | "errors">;

/**
 * What the preflight-check route answers: `ok`, `warnings`, `errors`, letter for letter, without
 * `extensions`, which the API's response has no place for. `ok` still counts them; a refused initiate
 * lists each of them (at `preflight.extensions.…`), and `rsop preflight FILE` prints the whole report.
 * @example
 * const p = preflightPanel(JSON.parse(readFileSync("examples/panel.json", "utf8")));
 * Object.keys(preflightResponse(p)); //=> ["ok", "warnings", "errors"]
 */
export function preflightResponse(p: Preflight): PreflightResponse {
  return { ok: p.ok, warnings: p.warnings, errors: p.errors };
}

function emptyPreflight(): Preflight {
  return {
    ok: true,
    warnings: { integrations: [] },
    errors: {
      softwareVersion: {},
      integrations: [],
      personalInfoMissing: false,
      controllerOffline: [],
      controllerVersion: [],
      legacyDevice: [],
      invalidDevice: [],
    },
    extensions: {
      errors: { duplicateNames: [], invalidPanel: [] },
      warnings: { droppedFields: [], unknownCardFormat: null },
    },
  };
}

/**
 * Whether the report has an error (in `errors` or `extensions.errors`): migration is refused.
 * @example
 * preflightBlocks(preflightPanel(JSON.parse(readFileSync("examples/panel.json", "utf8")))); //=> false
 */
export function preflightBlocks(p: Preflight): boolean {
  const e = p.errors;
  const x = p.extensions.errors;
  return (
    e.personalInfoMissing ||
    e.integrations.length > 0 ||
    e.controllerOffline.length > 0 ||
    e.controllerVersion.length > 0 ||
    e.legacyDevice.length > 0 ||
    e.invalidDevice.length > 0 ||
    x.duplicateNames.length > 0 ||
    x.invalidPanel.length > 0
  );
}

/**
 * Whether the report has a warning (in `warnings` or `extensions.warnings`): initiating a migration
 * then needs `acceptWarnings`.
 * @example
 * preflightWarns(preflightPanel(JSON.parse(readFileSync("examples/panel.json", "utf8")))); //=> true
 */
export function preflightWarns(p: Preflight): boolean {
  const x = p.extensions.warnings;
  return p.warnings.integrations.length > 0 || x.droppedFields.length > 0 || x.unknownCardFormat !== null;
}

/**
 * Checks a 1.0 panel for what would block (errors) or degrade (warnings) its migration to 2.0.
 * @param input - an `rsop-panel/1` snapshot (parsed JSON).
 * @param integrations - what of the panel's integrations the migration does not carry over (one
 *   sentence each; the server names its webhook subscriptions): warnings.
 * @returns the report; `ok` is true when nothing blocks and nothing warns.
 * @example
 * const p = preflightPanel(JSON.parse(readFileSync("examples/panel.json", "utf8")));
 * [p.ok, p.extensions.warnings.droppedFields.length > 0]; //=> [false, true]
 */
export function preflightPanel(input: unknown, integrations: readonly string[] = []): Preflight {
  const out = emptyPreflight();
  out.warnings.integrations.push(...integrations);
  const shape = panelSnapshotSchema.safeParse(input, { error: zodMessage });
  if (shape.success) checkShape(shape.data, out);
  const loaded = parsePanel(input);
  if (!loaded.ok) {
    for (const issue of loaded.issues) {
      const last = issue.path[issue.path.length - 1];
      if (issue.path[0] === "persons" && (last === "firstName" || last === "lastName"))
        out.errors.personalInfoMissing = true;
      else if (issue.code === "duplicateName" && issue.path[0] === "partitions")
        continue; // reported as duplicateNames
      else out.extensions.errors.invalidPanel.push(issue);
    }
  }
  out.ok = !preflightBlocks(out) && !preflightWarns(out);
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
  for (const [name, legacyIds] of byName)
    if (legacyIds.length > 1) out.extensions.errors.duplicateNames.push({ type: "partition", name, legacyIds });
  out.extensions.warnings.droppedFields = dropped;
  // An unknown id without a layout is a raw format (docs/semantics.md S17): not a blocker, but worth knowing.
  const format = panel.config.cardFormat;
  if (
    format !== null &&
    (format.layout === undefined || format.layout === null) &&
    typeof format.id === "string" &&
    wellKnownLayout(format.id) === undefined
  )
    out.extensions.warnings.unknownCardFormat = format.id;
}
