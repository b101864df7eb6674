// What every live system is, whatever its architecture: a validated snapshot, an engine that answers
// for it, operations ({method, path, body}) that change or read it, and the patches a log replays.
// LiveSystem (2.0) and the 1.0 PanelLiveSystem (legacy1/) both implement it, so a store, a replica or
// a route calls one method without asking which architecture it holds.
import type { Patch } from "immer";
import type { Result } from "../model/index.js";
import type { Operation } from "./operation.js";

/**
 * A live system.
 * @typeParam S - the snapshot.
 * @typeParam E - the engine answering for it.
 * @typeParam R - one operation's result.
 * @typeParam B - a batch's result.
 */
export interface LiveTarget<S = unknown, E = unknown, R = unknown, B = unknown> {
  /** The current snapshot (frozen; never changes). */
  readonly snapshot: S;
  /**
   * The state now, for reading within one synchronous stretch: `snapshot`'s content without a copy
   * (a 2.0 system changes its lists in place; a new object after each change).
   */
  readonly current: S;
  /** An engine that answers for the current snapshot. */
  readonly engine: E;
  /** Applies one operation: a read's answer, an accepted write (with its patches), or a refusal. */
  apply(op: Operation): R;
  /** Applies a batch: every result when all were accepted, else the first refusal, and nothing changed. */
  apply(ops: readonly Operation[]): B;
  /** Replays patches of an accepted write (a log, a replica, an undo). */
  applyPatches(patches: readonly Patch[]): Result<void>;
}
