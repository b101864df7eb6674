// Compiles a validated snapshot into flat indexes for the evaluate layer (the layout is in
// compiledSystem.ts), one segment at a time, each by its own builder so that updateCompiled can
// rebuild one alone: static parts (buildNodes: cloud nodes, devices, floor groups), rules
// (buildRules: ranks in id order, windows, the groups and devices they reach), per-device slot runs
// (buildReach), holders (buildHolders: stable indexes with a free list, their hot fields in
// `holderData_`) and their credentials (buildCredentials: an open-addressing card table with
// tombstones, PINs); the holder order (holderOrder.ts) is built on first use.
import type { SystemSnapshot } from "../model/index.js";
import { cardCapacity } from "./buildCredentials.js";
import { addHolder } from "./buildHolders.js";
import { buildNodes } from "./buildNodes.js";
import { rebuildDeviceRun } from "./buildReach.js";
import { buildRules } from "./buildRules.js";
import { CARD_EMPTY, CARD_STRIDE, type CompiledSystem, HOLDER_STRIDE } from "./compiledSystem.js";
import { RULE_STRIDE, compileCalendars } from "./compileWindow.js";
import { newHolderOrder } from "./holderOrderState.js";
import { buildZoneTable } from "./zoneTable.js";

const NO_RANKS = new Int32Array(0);

/** Compiles a validated snapshot (from parseSnapshot) into indexes for decide, rsop and who. */
export function compileSnapshot(snapshot: SystemSnapshot): CompiledSystem {
  const { nodes, nodeIndex, devices, devicesById, deviceIdOrder, floorGroupAt } = buildNodes(snapshot);
  let groupCount = 0;
  for (const h of snapshot.holders) groupCount += h.groups.length;
  const capacity = cardCapacity(snapshot);
  const calendars = compileCalendars(snapshot.calendars);

  const byId = (list: readonly { readonly id: string }[]) => new Map<string, object>(list.map((e) => [e.id, e]));
  const sys: CompiledSystem = {
    snapshot,
    statics_: {
      cloudNodes: byId(snapshot.cloudNodes),
      devices: byId(snapshot.devices),
      floorGroups: byId(snapshot.floorGroups),
      areas: byId(snapshot.areas),
    },
    nodes_: nodes,
    nodeIndex_: nodeIndex,
    devices_: devices,
    deviceIndex_: new Map(devices.map((d) => [d.id, d])),
    holders_: [],
    holderIndex_: new Map(),
    freeHolders_: [],
    holderData_: new Float64Array(Math.max(1, snapshot.holders.length) * HOLDER_STRIDE),
    holderGroups_: new Int32Array(Math.max(8, groupCount)),
    holderGroupsEnd_: 0,
    holderGroupsGarbage_: 0,
    groupIndex_: new Map(snapshot.groups.map((g, i) => [g.id, i])),
    groups_: [...snapshot.groups],
    freeGroups_: [],
    rules_: [],
    ruleIndex_: new Map(),
    ruleIds_: [],
    ruleData_: new Int32Array(snapshot.rules.length * RULE_STRIDE),
    calendarData_: calendars.data,
    calendarAt_: calendars.at,
    cardTable_: new Float64Array(capacity * CARD_STRIDE).fill(CARD_EMPTY),
    cardMask_: capacity - 1,
    cardLive_: 0,
    cardUsed_: 0,
    cardIds_: [],
    wideCards_: new Map(),
    digitalById_: new Map(),
    pinOwner_: new Map(),
    pinShared_: new Map(),
    systemZone_: buildZoneTable(snapshot.timezone),
    rulesOfGroup_: snapshot.groups.map(() => NO_RANKS),
    holdersOfGroup_: snapshot.groups.map(() => [] as number[]),
    ruleDevices_: [],
    deviceIdOrder_: deviceIdOrder,
    devicesById_: devicesById,
    nodesOfRule_: [],
    floorGroupIndex_: new Map(snapshot.floorGroups.map((fg, i) => [fg.id, i])),
    floorGroupAt_: floorGroupAt,
    holderOrder_: newHolderOrder(),
  };

  buildRules(sys, snapshot);
  for (const d of devices) rebuildDeviceRun(sys, d);
  for (const h of snapshot.holders) addHolder(sys, h);
  return sys;
}
