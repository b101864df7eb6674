// GET /{system_id}/devices/{device_id}/access: who can open a device at an instant.
import type { Engine, WhoResult } from "../../evaluate/index.js";
import { QueryError } from "../../model/index.js";
import { queryHttpError } from "./httpError.js";
import { parseQuery } from "./parseQuery.js";

/**
 * `engine.whoCanAccess(deviceId, { at })`.
 * @throws HttpError 400 (bad query) or 404 (unknown device, named).
 */
export function answerDeviceAccess(engine: Engine, params: URLSearchParams, deviceId: string, now: () => number): WhoResult {
  const { at } = parseQuery(params, false, 0, now);
  try {
    return engine.whoCanAccess(deviceId, { at });
  } catch (e) {
    if (e instanceof QueryError) throw queryHttpError(e.issues, { deviceId: "device_id" });
    throw e;
  }
}
