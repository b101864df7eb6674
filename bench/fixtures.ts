// Shared benchmark inputs: deterministic buildings at three sizes and request mixes for them, plus the
// "peer view" of every request (the same access question reduced to holder, device, local wall time
// and presented factors) that casbin, Cedar and the plain-JS baselines answer.
//
// Everything is built from a seeded PRNG (mulberry32) and reads no clock, so two runs build the same
// buildings and the same requests. Local wall times of the peer view are computed with luxon here,
// independently of the engine's compiled zone tables.
import { IANAZone } from "luxon";
import {
  type Engine,
  type SystemSnapshot,
  type SystemSnapshotInput,
  createEngine,
  encodeWiegand,
  parseSnapshot,
} from "../src/index.js";
import { mulberry32 } from "../src/adapters/cli/mulberry32.js";

// ---------------------------------------------------------------------------------------------------
// Sizes

export type SizeName = "S" | "M" | "L";

export interface SizeSpec {
  readonly name: SizeName;
  readonly holders: number;
  readonly devices: number;
  readonly rules: number;
  readonly groups: number;
  /** One cloud node (site) per zone. */
  readonly zones: readonly string[];
  /** Requests in the pool the throughput benchmarks cycle through. */
  readonly requests: number;
}

export const SIZES: Readonly<Record<SizeName, SizeSpec>> = {
  S: { name: "S", holders: 1_000, devices: 100, rules: 300, groups: 50, zones: ["America/Chicago"], requests: 50_000 },
  M: {
    name: "M",
    holders: 10_000,
    devices: 1_000,
    rules: 3_000,
    groups: 300,
    zones: ["America/Chicago", "America/New_York", "Europe/London"],
    requests: 100_000,
  },
  L: {
    name: "L",
    holders: 100_000,
    devices: 5_000,
    rules: 20_000,
    groups: 2_000,
    zones: [
      "America/Chicago",
      "America/New_York",
      "America/Los_Angeles",
      "Europe/London",
      "Europe/Berlin",
      "Asia/Kolkata",
      "Asia/Tokyo",
      "Australia/Sydney",
    ],
    requests: 200_000,
  },
};

// ---------------------------------------------------------------------------------------------------
// PRNG

export { mulberry32 };

class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** Index drawn by weight. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let x = this.next() * total;
    for (let i = 0; i < weights.length; i++) if ((x -= weights[i]!) < 0) return i;
    return weights.length - 1;
  }
  /** `k` distinct items (or all when there are fewer). */
  sample<T>(xs: readonly T[], k: number): T[] {
    if (k >= xs.length) return [...xs];
    const chosen = new Set<number>();
    while (chosen.size < k) chosen.add(Math.floor(this.next() * xs.length));
    return [...chosen].map((i) => xs[i]!);
  }
}

const pad = (n: number, w: number) => String(n).padStart(w, "0");

// ---------------------------------------------------------------------------------------------------
// Zones (luxon, independent of src/compile)

const MINUTE = 60_000;
const HOUR = 3_600_000;
export const DAY = 86_400_000;
/** The requests' year: 2026 (UTC bounds). */
export const YEAR_START = Date.UTC(2026, 0, 1);
export const YEAR_END = Date.UTC(2027, 0, 1);
/** "Unbounded" holder validity in the peers' numeric model (Cedar has no infinity). */
export const FAR = 8_640_000_000_000_000;

const zoneCache = new Map<string, IANAZone>();
function zoneOf(name: string): IANAZone {
  let z = zoneCache.get(name);
  if (z === undefined) zoneCache.set(name, (z = IANAZone.create(name)));
  return z;
}

/** Offset of `zone` at instant `ms`, in ms, straight from luxon. */
function luxonOffsetMs(zone: string, ms: number): number {
  return zoneOf(zone).offset(ms) * MINUTE;
}

/** Offsets of one zone over the requests' span (a week either side of 2026), found with luxon. */
interface SpanTable {
  readonly starts: number[];
  readonly offsets: number[];
}
const SPAN_FROM = YEAR_START - 7 * DAY;
const SPAN_TO = YEAR_END + 7 * DAY;
const spanTables = new Map<string, SpanTable>();

function spanTable(zone: string): SpanTable {
  const hit = spanTables.get(zone);
  if (hit !== undefined) return hit;
  const starts = [-Infinity];
  const offsets = [luxonOffsetMs(zone, SPAN_FROM)];
  let prevT = SPAN_FROM;
  for (let t = SPAN_FROM + DAY; prevT < SPAN_TO; t = Math.min(t + DAY, SPAN_TO)) {
    const o = luxonOffsetMs(zone, t);
    if (o !== offsets[offsets.length - 1]) {
      let lo = prevT;
      let hi = t;
      while (hi - lo > 1000) {
        const mid = Math.floor((lo + hi) / 2);
        if (luxonOffsetMs(zone, mid) === offsets[offsets.length - 1]) lo = mid;
        else hi = mid;
      }
      starts.push(hi);
      offsets.push(o);
    }
    prevT = t;
  }
  const table = { starts, offsets };
  spanTables.set(zone, table);
  return table;
}

/** Offset of `zone` at instant `ms` (within a week of 2026), in ms. */
export function zoneOffsetMs(zone: string, ms: number): number {
  if (ms < SPAN_FROM || ms >= SPAN_TO) return luxonOffsetMs(zone, ms);
  const { starts, offsets } = spanTable(zone);
  let i = starts.length - 1;
  while (starts[i]! > ms) i--;
  return offsets[i]!;
}

/** An instant whose local wall time in `zone` is `local` (local epoch ms); in a DST gap, one near it. */
export function localToInstant(zone: string, local: number): number {
  const guess = local - zoneOffsetMs(zone, local);
  return local - zoneOffsetMs(zone, guess);
}

