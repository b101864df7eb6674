import { type Engine, loadEngine } from "../../evaluate/index.js";
import { CliError, readJsonFile } from "./io.js";

/** Reads, validates and compiles a system snapshot file, or fails with every problem listed. */
export async function loadSystemFile(path: string): Promise<Engine> {
  const json = await readJsonFile(path, "system");
  const r = loadEngine(json);
  if (!r.ok) throw new CliError(`${path}: ${r.issues.length} problem${r.issues.length === 1 ? "" : "s"}`, r.issues);
  return r.value;
}
