// The migration guarantee (docs/semantics.md M3), checked on one panel and its migration: every decision and every RSOP entry
// is equal through the mapping records on every field, and where `activeRuleId` differs, the
// migrated rule maps back to a legacy rule of the same tie set — shown by giving that legacy rule
// the panel's smallest id: the panel then decides the scan (or the RSOP entry) with it, every other
// field as before (semantics M3). Used by `rsop migrate --verify` and by the migration property test.
import { DateTime } from "luxon";
import { type Engine, loadEngineOrThrow } from "../../evaluate/index.js";
import type { Decision } from "../../model/index.js";
import { type PanelDecision, type PanelEngine, loadPanelEngineOrThrow } from "../panelEngine.js";
import type { Migration } from "./migratePanel.js";

/** A difference the guarantee does not allow. */
export interface MigrationDifference {
  readonly what: "decision" | "rsop";
  readonly at: string | number;
  /** The 1.0 request (decisions) or the person and entry (RSOP). */
  readonly subject: unknown;
  /** The 1.0 answer mapped to 2.0 ids, and the migrated system's answer. */
  readonly before: unknown;
  readonly after: unknown;
}

/** What a check compared and found. */
export interface MigrationCheck {
  decisions: number;
  rsopEntries: number;
  /** Answers whose deciding rule differs and was shown to be of the same tie set. */
  ties: number;
  /** The first differences found (at most 20), and how many there were. */
  differences: MigrationDifference[];
  differenceCount: number;
}

type Json = Record<string, unknown>;

/** Structural equality of JSON-like values. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Json)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Json)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => same((a as Json)[k], (b as Json)[k]));
}

/** The panel with legacy rule `winner` renumbered to the smallest id (0; every other rule one up). */
function withSmallestId(panel: Json, winner: number): Json {
  return {
    ...panel,
    rules: ((panel.rules as Json[] | undefined) ?? []).map((r) => ({
      ...r,
      id: r.id === winner ? 0 : (r.id as number) + 1,
    })),
  };
}

/**
 * Checks the guarantee for `requests` (1.0 terms: integer device and credential ids; `at` is set
 * to each instant) and every person's RSOP, at each of `instants`.
 * @param options - `plant` changes the migrated snapshot before it is loaded (to show that a bug is
 *   caught); `onInstant` is told after each instant (for a progress bar).
 */
export function compareMigration(
  panel: unknown,
  migration: Migration,
  requests: readonly Json[],
  instants: readonly (string | number)[],
  options: { readonly plant?: (snapshot: Json) => Json; readonly onInstant?: (done: number) => void } = {},
): MigrationCheck {
  const plant = options.plant;
  const legacy = loadPanelEngineOrThrow(panel);
  const migrated: Engine = loadEngineOrThrow(
    plant === undefined ? migration.snapshot : plant(structuredClone(migration.snapshot) as Json),
  );
  const uuid = new Map(migration.mappings.map((r) => [`${r.type}:${r.legacyId}`, r.id]));
  const legacyRule = new Map(migration.mappings.filter((r) => r.type === "rule").map((r) => [r.id, r.legacyId]));
  const to2 = (type: string, id: number | null) =>
    id === null ? null : (uuid.get(`${type}:${id}`) ?? `unmapped ${type}:${id}`);
  const out: MigrationCheck = { decisions: 0, rsopEntries: 0, ties: 0, differences: [], differenceCount: 0 };
  const differ = (d: MigrationDifference) => {
    out.differenceCount++;
    if (out.differences.length < 20) out.differences.push(d);
  };
  const variants = new Map<string, PanelEngine | null>();
  /** The panel engine with the legacy rule of migrated rule `rule` as the smallest id (null: no such rule). */
  const variant = (rule: string): PanelEngine | null => {
    let e = variants.get(rule);
    if (e === undefined) {
      const winner = legacyRule.get(rule);
      e = winner === undefined ? null : loadPanelEngineOrThrow(withSmallestId(panel as Json, winner));
      variants.set(rule, e);
    }
    return e;
  };
  const ctx: Comparison = { legacy, migrated, cloudNodeId: migration.cloudNodeId, to2, out, differ, variant };
  const persons = legacy.loaded.panel.persons.map((p) => p.id);

  for (const [index, at] of instants.entries()) {
    compareRsop(ctx, persons, at);
    for (const req of requests) compareDecision(ctx, req, at);
    options.onInstant?.(index + 1);
  }
  return out;
}

/**
 * Every scan a panel's people can make at every device: each credential by id, each card by its
 * number (with the PIN too when the person has one), and each PIN alone.
 */
