// The memory budget of the tenant host (T31): what a loaded tenant is estimated to hold on the V8 heap,
// from the JSON size of its system, and the budget the host keeps the loaded tenants under.
//
// A tenant's estimate is TENANT_BASE_BYTES + TENANT_BYTES_PER_CHAR × (the JSON characters of its
// snapshot as loaded, plus those of each write's patches since): coarse, but it needs no heap walk and
// it grows with what a tenant holds (its validated snapshot, the live system's indexes, its engine).
// The characters are counted again when a snapshot of the tenant is stored, so deletions lower it.
import { getHeapStatistics } from "node:v8";

/**
 * Heap a loaded tenant holds beyond its JSON (its live system, engine, report service, the host's
 * bookkeeping) and heap per JSON character of its snapshot, measured by bench/tenantMemory.ts on
 * tenants in use (loaded, written once, a snapshot stored: the store view then also keeps the
 * snapshot's text), the example building plus 0 to 30,000 holders:
 *
 *   npx esbuild bench/tenantMemory.ts --bundle --platform=node --format=esm --packages=external \
 *     --outfile=node_modules/.cache/tenantMemory.mjs && node --expose-gc node_modules/.cache/tenantMemory.mjs
 *
 * measured 613 KiB at 180,630 chars, 2.7 MiB at 949,296, 11.7 MiB at 4.04 M, 30.5 MiB at 11.85 M;
 * least squares A = 520 KiB, B = 2.67 B/char; a second run A = 364 KiB, B = 2.73 (just loaded, never
 * written: A = 401 KiB, B = 1.70). The larger A and B rounded: small tenants are overestimated (1 MiB
 * for the 606 KiB measured), so the estimate errs towards evicting early.
 */
export const TENANT_BASE_BYTES = 520 * 1024;
export const TENANT_BYTES_PER_CHAR = 2.7;

/** The estimated heap of a tenant whose snapshot and writes since come to `chars` JSON characters. */
export function estimateBytes(chars: number): number {
  return Math.round(TENANT_BASE_BYTES + TENANT_BYTES_PER_CHAR * chars);
}

/** The default budget: half of V8's heap limit (the rest is for requests, reports and the registry). */
export function defaultMemoryBudget(): number {
  return Math.floor(getHeapStatistics().heap_size_limit / 2);
}

const SIZE_UNITS: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * A size as `--memory-budget` takes it (the grammar of `--max-report-bytes`): bytes, or with a binary
 * unit (`512MiB`, `2g`). Null when it is not one (the caller says which flag).
 */
export function parseBytes(text: string): number | null {
  const m = /^([0-9]{1,15})\s*([a-z]*)$/i.exec(text.trim());
  const unit = m === null ? undefined : SIZE_UNITS[m[2]!.toLowerCase()];
  const n = m === null || unit === undefined ? Number.NaN : Number(m[1]) * unit;
  return n >= 1 && Number.isSafeInteger(n) ? n : null;
}

/** Elements of a top-level list serialized between two checks of the clock. */
const ELEMENTS_PER_STEP = 64;
/** Milliseconds of counting between two turns of the event loop (jsonCharsInTurns). */
const STEP_MS = 2;

/**
 * Counts `JSON.stringify(value).length` a run of list elements at a time, yielding between runs, so
 * that no step holds the event loop for long and no string of the whole value is made.
 * @returns the count.
 */
function* countSteps(value: unknown): Generator<void, number> {
  if (typeof value !== "object" || value === null || Array.isArray(value) || "toJSON" in value)
    return JSON.stringify(value)?.length ?? 0;
  let chars = 2; // {}
  let first = true;
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    chars += (first ? 0 : 1) + JSON.stringify(key).length + 1; // ,"key":
    first = false;
    if (!Array.isArray(v)) {
      chars += JSON.stringify(v)?.length ?? 4;
      continue;
    }
    chars += 2 + Math.max(0, v.length - 1); // [] and commas
    for (let at = 0; at < v.length; at += ELEMENTS_PER_STEP) {
      const end = Math.min(v.length, at + ELEMENTS_PER_STEP);
      for (let i = at; i < end; i++) chars += JSON.stringify(v[i])?.length ?? 4; // undefined: null
      yield;
    }
  }
  return chars;
}

/** `JSON.stringify(value).length`, without making the whole string. */
export function jsonChars(value: unknown): number {
  const steps = countSteps(value);
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** jsonChars, a couple of milliseconds at a time with the event loop free in between (a large tenant's recount). */
export async function jsonCharsInTurns(value: unknown): Promise<number> {
  const steps = countSteps(value);
  let since = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    if (performance.now() - since >= STEP_MS) {
      await turn();
      since = performance.now();
    }
  }
}

/** The JSON characters of one write's patches (what it adds to its tenant's estimate until the next recount). */
export function patchChars(patches: readonly unknown[]): number {
  let chars = 0;
  for (const p of patches) chars += JSON.stringify(p)?.length ?? 0;
  return chars;
}
