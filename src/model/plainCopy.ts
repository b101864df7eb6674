// Reading JSON-shaped input at a boundary: a plain copy, read once, nested at most JSON_MAX_DEPTH
// arrays and objects (docs/semantics.md HJ1, HJ2). Used by the snapshot and panel loaders and by
// the live systems for operation bodies, so a deep, cyclic or hostile value is an issue at its path
// before anything that walks a value (immer, zod, JSON.stringify) can overflow the call stack.
import type { Issue } from "./issue.js";

type Path = (string | number)[];

/**
 * The most arrays and objects a JSON input may nest, the input itself counting as the first (HJ1):
 * request bodies, operation bodies, CLI inputs, snapshots and panels alike.
 */
export const JSON_MAX_DEPTH = 64;

/** The sentence of a value nested deeper than `max` (HJ1). */
export function tooDeepMessage(max: number): string {
  return `Nests deeper than ${max} arrays and objects, the most a JSON input may have.`;
}

/** The sentence of a value that contains itself (only an object a program made can): it nests without end (HJ2). */
export function cycleMessage(max: number): string {
  return `Contains itself (a cycle), so it nests without end; a JSON input nests at most ${max} arrays and objects.`;
}

const UNREADABLE = "Could not be read: reading it threw an error.";

/** Options of plainCopy. */
export interface PlainCopyOptions {
  /** Most nested arrays and objects, the input counting as one (default JSON_MAX_DEPTH). */
  readonly maxDepth?: number;
  /** Put before every issue's path (e.g. `["body"]`). */
  readonly prefix?: readonly (string | number)[];
}

/** A copy still being made: meeting it again is a cycle. */
const OPEN: unique symbol = Symbol("open");

/**
 * A plain copy of JSON-shaped input, each own enumerable property of every object and each element
 * of every array read exactly once: a getter or Proxy can then neither throw from inside the checks
 * nor answer differently on a second read. A read that throws (a throwing getter or trap, a revoked
 * Proxy) becomes an `unreadable` issue at its path; a value nested deeper than `maxDepth`, reached
 * by any path, and a value that contains itself, a `tooBig` issue (HJ2). An object met twice on
 * different paths (shared) is copied once. Recursion is bounded by `maxDepth`.
 */
export function plainCopy(input: unknown, issues: Issue[], options: PlainCopyOptions = {}): unknown {
  const max = options.maxDepth ?? JSON_MAX_DEPTH;
  const copies = new Map<object, unknown>();
  /** Levels below each shared copy, computed when it is met again (JSON.parse output never is). */
  const heights = new Map<unknown, number>();
  const path: Path = [...(options.prefix ?? [])];
  const base = path.length;
  const problem = (message: string, code: Issue["code"] = "tooBig") => issues.push({ code, path: [...path], message });
  /** The value of `v[k]`, read once and copied, or undefined (with an issue) when reading throws. */
  const copyOf = (v: Record<string | number, unknown>, k: string | number): unknown => {
    path.push(k);
    let value: unknown;
    try {
      value = v[k];
    } catch {
      problem(UNREADABLE, "unreadable");
      path.pop();
      return undefined;
    }
    const c = typeof value === "object" && value !== null ? copy(value) : value;
    path.pop();
    return c;
  };
  /** Arrays and objects from `c` down, `c` counting as one; every copy is acyclic and within the limit. */
  const heightOf = (c: unknown): number => {
    if (typeof c !== "object" || c === null) return 0;
    const known = heights.get(c);
    if (known !== undefined) return known;
    let h = 0;
    for (const x of Object.values(c)) h = Math.max(h, heightOf(x));
    heights.set(c, h + 1);
    return h + 1;
  };
  const copy = (v: object): unknown => {
    const level = path.length - base + 1;
    const done = copies.get(v);
    if (done === OPEN) return void problem(cycleMessage(max));
    if (done !== undefined) {
      if (level - 1 + heightOf(done) <= max) return done;
      return void problem(tooDeepMessage(max));
    }
    if (level > max) return void problem(tooDeepMessage(max));
    let n = 0;
    let keys: string[] | null = null;
    try {
      // Array.isArray and Object.keys throw on a revoked Proxy; length and ownKeys may be traps.
      if (Array.isArray(v)) n = (v as unknown[]).length;
      else keys = Object.keys(v);
    } catch {
      problem(UNREADABLE, "unreadable");
      return undefined;
    }
    copies.set(v, OPEN);
    let out: unknown[] | Record<string, unknown>;
    if (keys === null) {
      const arr: unknown[] = [];
      for (let i = 0; i < n; i++) arr.push(copyOf(v as Record<number, unknown>, i));
      out = arr;
    } else {
      const obj: Record<string, unknown> = {};
      for (const k of keys) {
        const value = copyOf(v as Record<string, unknown>, k);
        if (k === "__proto__")
          Object.defineProperty(obj, k, { value, enumerable: true, writable: true, configurable: true });
        else obj[k] = value;
      }
      out = obj;
    }
    copies.set(v, out);
    return out;
  };
  return typeof input === "object" && input !== null ? copy(input) : input;
}

/**
 * The `tooBig` issues plainCopy would report for `input`, for input that is what JSON.parse made
 * (a tree: nothing shared or cyclic, no getters): a walk that copies nothing, in plainCopy's order.
 * Recursion is bounded by `maxDepth`.
 */
export function depthIssues(
  input: unknown,
  maxDepth: number = JSON_MAX_DEPTH,
  prefix: readonly (string | number)[] = [],
): Issue[] {
  const issues: Issue[] = [];
  const path: Path = [...prefix];
  const walk = (v: object, level: number): void => {
    if (level > maxDepth) {
      issues.push({ code: "tooBig", path: [...path], message: tooDeepMessage(maxDepth) });
      return;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (typeof x === "object" && x !== null) {
          path.push(i);
          walk(x, level + 1);
          path.pop();
        }
      }
      return;
    }
    // for-in lists an object's own keys in Object.keys order without making their array (a third of
    // the walk at 10,000 holders); it would add inherited ones, so only where there are none.
    const keys = inheritsNothing(v, plainProto) ? null : Object.keys(v);
    if (keys === null) {
      for (const k in v) {
        const x = (v as Record<string, unknown>)[k];
        if (typeof x === "object" && x !== null) {
          path.push(k);
          walk(x, level + 1);
          path.pop();
        }
      }
      return;
    }
    for (const k of keys) {
      const x = (v as Record<string, unknown>)[k];
      if (typeof x === "object" && x !== null) {
        path.push(k);
        walk(x, level + 1);
        path.pop();
      }
    }
  };
  const plainProto = enumeratesNothing(Object.prototype);
  if (typeof input === "object" && input !== null) walk(input, 1);
  return issues;
}

/** True when no enumerable key is on `proto` or its prototypes (Object.prototype, as it normally is). */
function enumeratesNothing(proto: object | null): boolean {
  if (proto === null) return true;
  for (const _ in proto) return false;
  return true;
}

/**
 * True when for-in over `v` lists only its own keys: its prototype is null, or Object.prototype
 * with no enumerable key (`plainProto`, checked once per walk), as JSON.parse's objects have.
 */
function inheritsNothing(v: object, plainProto: boolean): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === null || (proto === Object.prototype && plainProto);
}
