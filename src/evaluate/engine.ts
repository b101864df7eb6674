// The engine: one compiled snapshot and the questions asked of it.
import { type CompiledSystem, compileSnapshot } from "../compile/index.js";
import { type Decision, type Result, SnapshotError, type SystemSnapshot, err, ok, parseSnapshot } from "../model/index.js";
import { decide } from "./decide.js";

/**
 * A compiled, immutable rule set. Build one with createEngine or loadEngine; ask it as often as
 * you like, from any number of callers: nothing it answers changes it.
 * @example
 * const engine = loadEngineOrThrow(JSON.parse(readFileSync("examples/building.json", "utf8")));
 * engine.decide({ deviceId: "no-such-door", at: "2026-11-21T14:03:00Z", pin: "1234" }).reason; //=> "unknownDevice"
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
   * @param request - an AccessRequest, or anything (checked).
   * @param out - a decision object to fill and return instead of allocating one.
   * @returns the decision, every field present.
   * @example
   * engine.decide({ deviceId: "d1", at: "2026-11-21T14:03:00Z" }).reason; //=> "badRequest" (no credential, no PIN)
   */
  decide(request: unknown, out?: Decision): Decision {
    return decide(this.compiled_, request, out);
  }
}

/**
 * Compiles a validated snapshot into an Engine.
 * @param snapshot - from parseSnapshot or parseSnapshotOrThrow.
 * @returns the engine.
 * @example
 * const engine = createEngine(parseSnapshotOrThrow(json));
 * engine.decide({ deviceId: "door-1", at: 1_795_000_000_000, credential: { credentialNumber: 42 } }).outcome; //=> "allowed" | "denied" | "unknown"
 */
export function createEngine(snapshot: SystemSnapshot): Engine {
  return new Engine(snapshot);
}

/**
 * Validates raw snapshot JSON and compiles it; every problem is returned at once.
 * @param input - parsed JSON of any shape.
 * @returns the engine, or every problem with its JSON path.
 * @example
 * const r = loadEngine(json);
 * if (!r.ok) console.error(formatIssues(r.issues)); else r.value.decide(request);
 */
export function loadEngine(input: unknown): Result<Engine> {
  const parsed = parseSnapshot(input);
  return parsed.ok ? ok(new Engine(parsed.value)) : err(parsed.issues);
}

/**
 * Like loadEngine, but throws a SnapshotError carrying every problem.
 * @param input - parsed JSON of any shape.
 * @returns the engine.
 * @throws SnapshotError when the snapshot has any problem.
 * @example
 * const engine = loadEngineOrThrow(JSON.parse(readFileSync("examples/building.json", "utf8")));
 * engine.snapshot.cloudNodes.length; //=> 2
 */
export function loadEngineOrThrow(input: unknown): Engine {
  const r = loadEngine(input);
  if (!r.ok) throw new SnapshotError(r.issues);
  return r.value;
}