export function panelScans(panel: PanelEngine): Json[] {
  const p = panel.loaded.panel;
  const out: Json[] = [];
  for (const device of p.devices)
    for (const person of p.persons) {
      const pin = typeof (person as Json).pin === "string" ? ((person as Json).pin as string) : null;
      for (const c of person.credentials) {
        const cred = c as Json;
        out.push({ deviceId: device.id, credential: { credentialId: c.id } });
        if (Array.isArray(cred.types) && cred.types.includes("card") && typeof cred.credentialNumber === "number") {
          const card = {
            credentialNumber: cred.credentialNumber,
            ...(typeof cred.facilityCode === "number" ? { facilityCode: cred.facilityCode } : {}),
          };
          out.push({ deviceId: device.id, credential: card });
          if (pin !== null) out.push({ deviceId: device.id, credential: card, pin });
        }
      }
      if (pin !== null) out.push({ deviceId: device.id, pin });
    }
  return out;
}

/**
 * The instants of a week from `from` in the panel's zone: every `stepHours` hours, plus each rule's
 * start and stop time on each day and the minute before each (where decisions change).
 */
export function weekOfInstants(panel: PanelEngine, from: number, stepHours: number): number[] {
  const zone = panel.loaded.system.timezone;
  const start = DateTime.fromMillis(from, { zone }).startOf("day");
  const times = new Set<string>();
  for (const r of panel.loaded.panel.rules) {
    const rule = r as Json;
    for (const t of [rule.startTime, rule.stopTime]) if (typeof t === "string") times.add(t);
  }
  const out = new Set<number>();
  for (let day = 0; day < 7; day++) {
    const d = start.plus({ days: day });
    for (let h = 0; h < 24; h += stepHours) out.add(d.plus({ hours: h }).toMillis());
    for (const t of times) {
      const [hh, mm] = t.split(":").map(Number) as [number, number];
      const at = d.plus({ hours: hh, minutes: mm }).toMillis();
      out.add(at);
      out.add(at - 60_000);
    }
  }
  return [...out].sort((a, b) => a - b);
}

/** What the comparisons at each instant share: both engines, the id mapping and the tally. */
interface Comparison {
  readonly legacy: PanelEngine;
  readonly migrated: Engine;
  readonly cloudNodeId: Migration["cloudNodeId"];
  readonly to2: (type: string, id: number | null) => string | null;
  readonly out: MigrationCheck;
  readonly differ: (d: MigrationDifference) => void;
  /** The panel engine with the legacy rule of migrated rule `rule` as the smallest id (null: no such rule). */
  readonly variant: (rule: string) => PanelEngine | null;
}

type LegacyRsopPerson = ReturnType<PanelEngine["rsop"]>["persons"][number];
type MigratedRsopHolder = ReturnType<Engine["rsop"]>["holders"][number];

const byId = <T extends { id: unknown }>(xs: T[]) => [...xs].sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1));

/** The person: id, enabled, groups and rules (times in 2.0's HH:mm:ss), lists compared by id. */
function legacyPerson(p: LegacyRsopPerson, to2: Comparison["to2"], entries: number) {
  return {
    id: to2("holder", p.id),
    enabled: p.enabled,
    entries,
    groups: byId(p.groups.map((g) => ({ id: to2("group", g.id), name: g.name }))),
    rules: byId(
      p.rules.map((x) => ({
        id: to2("rule", x.id),
        type: x.type,
        active: x.active,
        startTime: `${x.startTime}:00`,
        stopTime: `${x.stopTime}:00`,
        recurring: x.recurring,
        authenticationPolicy: x.authenticationPolicy,
      })),
    ),
  };
}

/** The migrated holder, in the shape of legacyPerson. */
function migratedPerson(h: MigratedRsopHolder, entries: number) {
  return {
    id: h.id,
    enabled: h.enabled,
    entries,
    groups: byId(h.groups.map((g) => ({ id: g.id, name: g.name }))),
    rules: byId(
      h.rules.map((x) => ({
        id: x.id,
        type: x.type,
        active: x.active,
        startTime: x.startTime,
        stopTime: x.stopTime,
        recurring: x.recurring,
        authenticationPolicy: x.authenticationPolicy,
      })),
    ),
  };
}

