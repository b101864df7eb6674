// The live system's state and how a change is made to it: in place, entity by entity (semantics L19,
// L21). The top-level lists are the live system's own arrays, changed in place; an entity is never
// changed, only replaced by a new frozen one. A change costs what it touches, whatever the system's
// size: no list is copied. Every change records how to step back (a refused write, a batch that
// stops, a preview) and the patches that describe it, addressed by entity key, not by position
// (L21), so that a replica or a replay never depends on list order.
import { type Patch, freeze } from "immer";
import type { SystemSnapshot } from "../model/index.js";
import { type Collection, type ParsedEntities, entityKey, rawKey } from "../model/checks/index.js";

type Entity = ParsedEntities[Collection];
type List = Entity[];

/** One step of a write, as a handler asks for it; positions are the list's when the step runs. */
export type EntityOp =
  | { readonly kind: "add"; readonly c: Collection; readonly value: unknown }
  | { readonly kind: "replace"; readonly c: Collection; readonly i: number; readonly value: unknown }
  | { readonly kind: "remove"; readonly c: Collection; readonly i: number }
  | {
      readonly kind: "setField";
      readonly c: Collection;
      readonly i: number;
      readonly key: string;
      readonly value: unknown;
    };

/** Per collection, what a change reached: positions whose element changed, and the length before. */
export interface TouchedList {
  readonly positions: Set<number>;
  readonly lengthBefore: number;
  /** Holder positions where only `groups` changed (same holder, memberships alone). */
  readonly groupsOnly: Set<number>;
  /** Positions now holding an unchanged element that moved there from the given position. */
  readonly movedFrom: Map<number, number>;
}
export type Touched = Map<Collection, TouchedList>;

/** A change made in place: its patches, their inverse, what it reached, and how to take it back. */
export interface AppliedChange {
  readonly patches: Patch[];
  readonly inversePatches: Patch[];
  readonly touched: Touched;
  /** Steps back exactly (positions included); call before any later change is made, or after it is taken back. */
  readonly undo: () => void;
}

/** The elements of `s`'s list `c`, as the live system owns them (mutable here only). */
export function listOf(s: SystemSnapshot, c: Collection): List {
  return (s as unknown as Record<Collection, List>)[c];
}

/** `v` frozen deeply; a value not frozen yet (from outside) is copied first, so its giver cannot change it later. */
export function ownEntity(v: unknown): Entity {
  if (typeof v === "object" && v !== null && Object.isFrozen(v)) return v as Entity;
  return freeze(structuredCopy(v), true) as Entity;
}

/** A JSON-like value copied: arrays and plain objects deeply; anything else as it is. */
function structuredCopy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(structuredCopy);
  if (typeof v !== "object" || v === null) return v;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const value = structuredCopy((v as Record<string, unknown>)[k]);
    if (k === "__proto__")
      Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    else out[k] = value;
  }
  return out;
}

/** The key of an element as the patches address it: its entity key; "" for a value that has none (refused anyway). */
function keyOf(c: Collection, v: unknown): string {
  return rawKey(c, v) ?? "";
}

/** Whether holders `a` and `b` differ in `groups` alone. */
function groupsAlone(a: Entity, b: Entity): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return false;
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  const keys = Object.keys(y);
  if (Object.keys(x).length !== keys.length) return false;
  for (const k of keys) if (k !== "groups" && x[k] !== y[k]) return false;
  return true;
}

/**
 * Makes `ops` on `state`'s lists in place, in order. A position an op names must exist (a handler's
 * op names what its lookups found); the key of a replaced element does not change.
 */
export function applyOps(state: SystemSnapshot, ops: readonly EntityOp[]): AppliedChange {
  const rec = new Recorder(state);
  // A handler's values are its own, made for this change: frozen as they are, not copied.
  const own = (v: unknown) => freeze(v, true) as Entity;
  for (const op of ops) {
    const list = listOf(state, op.c);
    if (op.kind === "add") rec.add(op.c, own(op.value));
    else if (op.kind === "remove") rec.remove(op.c, op.i);
    else if (op.kind === "replace") rec.replace(op.c, op.i, own(op.value));
    else {
      const old = list[op.i] as unknown as Record<string, unknown>;
      rec.replace(op.c, op.i, freeze({ ...old, [op.key]: freeze(op.value, true) }) as unknown as Entity);
    }
  }
  return rec.done();
}

