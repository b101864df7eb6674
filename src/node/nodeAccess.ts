// The state a cloud node keeps for its areas and doors (docs/semantics.md AB6–AB8, UF3):
// the engine's AccessState, with every change written down as it happens, so that the node stores
// exactly what a scan (or a reset) changed in the same transaction as the scan's event, before the
// scan's answer leaves the node. And the resets: the admin routes write an area's `lastReset` and
// `forgiven[holderId]` into the system; the node applies one when it sees its value change in its
// snapshot (never by comparing clocks: the service's and the node's need not agree).
import { AccessState } from "../evaluate/index.js";
import type { SystemSnapshot } from "../model/index.js";

/** One change of a node's access state or of its applied resets, as stored in its data file. */
export type AccessChange =
  | { readonly kind: "enter"; readonly areaId: string; readonly holderId: string; readonly at: number }
  | { readonly kind: "exit"; readonly areaId: string; readonly holderId: string }
  | { readonly kind: "empty"; readonly areaId: string }
  | { readonly kind: "firstAllow"; readonly deviceId: string; readonly at: number }
  /** The device is gone from the system: its first allowed scan is forgotten. */
  | { readonly kind: "noFirstAllow"; readonly deviceId: string }
  /** The area's `lastReset` the node has applied (null: none). */
  | { readonly kind: "reset"; readonly areaId: string; readonly value: string | null }
  /** The area's `forgiven[holderId]` the node has applied (null: none). */
  | { readonly kind: "forgiven"; readonly areaId: string; readonly holderId: string; readonly value: string | null }
  /** The area is gone from the system: its applied resets are forgotten. */
  | { readonly kind: "dropArea"; readonly areaId: string };

/** The resets of one area the node has applied: the values it last saw in its snapshot. */
export interface AppliedResets {
  lastReset: string | null;
  readonly forgiven: Map<string, string>;
}

/**
 * The node's access state: an AccessState that writes down each change (`engine.record` and the
 * resets move it through these methods), so the node stores what changed, not the whole state, with
 * each chunk of scans. It also holds the resets applied, by area.
 */
export class NodeAccessState extends AccessState {
  #journal: AccessChange[] = [];
  readonly applied = new Map<string, AppliedResets>();

  override enter(areaId: string, holderId: string, at: number): void {
    super.enter(areaId, holderId, at);
    this.#journal.push({ kind: "enter", areaId, holderId, at });
  }

  // AccessState's forgive leaves through exit: written down here too.
  override exit(areaId: string, holderId: string): void {
    // Only a holder inside is a change: a scan at an exit by someone not inside stores nothing.
    if (this.enteredAt(areaId, holderId) === undefined) return;
    super.exit(areaId, holderId);
    this.#journal.push({ kind: "exit", areaId, holderId });
  }

  override resetArea(areaId: string): void {
    if (this.occupancy(areaId) === 0) return;
    super.resetArea(areaId);
    this.#journal.push({ kind: "empty", areaId });
  }

  override setFirstAllow(deviceId: string, at: number): void {
    super.setFirstAllow(deviceId, at);
    this.#journal.push({ kind: "firstAllow", deviceId, at });
  }

  override clearFirstAllow(deviceId: string): void {
    if (this.firstAllowAt(deviceId) === undefined) return;
    super.clearFirstAllow(deviceId);
    this.#journal.push({ kind: "noFirstAllow", deviceId });
  }

  /** Notes a change of the applied resets (kept in memory here, stored with the state's changes). */
  note(change: AccessChange): void {
    const id =
      change.kind === "reset" || change.kind === "forgiven" || change.kind === "dropArea" ? change.areaId : null;
    if (change.kind === "reset") this.#resets(change.areaId).lastReset = change.value;
    else if (change.kind === "forgiven") {
      const f = this.#resets(change.areaId).forgiven;
      if (change.value === null) f.delete(change.holderId);
      else f.set(change.holderId, change.value);
    } else if (change.kind === "dropArea") this.applied.delete(change.areaId);
    // An area with nothing applied has no entry, as when read back from the data file.
    const r = id === null ? undefined : this.applied.get(id);
    if (r !== undefined && r.lastReset === null && r.forgiven.size === 0) this.applied.delete(id!);
    this.#journal.push(change);
  }

