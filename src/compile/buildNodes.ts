// The static segment of a compiled system: cloud nodes, devices and floor groups. Only a full
// compile builds it (a change to any compiled field of these falls back to compileSnapshot, see
// updateCompiled.ts); the per-device runs start empty here and are filled by buildReach.
import { ELEVATOR_READER_TYPES, type SystemSnapshot } from "../model/index.js";
import { compileCardFormat } from "./compileCardFormat.js";
import {
  type CompiledDevice,
  type CompiledNode,
  EMPTY_DEVICE_RUN,
  EMPTY_RUN,
  EMPTY_SLOT_PAIRS,
  INPUT_BIT,
  AP_HARD,
  AP_NONE,
  AP_SOFT,
  type CompiledArea,
  NO_AREAS,
  NO_WIDE_SETS,
} from "./compiledSystem.js";
import { policyMask } from "./policyMask.js";
import { buildZoneTable } from "./zoneTable.js";

/** The static segment, as compileSnapshot places it in the CompiledSystem. */
export interface NodeSegment {
  readonly nodes: CompiledNode[];
  readonly nodeIndex: Map<string, CompiledNode>;
  readonly devices: CompiledDevice[];
  readonly devicesById: CompiledDevice[];
  readonly deviceIdOrder: Int32Array;
  readonly floorGroupAt: Map<string, { reader: number; k: number }>;
}

/** The e-card floors of a door: none. */
const NO_ECARD_FLOORS: readonly string[] = Object.freeze([]);

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Compiles the cloud nodes, devices and floor groups of a validated snapshot. */
export function buildNodes(snapshot: SystemSnapshot): NodeSegment {
  const nodes: CompiledNode[] = snapshot.cloudNodes.map((n, index) => ({
    id: n.id,
    index_: index,
    zone_: buildZoneTable(n.timezone),
    formats_: n.cardFormat.map(compileCardFormat),
    ecards_: new Set(n.ecards),
    offlinePolicy_: n.offlinePolicy,
    killTimer_: n.killTimer,
    threatLevel_: n.threatLevel ?? 0,
    alone_: new Set([n.id]),
  }));
  const nodeIndex = new Map(nodes.map((n) => [n.id, n]));
  const deviceNumber = new Map(snapshot.devices.map((d, i) => [d.id, i]));

  // Floor groups per elevator reader, in id order so masks are stable; each floor group's reader and
  // local index k there.
  const floorGroupsAt = new Map<string, string[]>();
  const floorGroupById = new Map(snapshot.floorGroups.map((fg) => [fg.id, fg]));
  const floorGroupAt = new Map<string, { reader: number; k: number }>();
  for (const fg of [...snapshot.floorGroups].sort((a, b) => compareIds(a.id, b.id))) {
    const list = floorGroupsAt.get(fg.readerPort) ?? [];
    floorGroupAt.set(fg.id, { reader: deviceNumber.get(fg.readerPort)!, k: list.length });
    list.push(fg.id);
    floorGroupsAt.set(fg.readerPort, list);
  }

  const devices: CompiledDevice[] = snapshot.devices.map((d, index) => {
    let inputMask = 0;
    for (const t of d.inputTypes) inputMask |= INPUT_BIT[t];
    const fgs = floorGroupsAt.get(d.id) ?? [];
    const elevator = ELEVATOR_READER_TYPES.includes(d.type);
    const floorsOf = fgs.map((id) => floorGroupById.get(id)!.floors);
    return {
      id: d.id,
      index_: index,
      node_: nodeIndex.get(d.cloudNode)!,
      inputMask_: inputMask,
      policy_: policyMask(d.authenticationPolicy),
      ble_: d.supportBleCredentials,
      secured_: d.securedReadsOnly,
      elevator_: elevator,
      // Beside the fields decide reads anyway (one cache line), not at the end of the object.
      entryOf_: NO_AREAS,
      exitOf_: NO_AREAS,
      slotGroup_: EMPTY_RUN,
      slotPairs_: EMPTY_SLOT_PAIRS,
      pairs_: EMPTY_RUN,
      slotOf_: null,
      run_: EMPTY_DEVICE_RUN,
      runDense_: 0,
      runSlots_: 0,
      wide_: fgs.length > 31,
      wideSets_: NO_WIDE_SETS,
      floorGroups_: fgs,
      floorsOf_: floorsOf,
      floorCache_: new Map(),
      ecardFloors_: elevator ? Object.freeze([...new Set(floorsOf.flat())].sort()) : NO_ECARD_FLOORS,
      rulesHere_: [],
      unlockHere_: [],
      autoOpen_: d.autoOpenAfterFirstAllow,
    };
  });
  linkAreas(snapshot, devices);
  const devicesById = [...devices].sort((a, b) => compareIds(a.id, b.id));
  const deviceIdOrder = new Int32Array(devices.length);
  devicesById.forEach((d, position) => {
    deviceIdOrder[d.index_] = position;
  });
  return { nodes, nodeIndex, devices, devicesById, deviceIdOrder, floorGroupAt };
}

/**
 * Each device's areas (docs/semantics.md AB1), in area id order so that decide checks them in the
 * order AB5 names. Any change to the areas but their names and reset marks recompiles everything.
 */
function linkAreas(snapshot: SystemSnapshot, devices: CompiledDevice[]): void {
  if (snapshot.areas.length === 0) return;
  const byId = new Map(devices.map((d) => [d.id, d]));
  const entries = new Map<CompiledDevice, CompiledArea[]>();
  const exits = new Map<CompiledDevice, CompiledArea[]>();
  for (const a of [...snapshot.areas].sort((x, y) => compareIds(x.id, y.id))) {
    const area: CompiledArea = {
      id: a.id,
      antiPassback_: a.antiPassback === null ? AP_NONE : a.antiPassback.mode === "hard" ? AP_HARD : AP_SOFT,
      resetMs_: a.antiPassback === null ? 0 : a.antiPassback.resetSeconds * 1000,
      limit_: a.occupancyLimit ?? -1,
    };
    for (const [list, into] of [
      [a.entries, entries],
      [a.exits, exits],
    ] as const)
      for (const id of list) {
        const d = byId.get(id)!;
        into.set(d, [...(into.get(d) ?? []), area]);
      }
  }
  for (const [d, areas] of entries) d.entryOf_ = areas;
  for (const [d, areas] of exits) d.exitOf_ = areas;
}
