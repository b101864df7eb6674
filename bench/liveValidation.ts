// Issue 13: the validation step of a live write at size L, before (parseSnapshot of the resulting
// snapshot) and after (WriteValidator: the touched elements against maintained indexes), in the same
// run, on the same changes. Only validation is timed: the route handler, immer and the engine update
// are not. Run:
//
//   node_modules/.bin/esbuild bench/liveValidation.ts --bundle --platform=node --format=esm \
//     --packages=external --outfile=node_modules/.cache/rsop-bench/liveValidation.mjs \
//     && node --expose-gc node_modules/.cache/rsop-bench/liveValidation.mjs [S|M|L]
import { enablePatches, freeze } from "immer";
import { Refusal } from "../src/live/operation.js";
import type { Operation } from "../src/live/operation.js";
import { matchRoute } from "../src/live/routes.js";
import { WriteValidator } from "../src/live/validation.js";
import { type SystemSnapshot, parseSnapshot } from "../src/model/index.js";
import { SIZES, type SizeName, generateBuilding } from "./fixtures.js";
import { runWrite } from "../src/live/write.js";
import { type AppliedChange, applyOps } from "../src/live/state.js";

enablePatches();
const size = (process.argv[2] ?? "L") as SizeName;
const building = generateBuilding(SIZES[size]);
const loaded = parseSnapshot(JSON.parse(JSON.stringify(building.snapshot)));
if (!loaded.ok) throw new Error("fixture invalid");
/** The state as a live system keeps it: its own lists, changed in place (semantics L21). */
const committed: SystemSnapshot = ownCopy(freeze(loaded.value, true));
const validator = new WriteValidator();
let ids = 0;
const newId = () => `bench-${++ids}`;

function ownCopy(s: SystemSnapshot): SystemSnapshot {
  const out: Record<string, unknown> = { ...s };
  for (const [k, v] of Object.entries(s)) if (Array.isArray(v)) out[k] = v.slice();
  return out as unknown as SystemSnapshot;
}

/** Makes `op` on the state in place (as the live system does, before validating): what it reached. */
function change(s: SystemSnapshot, op: Operation): AppliedChange {
  const route = matchRoute(op.method, op.path);
  if (route.kind !== "write") throw new Error(`not a write: ${op.path}`);
  try {
    const { ops } = runWrite(
      s,
      route.handler,
      { params: route.params, body: op.body, newId, now: () => Date.UTC(2026, 3, 1) },
      validator.lookups(s),
    );
    return applyOps(s, ops);
  } catch (e) {
    if (e instanceof Refusal) throw new Error(`${op.method} ${op.path} refused: ${JSON.stringify(e.issues)}`);
    throw e;
  }
}

/**
 * With `node --expose-gc`, a scavenge before each timed validation: the handler and immer leave
 * garbage (a copy of a 100k-element list per write) whose collection would otherwise land in
 * whichever step allocates next.
 */
const gc = (globalThis as { gc?: (o?: { type: "minor" | "major" }) => void }).gc;
const minorGc = () => gc?.({ type: "minor" });
const ms = (t: number) => (t < 1 ? `${(t * 1000).toFixed(1)} µs` : `${t.toFixed(2)} ms`);
function stats(xs: number[]): string {
  if (xs.length === 0) return "—";
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return `median ${ms(q(0.5))}, p95 ${ms(q(0.95))} (n=${s.length})`;
}

/** Validates `op` on the committed snapshot both ways; commits it. Returns [before, after] in ms. */
function once(op: Operation, before: boolean): [number | null, number] {
  const { touched } = change(committed, op);
  let tBefore: number | null = null;
  if (before) {
    const t0 = performance.now();
    const r = parseSnapshot(committed);
    tBefore = performance.now() - t0;
    if (!r.ok) throw new Error(`parseSnapshot refused ${op.path}: ${JSON.stringify(r.issues.slice(0, 3))}`);
  }
  minorGc();
  const t1 = performance.now();
  const issues = validator.validate(committed, touched);
  const tAfter = performance.now() - t1;
  if (issues.length > 0) throw new Error(`validator refused ${op.path}: ${JSON.stringify(issues.slice(0, 3))}`);
  validator.commit();
  return [tBefore, tAfter];
}

/** RSOP_AFTER_ONLY=1: skip the parseSnapshot timings (for profiling the validator). */
const AFTER_ONLY = process.env.RSOP_AFTER_ONLY === "1";

function row(what: string, make: (k: number) => Operation, n: number, nBefore: number): void {
  if (AFTER_ONLY) nBefore = 0;
  const before: number[] = [];
  const after: number[] = [];
  for (let k = 0; k < n; k++) {
    const [b, a] = once(make(k), k < nBefore);
    if (b !== null) before.push(b);
    after.push(a);
  }
  process.stdout.write(`| ${what} | ${stats(before)} | ${stats(after)} |\n`);
}

