import { type Engine, loadEngine } from "../../evaluate/index.js";
import type { PanelEngine } from "../../legacy1/panelEngine.js";
import type { Issue } from "../../model/index.js";
import { CliError, type CliIo, UsageError, readJsonFile } from "./io.js";

function refused(path: string, issues: readonly Issue[]): never {
  throw new CliError(
    `${path === "-" ? "stdin" : path}: ${issues.length} problem${issues.length === 1 ? "" : "s"}`,
    issues,
  );
}

/**
 * A usage error when a 1.0 panel is given where a 2.0 system is expected, or the other way round
 * (the file is fine: the option is wrong).
 */
export function expectKind(json: unknown, kind: "system" | "panel", path: string): void {
  const format = typeof json === "object" && json !== null ? (json as { format?: unknown }).format : undefined;
  const name = path === "-" ? "stdin" : path;
  if (kind === "system" && format === "rsop-panel/1")
    throw new UsageError(`${name}: this is a 1.0 panel snapshot: use --panel`);
  if (kind === "panel" && format === "rsop-system/1")
    throw new UsageError(`${name}: this is a 2.0 system snapshot: use --system`);
}

/** Reads (`-` is stdin) and checks a snapshot of the given kind. */
export async function readSnapshotInput(path: string, kind: "system" | "panel", io: CliIo): Promise<unknown> {
  const json = await readJsonFile(path, kind, io);
  expectKind(json, kind, path);
  return json;
}

/** Reads, validates and compiles a system snapshot file, or fails with every problem listed. */
export async function loadSystemFile(path: string, io: CliIo): Promise<Engine> {
  // readJsonFile's parseJson refused any text nesting deeper than JSON_MAX_DEPTH (HJ1).
  const r = loadEngine(await readSnapshotInput(path, "system", io), { plainJson: true, depthChecked: true });
  return r.ok ? r.value : refused(path, r.issues);
}

/** Reads, validates and compiles an architecture 1.0 panel file, or fails with every problem listed. */
export async function loadPanelFile(path: string, io: CliIo): Promise<PanelEngine> {
  // Imported here: a 2.0 system's commands do not load the 1.0 panel code.
  const { loadPanelEngine } = await import("../../legacy1/panelEngine.js");
  const r = loadPanelEngine(await readSnapshotInput(path, "panel", io));
  return r.ok ? r.value : refused(path, r.issues);
}

/** Exactly one of --system and --panel (a usage error otherwise). */
export function systemOrPanel(opts: { system?: string; panel?: string }): { system: string } | { panel: string } {
  if (opts.system !== undefined && opts.panel === undefined) return { system: opts.system };
  if (opts.panel !== undefined && opts.system === undefined) return { panel: opts.panel };
  throw new UsageError("give exactly one of --system FILE (architecture 2.0) and --panel FILE (architecture 1.0)");
}
