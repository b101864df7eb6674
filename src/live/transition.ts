// How a live system's snapshots are frozen. immer's auto-freeze freezes the whole result, top-level
// lists included, and checks every element of a changed list on each change; V8 also copies a frozen
// array about 15 times slower than a plain one (`slice` leaves its fast path). With 100,000 holders
// those two made one holder change cost tens of milliseconds. So the live system runs immer without
// auto-freeze and freezes what a change made: every entity it touched (deeply) and the root object.
// The top-level entity lists stay plain arrays, read-only by type (semantics L19).
import { Immer, type Patch, enablePatches, freeze } from "immer";
import { isCount } from "../model/index.js";
import { isKeyedPatches, patchSnapshot } from "./state.js";

enablePatches();
const immer = new Immer({ autoFreeze: false });

type Recipe<T> = (draft: import("immer").Draft<T>) => void;

/** Freezes `value` deeply unless it is a top-level list, whose elements are then frozen. */
function freezeTop(value: unknown): void {
  if (Array.isArray(value)) for (const v of value) freeze(v, true);
  else freeze(value, true);
}

/** Freezes a snapshot as live systems keep it: the root, and every entity (or top-level value) deeply. */
export function freezeSnapshot<T extends object>(s: T): T {
  for (const v of Object.values(s)) freezeTop(v);
  return Object.freeze(s);
}

/** Freezes what `patches` reached in `next`: the entity under each path (or the top-level value) and the root. */
function freezeChanged<T extends object>(next: T, patches: readonly Patch[]): T {
  const root = next as Record<string | number, unknown>;
  for (const p of patches) {
    const top = root[p.path[0]!];
    if (Array.isArray(top)) {
      if (p.path.length === 1) freezeTop(top);
      else freeze(top[p.path[1] as number], true);
    } else freeze(top, true);
  }
  return Object.freeze(next);
}

/** produceWithPatches on a live snapshot, then the list edits the recipe recorded; what changed is frozen. */
export function produceSnapshot<T extends object>(
  base: T,
  recipe: Recipe<T>,
  edits?: ListEdits,
): [T, Patch[], Patch[]] {
  const produced = immer.produceWithPatches(base, recipe as never) as unknown as [T, Patch[], Patch[]];
  const [next, patches, inverse] = edits === undefined ? produced : edits.apply(base, ...produced);
  return [next === base ? base : freezeChanged(next, patches), patches, inverse];
}

/**
 * applyPatches on a snapshot, freezing what changed: patches addressed by entity key (what a 2.0
 * live system's writes make, semantics L21) or immer's, by position.
 */
export function applySnapshotPatches<T extends object>(base: T, patches: readonly Patch[]): T {
  if (patches.length > 0 && isKeyedPatches(patches, base as never)) return patchSnapshot(base, patches);
  const next = applyToLists(base, patches) ?? immer.applyPatches(base, patches as Patch[]);
  return next === base ? base : freezeChanged(next, patches);
}

/** A patch value as immer's applyPatches takes it in: arrays and plain objects copied, deeply. */
function clonePatchValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clonePatchValue);
  if (typeof v !== "object" || v === null) return v;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const value = clonePatchValue((v as Record<string, unknown>)[k]);
    if (k === "__proto__")
      Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    else out[k] = value;
  }
  return out;
}

/**
 * What immer.applyPatches makes of `patches` when each one is below a top-level list (what a write's
 * patches are): each list they reach copied once, entities below it patched one by one. immer would
 * instead copy a list for the draft and then visit every element of it to finalize the result, per
 * call: at 100,000 holders about 2 ms per change a replica applies, against 0.7 ms for the copy alone
 * (measured). Null, having changed nothing, for any other patch (immer then applies them all); a
 * patch immer would refuse makes this throw, and immer then applies them all (and refuses them).
 */
