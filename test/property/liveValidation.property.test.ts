// Issue 13: a write is validated incrementally (the touched elements and their dependents, against
// maintained indexes), and the verdict is parseSnapshot's on the resulting snapshot — the same
// issues, in the same order, with the same paths and messages. Writes are the seed routes
// (operationSpecArb) and raw edits of any element field (what the routes never produce: a device
// type changed under a floor group, an id taken twice, a connection moved to another node, …);
// batches of up to three accumulate, made in place on a live state as the live system makes them;
// a refused batch steps the state and the indexes back; inverse patches undo.
import fc from "fast-check";
import { enablePatches, produceWithPatches } from "immer";
import { expect, test } from "vitest";
import { type Operation, createLiveSystem, seededIds } from "../../src/live/index.js";
import { Refusal } from "../../src/live/operation.js";
import { matchRoute } from "../../src/live/routes.js";
import { type SnapshotLookups, WriteValidator } from "../../src/live/validation.js";
import { type AppliedChange, type EntityOp, applyKeyedPatches, applyOps, publish } from "../../src/live/state.js";
import { type Issue, type SystemSnapshot, deviceSchema, parseSnapshot } from "../../src/model/index.js";
import { COLLECTIONS, type Collection, rawKey } from "../../src/model/checks/index.js";
import {
  type OperationSpec,
  operationSpecArb,
  resolveOperation,
  snapshotAndRequestsArb,
} from "../arbitraries/index.js";
import { runWrite } from "../../src/live/write.js";

/** Removes list[i] on a draft as a delete route does (the last element moves into its place). */
function removeAt<T>(list: T[], i: number): void {
  const last = list.length - 1;
  if (i !== last) list[i] = list[last]!;
  list.length = last;
}

/**
 * 100 runs by default; RSOP_PROPERTY_RUNS scales it down by 20 (one run validates a sequence of writes both ways (about 6 ms a run)), so that the
 * 1,000,000-run hunt gives 50,000 runs here.
 */
const NUM_RUNS =
  process.env.RSOP_PROPERTY_RUNS === undefined
    ? 100
    : Math.max(100, Math.ceil(Number(process.env.RSOP_PROPERTY_RUNS) / 20));
const TIMEOUT = 60_000 + NUM_RUNS * 60; // generous: the machine may be shared
/**
 * The default run (the suite's) has a fixed seed, one whose 100 runs reach every refusal code the
 * checks below ask for: with a fresh seed, a rare one (`invalidReference`) was missed now and then
 * and the check failed by chance. Hunts (RSOP_PROPERTY_RUNS) draw a fresh seed; RSOP_PROPERTY_SEED=N replays one.
 */
const SEED =
  process.env.RSOP_PROPERTY_SEED !== undefined
    ? Number(process.env.RSOP_PROPERTY_SEED)
    : process.env.RSOP_PROPERTY_RUNS === undefined
      ? 1
      : undefined;

enablePatches();

/**
 * A raw edit of one element: set a field to a value seen elsewhere (or junk), remove, splice,
 * duplicate; or fill a connection with devices up to around a lockhub's 64 locks (sometimes making it
 * a lockhub first), so that later device writes cross the limit one way or the other.
 */
interface EditSpec {
  readonly kind: "set" | "append" | "credential" | "remove" | "splice" | "duplicate" | "fill";
  readonly coll: Collection;
  readonly a: number;
  readonly field: number;
  readonly value: number;
}
const editSpecArb: fc.Arbitrary<EditSpec> = fc.record({
  kind: fc.constantFrom("set", "set", "set", "append", "credential", "remove", "splice", "duplicate", "fill"),
  coll: fc.constantFrom(...COLLECTIONS, "devices", "devices", "floorGroups", "holders"),
  a: fc.nat({ max: 60 }),
  field: fc.nat({ max: 60 }),
  value: fc.nat({ max: 500 }),
});

