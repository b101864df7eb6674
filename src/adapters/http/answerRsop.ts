// GET /{system_id}/rsop/holders and GET /{system_id}/cloud-nodes/{cloud_node_id}/rsop/holders.
import type { Engine, RsopResult } from "../../evaluate/index.js";
import { QueryError } from "../../model/index.js";
import { jsonResponse, jsonTextBytes, queryHttpError, textResponse } from "../../service/httpError.js";
import { parseQuery } from "./parseQuery.js";

/**
 * The RSOP answer of the holders in `?ids=`: `engine.rsop`'s result as JSON laid out with `indent`
 * (jsonText's text), made by `engine.rsopJsonBytes`.
 * @param cloudNodeId - the node scope, or null for the system-wide route.
 * @param shape - what a token with partitions may read of the result (scope.ts `rsopInScope`); then
 *   the answer is made from the result object instead of the engine's bytes.
 * @throws HttpError 400 (bad query) or 404 (unknown holder or cloud node, each named).
 */
export function answerRsop(
  engine: Engine,
  params: URLSearchParams,
  cloudNodeId: string | null,
  maxIds: number,
  now: () => number,
  indent: number,
  shape?: (r: RsopResult) => RsopResult,
): Response {
  const { ids, at } = parseQuery(params, true, maxIds, now);
  const options = cloudNodeId === null ? { at } : { at, cloudNodeId };
  try {
    if (shape !== undefined) return jsonResponse(200, shape(engine.rsop(ids, options)), indent);
    return textResponse(200, jsonTextBytes(engine.rsopJsonBytes(ids, options, indent), indent));
  } catch (e) {
    if (e instanceof QueryError) throw queryHttpError(e.issues, { cloudNodeId: "cloud_node_id" });
    throw e;
  }
}
