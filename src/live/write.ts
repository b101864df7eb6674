// One write route run as a transition of a snapshot: the handler on an immer draft, its list edits
// after it, what changed frozen. The live system runs every write through here; so do tests and
// benchmarks that run a route without a live system.
import type { Patch } from "immer";
import type { SystemSnapshot } from "../model/index.js";
import type { Created, WriteContext, WriteInput } from "./operations/common.js";
import { ListEdits, produceSnapshot } from "./transition.js";
import { type SnapshotLookups, scanningLookups } from "./validation.js";

/** The result of a write that its handler accepted (validation of the result is the caller's). */
export interface Transition {
  readonly next: SystemSnapshot;
  readonly patches: Patch[];
  readonly inversePatches: Patch[];
  readonly created: Created;
}

/**
 * Runs `handler` on `base`. A refusal of the handler is thrown (Refusal), and nothing changed.
 * `lookups` locate elements of `base` and their referrers (default: by scanning).
 */
export function runWrite(
  base: SystemSnapshot,
  handler: (ctx: WriteContext) => Created,
  input: WriteInput,
  lookups: SnapshotLookups = scanningLookups(base),
): Transition {
  const { find, referrers } = lookups;
  const edits = new ListEdits();
  const { append, remove, setField } = edits;
  let created: Created = { status: 204 };
  const [next, patches, inversePatches] = produceSnapshot(
    base,
    (draft) => {
      created = handler({ draft, base, find, referrers, append, remove, setField, ...input });
    },
    edits,
  );
  return { next, patches, inversePatches, created };
}
