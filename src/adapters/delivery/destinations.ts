// Where webhook notifications may go (HW1–HW3). By default no address of this machine or of a
// private network: loopback, link-local (cloud metadata at 169.254.169.254 included), private
// (RFC 1918), shared (100.64/10, carrier-grade NAT), unique-local, site-local, unspecified,
// multicast and broadcast, in IPv4 and IPv6, IPv4-mapped IPv6 included — otherwise anyone allowed
// to subscribe could make this server probe and post to hosts only it can reach. An operator
// allow-list of CIDRs (`--webhook-allow`) admits such addresses for private deployments and tests.
//
// Checked twice: on the URL text when a subscription is created or updated (an IP literal in any
// spelling the WHATWG URL parser normalizes, and `localhost`), and on every address a delivery
// connects to (the `lookup` of the HTTPS request filters the DNS answers), so a name that resolves,
// or later re-resolves, to a refused address sends it nothing.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from "node:dns";
import { BlockList, isIP } from "node:net";

/** The `lastError` of an attempt to a refused address (one category, whatever the port holds: HW2). */
export const REFUSED_DESTINATION = "refused: destination address not allowed";
/** The error code the delivery lookup fails with for a refused address. */
export const REFUSED_CODE = "ERSOP_DESTINATION";

/** The ranges refused unless allowed: [address, prefix length]. */
const REFUSED_V4: readonly [string, number][] = [
  ["0.0.0.0", 8], // unspecified, "this network" (Linux connects 0.0.0.0 to itself)
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // shared address space (carrier-grade NAT)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata services)
  ["172.16.0.0", 12], // private
  ["192.168.0.0", 16], // private
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, 255.255.255.255 broadcast included
];
const REFUSED_V6: readonly [string, number][] = [
  ["::", 96], // unspecified, loopback and the deprecated IPv4-compatible addresses (::a.b.c.d)
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still routed by some networks)
  ["ff00::", 8], // multicast
];

/** One CIDR of an allow-list: `address/prefix`, or an address alone (the one address). */
function parseCidr(text: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } | string {
  const [raw = "", prefixText, ...rest] = text.trim().split("/");
  const address = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw;
  const version = isIP(address);
  if (version === 0 || rest.length > 0)
    return `"${text}" is not an IP address or CIDR (e.g. 127.0.0.1, 10.0.0.0/8, fd00::/8)`;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= max)) return `"${text}" has a prefix length outside 0–${max}`;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** The address of a URL host when it is an IP literal (brackets removed), else null. */
function literal(hostname: string): string | null {
  const h = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isIP(h) === 0 ? null : h;
}

/** The destination policy of a server: the refused ranges less the operator's allow-list. */
export class Destinations {
  readonly #refused = new BlockList();
  readonly #allowed = new BlockList();
  /** The allow-list as given, for messages. */
  readonly allow: readonly string[];

  /**
   * @param allow - CIDRs (or single addresses) a notification may go to even though they are refused by default.
   * @throws RangeError naming the first entry that is not an address or CIDR.
   */
  constructor(allow: readonly string[] = []) {
    for (const [a, p] of REFUSED_V4) this.#refused.addSubnet(a, p, "ipv4");
    for (const [a, p] of REFUSED_V6) this.#refused.addSubnet(a, p, "ipv6");
    for (const entry of allow) {
      const c = parseCidr(entry);
      if (typeof c === "string") throw new RangeError(`Webhook allow-list: ${c}.`);
      this.#allowed.addSubnet(c.address, c.prefix, c.family);
    }
    this.allow = [...allow];
  }

  /** Splits `--webhook-allow` text (commas) into its CIDRs; a message for the first bad one. */
  static parseList(text: string): { ok: true; cidrs: string[] } | { ok: false; message: string } {
    const cidrs = text
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    if (cidrs.length === 0)
      return { ok: false, message: "give at least one IP address or CIDR (e.g. 127.0.0.1/32,10.0.0.0/8)" };
    for (const c of cidrs) {
      const parsed = parseCidr(c);
      if (typeof parsed === "string") return { ok: false, message: parsed };
    }
    return { ok: true, cidrs };
  }

  /**
   * Whether a notification may be sent to this IP address. BlockList matches an IPv4-mapped IPv6
   * address (::ffff:a.b.c.d) against the IPv4 ranges, so a mapped private address is refused and
   * a mapped allowed one admitted.
   */
  allowed(address: string): boolean {
    const version = isIP(address);
    if (version === 0) return false;
    const family = version === 4 ? "ipv4" : "ipv6";
    return !this.#refused.check(address, family) || this.#allowed.check(address, family);
  }

  /**
   * Why a subscription URL may not be used, or null: its host is an IP literal (as the URL parser
   * normalized it: `0x7f000001`, `2130706433` and `127.1` are 127.0.0.1) or `localhost` (which
   * resolves to loopback), outside what `allowed` admits. Other names are checked when delivering.
   */
  urlProblem(url: URL): string | null {
    const host = url.hostname.toLowerCase().replace(/\.$/, "");
    const ip = literal(host);
    const loopbackName = host === "localhost" || host.endsWith(".localhost");
    if (ip === null && !loopbackName) return null;
    if (ip !== null ? this.allowed(ip) : this.allowed("127.0.0.1") || this.allowed("::1")) return null;
    const what = ip ?? host;
    return `Names ${what}, an address of this machine or of a private network (loopback, link-local, private, shared, unique-local, unspecified, multicast or broadcast), where notifications are not sent; an operator may allow such addresses with --webhook-allow.`;
  }

  /** Whether the URL's host is an IP literal this policy refuses (checked before connecting: no lookup runs for a literal). */
  refusesLiteral(url: URL): boolean {
    const ip = literal(url.hostname);
    return ip !== null && !this.allowed(ip);
  }

  /**
   * A `lookup` for `https.request`: resolves as dns.lookup does, keeps only the answers this policy
   * allows, and fails with code REFUSED_CODE when none is left, before any connection is made.
   */
  readonly lookup = (
    hostname: string,
    options: LookupOneOptions | LookupAllOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) return callback(err, options.all === true ? [] : "", 0);
      const ok = addresses.filter((a) => this.allowed(a.address));
      if (ok.length === 0) {
        const refused: NodeJS.ErrnoException = new Error(REFUSED_DESTINATION);
        refused.code = REFUSED_CODE;
        return callback(refused, options.all === true ? [] : "", 0);
      }
      if (options.all === true) callback(null, ok);
      else callback(null, ok[0]!.address, ok[0]!.family);
    });
  };
}
