// Scenario: incremental recompile (issue 13). Each change is made as the live system makes it — its
// seed route run as the live system runs it (runWrite) on the snapshot before
// it — a chain of such changes made first, then only `engine.update(next, patches)` timed along the
// chain: neither immer nor the whole-snapshot validation that the live system also runs. Every duration is shown with its ratio to a full load of the
// same snapshot (createEngine, warm median) measured in this process. At the end the updated engine
// is checked against a fresh compile on a sample of requests, RSOP and who-can-access. The `apply:`
// rows then time the same kinds of change end to end through LiveSystem.apply.
import { type Patch, enablePatches } from "immer";
import { type Engine, type Operation, type SystemSnapshot, createEngine, createLiveSystem } from "../src/index.js";
import { matchRoute } from "../src/live/routes.js";
import { type Row, fmtMs, log, median, quantile, timeRuns } from "./benchUtil.js";
import { type SizeName, exposedGc, fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";
import type { Created, WriteContext } from "../src/live/operations/common.js";
import { runWrite } from "../src/live/write.js";
import { applyOps, publish } from "../src/live/state.js";
import { applyChanges } from "../src/service/store/durableSystem.js";
import type { StoredChange } from "../src/service/store/store.js";

let counter = 0;
const newId = () => `bench-${(counter++).toString(36).padStart(8, "0")}-${Math.random().toString(36).slice(2, 10)}`;

/** Runs one seed route on `base` as the live system does (without its validation): the next snapshot and patches. */
function change(
  base: SystemSnapshot,
  method: string,
  path: string,
  body?: unknown,
): { next: SystemSnapshot; patches: Patch[] } {
  const route = matchRoute(method, path);
  if (route.kind !== "write") throw new Error(`no write route ${method} ${path}`);
  return transition(base, route.handler, { params: route.params, body, newId, now: () => 0 });
}

/**
 * The snapshot a handler's steps make of `base` (a copy of its lists, changed in place as a live
 * system changes its own) and their keyed patches: what engine.update is given.
 */
function transition(
  base: SystemSnapshot,
  handler: Parameters<typeof runWrite>[1],
  input: Parameters<typeof runWrite>[2],
): { next: SystemSnapshot; patches: Patch[] } {
  const { ops } = runWrite(base, handler, input);
  const next = publish(base, undefined, new Set());
  return { next, patches: applyOps(next, ops).patches };
}

function fmtUs(ms: number): string {
  return ms >= 1 ? fmtMs(ms) : `${(ms * 1000).toFixed(1)} µs`;
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  enablePatches();
  const rows: Row[] = [];
  for (const size of ctx.sizes) {
    const f = fixture(size);
    const engine: Engine = createEngine(f.engine.snapshot);
    const loadRuns = ctx.quick ? 2 : 3;
    const load = median(
      timeRuns(
        loadRuns,
        () => engine.snapshot,
        (s) => createEngine(s),
      ),
    );
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
    rows.push({
      section: "incremental",
      size,
      name: "full load (createEngine, warm)",
      value: fmtMs(load),
      note: `median of ${loadRuns}: the ratios' denominator`,
    });
    ctx.facts[`incremental.${size}.loadMs`] = load;

    /** Times engine.update along a chain of `n` changes, each made by `make` on the snapshot before it. */
    const timeUpdates = (
      n: number,
      make: (s: SystemSnapshot, i: number) => { next: SystemSnapshot; patches: Patch[] },
    ): number[] => {
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
        const g =
          groupIds.find((id, k) => k >= (i * 31) % groupIds.length && !holder.groups.includes(id)) ??
          groupIds.find((id) => !holder.groups.includes(id))!;
        return change(s, "PUT", `/holders/${h}/groups/${g}`);
      }),
      "PUT /holders/:id/groups/:groupId",
      "membershipAdd",
    );
    row(
      "credential add (a card)",
      timeUpdates(n, (s, i) =>
        change(s, "POST", `/holders/${holderIds[(i * 7919) % holderIds.length]}/credentials`, {
          types: ["card"],
          credentialNumber: cardNumber++,
          facilityCode: 2,
        }),
      ),
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
      timeUpdates(rn, (s, i) =>
        change(s, "POST", "/rules", {
          ...body(snap0.rules[(i * 331) % snap0.rules.length]!, "23:00:00"),
          devices: snap0.rules[(i * 331) % snap0.rules.length]!.devices,
        }),
      ),
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
      const m = change(engine.snapshot, "PUT", `/groups/${gid}/holders`, {
        holders: holderIds.slice(first, first + members),
      });
      engine.update(m.next, m.patches);
      deletes.push(...timeUpdates(1, (s) => change(s, "DELETE", `/groups/${gid}`)));
    }
    row(
      `group delete (${members} members)`,
      deletes,
      "DELETE /groups/:id: 2,000 holders' memberships go with it",
      "groupDelete",
    );

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
      const { next, patches } = transition(engine.snapshot, createAll, { params: {}, body: null, newId, now: () => 0 });
      exposedGc()?.();
      const t0 = performance.now();
      engine.update(next, patches);
      batches.push(performance.now() - t0);
    }
    row(
      `${bn.toLocaleString("en-US")} holder creates in one batch`,
      batches,
      "each with a card and two groups; one update for the whole batch",
      "batchCreate",
    );

    const pool = f.set.requests;
    // End to end: the same kinds of change through LiveSystem.apply (route, body checks, the
    // transition, validation against the maintained indexes, engine update), on a live system of the
    // original snapshot. Its indexes are built by an untimed first write.
    {
      const made = createLiveSystem(snap0);
      if (!made.ok) throw new Error("the fixture does not load as a live system");
      const live = made.value;
      const warm = performance.now();
      live.apply({ method: "POST", path: "/groups", body: { name: "bench-warm" } });
      log(`  incremental ${size}: live system's first write (builds its indexes) ${fmtMs(performance.now() - warm)}`);
      const timeApply = (count: number, op: (k: number) => Operation): number[] => {
        exposedGc()?.();
        const out: number[] = [];
        for (let k = 0; k < count; k++) {
          const o = op(k);
          const t0 = performance.now();
          const r = live.apply(o);
          out.push(performance.now() - t0);
          if (!r.ok) throw new Error(`${o.method} ${o.path} refused: ${JSON.stringify(r.issues.slice(0, 2))}`);
        }
        return out;
      };
      const doors = snap0.devices.filter((d) => d.type === "primaryReader").map((d) => d.id);
      const ruleBody = (k: number) => ({
        type: "door",
        groupId: groupIds[k % groupIds.length],
        devices: [doors[k % doors.length], doors[(k * 31 + 1) % doors.length]],
        startTime: "08:00:00",
        stopTime: "18:00:00",
        recurring: ["Mon", "Tue"],
      });
      const pick = (k: number, step: number) => holderIds[(k * step) % holderIds.length]!;
      // Ops are built from live.current (no copy): reading live.snapshot after every write would copy
      // the 100,000-holder list each time, and its garbage would be collected inside the timed applies.
      const groupNotOf = (h: string, k: number) => {
        const held = live.current.holders[live.current.holders.findIndex((x) => x.id === h)]!.groups;
        return (
          groupIds.find((id, j) => j >= (k * 31) % groupIds.length && !held.includes(id)) ??
          groupIds.find((id) => !held.includes(id))!
        );
      };
      row(
        "apply: holder create (a card, two groups)",
        timeApply(n, (k) => ({
          method: "POST",
          path: "/holders",
          body: {
            firstName: "Live",
            lastName: `Holder${k}`,
            groups: [groupIds[(k * 7) % groupIds.length], groupIds[(k * 13 + 1) % groupIds.length]],
            credentials: [{ types: ["card"], credentialNumber: cardNumber++, facilityCode: 1 }],
          },
        })),
        "LiveSystem.apply end to end",
        "apply.holderCreate",
      );
      const memberships: Operation[] = [];
      for (let k = 0; k < n; k++)
        memberships.push({ method: "PUT", path: `/holders/${pick(k, 6007)}/groups/${groupNotOf(pick(k, 6007), k)}` });
      row(
        "apply: membership add",
        timeApply(n, (k) => memberships[k]!),
        "LiveSystem.apply end to end",
        "apply.membershipAdd",
      );
      row(
        "apply: credential add (a card)",
        timeApply(n, (k) => ({
          method: "POST",
          path: `/holders/${pick(k, 7841)}/credentials`,
          body: { types: ["card"], credentialNumber: cardNumber++, facilityCode: 2 },
        })),
        "LiveSystem.apply end to end",
        "apply.credentialAdd",
      );
      // Built before any is timed, as the memberships above: finding each holder scans the list,
      // and a scan of 100,000 holders right before an apply leaves it to run on a cold cache.
      const updates: Operation[] = [];
      for (let k = 0; k < n; k++) {
        const h = live.current.holders[live.current.holders.findIndex((x) => x.id === pick(k, 3581))]!;
        updates.push({
          method: "PUT",
          path: `/holders/${h.id}`,
          body: {
            firstName: h.firstName,
            lastName: `${h.lastName}y`,
            partition: h.partition,
            enabled: h.enabled,
            activeDate: h.activeDate,
            expireDate: "2031-01-01T00:00:00",
            pin: h.pin,
            duressPin: h.duressPin,
          },
        });
      }
      row(
        "apply: holder update",
        timeApply(n, (k) => updates[k]!),
        "LiveSystem.apply end to end",
        "apply.holderUpdate",
      );
      row(
        "apply: rule create",
        timeApply(rn, (k) => ({ method: "POST", path: "/rules", body: ruleBody(k) })),
        "LiveSystem.apply end to end",
        "apply.ruleCreate",
      );
      row(
        "apply: rule update",
        timeApply(rn, (k) => ({
          method: "PUT",
          path: `/rules/${snap0.rules[(k * 211) % snap0.rules.length]!.id}`,
          body: ruleBody(k + 7),
        })),
        "LiveSystem.apply end to end",
        "apply.ruleUpdate",
      );
      // A collection is forced once before these rows, not right before each timed change: a forced
      // full collection also flushes the bytecode of functions not run lately, and the one change
      // after it then runs the delete's validation unoptimized (45-100 ms against 12-23 ms).
      exposedGc()?.();
      const liveDeletes: number[] = [];
      for (let k = 0; k < dn; k++) {
        const g = live.apply({ method: "POST", path: "/groups", body: { name: `bench-live-delete-${k}` } }) as {
          id: string;
        };
        const first = (k * members) % Math.max(1, holderIds.length - members + 1);
        live.apply({
          method: "PUT",
          path: `/groups/${g.id}/holders`,
          body: { holders: holderIds.slice(first, first + members) },
        });
        const t0 = performance.now();
        const d = live.apply({ method: "DELETE", path: `/groups/${g.id}` });
        liveDeletes.push(performance.now() - t0);
        if (!d.ok) throw new Error(`group delete refused: ${JSON.stringify(d.issues.slice(0, 2))}`);
      }
      row(`apply: group delete (${members} members)`, liveDeletes, "LiveSystem.apply end to end", "apply.groupDelete");
      const liveBatches: number[] = [];
      for (let k = 0; k < (ctx.quick ? 1 : 3); k++) {
        const ops: Operation[] = [];
        for (let i = 0; i < bn; i++)
          ops.push({
            method: "POST",
            path: "/holders",
            body: {
              firstName: "LiveBatch",
              lastName: `Holder${i}`,
              groups: [groupIds[(i * 7) % groupIds.length], groupIds[(i * 13 + 1) % groupIds.length]],
              credentials: [{ types: ["card"], credentialNumber: cardNumber++, facilityCode: 1 }],
            },
          });
        const t0 = performance.now();
        const r = live.apply(ops);
        liveBatches.push(performance.now() - t0);
        if (!r.ok) throw new Error(`batch refused: ${JSON.stringify(r.issues.slice(0, 2))}`);
      }
      row(
        `apply: ${bn.toLocaleString("en-US")} holder creates in one batch`,
        liveBatches,
        "LiveSystem.apply([...]) end to end",
        "apply.batchCreate",
      );
      {
        // Last, so that the second live system it makes adds no garbage to the rows above. Replay,
        // as a served system's start-up replays its log: 999 holder creates applied (their
        // apply times give the median), their patches then replayed on a live system of the snapshot
        // before them through applyChanges (what openDurableSystem runs: 100 changes per applyPatches).
        const before = live.snapshot;
        const times: number[] = [];
        const changes: StoredChange[] = [];
        for (let k = 0; k < 999; k++) {
          const o: Operation = {
            method: "POST",
            path: "/holders",
            body: {
              firstName: "Logged",
              lastName: `Holder${k}`,
              groups: [groupIds[(k * 7) % groupIds.length], groupIds[(k * 13 + 1) % groupIds.length]],
              credentials: [{ types: ["card"], credentialNumber: cardNumber++, facilityCode: 1 }],
            },
          };
          const t0 = performance.now();
          const r = live.apply(o);
          times.push(performance.now() - t0);
          if (!r.ok || !("patches" in r)) throw new Error("a logged create was refused");
          changes.push({ seq: k + 1, operation: o, patches: JSON.parse(JSON.stringify(r.patches)), time: "" });
        }
        const replica = createLiveSystem(before);
        if (!replica.ok) throw new Error("the snapshot before the log does not load");
        replica.value.prepareWrites();
        // No collection forced right before it (see the group deletes above).
        const t0 = performance.now();
        const bad = applyChanges({ kind: "system", live: replica.value }, changes);
        const replayMs = performance.now() - t0;
        if (bad !== null) throw new Error(`replay stopped at change ${bad.seq}`);
        const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
        const ratio = replayMs / (999 * median);
        rows.push({
          section: "incremental",
          size,
          name: "replay: 999 logged holder creates (applyChanges)",
          value: `${fmtMs(replayMs)} = ${ratio.toFixed(2)}× 999 × median apply (${fmtUs(median)})`,
          note: "start-up's replay of a log (100 changes per applyPatches) against applying the same creates; target ≤ 1×",
        });
        ctx.facts[`incremental.${size}.replay999.ms`] = replayMs;
        ctx.facts[`incremental.${size}.replay999.ratio`] = ratio;
      }
      const freshLive = createEngine(live.snapshot);
      for (let i = 0; i < pool.length && i < 5_000; i++)
        if (JSON.stringify(live.engine.decide(pool[i])) !== JSON.stringify(freshLive.decide(pool[i])))
          throw new Error("the live system's engine disagrees with a fresh compile");
    }

    // The updated engine answers as a fresh compile of its snapshot.
    const fresh = createEngine(engine.snapshot);
    let checked = 0;
    for (let i = 0; i < pool.length && i < 20_000; i++) {
      const a = JSON.stringify(engine.decide(pool[i]));
      const b = JSON.stringify(fresh.decide(pool[i]));
      if (a !== b)
        throw new Error(
          `incremental engine disagrees with a fresh compile on ${JSON.stringify(pool[i])}: ${a} vs ${b}`,
        );
      checked++;
    }
    const sample = engine.snapshot.holders.slice(-50).map((h) => h.id);
    if (
      JSON.stringify(engine.rsop(sample, { at: "2026-04-15T14:15:00Z" })) !==
      JSON.stringify(fresh.rsop(sample, { at: "2026-04-15T14:15:00Z" }))
    )
      throw new Error("incremental engine's RSOP disagrees with a fresh compile");
    for (const d of engine.snapshot.devices.slice(0, 20))
      if (
        JSON.stringify(engine.whoCanAccess(d.id, { at: "2026-04-15T14:15:00Z" })) !==
        JSON.stringify(fresh.whoCanAccess(d.id, { at: "2026-04-15T14:15:00Z" }))
      )
        throw new Error(`incremental engine's whoCanAccess(${d.id}) disagrees with a fresh compile`);
    log(
      `  incremental ${size}: ${checked} decisions, RSOP of 50 holders and who-can-access of 20 devices agree with a fresh compile`,
    );
    ctx.facts[`incremental.${size}.checkedDecisions`] = checked;
  }
  return rows;
}

export type { SizeName };
