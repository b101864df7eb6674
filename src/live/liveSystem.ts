// A system that changes: the validated snapshot (immer-frozen, structurally shared) and an engine
// always consistent with it. Every change is an API route applied as an immer transition.
import type { Patch } from "immer";
import { applySnapshotPatches, freezeSnapshot } from "./transition.js";
import { type Transition, runWrite } from "./write.js";
import { type Created, NO_CONTENT, type WriteContext } from "./operations/common.js";
import { createGroup } from "./operations/groups.js";
import { createHolder } from "./operations/holders.js";
import { createPartition } from "./operations/partitions.js";
import { createRule } from "./operations/rules.js";
import type { WriteHandler } from "./routes.js";

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

/** Creates whose handlers only append one element and read nothing of the snapshot. */
const APPEND_ONLY: ReadonlySet<WriteHandler> = new Set([createHolder, createGroup, createRule, createPartition]);
import {
  type AccessDiff,
  type DiffLimits,
  type DiffOptions,
  type Engine,
  createEngine,
  planDiff,
  runDiff,
} from "../evaluate/index.js";
import { type Result, type SystemSnapshot, err, ok, parseInstant, parseSnapshot } from "../model/index.js";
import { type IdSource, randomIds } from "./ids.js";
import {
  type Operation,
  type OperationResult,
  Refusal,
  type RefusedResult,
  type WriteResult,
  refused,
  refusedWrite,
} from "./operation.js";
import { routeOperation } from "./routeTable.js";
import { matchRoute } from "./routes.js";
import { toBodyPaths } from "./operations/bodyPaths.js";
import { readInput, readOperation, readRefusal } from "./body.js";
import { WriteValidator } from "./validation.js";
import type { LiveTarget } from "./liveTarget.js";

/** Options of createLiveSystem. */
export interface LiveSystemOptions {
  /** Where created ids come from (default: random UUID v4); a deterministic function makes them repeatable. */
  readonly newId?: IdSource;
  /** The clock for `created` stamps of new cloud nodes and devices, and the default RSOP instant (default Date.now). */
  readonly now?: () => number;
}

/** The answer to a preview: every operation's result and the access diff they would make, else the first refusal. */
export type PreviewResult =
  | { readonly ok: true; readonly status: 200; readonly results: readonly OperationResult[]; readonly diff: AccessDiff }
  | (RefusedResult & { readonly index: number });

/** The answer to a batch: every operation's result when all were accepted, else the first refusal. */
export type BatchResult =
  | { readonly ok: true; readonly status: 200; readonly results: readonly OperationResult[] }
  | (RefusedResult & { readonly index: number });

/**
 * A system that changes: its validated snapshot (deeply frozen, unchanged parts shared between
 * versions) and an engine that always answers for it. Made by createLiveSystem.
 * @example
 * let n = 0;
 * const live = createLiveSystem(json, { newId: () => `id-${++n}` });
 * if (live.ok) live.value.apply({ method: "POST", path: "/groups", body: { name: "Night" } }).status; //=> 200
 */
