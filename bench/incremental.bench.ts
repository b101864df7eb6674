// Scenario: incremental recompile (issue 13). Each change is made as the live system makes it — its
// seed route run as the live system runs it (runWrite) on the snapshot before
// it — a chain of such changes made first, then only `engine.update(next, patches)` timed along the
// chain: neither immer nor the whole-snapshot validation that the live system also runs. Every duration is shown with its ratio to a full load of the
// same snapshot (createEngine, warm median) measured in this process. At the end the updated engine
// is checked against a fresh compile on a sample of requests, RSOP and who-can-access.
import { type Patch, enablePatches, produceWithPatches } from "immer";
import { type Engine, type SystemSnapshot, createEngine } from "../src/index.js";
import { matchRoute } from "../src/live/routes.js";
import { type Row, fmtMs, log, median, timeRuns } from "./benchUtil.js";
import { type SizeName, exposedGc, fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";
import type { Created, WriteContext } from "../src/live/operations/common.js";
import { runWrite } from "../src/live/write.js";

let counter = 0;
const newId = () => `bench-${(counter++).toString(36).padStart(8, "0")}-${Math.random().toString(36).slice(2, 10)}`;

/** Runs one seed route on `base` as the live system does (without its validation): the next snapshot and patches. */
function change(base: SystemSnapshot, method: string, path: string, body?: unknown): { next: SystemSnapshot; patches: Patch[] } {
  const route = matchRoute(method, path);
  if (route.kind !== "write") throw new Error(`no write route ${method} ${path}`);
  const { next, patches } = runWrite(base, route.handler, { params: route.params, body, newId, now: () => 0 });
  return { next, patches };
}

function fmtUs(ms: number): string {
  return ms >= 1 ? fmtMs(ms) : `${(ms * 1000).toFixed(1)} µs`;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  enablePatches();
  const rows: Row[] = [];
  for (const size of ctx.sizes) {
    const f = fixture(size);
    const engine: Engine = createEngine(f.engine.snapshot);
    const loadRuns = ctx.quick ? 2 : 3;
    const load = median(timeRuns(loadRuns, () => engine.snapshot, (s) => createEngine(s)));
    log(`  incremental ${size}: full load ${load.toFixed(0)} ms`);
    const row = (name: string, ms: number[], note: string, key: string) => {
      const sorted = [...ms].sort((a, b) => a - b);
      const m = median(sorted);
      ctx.facts[`incremental.${size}.${key}.ms`] = m;
      ctx.facts[`incremental.${size}.${key}.ratio`] = m / load;
      rows.push({
        section: "incremental",
        size,
        name,
        value: `${fmtUs(m)} (${(m / load).toExponential(1)} of a full load)`,
        note: `median of ${ms.length}; p90 ${fmtUs(quantile(sorted, 0.9))}, max ${fmtUs(sorted[sorted.length - 1]!)}; ${note}`,
      });
      log(`  incremental ${size} ${name}: median ${fmtUs(m)}, ratio ${(m / load).toExponential(2)}`);
    };
    rows.push({ section: "incremental", size, name: "full load (createEngine, warm)", value: fmtMs(load), note: `median of ${loadRuns}: the ratios' denominator` });
    ctx.facts[`incremental.${size}.loadMs`] = load;

    /** Times engine.update along a chain of `n` changes, each made by `make` on the snapshot before it. */
    const timeUpdates = (n: number, make: (s: SystemSnapshot, i: number) => { next: SystemSnapshot; patches: Patch[] }): number[] => {
      const chain: { next: SystemSnapshot; patches: Patch[] }[] = [];
      let s = engine.snapshot;
      for (let i = 0; i < n; i++) {
        const c = make(s, i);
        chain.push(c);
        s = c.next;
      }
      exposedGc()?.();
      const out: number[] = [];
      for (const { next, patches } of chain) {
        const t0 = performance.now();
        engine.update(next, patches);
        out.push(performance.now() - t0);
      }
      return out;
    };
    const snap0 = engine.snapshot;
    const groupIds = snap0.groups.map((g) => g.id);
    const holderIds = snap0.holders.map((h) => h.id);
    const n = ctx.quick ? 40 : 100;
    let cardNumber = 900_000_000_000;

    // Holder changes.
    const created: string[] = [];
    row(
      "holder create (a card, two groups)",
      timeUpdates(n, (s, i) => {
        const c = change(s, "POST", "/holders", {
          firstName: "Bench",
          lastName: `Holder${i}`,
          groups: [groupIds[(i * 7) % groupIds.length], groupIds[(i * 13 + 1) % groupIds.length]],
          credentials: [{ types: ["card"], credentialNumber: cardNumber++, facilityCode: 1 }],
        });
        created.push(c.next.holders[c.next.holders.length - 1]!.id);
        return c;
      }),
      "POST /holders",
      "holderCreate",
    );
    row(
      "membership add",
      timeUpdates(n, (s, i) => {
        const h = holderIds[(i * 4999) % holderIds.length]!;
        const holder = s.holders.find((x) => x.id === h)!;
        const g = groupIds.find((id, k) => k >= (i * 31) % groupIds.length && !holder.groups.includes(id)) ?? groupIds.find((id) => !holder.groups.includes(id))!;
        return change(s, "PUT", `/holders/${h}/groups/${g}`);
      }),
      "PUT /holders/:id/groups/:groupId",
      "membershipAdd",
    );
    row(
      "credential add (a card)",
      timeUpdates(n, (s, i) => change(s, "POST", `/holders/${holderIds[(i * 7919) % holderIds.length]}/credentials`, { types: ["card"], credentialNumber: cardNumber++, facilityCode: 2 })),
      "POST /holders/:id/credentials",
      "credentialAdd",
    );
    row(
      "holder update",
      timeUpdates(n, (s, i) => {
        const h = s.holders.find((x) => x.id === holderIds[(i * 3571) % holderIds.length])!;
        return change(s, "PUT", `/holders/${h.id}`, {
          firstName: h.firstName,
          lastName: `${h.lastName}x`,
          partition: h.partition,
          enabled: !h.enabled,
          activeDate: h.activeDate,
          expireDate: "2030-01-01T00:00:00",
          pin: h.pin,
          duressPin: h.duressPin,
        });
      }),
      "PUT /holders/:id (enabled flipped, expiry set)",
      "holderUpdate",
    );
    row(
      "holder delete",
      timeUpdates(Math.min(n, created.length), (s, i) => change(s, "DELETE", `/holders/${created[i]}`)),
      "DELETE /holders/:id (a holder created above): the last holder moves into the gap",
      "holderDelete",
    );

    // Rule changes.
    const template = snap0.rules.find((r) => r.type === "door" && r.enabled && r.devices.length > 0)!;
    const body = (r: typeof template, stop: string) => ({
      type: r.type,
      groupId: r.groupId,
      devices: r.devices,
      floorGroups: r.floorGroups,
      startTime: r.startTime,
      stopTime: stop,
      recurring: r.recurring,
      allow: r.allow,
      authenticationPolicy: r.authenticationPolicy,
    });
    const rn = ctx.quick ? 20 : 60;
    row(
      "rule create",
      timeUpdates(rn, (s, i) => change(s, "POST", "/rules", { ...body(snap0.rules[(i * 331) % snap0.rules.length]!, "23:00:00"), devices: snap0.rules[(i * 331) % snap0.rules.length]!.devices })),
      `POST /rules (a random id: every rank after it moves; copies of existing rules, ${snap0.rules.length} rules before)`,
      "ruleCreate",
    );
    row(
      "rule update",
      timeUpdates(rn, (s, i) => {
        const r = s.rules[(i * 337) % s.rules.length]!;
        return change(s, "PUT", `/rules/${r.id}`, body(r, i % 2 === 0 ? "22:00:00" : "21:30:00"));
      }),
      "PUT /rules/:id (stop time changed)",
      "ruleUpdate",
    );

    // Deleting a group with 2,000 members (its membership set up untimed).
    const dn = ctx.quick ? 2 : 5;
    const members = Math.min(2000, holderIds.length);
    const deletes: number[] = [];
    for (let k = 0; k < dn; k++) {
      const g = change(engine.snapshot, "POST", "/groups", { name: `bench-delete-${k}` });
      engine.update(g.next, g.patches);
      const gid = g.next.groups[g.next.groups.length - 1]!.id;
      const first = (k * members) % Math.max(1, holderIds.length - members + 1);
      const m = change(engine.snapshot, "PUT", `/groups/${gid}/holders`, { holders: holderIds.slice(first, first + members) });
      engine.update(m.next, m.patches);
      deletes.push(...timeUpdates(1, (s) => change(s, "DELETE", `/groups/${gid}`)));
    }
    row(`group delete (${members} members)`, deletes, "DELETE /groups/:id: 2,000 holders' memberships go with it", "groupDelete");

    // 10,000 holder creates in one batch (as LiveSystem.apply([...]) commits them: one update).
    const bn = holderIds.length >= 10_000 ? 10_000 : 1_000;
    const batches: number[] = [];
    const create = matchRoute("POST", "/holders");
    if (create.kind !== "write") throw new Error("no POST /holders");
    for (let k = 0; k < (ctx.quick ? 1 : 3); k++) {
      // One transition running the route bn times: the same bn `add` patches as a LiveSystem batch.
      const createAll = (c: WriteContext): Created => {
        for (let i = 0; i < bn; i++)
          create.handler({
            ...c,
            body: {
              firstName: "Batch",
              lastName: `Holder${i}`,
              groups: [groupIds[(i * 7) % groupIds.length], groupIds[(i * 13 + 1) % groupIds.length]],
              credentials: [{ types: ["card"], credentialNumber: cardNumber++, facilityCode: 1 }],
            },
          });
        return { status: 204 };
      };
      const { next, patches } = runWrite(engine.snapshot, createAll, { params: {}, body: null, newId, now: () => 0 });
      exposedGc()?.();
      const t0 = performance.now();
      engine.update(next, patches);
      batches.push(performance.now() - t0);
    }
    row(`${bn.toLocaleString("en-US")} holder creates in one batch`, batches, "each with a card and two groups; one update for the whole batch", "batchCreate");

    // The updated engine answers as a fresh compile of its snapshot.
    const fresh = createEngine(engine.snapshot);
    const pool = f.set.requests;
    let checked = 0;
    for (let i = 0; i < pool.length && i < 20_000; i++) {
      const a = JSON.stringify(engine.decide(pool[i]));
      const b = JSON.stringify(fresh.decide(pool[i]));
      if (a !== b) throw new Error(`incremental engine disagrees with a fresh compile on ${JSON.stringify(pool[i])}: ${a} vs ${b}`);
      checked++;
    }
    const sample = engine.snapshot.holders.slice(-50).map((h) => h.id);
    if (JSON.stringify(engine.rsop(sample, { at: "2026-04-15T14:15:00Z" })) !== JSON.stringify(fresh.rsop(sample, { at: "2026-04-15T14:15:00Z" })))
      throw new Error("incremental engine's RSOP disagrees with a fresh compile");
    for (const d of engine.snapshot.devices.slice(0, 20))
      if (JSON.stringify(engine.whoCanAccess(d.id, { at: "2026-04-15T14:15:00Z" })) !== JSON.stringify(fresh.whoCanAccess(d.id, { at: "2026-04-15T14:15:00Z" })))
        throw new Error(`incremental engine's whoCanAccess(${d.id}) disagrees with a fresh compile`);
    log(`  incremental ${size}: ${checked} decisions, RSOP of 50 holders and who-can-access of 20 devices agree with a fresh compile`);
    ctx.facts[`incremental.${size}.checkedDecisions`] = checked;
  }
  return rows;
}

export type { SizeName };
