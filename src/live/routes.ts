// The route table: method + seed path pattern → handler. Paths are relative to the system
// (`{systems_url}/{system_id}`); `:name` segments become params.
import { type RouteMatch, type RouteTable, matchTable } from "./routeTable.js";
import type { Created, WriteContext } from "./operations/common.js";
import {
  activateCredential,
  createCredential,
  deleteCredential,
  resetCredential,
  updateCredential,
} from "./operations/credentials.js";
import {
  addMembership,
  createGroup,
  deleteGroup,
  removeMembership,
  replaceGroupHolders,
  replaceHolderGroups,
  updateGroup,
} from "./operations/groups.js";
import {
  configureConnection,
  createCloudNode,
  createConnection,
  createDevice,
  deleteCloudNode,
  deleteConnection,
  deleteDevice,
  setThreatLevel,
  updateCloudNode,
  updateConnection,
  updateDevice,
} from "./operations/hardware.js";
import { createHolder, deleteHolder, updateHolder } from "./operations/holders.js";
import {
  createCustomField,
  deleteCustomField,
  replaceCustomFields,
  updateCustomField,
} from "./operations/customFields.js";
import {
  createFloorGroup,
  createPartition,
  deleteFloorGroup,
  deletePartition,
  removePartitionDevice,
  replacePartitionDevices,
  updateFloorGroup,
  updatePartition,
} from "./operations/partitions.js";
import { type Answer, type ReadContext, reads } from "./operations/reads.js";
import { createRule, deleteRule, updateRule } from "./operations/rules.js";
import { createCalendar, deleteCalendar, updateCalendar } from "./operations/calendars.js";
import { createArea, deleteArea, forgiveArea, resetArea, updateArea } from "./operations/areas.js";

export type WriteHandler = (ctx: WriteContext) => Created;
export type ReadHandler = (ctx: ReadContext) => Answer;

export type Table = RouteTable<WriteHandler, ReadHandler>;