const JUNK: readonly unknown[] = [
  "zz-missing",
  "Mars/Olympus",
  "Europe/Paris",
  null,
  7,
  0,
  "floorRelay",
  "elevatorReader",
  "primaryReader",
  "ioDevice",
  "ethernet",
  "wirelessCoordinator",
  "lockhub",
  "usb",
  "wirelessGateway",
  "IPv4",
  "VENDOR_A",
  "w-1",
  "",
];
/** Fields the checks across entities read, per collection. */
const FIELDS: Record<Collection, readonly string[]> = {
  partitions: ["id", "name"],
  groups: ["id", "name", "partition"],
  holders: ["id", "partition", "groups", "pin", "customFields"],
  cloudNodes: ["id", "timezone", "cardFormat"],
  connections: [
    "id",
    "cloudNode",
    "type",
    "port",
    "ipaddress",
    "macAddress",
    "protocol",
    "manufacturer",
    "ipv6Address",
  ],
  devices: [
    "id",
    "name",
    "cloudNode",
    "connection",
    "port",
    "type",
    "primaryReader",
    "wirelessAddress",
    "partition",
    "publicIcon",
  ],
  floorGroups: ["id", "name", "partition", "readerPort", "floors"],
  rules: ["id", "groupId", "devices", "floorGroups", "type"],
  customFields: ["id", "partition", "type", "required", "values", "min", "max"],
  calendars: ["id", "partition"],
  areas: ["id", "entries", "exits"],
};

/** Values of `field` anywhere in the snapshot, then junk. */
function pool(s: SystemSnapshot, field: string): unknown[] {
  const out: unknown[] = [];
  for (const c of COLLECTIONS)
    for (const e of s[c] as unknown as Record<string, unknown>[]) {
      if (field in e) out.push(e[field]);
      if (
        field !== "id" &&
        ["partition", "groupId", "readerPort", "primaryReader", "connection", "cloudNode"].includes(field)
      )
        out.push(e.id);
    }
  return [...out, ...JUNK];
}

function edit(s: SystemSnapshot, spec: EditSpec): (draft: Record<Collection, Record<string, unknown>[]>) => void {
  return (draft) => {
    const list = draft[spec.coll];
    if (list.length === 0) return;
    const i = spec.a % list.length;
    const e = list[i]!;
    const fields = FIELDS[spec.coll];
    const field = fields[spec.field % fields.length]!;
    switch (spec.kind) {
      case "remove":
        return removeAt(list, i);
      case "fill": {
        const conns = draft.connections;
        if (conns.length === 0) return;
        const conn = conns[spec.a % conns.length]!;
        if (spec.value % 2 === 0) {
          Object.assign(conn, { type: "lockhub", macAddress: "00:1B:2C:4A:30:01" });
          for (const k of ["protocol", "manufacturer", "ipv6Address"]) delete conn[k];
        }
        const on = draft.devices.filter((d) => d.connection === conn.id).length;
        // 62…67 devices on it in all: a lockhub at or just past its 64 locks.
        const target = 62 + (spec.value % 6);
        for (let k = 0; on + k < target; k++)
          draft.devices.push(
            deviceSchema.parse({
              id: `fill-${spec.value}-${k}`,
              name: `Lock ${spec.value}-${k}`,
              cloudNode: conn.cloudNode,
              connection: conn.id,
              port: 1000 + k,
              type: "ioDevice",
              publicIcon: "other",
            }) as never,
          );
        return;
      }
      case "splice":
        list.splice(i, 1);
        return;
      case "duplicate":
        list.push(JSON.parse(JSON.stringify(s[spec.coll][i])) as Record<string, unknown>);
        return;
      case "append": {
        const arrays = fields.filter((f) => Array.isArray(e[f]));
        if (arrays.length === 0) return;
        const f = arrays[spec.field % arrays.length]!;
        const ids = pool(s, "id");
        (e[f] as unknown[]).push(
          f === "partition" ? { id: ids[spec.value % ids.length] } : ids[spec.value % ids.length],
        );
        return;
      }
      case "credential": {
        const holders = draft.holders;
        const h = holders[spec.a % Math.max(1, holders.length)] as
          | { credentials: Record<string, unknown>[] }
          | undefined;
        if (h === undefined || h.credentials.length === 0) return;
        const cred = h.credentials[spec.field % h.credentials.length]!;
        const others = s.holders.flatMap((x) => x.credentials);
        const other = others[spec.value % others.length]!;
        if (spec.value % 2 === 0)
          cred.credentialNumber = (cred.types as string[]).includes("card") ? (other.credentialNumber ?? 1) : null;
        else cred.id = other.id;
        return;
      }
      case "set": {
        const values = pool(s, field);
        const v = values[spec.value % values.length];
        e[field] = Array.isArray(e[field]) && !Array.isArray(v) ? [v] : v;
        return;
      }
    }
  };
}

