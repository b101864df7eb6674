import { type Engine, loadEngine } from "../../evaluate/index.js";
import { type PanelEngine, loadPanelEngine } from "../../legacy1/panelEngine.js";
import type { Issue } from "../../model/index.js";
import { CliError, readJsonFile } from "./io.js";

function refused(path: string, issues: readonly Issue[]): never {
  throw new CliError(`${path}: ${issues.length} problem${issues.length === 1 ? "" : "s"}`, issues);
}

/** Reads, validates and compiles a system snapshot file, or fails with every problem listed. */
export async function loadSystemFile(path: string): Promise<Engine> {
  const r = loadEngine(await readJsonFile(path, "system"));
  return r.ok ? r.value : refused(path, r.issues);
}

/** Reads, validates and compiles an architecture 1.0 panel file, or fails with every problem listed. */
export async function loadPanelFile(path: string): Promise<PanelEngine> {
  const r = loadPanelEngine(await readJsonFile(path, "panel"));
  return r.ok ? r.value : refused(path, r.issues);
}

/** Exactly one of --system and --panel. */
export function systemOrPanel(opts: { system?: string; panel?: string }): { system: string } | { panel: string } {
  if (opts.system !== undefined && opts.panel === undefined) return { system: opts.system };
  if (opts.panel !== undefined && opts.system === undefined) return { panel: opts.panel };
  throw new CliError("give exactly one of --system FILE (architecture 2.0) and --panel FILE (architecture 1.0)");
}
