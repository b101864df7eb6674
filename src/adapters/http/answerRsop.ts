// GET /{system_id}/rsop/holders and GET /{system_id}/cloud-nodes/{cloud_node_id}/rsop/holders.
import type { Engine, RsopResult } from "../../evaluate/index.js";
import { QueryError } from "../../model/index.js";
import { queryHttpError } from "./httpError.js";
import { parseQuery } from "./parseQuery.js";

/**
 * The RSOP result of the holders in `?ids=`, exactly as `engine.rsop` returns it.
 * @param cloudNodeId - the node scope, or null for the system-wide route.
 * @throws HttpError 400 (bad query) or 404 (unknown holder or cloud node, each named).
 */
export function answerRsop(engine: Engine, params: URLSearchParams, cloudNodeId: string | null, maxIds: number, now: () => number): RsopResult {
  const { ids, at } = parseQuery(params, true, maxIds, now);
  try {
    return engine.rsop(ids, cloudNodeId === null ? { at } : { at, cloudNodeId });
  } catch (e) {
    if (e instanceof QueryError) throw queryHttpError(e.issues, { cloudNodeId: "cloud_node_id" });
    throw e;
  }
}
