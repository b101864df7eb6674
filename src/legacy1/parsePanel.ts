// Loads an architecture 1.0 panel snapshot (`rsop-panel/1`): the 1.0 checks, then the conversion
// to 2.0 and the whole 2.0 validation, with every problem reported at its panel path.
import { type Issue, type Result, SnapshotError, err, ok } from "../model/issue.js";
import { type PanelSnapshot, panelSnapshotSchema } from "./panelSchema.js";
import { panelToSystem } from "./panelToSystem.js";
import { parseSnapshot, plainCopy } from "../model/parseSnapshot.js";
import type { SystemSnapshot } from "../model/types.js";
import { fromZodIssues, zodMessage } from "../model/zodIssues.js";

/** A loaded panel: its 1.0 entities and the equivalent 2.0 snapshot whose ids are the 1.0 ids as strings. */
export interface LoadedPanel {
  readonly panel: PanelSnapshot;
  readonly system: SystemSnapshot;
}

const COLLECTION_1_0: Readonly<Record<string, string>> = { holders: "persons", customFields: "attributes" };
const NODE_FIELD_1_0: Readonly<Record<string, (string | number)[]>> = {
  ecards: ["ecards"],
  name: ["name"],
  serialNumber: ["serialNumber"],
  cardFormat: ["config", "cardFormat"],
  offlinePolicy: ["config", "offlinePolicy"],
  killTimer: ["config", "killTimer"],
  timezone: ["config", "timezone"],
  locale: ["config", "locale"],
};

/** The panel path of a problem found on the converted 2.0 snapshot. */
export function panelPath(path: readonly (string | number)[]): (string | number)[] {
  const [coll, index, ...rest] = path;
  if (coll === "timezone") return ["config", "timezone"];
  if (coll === "cloudNodes") {
    const [field, ...more] = rest;
    const base = NODE_FIELD_1_0[String(field)] ?? [String(field)];
    // The panel's single card format is cardFormat[0] of the converted node.
    return field === "cardFormat" ? [...base, ...more.slice(1)] : [...base, ...more];
  }
  if (coll === "holders") {
    if (rest[0] === "customFields") rest[0] = "customAttributes";
    if (rest[0] === "credentials" && rest[2] === "holderId") rest[2] = "personId";
  }
  return [COLLECTION_1_0[String(coll)] ?? String(coll), ...(index === undefined ? [] : [index]), ...rest];
}

/** Issues at panel paths; the system and node zone are both `config.timezone`, so one problem may come twice. */
function atPanelPaths(issues: readonly Issue[]): Issue[] {
  const seen = new Set<string>();
  const out: Issue[] = [];
  for (const i of issues) {
    const mapped = { ...i, path: panelPath(i.path) };
    const key = JSON.stringify([mapped.path, mapped.message]);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(mapped);
    }
  }
  return out;
}

/**
 * The 2.0 id under which a panel entity is evaluated: its integer zero-padded to 16 digits, so that
 * JavaScript string order ("smallest id", docs/semantics.md E19) is the panel's numeric order (docs/semantics.md M2).
 */
export function panelKey(legacyId: number): string {
  return String(legacyId).padStart(16, "0");
}

/**
 * Validates an `rsop-panel/1` snapshot and converts it to 2.0 for evaluation.
 * @param input - parsed JSON of any shape.
 * @returns every problem at its panel path, or the panel and its 2.0 equivalent.
 * @example
 * parsePanel({ format: "rsop-panel/1", serialNumber: "SN1", config: { timezone: "Europe/Paris" } }).ok; //=> true
 */
export function parsePanel(input: unknown): Result<LoadedPanel> {
  // Read once into a plain copy, as parseSnapshot does (semantics S12): never throws.
  const unreadable: Issue[] = [];
  const data = plainCopy(input, unreadable);
  if (unreadable.length > 0) return err(unreadable);
  const parsed = panelSnapshotSchema.safeParse(data, { error: zodMessage });
  if (!parsed.success) return err(fromZodIssues(parsed.error.issues));
  const panel = parsed.data;
  // Checked with the plain integers, so messages name ids as the panel spells them…
  const { input: plain } = panelToSystem(
    panel,
    `panel:${panel.serialNumber}`,
    panel.serialNumber,
    (_type, id) => String(id),
    true,
  );
  const checked = parseSnapshot(plain);
  if (!checked.ok) return err(atPanelPaths(checked.issues));
  // …and evaluated with padded ones, so "smallest id" is the smallest integer.
  const { input: padded } = panelToSystem(
    panel,
    `panel:${panel.serialNumber}`,
    panel.serialNumber,
    (_type, id) => panelKey(id),
    true,
  );
  const system = parseSnapshot(padded);
  if (!system.ok) return err(atPanelPaths(system.issues));
  return ok({ panel, system: system.value });
}

/**
 * Like parsePanel, but throws a SnapshotError carrying every problem.
 * @param input - parsed JSON of any shape.
 * @returns the panel and its 2.0 equivalent.
 * @throws SnapshotError when the panel has any problem.
 * @example
 * parsePanelOrThrow({ format: "rsop-panel/1", serialNumber: "SN1" }).system.cloudNodes[0].id; //=> "SN1"
 */
export function parsePanelOrThrow(input: unknown): LoadedPanel {
  const r = parsePanel(input);
  if (!r.ok) throw new SnapshotError(r.issues, "panel");
  return r.value;
}
