// The engine: one compiled snapshot and the questions asked of it.
import { type CompiledSystem, type PatchLike, compileSnapshot, updateCompiled } from "../compile/index.js";
import {
  type Decision,
  OUTCOME_CODES,
  type Outcome,
  REASONS,
  type Reason,
  type Result,
  SnapshotError,
  type SystemSnapshot,
  err,
  ok,
  parseInstant,
  parseSnapshot,
} from "../model/index.js";
import type { ParseSnapshotOptions } from "../model/parseSnapshot.js";
import { type AccessWindowsResult, type PeriodOptions, accessWindows } from "./accessWindows.js";
import type { AccessState, AccessStateView } from "./accessState.js";
import { decide } from "./decide.js";
import { type DoorState, doorState, record } from "./doorState.js";
import { type Explanation, explain } from "./explain.js";
import {
  type BatchColumns,
  type BatchOut,
  type ReaderHandle,
  type ReaderOptions,
  decideBatch,
  readerHandle,
} from "./reader.js";
import { type AtOptions, type RsopOptions, type RsopResult, computeRsop, computeRsopJsonBytes } from "./rsop.js";
import { type WhoResult, whoCanAccess, whoCanAccessFloorGroup } from "./who.js";

/**
 * A compiled, immutable rule set. Build one with createEngine or loadEngine; ask it as often as
 * you like, from any number of callers: nothing it answers changes it.
 * @example
 * const engine = loadEngineOrThrow(JSON.parse(readFileSync("examples/building.json", "utf8")));
 * engine.decide({ deviceId: "no-such-door", at: "2026-11-21T14:03:00Z", pin: "1234" }).reason; //=> "unknownDevice"
 */
export class Engine {
  /** @internal */
  compiled_: CompiledSystem;

  constructor(snapshot: SystemSnapshot) {
    this.compiled_ = compileSnapshot(snapshot);
  }

  /** The validated snapshot this engine was compiled from (the latest one given to update). */
  get snapshot(): SystemSnapshot {
    return this.compiled_.snapshot;
  }

  /**
   * Moves this engine to `next`, the validated snapshot that immer `patches` made of the current
   * one, recompiling only what the change reaches; afterwards it answers exactly as
   * createEngine(next) would. Changes this engine in place (its earlier answers are not kept).
   * @param next - the snapshot after the patches (validated, e.g. by parseSnapshot).
   * @param patches - the immer patches from `snapshot` to `next`, in order.
   * @returns this engine.
   */
  update(next: SystemSnapshot, patches: readonly PatchLike[]): this {
    this.compiled_ = updateCompiled(this.compiled_, next, patches);
    return this;
  }

  /**
   * Decides one scan (every choice it makes is a line of docs/semantics.md). Never throws: a malformed request is `denied/badRequest`.
   * @param request - an AccessRequest, or anything (checked).
   * @param out - a decision object to fill and return instead of allocating one.
   * @param state - the areas' state (who is inside since when, docs/semantics.md AB2–AB5): with it,
   *   anti-passback and occupancy limits are checked at area entries; without it, areas are not
   *   consulted. The engine never changes it: `record` does, after the decision.
   * @returns the decision, every field present.
   * @example
   * engine.decide({ deviceId: "d1", at: "2026-11-21T14:03:00Z" }).reason; //=> "badRequest" (no credential, no PIN)
   */
  decide(request: unknown, out?: Decision, state?: AccessStateView): Decision {
    return decide(this.compiled_, request, out, undefined, state);
  }

  /**
   * Moves an access state after a decision (docs/semantics.md AB8, UF3): an allowed holder at an
   * area's entry is inside it from the request's instant, at its exit outside; the first allowed scan
   * at a door waiting for its first person in starts the unlock. A denial changes nothing.
   * @example
   * const state = new AccessState();
   * const request = { deviceId: "d1", at: "2026-11-21T14:03:00Z", pin: "1234" };
   * engine.record(request, engine.decide(request, undefined, state), state);
   */
  record(request: unknown, decision: Decision, state: AccessState): void {
    record(this.compiled_, request, decision, state);
  }

  /**
   * Whether an unlock rule holds a door unlocked at an instant (docs/semantics.md UF1–UF2), with the
   * first-person-in wait where the device asks for one (`autoOpenAfterFirstAllow`, read from `state`).
   * @param at - epoch ms or an ISO 8601 instant.
   * @returns the door state; null for an unknown device or instant.
   * @example
   * engine.doorState("lobby-door", "2026-11-23T08:30:00Z")?.unlocked; //=> true on a weekday unlock schedule
   */
  doorState(deviceId: string, at: number | string, state?: AccessStateView): DoorState | null {
    const ms = parseInstant(at);
    return Number.isNaN(ms) ? null : doorState(this.compiled_, deviceId, ms, state);
  }

