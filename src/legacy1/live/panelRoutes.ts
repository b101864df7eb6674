// The 1.0 route table: method + 1.0 panel API path pattern (relative to the panel's URL) → handler.
import { type RouteMatch, type RouteTable, matchTable } from "../../live/routeTable.js";
import * as w from "./panelOperations.js";
import { type PanelAnswer, type PanelReadContext, panelReads as r } from "./panelReads.js";

export type PanelWriteHandler = (ctx: w.PanelWriteContext) => w.PanelWritten;
export type PanelReadHandler = (ctx: PanelReadContext) => PanelAnswer;

const A = "/api/partitions/:partitionId/attributes";

const TABLE: RouteTable<PanelWriteHandler, PanelReadHandler> = [
  ["POST", "/api/persons", w.createPerson],
  ["GET", "/api/persons", r.persons],
  ["GET", "/api/persons/:personId", r.person],
  ["PUT", "/api/persons/:personId", w.updatePerson],
  ["DELETE", "/api/persons/:personId", w.deletePerson],
  ["PUT", "/api/persons/:personId/photo", w.updatePhoto],
  ["POST", "/api/persons/:personId/credentials", w.createCredential],
  ["GET", "/api/persons/:personId/credentials", r.personCredentials],
  ["GET", "/api/persons/:personId/credentials/:credentialId", r.credential],
  ["PUT", "/api/persons/:personId/credentials/:credentialId", w.updateCredential],
  ["DELETE", "/api/persons/:personId/credentials/:credentialId", w.deleteCredential],
  ["POST", "/api/persons/:personId/credentials/:credentialId/activate", w.activateCredential],
  ["GET", "/api/rsop/persons", r.rsop],
  ["POST", "/api/groups", w.createGroup],
  ["GET", "/api/groups", r.groups],
  ["GET", "/api/groups/:groupId", r.group],
  ["PUT", "/api/groups/:groupId", w.updateGroup],
  ["DELETE", "/api/groups/:groupId", w.deleteGroup],
  ["GET", "/api/groups/:groupId/persons", r.groupPersons],
  ["PUT", "/api/groups/:groupId/persons", w.replaceGroupPersons],
  ["GET", "/api/persons/:personId/groups", r.personGroups],
  ["PUT", "/api/persons/:personId/groups", w.replacePersonGroups],
  ["DELETE", "/api/persons/:personId/groups/:groupId", w.removeMembership],
  ["POST", "/api/devices", w.createDevice],
  ["GET", "/api/devices", r.devices],
  ["GET", "/api/devices/:deviceId", r.device],
  ["PUT", "/api/devices/:deviceId", w.updateDevice],
  ["DELETE", "/api/devices/:deviceId", w.deleteDevice],
  ["POST", "/api/connections", w.createConnection],
  ["GET", "/api/connections", r.connections],
  ["GET", "/api/connections/:connectionId", r.connection],
  ["PUT", "/api/connections/:connectionId", w.updateConnection],
  ["DELETE", "/api/connections/:connectionId", w.deleteConnection],
  ["POST", "/api/connections/:connectionId/configure", w.configureConnection],
  ["POST", `${A}/single`, w.createAttribute],
  ["POST", `${A}/all`, w.replaceAttributes],
  ["GET", A, r.attributes],
  ["GET", `${A}/:attributeId`, r.attribute],
  ["PUT", `${A}/:attributeId`, w.updateAttribute],
  ["DELETE", `${A}/:attributeId`, w.deleteAttribute],
  ["POST", "/api/floor_groups", w.createFloorGroup],
  ["GET", "/api/floor_groups", r.floorGroups],
  ["GET", "/api/floor_groups/:floorGroupId", r.floorGroup],
  ["PUT", "/api/floor_groups/:floorGroupId", w.updateFloorGroup],
  ["DELETE", "/api/floor_groups/:floorGroupId", w.deleteFloorGroup],
  ["POST", "/api/rules", w.createRule],
  ["GET", "/api/rules", r.rules],
  ["GET", "/api/rules/:ruleId", r.rule],
  ["PUT", "/api/rules/:ruleId", w.updateRule],
  ["DELETE", "/api/rules/:ruleId", w.deleteRule],
  ["GET", "/api/search", r.search],
  ["GET", "/api/info", r.info],
  ["GET", "/api/hardware", r.hardware],
  ["GET", "/api/diagnostics/wireless", r.wirelessDiagnostics],
  ["GET", "/api/config", r.config],
  ["PUT", "/api/config", w.updateConfig],
];

export type PanelMatch = RouteMatch<PanelWriteHandler, PanelReadHandler>;

/** Every route as `[method, pattern]` (`:name` parameters), in table order. */
export function panelRoutePatterns(): [string, string][] {
  return TABLE.map(([method, pattern]) => [method, pattern]);
}

/** Every 1.0 route as `[method, pattern, handler]`, in table order (the HTTP adapter declares its routes from these). */
export function panelRouteEntries(): RouteTable<PanelWriteHandler, PanelReadHandler> {
  return TABLE;
}

/** Finds the 1.0 route for `method` and `pathname`; the most literal pattern wins (`…/attributes/all`). */
export function matchPanelRoute(method: string, pathname: string): PanelMatch {
  return matchTable<PanelWriteHandler, PanelReadHandler>(TABLE, method, pathname);
}