  /** The changes since the last call, in order; the journal is emptied. */
  takeChanges(): AccessChange[] {
    const out = this.#journal;
    this.#journal = [];
    return out;
  }

  #resets(areaId: string): AppliedResets {
    let r = this.applied.get(areaId);
    if (r === undefined) {
      r = { lastReset: null, forgiven: new Map() };
      this.applied.set(areaId, r);
    }
    return r;
  }
}

/** What of the snapshot to look at again: the areas, the holders (someone deleted), the devices (one deleted). */
export interface ReconcileScope {
  readonly areas: boolean;
  readonly holders: boolean;
  readonly devices: boolean;
}

export const EVERYTHING: ReconcileScope = { areas: true, holders: true, devices: true };

/**
 * What a change's patches may have changed of the state's inputs: the areas (a reset, a forgive,
 * an area deleted), the holders (one deleted: an edit inside a holder deletes no one).
 */
export function scopeOf(patches: readonly { readonly op: string; readonly path: readonly (string | number)[] }[]) {
  let areas = false;
  let holders = false;
  let devices = false;
  for (const p of patches) {
    if (p.path.length === 0) return EVERYTHING;
    if (p.path[0] === "areas") areas = true;
    else if (p.path[0] === "holders" && p.path.length <= 2 && p.op !== "add") holders = true;
    else if (p.path[0] === "devices" && p.path.length <= 2 && p.op !== "add") devices = true;
  }
  return { areas, holders, devices };
}

/**
 * Brings the node's state in line with its snapshot (docs/semantics.md AB6): an area's `lastReset`
 * or a `forgiven[holderId]` whose value differs from the one the node applied last is applied now
 * (the area emptied, the holder's entry forgotten); an area gone from the system drops its state,
 * a holder gone drops out of every area. Every change goes through `state`, so it is written down.
 */
export function reconcile(snapshot: SystemSnapshot, state: NodeAccessState, scope: ReconcileScope): void {
  if (scope.areas) reconcileAreas(snapshot, state);
  if (scope.holders && state.areaIds().length > 0) {
    const holders = new Set<string>();
    for (const h of snapshot.holders) holders.add(h.id);
    for (const areaId of state.areaIds())
      for (const holderId of [...state.inside(areaId).keys()]) if (!holders.has(holderId)) state.exit(areaId, holderId);
  }
  if (scope.devices) {
    const devices = new Set(snapshot.devices.map((d) => d.id));
    for (const deviceId of state.firstAllowDevices()) if (!devices.has(deviceId)) state.clearFirstAllow(deviceId);
  }
}

function reconcileAreas(snapshot: SystemSnapshot, state: NodeAccessState): void {
  const present = new Set<string>();
  for (const area of snapshot.areas) {
    present.add(area.id);
    const applied = state.applied.get(area.id);
    const lastReset = area.lastReset ?? null;
    if (lastReset !== (applied?.lastReset ?? null)) {
      // A reset set or moved empties the area; one taken away (null) empties nothing.
      if (lastReset !== null) state.resetArea(area.id);
      state.note({ kind: "reset", areaId: area.id, value: lastReset });
    }
    const forgiven = area.forgiven ?? {};
    for (const [holderId, at] of Object.entries(forgiven)) {
      if (applied?.forgiven.get(holderId) === at) continue;
      state.forgive(area.id, holderId);
      state.note({ kind: "forgiven", areaId: area.id, holderId, value: at });
    }
    if (applied !== undefined)
      for (const holderId of [...applied.forgiven.keys()])
        if (!Object.hasOwn(forgiven, holderId))
          state.note({ kind: "forgiven", areaId: area.id, holderId, value: null });
  }
  for (const areaId of [...state.applied.keys()]) if (!present.has(areaId)) state.note({ kind: "dropArea", areaId });
  for (const areaId of state.areaIds()) if (!present.has(areaId)) state.resetArea(areaId);
}