  /**
   * A handle deciding the scans of one reader without request objects: `card`, `wiegand`, `pin`,
   * `mobile`, `cardAndPin`, `wiegandAndPin` and `mobileAndPin` take the scan's fields and the
   * instant in epoch ms, and give exactly
   * the decision decide gives for the equivalent request (docs/semantics.md RH1–RH5). The handle
   * stays valid when this engine is updated (a live system's writes): it follows the changes.
   * @param deviceId - a device id.
   * @param options - `input`: the channel the reader's scans come in on (default `wiegand`).
   * @returns the handle, or null when no device has this id.
   * @example
   * const door = engine.reader("door-ward-3");
   * door?.card(1001, 42, Date.parse("2026-04-15T14:15:00Z")).outcome; //=> "allowed" | "denied" | "unknown"
   */
  reader(deviceId: string, options?: ReaderOptions): ReaderHandle | null {
    return readerHandle(this, deviceId, options);
  }

  /**
   * Decides a batch of card scans given as columns of typed arrays, writing each row's outcome
   * code, reason code and deciding rule index into `out`'s columns in row order; no object per
   * decision. Each row decides as decide does for its request (docs/semantics.md RH6–RH8): map
   * device ids with deviceIndex, and codes back with outcomeCodes, reasonCodes and ruleId.
   * @param columns - device indexes, card numbers, facility codes (-1: none), instants (epoch ms), optionally input channels and a length.
   * @param out - outcome (Uint8Array), reason (Uint8Array) and rule (Int32Array, -1: none) columns, at least as long.
   * @throws TypeError or RangeError when a column is not of its typed array type or too short (nothing is written then).
   * @example
   * const n = 2;
   * const columns = { device: Uint32Array.of(engine.deviceIndex("door-ward-3"), 0), card: Float64Array.of(1001, 7), facility: Float64Array.of(42, -1), atMs: Float64Array.of(Date.parse("2026-04-15T14:15:00Z"), 0) };
   * const out = { outcome: new Uint8Array(n), reason: new Uint8Array(n), rule: new Int32Array(n) };
   * engine.decideBatch(columns, out);
   * engine.reasonCodes[out.reason[0]]; //=> e.g. "allowed"
   */
  decideBatch(columns: BatchColumns, out: BatchOut): void {
    decideBatch(this.compiled_, columns, out);
  }

  /**
   * A device's index for decideBatch's `device` column: its position in `snapshot.devices`. It
   * changes only when devices are added or removed (or reordered) by an update.
   * @param deviceId - a device id.
   * @returns the index, or -1 when no device has this id.
   * @example
   * engine.deviceIndex(engine.snapshot.devices[0].id); //=> 0
   */
  deviceIndex(deviceId: string): number {
    const d = typeof deviceId === "string" ? this.compiled_.deviceIndex_.get(deviceId) : undefined;
    return d === undefined ? -1 : d.index_;
  }

  /**
   * The id of the rule at a rule index of decideBatch's `rule` column (rules in id order). Indexes
   * move when rules are added or removed: read them against the engine that wrote them, before it is updated.
   * @param index - a rule index.
   * @returns the rule id, or null for -1 or an index no rule has.
   * @example
   * engine.ruleId(out.rule[0]); //=> e.g. "rule-ward-day" (null when no rule decided)
   */
  ruleId(index: number): string | null {
    return Number.isInteger(index) && index >= 0 && index < this.compiled_.ruleIds_.length
      ? this.compiled_.ruleIds_[index]!
      : null;
  }

  /**
   * decideBatch's reason codes: code i is `reasonCodes[i]` (the same list as REASONS).
   * @example
   * engine.reasonCodes[out.reason[0]]; //=> e.g. "noActiveRule"
   */
  get reasonCodes(): readonly Reason[] {
    return REASONS;
  }

  /**
   * decideBatch's outcome codes: 0 `allowed`, 1 `denied`, 2 `unknown` (OUTCOME_CODES).
   * @example
   * engine.outcomeCodes[out.outcome[0]]; //=> e.g. "denied"
   */
  get outcomeCodes(): readonly Outcome[] {
    return OUTCOME_CODES;
  }

  /**
   * Decides one scan exactly as decide does and tells why: the steps of the evaluation that ran
   * (request, device, read with the format and decoded fields, fallback mode, credential and holder,
   * the local wall time with its UTC offset, every candidate rule with its window verdict, the
   * authentication policy), ending in the decision. Never throws. Slower than decide: use it to
   * answer a person, not a reader.
   * @param request - an AccessRequest, or anything (checked).
   * @returns `{ decision, trace }`; `decision` equals what decide returns, field for field.
   * @example
   * engine.explain({ deviceId: "no-such-door", at: "2026-11-21T14:03:00Z", pin: "1234" }).trace.map((s) => s.step); //=> ["request", "device", "decision"]
   */
  explain(request: unknown, state?: AccessStateView): Explanation {
    return explain(this.compiled_, request, state);
  }

