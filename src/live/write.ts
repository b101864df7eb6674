// One write route run as the steps it asks for (semantics L21): the handler reads the current state,
// edits drafts of the few entities it changes (immer, one entity at a time) and asks for appends,
// removals and field replacements; nothing is changed until the live system makes the steps, in
// place (state.ts). The live system runs every write through here; so do tests and benchmarks that
// run a route without a live system.
import { type Draft, Immer } from "immer";
import type { Issue, SystemSnapshot } from "../model/index.js";
import { collectBodyIssues } from "./body.js";
import type { Collection } from "../model/checks/index.js";
import type { Created, Mutable, WriteContext, WriteInput } from "./operations/common.js";
import type { EntityOp } from "./state.js";
import { type SnapshotLookups, scanningLookups } from "./validation.js";

const immer = new Immer({ autoFreeze: false });

/** What a write's handler accepted: the steps to make, in order, and its answer. */
export interface WriteSteps {
  readonly ops: EntityOp[];
  readonly created: Created;
}

/** WriteSteps and the body problems the handler went on past (HS6): the write is refused, with them first. */
export interface CollectedWriteSteps extends WriteSteps {
  readonly pending: readonly Issue[];
}

/**
 * Runs `handler` on `base`. A refusal of the handler is thrown (Refusal), and nothing is asked for.
 * `lookups` locate elements of `base` and their referrers (default: by scanning).
 */
export function runWrite(
  base: SystemSnapshot,
  handler: (ctx: WriteContext) => Created,
  input: WriteInput,
  lookups: SnapshotLookups = scanningLookups(base),
): WriteSteps {
  const ops: EntityOp[] = [];
  const created = runHandlers(base, lookups, ops, (ctx) => handler({ ...ctx, ...input }));
  return { ops, created };
}

/**
 * runWrite collecting the body's problems across the handler's stages (HS6): a refusal names every
 * problem found before the handler stopped; problems it went on past come back as `pending`, with
 * the steps, so the checks of the resulting snapshot can name the rest before the write is refused.
 */
export function runWriteCollecting(
  base: SystemSnapshot,
  handler: (ctx: WriteContext) => Created,
  input: WriteInput,
  lookups: SnapshotLookups = scanningLookups(base),
): CollectedWriteSteps {
  const ops: EntityOp[] = [];
  const { value: created, issues } = collectBodyIssues(
    () => runHandlers(base, lookups, ops, (ctx) => handler({ ...ctx, ...input })),
    (c, id) => lookups.find(c, id) >= 0,
  );
  return { ops, created, pending: issues };
}

/**
 * Runs `body` with a context on `base` whose list edits are pushed to `ops`: first the entities it
 * drafted or replaced (in the order it first reached them), then its appends, removals and field
 * replacements in the order it asked for them. Several handlers may run in one `body` (a batch of
 * creates); their steps then come in the order they were asked for.
 */
export function runHandlers(
  base: SystemSnapshot,
  lookups: SnapshotLookups,
  ops: EntityOp[],
  body: (ctx: Omit<WriteContext, keyof WriteInput>) => Created,
): Created {
  const draft = new SparseDraft(base);
  const later: EntityOp[] = [];
  const created = body({
    draft: draft.root,
    base,
    find: lookups.find,
    referrers: lookups.referrers,
    append: (c, value) => later.push({ kind: "add", c, value }),
    remove: (c, i) => later.push({ kind: "remove", c, i }),
    setField: (c, i, key, value) => later.push({ kind: "setField", c, i, key, value }),
  });
  draft.finish(ops);
  for (const op of later) ops.push(op);
  return created;
}

/**
 * What a handler sees as `draft`: the snapshot's fields, and per list an object whose element `i`
 * is an immer draft of that one entity (made when first read) or what the handler put there. Lists
 * are read through `base`: a draft list has no other method than reading and writing an element.
 */
class SparseDraft {
  readonly root: Mutable;
  /** Per touched element (collection and position): its draft, or the value put there. */
  readonly #reached = new Map<string, { c: Collection; i: number; draft?: Draft<object>; put?: unknown }>();
  readonly #base: SystemSnapshot;

  constructor(base: SystemSnapshot) {
    this.#base = base;
    const root: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(base)) root[k] = Array.isArray(v) ? this.#list(k as Collection, v) : v;
    this.root = Object.freeze(root) as unknown as Mutable;
  }

  #list(c: Collection, list: readonly unknown[]): unknown {
    const element = (prop: string | symbol): number => {
      if (typeof prop !== "string" || !/^(0|[1-9]\d*)$/.test(prop)) return -1;
      const i = Number(prop);
      return i < list.length ? i : -1;
    };
    return new Proxy([], {
      get: (_t, prop) => {
        if (prop === "length") return list.length;
        const i = element(prop);
        if (i < 0) throw new Error(`a write handler reads the list ${c} through base, not the draft (${String(prop)})`);
        const at = `${c}\u0000${i}`;
        let r = this.#reached.get(at);
        if (r === undefined) this.#reached.set(at, (r = { c, i, draft: immer.createDraft(list[i] as object) }));
        return r.draft ?? r.put;
      },
      set: (_t, prop, value) => {
        const i = element(prop);
        if (i < 0) throw new Error(`a write handler appends to ${c} with append, not the draft (${String(prop)})`);
        this.#reached.set(`${c}\u0000${i}`, { c, i, put: value });
        return true;
      },
    });
  }

  /** The replacements the handler made (unchanged drafts left out), pushed to `ops`. */
  finish(ops: EntityOp[]): void {
    for (const r of this.#reached.values()) {
      const old = (this.#base as unknown as Record<Collection, readonly unknown[]>)[r.c][r.i];
      const value = r.draft === undefined ? r.put : immer.finishDraft(r.draft);
      if (value !== old) ops.push({ kind: "replace", c: r.c, i: r.i, value });
    }
  }
}
