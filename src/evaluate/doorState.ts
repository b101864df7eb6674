// Door states (SPEC §15): whether an unlock rule holds a door unlocked now, waiting for its first
// person in where the device asks for one (docs/semantics.md UF1–UF3), and the one function that
// moves the access state after a decision (AB8, UF3). Neither is on the scan's hot path: a node
// calls `record` once per scan, after the answer is known.
import {
  type CompiledDevice,
  type CompiledSystem,
  RF_THREAT_SHIFT,
  RULE_STRIDE,
  R_FLAGS,
  type ZoneTable,
  localCandidates,
  occurrenceStart,
  offsetAt,
  ruleOpen,
  transitionsBetween,
  weekdayOf,
} from "../compile/index.js";
import { type Decision, MS_PER_DAY, parseInstant } from "../model/index.js";
import type { AccessState, AccessStateView } from "./accessState.js";

/** What `engine.doorState` answers (docs/semantics.md UF2). */
export interface DoorState {
  deviceId: string;
  /** An unlock rule holds the door unlocked now. */
  unlocked: boolean;
  /** The unlock rule that does (the smallest id); while waiting, the smallest open one; else null. */
  ruleId: string | null;
  /** An unlock rule is open, but the device waits for the first allowed scan of its occurrence. */
  waitingForFirstAllow: boolean;
}

/**
 * The door state of device `deviceId` at instant `at` (epoch ms): null for an unknown device.
 * Unlock rules follow windows, dates, calendars and the node's threat level as access rules do.
 */
export function doorState(
  sys: CompiledSystem,
  deviceId: string,
  at: number,
  state?: AccessStateView,
): DoorState | null {
  const device = sys.deviceIndex_.get(deviceId);
  if (device === undefined) return null;
  const out: DoorState = { deviceId, unlocked: false, ruleId: null, waitingForFirstAllow: false };
  if (device.unlockHere_.length === 0 || !Number.isFinite(at)) return out;
  const zone = device.node_.zone_;
  const local = at + offsetAt(zone, at);
  const day = Math.floor(local / MS_PER_DAY);
  const tod = local - day * MS_PER_DAY;
  const wd = weekdayOf(day);
  const first = state?.firstAllowAt(deviceId);
  const firstAt = first === undefined || first > at ? Number.NaN : first;
  let open = "";
  let unlockedBy = "";
  for (const rule of device.unlockHere_) {
    const base = rule.rank_ * RULE_STRIDE;
    if (!ruleOpen(sys.ruleData_, sys.calendarData_, base, day, wd, tod)) continue;
    if (sys.ruleData_[base + R_FLAGS]! >>> RF_THREAT_SHIFT < device.node_.threatLevel_) continue;
    if (open === "" || rule.id < open) open = rule.id;
    const started =
      !device.autoOpen_ ||
      firstAt >= firstInstantAt(zone, occurrenceStart(sys.ruleData_, sys.calendarData_, base, day, wd, tod));
    if (started && (unlockedBy === "" || rule.id < unlockedBy)) unlockedBy = rule.id;
  }
  out.unlocked = unlockedBy !== "";
  out.ruleId = unlockedBy !== "" ? unlockedBy : open !== "" ? open : null;
  out.waitingForFirstAllow = open !== "" && unlockedBy === "";
  return out;
}

/**
 * The instant an occurrence starting at local wall time `local` began (UF2): the first instant the
 * wall clock shows it (a repeated time's first pass), or, when the zone skipped it, the jump itself.
 */
function firstInstantAt(zone: ZoneTable, local: number): number {
  const candidates: number[] = [];
  localCandidates(zone, local, candidates);
  let best = Number.POSITIVE_INFINITY;
  for (const c of candidates) if (c + offsetAt(zone, c) === local && c < best) best = c;
  if (best !== Number.POSITIVE_INFINITY) return best;
  const from = Math.min(...candidates) - MS_PER_DAY;
  for (const t of transitionsBetween(zone, from, Math.max(...candidates) + MS_PER_DAY))
    if (t + offsetAt(zone, t) >= local && t - 1 + offsetAt(zone, t - 1) < local) return t;
  return Math.min(...candidates);
}

/**
 * Moves `state` after `decision` was made for `request` (docs/semantics.md AB8, UF3): an allowed
 * holder at an entry of an area is inside it since the request's instant, at an exit outside it; the
 * first allowed scan at a device waiting for its first person in starts its unlock. Anything else
 * (a denial, an unknown device, a malformed request) changes nothing.
 */
export function record(sys: CompiledSystem, request: unknown, decision: Decision, state: AccessState): void {
  if (decision.outcome !== "allowed" || request === null || typeof request !== "object") return;
  const device = sys.deviceIndex_.get((request as { deviceId?: unknown }).deviceId as string);
  if (device === undefined) return;
  const at = parseInstant((request as { at?: unknown }).at);
  if (Number.isNaN(at)) return;
  const holderId = decision.holderId;
  if (holderId !== null) moveHolder(device, holderId, at, state);
  if (device.autoOpen_ && device.unlockHere_.length > 0 && doorState(sys, device.id, at, state)?.waitingForFirstAllow)
    state.setFirstAllow(device.id, at);
}

/** AB1: into the areas the device leads into, out of those it leads out of. */
function moveHolder(device: CompiledDevice, holderId: string, at: number, state: AccessState): void {
  for (const a of device.entryOf_) state.enter(a.id, holderId, at);
  for (const a of device.exitOf_) state.exit(a.id, holderId);
}
