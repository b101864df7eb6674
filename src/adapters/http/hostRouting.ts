// Which host of the service a request is for (semantics T50): the per-node (1.0) host of the panel
// with serial number S answers `Host: S.<any domain>` with a path under /api/, and `/panels/S/api/…`
// on any host; everything else is the accounts host (/api/…) or the systems host (/{system_id}/…).
// A Host that is an IP literal, or has no dot, names no panel: a client reaching the service by its
// address still gets the accounts host.

/** A request for a panel's per-node host: its serial number and the path below it (`/api/…`). */
export interface PanelTarget {
  readonly serial: string;
  readonly path: string;
}

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** The first DNS label of a Host header value (port and trailing dot removed), when it can name a panel. */
export function hostLabel(host: string | null): string | null {
  if (host === null || host.startsWith("[")) return null;
  const name = host.replace(/:\d*$/, "").replace(/\.$/, "");
  if (IPV4.test(name)) return null;
  const dot = name.indexOf(".");
  return dot <= 0 ? null : name.slice(0, dot);
}

/**
 * The panel a request is for, or null. `isSerial` says whether a label is a registered serial
 * number (the path form names one whether registered or not: an unknown one is then a 404 there).
 * A malformed percent-encoding in the path form is no panel either (answered as no route).
 */
export function panelTarget(
  host: string | null,
  pathname: string,
  isSerial: (label: string) => boolean,
): PanelTarget | null {
  if (pathname.startsWith("/panels/")) {
    const slash = pathname.indexOf("/", "/panels/".length);
    if (slash < 0) return null;
    const rest = pathname.slice(slash);
    if (rest !== "/api" && !rest.startsWith("/api/")) return null;
    try {
      return { serial: decodeURIComponent(pathname.slice("/panels/".length, slash)), path: rest };
    } catch {
      return null;
    }
  }
  if (pathname !== "/api" && !pathname.startsWith("/api/")) return null;
  const label = hostLabel(host);
  return label !== null && isSerial(label) ? { serial: label, path: pathname } : null;
}