/** Whether every patch is an element's, addressed by its key (what applyIdPatches takes). */
export function isKeyedPatches(patches: readonly Patch[], state: SystemSnapshot): boolean {
  for (const p of patches) {
    const [c, key] = p.path;
    if (p.path.length !== 2 || typeof key !== "string" || typeof c !== "string") return false;
    if (!Array.isArray((state as unknown as Record<string, unknown>)[c])) return false;
    if (p.op === "remove") continue;
    if ((p.op !== "add" && p.op !== "replace") || typeof p.value !== "object" || p.value === null) return false;
  }
  return true;
}

/**
 * Applies keyed patches (isKeyedPatches) in place: `find` gives an element's position before the
 * first patch. Throws, having changed nothing, when a patch names an element that is not there, adds
 * one that is, or its value's key is not the one it is addressed by.
 */
export function applyKeyedPatches(
  state: SystemSnapshot,
  patches: readonly Patch[],
  find: (c: Collection, key: string) => number,
): AppliedChange {
  const rec = new Recorder(state);
  /** Positions this call moved or made: key (collection and element key) → position, -1 when gone. */
  const moved = new Map<string, number>();
  const at = (c: Collection, key: string): number => moved.get(`${c}\u0000${key}`) ?? find(c, key);
  try {
    for (const p of patches) {
      const c = p.path[0] as Collection;
      const key = p.path[1] as string;
      const i = at(c, key);
      if (p.op === "add") {
        if (i >= 0) throw new Error(`${c} "${key}" exists already`);
        const v = ownEntity(p.value);
        if (entityKey(c, v) !== key) throw new Error(`the value added at ${c} "${key}" has another key`);
        moved.set(`${c}\u0000${key}`, rec.add(c, v));
        continue;
      }
      if (i < 0) throw new Error(`there is no ${c} "${key}"`);
      if (p.op === "replace") {
        const v = ownEntity(p.value);
        if (entityKey(c, v) !== key) throw new Error(`the value replacing ${c} "${key}" has another key`);
        rec.replace(c, i, v);
        continue;
      }
      const last = listOf(state, c).length - 1;
      const lastKey = keyOf(c, listOf(state, c)[last]);
      rec.remove(c, i);
      moved.set(`${c}\u0000${key}`, -1);
      if (i !== last) moved.set(`${c}\u0000${lastKey}`, i);
    }
  } catch (e) {
    rec.done().undo();
    throw e;
  }
  return rec.done();
}

/** Records a change made step by step: patches, inverse, touched positions, and the undo steps. */
class Recorder {
  readonly #state: SystemSnapshot;
  readonly #patches: Patch[] = [];
  readonly #inverse: Patch[] = [];
  readonly #touched: Touched = new Map();
  readonly #undo: (() => void)[] = [];

  constructor(state: SystemSnapshot) {
    this.#state = state;
  }

  #touch(c: Collection): TouchedList {
    let t = this.#touched.get(c);
    if (t === undefined) {
      t = {
        positions: new Set(),
        lengthBefore: listOf(this.#state, c).length,
        groupsOnly: new Set(),
        movedFrom: new Map(),
      };
      this.#touched.set(c, t);
    }
    return t;
  }