/** The instants of 2026 at which `zone` changes its UTC offset. */
export function transitions2026(zone: string): number[] {
  return spanTable(zone).starts.filter((t) => t >= YEAR_START && t < YEAR_END);
}

// ---------------------------------------------------------------------------------------------------
// Building generator

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
type Weekday = (typeof WEEKDAYS)[number];
const MON_FRI: Weekday[] = ["Mon", "Tue", "Wed", "Thu", "Fri"];
const MON_SAT: Weekday[] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const EVERY_DAY: Weekday[] = [...WEEKDAYS];
const WEEKEND: Weekday[] = ["Sat", "Sun"];
const SUN_THU: Weekday[] = ["Sun", "Mon", "Tue", "Wed", "Thu"];

interface WindowDef {
  readonly startTime: string;
  readonly stopTime: string;
  readonly recurring: Weekday[];
}
const W = (startTime: string, stopTime: string, recurring: Weekday[]): WindowDef => ({
  startTime,
  stopTime,
  recurring,
});
const DAY_SHIFTS = [
  W("06:00:00", "18:00:00", MON_FRI),
  W("07:00:00", "19:00:00", MON_FRI),
  W("06:30:00", "19:30:00", MON_FRI),
  W("08:00:00", "17:00:00", MON_FRI),
];
const EXTENDED = W("05:00:00", "22:00:00", MON_SAT);
const NIGHTS = [
  W("22:00:00", "06:00:00", EVERY_DAY),
  W("21:00:00", "07:00:00", SUN_THU),
  W("18:00:00", "02:00:00", ["Fri", "Sat"]),
];
const WEEKENDS = W("08:00:00", "16:00:00", WEEKEND);
const ALWAYS = W("00:00:00", "24:00:00", EVERY_DAY);
const EVENING = W("14:00:00", "23:00:00", EVERY_DAY);
const EARLY = W("04:00:00", "12:00:00", MON_FRI);
const VISITING = W("09:00:00", "20:00:00", EVERY_DAY);

type GroupKind = "staff" | "night" | "security" | "contractor" | "visitor" | "secure" | "office";
const GROUP_KINDS: readonly GroupKind[] = ["staff", "night", "security", "contractor", "visitor", "secure"];
const GROUP_KIND_WEIGHTS = [60, 10, 8, 8, 5, 9];

const FIRST = [
  "Maria",
  "James",
  "Aisha",
  "Wei",
  "Olivia",
  "Mateo",
  "Fatima",
  "Liam",
  "Sofia",
  "Noah",
  "Chloe",
  "Ethan",
  "Amara",
  "Lucas",
  "Hannah",
  "Diego",
  "Grace",
  "Omar",
  "Priya",
  "Kofi",
  "Yuki",
  "Ingrid",
  "Tariq",
  "Megan",
];
const LAST = [
  "Alvarez",
  "Johnson",
  "Nguyen",
  "Patel",
  "Okafor",
  "Kowalski",
  "Murphy",
  "Garcia",
  "Chen",
  "Williams",
  "Haddad",
  "Schmidt",
  "Rossi",
  "Kim",
  "O'Brien",
  "Mensah",
  "Novak",
  "Singh",
  "Tanaka",
  "Dubois",
  "Larsen",
  "Cohen",
  "Walsh",
  "Kaur",
];

/** What request generation and the peer models need to know about a generated building. */
export interface BuildingMeta {
  readonly size: SizeSpec;
  readonly sites: SiteMeta[];
  /** Per device id. */
  readonly devices: Map<string, DeviceMeta>;
  readonly holders: HolderMeta[];
  /** Per group index: the doors and the elevator readers its enabled allow rules reach. */
  readonly groupDoors: string[][];
  readonly groupReaders: string[][];
  /** Every issued card number and digital credential number. */
  readonly usedNumbers: Set<number>;
  /** A holder whose groups hold about 50 enabled rules, each over an area of doors. */
  readonly rsopHolderId: string;
  /** A holder whose groups hold about 50 enabled single-door rules ("offices") at several sites. */
  readonly rsopNarrowHolderId: string;
}

export interface SiteMeta {
  readonly node: string;
  readonly zone: string;
  readonly facilityCode: number;
  readonly doors: string[];
  readonly readers: string[];
  readonly groups: number[];
}

export interface DeviceMeta {
  readonly id: string;
  readonly site: number;
  readonly zone: string;
  readonly elevator: boolean;
  readonly ble: boolean;
  /** The device's authentication policy as accepted factors: bit 1 card, 2 PIN, 4 card + PIN. */
  readonly accepts: number;
}

export interface CardMeta {
  readonly number: number;
  readonly facilityCode: number;
}

export interface HolderMeta {
  readonly id: string;
  readonly index: number;
  readonly site: number;
  readonly groups: string[];
  readonly groupIndexes: number[];
  readonly enabled: boolean;
  /** Local epoch ms bounds, ±FAR when unbounded. */
  readonly from: number;
  readonly to: number;
  readonly pin: string | null;
  readonly duressPin: string | null;
  readonly cards: CardMeta[];
  readonly mobile: { readonly id: string; readonly types: string[]; readonly pending: boolean } | null;
}

export interface Building {
  readonly snapshot: SystemSnapshotInput;
  readonly meta: BuildingMeta;
}

/** Factor sets of SPEC §6 as bit masks (1 card, 2 PIN, 4 card + PIN). */
export function policyAccepts(policy: string | null | undefined): number {
  switch (policy) {
    case "cardOnly":
      return 1 | 4;
    case "pinOnly":
      return 2 | 4;
    case "cardAndPin":
      return 4;
    default:
      return 1 | 2 | 4;
  }
}

function localMsOf(s: string | null, unbounded: number): number {
  if (s === null) return unbounded;
  const [d, t] = s.split("T") as [string, string];
  const [y, m, dd] = d.split("-").map(Number) as [number, number, number];
  const [hh, mi, ss] = t.split(":").map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, dd, hh, mi, ss);
}