const TABLE: Table = [
  ["POST", "/holders", createHolder],
  ["GET", "/holders", reads.holders],
  ["GET", "/holders/:holderId", reads.holder],
  ["PUT", "/holders/:holderId", updateHolder],
  ["DELETE", "/holders/:holderId", deleteHolder],
  ["POST", "/holders/:holderId/credentials", createCredential],
  ["GET", "/holders/:holderId/credentials", reads.holderCredentials],
  ["GET", "/holders/:holderId/credentials/:credentialId", reads.credential],
  ["PUT", "/holders/:holderId/credentials/:credentialId", updateCredential],
  ["DELETE", "/holders/:holderId/credentials/:credentialId", deleteCredential],
  ["POST", "/holders/:holderId/credentials/:credentialId/activate", activateCredential],
  ["POST", "/holders/:holderId/credentials/:credentialId/reset", resetCredential],
  ["GET", "/credentials", reads.credentials],
  ["GET", "/credentials/facility-codes", reads.facilityCodes],
  ["POST", "/groups", createGroup],
  ["GET", "/groups", reads.groups],
  ["GET", "/groups/:groupId", reads.group],
  ["PUT", "/groups/:groupId", updateGroup],
  ["DELETE", "/groups/:groupId", deleteGroup],
  ["GET", "/groups/:groupId/holders", reads.groupHolders],
  ["PUT", "/groups/:groupId/holders", replaceGroupHolders],
  ["GET", "/holders/:holderId/groups", reads.holderGroups],
  ["PUT", "/holders/:holderId/groups", replaceHolderGroups],
  ["PUT", "/holders/:holderId/groups/:groupId", addMembership],
  ["DELETE", "/holders/:holderId/groups/:groupId", removeMembership],
  ["POST", "/rules", createRule],
  ["GET", "/rules", reads.rules],
  ["GET", "/rules/:ruleId", reads.rule],
  ["PUT", "/rules/:ruleId", updateRule],
  ["DELETE", "/rules/:ruleId", deleteRule],
  ["POST", "/calendars", createCalendar],
  ["GET", "/calendars", reads.calendars],
  ["GET", "/calendars/:calendarId", reads.calendar],
  ["PUT", "/calendars/:calendarId", updateCalendar],
  ["DELETE", "/calendars/:calendarId", deleteCalendar],
  ["POST", "/areas", createArea],
  ["GET", "/areas", reads.areas],
  ["GET", "/areas/:areaId", reads.area],
  ["PUT", "/areas/:areaId", updateArea],
  ["DELETE", "/areas/:areaId", deleteArea],
  ["POST", "/areas/:areaId/reset", resetArea],
  ["POST", "/areas/:areaId/forgive", forgiveArea],
  ["POST", "/cloud-nodes", createCloudNode],
  ["GET", "/cloud-nodes", reads.cloudNodes],
  ["GET", "/cloud-nodes/:cloudNodeId", reads.cloudNode],
  ["PUT", "/cloud-nodes/:cloudNodeId", updateCloudNode],
  ["DELETE", "/cloud-nodes/:cloudNodeId", deleteCloudNode],
  ["PUT", "/cloud-nodes/:cloudNodeId/threat-level", setThreatLevel],
  ["GET", "/cloud-nodes/:cloudNodeId/hardware", reads.hardware],
  ["GET", "/cloud-nodes/:cloudNodeId/diagnostics/wireless", reads.wirelessDiagnostics],
  ["POST", "/cloud-nodes/:cloudNodeId/connections", createConnection],
  ["GET", "/cloud-nodes/:cloudNodeId/connections/:connectionId", reads.connection],
  ["PUT", "/cloud-nodes/:cloudNodeId/connections/:connectionId", updateConnection],
  ["DELETE", "/cloud-nodes/:cloudNodeId/connections/:connectionId", deleteConnection],
  ["POST", "/cloud-nodes/:cloudNodeId/connections/:connectionId/configure", configureConnection],
  ["GET", "/connections", reads.connections],
  ["POST", "/cloud-nodes/:cloudNodeId/devices", createDevice],
  ["GET", "/cloud-nodes/:cloudNodeId/devices/:deviceId", reads.device],
  ["PUT", "/cloud-nodes/:cloudNodeId/devices/:deviceId", updateDevice],
  ["DELETE", "/cloud-nodes/:cloudNodeId/devices/:deviceId", deleteDevice],
  ["POST", "/partitions", createPartition],
  ["GET", "/partitions", reads.partitions],
  ["GET", "/partitions/:partitionId", reads.partition],
  ["PUT", "/partitions/:partitionId", updatePartition],
  ["DELETE", "/partitions/:partitionId", deletePartition],
  ["PUT", "/partitions/:partitionId/devices", replacePartitionDevices],
  ["DELETE", "/partitions/:partitionId/devices/:deviceId", removePartitionDevice],
  ["POST", "/partitions/:partitionId/custom-fields/single", createCustomField],
  ["POST", "/partitions/:partitionId/custom-fields/all", replaceCustomFields],
  ["GET", "/partitions/:partitionId/custom-fields", reads.customFields],
  ["GET", "/partitions/:partitionId/custom-fields/:customFieldId", reads.customField],
  ["PUT", "/partitions/:partitionId/custom-fields/:customFieldId", updateCustomField],
  ["DELETE", "/partitions/:partitionId/custom-fields/:customFieldId", deleteCustomField],
  ["POST", "/floor_groups", createFloorGroup],
  ["GET", "/floor_groups", reads.floorGroups],
  ["GET", "/floor_groups/:floorGroupId", reads.floorGroup],
  ["PUT", "/floor_groups/:floorGroupId", updateFloorGroup],
  ["DELETE", "/floor_groups/:floorGroupId", deleteFloorGroup],
  ["GET", "/rsop/holders", reads.rsop],
  ["GET", "/cloud-nodes/:cloudNodeId/rsop/holders", reads.rsop],
];

export type Match = RouteMatch<WriteHandler, ReadHandler>;

/** Every route as `[method, pattern]` (`:name` parameters), in table order. */
export function routePatterns(): [string, string][] {
  return TABLE.map(([method, pattern]) => [method, pattern]);
}

/**
 * Every route as `[method, pattern, handler]`, in table order: the HTTP adapter declares its routes
 * from these (so the paths are written here only) and hands the live system the route it matched.
 */
export function routeEntries(): Table {
  return TABLE;
}

/** Finds the route for `method` and `pathname`; the most literal pattern wins. */
export function matchRoute(method: string, pathname: string): Match {
  return matchTable<WriteHandler, ReadHandler>(TABLE, method, pathname);
}
