// End-to-end cost of live.apply at a size (route, body check, immer, validation, engine update).
import { createLiveSystem } from "../src/index.js";
import { seededIds } from "../src/live/index.js";
import type { Operation } from "../src/live/operation.js";
import { SIZES, type SizeName, generateBuilding } from "./fixtures.js";

const size = (process.argv[2] ?? "L") as SizeName;
const building = generateBuilding(SIZES[size]);
const r = createLiveSystem(JSON.parse(JSON.stringify(building.snapshot)), { newId: seededIds(1) });
if (!r.ok) throw new Error("fixture invalid");
const live = r.value;
const s0 = live.snapshot;
const ms = (t: number) => (t < 1 ? `${(t * 1000).toFixed(1)} µs` : `${t.toFixed(2)} ms`);
function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return `median ${ms(q(0.5))}, p95 ${ms(q(0.95))} (n=${s.length})`;
}
function row(what: string, make: (k: number) => Operation, n: number) {
  const xs: number[] = [];
  for (let k = 0; k < n; k++) {
    const op = make(k);
    const t0 = performance.now();
    const res = live.apply(op);
    xs.push(performance.now() - t0);
    if (!res.ok) throw new Error(`${what} refused: ${JSON.stringify(res.issues.slice(0, 2))}`);
  }
  process.stdout.write(`| ${what} | ${stats(xs)} |\n`);
}
{
  // warm the validator indexes
  const t0 = performance.now();
  live.apply({ method: "POST", path: "/groups", body: { name: "warm" } });
  process.stdout.write(`first write (index build): ${ms(performance.now() - t0)}\n`);
}
const doors = s0.devices.filter((d) => d.type === "primaryReader").map((d) => d.id);
const only = process.env.ONLY;
const want = (k: string) => !only || only.split(",").includes(k);
if (want("create"))
  row(
    "holder create (a card, two groups)",
    (k) => ({
      method: "POST",
      path: "/holders",
      body: {
        firstName: "Ann",
        lastName: `Lee${k}`,
        groups: [s0.groups[k % s0.groups.length]!.id, s0.groups[(k + 3) % s0.groups.length]!.id],
        credentials: [{ types: ["card"], credentialNumber: 900_000_000 + k, facilityCode: 17 }],
      },
    }),
    300,
  );
if (want("member"))
  row(
    "membership add",
    (k) => ({
      method: "PUT",
      path: `/holders/${s0.holders[(k * 7919) % s0.holders.length]!.id}/groups/${s0.groups[(k * 13 + 5) % s0.groups.length]!.id}`,
    }),
    300,
  );
if (want("cred"))
  row(
    "credential add",
    (k) => ({
      method: "POST",
      path: `/holders/${s0.holders[(k * 4111) % s0.holders.length]!.id}/credentials`,
      body: { types: ["card"], credentialNumber: 700_000_000 + k, facilityCode: 17 },
    }),
    300,
  );
if (want("update"))
  row(
    "holder update",
    (k) => {
      const h = live.snapshot.holders[(k * 104_729) % s0.holders.length]!;
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
    300,
  );
const ruleBody = (k: number) => ({
  type: "door",
  groupId: s0.groups[k % s0.groups.length]!.id,
  devices: [doors[k % doors.length]!, doors[(k * 31 + 1) % doors.length]!],
  startTime: "08:00:00",
  stopTime: "18:00:00",
  recurring: ["Mon", "Tue"],
});
if (want("rule")) row("rule create", (k) => ({ method: "POST", path: "/rules", body: ruleBody(k) }), 60);
if (want("ruleu"))
  row(
    "rule update",
    (k) => ({ method: "PUT", path: `/rules/${s0.rules[(k * 211) % s0.rules.length]!.id}`, body: ruleBody(k + 7) }),
    60,
  );
if (want("gdel")) {
  const xs: number[] = [];
  for (let round = 0; round < 5; round++) {
    const g = live.apply({ method: "POST", path: "/groups", body: { name: `Big ${round}` } });
    const gid = (g as { id: string }).id;
    const members = live.snapshot.holders.slice(round * 2000, round * 2000 + 2000).map((h) => h.id);
    const m = live.apply({ method: "PUT", path: `/groups/${gid}/holders`, body: { holders: members } });
    if (!m.ok) throw new Error("members refused");
    const t0 = performance.now();
    const d = live.apply({ method: "DELETE", path: `/groups/${gid}` });
    xs.push(performance.now() - t0);
    if (!d.ok) throw new Error("delete refused");
  }
  process.stdout.write(`| group delete, 2,000 members | ${stats(xs)} |\n`);
}
if (want("batch")) {
  const ops: Operation[] = [];
  for (let k = 0; k < 10_000; k++)
    ops.push({
      method: "POST",
      path: "/holders",
      body: {
        firstName: "Bat",
        lastName: `Ch${k}`,
        credentials: [{ types: ["card"], credentialNumber: 800_000_000 + k, facilityCode: 17 }],
      },
    });
  const t0 = performance.now();
  const b = live.apply(ops);
  const t = performance.now() - t0;
  if (!b.ok) throw new Error("batch refused");
  process.stdout.write(`| 10,000 holder creates, one batch | ${ms(t)} |\n`);
}
