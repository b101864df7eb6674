// Scenario: the same access question answered by the engine, two plain-JS baselines, casbin and
// Cedar (wasm), on the same requests of the S building. First every peer's allow/deny is compared
// with the engine's on the agreement set; then each is timed on a subset (the peers are slow).
//
// Fairness: every peer gets PeerInput (credential already tied to a holder, local wall time at the
// device's site, presented factor, holder and device attributes) built outside the timed path, and
// casbin and Cedar get their request objects prebuilt. The engine is timed on the raw requests: it
// parses the instant, converts it to local time, decodes Wiegand frames and looks up credentials
// inside the timed path. Any bias favours the peers.
import type { Decision } from "../src/index.js";
import { type Row, batchRow, fmtMs, log, sink, timeBatches } from "./benchUtil.js";
import { fixture } from "./fixtures.js";
import { casbinPeer } from "./peers/casbin.js";
import { cedarAllows, cedarPeer } from "./peers/cedar.js";
import { type PeerDecide, naiveScan, plainIndexed } from "./peers/naive.js";
import type { ScenarioContext } from "./scenario.js";

interface Agreement {
  readonly agree: number;
  readonly total: number;
  /** Disagreements by request kind, engine reason and peer answer. */
  readonly disagreements: Record<string, number>;
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const size = "S";
  const f = fixture(size);
  const { requests, peer, kinds } = f.set;
  const agreeCount = Math.min(requests.length, ctx.quick ? 1_000 : 2_000);
  const timeCount = Math.min(requests.length, ctx.quick ? 500 : 2_000);
  const rows: Row[] = [];
  const snapshotJson = JSON.parse(f.json) as unknown;

  // Build the peers (setup cost reported, not part of any timing).
  const naive = naiveScan(snapshotJson);
  const plain = plainIndexed(snapshotJson);
  let t = performance.now();
  const casbin = await casbinPeer(snapshotJson);
  const casbinSetupMs = performance.now() - t;
  t = performance.now();
  const cedar = cedarPeer(snapshotJson);
  const cedarSetupMs = performance.now() - t;
  const casbinArgs = peer.slice(0, agreeCount).map((p) => casbin.args(p));
  const cedarCalls = peer.slice(0, agreeCount).map((p) => cedar.call(p));
  const enforcer = casbin.enforcer;

  // 1. Agreement on allow/deny.
  const engineAllowed = requests.slice(0, agreeCount).map((r) => f.engine.decide(r).outcome === "allowed");
  const engineReason = requests.slice(0, agreeCount).map((r) => f.engine.decide(r).reason);
  const check = (name: string, answer: (i: number) => boolean): Agreement => {
    let agree = 0;
    const disagreements: Record<string, number> = {};
    for (let i = 0; i < agreeCount; i++) {
      const a = answer(i);
      if (a === engineAllowed[i]) agree++;
      else {
        const key = `${kinds[i]}: engine ${engineReason[i]}, ${name} ${a ? "allow" : "deny"}`;
        disagreements[key] = (disagreements[key] ?? 0) + 1;
      }
    }
    return { agree, total: agreeCount, disagreements };
  };
  const fromPeer = (decide: PeerDecide) => (i: number) => decide(peer[i]!);
  const agreement: Record<string, Agreement> = {};
  const allowedShare = engineAllowed.filter(Boolean).length / agreeCount;
  for (const [name, answer] of [
    ["naive JS (scan all rules)", fromPeer(naive)],
    ["plain JS (rules per device)", fromPeer(plain)],
    ["casbin", (i: number) => enforcer.enforceSync(...casbinArgs[i]!)],
    ["Cedar wasm", (i: number) => cedarAllows(cedarCalls[i]!)],
  ] as const) {
    const started = performance.now();
    agreement[name] = check(name, answer);
    const a = agreement[name]!;
    log(
      `  agreement ${name}: ${a.agree}/${a.total} in ${fmtMs(performance.now() - started)}${a.agree === a.total ? "" : ` — ${JSON.stringify(a.disagreements)}`}`,
    );
  }
  ctx.facts.agreement = Object.fromEntries(
    Object.entries(agreement).map(([k, v]) => [
      k,
      { agree: v.agree, total: v.total, rate: v.agree / v.total, disagreements: v.disagreements },
    ]),
  );
  ctx.facts["peers.allowedShare"] = allowedShare;

