// A 1.0 panel that changes: the validated panel snapshot (immer-frozen, structurally shared) and a
// PanelEngine always consistent with it. Every change is a 1.0 panel API route applied as an immer
// transition, then the whole resulting panel is validated (parsePanel) and the engine rebuilt.
import type { Patch } from "immer";
import { applySnapshotPatches, freezeSnapshot, produceSnapshot } from "../../live/transition.js";
import { PanelEngine } from "../panelEngine.js";
import { type Issue, type Result, err, ok } from "../../model/index.js";
import { type LoadedPanel, parsePanel } from "../parsePanel.js";
import type { PanelSnapshot } from "../panelSchema.js";
import { type Operation, Refusal, type RefusedResult, refused, refusedWrite } from "../../live/operation.js";
import {
  collectBodyIssues,
  connectionBodyIssue,
  mergeIssues,
  readInput,
  readOperation,
  readRefusal,
} from "../../live/body.js";
import { routeOperation } from "../../live/routeTable.js";
import type { LiveTarget } from "../../live/liveTarget.js";
import type { PanelWritten } from "./panelOperations.js";
import { matchPanelRoute } from "./panelRoutes.js";

/** Issue codes of a resulting panel that make a write a conflict (409) rather than invalid (400). */

/** An accepted 1.0 write: 1.0 creates answer 200 with the new integer id (a custom field's id is its given string). */
export interface PanelWriteResult {
  readonly ok: true;
  readonly status: 200 | 204;
  readonly id?: number | string;
  readonly patches: readonly Patch[];
  readonly inversePatches: readonly Patch[];
}

/** A 1.0 read's answer: the route's response body, and for lists the total before paging. */
export interface PanelReadResult {
  readonly ok: true;
  readonly status: 200;
  readonly body: unknown;
  readonly total?: number;
}

/** What one 1.0 operation came to: an accepted write, a read's answer, or a refusal. */
export type PanelOperationResult = PanelWriteResult | PanelReadResult | RefusedResult;

/** The answer to a batch: every operation's result when all were accepted, else the first refusal. */
export type PanelBatchResult =
  | { readonly ok: true; readonly status: 200; readonly results: readonly PanelOperationResult[] }
  | (RefusedResult & { readonly index: number });

function startsWith(path: readonly (string | number)[], prefix: readonly (string | number)[]): boolean {
  return prefix.length <= path.length && prefix.every((p, i) => path[i] === p);
}

/**
 * The written entity's own uniqueness conflict, when the panel check reported it at the other party
 * (the later of the two): at the body instead, naming the other party by its panel path (L14).
 */
function otherParty(panel: PanelSnapshot, issue: Issue, at: readonly (string | number)[]): Issue | null {
  const p = issue.path;
  const list = (panel as unknown as Record<string, unknown>)[String(at[0])];
  if (!Array.isArray(list)) return null;
  // A full lockhub is the written device's problem: the connection its body chose.
  if (
    issue.code === "overCapacity" &&
    at[0] === "devices" &&
    at.length === 2 &&
    p[0] === "connections" &&
    typeof p[1] === "number"
  )
    return panel.devices[at[1] as number]?.connection === panel.connections[p[1]]?.id
      ? { ...issue, path: ["body", "connection"] }
      : null;
  if (
    (issue.code === "duplicateName" || issue.code === "portInUse") &&
    at.length === 2 &&
    p.length === 3 &&
    p[0] === at[0] &&
    typeof p[1] === "number"
  ) {
    const field = String(p[2]);
    const mine = list[at[1] as number] as Record<string, unknown> | undefined;
    const other = list[p[1]] as Record<string, unknown> | undefined;
    if (mine === undefined || other === undefined || mine === other || mine[field] !== other[field]) return null;
    if (issue.code === "portInUse" && mine.connection !== other.connection) return null;
    const what =
      issue.code === "portInUse"
        ? `Port ${String(mine.port)} of connection ${String(mine.connection)}`
        : `The name "${String(mine.name)}"`;
    return { code: issue.code, path: ["body", field], message: `${what} is already used by ${String(p[0])}[${p[1]}].` };
  }
  if (
    issue.code === "duplicateCredentialNumber" &&
    at[0] === "persons" &&
    at.length === 4 &&
    p[0] === "persons" &&
    typeof p[1] === "number" &&
    typeof p[3] === "number"
  ) {
    const mine = panel.persons[at[1] as number]?.credentials[at[3] as number];
    const other = panel.persons[p[1]]?.credentials[p[3]];
    if (mine === undefined || other === undefined || mine === other || mine.credentialNumber !== other.credentialNumber)
      return null;
    return {
      code: issue.code,
      path: ["body", "credentialNumber"],
      message: `Credential number ${String(mine.credentialNumber)} is already used by persons[${p[1]}].credentials[${p[3]}]; numbers are unique on a cloud node.`,
    };
  }
  return null;
}

