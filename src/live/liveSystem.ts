// A system that changes: its state, changed in place entity by entity (semantics L19, L21), an
// engine always consistent with it, and a snapshot of it that never changes, made when asked for.
// Every change is an API route run as steps on the state (write.ts, state.ts).
import { type Patch, freeze } from "immer";
import { applySnapshotPatches } from "./transition.js";
import { runHandlers, runWriteCollecting } from "./write.js";
import { type AppliedChange, type EntityOp, applyKeyedPatches, applyOps, isKeyedPatches, publish } from "./state.js";
import { type Created, NO_CONTENT } from "./operations/common.js";
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
import { type Issue, type Result, type SystemSnapshot, err, ok, parseInstant, parseSnapshot } from "../model/index.js";
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
import { mergeIssues, readInput, readOperation, readRefusal } from "./body.js";
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

/** A write step's outcome: its result, and (accepted writes) the change made in place. */
type Step = { result: OperationResult } | { result: WriteResult; change: AppliedChange };

/**
 * A system that changes: its validated state, changed in place by accepted writes (each entity
 * frozen and replaced, never changed; semantics L19, L21), an engine that always answers for it,
 * and `snapshot`, a copy that never changes, made when first asked for after a change. Made by
 * createLiveSystem.
 * @example
 * let n = 0;
 * const live = createLiveSystem(json, { newId: () => `id-${++n}` });
 * if (live.ok) live.value.apply({ method: "POST", path: "/groups", body: { name: "Night" } }).status; //=> 200
 */
export class LiveSystem implements LiveTarget<SystemSnapshot, Engine, OperationResult, BatchResult> {
  /** The state: the lists are this system's own, changed in place; the root is a new object after every change. */
  #state: SystemSnapshot;
  /** The snapshot last made of the state (undefined: the state changed since). */
  #published: SystemSnapshot | undefined;
  /** The snapshot made before, whose unchanged lists the next one shares. */
  #previous: SystemSnapshot | undefined;
  /** Lists changed since #previous was made. */
  readonly #dirty = new Set<string>();
  readonly #engine: Engine;
  readonly #newId: IdSource;
  readonly #now: () => number;
  /** Validates writes against indexes of the state, as parseSnapshot would the resulting snapshot. */
  readonly #validator = new WriteValidator();

  /** @internal use createLiveSystem. */
  constructor(snapshot: SystemSnapshot, newId: IdSource, now: () => number) {
    this.#state = ownState(snapshot);
    this.#published = this.#previous = publish(this.#state, undefined, new Set());
    this.#engine = createEngine(this.#state);
    this.#newId = newId;
    this.#now = now;
  }

  /**
   * The current snapshot: frozen where it matters (semantics L19) and never changed. The first read
   * after a change copies the lists that changed (a list of 100,000 holders: about half a
   * millisecond); read `current` for a look within one synchronous stretch.
   */
  get snapshot(): SystemSnapshot {
    if (this.#published === undefined) {
      this.#published = this.#previous = publish(this.#state, this.#previous, this.#dirty);
      this.#dirty.clear();
    }
    return this.#published;
  }

  /**
   * The state now, without a copy: the same content as `snapshot`, but its lists are this system's
   * own and change with the next accepted write (the object itself is a new one after each
   * change, so it can key a cache). Read it and let go of it within one synchronous stretch.
   */
  get current(): SystemSnapshot {
    return this.#state;
  }

  /** The engine of the current state. */
  get engine(): Engine {
    return this.#engine;
  }

  /**
   * Builds the indexes writes are validated against now, rather than on the first write (about
   * 0.3 s at 100,000 holders): a server does it before it listens, so that no request waits for it.
   * @example
   * live.prepareWrites(); // the first write then costs what any write costs
   */
  prepareWrites(): void {
    this.#validator.lookups(this.#state);
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
    const step = this.#step(read.one);
    if ("change" in step) this.#commit([step.change]);
    return step.result;
  }