  /**
   * Resultant set of policy of holders at an instant, in the 2.0 API's RSOP shape: their groups,
   * rules (`active` in the system zone, or the node's when scoped), and every door and floor group
   * those rules reach with what a scan would decide there.
   * @param holderIds - holders, answered in this order.
   * @param options - `at` (ISO 8601 or epoch ms) and an optional `cloudNodeId` scope.
   * @returns the RSOP result.
   * @throws QueryError naming every unknown id or bad option.
   * @example
   * engine.rsop(["holder-0001"], { at: "2026-04-15T14:15:00Z" }).holders[0].devices.filter((d) => d.allowed).length; //=> 10
   */
  rsop(holderIds: readonly string[], options: RsopOptions): RsopResult {
    return computeRsop(this.compiled_, holderIds, options);
  }

  /**
   * RSOP as the UTF-8 bytes of its JSON, for a server to send: exactly what encoding
   * `JSON.stringify(engine.rsop(holderIds, options), null, indent)` gives, made from each device's,
   * rule's and floor group's JSON serialized once and kept (until its snapshot object changes)
   * instead of serializing every entry of every answer.
   * @param holderIds - holders, answered in this order.
   * @param options - `at` (ISO 8601 or epoch ms) and an optional `cloudNodeId` scope.
   * @param indent - spaces per level, as JSON.stringify's `space` (0 to 10); default 0, compact.
   * @returns the JSON of the RSOP result, UTF-8 (a fresh array, the caller's own).
   * @throws QueryError naming every unknown id or bad option.
   * @example
   * JSON.parse(new TextDecoder().decode(engine.rsopJsonBytes(["holder-0001"], { at: "2026-04-15T14:15:00Z" }))).holders[0].id; //=> "holder-0001"
   */
  rsopJsonBytes(holderIds: readonly string[], options: RsopOptions, indent = 0): Uint8Array {
    return computeRsopJsonBytes(this.compiled_, holderIds, options, indent);
  }

  /**
   * Who can open a device at an instant: every holder whose scan would be allowed, with the
   * deciding rule (and floors at an elevator reader), sorted by holder id.
   * @param deviceId - a device id.
   * @param options - `at`.
   * @returns the holders.
   * @throws QueryError for an unknown device or a bad instant.
   * @example
   * engine.whoCanAccess("door-pharmacy", { at: "2026-04-15T16:00:00Z" }).holders.map((h) => h.holderId); //=> ["holder-0003", "holder-0014", …]
   */
  whoCanAccess(deviceId: string, options: AtOptions): WhoResult {
    return whoCanAccess(this.compiled_, deviceId, options);
  }

  /**
   * Who can reach a floor group at an instant: every holder whose scan at its reader would enable it.
   * @param floorGroupId - a floor group id.
   * @param options - `at`.
   * @returns the holders, sorted by id, each with the smallest-id rule that reaches the floor group.
   * @throws QueryError for an unknown floor group or a bad instant.
   * @example
   * engine.whoCanAccessFloorGroup("fg-executive-8", { at: "2026-04-15T16:00:00Z" }).holders.length; //=> 34
   */
  whoCanAccessFloorGroup(floorGroupId: string, options: AtOptions): WhoResult {
    return whoCanAccessFloorGroup(this.compiled_, floorGroupId, options);
  }

  /**
   * The intervals of a period (at most 62 days) in which a holder's scan at a device is allowed,
   * DST-correct, each with its deciding rule and local wall times.
   * @param holderId - a holder id.
   * @param deviceId - a device id.
   * @param options - `from` (inclusive) and `to` (exclusive).
   * @returns the intervals, in time order.
   * @throws QueryError on unknown ids, bad instants or too long a period.
   * @example
   * engine.accessWindows("holder-0001", "door-ward-3", { from: "2026-04-13T05:00:00Z", to: "2026-04-14T05:00:00Z" }).windows[0].startLocal; //=> "2026-04-13T06:30:00.000-05:00"
   */
  accessWindows(holderId: string, deviceId: string, options: PeriodOptions): AccessWindowsResult {
    return accessWindows(this.compiled_, holderId, deviceId, options);
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
 * @param options - as parseSnapshot's (`plainJson`: the input is what `JSON.parse` just made).
 * @returns the engine, or every problem with its JSON path.
 * @example
 * const r = loadEngine(json);
 * if (!r.ok) console.error(formatIssues(r.issues)); else r.value.decide(request);
 */
export function loadEngine(input: unknown, options: ParseSnapshotOptions = {}): Result<Engine> {
  const parsed = parseSnapshot(input, options);
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