/** Problems of the entity the body became are the body's (`body.firstName`, L14); others keep their panel path. */
function bodyIssues(
  panel: PanelSnapshot,
  issues: readonly Issue[],
  at: readonly (string | number)[] | undefined,
): Issue[] {
  // The whole-panel check runs on the 2.0 conversion; a message naming a person says so in 1.0 words.
  const worded = issues.map((i) =>
    i.message.includes("holders[") ? { ...i, message: i.message.replaceAll("holders[", "persons[") } : i,
  );
  if (at === undefined) return worded;
  const own = at[0] === "connections" ? connectionBodyIssue : (i: Issue) => i;
  return worded.map((i) =>
    startsWith(i.path, at)
      ? own({ ...i, path: ["body", ...i.path.slice(at.length)] })
      : (otherParty(panel, i, at) ?? i),
  );
}

type Step = { result: PanelOperationResult } | { result: PanelWriteResult; next: PanelSnapshot; loaded: LoadedPanel };

/**
 * A live architecture 1.0 panel: its validated snapshot and a PanelEngine that always answers for
 * it, changed through the 1.0 per-node routes. Made by createPanelLiveSystem.
 * @example
 * const live = createPanelLiveSystem(JSON.parse(readFileSync("examples/panel.json", "utf8")));
 * if (live.ok) live.value.apply({ method: "POST", path: "/api/groups", body: { name: "Night" } }).status; //=> 200
 */
export class PanelLiveSystem implements LiveTarget<PanelSnapshot, PanelEngine, PanelOperationResult, PanelBatchResult> {
  #snapshot: PanelSnapshot;
  #engine: PanelEngine;
  readonly #now: () => number;

  /** @internal use createPanelLiveSystem. */
  constructor(loaded: LoadedPanel, now: () => number) {
    this.#snapshot = freezeSnapshot(loaded.panel);
    this.#engine = new PanelEngine(loaded);
    this.#now = now;
  }

  /** The current validated panel (deeply frozen; unchanged parts are shared between versions). */
  get snapshot(): PanelSnapshot {
    return this.#snapshot;
  }

  /** The same as `snapshot`: a panel's snapshot is made anew by each change (LiveTarget.current). */
  get current(): PanelSnapshot {
    return this.#snapshot;
  }

  /** The PanelEngine of the current panel. */
  get engine(): PanelEngine {
    return this.#engine;
  }

  /**
   * Applies one operation (a route of the 1.0 per-node interface, relative to `{panel_url}`) or a batch (all or nothing).
   * @example
   * live.apply({ method: "POST", path: "/api/groups", body: { name: "Night" } }); //=> { ok: true, status: 200, id: 4, patches, inversePatches }
   */
  apply(op: Operation): PanelOperationResult;
  apply(ops: readonly Operation[]): PanelBatchResult;
  apply(input: Operation | readonly Operation[]): PanelOperationResult | PanelBatchResult {
    // Read once into plain operations first (HJ3): a getter, Proxy, cycle or too deep a body is a 400, never a throw.
    const read = readInput(input);
    if ("refused" in read) return read.refused;
    if ("many" in read) return this.#applyBatch(read.many);
    const step = this.#step(this.#snapshot, read.one);
    if ("next" in step) this.#commit(step.next, step.loaded);
    return step.result;
  }

