// GET /{system_id}/devices/{device_id}/access: who can open a device at an instant, one page at a time.
import type { Engine, WhoResult } from "../../evaluate/index.js";
import { QueryError } from "../../model/index.js";
import { queryHttpError } from "../../service/httpError.js";
import { parseQuery } from "./parseQuery.js";

/** One page of a who-can-access answer, and what the paging headers need. */
export interface DeviceAccessPage {
  /** `engine.whoCanAccess`, its `holders` cut to the page asked for. */
  readonly result: WhoResult;
  readonly page: number;
  readonly perPage: number;
  /** Holders on every page together. */
  readonly total: number;
}

/**
 * `engine.whoCanAccess(deviceId, { at })`, paged as the API pages lists: `page` (zero-based, default 0)
 * and `per_page` (default 10, at most 100). A page past the last is answered with no holders.
 * @throws HttpError 400 (bad query) or 404 (unknown device, named).
 */
export function answerDeviceAccess(
  engine: Engine,
  params: URLSearchParams,
  deviceId: string,
  now: () => number,
): DeviceAccessPage {
  const { at, page, perPage } = parseQuery(params, false, 0, now, true);
  let all: WhoResult;
  try {
    all = engine.whoCanAccess(deviceId, { at });
  } catch (e) {
    if (e instanceof QueryError) throw queryHttpError(e.issues, { deviceId: "device_id" });
    throw e;
  }
  const total = all.holders.length;
  const from = Math.min(page * perPage, total);
  return { result: { ...all, holders: all.holders.slice(from, from + perPage) }, page, perPage, total };
}

// The paging headers are the service's (the report and subscription pages use them too).
export { pageHeaders } from "../../service/pageHeaders.js";
