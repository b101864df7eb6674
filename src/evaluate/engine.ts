// The engine: one compiled snapshot and the questions asked of it.
import { type CompiledSystem, compileSnapshot } from "../compile/index.js";
import { type Decision, type Result, SnapshotError, type SystemSnapshot, err, ok, parseSnapshot } from "../model/index.js";
import { decide } from "./decide.js";

/**
 * A compiled, immutable rule set. Build one with createEngine or loadEngine; ask it as often as
 * you like, from any number of callers: nothing it answers changes it.
 */
export class Engine {
  /** The validated snapshot this engine was compiled from. */
  readonly snapshot: SystemSnapshot;
  /** @internal */
  readonly compiled_: CompiledSystem;

  constructor(snapshot: SystemSnapshot) {
    this.snapshot = snapshot;
    this.compiled_ = compileSnapshot(snapshot);
  }

  /**
   * Decides one scan (SPEC §3). Never throws: a malformed request is `denied/badRequest`.
   * Pass `out` to reuse a decision object and allocate nothing.
   */
  decide(request: unknown, out?: Decision): Decision {
    return decide(this.compiled_, request, out);
  }
}

/** Compiles a validated snapshot. */
export function createEngine(snapshot: SystemSnapshot): Engine {
  return new Engine(snapshot);
}

/** Validates raw snapshot JSON and compiles it; every problem is returned at once. */
export function loadEngine(input: unknown): Result<Engine> {
  const parsed = parseSnapshot(input);
  return parsed.ok ? ok(new Engine(parsed.value)) : err(parsed.issues);
}

/** Like loadEngine, but throws a SnapshotError carrying every problem. */
export function loadEngineOrThrow(input: unknown): Engine {
  const r = loadEngine(input);
  if (!r.ok) throw new SnapshotError(r.issues);
  return r.value;
}
