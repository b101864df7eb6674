// GET /{system_id}/devices/{device_id}/access: who can open a device at an instant, one page at a time.
import type { Engine, WhoResult } from "../../evaluate/index.js";
import { QueryError } from "../../model/index.js";
import { queryHttpError } from "./httpError.js";
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
 * `engine.whoCanAccess(deviceId, { at })`, paged as seed 000 §4 says: `page` (zero-based, default 0)
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

/**
 * The paging headers of seed 000 §4: `X-Total-Count`, and `Link` with `first`, `prev` (not on the
 * first page), `next` (not on the last) and `last`, each the request's own URL with `page` and
 * `per_page` set (its other parameters, such as `at`, kept).
 */
export function pageHeaders(url: URL, p: Pick<DeviceAccessPage, "page" | "perPage" | "total">): Record<string, string> {
  const last = Math.max(0, Math.ceil(p.total / p.perPage) - 1);
  // The other parameters exactly as the client wrote them.
  const kept = url.search
    .slice(1)
    .split("&")
    .filter((pair) => {
      const name = new URLSearchParams(pair).keys().next().value;
      return pair !== "" && name !== "page" && name !== "per_page";
    });
  const base = `${url.origin}${url.pathname}?${kept.map((k) => `${k}&`).join("")}`;
  const link = (page: number, rel: string) => `<${base}page=${page}&per_page=${p.perPage}>; rel="${rel}"`;
  const links = [link(0, "first")];
  if (p.page > 0) links.push(link(Math.min(p.page - 1, last), "prev"));
  if (p.page < last) links.push(link(p.page + 1, "next"));
  links.push(link(last, "last"));
  return { "x-total-count": String(p.total), link: links.join(", ") };
}
