// Holder reports (the 2.0 systems API "Holder report record" and routes) and 1.0 people reports (the 1.0 panel API):
// which holders a checked body selects (every filter must hold), in report order, and their records.
import { buildZoneTable, localCandidates, offsetAt } from "../compile/index.js";
import type { Holder, Issue, SystemSnapshot } from "../model/index.js";
import { parseLocalDateTime } from "../model/index.js";
import type { PanelEngine } from "../legacy1/panelEngine.js";
import {
  type ReportFilter,
  type ReportFlavour,
  type ReportQuery,
  type TemplateLookup,
  parseReportBody,
} from "./reportBody.js";

/** One report record: the chosen properties, in `output` order. */
export type ReportRecord = Record<string, unknown>;

/**
 * A preview holds at most 50 records.
 * @example
 * holderReport(snapshot, {}, { limit: PREVIEW_LIMIT }); // a preview
 */
export const PREVIEW_LIMIT = 50;

/** Options of holderReport and peopleReport. */
export interface HolderReportOptions {
  /** At most this many records (a preview: PREVIEW_LIMIT). */
  readonly limit?: number;
  /** Resolves a body's `reportId` (a template) to the body it stands for. */
  readonly templates?: TemplateLookup;
}

/** JavaScript's default string order (UTF-16 code units), as everywhere in the engine (E19). */
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Report order: `lastName`, then `firstName`, then `id` — 2.0 ids in string order, 1.0
 * ids as numbers (docs/semantics.md RP3).
 */
export function compareHolders(flavour: ReportFlavour): (a: Holder, b: Holder) => number {
  const byId =
    flavour === "people"
      ? (a: Holder, b: Holder) => Number(a.id) - Number(b.id)
      : (a: Holder, b: Holder) => cmp(a.id, b.id);
  return (a, b) => cmp(a.lastName, b.lastName) || cmp(a.firstName, b.firstName) || byId(a, b);
}

/**
 * The test of one checked filter, prepared once per report (RP15): operands lower-cased once, id
 * lists as sets, so a holder costs each filter one comparison or a lookup per group it is in, whatever
 * the lists' lengths. `partitionOf` is a holder's effective partition (none: the default one).
 */
function filterTest(f: ReportFilter, partitionOf: (h: Holder) => string | null): (h: Holder) => boolean {
  switch (f.type) {
    case "firstName":
    case "lastName":
    case "email": {
      const key = f.type;
      const operand = f.caseSensitive ? f.operand : f.operand.toLowerCase();
      const textOf = f.caseSensitive ? (h: Holder) => h[key] ?? "" : (h: Holder) => (h[key] ?? "").toLowerCase();
      switch (f.operator) {
        case "equals":
          return (h) => textOf(h) === operand;
        case "does not equal":
          return (h) => textOf(h) !== operand;
        case "contains":
          return (h) => textOf(h).includes(operand);
        case "does not contain":
          return (h) => !textOf(h).includes(operand);
      }
      return () => false;
    }
    case "enabled":
      return (h) => h.enabled === f.value;
    case "groups": {
      const member = f.memberOf === null ? null : new Set(f.memberOf);
      const notMember = f.notMemberOf === null ? null : new Set(f.notMemberOf);
      return (h) =>
        (member === null || h.groups.some((g) => member.has(g))) &&
        (notMember === null || !h.groups.some((g) => notMember.has(g)));
    }
    case "partition": {
      const member = f.memberOf === null ? null : new Set(f.memberOf);
      const notMember = f.notMemberOf === null ? null : new Set(f.notMemberOf);
      return (h) => {
        const p = partitionOf(h);
        return (
          (member === null || (p !== null && member.has(p))) && (notMember === null || p === null || !notMember.has(p))
        );
      };
    }
    case "credentials":
      return (h) => {
        if (f.cardNumber !== null) {
          const n = f.cardNumber.operand;
          const has = h.credentials.some((c) => c.types.includes("card") && c.credentialNumber === n);
          if (has !== (f.cardNumber.operator === "equals")) return false;
        }
        if (f.mobile !== null) {
          const { type, status } = f.mobile;
          const has = h.credentials.some(
            (c) =>
              !c.types.includes("card") &&
              c.types.includes(type) &&
              (c.credentialNumber !== null) === (status === "accepted"),
          );
          if (!has) return false;
        }
        return true;
      };
  }
}

/** The effective partition of a holder: its own, else the system's default partition (H18), else null. */
export function partitionResolver(snapshot: SystemSnapshot): (h: Holder) => string | null {
  const dflt = snapshot.partitions.find((p) => p.default === true)?.id ?? null;
  return (h) => h.partition ?? dflt;
}