/**
 * A realistic building of the given size: one cloud node per zone (a site), each with controllers,
 * doors grouped in areas (perimeter entrances first), exit readers, elevator banks with floor relays
 * and floor groups; groups of several kinds (day staff, night shift, security 24x7, contractors with
 * dated and deny rules, visitors, secure rooms with card + PIN), rules built from those areas, and
 * holders with cards, mobile credentials, PINs and validity dates.
 */
export function generateBuilding(spec: SizeSpec, seed = 0x0b1d_2026): Building {
  const rng = new Rng(seed ^ spec.holders);
  const siteCount = spec.zones.length;

  // Sites, connections and devices.
  const cloudNodes: Record<string, unknown>[] = [];
  const connections: Record<string, unknown>[] = [];
  const devices: Record<string, unknown>[] = [];
  const floorGroups: Record<string, unknown>[] = [];
  const sites: SiteMeta[] = [];
  const areas: string[][][] = []; // per site: areas of door ids (area 0: perimeter)
  const secureDoors: string[][] = [];
  const floorGroupsOf: string[][] = []; // per site
  const floorGroupsByBank: string[][][] = []; // per site, per bank
  const deviceMeta = new Map<string, DeviceMeta>();

  for (let s = 0; s < siteCount; s++) {
    const node = `node-${pad(s + 1, 2)}`;
    const zone = spec.zones[s]!;
    cloudNodes.push({
      id: node,
      name: `Site ${s + 1} (${zone})`,
      serialNumber: `CN-${pad(2400 + s, 4)}-${pad(s * 37 + 11, 5)}`,
      timezone: zone,
      offlinePolicy: (s % 3) as 0 | 1 | 2,
      ecards: [9_990_001 + s],
      cardFormat: [
        { id: "H10301", min_input_bits: 26, max_input_bits: 26, facility_code: "ENFORCED" },
        { id: "C1k35s", min_input_bits: 35, max_input_bits: 35, facility_code: "ENFORCED" },
      ],
    });
    const site: SiteMeta = { node, zone, facilityCode: 17 + s * 11, doors: [], readers: [], groups: [] };
    sites.push(site);

    const deviceTotal = Math.floor(spec.devices / siteCount) + (s < spec.devices % siteCount ? 1 : 0);
    // Controllers: 16 ports each.
    let conn = -1;
    let port = 16;
    const nextPort = (): [string, number] => {
      if (port === 16) {
        conn++;
        port = 0;
        connections.push({
          id: `conn-${pad(s + 1, 2)}-${pad(conn + 1, 3)}`,
          name: `Site ${s + 1} controller ${conn + 1}`,
          type: "ethernet",
          cloudNode: node,
          port: 4050,
          ipaddress: `10.${s + 1}.${Math.floor(conn / 250)}.${(conn % 250) + 2}`,
        });
      }
      port++;
      return [`conn-${pad(s + 1, 2)}-${pad(conn + 1, 3)}`, port];
    };
    let serial = 0;
    const addDevice = (fields: Record<string, unknown>, meta: { elevator: boolean; ble: boolean; accepts: number }) => {
      const [connection, p] = nextPort();
      const id = `dev-${pad(s + 1, 2)}-${pad(++serial, 4)}`;
      devices.push({ id, cloudNode: node, connection, port: p, ...fields });
      deviceMeta.set(id, { id, site: s, zone, ...meta });
      return id;
    };

    // Elevator banks: a reader and one relay per floor; four floor groups per bank.
    const banks = Math.max(1, Math.round(deviceTotal / 150));
    const floors = Math.min(12, Math.max(4, Math.floor(deviceTotal / (banks * 12))));
    const siteFloorGroups: string[] = [];
    const banksFg: string[][] = [];
    for (let b = 0; b < banks; b++) {
      const reader = addDevice(
        { name: `Site ${s + 1} lift ${b + 1} car reader`, type: "elevatorReader", publicIcon: "other" },
        { elevator: true, ble: false, accepts: 7 },
      );
      site.readers.push(reader);
      const relays: string[] = [];
      for (let f = 0; f < floors; f++)
        relays.push(
          addDevice(
            { name: `Site ${s + 1} lift ${b + 1} floor ${f + 1}`, type: "floorRelay" },
            { elevator: false, ble: false, accepts: 7 },
          ),
        );
      const mid = Math.max(3, Math.floor(floors / 2));
      const sets = [relays.slice(0, 2), relays.slice(2, mid), relays.slice(mid, floors - 1), relays.slice(floors - 1)];
      const names = ["public floors", "lower floors", "upper floors", "top floor"];
      const bankFgs: string[] = [];
      sets.forEach((floorsOf, k) => {
        if (floorsOf.length === 0) return;
        const id = `fg-${pad(s + 1, 2)}-${pad(b + 1, 2)}-${k + 1}`;
        floorGroups.push({ id, name: `Site ${s + 1} lift ${b + 1} ${names[k]}`, readerPort: reader, floors: floorsOf });
        siteFloorGroups.push(id);
        bankFgs.push(id);
      });
      banksFg.push(bankFgs);
    }
    floorGroupsOf.push(siteFloorGroups);
    floorGroupsByBank.push(banksFg);

    // Doors, some with an exit reader, grouped into areas of about ten readers.
    const siteAreas: string[][] = [];
    const secure: string[] = [];
    let area: string[] = [];
    let doorNo = 0;
    while (serial < deviceTotal) {
      doorNo++;
      const isSecure = rng.chance(0.04);
      const ble = rng.chance(0.6);
      const policy = isSecure ? "cardAndPin" : null;
      const primary = addDevice(
        {
          name: `Site ${s + 1} door ${doorNo}`,
          type: "primaryReader",
          publicIcon: rng.chance(0.9) ? "swingingDoor" : "rollUpDoor",
          supportBleCredentials: ble,
          authenticationPolicy: policy,
          readerType: ble ? "touch" : "standard",
          dps: true,
        },
        { elevator: false, ble, accepts: policyAccepts(policy) },
      );
      area.push(primary);
      site.doors.push(primary);
      if (isSecure) secure.push(primary);
      if (serial < deviceTotal && rng.chance(0.15)) {
        const exit = addDevice(
          {
            name: `Site ${s + 1} door ${doorNo} exit`,
            type: "additionalReader",
            primaryReader: primary,
            supportBleCredentials: ble,
            authenticationPolicy: policy,
          },
          { elevator: false, ble, accepts: policyAccepts(policy) },
        );
        area.push(exit);
        site.doors.push(exit);
      }
      const target = siteAreas.length === 0 ? 6 : 10;
      if (area.length >= target) {
        siteAreas.push(area);
        area = [];
      }
    }
    if (area.length > 0) siteAreas.push(area);
    areas.push(siteAreas);
    secureDoors.push(secure.length > 0 ? secure : siteAreas[siteAreas.length - 1]!.slice(0, 2));
  }

  // Groups: each belongs to a site; at several sites, a few are campus-wide.
  const groups: Record<string, unknown>[] = [];
  const groupKind: GroupKind[] = [];
  const groupSites: number[][] = [];
  // The last groups are "offices": one door per rule, enough of them for a holder with ~50 rules.
  const officeGroups = Math.ceil(50 / Math.floor(spec.rules / spec.groups));
  for (let g = 0; g < spec.groups; g++) {
    const kind = g >= spec.groups - officeGroups ? "office" : GROUP_KINDS[rng.weighted(GROUP_KIND_WEIGHTS)]!;
    const home = g % siteCount;
    const wide = siteCount > 1 && rng.chance(0.05);
    const gSites = wide ? [home, (home + 1 + rng.int(0, siteCount - 2)) % siteCount] : [home];
    groups.push({ id: `grp-${pad(g + 1, 4)}`, name: `${kind} ${g + 1}` });
    groupKind.push(kind);
    groupSites.push(gSites);
    for (const s of gSites) sites[s]!.groups.push(g);
  }

  // Rules: spread over groups, built from the group's sites' areas by kind.
  const rules: Record<string, unknown>[] = [];
  const rulesOfGroup: number[][] = groups.map(() => []);
  const perGroup = Math.floor(spec.rules / spec.groups);
  const extra = spec.rules % spec.groups;
  const doorsFor = (gSites: number[], areaCount: number, withPerimeter: boolean): string[] => {
    const out = new Set<string>();
    for (const s of gSites) {
      const siteAreas = areas[s]!;
      if (withPerimeter) for (const d of siteAreas[0]!) out.add(d);
      for (const a of rng.sample(siteAreas.slice(1), areaCount)) for (const d of a) out.add(d);
    }
    return [...out];
  };
  const dateBounds = (): { startDate: string; endDate: string } => {
    const m = rng.int(1, 10);
    return {
      startDate: `2026-${pad(m, 2)}-${pad(rng.int(1, 28), 2)}`,
      endDate: `2026-${pad(m + rng.int(1, 2), 2)}-${pad(rng.int(1, 28), 2)}`,
    };
  };
  let ruleNo = 0;
  for (let g = 0; g < spec.groups; g++) {
    const count = perGroup + (g < extra ? 1 : 0);
    const kind = groupKind[g]!;
    const gSites = groupSites[g]!;
    for (let k = 0; k < count; k++) {
      ruleNo++;
      const id = `rule-${pad(ruleNo, 5)}`;
      let win: WindowDef;
      let allow = true;
      let policy: string | null = null;
      let doors: string[] | null = null;
      let dates: { startDate: string; endDate: string } | null = null;
      const elevator = k % 6 === 3 && kind !== "office";
      switch (kind) {
        case "staff":
          win = k === 0 ? rng.pick(DAY_SHIFTS) : rng.pick([rng.pick(DAY_SHIFTS), EXTENDED, WEEKENDS, EARLY, EVENING]);
          break;
        case "night":
          win = k % 2 === 0 ? rng.pick(NIGHTS) : rng.pick(DAY_SHIFTS);
          break;
        case "security":
          win = k % 3 === 2 ? EXTENDED : ALWAYS;
          break;
        case "contractor":
          win = rng.pick(DAY_SHIFTS);
          if (k === 1) {
            allow = false; // never in the secure rooms
            win = ALWAYS;
            doors = gSites.flatMap((s) => secureDoors[s]!);
          } else if (k % 2 === 0) dates = dateBounds();
          break;
        case "visitor":
          win = VISITING;
          policy = "cardOnly";
          break;
        case "office":
          win = rng.pick(DAY_SHIFTS);
          doors = [rng.pick(areas[gSites[0]!]!.slice(1).flat())];
          break;
        case "secure":
          win = k % 2 === 0 ? ALWAYS : rng.pick(DAY_SHIFTS);
          if (k === 0) {
            policy = "cardAndPin";
            doors = gSites.flatMap((s) => secureDoors[s]!);
          }
          break;
      }
      if (allow && policy === null && rng.chance(0.03))
        policy = rng.pick(["cardAndPin", "cardOnly", "pinOnly", "cardOrPin"]);
      if (allow && kind !== "contractor" && rng.chance(0.03)) {
        // An occasional deny rule: an area closed at night or for a refurbishment.
        allow = false;
        win = rng.chance(0.5) ? W("20:00:00", "06:00:00", EVERY_DAY) : win;
      }
      if (dates === null && rng.chance(0.05)) dates = dateBounds();
      const rule: Record<string, unknown> = {
        id,
        name: `${kind} ${g + 1} rule ${k + 1}`,
        groupId: `grp-${pad(g + 1, 4)}`,
        ...win,
        allow,
        authenticationPolicy: policy,
        enabled: !rng.chance(0.02),
        startDate: dates?.startDate ?? null,
        endDate: dates?.endDate ?? null,
      };
      if (elevator && allow) {
        rule.type = "elevator";
        const fgs: string[] = [];
        for (const s of gSites) {
          const bank = rng.pick(floorGroupsByBank[s]!);
          for (const fg of rng.sample(bank, rng.int(1, bank.length))) fgs.push(fg);
        }
        rule.floorGroups = fgs;
      } else {
        rule.type = "door";
        rule.devices = doors ?? doorsFor(gSites, k === 0 ? rng.int(1, 2) : rng.int(1, 3), k === 0 || rng.chance(0.3));
      }
      rules.push(rule);
      rulesOfGroup[g]!.push(rules.length - 1);
    }
  }

  // Which devices each group's enabled rules reach (doors, and the readers of floor groups).
  const fgReader = new Map(floorGroups.map((fg) => [fg.id as string, fg.readerPort as string]));
  const groupDoors: string[][] = [];
  const groupReaders: string[][] = [];
  for (const rs of rulesOfGroup) {
    const doors = new Set<string>();
    const readers = new Set<string>();
    for (const i of rs) {
      const r = rules[i]!;
      if (r.enabled === false || r.allow === false) continue;
      for (const d of (r.devices as string[] | undefined) ?? []) doors.add(d);
      for (const fg of (r.floorGroups as string[] | undefined) ?? []) readers.add(fgReader.get(fg)!);
    }
    groupDoors.push([...doors]);
    groupReaders.push([...readers]);
  }
  const enabledRuleCount = rulesOfGroup.map((rs) => rs.filter((i) => rules[i]!.enabled !== false).length);

  // Holders.
  const holders: Record<string, unknown>[] = [];
  const holderMeta: HolderMeta[] = [];
  const usedNumbers = new Set<number>();
  for (const n of cloudNodes) for (const e of n.ecards as number[]) usedNumbers.add(e);
  const numberSpan = spec.holders <= 20_000 ? 60_000 : 1_000_000;
  const freshNumber = (): number => {
    for (;;) {
      const n = rng.int(1_000, numberSpan);
      if (!usedNumbers.has(n)) {
        usedNumbers.add(n);
        return n;
      }
    }
  };
  const digits = (k: number) => Array.from({ length: k }, () => String(rng.int(0, 9))).join("");
  const stamp = (m: number, d: number, h: number) => `2026-${pad(m, 2)}-${pad(d, 2)}T${pad(h, 2)}:00:00`;
  const siteWeights = sites.map((s) => s.doors.length);
  for (let i = 0; i < spec.holders; i++) {
    const id = `holder-${pad(i + 1, 6)}`;
    const site = rng.weighted(siteWeights);
    const local = sites[site]!.groups;
    const count = [1, 1, 1, 1, 1, 2, 2, 2, 3, 4][rng.int(0, 9)]!;
    let gs: number[];
    if (i === 1) gs = Array.from({ length: officeGroups }, (_, j) => spec.groups - officeGroups + j);
    else if (i === 0) {
      // The RSOP holder: groups of its site until about 50 enabled rules.
      gs = [];
      let total = 0;
      for (const g of local) {
        if (total + enabledRuleCount[g]! > 52) continue;
        gs.push(g);
        total += enabledRuleCount[g]!;
        if (total >= 48) break;
      }
    } else gs = rng.sample(local, count);
    const kinds = gs.map((g) => groupKind[g]!);
    const visitor = kinds.includes("visitor");
    const contractor = kinds.includes("contractor");
    const secure = kinds.includes("secure");
    const cards: CardMeta[] = [];
    const credentials: Record<string, unknown>[] = [];
    const fc = sites[site]!.facilityCode;
    if (i <= 1 || rng.chance(0.97)) {
      const number = freshNumber();
      cards.push({ number, facilityCode: fc });
      credentials.push({
        id: `cred-${pad(i + 1, 6)}-1`,
        credentialNumber: number,
        facilityCode: fc,
        types: ["card"],
        description: "HID ProxCard II",
      });
      if (rng.chance(0.03)) {
        const second = freshNumber();
        cards.push({ number: second, facilityCode: fc });
        credentials.push({
          id: `cred-${pad(i + 1, 6)}-2`,
          credentialNumber: second,
          facilityCode: fc,
          types: ["card"],
          description: "HID ProxKey III fob",
        });
      }
    }
    let mobile: HolderMeta["mobile"] = null;
    if (!visitor && rng.chance(0.2)) {
      const types = rng.pick([["touch", "token"], ["touch", "token"], ["token"], ["touch"]]);
      const pending = rng.chance(0.05);
      const mid = `cred-${pad(i + 1, 6)}-m`;
      mobile = { id: mid, types, pending };
      credentials.push({
        id: mid,
        credentialNumber: pending ? null : freshNumber(),
        facilityCode: null,
        types,
        description: pending ? "Pending" : "Phone",
      });
    }
    let pin: string | null = null;
    let duressPin: string | null = null;
    if (!visitor && rng.chance(secure ? 0.95 : 0.4)) {
      pin = digits(rng.pick([4, 4, 5, 6]));
      if (rng.chance(0.15)) {
        do duressPin = digits(pin.length);
        while (duressPin === pin);
      }
    }
    let activeDate: string | null = null;
    let expireDate: string | null = null;
    if (visitor) {
      const m = rng.int(1, 11);
      const d = rng.int(1, 25);
      activeDate = stamp(m, d, 8);
      expireDate = stamp(m, d + rng.int(1, 3), 20);
    } else if (contractor) {
      activeDate = stamp(rng.int(1, 4), rng.int(1, 28), 7);
      expireDate = stamp(rng.int(7, 12), rng.int(1, 28), 0);
    } else if (rng.chance(0.03)) activeDate = stamp(rng.int(3, 11), 1, 7);
    // biome-ignore lint/suspicious/noDuplicateElseIf: each call draws a new random number
    else if (rng.chance(0.03)) expireDate = stamp(rng.int(1, 11), rng.int(1, 28), 0);
    const enabled = i <= 1 || !rng.chance(0.02);
    const first = rng.pick(FIRST);
    const last = rng.pick(LAST);
    holders.push({
      id,
      firstName: first,
      lastName: last,
      email: `${first}.${last}.${i + 1}@example.org`.toLowerCase().replace(/[^a-z0-9.@]/g, ""),
      enabled,
      activeDate,
      expireDate,
      pin,
      duressPin,
      groups: gs.map((g) => `grp-${pad(g + 1, 4)}`),
      credentials,
    });
    holderMeta.push({
      id,
      index: i,
      site,
      groups: gs.map((g) => `grp-${pad(g + 1, 4)}`),
      groupIndexes: gs,
      enabled,
      from: localMsOf(activeDate, -FAR),
      to: localMsOf(expireDate, FAR),
      pin,
      duressPin,
      cards,
      mobile,
    });
  }

  const snapshot = {
    format: "rsop-system/1",
    systemId: `bench-${spec.name}`,
    timezone: spec.zones[0]!,
    partitions: [{ id: "part-main", name: "Main", users: [], default: true }],
    groups,
    holders,
    cloudNodes,
    connections,
    devices,
    floorGroups,
    rules,
  } as unknown as SystemSnapshotInput;
  return {
    snapshot,
    meta: {
      size: spec,
      sites,
      devices: deviceMeta,
      holders: holderMeta,
      groupDoors,
      groupReaders,
      usedNumbers,
      rsopHolderId: holderMeta[0]!.id,
      rsopNarrowHolderId: holderMeta[1]!.id,
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Requests

export type RequestKind = "cardNumber" | "wiegand26" | "wiegand35" | "cardPin" | "mobile" | "elevator" | "unknownCard";

/** The request mix: share of each kind. */
export const REQUEST_MIX: Readonly<Record<RequestKind, number>> = {
  cardNumber: 36,
  wiegand26: 17,
  wiegand35: 3,
  cardPin: 10,
  mobile: 10,
  elevator: 12,
  unknownCard: 12,
};

/**
 * The access question as the peers see it: who (null when the credential cannot be tied to a
 * holder), where, the local wall time at the device's site, the presented factor, and the subject's
 * and resource's attributes. Built outside any measured function.
 */
export interface PeerInput {
  readonly holderId: string | null;
  readonly deviceId: string;
  /** Local weekday (0 = Sunday) and the previous one; local ms of the day; local day numbers. */
  readonly wd: number;
  readonly pwd: number;
  readonly tod: number;
  readonly day: number;
  readonly pday: number;
  /** Local wall time as "local epoch" ms, and as strings for the naive baseline. */
  readonly local: number;
  readonly clock: string;
  readonly date: string;
  readonly prevDate: string;
  /** 1 card, 2 PIN, 4 card + PIN (SPEC §6 factor combinations). */
  readonly factor: number;
  /** Holder attributes: enabled and local validity bounds. */
  readonly enabled: boolean;
  readonly from: number;
  readonly to: number;
  /** Device attribute: accepted factor combinations (bit mask). */
  readonly deviceAccepts: number;
}

export interface RequestSet {
  /** Requests as parsed JSON, the way a caller hands them to decide. */
  readonly requests: unknown[];
  readonly kinds: RequestKind[];
  readonly peer: PeerInput[];
}

function isoWithOffset(at: number, offsetMs: number): string {
  const local = new Date(at + offsetMs).toISOString().slice(0, 23);
  const sign = offsetMs < 0 ? "-" : "+";
  const m = Math.abs(offsetMs) / MINUTE;
  return `${local}${sign}${pad(Math.floor(m / 60), 2)}:${pad(m % 60, 2)}`;
}

/**
 * `count` requests for a building: card numbers, raw 26-bit (and, for numbers beyond 16 bits, 35-bit)
 * Wiegand frames, card + PIN (mostly right, some wrong, some duress), mobile touch/token, cards at
 * elevator readers, and unknown cards; mostly by holders at devices their rules reach, some at other
 * doors of their site or anywhere. Instants over 2026, weighted to working hours, a tenth within four
 * hours of the site's DST transitions; `at` as ISO with the site's offset, ISO Z, or epoch ms.
 */
export function generateRequests(meta: BuildingMeta, count: number, seed = 0x5eed_0007): RequestSet {
  const rng = new Rng(seed ^ meta.size.holders);
  const kinds = Object.keys(REQUEST_MIX) as RequestKind[];
  const weights = kinds.map((k) => REQUEST_MIX[k]);
  const transitions = new Map(meta.sites.map((s) => [s.zone, transitions2026(s.zone)]));
  const withCards = meta.holders.filter((h) => h.cards.length > 0);
  const small = withCards.filter((h) => h.cards.some((c) => c.number < 65_536));
  const large = withCards.filter((h) => h.cards.some((c) => c.number >= 65_536));
  const withPin = withCards.filter((h) => h.pin !== null);
  const withMobile = meta.holders.filter((h) => h.mobile !== null);
  const doorSet = new Set(meta.sites.flatMap((s) => s.doors));
  const doorsAndReaders = [...meta.devices.values()].filter((d) => doorSet.has(d.id) || d.elevator);
  const requests: Record<string, unknown>[] = [];
  const kindsOut: RequestKind[] = [];
  const peer: PeerInput[] = [];

  // Mostly a door (or lift) one of the holder's groups opens; some other door of their site; a few anywhere.
  const pickDevice = (h: HolderMeta, elevator: boolean): DeviceMeta => {
    const site = meta.sites[h.site]!;
    const g = rng.pick(h.groupIndexes);
    if (elevator) {
      const reached = meta.groupReaders[g]!;
      return meta.devices.get(reached.length > 0 && rng.chance(0.9) ? rng.pick(reached) : rng.pick(site.readers))!;
    }
    const x = rng.next();
    const reached = meta.groupDoors[g]!;
    if (x < 0.85 && reached.length > 0) return meta.devices.get(rng.pick(reached))!;
    if (x < 0.95) return meta.devices.get(rng.pick(site.doors))!;
    return rng.pick(doorsAndReaders);
  };
  // Working hours mostly; a tenth within four hours of a DST transition; a holder with validity dates
  // mostly scans while valid.
  const pickInstant = (zone: string, h: HolderMeta | null): number => {
    if (rng.chance(0.1)) {
      const ts = transitions.get(zone)!;
      if (ts.length > 0) return rng.pick(ts) + rng.int(-4 * HOUR, 4 * HOUR);
    }
    let firstDay = 0;
    let lastDay = 364;
    if (h !== null && (h.from > -FAR || h.to < FAR) && rng.chance(0.85)) {
      firstDay = Math.max(0, Math.floor((Math.max(h.from, YEAR_START) - YEAR_START) / DAY));
      lastDay = Math.min(364, Math.floor((Math.min(h.to, YEAR_END - 1) - YEAR_START) / DAY));
      if (lastDay < firstDay) lastDay = firstDay;
    }
    let day = rng.int(firstDay, lastDay);
    // Weekends are quieter: most weekend draws move to a weekday.
    const wd = (((Math.floor(YEAR_START / DAY) + day + 4) % 7) + 7) % 7;
    if ((wd === 0 || wd === 6) && lastDay - firstDay > 7 && rng.chance(0.6))
      day = Math.min(lastDay, day + (wd === 6 ? 2 : 1));
    const tod = rng.chance(0.8) ? rng.int(6 * HOUR, 20 * HOUR) : rng.int(0, DAY - 1);
    return localToInstant(zone, YEAR_START + day * DAY + tod);
  };

  for (let i = 0; i < count; i++) {
    let kind = kinds[rng.weighted(weights)]!;
    if (kind === "wiegand35" && large.length === 0) kind = "wiegand26";
    let holder: HolderMeta | null;
    switch (kind) {
      case "wiegand26":
        holder = rng.pick(small);
        break;
      case "wiegand35":
        holder = rng.pick(large);
        break;
      case "cardPin":
        holder = rng.pick(withPin);
        break;
      case "mobile":
        holder = withMobile.length > 0 ? rng.pick(withMobile) : rng.pick(withCards);
        if (holder.mobile === null) kind = "cardNumber";
        break;
      case "unknownCard":
        holder = null;
        break;
      default:
        holder = rng.pick(withCards);
    }
    const device = holder === null ? rng.pick(doorsAndReaders) : pickDevice(holder, kind === "elevator");
    const zone = device.zone;
    const at = pickInstant(zone, holder);
    const offset = zoneOffsetMs(zone, at);
    const atForm = rng.weighted([4, 4, 2]);
    const atValue = atForm === 0 ? isoWithOffset(at, offset) : atForm === 1 ? new Date(at).toISOString() : at;

    const req: Record<string, unknown> = { deviceId: device.id, at: atValue };
    let resolved: HolderMeta | null = holder; // what the reader ties the credential to
    let factor = 1;
    const site = meta.sites[device.site]!;
    if (kind === "unknownCard") {
      let n: number;
      do n = rng.int(1_000, 65_535);
      while (meta.usedNumbers.has(n));
      if (rng.chance(0.5)) req.credential = { credentialNumber: n, facilityCode: site.facilityCode };
      else req.credential = { wiegand: encodeWiegand("H10301", { facilityCode: site.facilityCode, cardNumber: n }) };
    } else if (kind === "mobile") {
      const m = holder!.mobile!;
      // Phones tap (BLE) where the reader supports it, else use the token; a few try to tap anyway.
      const mode =
        m.types.includes("touch") && (m.types.length === 1 || device.ble || rng.chance(0.1)) ? "touch" : "token";
      req.credential = { mobile: mode, credentialId: m.id };
      if (m.pending || (mode === "touch" && !device.ble)) resolved = null; // pending, or a BLE tap at a reader without BLE
    } else {
      const h = holder!;
      const cards =
        kind === "wiegand26"
          ? h.cards.filter((c) => c.number < 65_536)
          : kind === "wiegand35"
            ? h.cards.filter((c) => c.number >= 65_536)
            : h.cards;
      const card = rng.pick(cards);
      // A card from another site's badge printer: the facility code does not match (ENFORCED).
      const wrongFc = rng.chance(0.02);
      const fc = wrongFc ? (card.facilityCode + 1) % 256 : card.facilityCode;
      if (wrongFc) resolved = null;
      if (kind === "wiegand26")
        req.credential = { wiegand: encodeWiegand("H10301", { facilityCode: fc, cardNumber: card.number }) };
      else if (kind === "wiegand35")
        req.credential = { wiegand: encodeWiegand("C1k35s", { facilityCode: fc, cardNumber: card.number }) };
      else req.credential = { credentialNumber: card.number, facilityCode: fc };
      if (kind === "cardPin") {
        const x = rng.next();
        const pin =
          x < 0.85
            ? h.pin!
            : x < 0.92 && h.duressPin !== null
              ? h.duressPin
              : String((Number(h.pin) + 1) % 10 ** h.pin!.length).padStart(h.pin!.length, "0");
        req.pin = pin;
        if (pin === h.pin || pin === h.duressPin) factor = 4;
      }
    }
    requests.push(req);
    kindsOut.push(kind);

    const local = at + offset;
    const day = Math.floor(local / DAY);
    const wd = (((day + 4) % 7) + 7) % 7;
    const localIso = new Date(local).toISOString();
    peer.push({
      holderId: resolved === null ? null : resolved.id,
      deviceId: device.id,
      wd,
      pwd: (wd + 6) % 7,
      tod: local - day * DAY,
      day,
      pday: day - 1,
      local,
      clock: localIso.slice(11, 23),
      date: localIso.slice(0, 10),
      prevDate: new Date(local - DAY).toISOString().slice(0, 10),
      factor,
      enabled: resolved === null ? false : resolved.enabled,
      from: resolved === null ? 0 : resolved.from,
      to: resolved === null ? 0 : resolved.to,
      deviceAccepts: device.accepts,
    });
  }
  // Requests reach decide as parsed JSON (fresh strings, no shared identity with the snapshot).
  return { requests: JSON.parse(JSON.stringify(requests)) as unknown[], kinds: kindsOut, peer };
}

// ---------------------------------------------------------------------------------------------------
// Loaded fixtures (memoized per process)

export interface Fixture {
  readonly spec: SizeSpec;
  readonly meta: BuildingMeta;
  /** The snapshot as JSON text (what a user's file holds). */
  readonly json: string;
  readonly engine: Engine;
  /** The request pool (generated on first use). */
  readonly set: RequestSet;
  /** Milliseconds spent on validation (parseSnapshot) and on the first compile (createEngine) in this process. */
  readonly parseMs: number;
  readonly compileMs: number;
  /**
   * Retained heap (bytes after full GCs, when the process runs with --expose-gc): of the validated
   * snapshot once the raw JSON objects are dropped, and of the compiled engine on top of it.
   */
  readonly heap: { readonly snapshotBytes: number; readonly indexBytes: number } | null;
}

const fixtures = new Map<SizeName, Fixture>();

type Gc = (options?: { type?: "major" | "minor"; execution?: "sync" | "async" }) => void;
/** The `gc` global of `node --expose-gc`, or null. */
export function exposedGc(): Gc | null {
  const g = (globalThis as { gc?: Gc }).gc;
  return typeof g === "function" ? g : null;
}

/**
 * Used heap after enough full GCs that V8 has also flushed the bytecode of functions no longer run
 * (it ages code on every full GC): with only two, the validator's and the generator's bytecode was
 * freed during the next reading and made the compiled indexes look negative at size S. Repeated until
 * two readings agree within 1 MiB.
 */
function settledHeap(gc: Gc): number {
  let last = Number.POSITIVE_INFINITY;
  // Until two readings agree: right after parseSnapshot at L, the first round of GCs usually still
  // counted the parsed input (98 MB) and the next one did not (why, we did not find out).
  for (let round = 0; round < 6; round++) {
    for (let i = 0; i < 8; i++) gc();
    const used = process.memoryUsage().heapUsed;
    if (Math.abs(used - last) < 1 << 20) return used;
    last = used;
  }
  return last;
}

/** A size's building as JSON text and its metadata; the generator's object graph dies with the frame. */
function generateText(spec: SizeSpec): { meta: Building["meta"]; json: string } {
  const building = generateBuilding(spec);
  const json = JSON.stringify(building.snapshot);
  return { meta: building.meta, json };
}

/**
 * JSON.parse and parseSnapshot of a size's text, in a frame of their own: only the validated snapshot
 * outlives the call (done inline, the parsed input could stay reachable from the caller's frame).
 */
function validate(size: SizeName, json: string): { snapshot: SystemSnapshot; parseMs: number } {
  const input: unknown = JSON.parse(json);
  const t0 = performance.now();
  const parsed = parseSnapshot(input);
  const t1 = performance.now();
  if (!parsed.ok)
    throw new Error(
      `generated ${size} building is invalid: ${parsed.issues
        .slice(0, 5)
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
    );
  return { snapshot: parsed.value, parseMs: t1 - t0 };
}

/**
 * Generates, validates and compiles a size once per process. Only the JSON text, the compiled engine
 * and the generator's metadata are kept (the generator's own object graph is dropped), so that the
 * heap holds what a process serving that snapshot would, plus the request pool once it is used.
 */
export function fixture(size: SizeName): Fixture {
  const hit = fixtures.get(size);
  if (hit !== undefined) return hit;
  const spec = SIZES[size];
  const { meta, json } = generateText(spec);
  const gc = exposedGc();
  const h0 = gc === null ? 0 : settledHeap(gc);
  const { snapshot, parseMs } = validate(size, json);
  const h1 = gc === null ? 0 : settledHeap(gc);
  const t2 = performance.now();
  const engine = createEngine(snapshot);
  const t3 = performance.now();
  const h2 = gc === null ? 0 : settledHeap(gc);
  // The indexes are measured on a second engine of the same snapshot: the first one's reading also
  // holds one-time costs (zone tables, optimized code) and whatever V8 freed meanwhile (the
  // generator's and validator's code), which made small sizes read negative.
  let second: Engine | null = gc === null ? null : createEngine(snapshot);
  const h3 = gc === null ? 0 : settledHeap(gc);
  if (second !== null && second.snapshot !== snapshot) throw new Error("unreachable");
  second = null;
  let set: RequestSet | null = null;
  const f: Fixture = {
    spec,
    meta,
    json,
    engine,
    get set() {
      set ??= generateRequests(meta, spec.requests);
      return set;
    },
    parseMs,
    compileMs: t3 - t2,
    heap: gc === null ? null : { snapshotBytes: h1 - h0, indexBytes: h3 - h2 },
  };
  fixtures.set(size, f);
  return f;
}