  /** Replays patches made elsewhere (replication, or undo with a result's `inversePatches`). */
  applyPatches(patches: readonly Patch[]): Result<void> {
    let next: PanelSnapshot;
    try {
      next = applySnapshotPatches(this.#snapshot, patches);
    } catch (e) {
      return err([
        { code: "invalidPatch", path: [], message: `The patches do not apply to this panel: ${(e as Error).message}` },
      ]);
    }
    const checked = parsePanel(next);
    if (!checked.ok) return err(checked.issues);
    this.#commit(next, checked.value);
    return ok(undefined);
  }

  #commit(next: PanelSnapshot, loaded: LoadedPanel): void {
    this.#engine = new PanelEngine(loaded);
    this.#snapshot = next;
  }

  #applyBatch(ops: readonly Operation[]): PanelBatchResult {
    let current = this.#snapshot;
    let loaded: LoadedPanel | null = null;
    const results: PanelOperationResult[] = [];
    for (let i = 0; i < ops.length; i++) {
      const engine = loaded === null ? this.#engine : new PanelEngine(loaded);
      const step = this.#step(current, ops[i]!, engine);
      if (!step.result.ok) return { ...step.result, index: i };
      results.push(step.result);
      if ("next" in step) {
        current = step.next;
        loaded = step.loaded;
      }
    }
    if (loaded !== null) this.#commit(current, loaded);
    return { ok: true, status: 200, results };
  }

  #step(base: PanelSnapshot, given: Operation, engine: PanelEngine = this.#engine): Step {
    const op = readOperation(given);
    const unreadable = readRefusal(op);
    if (unreadable !== undefined) return { result: unreadable };
    const routed = routeOperation(op, matchPanelRoute, "1.0 route");
    if ("refused" in routed) return { result: routed.refused };
    const { route, query } = routed;
    try {
      if (route.kind === "read")
        return {
          result: {
            ok: true,
            status: 200,
            ...route.handler({ panel: base, engine, params: route.params, query, now: this.#now }),
          },
        };
      let written: PanelWritten = { status: 204 };
      let pending: readonly Issue[] = [];
      const [next, patches, inversePatches] = produceSnapshot(base, (draft) => {
        // Every problem of the body in one answer (HS6): the handler goes on past what it can.
        const run = collectBodyIssues(() => route.handler({ draft, params: route.params, body: op.body }));
        written = run.value;
        pending = run.issues;
      });
      const checked = parsePanel(next);
      if (!checked.ok || pending.length > 0) {
        const found = checked.ok ? [] : bodyIssues(next, checked.issues, written.at);
        return { result: pending.length > 0 ? refused(400, mergeIssues(pending, found)) : refusedWrite(found) };
      }
      const w = written as PanelWritten;
      const result: PanelWriteResult = {
        ok: true,
        status: w.status,
        ...(w.id !== undefined ? { id: w.id } : {}),
        patches,
        inversePatches,
      };
      return { result, next, loaded: checked.value };
    } catch (e) {
      if (e instanceof Refusal) return { result: refused(e.status, e.issues) };
      throw e;
    }
  }
}

/** Options of createPanelLiveSystem. */
export interface PanelLiveSystemOptions {
  /** The clock of RSOP reads without an `at` query (default Date.now). 1.0 ids need no id source: a create takes the next free integer. */
  readonly now?: () => number;
}

/**
 * Validates an `rsop-panel/1` snapshot and starts a live panel on it.
 * @example
 * const r = createPanelLiveSystem(JSON.parse(readFileSync("examples/panel.json", "utf8")));
 * if (r.ok) r.value.apply({ method: "POST", path: "/api/persons", body: { firstName: "Ann", lastName: "Lee" } }); //=> { ok: true, status: 200, id, … }
 */
export function createPanelLiveSystem(input: unknown, options: PanelLiveSystemOptions = {}): Result<PanelLiveSystem> {
  const parsed = parsePanel(input);
  if (!parsed.ok) return err(parsed.issues);
  return ok(new PanelLiveSystem(parsed.value, options.now ?? Date.now));
}
