// Hostile copies of plain JSON for the fuzz tests: every object and array rebuilt with getters or
// behind a Proxy whose reads are counted per path, and at most one path made hostile — a getter that
// throws, a revoked Proxy, a getter whose value changes between reads, a getter that first calls
// back into the library (re-entrancy).
import fc from "fast-check";

export type Path = readonly (string | number)[];
export type Style = "getters" | "proxy";
export type Trap =
  | { readonly kind: "throw" }
  | { readonly kind: "revoked" }
  | { readonly kind: "flip"; readonly to: unknown }
  | { readonly kind: "reenter"; readonly call: () => void };

export interface Hostile {
  /** The hostile copy. */
  readonly value: unknown;
  /** Reads of each property, keyed by JSON.stringify(path). */
  readonly reads: Map<string, number>;
  /** How many times the trap fired (a throw, a re-entrant call, a read of the flipping value). */
  fired: number;
}

function isContainer(v: unknown): v is Record<string, unknown> | unknown[] {
  return typeof v === "object" && v !== null;
}

function samePath(a: Path, b: Path): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Every path of `value` (the root `[]` first), objects and arrays descended. */
export function pathsOf(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...path, i], out));
  else if (isContainer(value)) for (const [k, v] of Object.entries(value)) pathsOf(v, [...path, k], out);
  return out;
}

/** The value at `path` of plain JSON, or undefined. */
export function at(value: unknown, path: Path): unknown {
  let v = value;
  for (const k of path) v = isContainer(v) ? (v as Record<string | number, unknown>)[k] : undefined;
  return v;
}

/** A plain copy of `value` with the value at `path` replaced (the root when `path` is empty). */
export function replaced(value: unknown, path: Path, by: unknown): unknown {
  if (path.length === 0) return by;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) }) as Record<
    string | number,
    unknown
  >;
  const [k, ...rest] = path;
  copy[k!] = replaced(copy[k!], rest, by);
  return copy;
}

function revokedProxy(): object {
  const r = Proxy.revocable({}, {});
  r.revoke();
  return r.proxy;
}

/**
 * Builds the hostile copy of plain JSON `value`: every container is rebuilt in `style`, and the
 * property at `target` (if any; a root target applies only to `revoked`) carries `trap`.
 */
export function hostile(value: unknown, style: Style, target: Path | null, trap: Trap | null): Hostile {
  const h: Hostile = { value: undefined, reads: new Map(), fired: 0 };
  const read = (path: Path) => {
    const k = JSON.stringify(path);
    h.reads.set(k, (h.reads.get(k) ?? 0) + 1);
  };
  // What reading the property at `path` (holding hostile child `child`) gives.
  const readProp = (path: Path, child: unknown): unknown => {
    read(path);
    if (trap === null || target === null || !samePath(path, target)) return child;
    switch (trap.kind) {
      case "throw":
        h.fired++;
        throw new Error("hostile getter");
      case "flip":
        if ((h.reads.get(JSON.stringify(path)) ?? 0) > 1) {
          h.fired++;
          return trap.to;
        }
        return child;
      case "reenter":
        h.fired++;
        trap.call();
        return child;
      default:
        return child;
    }
  };
  const build = (v: unknown, path: Path): unknown => {
    if (trap?.kind === "revoked" && target !== null && samePath(path, target)) return revokedProxy();
    if (!isContainer(v)) return v;
    const arr = Array.isArray(v);
    const children = new Map<string, unknown>();
    const keys = arr ? v.map((_, i) => String(i)) : Object.keys(v);
    for (const k of keys) children.set(k, build((v as Record<string, unknown>)[k], [...path, arr ? Number(k) : k]));
    const seg = (k: string) => (arr ? Number(k) : k);
    if (style === "getters") {
      const o: Record<string, unknown> | unknown[] = arr ? new Array<unknown>(v.length) : {};
      for (const k of keys)
        Object.defineProperty(o, k, {
          enumerable: true,
          configurable: true,
          get: () => readProp([...path, seg(k)], children.get(k)),
        });
      return o;
    }
    const base: Record<string, unknown> | unknown[] = arr ? new Array<unknown>(v.length) : {};
    for (const k of keys) (base as Record<string, unknown>)[k] = children.get(k);
    return new Proxy(base, {
      get(t, p, r) {
        if (typeof p === "string" && children.has(p)) return readProp([...path, seg(p)], children.get(p));
        return Reflect.get(t, p, r);
      },
    });
  };
  (h as { value: unknown }).value = build(value, []);
  return h;
}

/** The largest number of reads of any one property. */
export function maxReads(h: Hostile): number {
  let m = 0;
  for (const n of h.reads.values()) m = Math.max(m, n);
  return m;
}

/** Values a flipping getter turns into. */
export const flipValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    0,
    -1,
    2 ** 60,
    Number.NaN,
    "",
    "0",
    "1111111111111111111111111",
    "touch",
    true,
    false,
    {},
    [],
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

export const styleArb: fc.Arbitrary<Style> = fc.constantFrom("getters", "proxy");
