// The per-request cost bounds an operator tunes (docs/semantics.md HP1–HP3): options of
// createDataApp and startDataServer, flags of `rsop serve`. Work over a bound is refused before it
// is done, with a 4xx whose message names the bound.

/** Cost bounds of one request. */
export interface RequestBounds {
  /** Most holder × door-or-floor-group pairs × days one preview may evaluate (HP1); default 100,000. */
  readonly maxPreviewCost?: number;
  /** Most changed pairs one preview answers (HP2); default 10,000. */
  readonly maxPreviewChanges?: number;
  /** Most access requests in one `POST /decisions` batch (HP3); default 10,000 per started MiB of the body bound. */
  readonly maxBatch?: number;
}

/** Defaults: a preview within them answers in about 100 ms on the example building (HP1, HP2). */
export const DEFAULT_PREVIEW_COST = 100_000;
export const DEFAULT_PREVIEW_CHANGES = 10_000;

/** The bounds set in `options`, to pass on (unset ones left out, so the receiver's defaults hold). */
export function boundsOf(options: RequestBounds): RequestBounds {
  const out: { -readonly [K in keyof RequestBounds]: RequestBounds[K] } = {};
  for (const k of ["maxPreviewCost", "maxPreviewChanges", "maxBatch"] as const) {
    const v = options[k];
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer, got ${String(v)}`);
    out[k] = v;
  }
  return out;
}
