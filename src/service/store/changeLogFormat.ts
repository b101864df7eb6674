// The format of the change log's patches, recorded in the database beside the log. Format 1 addressed
// an element of a top-level list by its position (`["holders", 12, "groups", 0]`); format 2 addresses
// it by its id, so that a change does not depend on where the list keeps an entity. A store records
// CHANGE_LOG_FORMAT when it is created and, when it opens a database of format 1 (no format recorded),
// upgrades it in one transaction: the state its changes after the latest snapshot make (replayed here
// as format 1 was, with immer's applyPatches on plain objects) is validated and stored as the snapshot
// of the last change, so no format-1 change is ever replayed again. A format newer than this one is
// refused: an older rsop cannot know what its patches mean.
import { Immer, type Patch, enablePatches } from "immer";
import { parsePanel } from "../../legacy1/index.js";
import { type Issue, parseSnapshot } from "../../model/index.js";
import { type StoredKind, StoreError } from "./store.js";

/** The format this rsop writes and replays. */
export const CHANGE_LOG_FORMAT = 2;

/** The key of the format in a store's meta table. */
export const LOG_FORMAT_KEY = "log_format";

enablePatches();
// No freezing: the result is validated, serialized and dropped.
const immer = new Immer({ autoFreeze: false });

/**
 * What opening a database whose meta table holds `found` (undefined: no format recorded) must do.
 * @throws StoreError for a format this rsop does not know (a newer rsop wrote it).
 */
export function logFormatAction(found: string | undefined, where: string): "current" | "upgrade" {
  if (found === String(CHANGE_LOG_FORMAT)) return "current";
  if (found === undefined || found === "1") return "upgrade";
  throw new StoreError(
    `${where} holds a change log of format ${found}; this rsop reads format ${CHANGE_LOG_FORMAT} (and upgrades format 1 when it opens it): serve it with the rsop that wrote it, or a newer one`,
  );
}

/**
 * The snapshot of the last change of a format-1 log: `snapshot` (JSON, as stored) with the changes'
 * patches applied in order, validated as a snapshot of its kind is at load (a system's is normalized
 * by parseSnapshot, as a live system holds it).
 * @throws StoreError naming the database and both formats when the changes do not apply or the result
 *   is not a valid snapshot (the database is left as it is).
 */
export function replayFormat1(
  kind: StoredKind,
  snapshot: unknown,
  changes: readonly { readonly seq: number; readonly patches: readonly unknown[] }[],
  where: string,
): unknown {
  const cannot = (why: string) =>
    new StoreError(
      `${where} holds a change log of format 1, which this rsop (format ${CHANGE_LOG_FORMAT}) upgrades when it opens it, but the changes after the latest snapshot (${changes[0]?.seq ?? 0} to ${changes.at(-1)?.seq ?? 0}) ${why}; serve it once with the rsop that wrote it and stop it with SIGTERM (that stores a snapshot of the last change), then open it with this one`,
    );
  let next: unknown;
  try {
    // One applyPatches for them all: one draft of each list, where one per change would copy it each time.
    next = immer.applyPatches(
      snapshot as object,
      changes.flatMap((c) => c.patches as Patch[]),
    );
  } catch (e) {
    throw cannot(`do not apply: ${(e as Error).message}`);
  }
  const parsed = kind === "system" ? parseSnapshot(next) : parsePanel(next);
  if (!parsed.ok) throw cannot(`do not make a valid snapshot: ${messages(parsed.issues)}`);
  return kind === "system" ? parsed.value : next;
}

function messages(issues: readonly Issue[]): string {
  const shown = issues.slice(0, 5).map((i) => i.message);
  return issues.length > 5 ? `${shown.join(" ")} (and ${issues.length - 5} more)` : shown.join(" ");
}