const s0 = committed;
process.stdout.write(
  `size ${size}: ${s0.holders.length} holders, ${s0.devices.length} devices, ${s0.rules.length} rules, ${s0.groups.length} groups\n`,
);
{
  const t0 = performance.now();
  const issues = validator.validate(committed, new Map());
  process.stdout.write(
    `index build (first write of a live system, once): ${ms(performance.now() - t0)}${issues.length > 0 ? " (issues!)" : ""}\n`,
  );
}
const doors = s0.devices.filter((d) => d.type === "primaryReader").map((d) => d.id);
process.stdout.write("| validation of | before: parseSnapshot(next) | after: WriteValidator |\n|---|---|---|\n");
row(
  "holder create (POST /holders, one card)",
  (k) => ({
    method: "POST",
    path: "/holders",
    body: {
      firstName: "Ann",
      lastName: `Lee${k}`,
      groups: [s0.groups[k % s0.groups.length]!.id],
      credentials: [{ types: ["card"], credentialNumber: 900_000_000 + k, facilityCode: 17 }],
    },
  }),
  200,
  3,
);
row(
  "membership add (PUT /holders/{id}/groups/{gid})",
  (k) => ({
    method: "PUT",
    path: `/holders/${s0.holders[(k * 7919) % s0.holders.length]!.id}/groups/${s0.groups[(k * 13 + 5) % s0.groups.length]!.id}`,
  }),
  200,
  3,
);
row(
  "holder update (PUT /holders/{id})",
  (k) => {
    const h = s0.holders[(k * 104_729) % s0.holders.length]!;
    return {
      method: "PUT",
      path: `/holders/${h.id}`,
      body: {
        firstName: h.firstName,
        lastName: `Upd${k}`,
        partition: h.partition,
        enabled: h.enabled,
        activeDate: h.activeDate,
        expireDate: h.expireDate,
        pin: h.pin,
        duressPin: h.duressPin,
      },
    };
  },
  200,
  3,
);
const ruleBody = (k: number) => ({
  type: "door",
  groupId: s0.groups[k % s0.groups.length]!.id,
  devices: [doors[k % doors.length]!, doors[(k * 31 + 1) % doors.length]!],
  startTime: "08:00:00",
  stopTime: "18:00:00",
  recurring: ["Mon", "Tue"],
});
row("rule create (POST /rules)", (k) => ({ method: "POST", path: "/rules", body: ruleBody(k) }), 200, 3);
row(
  "rule update (PUT /rules/{id})",
  (k) => ({ method: "PUT", path: `/rules/${s0.rules[(k * 211) % s0.rules.length]!.id}`, body: ruleBody(k + 7) }),
  200,
  3,
);

// A group with 2,000 members, deleted.
{
  const before: number[] = [];
  const after: number[] = [];
  for (let round = 0; round < 5; round++) {
    const g = change(committed, { method: "POST", path: "/groups", body: { name: `Big ${round}` } });
    validator.validate(committed, g.touched);
    const gid = committed.groups.at(-1)!.id;
    const count = Math.min(2000, Math.floor(committed.holders.length / 5));
    const members = committed.holders.slice(round * count, round * count + count).map((h) => h.id);
    const m = change(committed, { method: "PUT", path: `/groups/${gid}/holders`, body: { holders: members } });
    if (validator.validate(committed, m.touched).length > 0) throw new Error("members refused");
    const [b, a] = once({ method: "DELETE", path: `/groups/${gid}` }, round < 3 && !AFTER_ONLY);
    if (b !== null) before.push(b);
    after.push(a);
  }
  process.stdout.write(
    `| group delete, ${Math.min(2000, Math.floor(s0.holders.length / 5))} members (DELETE /groups/{id}) | ${stats(before)} | ${stats(after)} |\n`,
  );
}

// 10,000 holder creates in one batch: each validated against the batch's accumulated changes. The
// changes are made as the create route makes them (an element appended in place).
{
  const current = committed;
  const after: number[] = [];
  for (let k = 0; k < 10_000; k++) {
    const id = newId();
    const h = {
      id,
      firstName: "Bat",
      lastName: `Ch${k}`,
      email: null,
      photoUrl: null,
      partition: null,
      enabled: true,
      activeDate: null,
      expireDate: null,
      pin: null,
      duressPin: null,
      customFields: {},
      groups: [],
      credentials: [
        {
          id: `${id}-c`,
          credentialNumber: 800_000_000 + k,
          facilityCode: null,
          description: null,
          types: ["card" as const],
          holderId: id,
        },
      ],
    };
    const { touched } = applyOps(current, [{ kind: "add", c: "holders", value: h }]);
    minorGc();
    const t1 = performance.now();
    if (validator.validate(current, touched).length > 0) throw new Error("batch create refused");
    after.push(performance.now() - t1);
  }
  const t2 = performance.now();
  const r = parseSnapshot(current);
  const whole = performance.now() - t2;
  if (!r.ok) throw new Error("batch result invalid");
  const total = after.reduce((a, b) => a + b, 0);
  process.stdout.write(
    `| 10,000 holder creates in one batch | ${ms(whole)} per create (one parseSnapshot) → ≈ ${(whole * 10).toFixed(0)} s for the batch | ${ms(total)} for the batch; per create ${stats(after)} |\n`,
  );
}
