// Properties of the event library: for random snapshots, requests and writes, the secrecy filter
// removes what each level promises and nothing at level 0; no typed PIN reaches any event; change
// events name exactly the entities a write added, modified or removed.
import fc from "fast-check";
import { expect, test } from "vitest";
import { createEngine } from "../../src/evaluate/index.js";
import { createLiveSystem, seededIds } from "../../src/live/index.js";
import { type SystemSnapshot, parseSnapshot } from "../../src/model/index.js";
import { accessEvent, changeEvents, filterEvent } from "../../src/webhooks.js";
import type { SecrecyLevel, WebhookEvent } from "../../src/webhooks.js";
import { operationSpecArb, resolveOperation, snapshotAndRequestsArb } from "../arbitraries/index.js";

const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 100
    : Math.max(100, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 20));
const LEVELS: readonly SecrecyLevel[] = [0, 1, 2];
const CREDENTIAL_KEYS = ["pin", "duressPin", "credentials", "credentialNumber", "facilityCode", "ecards"];
const NAME_KEYS = ["firstName", "lastName", "email", "photoUrl"];

/** Every key of a JSON value, at any depth, and every string value. */
function walk(value: unknown, keys: Set<string>, strings: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) walk(v, keys, strings);
  else if (typeof value === "object" && value !== null)
    for (const [k, v] of Object.entries(value)) {
      keys.add(k);
      walk(v, keys, strings);
    }
  else if (typeof value === "string") strings.add(value);
}

function checkLevels(event: WebhookEvent, typedPin: string | undefined): void {
  const copy = structuredClone(event);
  expect(filterEvent(event, 0)).toBe(event);
  for (const level of LEVELS) {
    const seen = filterEvent(event, level);
    const keys = new Set<string>();
    const strings = new Set<string>();
    walk(seen, keys, strings);
    if (typedPin !== undefined)
      expect(strings.has(typedPin), `the typed PIN ${typedPin} in ${JSON.stringify(seen)}`).toBe(false);
    if (level >= 1) {
      for (const k of CREDENTIAL_KEYS)
        expect(keys.has(k), `level ${level} keeps ${k}: ${JSON.stringify(seen)}`).toBe(false);
      if ("credential" in seen) expect(seen.credential).toBeNull();
      if ("entityType" in seen && seen.entityType === "credential")
        expect(Object.keys(seen.data as object).sort()).toEqual(["holderId", "id"]);
    }
    if (level === 2) for (const k of NAME_KEYS) expect(keys.has(k), `level 2 keeps ${k}`).toBe(false);
  }
  expect(event, "the filter works on a copy").toStrictEqual(copy);
}

test("access events: every level filters what it promises, level 0 is the identity, no typed PIN appears at any level", () => {
  fc.assert(
    fc.property(snapshotAndRequestsArb({ minRequests: 1, maxRequests: 12 }), ({ snapshot, requests }) => {
      const parsed = parseSnapshot(snapshot);
      if (!parsed.ok) throw new Error("the arbitrary made an invalid snapshot");
      const engine = createEngine(parsed.value);
      for (const r of requests) {
        const d = engine.decide(r);
        const e = accessEvent(d, r, parsed.value, { id: "e-1", now: 0 });
        expect(e.topic).toBe(d.topic);
        expect(e.reason).toBe(d.reason);
        // The event holds no field of the request but its device and instant: no `pin` key at any level.
        const keys = new Set<string>();
        walk(e, keys, new Set());
        expect(keys.has("pin")).toBe(false);
        const typed = typeof r === "object" && r !== null ? (r as { pin?: unknown }).pin : undefined;
        checkLevels(e, typeof typed === "string" ? typed : undefined);
      }
    }),
    { numRuns: NUM_RUNS },
  );
}, 120_000);

type Keyed = Record<string, unknown>;
/** The oracle: every entity of every collection compared by key, before and after. */
function diff(before: SystemSnapshot, after: SystemSnapshot): string[] {
  const out: string[] = [];
  const cols: [keyof SystemSnapshot, string][] = [
    ["partitions", "partition"],
    ["customFields", "customField"],
    ["cloudNodes", "cloudNode"],
    ["connections", "connection"],
    ["devices", "device"],
    ["floorGroups", "floorGroup"],
    ["groups", "group"],
    ["holders", "holder"],
    ["rules", "rule"],
  ];
  const keyOf = (type: string, e: Keyed) =>
    type === "customField" ? `${String(e.partition)}/${String(e.id)}` : String(e.id);
  const compare = (type: string, was: readonly Keyed[], now: readonly Keyed[], strip: (e: Keyed) => unknown) => {
    const a = new Map(was.map((e) => [keyOf(type, e), e]));
    const b = new Map(now.map((e) => [keyOf(type, e), e]));
    for (const [k, _e] of a) if (!b.has(k)) out.push(`entity.removed ${type} ${k}`);
    for (const [k, e] of b) {
      const old = a.get(k);
      if (old === undefined) out.push(`entity.added ${type} ${k}`);
      else if (JSON.stringify(strip(old)) !== JSON.stringify(strip(e))) out.push(`entity.modified ${type} ${k}`);
    }
    void a;
  };
  for (const [key, type] of cols) {
    const noCredentials = (e: Keyed) => (type === "holder" ? { ...e, credentials: undefined } : e);
    compare(type, before[key] as readonly Keyed[], after[key] as readonly Keyed[], noCredentials);
  }
  const creds = (s: SystemSnapshot) => s.holders.flatMap((h) => h.credentials) as unknown as Keyed[];
  compare("credential", creds(before), creds(after), (e) => e);
  return out.sort();
}

let accepted = 0;
test("change events: exactly the entities a write added, modified or removed (the after state; before it for removals); every level filters them", () => {
  fc.assert(
    fc.property(
      snapshotAndRequestsArb({ minRequests: 0, maxRequests: 0 }),
      fc.array(operationSpecArb, { minLength: 1, maxLength: 20 }),
      ({ snapshot }, specs) => {
        const made = createLiveSystem(snapshot, { newId: seededIds(7), now: () => Date.parse("2026-04-15T12:00:00Z") });
        if (!made.ok) throw new Error("the arbitrary made an invalid snapshot");
        const live = made.value;
        for (const spec of specs) {
          const before = live.snapshot;
          const r = live.apply(resolveOperation(before, spec));
          if (!r.ok || !("patches" in r)) continue;
          const after = live.snapshot;
          const events = changeEvents({ before, after, patches: r.patches, occurredAt: "2026-04-15T12:00:00.000Z" });
          const key = (e: (typeof events)[number]) => {
            const d = e.data as Keyed;
            return e.entityType === "customField" ? `${String(d.partition)}/${String(d.id)}` : String(e.entityId);
          };
          expect(events.map((e) => `${e.topic} ${e.entityType} ${key(e)}`).sort()).toEqual(diff(before, after));
          accepted += 1;
          for (const e of events) {
            const source = e.topic === "entity.removed" ? before : after;
            const all = [
              ...Object.values(source).filter(Array.isArray).flat(),
              ...source.holders.flatMap((h) => h.credentials),
            ] as Keyed[];
            expect(all, "the data is the entity itself").toContain(e.data);
            expect(e.systemId).toBe(after.systemId);
            checkLevels(e, undefined);
          }
        }
      },
    ),
    { numRuns: NUM_RUNS },
  );
  expect(accepted, "writes were accepted (and their events checked)").toBeGreaterThan(NUM_RUNS);
}, 120_000);