export class LiveSystem implements LiveTarget<SystemSnapshot, Engine, OperationResult, BatchResult> {
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
    // Read once into plain operations first (HJ3): a getter, Proxy, cycle or too deep a body is a 400, never a throw.
    const read = readInput(input);
    if ("refused" in read) return read.refused;
    if ("many" in read) return this.#applyBatch(read.many);
    const step = this.#step(this.#snapshot, read.one);
    if ("next" in step) this.#commit(step.next, step.result.patches);
    return step.result;
  }

  /**
   * What operations would change in who can get in, without applying them: the operations run as
   * a batch would (all or nothing) on a copy, and the answer is diffAccess of the current system
   * against that copy over the period (default: the coming week from the live system's clock).
   * Nothing changes: the snapshot and engine stay as they are, and the ids the operations' creates
   * drew are the ones the next creates get, so applying the same operations next gives the same ids.
   * @example
   * live.preview([{ method: "DELETE", path: "/rules/rule-nurses-day-weekdays" }], { from: "2026-04-13T05:00:00Z" }).diff.changes.length; //=> 760 (76 nurses × 10 doors)
   * @param options - the period, and bounds of the diff's work and answer (DiffLimits; default unbounded).
   * @throws QueryError for a bad `from` or `to`, DiffBudgetError over a bound (the operations are
   *   checked first: a refused one is answered, not thrown).
   */
  preview(ops: Operation | readonly Operation[], options: Partial<DiffOptions> & DiffLimits = {}): PreviewResult {
    // Read once into plain operations first, as apply does (HJ3): a revoked Proxy is a 400, never a throw.
    const read = readInput(ops);
    if ("refused" in read) return { ...read.refused, index: 0 };
    const list: readonly Operation[] = "many" in read ? read.many : [read.one];
    const now = this.#now();
    const from = options.from ?? now;
    const period: DiffOptions & DiffLimits = { ...options, from, to: options.to ?? parseInstant(from) + WEEK_MS };
    const drawn: string[] = [];
    const newId = (): string => {
      const id = this.#drawId();
      drawn.push(id);
      return id;
    };
    try {
      let current = this.#snapshot;
      const results: OperationResult[] = [];
      for (let i = 0; i < list.length; i++) {
        const step = this.#step(current, list[i]!, current !== this.#snapshot, newId);
        if (!step.result.ok) return { ...step.result, index: i };
        results.push(step.result);
        if ("next" in step) current = step.next;
      }
      // The cost is checked on the snapshots, before the other side is compiled (HP1).
      const plan = planDiff(this.#snapshot, current, period);
      const after = current === this.#snapshot ? this.#engine : createEngine(current);
      return { ok: true, status: 200, results, diff: runDiff(this.#engine, after, plan) };
    } finally {
      // The ids drawn go to the next creates, as if never drawn.
      this.#replayIds = [...drawn, ...this.#replayIds.slice(this.#replayAt)];
      this.#replayAt = 0;
    }
  }

  /** Replays patches made elsewhere (replication, or undo with a result's `inversePatches`). */
  applyPatches(patches: readonly Patch[]): Result<void> {
    let next: SystemSnapshot;
    try {
      next = applySnapshotPatches(this.#snapshot, patches);
    } catch (e) {
      return err([
        {
          code: "invalidPatch",
          path: [],
          message: `The patches do not apply to this snapshot: ${(e as Error).message}`,
        },
      ]);
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
    return this.#applyAppends(ops) ?? this.#applySequence(ops);
  }

  /**
   * A batch of creates that only append (holders, groups, rules, partitions) runs on one draft and is
   * validated once: each list is copied once instead of once per operation. Null when the batch is
   * not such a batch, a create refers to an id a later one creates, or anything is refused: the batch
   * then runs one operation after the other (reusing the ids drawn here), which names the first
   * refused operation and its problems exactly.
   */
  #applyAppends(ops: readonly Operation[]): BatchResult | null {
    if (ops.length < 2) return null;
    const routes: { handler: WriteHandler; params: Readonly<Record<string, string>> }[] = [];
    for (const op of ops) {
      const routed = routeOperation(op, matchRoute, "route");
      if ("refused" in routed || routed.route.kind !== "write" || !APPEND_ONLY.has(routed.route.handler)) return null;
      routes.push(routed.route);
    }
    const drawn: string[] = [];
    const newId = () => {
      const id = this.#drawId();
      drawn.push(id);
      return id;
    };
    const fallBack = (): null => {
      this.#replayIds = [...drawn, ...this.#replayIds.slice(this.#replayAt)];
      this.#replayAt = 0;
      return null;
    };
    const base = this.#snapshot;
    const created: Created[] = [];
    let t: Transition;
    try {
      const all = (ctx: WriteContext): Created => {
        routes.forEach((r, k) => created.push(r.handler({ ...ctx, params: r.params, body: ops[k]!.body })));
        return NO_CONTENT;
      };
      t = runWrite(base, all, { params: {}, body: null, newId, now: this.#now }, this.#validator.lookups(base, base));
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      return fallBack();
    }
    const later = new Set<string>();
    let forward = t.patches.length !== ops.length;
    for (let k = ops.length - 1; k >= 0 && !forward; k--) {
      forward = mentions(ops[k]!.body, later);
      if (created[k]!.id !== undefined) later.add(created[k]!.id!);
    }
    if (forward || this.#validator.validate(base, base, t.next, t.patches).length > 0) return fallBack();
    const n = ops.length;
    const results: OperationResult[] = created.map((c, k) => ({
      ok: true,
      status: c.status,
      ...(c.id !== undefined ? { id: c.id } : {}),
      patches: [t.patches[k]!],
      inversePatches: [t.inversePatches[n - 1 - k]!],
    }));
    this.#commit(t.next, t.patches);
    return { ok: true, status: 200, results };
  }

  /**
   * Ids a batch drew before it fell back to running one operation after the other: the operations
   * (and, when the batch stops early, the next writes) use them again, in order, so every id is the
   * one a system that only ever ran operations one at a time would have given.
   */
  #replayIds: string[] = [];
  #replayAt = 0;
  readonly #drawId = (): string => {
    if (this.#replayAt < this.#replayIds.length) return this.#replayIds[this.#replayAt++]!;
    if (this.#replayIds.length > 0) [this.#replayIds, this.#replayAt] = [[], 0];
    return this.#newId();
  };

  /**
   * Checks write operations in order without changing anything: each sees the accepted ones before
   * it (a refused one is left out), and each result is what `apply` would answer one after the other.
   * `applyPatches` of the accepted results' patches, in order, then makes the change (a replica
   * stores a write before it shows it).
   * @example
   * live.check([{ method: "POST", path: "/groups", body: { name: "Night" } }])[0]!.status; //=> 200
   */
  check(ops: readonly Operation[]): OperationResult[] {
    const read = readInput(ops);
    if ("refused" in read) return [read.refused];
    let current = this.#snapshot;
    const results: OperationResult[] = [];
    for (const op of "many" in read ? read.many : [read.one]) {
      const step = this.#step(current, op, current !== this.#snapshot);
      results.push(step.result);
      if ("next" in step) current = step.next;
    }
    return results;
  }

  #applySequence(ops: readonly Operation[]): BatchResult {
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

  #step(
    base: SystemSnapshot,
    given: Operation,
    staleEngine = false,
    newId: IdSource = this.#drawId,
  ): { result: OperationResult } | { result: WriteResult; next: SystemSnapshot } {
    // Operations apply read already are not read again; preview's are read here (HJ3).
    const op = readOperation(given);
    const unreadable = readRefusal(op);
    if (unreadable !== undefined) return { result: unreadable };
    const routed = routeOperation(op, matchRoute, "route");
    if ("refused" in routed) return { result: routed.refused };
    const { route, query } = routed;
    try {
      if (route.kind === "read") {
        const engine = staleEngine ? createEngine(base) : this.#engine;
        const answer = route.handler({
          snapshot: base,
          engine,
          params: route.params,
          query,
          now: this.#now,
          ...(op.jsonBytes === undefined ? {} : { jsonBytes: op.jsonBytes }),
        });
        return { result: { ok: true, status: 200, ...answer } };
      }
      const lookups = this.#validator.lookups(this.#snapshot, base);
      const { next, patches, inversePatches, created } = runWrite(
        base,
        route.handler,
        { params: route.params, body: op.body, newId, now: this.#now },
        lookups,
      );
      const issues = this.#validator.validate(this.#snapshot, base, next, patches);
      if (issues.length > 0) {
        const target = created.id ?? Object.values(route.params).at(-1);
        return { result: refusedWrite(toBodyPaths(issues, next, target)) };
      }
      const result: WriteResult = {
        ok: true,
        status: created.status,
        ...(created.id !== undefined ? { id: created.id } : {}),
        patches,
        inversePatches,
      };
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

/** Whether `body` holds, at any depth, one of `ids` as a string. */
function mentions(body: unknown, ids: ReadonlySet<string>): boolean {
  if (ids.size === 0) return false;
  if (typeof body === "string") return ids.has(body);
  if (body === null || typeof body !== "object") return false;
  return Object.values(body).some((v) => mentions(v, ids));
}