/** RSOP entries at `at`: allowed and floors equal; a different deciding rule must tie. */
function compareRsop(ctx: Comparison, persons: readonly number[], at: string | number): void {
  const { legacy, migrated, to2, out, differ, variant } = ctx;
  const r1 = legacy.rsop(persons, { at });
  const r2 = migrated.rsop(
    persons.map((p) => to2("holder", p)!),
    { at, cloudNodeId: ctx.cloudNodeId },
  );
  r1.persons.forEach((p, i) => {
    const h = r2.holders[i];
    const entries2 = new Map<string, { allowed: boolean; activeRuleId: string | null; floors: string[] }>();
    for (const d of h?.devices ?? [])
      entries2.set(`door:${d.id}`, { allowed: d.allowed, activeRuleId: d.activeRuleId, floors: [] });
    for (const f of h?.floorGroups ?? [])
      entries2.set(`floorGroup:${f.id}`, {
        allowed: f.allowed,
        activeRuleId: f.activeRuleId,
        floors: f.floors.map((x) => x.id).sort(),
      });
    const entries1 = [
      ...p.doors.map((d) => ({
        key: `door:${to2("device", d.id)}`,
        kind: "doors" as const,
        id: d.id,
        allowed: d.allowed,
        activeRuleId: d.activeRuleId,
        floors: [] as string[],
      })),
      ...p.floorGroups.map((f) => ({
        key: `floorGroup:${to2("floorGroup", f.id)}`,
        kind: "floorGroups" as const,
        id: f.id,
        allowed: f.allowed,
        activeRuleId: f.activeRuleId,
        floors: f.floors.map((x) => to2("device", x.id)!).sort(),
      })),
    ];
    const person1 = legacyPerson(p, to2, entries1.length);
    const person2 = h === undefined ? null : migratedPerson(h, entries2.size);
    if (!same(person1, person2))
      differ({ what: "rsop", at, subject: { personId: p.id }, before: person1, after: person2 });
    for (const e of entries1) {
      out.rsopEntries++;
      const got = entries2.get(e.key);
      const before = { allowed: e.allowed, activeRuleId: to2("rule", e.activeRuleId), floors: e.floors };
      if (got !== undefined && same(got, before)) continue;
      const subject = { personId: p.id, [e.kind === "doors" ? "deviceId" : "floorGroupId"]: e.id };
      if (
        got === undefined ||
        got.allowed !== e.allowed ||
        !same(got.floors, e.floors) ||
        got.activeRuleId === null ||
        e.activeRuleId === null
      ) {
        differ({ what: "rsop", at, subject, before, after: got ?? null });
        continue;
      }
      const again = variant(got.activeRuleId)?.rsop([p.id], { at }).persons[0];
      const entry =
        again === undefined
          ? undefined
          : (e.kind === "doors" ? again.doors : again.floorGroups).find((x) => x.id === e.id);
      if (entry !== undefined && entry.allowed === e.allowed && entry.activeRuleId === 0) out.ties++;
      else differ({ what: "rsop", at, subject, before, after: got });
    }
  });
}

/** One decision at `at`: every field equal through the mapping; a different deciding rule must tie. */
function compareDecision(ctx: Comparison, req: Json, at: string | number): void {
  const { legacy, migrated, to2, out, differ, variant } = ctx;
  const req1 = { ...req, at };
  const deviceInt = req.deviceId as number;
  const cred = req.credential as Json | undefined;
  const credInt = typeof cred?.credentialId === "number" ? cred.credentialId : undefined;
  const req2 = {
    ...req,
    at,
    deviceId: to2("device", deviceInt),
    ...(credInt !== undefined ? { credential: { ...cred, credentialId: to2("credential", credInt) } } : {}),
  };
  const d1: PanelDecision = legacy.decide(req1);
  const d2: Decision = migrated.decide(req2);
  out.decisions++;
  const mapped = {
    ...d1,
    topic: d1.topic.replace("door.", "device."),
    holderId: to2("holder", d1.holderId),
    credentialId: to2("credential", d1.credentialId),
    activeRuleId: to2("rule", d1.activeRuleId),
    floors: d1.floors.map((f) => to2("device", f)).sort(),
  };
  const after = { ...d2, floors: [...d2.floors].sort() };
  if (same(after, mapped)) return;
  if (
    same({ ...after, activeRuleId: null }, { ...mapped, activeRuleId: null }) &&
    d2.activeRuleId !== null &&
    d1.activeRuleId !== null
  ) {
    const again = variant(d2.activeRuleId)?.decide(req1);
    if (again !== undefined && same(again, { ...d1, activeRuleId: 0 })) {
      out.ties++;
      return;
    }
  }
  differ({ what: "decision", at, subject: req1, before: mapped, after });
}
