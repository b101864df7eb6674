// A system that changes: the validated snapshot (immer-frozen, structurally shared) and an engine
// always consistent with it. Every change is a seed route applied as an immer transition.
import type { Patch } from "immer";
import { applySnapshotPatches, freezeSnapshot } from "./transition.js";
import { runWrite } from "./write.js";
import { type Engine, createEngine } from "../evaluate/index.js";
import { type Result, type SystemSnapshot, err, ok, parseSnapshot } from "../model/index.js";
import { type IdSource, randomIds } from "./ids.js";
import { type Operation, type OperationResult, Refusal, type RefusedResult, type WriteResult, refused, refusedWrite } from "./operation.js";
import { routeOperation } from "./routeTable.js";
import { matchRoute } from "./routes.js";
import { toBodyPaths } from "./operations/bodyPaths.js";
import { WriteValidator } from "./validation.js";

/** Options of createLiveSystem. */
export interface LiveSystemOptions {
  /** Where created ids come from (default: random UUID v4); `seededIds(n)` makes them repeatable. */
  readonly newId?: IdSource;
  /** The clock for `created` stamps of new cloud nodes and devices, and the default RSOP instant (default Date.now). */
  readonly now?: () => number;
}

/** The answer to a batch: every operation's result when all were accepted, else the first refusal. */
export type BatchResult =
  | { readonly ok: true; readonly status: 200; readonly results: readonly OperationResult[] }
  | (RefusedResult & { readonly index: number });

/**
 * A system that changes: its validated snapshot (deeply frozen, unchanged parts shared between
 * versions) and an engine that always answers for it. Made by createLiveSystem.
 * @example
 * const live = createLiveSystem(json, { newId: seededIds(1) });
 * if (live.ok) live.value.apply({ method: "POST", path: "/groups", body: { name: "Night" } }).status; //=> 200
 */
export class LiveSystem {
  #snapshot: SystemSnapshot;
  #engine: Engine;
  readonly #newId: IdSource;
  readonly #now: () => number;
  /** Validates writes against indexes of the snapshot, as parseSnapshot would the resulting snapshot. */
  readonly #validator = new WriteValidator();

  /** @internal use createLiveSystem. */
  constructor(snapshot: SystemSnapshot, newId: IdSource, now: () => number) {
    this.#snapshot = freezeSnapshot(snapshot);
    this.#engine = createEngine(this.#snapshot);
    this.#newId = newId;
    this.#now = now;
  }

  /** The current validated snapshot (deeply frozen; unchanged parts are shared between versions). */
  get snapshot(): SystemSnapshot {
    return this.#snapshot;
  }

  /** The engine of the current snapshot. */
  get engine(): Engine {
    return this.#engine;
  }

  /**
   * Applies one operation (a route of the systems interface) or a batch (all or nothing).
   * @example
   * live.apply({ method: "PUT", path: "/holders/h-1/groups/g-2" }); //=> { ok: true, status: 204, patches, inversePatches }
   */
  apply(op: Operation): OperationResult;
  apply(ops: readonly Operation[]): BatchResult;
  apply(input: Operation | readonly Operation[]): OperationResult | BatchResult {
    if (Array.isArray(input)) return this.#applyBatch(input as readonly Operation[]);
    const step = this.#step(this.#snapshot, input as Operation);
    if ("next" in step) this.#commit(step.next, step.result.patches);
    return step.result;
  }

  /** Replays patches made elsewhere (replication, or undo with a result's `inversePatches`). */
  applyPatches(patches: readonly Patch[]): Result<void> {
    let next: SystemSnapshot;
    try {
      next = applySnapshotPatches(this.#snapshot, patches);
    } catch (e) {
      return err([{ code: "invalidPatch", path: [], message: `The patches do not apply to this snapshot: ${(e as Error).message}` }]);
    }
    const issues = this.#validator.validate(this.#snapshot, this.#snapshot, next, patches);
    if (issues.length > 0) return err(issues);
    this.#commit(next, patches);
    return ok(undefined);
  }

  /** Moves the engine to `next` incrementally (Engine.update: only what `patches` reach is recompiled). */
  #commit(next: SystemSnapshot, patches: readonly Patch[]): void {
    this.#engine.update(next, patches);
    this.#snapshot = next;
  }

  #applyBatch(ops: readonly Operation[]): BatchResult {
    let current = this.#snapshot;
    const results: OperationResult[] = [];
    const patches: Patch[] = [];
    for (let i = 0; i < ops.length; i++) {
      const step = this.#step(current, ops[i]!, current !== this.#snapshot);
      if (!step.result.ok) return { ...step.result, index: i };
      results.push(step.result);
      if ("next" in step) {
        current = step.next;
        patches.push(...step.result.patches);
      }
    }
    if (current !== this.#snapshot) this.#commit(current, patches);
    return { ok: true, status: 200, results };
  }

  #step(base: SystemSnapshot, op: Operation, staleEngine = false): { result: OperationResult } | { result: WriteResult; next: SystemSnapshot } {
    const routed = routeOperation(op, matchRoute, "route");
    if ("refused" in routed) return { result: routed.refused };
    const { route, query } = routed;
    try {
      if (route.kind === "read") {
        const engine = staleEngine ? createEngine(base) : this.#engine;
        const answer = route.handler({ snapshot: base, engine, params: route.params, query, now: this.#now });
        return { result: { ok: true, status: 200, ...answer } };
      }
      const lookups = this.#validator.lookups(this.#snapshot, base);
      const { next, patches, inversePatches, created } = runWrite(base, route.handler, { params: route.params, body: op.body, newId: this.#newId, now: this.#now }, lookups);
      const issues = this.#validator.validate(this.#snapshot, base, next, patches);
      if (issues.length > 0) {
        const target = created.id ?? Object.values(route.params).at(-1);
        return { result: refusedWrite(toBodyPaths(issues, next, target)) };
      }
      const result: WriteResult = { ok: true, status: created.status, ...(created.id !== undefined ? { id: created.id } : {}), patches, inversePatches };
      return { result, next };
    } catch (e) {
      if (e instanceof Refusal) return { result: refused(e.status, e.issues) };
      throw e;
    }
  }
}

/**
 * Validates a snapshot and starts a live system on it.
 * @example
 * const r = createLiveSystem(json);
 * if (r.ok) r.value.apply({ method: "POST", path: "/groups", body: { name: "Night" } }); //=> { ok: true, status: 200, id, … }
 */
export function createLiveSystem(input: unknown, options: LiveSystemOptions = {}): Result<LiveSystem> {
  const parsed = parseSnapshot(input);
  if (!parsed.ok) return err(parsed.issues);
  return ok(new LiveSystem(parsed.value, options.newId ?? randomIds, options.now ?? Date.now));
}