  /** Appends `v`; returns its position. */
  add(c: Collection, v: Entity): number {
    const list = listOf(this.#state, c);
    const t = this.#touch(c);
    const i = list.length;
    list.push(v);
    t.positions.add(i);
    t.groupsOnly.delete(i);
    t.movedFrom.delete(i);
    const key = keyOf(c, v);
    this.#patches.push({ op: "add", path: [c, key], value: v });
    this.#inverse.push({ op: "remove", path: [c, key] });
    this.#undo.push(() => {
      list.pop();
    });
    return i;
  }

  replace(c: Collection, i: number, v: Entity): void {
    const list = listOf(this.#state, c);
    const t = this.#touch(c);
    const old = list[i]!;
    list[i] = v;
    const key = keyOf(c, v);
    // Memberships alone, unless this position changed otherwise in the same change.
    if (c === "holders" && groupsAlone(old, v) && (!t.positions.has(i) || t.groupsOnly.has(i))) t.groupsOnly.add(i);
    else t.groupsOnly.delete(i);
    t.positions.add(i);
    t.movedFrom.delete(i);
    const oldKey = keyOf(c, old);
    if (oldKey === key) {
      this.#patches.push({ op: "replace", path: [c, key], value: v });
      this.#inverse.push({ op: "replace", path: [c, key], value: old });
    } else {
      // An element whose key changed (no route does that; a raw edit may) is another element.
      this.#patches.push({ op: "remove", path: [c, oldKey] }, { op: "add", path: [c, key], value: v });
      this.#inverse.push({ op: "add", path: [c, oldKey], value: old }, { op: "remove", path: [c, key] });
    }
    this.#undo.push(() => {
      list[i] = old;
    });
  }

  /** Removes the element at `i`: the last element moves into its place (order carries no meaning, L19). */
  remove(c: Collection, i: number): void {
    const list = listOf(this.#state, c);
    const t = this.#touch(c);
    const last = list.length - 1;
    const old = list[i]!;
    const moved = list[last]!;
    if (i !== last) {
      list[i] = moved;
      // An unchanged element moving here keeps what it was (parsed, memberships alone) from where it was.
      const from = t.movedFrom.get(last) ?? last;
      const wasTouched = t.positions.has(last) && !t.movedFrom.has(last);
      // One changed in this change is parsed again where it lands (its old parse is another element's).
      if (wasTouched) t.movedFrom.delete(i);
      else t.movedFrom.set(i, from);
      t.groupsOnly.delete(i);
      t.positions.add(i);
    }
    list.pop();
    t.positions.add(last);
    t.groupsOnly.delete(last);
    t.movedFrom.delete(last);
    const key = keyOf(c, old);
    this.#patches.push({ op: "remove", path: [c, key] });
    this.#inverse.push({ op: "add", path: [c, key], value: old });
    this.#undo.push(() => {
      if (i === last) list.push(old);
      else {
        list.push(moved);
        list[i] = old;
      }
    });
  }

  done(): AppliedChange {
    const steps = this.#undo;
    return {
      patches: this.#patches,
      inversePatches: this.#inverse.reverse(),
      touched: this.#touched,
      undo: () => {
        for (let k = steps.length - 1; k >= 0; k--) steps[k]!();
      },
    };
  }
}

/**
 * A frozen copy of `state` as a snapshot that never changes: each list in `changed` copied, every
 * other list (and every entity) shared with `previous`, the copy made before.
 */
export function publish(
  state: SystemSnapshot,
  previous: SystemSnapshot | undefined,
  changed: ReadonlySet<string>,
): SystemSnapshot {
  const root = state as unknown as Record<string, unknown>;
  const prev = previous as unknown as Record<string, unknown> | undefined;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(root)) {
    const v = root[k];
    out[k] = Array.isArray(v) ? (prev !== undefined && !changed.has(k) ? prev[k] : v.slice()) : v;
  }
  return Object.freeze(out) as unknown as SystemSnapshot;
}

/**
 * `base` with keyed patches applied, as a new snapshot (`base` unchanged): each list they reach
 * copied once, elements found by scanning. For a snapshot outside a live system (an outbox hook's
 * "after", a test's undo); a live system applies them in place with its indexes.
 * @throws Error when a patch does not apply (applyKeyedPatches).
 */
export function patchSnapshot<T extends object>(base: T, patches: readonly Patch[]): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const p of patches) {
    const c = p.path[0] as string;
    if ((base as Record<string, unknown>)[c] === out[c]) out[c] = (out[c] as unknown[]).slice();
  }
  const state = out as unknown as SystemSnapshot;
  applyKeyedPatches(state, patches, (c, key) => listOf(state, c).findIndex((e) => entityKey(c, e) === key));
  return Object.freeze(out) as T;
}