function applyToLists<T extends object>(base: T, patches: readonly Patch[]): T | null {
  const root = base as Record<string, unknown>;
  if (patches.length === 0) return base;
  for (const { op, path } of patches) {
    const key = path[0];
    if (op !== "add" && op !== "remove" && op !== "replace") return null;
    if (path.length < 2 || typeof key !== "string" || !Object.hasOwn(root, key) || !Array.isArray(root[key]))
      return null;
    if (path.length === 2 ? !(isCount(path[1]) || (op === "add" && path[1] === "-")) : !isCount(path[1])) return null;
  }
  try {
    // Per list reached: its private copy (null until an edit other than an append needs one) and the
    // appends not yet in it. Appends go in with one concat: a copy that then grows by push costs
    // ten times as much in V8 (10,000 elements: 105 µs against 10 µs, measured).
    const lists = new Map<string, { copy: unknown[] | null; appended: unknown[] }>();
    const own = (key: string): unknown[] => {
      const l = lists.get(key)!;
      if (l.copy === null || l.appended.length > 0) {
        l.copy = (l.copy ?? (root[key] as unknown[])).concat(l.appended);
        l.appended = [];
      }
      return l.copy;
    };
    for (const { op, path, value } of patches) {
      const key = path[0] as string;
      let l = lists.get(key);
      if (l === undefined) {
        l = { copy: null, appended: [] };
        lists.set(key, l);
      }
      const i = path[1] as number;
      if (
        op === "add" &&
        path.length === 2 &&
        (path[1] === "-" || i >= (l.copy ?? (root[key] as unknown[])).length + l.appended.length)
      ) {
        l.appended.push(clonePatchValue(value));
        continue;
      }
      const list = own(key);
      if (path.length > 2) {
        const entity = list[i];
        if (typeof entity !== "object" || entity === null) throw new Error(`no entity at ${key}/${i}`);
        list[i] = immer.applyPatches(entity, [{ op, path: path.slice(2), value }]);
      } else if (op === "add") list.splice(i, 0, clonePatchValue(value));
      else if (op === "remove") list.splice(i, 1);
      else list[i] = clonePatchValue(value);
    }
    const next: Record<string, unknown> = { ...root };
    for (const key of lists.keys()) next[key] = own(key);
    return next as T;
  } catch {
    return null;
  }
}

type ListEdit =
  | { readonly c: string; readonly value: unknown }
  | { readonly c: string; readonly i: number }
  | { readonly c: string; readonly i: number; readonly key: string; readonly field: unknown };

/**
 * Appends to and removals from top-level lists, recorded while a handler runs and applied to the
 * finished draft's result: immer would copy the list on its first write (fine) but then, to write
 * the patches of an array that grew or shrank, visit each of its elements.
 */
export class ListEdits {
  readonly #edits: ListEdit[] = [];
  readonly append = (c: string, value: unknown): void => {
    this.#edits.push({ c, value });
  };
  readonly remove = (c: string, i: number): void => {
    this.#edits.push({ c, i });
  };
  readonly setField = (c: string, i: number, key: string, field: unknown): void => {
    this.#edits.push({ c, i, key, field });
  };

  /** `next` (immer's result, not yet frozen) with the edits applied, and the patches extended. */
  apply<T extends object>(base: T, next: T, patches: Patch[], inverse: Patch[]): [T, Patch[], Patch[]] {
    if (this.#edits.length === 0) return [next, patches, inverse];
    const out = (next === base ? { ...base } : next) as Record<string, unknown[]>;
    /** Per list: its length so far, when it only grows and was copied with its new elements already. */
    const grown = new Map<string, number>();
    const copied = new Set<string>();
    const undo: Patch[][] = [];
    for (const e of this.#edits) {
      if (!copied.has(e.c)) {
        copied.add(e.c);
        if (out[e.c] === (base as Record<string, unknown[]>)[e.c]) {
          // One copy: a list that only grows is copied with its new elements (a copy then a push
          // would copy 100,000 holders twice, the push outgrowing the exact-sized copy).
          const mine = this.#edits.filter((x) => x.c === e.c);
          if (mine.every((x) => "value" in x)) {
            grown.set(e.c, out[e.c]!.length);
            out[e.c] = out[e.c]!.concat(mine.map((x) => (x as { value: unknown }).value));
          } else out[e.c] = out[e.c]!.slice();
        }
      }
      const list = out[e.c]!;
      if ("key" in e) {
        const old = list[e.i] as Record<string, unknown>;
        list[e.i] = { ...old, [e.key]: e.field };
        patches.push({ op: "replace", path: [e.c, e.i, e.key], value: e.field });
        undo.push([{ op: "replace", path: [e.c, e.i, e.key], value: old[e.key] }]);
        continue;
      }
      if ("value" in e) {
        const at = grown.get(e.c);
        const index = at ?? list.length;
        if (at === undefined) list.push(e.value);
        else grown.set(e.c, at + 1);
        patches.push({ op: "add", path: [e.c, index], value: e.value });
        undo.push([{ op: "remove", path: [e.c, index] }]);
        continue;
      }
      const last = list.length - 1;
      const old = list[e.i];
      const moved = list[last];
      if (e.i !== last) {
        list[e.i] = moved;
        patches.push({ op: "replace", path: [e.c, e.i], value: moved });
      }
      list.length = last;
      patches.push({ op: "remove", path: [e.c, last] });
      undo.push([
        { op: "add", path: [e.c, last], value: moved },
        ...(e.i !== last ? [{ op: "replace" as const, path: [e.c, e.i], value: old }] : []),
      ]);
    }
    return [out as T, patches, [...undo.reverse().flat(), ...inverse]];
  }
}
