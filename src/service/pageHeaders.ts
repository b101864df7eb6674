// The paging headers of every paged answer (device access, reports, subscriptions and their parked events).

/** Where a page is: its number (zero-based), its size, and how many items all pages hold together. */
export interface PageCount {
  readonly page: number;
  readonly perPage: number;
  readonly total: number;
}

/**
 * The paging headers of the accounts API: `X-Total-Count`, and `Link` with `first`, `prev` (not on the
 * first page), `next` (not on the last) and `last`, each the request's own URL with `page` and
 * `per_page` set (its other parameters, such as `at`, kept).
 */
export function pageHeaders(url: URL, p: PageCount): Record<string, string> {
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
