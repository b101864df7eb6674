// Reads, validates and compiles a snapshot file for the server; every failure is a list of issues,
// never an exception, so a bad file on reload is logged and refused.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { type Engine, loadEngine } from "../../evaluate/index.js";
import type { Issue } from "../../model/index.js";

/** A compiled snapshot file, or every reason it could not be used. */
export type LoadedSnapshot =
  | { readonly ok: true; readonly engine: Engine; readonly sha256: string }
  | { readonly ok: false; readonly issues: readonly Issue[] };

/** Loads `path`: read (issue `unreadable`), JSON (issue `invalidJson`), then snapshot validation and compile. */
export async function loadSnapshotFile(path: string): Promise<LoadedSnapshot> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    return { ok: false, issues: [{ code: "unreadable", path: [], message: `Cannot read the file: ${(e as NodeJS.ErrnoException).code ?? String(e)}.` }] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, issues: [{ code: "invalidJson", path: [], message: `Not valid JSON: ${(e as Error).message}` }] };
  }
  const loaded = loadEngine(json);
  if (!loaded.ok) return { ok: false, issues: loaded.issues };
  return { ok: true, engine: loaded.value, sha256: createHash("sha256").update(text, "utf8").digest("hex") };
}