  // 2. Timing on the first `timeCount` requests, cycled.
  const timing = { timeMs: ctx.quick ? 600 : 1_500, warmupMs: ctx.quick ? 200 : 400 };
  const pctAgree = (name: string) => {
    const a = agreement[name]!;
    return `${((100 * a.agree) / a.total).toFixed(a.agree === a.total ? 0 : 2)}% agree (${a.agree.toLocaleString("en-US")}/${a.total.toLocaleString("en-US")})`;
  };
  const subset = `${timeCount.toLocaleString("en-US")}-request subset`;

  const engine = f.engine;
  const out: Decision = engine.decide(requests[0]);
  let k = 0;
  const engineBatch = () => {
    let acc = 0;
    for (let i = 0; i < 1_000; i++) {
      acc += engine.decide(requests[k], out).reason.length;
      if (++k === timeCount) k = 0;
    }
    sink.value += acc;
  };
  const rEngine = await timeBatches("peers engine", engineBatch, 1_000, timing);
  rows.push(batchRow("peers", size, "rsop-engine decide(request, out)", rEngine, `${subset}; raw requests`));

  const peerBatch = (decide: PeerDecide, batch: number) => {
    let j = 0;
    return () => {
      let acc = 0;
      for (let i = 0; i < batch; i++) {
        if (decide(peer[j]!)) acc++;
        if (++j === timeCount) j = 0;
      }
      sink.value += acc;
    };
  };
  const rPlain = await timeBatches("peers plain", peerBatch(plain, 1_000), 1_000, timing);
  rows.push(
    batchRow(
      "peers",
      size,
      "plain JS (rules per device)",
      rPlain,
      `${subset}; ${pctAgree("plain JS (rules per device)")}`,
    ),
  );
  const rNaive = await timeBatches("peers naive", peerBatch(naive, 100), 100, timing);
  rows.push(
    batchRow("peers", size, "naive JS (scan all rules)", rNaive, `${subset}; ${pctAgree("naive JS (scan all rules)")}`),
  );

  let c = 0;
  const casbinBatch = () => {
    if (enforcer.enforceSync(...casbinArgs[c]!)) sink.value++;
    if (++c === timeCount) c = 0;
  };
  const rCasbin = await timeBatches("peers casbin", casbinBatch, 1, timing);
  log(`  casbin: ${rCasbin.opsPerSec.toFixed(0)}/s`);
  rows.push(
    batchRow(
      "peers",
      size,
      "casbin 5.51 enforceSync",
      rCasbin,
      `${subset}; ${pctAgree("casbin")}; ${casbin.policies} policy lines, ${casbin.links} role links; setup ${fmtMs(casbinSetupMs)}`,
    ),
  );

  let d = 0;
  const cedarBatch = () => {
    if (cedarAllows(cedarCalls[d]!)) sink.value++;
    if (++d === timeCount) d = 0;
  };
  const rCedar = await timeBatches("peers cedar", cedarBatch, 1, timing);
  log(`  cedar: ${rCedar.opsPerSec.toFixed(0)}/s`);
  rows.push(
    batchRow(
      "peers",
      size,
      "Cedar wasm 4.13 statefulIsAuthorized",
      rCedar,
      `${subset}; ${pctAgree("Cedar wasm")}; ${cedar.policies} policies preparsed; setup ${fmtMs(cedarSetupMs)}`,
    ),
  );

  const best = rCasbin.opsPerSec >= rCedar.opsPerSec ? ["casbin", rCasbin] : ["Cedar wasm", rCedar];
  const ratio = (r: { opsPerSec: number }) => {
    const x = rEngine.opsPerSec / r.opsPerSec;
    return `${x < 10 ? x.toFixed(2) : Math.round(x).toLocaleString("en-US")}×`;
  };
  rows.push({
    section: "peers",
    size,
    name: `ratio engine / best peer (${best[0]})`,
    value: ratio(best[1] as { opsPerSec: number }),
    note: "decisions/s, same subset",
  });
  rows.push({
    section: "peers",
    size,
    name: "ratio engine / plain JS (rules per device)",
    value: ratio(rPlain),
    note: "decisions/s, same subset",
  });
  rows.push({
    section: "peers",
    size,
    name: "ratio engine / naive JS (scan all rules)",
    value: ratio(rNaive),
    note: "decisions/s, same subset",
  });
  ctx.facts["peers.engineOps"] = rEngine.opsPerSec;
  ctx.facts["peers.casbinOps"] = rCasbin.opsPerSec;
  ctx.facts["peers.cedarOps"] = rCedar.opsPerSec;
  ctx.facts["peers.plainOps"] = rPlain.opsPerSec;
  ctx.facts["peers.naiveOps"] = rNaive.opsPerSec;
  return rows;
}