  /**
   * What operations would change in who can get in, without applying them: the operations run as
   * a batch would (all or nothing) and are taken back, and the answer is diffAccess of the current
   * system against the system they made, over the period (default: the coming week from the live
   * system's clock). Nothing changes: the state and engine stay as they are, and the ids the
   * operations' creates drew are the ones the next creates get, so applying the same operations
   * next gives the same ids.
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
    const before = this.snapshot;
    let after: SystemSnapshot = before;
    const results: OperationResult[] = [];
    const refusal = this.#trial(
      list,
      (i, step) => {
        if (!step.result.ok) return { ...step.result, index: i };
        results.push(step.result);
        return undefined;
      },
      (changed) => {
        if (changed) after = publish(this.#state, undefined, new Set());
      },
    );
    if (refusal !== undefined) return refusal;
    // The cost is checked on the snapshots, before the other side is compiled (HP1).
    const plan = planDiff(before, after, period);
    const engineAfter = after === before ? this.#engine : createEngine(after);
    return { ok: true, status: 200, results, diff: runDiff(this.#engine, engineAfter, plan) };
  }

  /**
   * Runs `list` as steps on the state, each seeing the accepted ones before it, and takes every
   * change back: `each` is told each step's outcome (a value it returns stops the run and is the
   * answer), `end` whether anything changed, before the changes are taken back. The ids the
   * creates drew go to the next creates, as if never drawn, unless `keepIds` (the writes are made
   * later through applyPatches of their results, with those ids).
   */
  #trial<T>(
    list: readonly Operation[],
    each: (i: number, step: Step) => T | undefined,
    end: (changed: boolean) => void = () => undefined,
    keepIds = false,
  ): T | undefined {
    const drawn: string[] = [];
    const newId = (): string => {
      const id = this.#drawId();
      drawn.push(id);
      return id;
    };
    const mark = this.#validator.mark(this.#state);
    const changes: AppliedChange[] = [];
    try {
      for (let i = 0; i < list.length; i++) {
        const step = this.#step(list[i]!, changes.length > 0, newId);
        const stop = each(i, step);
        if (stop !== undefined) return stop;
        if ("change" in step) changes.push(step.change);
      }
      end(changes.length > 0);
      return undefined;
    } finally {
      this.#takeBack(changes, mark);
      if (!keepIds) {
        this.#replayIds = [...drawn, ...this.#replayIds.slice(this.#replayAt)];
        this.#replayAt = 0;
      }
    }
  }

  /**
   * Replays patches made elsewhere (replication, a log, or undo with a result's `inversePatches`).
   * Patches addressed by entity key (what writes make, L21) are applied in place; any other patch
   * (by position, a top-level field) makes the whole snapshot again and validates it in full.
   */
  applyPatches(patches: readonly Patch[]): Result<void> {
    if (patches.length === 0) return ok(undefined);
    if (!isKeyedPatches(patches, this.#state)) return this.#replaceWhole(patches);
    const { find } = this.#validator.lookups(this.#state);
    let change: AppliedChange;
    try {
      change = applyKeyedPatches(this.#state, patches, find);
    } catch (e) {
      return err([invalidPatch(e)]);
    }
    const issues = this.#validator.validate(this.#state, change.touched);
    if (issues.length > 0) {
      change.undo();
      return err(issues);
    }
    this.#commit([change]);
    return ok(undefined);
  }

  /** Patches that are not all elements' by key: applied to a copy, which is validated whole and becomes the state. */
  #replaceWhole(patches: readonly Patch[]): Result<void> {
    let next: SystemSnapshot;
    try {
      next = applySnapshotPatches(this.snapshot, patches);
    } catch (e) {
      return err([invalidPatch(e)]);
    }
    const parsed = parseSnapshot(next, { plainJson: true });
    if (!parsed.ok) return err(parsed.issues);
    // The patched snapshot as it is (what a replica was sent), not its normalized copy; the
    // indexes hold the elements as parsed, in the same positions.
    this.#state = ownState(next);
    this.#validator.reset(parsed.value);
    for (const k of Object.keys(this.#state)) this.#dirty.add(k);
    this.#published = undefined;
    this.#engine.update(this.#state, patches);
    return ok(undefined);
  }

  /** Takes back changes made since `mark`, last first, and steps the indexes back to it. */
  #takeBack(changes: readonly AppliedChange[], mark: number): void {
    for (let k = changes.length - 1; k >= 0; k--) changes[k]!.undo();
    this.#validator.rollback(mark);
  }

  /** Commits accepted changes: the indexes keep them, the engine follows their patches, the snapshot is made anew when asked for. */
  #commit(changes: readonly AppliedChange[]): void {
    this.#validator.commit();
    const patches: Patch[] = [];
    for (const c of changes) {
      for (const p of c.patches) patches.push(p);
      for (const k of c.touched.keys()) this.#dirty.add(k);
    }
    if (patches.length === 0) return;
    this.#published = undefined;
    this.#state = { ...this.#state };
    this.#engine.update(this.#state, patches);
  }

  #applyBatch(ops: readonly Operation[]): BatchResult {
    return this.#applyAppends(ops) ?? this.#applySequence(ops);
  }

  /**
   * A batch of creates that only append (holders, groups, rules, partitions) runs its handlers in
   * one pass and is validated once (L20). Null when the batch is not such a batch, a create refers
   * to an id a later one creates, or anything is refused: the batch then runs one operation after
   * the other (reusing the ids drawn here), which names the first refused operation and its
   * problems exactly.
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
    const steps: EntityOp[] = [];
    const created: Created[] = [];
    try {
      runHandlers(this.#state, this.#validator.lookups(this.#state), steps, (ctx) => {
        routes.forEach((r, k) =>
          created.push(r.handler({ ...ctx, params: r.params, body: ops[k]!.body, newId, now: this.#now })),
        );
        return NO_CONTENT;
      });
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      return fallBack();
    }
    const later = new Set<string>();
    let forward = steps.length !== ops.length;
    for (let k = ops.length - 1; k >= 0 && !forward; k--) {
      forward = mentions(ops[k]!.body, later);
      if (created[k]!.id !== undefined) later.add(created[k]!.id!);
    }
    if (forward) return fallBack();
    const change = applyOps(this.#state, steps);
    if (this.#validator.validate(this.#state, change.touched).length > 0) {
      change.undo();
      return fallBack();
    }
    const n = ops.length;
    const results: OperationResult[] = created.map((c, k) => ({
      ok: true,
      status: c.status,
      ...(c.id !== undefined ? { id: c.id } : {}),
      patches: [change.patches[k]!],
      inversePatches: [change.inversePatches[n - 1 - k]!],
    }));
    this.#commit([change]);
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
    const results: OperationResult[] = [];
    const each = (_i: number, step: Step): undefined => {
      results.push(step.result);
    };
    // The ids checked writes drew are theirs: applyPatches of their results makes those entities.
    this.#trial("many" in read ? read.many : [read.one], each, undefined, true);
    return results;
  }

  #applySequence(ops: readonly Operation[]): BatchResult {
    const mark = this.#validator.mark(this.#state);
    const changes: AppliedChange[] = [];
    const results: OperationResult[] = [];
    for (let i = 0; i < ops.length; i++) {
      const step = this.#step(ops[i]!, changes.length > 0);
      if (!step.result.ok) {
        this.#takeBack(changes, mark);
        return { ...step.result, index: i };
      }
      results.push(step.result);
      if ("change" in step) changes.push(step.change);
    }
    this.#commit(changes);
    return { ok: true, status: 200, results };
  }

  /**
   * Runs one operation on the state: a read answers; an accepted write is made in place (and the
   * indexes follow it), a refused one changes nothing. `staleEngine`: earlier steps of the same
   * batch changed the state and the engine does not know yet (a read then compiles its own).
   */
  #step(given: Operation, staleEngine = false, newId: IdSource = this.#drawId): Step {
    // Operations apply read already are not read again; preview's are read here (HJ3).
    const op = readOperation(given);
    const unreadable = readRefusal(op);
    if (unreadable !== undefined) return { result: unreadable };
    const routed = routeOperation(op, matchRoute, "route");
    if ("refused" in routed) return { result: routed.refused };
    const { route, query } = routed;
    const state = this.#state;
    try {
      if (route.kind === "read") {
        const answer = route.handler({
          snapshot: state,
          engine: staleEngine ? createEngine(publish(state, undefined, new Set())) : this.#engine,
          params: route.params,
          query,
          now: this.#now,
          ...(op.jsonBytes === undefined ? {} : { jsonBytes: op.jsonBytes }),
        });
        return { result: { ok: true, status: 200, ...answer } };
      }
      const { ops, created, pending } = runWriteCollecting(
        state,
        route.handler,
        { params: route.params, body: op.body, newId, now: this.#now },
        this.#validator.lookups(state),
      );
      const mark = this.#validator.mark(state);
      const change = applyOps(state, ops);
      const issues = this.#validator.validate(state, change.touched);
      if (issues.length > 0 || pending.length > 0) {
        const target = created.id ?? Object.values(route.params).at(-1);
        const atBody = toBodyPaths(issues, state, target);
        // Problems of the body the handler went on past come first; the snapshot's add what they do not name (HS6).
        const result = pending.length > 0 ? refused(400, mergeIssues(pending, atBody)) : refusedWrite(atBody);
        change.undo();
        this.#validator.rollback(mark);
        return { result };
      }
      const result: WriteResult = {
        ok: true,
        status: created.status,
        ...(created.id !== undefined ? { id: created.id } : {}),
        patches: change.patches,
        inversePatches: change.inversePatches,
      };
      return { result, change };
    } catch (e) {
      if (e instanceof Refusal) return { result: refused(e.status, e.issues) };
      throw e;
    }
  }
}

/** A live system's own state of a validated snapshot: the root and lists copied, every entity frozen (L19). */
function ownState(s: SystemSnapshot): SystemSnapshot {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (!Array.isArray(v)) out[k] = v;
    else {
      for (const e of v) freeze(e, true);
      out[k] = v.slice();
    }
  }
  return out as unknown as SystemSnapshot;
}

function invalidPatch(e: unknown): Issue {
  return {
    code: "invalidPatch",
    path: [],
    message: `The patches do not apply to this system: ${(e as Error).message}`,
  };
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