type Step = { readonly op: OperationSpec } | { readonly edit: EditSpec };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: operationSpecArb.map((op) => ({ op })) },
  { weight: 2, arbitrary: editSpecArb.map((e) => ({ edit: e })) },
);

/**
 * The steps one step asks of the live state: a route's (run as the live system runs it, against the
 * validator's lookups), or a raw edit's, as the element replacements, appends and removals that make
 * the edited snapshot of the state; null for a read, or a write its handler refused.
 */
function stepOps(
  state: SystemSnapshot,
  step: Step,
  seed: number,
  lookups: SnapshotLookups,
): { ops: EntityOp[]; keyed: boolean } | null {
  if ("edit" in step) {
    const s = publish(state, undefined, new Set());
    const [next] = produceWithPatches(s, edit(s, step.edit) as never) as unknown as [SystemSnapshot];
    return opsBetween(s, next);
  }
  const op: Operation = resolveOperation(state, step.op);
  if (op === null || typeof op !== "object" || typeof op.method !== "string" || typeof op.path !== "string")
    return null;
  const q = op.path.indexOf("?");
  const route = matchRoute(op.method, q < 0 ? op.path : op.path.slice(0, q));
  if (route.kind !== "write") return null;
  try {
    const { ops } = runWrite(
      state,
      route.handler,
      { params: route.params, body: op.body, newId: seededIds(seed), now: () => Date.UTC(2026, 3, 1) },
      lookups,
    );
    return { ops, keyed: true };
  } catch (e) {
    if (e instanceof Refusal) return null;
    throw e;
  }
}

/**
 * Element steps that make `b`'s elements of `a`'s: by key when both lists have unique keys (removals,
 * replacements, appends: what routes make, and what keyed patches undo), else by position (a
 * replacement per changed position, appends, removals from the end; `keyed` false: such a change,
 * e.g. an id given twice, has no keyed undo).
 */
function opsBetween(a: SystemSnapshot, b: SystemSnapshot): { ops: EntityOp[]; keyed: boolean } {
  const ops: EntityOp[] = [];
  let keyed = true;
  for (const c of COLLECTIONS) {
    const x = a[c] as readonly unknown[];
    const y = b[c] as readonly unknown[];
    if (x === y) continue;
    const byKey = keyedSteps(c, x, y);
    if (byKey !== null) {
      ops.push(...byKey);
      continue;
    }
    keyed = false;
    const n = Math.min(x.length, y.length);
    for (let i = 0; i < n; i++) if (x[i] !== y[i]) ops.push({ kind: "replace", c, i, value: y[i] });
    for (let i = n; i < y.length; i++) ops.push({ kind: "add", c, value: y[i] });
    for (let i = x.length - 1; i >= n; i--) ops.push({ kind: "remove", c, i });
  }
  return { ops, keyed };
}

/** The steps from list `x` to list `y` of `c` by key; null when a key is missing or given twice. */
function keyedSteps(c: Collection, x: readonly unknown[], y: readonly unknown[]): EntityOp[] | null {
  const kx = x.map((e) => rawKey(c, e));
  const ky = y.map((e) => rawKey(c, e));
  const unique = (ks: (string | undefined)[]) => ks.every((k) => k !== undefined) && new Set(ks).size === ks.length;
  if (!unique(kx) || !unique(ky)) return null;
  const list = [...x];
  const at = new Map(kx.map((k, i) => [k!, i]));
  const inY = new Map(ky.map((k, i) => [k!, i]));
  const ops: EntityOp[] = [];
  for (const k of kx) {
    if (inY.has(k!)) continue;
    const i = at.get(k!)!;
    ops.push({ kind: "remove", c, i });
    const last = list.length - 1;
    if (i !== last) {
      list[i] = list[last];
      at.set(rawKey(c, list[i])!, i);
    }
    list.pop();
    at.delete(k!);
  }
  ky.forEach((k, j) => {
    const i = at.get(k!);
    if (i === undefined) ops.push({ kind: "add", c, value: y[j] });
    else if (list[i] !== y[j]) ops.push({ kind: "replace", c, i, value: y[j] });
  });
  return ops;
}

function expectSameVerdict(inc: readonly Issue[], next: SystemSnapshot, what: string): boolean {
  const ref = parseSnapshot(next);
  expect(inc, what).toStrictEqual(ref.ok ? [] : ref.issues);
  return ref.ok;
}