/** A test of whether a holder passes a checked query's partition and every filter. */
export function queryTest(snapshot: SystemSnapshot, query: ReportQuery): (h: Holder) => boolean {
  const partitionOf = partitionResolver(snapshot);
  const tests = query.filters.map((f) => filterTest(f, partitionOf));
  return (h) => (query.partition === null || partitionOf(h) === query.partition) && tests.every((t) => t(h));
}

/**
 * The holders a checked query selects, in report order; with a small `limit` (a preview) only the
 * first `limit` of that order, kept by insertion into a sorted list of at most `limit` holders, so a
 * preview never sorts every holder.
 */
export function selectHolders(
  snapshot: SystemSnapshot,
  query: ReportQuery,
  flavour: ReportFlavour,
  limit = Infinity,
): Holder[] {
  const passes = queryTest(snapshot, query);
  const order = compareHolders(flavour);
  if (limit > PREVIEW_LIMIT) return snapshot.holders.filter(passes).sort(order);
  if (limit <= 0) return [];
  const best: Holder[] = [];
  for (const h of snapshot.holders) {
    if (best.length === limit && order(h, best[best.length - 1]!) >= 0) continue;
    if (!passes(h)) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (order(best[mid]!, h) <= 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, h);
    if (best.length > limit) best.pop();
  }
  return best;
}

/** Counts of a holder's digital credentials: touch (Bluetooth) and token (mobile app), active and pending. */
function digitalCounts(h: Holder): { touch: number; touchPending: number; token: number; tokenPending: number } {
  const n = { touch: 0, touchPending: 0, token: 0, tokenPending: 0 };
  for (const c of h.credentials) {
    if (c.types.includes("card")) continue;
    const pending = c.credentialNumber === null;
    if (c.types.includes("touch")) pending ? n.touchPending++ : n.touch++;
    if (c.types.includes("token")) pending ? n.tokenPending++ : n.token++;
  }
  return n;
}

/** `YYYY-MM-DDTHH:mm:ss` (a local wall time) as ISO 8601 with the zone's offset then (RP6). */
function withOffset(local: string | null, zone: string): string | null {
  if (local === null) return null;
  const wall = parseLocalDateTime(local);
  const table = buildZoneTable(zone);
  const candidates: number[] = [];
  localCandidates(table, wall, candidates);
  // The earliest instant that shows this wall time (the first of a repeated hour); in a skipped hour,
  // the offset in effect before the jump.
  const exact = candidates.filter((t) => t + offsetAt(table, t) === wall).sort((a, b) => a - b);
  const offset = exact.length > 0 ? offsetAt(table, exact[0]!) : offsetAt(table, wall - 86_400_000);
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.round(Math.abs(offset) / 1000);
  const pad = (x: number) => String(x).padStart(2, "0");
  const s = abs % 60;
  return `${local}${sign}${pad(Math.floor(abs / 3600))}:${pad(Math.floor(abs / 60) % 60)}${s === 0 ? "" : `:${pad(s)}`}`;
}

/**
 * A function that turns a selected holder into its record of the flavour, with the `output`
 * properties in that order (default every property, in the API's order): 2.0 camelCase keys and
 * `YYYY-MM-DD HH:mm:ss`; 1.0 display-name keys, integer ids and ISO 8601 with the node's offset.
 * Only the asked properties are computed, and the record is the one object made per holder.
 */