test(
  "the incremental verdict on every write (routes, raw edits, batches, undo) is parseSnapshot's on the resulting snapshot",
  () => {
    const counts = { accepted: 0, refused: 0, batchesRolledBack: 0, undone: 0, codes: new Map<string, number>() };
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 1 }),
        fc.array(fc.array(stepArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        ({ snapshot: input }, batches, seed) => {
          const made = createLiveSystem(input);
          if (!made.ok) throw new Error("generated snapshot refused");
          // A state as a live system keeps one: its own lists, changed in place.
          const state = publish(made.value.snapshot, undefined, new Set()) as SystemSnapshot;
          const own = { ...state } as Record<string, unknown>;
          for (const c of COLLECTIONS) own[c] = [...(state[c] as readonly unknown[])];
          const live = own as unknown as SystemSnapshot;
          const validator = new WriteValidator();
          batches.forEach((steps, b) => {
            const mark = validator.mark(live);
            const accepted: AppliedChange[] = [];
            let keyed = true;
            const takeBack = () => {
              for (let k = accepted.length - 1; k >= 0; k--) accepted[k]!.undo();
              validator.rollback(mark);
            };
            for (const step of steps) {
              const made = stepOps(live, step, seed + b, validator.lookups(live));
              if (made === null || made.ops.length === 0) continue;
              keyed &&= made.keyed;
              const what = `batch ${b}: ${JSON.stringify(step)}`;
              const change = applyOps(live, made.ops);
              const issues = validator.validate(live, change.touched);
              if (expectSameVerdict(issues, publish(live, undefined, new Set()), what)) {
                counts.accepted++;
                accepted.push(change);
              } else {
                counts.refused++;
                for (const i of issues) counts.codes.set(i.code, (counts.codes.get(i.code) ?? 0) + 1);
                change.undo();
                if (accepted.length > 0) counts.batchesRolledBack++;
                takeBack(); // the batch is refused as a whole: nothing is committed
                expectSameVerdict(validator.validate(live, new Map()), publish(live, undefined, new Set()), what);
                return;
              }
            }
            validator.commit();
            if (keyed && accepted.length === 1 && (seed + b) % 4 === 0) {
              // Undo through the validator: the inverse patches lead back to a valid snapshot.
              const { find } = validator.lookups(live);
              const back = applyKeyedPatches(live, accepted[0]!.inversePatches, find);
              expect(
                expectSameVerdict(
                  validator.validate(live, back.touched),
                  publish(live, undefined, new Set()),
                  `undo of batch ${b}`,
                ),
              ).toBe(true);
              validator.commit();
              counts.undone++;
            }
          });
        },
      ),
      { numRuns: NUM_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
    if (process.env.RSOP_PROPERTY_REPORT)
      process.stdout.write(
        `liveValidation: ${NUM_RUNS} runs, ${counts.accepted} accepted, ${counts.refused} refused, ${counts.batchesRolledBack} refused batches rolled back, ${counts.undone} undone; codes ${JSON.stringify(Object.fromEntries(counts.codes))}\n`,
      );
    // The property compared accepted and refused writes of many kinds.
    expect(counts.accepted).toBeGreaterThan(NUM_RUNS);
    expect(counts.refused).toBeGreaterThan(NUM_RUNS);
    expect(counts.batchesRolledBack).toBeGreaterThan(0);
    expect(counts.undone).toBeGreaterThan(0);
    const codes = [...counts.codes.keys()];
    for (const code of [
      "duplicateId",
      "duplicateName",
      "duplicateCredentialNumber",
      "unknownReference",
      "invalidReference",
      "inconsistentReference",
      "portInUse",
      "overCapacity",
      "invalidKey",
      "invalidValue",
    ])
      expect(codes, `refusals with ${code}`).toContain(code);
    // A required custom field without a value comes from a raw edit of a definition (about 1 in 100 runs).
    if (NUM_RUNS >= 1000) expect(codes, "refusals with required").toContain("required");
    // A bad zone comes from a cloud node write only (about 3 in 100 runs): asserted where it is certain.
    if (NUM_RUNS >= 1000) expect(codes, "refusals with invalidTimezone").toContain("invalidTimezone");
  },
  TIMEOUT,
);