export function recordMaker(
  snapshot: SystemSnapshot,
  flavour: ReportFlavour,
  output?: readonly string[],
): (h: Holder) => ReportRecord {
  const groupNames = new Map(snapshot.groups.map((g) => [g.id, g.name]));
  const partitionNames = new Map(snapshot.partitions.map((p) => [p.id, p.name]));
  const partitionOf = partitionResolver(snapshot);
  const cards = (h: Holder) => {
    let out = "";
    for (const c of h.credentials)
      if (c.types.includes("card")) out += out === "" ? String(c.credentialNumber) : `, ${String(c.credentialNumber)}`;
    return out;
  };
  const groups = (h: Holder) => h.groups.map((g) => groupNames.get(g) ?? g).join(", ");
  const partition = (h: Holder) => {
    const p = partitionOf(h);
    return p === null ? null : (partitionNames.get(p) ?? null);
  };
  // The four count properties of one holder read one count of its credentials.
  let counted: Holder | null = null;
  let n = { touch: 0, touchPending: 0, token: 0, tokenPending: 0 };
  const counts = (h: Holder) => {
    if (counted !== h) {
      n = digitalCounts(h);
      counted = h;
    }
    return n;
  };
  const customFields = (h: Holder) => JSON.stringify(h.customFields ?? {});
  let fields: Readonly<Record<string, (h: Holder) => unknown>>;
  if (flavour === "holders") {
    const date = (d: string | null) => (d === null ? null : d.replace("T", " "));
    fields = {
      id: (h) => h.id,
      firstName: (h) => h.firstName,
      lastName: (h) => h.lastName,
      email: (h) => h.email ?? null,
      partition,
      cards,
      groups,
      pin: (h) => h.pin,
      duressPin: (h) => h.duressPin,
      enabled: (h) => h.enabled,
      activeDate: (h) => date(h.activeDate),
      expireDate: (h) => date(h.expireDate),
      bluetooth: (h) => counts(h).touch,
      pendingBluetooth: (h) => counts(h).touchPending,
      mobileApp: (h) => counts(h).token,
      pendingMobileApp: (h) => counts(h).tokenPending,
      customFields,
    };
  } else {
    const zone = snapshot.cloudNodes[0]?.timezone ?? snapshot.timezone;
    fields = {
      id: (h) => Number(h.id),
      "First Name": (h) => h.firstName,
      "Last Name": (h) => h.lastName,
      Cards: cards,
      Groups: groups,
      Email: (h) => h.email ?? null,
      Enabled: (h) => h.enabled,
      Pin: (h) => h.pin,
      "Duress Pin": (h) => h.duressPin,
      Partition: partition,
      "Active Date": (h) => withOffset(h.activeDate, zone),
      "Expire Date": (h) => withOffset(h.expireDate, zone),
      "Mobile App": (h) => counts(h).token,
      "Pending Mobile App": (h) => counts(h).tokenPending,
      Bluetooth: (h) => counts(h).touch,
      "Pending Bluetooth": (h) => counts(h).touchPending,
      "Custom Fields": customFields,
    };
  }
  const keys = output ?? Object.keys(fields);
  const getters = keys.map((k) => fields[k]!);
  return (h) => {
    const out: ReportRecord = {};
    for (let i = 0; i < keys.length; i++) out[keys[i]!] = getters[i]!(h);
    return out;
  };
}

/** The records of a checked query, in report order (at most `limit`). */
export function reportRecords(
  snapshot: SystemSnapshot,
  query: ReportQuery,
  flavour: ReportFlavour,
  limit = Infinity,
): ReportRecord[] {
  const make = recordMaker(snapshot, flavour, query.output);
  return selectHolders(snapshot, query, flavour, limit).slice(0, limit).map(make);
}

/**
 * The holder report of a 2.0 snapshot: the records of every holder that passes all of the
 * body's filters, in report order (`lastName`, `firstName`, `id`).
 * @param snapshot - a validated snapshot (`engine.snapshot`, `live.snapshot`).
 * @param body - the report body of the holder report routes: `partition`, `filters`, `output` (or `reportId`).
 * @returns the records, or every problem of the body with its path.
 * @example
 * holderReport(engine.snapshot, { filters: [{ type: "lastName", operator: "equals", operand: "Lee" }], output: ["id", "cards"] });
 * //=> { ok: true, value: [{ id: "h-ann", cards: "10000, 10050" }] }
 */
export function holderReport(
  snapshot: SystemSnapshot,
  body: unknown,
  options: HolderReportOptions = {},
): { ok: true; value: ReportRecord[] } | { ok: false; issues: Issue[] } {
  const q = parseReportBody(body, {
    snapshot,
    flavour: "holders",
    ...(options.templates ? { templates: options.templates } : {}),
  });
  if (!q.ok) return q;
  return { ok: true, value: reportRecords(snapshot, q.value, "holders", options.limit) };
}

/**
 * The people report of a 1.0 panel: display-name keys, integer ids, dates in ISO 8601 with
 * the node's offset.
 * @param panel - a loaded panel engine (`loadPanelEngine`, `panelLive.engine`).
 * @example
 * peopleReport(loadPanelEngineOrThrow(panelJson), { output: ["id", "Last Name"] });
 * //=> { ok: true, value: [{ id: 1, "Last Name": "Lee" }, { id: 2, "Last Name": "Roy" }] }
 */
export function peopleReport(
  panel: PanelEngine,
  body: unknown,
  options: HolderReportOptions = {},
): { ok: true; value: ReportRecord[] } | { ok: false; issues: Issue[] } {
  const snapshot = panel.loaded.system;
  const q = parseReportBody(body, {
    snapshot,
    flavour: "people",
    ...(options.templates ? { templates: options.templates } : {}),
  });
  if (!q.ok) return q;
  return { ok: true, value: reportRecords(snapshot, q.value, "people", options.limit) };
}
