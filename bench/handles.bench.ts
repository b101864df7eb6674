// Scenario `handles` (issue 19): decisions without request objects, in one run.
//
// At L, over the decide scenario's pool (200,000 requests, every kind, random order): decide(request,
// out) as the yardstick; a reader handle per device (engine.reader) fed the same scans pre-resolved to
// the handle's arguments in arrays (handle, instant as epoch ms, Wiegand frame as bits; no lookup and
// no object per scan: a harness's figure, labelled so); the card-number scans of the pool as columns
// for engine.decideBatch (one batch of all of them, grouped by device, and 4,096-row batches); bytes
// allocated per decision for the handle (with `out`) and the batch, measured like memory.bench.ts
// (young-generation growth with no GC in the chunk, harness subtracted; needs --expose-gc).
//
// The peer world (peerWorld below): 1k holders, 50 groups, 200 doors, 500 weekly rules, 10k requests,
// measured as a user runs them. The floor is plainIndexed (bench/peers/naive.ts): one Map from device
// to its rules with windows as numbers and each holder's groups in a Set, given the scan already tied
// to a holder, the local wall time and the holder's attributes (PeerInput), paying a Map.get for the
// holder's groups and one for the door's rules. The reader handle side reads the same scan objects,
// finds its handle per call with one Map.get by door id and calls the scan's method with the card
// number (or frame, PIN, mobile id) and the instant in epoch ms: it does its own card lookup, zone
// offset and rule walk. decide(request, out) takes the requests as parsed JSON. Same run,
// interleaved rounds; the ratios are of each round's two sides.
import { GCProfiler, getHeapStatistics } from "node:v8";
import {
  type BatchColumns,
  type BatchOut,
  type Decision,
  type Engine,
  type ReaderHandle,
  createEngine,
  parseSnapshotOrThrow,
} from "../src/index.js";
import { type BatchResult, type Row, batchRow, fmtOps, log, sink, timeBatches, timeRounds } from "./benchUtil.js";
import { type PeerInput, type SizeSpec, exposedGc, fixture, generateBuilding, generateRequests } from "./fixtures.js";
import { plainIndexed } from "./peers/naive.js";
import type { ScenarioContext } from "./scenario.js";

/** Decisions per tinybench sample for the per-scan rows. */
const BATCH = 1_000;
/** Rows per batch in the chunked decideBatch row. */
const CHUNK = 4_096;

const OP_CARD = 0;
const OP_CARD_PIN = 1;
const OP_WIEGAND = 2;
const OP_PIN = 3;
const OP_MOBILE = 4;
const OP_WIEGAND_PIN = 5;
const OP_MOBILE_PIN = 6;

/** The handle method of a request: which of the seven. */
function opOf(r: Json): number {
  const c = r.credential as Json | undefined;
  const pin = r.pin !== undefined && r.pin !== null;
  if (c === undefined) return OP_PIN;
  if (c.wiegand !== undefined) return pin ? OP_WIEGAND_PIN : OP_WIEGAND;
  if (c.mobile !== undefined) return pin ? OP_MOBILE_PIN : OP_MOBILE;
  return pin ? OP_CARD_PIN : OP_CARD;
}

/** A pool of scans pre-resolved to reader-handle calls (what a gateway holds after reading its wire). */
interface Calls {
  readonly n: number;
  readonly handle: ReaderHandle[];
  readonly op: Uint8Array;
  readonly cn: Float64Array;
  /** -1: none (the handle gets null). */
  readonly fc: Float64Array;
  readonly pin: (string | null)[];
  readonly bits: (Uint8Array | null)[];
  readonly mobile: ("touch" | "token")[];
  readonly credentialId: (string | null)[];
  readonly at: Float64Array;
}

type Json = Record<string, unknown>;

function epochMs(at: unknown): number {
  return typeof at === "number" ? at : Date.parse(at as string);
}

/** The requests as handle calls; those no handle method expresses (none in these pools) are left out. */
export function resolveCalls(
  engine: Engine,
  requests: readonly unknown[],
  filter?: (r: Json) => boolean,
): { calls: Calls; requests: unknown[] } {
  const handles = new Map<string, ReaderHandle | null>();
  const kept: Json[] = [];
  for (const x of requests) {
    const r = x as Json;
    if (filter !== undefined && !filter(r)) continue;
    if (r.node !== undefined || r.input !== undefined) continue;
    const id = r.deviceId as string;
    if (!handles.has(id)) handles.set(id, engine.reader(id));
    if (handles.get(id) === null) continue;
    kept.push(r);
  }
  const n = kept.length;
  const calls: Calls = {
    n,
    handle: [],
    op: new Uint8Array(n),
    cn: new Float64Array(n).fill(-1),
    fc: new Float64Array(n).fill(-1),
    pin: [],
    bits: [],
    mobile: [],
    credentialId: [],
    at: new Float64Array(n),
  };
  kept.forEach((r, i) => {
    calls.handle.push(handles.get(r.deviceId as string)!);
    calls.at[i] = epochMs(r.at);
    const c = r.credential as Json | undefined;
    const pin = (r.pin as string | undefined) ?? null;
    calls.pin.push(pin);
    calls.bits.push(
      c?.wiegand === undefined ? null : Uint8Array.from(c.wiegand as string, (ch) => (ch === "1" ? 1 : 0)),
    );
    calls.mobile.push(c?.mobile === "touch" ? "touch" : "token");
    calls.credentialId.push(c?.mobile === undefined ? null : (c.credentialId as string));
    const op = opOf(r);
    calls.op[i] = op;
    if (c !== undefined && (op === OP_CARD || op === OP_CARD_PIN)) {
      calls.cn[i] = c.credentialNumber as number;
      calls.fc[i] = c.facilityCode === undefined || c.facilityCode === null ? -1 : (c.facilityCode as number);
    }
  });
  return { calls, requests: kept };
}

/** `count` handle calls from position `k` on (cycling), into `out`; returns the next position. */
export function runCalls(c: Calls, k: number, count: number, out: Decision): number {
  let acc = 0;
  const n = c.n;
  for (let i = 0; i < count; i++) {
    const h = c.handle[k]!;
    const op = c.op[k]!;
    let d: Decision;
    if (op === OP_CARD) {
      const fc = c.fc[k]!;
      d = h.card(c.cn[k]!, fc < 0 ? null : fc, c.at[k]!, out);
    } else if (op === OP_WIEGAND) d = h.wiegand(c.bits[k]!, c.at[k]!, out);
    else if (op === OP_CARD_PIN) {
      const fc = c.fc[k]!;
      d = h.cardAndPin(c.cn[k]!, fc < 0 ? null : fc, c.pin[k]!, c.at[k]!, out);
    } else if (op === OP_MOBILE) d = h.mobile(c.mobile[k]!, c.credentialId[k]!, c.at[k]!, out);
    else if (op === OP_PIN) d = h.pin(c.pin[k]!, c.at[k]!, out);
    else if (op === OP_WIEGAND_PIN) d = h.wiegandAndPin(c.bits[k]!, c.pin[k]!, c.at[k]!, out);
    else d = h.mobileAndPin(c.mobile[k]!, c.credentialId[k]!, c.pin[k]!, c.at[k]!, out);
    acc += d.reason.length;
    if (++k === n) k = 0;
  }
  sink.value += acc;
  return k;
}

// One loop per method, each its own function (as a gateway calls the method of its reader from its
// own code): a call site V8 inlines keeps the instant a double; one it does not inline boxes it.
function loopCard(c: Calls, k: number, count: number, out: Decision): number {
  let acc = 0;
  for (let i = 0; i < count; i++) {
    const fc = c.fc[k]!;
    acc += c.handle[k]!.card(c.cn[k]!, fc < 0 ? null : fc, c.at[k]!, out).reason.length;
    if (++k === c.n) k = 0;
  }
  sink.value += acc;
  return k;
}

function loopCardAndPin(c: Calls, k: number, count: number, out: Decision): number {
  let acc = 0;
  for (let i = 0; i < count; i++) {
    const fc = c.fc[k]!;
    acc += c.handle[k]!.cardAndPin(c.cn[k]!, fc < 0 ? null : fc, c.pin[k]!, c.at[k]!, out).reason.length;
    if (++k === c.n) k = 0;
  }
  sink.value += acc;
  return k;
}

function loopWiegand(c: Calls, k: number, count: number, out: Decision): number {
  let acc = 0;
  for (let i = 0; i < count; i++) {
    acc += c.handle[k]!.wiegand(c.bits[k]!, c.at[k]!, out).reason.length;
    if (++k === c.n) k = 0;
  }
  sink.value += acc;
  return k;
}

function loopMobile(c: Calls, k: number, count: number, out: Decision): number {
  let acc = 0;
  for (let i = 0; i < count; i++) {
    acc += c.handle[k]!.mobile(c.mobile[k]!, c.credentialId[k]!, c.at[k]!, out).reason.length;
    if (++k === c.n) k = 0;
  }
  sink.value += acc;
  return k;
}

function loopWiegandAndPin(c: Calls, k: number, count: number, out: Decision): number {
  let acc = 0;
  for (let i = 0; i < count; i++) {
    acc += c.handle[k]!.wiegandAndPin(c.bits[k]!, c.pin[k]!, c.at[k]!, out).reason.length;
    if (++k === c.n) k = 0;
  }
  sink.value += acc;
  return k;
}

function loopMobileAndPin(c: Calls, k: number, count: number, out: Decision): number {
  let acc = 0;
  for (let i = 0; i < count; i++) {
    acc += c.handle[k]!.mobileAndPin(c.mobile[k]!, c.credentialId[k]!, c.pin[k]!, c.at[k]!, out).reason.length;
    if (++k === c.n) k = 0;
  }
  sink.value += acc;
  return k;
}

function loopPin(c: Calls, k: number, count: number, out: Decision): number {
  let acc = 0;
  for (let i = 0; i < count; i++) {
    acc += c.handle[k]!.pin(c.pin[k]!, c.at[k]!, out).reason.length;
    if (++k === c.n) k = 0;
  }
  sink.value += acc;
  return k;
}

/** decide(request, out) over `pool`, cycled, `count` at a time from position `k`; returns the next position. */
function runDecide(engine: Engine, pool: readonly unknown[], k: number, count: number, out: Decision): number {
  let acc = 0;
  for (let i = 0; i < count; i++) {
    acc += engine.decide(pool[k], out).reason.length;
    if (++k === pool.length) k = 0;
  }
  sink.value += acc;
  return k;
}

/** The card-number scans of a pool (no PIN) as batch columns, in pool order. */
function columnsOf(engine: Engine, requests: readonly unknown[]): BatchColumns & { length: number } {
  const rows = requests.filter((x) => {
    const r = x as Json;
    const c = r.credential as Json | undefined;
    return (
      c !== undefined &&
      c.credentialNumber !== undefined &&
      r.pin === undefined &&
      r.node === undefined &&
      r.input === undefined
    );
  }) as Json[];
  const n = rows.length;
  const columns = {
    device: new Uint32Array(n),
    card: new Float64Array(n),
    facility: new Float64Array(n),
    atMs: new Float64Array(n),
    length: n,
  };
  rows.forEach((r, i) => {
    const c = r.credential as Json;
    columns.device[i] = engine.deviceIndex(r.deviceId as string);
    columns.card[i] = c.credentialNumber as number;
    columns.facility[i] = c.facilityCode === undefined || c.facilityCode === null ? -1 : (c.facilityCode as number);
    columns.atMs[i] = epochMs(r.at);
  });
  return columns;
}

function outOf(n: number): BatchOut {
  return { outcome: new Uint8Array(n), reason: new Uint8Array(n), rule: new Int32Array(n) };
}

/** Views of `columns` in `CHUNK`-row pieces (made once: the timed loop allocates nothing). */
function chunksOf(
  columns: BatchColumns & { length: number },
  out: BatchOut,
): { columns: BatchColumns; out: BatchOut }[] {
  const chunks: { columns: BatchColumns; out: BatchOut }[] = [];
  for (let from = 0; from + CHUNK <= columns.length; from += CHUNK) {
    const to = from + CHUNK;
    chunks.push({
      columns: {
        device: columns.device.subarray(from, to),
        card: columns.card.subarray(from, to),
        facility: columns.facility.subarray(from, to),
        atMs: columns.atMs.subarray(from, to),
      },
      out: {
        outcome: out.outcome.subarray(from, to),
        reason: out.reason.subarray(from, to),
        rule: out.rule.subarray(from, to),
      },
    });
  }
  return chunks;
}

// ---------------------------------------------------------------------------------------------------
// Allocation (as memory.bench.ts: young-generation growth over chunks that ran no GC)

type Gc = NonNullable<ReturnType<typeof exposedGc>>;

function bytesPerOp(gc: Gc, op: (n: number) => number, total: number): number {
  let chunk = 8_000;
  let done = 0;
  let bytes = 0;
  let discarded = 0;
  while (done < total) {
    gc({ type: "minor" });
    const profiler = new GCProfiler();
    profiler.start();
    const before = getHeapStatistics().used_heap_size;
    const ran = op(chunk);
    const after = getHeapStatistics().used_heap_size;
    if (profiler.stop().statistics.length > 0) {
      if (++discarded > 50) throw new Error("allocation harness: a GC ran during most chunks");
      chunk = Math.max(500, chunk >> 1);
      continue;
    }
    bytes += after - before;
    done += ran;
  }
  return bytes / done;
}

// ---------------------------------------------------------------------------------------------------

/** The peer world of issue 19: 1k holders, 50 groups, 500 weekly rules, 10k requests; 213 devices: 200 door readers, a lift reader and its 12 floor relays. */
export const PEER_WORLD: SizeSpec = {
  name: "S",
  holders: 1_000,
  devices: 213,
  rules: 500,
  groups: 50,
  zones: ["America/Chicago"],
  requests: 10_000,
};

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  const timing = { timeMs: ctx.quick ? 900 : 2_400, warmupMs: ctx.quick ? 200 : 300 };
  const rounds = ctx.quick ? 1 : 3;
  const roundsNote = (r: BatchResult) =>
    r.roundsOpsPerSec === undefined || rounds === 1
      ? ""
      : `; median of ${rounds} rounds (${r.roundsOpsPerSec.map((x) => fmtOps(x)).join(", ")})`;
  const gc = exposedGc();

  for (const size of ctx.sizes.filter((s) => s === "L" || ctx.sizes.length === 1 || ctx.quick)) {
    const f = fixture(size);
    const engine = f.engine;
    const { calls, requests } = resolveCalls(engine, f.set.requests);
    const out = engine.decide(requests[0]);
    const n = calls.n;
    log(`  handles ${size}: ${n.toLocaleString("en-US")} scans pre-resolved`);

    let kd = 0;
    const decideRun = () => {
      kd = runDecide(engine, requests, kd, BATCH, out);
    };
    let kh = 0;
    const handleRun = () => {
      kh = runCalls(calls, kh, BATCH, out);
    };
    const cards = resolveCalls(
      engine,
      requests,
      (r) => (r.credential as Json | undefined)?.credentialNumber !== undefined && r.pin === undefined,
    ).calls;
    let kc = 0;
    const cardRun = () => {
      kc = runCalls(cards, kc, BATCH, out);
    };
    const columns = columnsOf(engine, requests);
    const batchOut = outOf(columns.length);
    const whole = () => {
      engine.decideBatch(columns, batchOut);
      sink.value += batchOut.reason[0]!;
    };
    const chunks = chunksOf(columns, batchOut);
    let kk = 0;
    const chunked = () => {
      const c = chunks[kk]!;
      engine.decideBatch(c.columns, c.out);
      sink.value += c.out.reason[0]!;
      if (++kk === chunks.length) kk = 0;
    };

    // Check before timing: each way gives decide's reasons on these pools.
    for (let i = 0; i < Math.min(n, 20_000); i++) {
      const want = engine.decide(requests[i]).reason;
      runCalls(calls, i, 1, out);
      if (out.reason !== want)
        throw new Error(`handle disagrees with decide on ${JSON.stringify(requests[i])}: ${out.reason} vs ${want}`);
    }
    engine.decideBatch(columns, batchOut);
    const cardRequests = requests.filter((x) => {
      const r = x as Json;
      return (r.credential as Json | undefined)?.credentialNumber !== undefined && r.pin === undefined;
    });
    for (let i = 0; i < Math.min(columns.length, 20_000); i++)
      if (engine.reasonCodes[batchOut.reason[i]!] !== engine.decide(cardRequests[i]).reason)
        throw new Error(`decideBatch row ${i} disagrees with decide`);

    const poolNote = `${n.toLocaleString("en-US")} scans of every kind cycled (the decide pool)`;
    const rDecide = await timeRounds(`handles ${size} decide`, decideRun, BATCH, timing, rounds);
    rows.push(
      batchRow("handles", size, "decide(request, out)", rDecide, `${poolNote}; same run${roundsNote(rDecide)}`),
    );
    const rHandle = await timeRounds(`handles ${size} reader`, handleRun, BATCH, timing, rounds);
    rows.push(
      batchRow(
        "handles",
        size,
        "reader handle, out, pre-resolved arrays",
        rHandle,
        `${poolNote}; handle and arguments pre-resolved into arrays, no lookup per call (a harness's figure)${roundsNote(rHandle)}`,
      ),
    );
    log(`  handles ${size}: decide ${fmtOps(rDecide.opsPerSec)}, reader ${fmtOps(rHandle.opsPerSec)}`);
    const rCard = await timeRounds(`handles ${size} reader cards`, cardRun, BATCH, timing, rounds);
    rows.push(
      batchRow(
        "handles",
        size,
        "reader handle card(), out, pre-resolved arrays",
        rCard,
        `the pool's ${cards.n.toLocaleString("en-US")} card-number scans without PIN${roundsNote(rCard)}`,
      ),
    );
    const rWhole = await timeRounds(
      `handles ${size} batch`,
      whole,
      columns.length,
      { ...timing, minSamples: 5 },
      rounds,
    );
    rows.push(
      batchRow(
        "handles",
        size,
        "decideBatch, one batch",
        rWhole,
        `the same ${columns.length.toLocaleString("en-US")} card-number scans as one batch (grouped by device)${roundsNote(rWhole)}`,
      ),
    );
    const rChunk = await timeRounds(`handles ${size} batch chunks`, chunked, CHUNK, timing, rounds);
    rows.push(
      batchRow(
        "handles",
        size,
        `decideBatch, ${CHUNK.toLocaleString("en-US")}-row batches`,
        rChunk,
        `the same scans in ${chunks.length} batches (fewer rows than devices: row order)${roundsNote(rChunk)}`,
      ),
    );
    log(
      `  handles ${size}: cards ${fmtOps(rCard.opsPerSec)}, batch ${fmtOps(rWhole.opsPerSec)}, ${CHUNK}-row batches ${fmtOps(rChunk.opsPerSec)}`,
    );
    ctx.facts[`handles.${size}.decide`] = rDecide;
    ctx.facts[`handles.${size}.reader`] = rHandle;
    ctx.facts[`handles.${size}.batch`] = rWhole;

    if (gc !== null) {
      // The harness alone: the same loop shape calling a function that allocates nothing.
      const noopOut = out;
      let kn = 0;
      const noop = (count: number) => {
        let acc = 0;
        for (let i = 0; i < count; i++) {
          acc += noopOut.reason.length + calls.op[kn]!;
          if (++kn === n) kn = 0;
        }
        sink.value += acc;
        return count;
      };
      const harness = bytesPerOp(gc, noop, 200_000);
      const handleBytes =
        bytesPerOp(
          gc,
          (count) => {
            kh = runCalls(calls, kh, count, out);
            return count;
          },
          1_000_000,
        ) - harness;
      // Each method alone, from a loop of its own (as a gateway calls the method of its reader).
      const perMethod: string[] = [];
      let cardBytes = 0;
      for (const [name, op, loop] of [
        ["card", OP_CARD, loopCard],
        ["cardAndPin", OP_CARD_PIN, loopCardAndPin],
        ["wiegand", OP_WIEGAND, loopWiegand],
        ["mobile", OP_MOBILE, loopMobile],
        ["pin", OP_PIN, loopPin],
        ["wiegandAndPin", OP_WIEGAND_PIN, loopWiegandAndPin],
        ["mobileAndPin", OP_MOBILE_PIN, loopMobileAndPin],
      ] as const) {
        const only = resolveCalls(engine, requests, (r) => opOf(r) === op).calls;
        if (only.n === 0) continue;
        // Warm up first: until V8 optimizes the loop, the interpreter boxes every double it passes.
        let ko = loop(only, 0, 300_000, out);
        const b =
          bytesPerOp(
            gc,
            (count) => {
              ko = loop(only, ko, count, out);
              return count;
            },
            300_000,
          ) - harness;
        if (op === OP_CARD) cardBytes = b;
        perMethod.push(`${name} ${b.toFixed(2)} B`);
      }
      let kb = 0;
      const batchBytes = bytesPerOp(
        gc,
        () => {
          const c = chunks[kb]!;
          engine.decideBatch(c.columns, c.out);
          if (++kb === chunks.length) kb = 0;
          return CHUNK;
        },
        1_000_000,
      );
      const wholeBytes = bytesPerOp(
        gc,
        () => {
          engine.decideBatch(columns, batchOut);
          return columns.length;
        },
        1_000_000,
      );
      rows.push({
        section: "handles",
        size,
        name: "allocation: reader handle, out",
        value: `${handleBytes.toFixed(2)} B/decision`,
        note: `1,000,000 decisions of every kind from one loop (V8 may box the instant where it does not inline a method's call); each method from its own loop: ${perMethod.join(", ")}; harness ${harness.toFixed(3)} B/op subtracted`,
      });
      rows.push({
        section: "handles",
        size,
        name: "allocation: decideBatch",
        value: `${wholeBytes.toFixed(3)} B/decision`,
        note: `${CHUNK.toLocaleString("en-US")}-row batches: ${batchBytes.toFixed(3)} B/decision; nothing subtracted`,
      });
      log(
        `  handles ${size}: allocation handle ${handleBytes.toFixed(2)} B (${perMethod.join(", ")}), batch ${wholeBytes.toFixed(3)} B, chunks ${batchBytes.toFixed(3)} B per decision`,
      );
      ctx.facts[`handles.${size}.handleBytes`] = handleBytes;
      ctx.facts[`handles.${size}.cardBytes`] = cardBytes;
      ctx.facts[`handles.${size}.batchBytes`] = wholeBytes;
    } else rows.push({ section: "handles", size, name: "allocation", note: "skipped: run node with --expose-gc" });
    rows.push(
      target(
        `${size} reader handle (pre-resolved arrays) ≥ 3,000,000 decisions/s`,
        fmtOps(rHandle.opsPerSec),
        rHandle.opsPerSec >= 3e6,
      ),
    );
    rows.push(target(`${size} decideBatch ≥ 5,000,000 decisions/s`, fmtOps(rWhole.opsPerSec), rWhole.opsPerSec >= 5e6));
  }

  rows.push(...(await peerWorld(ctx.quick, timing.warmupMs, timing.timeMs, ctx.facts)));
  return rows;
}

/**
 * One scan of the peer world as a gateway holds it after reading its wire, and what the floor is
 * given for it: both sides of the comparison read their inputs from these same objects (one shape
 * for all of them), each paying its own lookups per call.
 */
interface PeerScan extends PeerInput {
  readonly op: number;
  readonly cardNumber: number;
  readonly facilityCode: number | null;
  readonly pin: string | null;
  readonly bits: Uint8Array | null;
  readonly mobile: "touch" | "token";
  readonly credentialId: string;
  /** The instant, epoch ms (what a gateway's clock gives). */
  readonly atMs: number;
}

/** The peer world's scans: the floor's PeerInput and the request's credential, instant as epoch ms. */
function peerScans(requests: readonly unknown[], peer: readonly PeerInput[]): PeerScan[] {
  return requests.map((x, i) => {
    const r = x as Json;
    const c = r.credential as Json | undefined;
    const p = peer[i]!;
    if (p.deviceId !== r.deviceId) throw new Error(`peer world: request ${i} and its PeerInput name other devices`);
    return {
      holderId: p.holderId,
      deviceId: p.deviceId,
      wd: p.wd,
      pwd: p.pwd,
      tod: p.tod,
      day: p.day,
      pday: p.pday,
      local: p.local,
      clock: p.clock,
      date: p.date,
      prevDate: p.prevDate,
      factor: p.factor,
      enabled: p.enabled,
      from: p.from,
      to: p.to,
      deviceAccepts: p.deviceAccepts,
      op: opOf(r),
      cardNumber: c?.credentialNumber === undefined ? -1 : (c.credentialNumber as number),
      facilityCode: c?.facilityCode === undefined ? null : (c.facilityCode as number | null),
      pin: (r.pin as string | undefined) ?? null,
      bits: c?.wiegand === undefined ? null : Uint8Array.from(c.wiegand as string, (ch) => (ch === "1" ? 1 : 0)),
      mobile: c?.mobile === "touch" ? "touch" : "token",
      credentialId: c?.mobile === undefined ? "" : (c.credentialId as string),
      atMs: epochMs(r.at),
    };
  });
}

/**
 * A gateway's call for one scan: its reader's handle found by door id (one `Map.get`, as the floor
 * finds its door's rules), then the method of the scan's kind with the scan's own fields.
 */
function scanOnce(handles: ReadonlyMap<string, ReaderHandle>, s: PeerScan, out: Decision): Decision {
  const h = handles.get(s.deviceId)!;
  switch (s.op) {
    case OP_CARD:
      return h.card(s.cardNumber, s.facilityCode, s.atMs, out);
    case OP_WIEGAND:
      return h.wiegand(s.bits!, s.atMs, out);
    case OP_CARD_PIN:
      return h.cardAndPin(s.cardNumber, s.facilityCode, s.pin!, s.atMs, out);
    case OP_MOBILE:
      return h.mobile(s.mobile, s.credentialId, s.atMs, out);
    case OP_PIN:
      return h.pin(s.pin!, s.atMs, out);
    case OP_WIEGAND_PIN:
      return h.wiegandAndPin(s.bits!, s.pin!, s.atMs, out);
    default:
      return h.mobileAndPin(s.mobile, s.credentialId, s.pin!, s.atMs, out);
  }
}

/**
 * The peer world (1k holders, 50 groups, 213 devices, 500 weekly rules, 10k requests), three ways
 * in interleaved rounds: the plain-JS floor (plainIndexed, given the scan already tied to a holder
 * and its local wall time; it finds the holder's groups and the door's rules with a `Map.get` each);
 * reader handles as a gateway uses them (scanOnce: a `Map.get` for the handle, the scan's fields as
 * arguments; the handle does its own card lookup, zone offset and rule walk); and `decide(request,
 * out)` on the requests as parsed JSON (ISO or epoch `at`). Pre-resolved handle arguments in arrays
 * (runCalls) are timed once beside them, labelled as such: a harness's figure, not a user's.
 */
async function peerWorld(
  quick: boolean,
  warmupMs: number,
  timeMs: number,
  facts: Record<string, unknown>,
): Promise<Row[]> {
  const rows: Row[] = [];
  const building = generateBuilding(PEER_WORLD, 0x0b1d_0019);
  const set = generateRequests(building.meta, PEER_WORLD.requests, 0x5eed_0019);
  const engine = createEngine(parseSnapshotOrThrow(building.snapshot));
  const floor = plainIndexed(JSON.parse(JSON.stringify(building.snapshot)) as unknown);
  const { calls, requests } = resolveCalls(engine, set.requests);
  if (calls.n !== set.requests.length)
    throw new Error(`peer world: ${set.requests.length - calls.n} requests no handle method expresses`);
  const scans = peerScans(requests, set.peer);
  const handles = new Map<string, ReaderHandle>();
  for (const s of scans) if (!handles.has(s.deviceId)) handles.set(s.deviceId, engine.reader(s.deviceId)!);
  const out = engine.decide(requests[0]);
  let agree = 0;
  for (let i = 0; i < scans.length; i++) {
    const want = engine.decide(requests[i]).reason;
    if (scanOnce(handles, scans[i]!, out).reason !== want)
      throw new Error(`peer world: the handle disagrees with decide on ${JSON.stringify(requests[i])}`);
    if ((out.outcome === "allowed") === floor(scans[i]!)) agree++;
  }
  const n = scans.length;
  let kf = 0;
  const floorRun = () => {
    let acc = 0;
    for (let i = 0; i < BATCH; i++) {
      if (floor(scans[kf]!)) acc++;
      if (++kf === n) kf = 0;
    }
    sink.value += acc;
  };
  let kh = 0;
  const handleRun = () => {
    let acc = 0;
    for (let i = 0; i < BATCH; i++) {
      acc += scanOnce(handles, scans[kh]!, out).reason.length;
      if (++kh === n) kh = 0;
    }
    sink.value += acc;
  };
  let kd = 0;
  const decideRun = () => {
    kd = runDecide(engine, requests, kd, BATCH, out);
  };
  let kp = 0;
  const preResolvedRun = () => {
    kp = runCalls(calls, kp, BATCH, out);
  };
  // Interleaved rounds, so that a change in the machine's load reaches every side alike; each ratio
  // is the median of the rounds' ratios (the sides of a round ran back to back, in an order that
  // rotates from round to round). On this shared machine one side alone swings by up to 2× over
  // seconds, so there are many short rounds rather than a few long ones.
  const sides = [
    { name: "floor", run: floorRun, results: [] as BatchResult[] },
    { name: "reader", run: handleRun, results: [] as BatchResult[] },
    { name: "decide", run: decideRun, results: [] as BatchResult[] },
  ];
  const worldRounds = quick ? 1 : 12;
  const roundMs = { timeMs: (4 * timeMs) / worldRounds, warmupMs: warmupMs / 2 };
  for (let i = 0; i < worldRounds; i++)
    for (let j = 0; j < sides.length; j++) {
      const side = sides[(i + j) % sides.length]!;
      side.results.push(await timeBatches(`peer world ${side.name} #${i + 1}`, side.run, BATCH, roundMs));
    }
  const rPre = await timeBatches("peer world reader, pre-resolved", preResolvedRun, BATCH, roundMs);
  const [base, handle, decided] = sides.map((s) => s.results) as [BatchResult[], BatchResult[], BatchResult[]];
  const mid = (rs: BatchResult[]) => [...rs].sort((a, b) => a.opsPerSec - b.opsPerSec)[(rs.length - 1) >> 1]!;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]!;
  const roundsNoteOf = (rs: BatchResult[]) =>
    rs.length === 1 ? "" : `; median of ${rs.length} rounds (${rs.map((r) => fmtOps(r.opsPerSec)).join(", ")})`;
  const world = "peer world";
  const worldNote = `${n.toLocaleString("en-US")} requests cycled`;
  rows.push(
    batchRow(
      "handles",
      world,
      "floor: plain Map + loop",
      mid(base),
      `${worldNote}; given the holder, local time and attributes; a Map.get each for the holder's groups and the door's rules${roundsNoteOf(base)}`,
    ),
  );
  rows.push(
    batchRow(
      "handles",
      world,
      "reader handle, out (Map.get of the handle per call)",
      mid(handle),
      `${worldNote}; the same scan objects: card number / frame / PIN / mobile id and epoch ms; agrees with the floor on allow/deny for ${((100 * agree) / n).toFixed(2)}%${roundsNoteOf(handle)}`,
    ),
  );
  rows.push(
    batchRow(
      "handles",
      world,
      "decide(request, out)",
      mid(decided),
      `${worldNote}; the requests as parsed JSON (at ISO or epoch ms)${roundsNoteOf(decided)}`,
    ),
  );
  rows.push(
    batchRow(
      "handles",
      world,
      "reader handle, out, pre-resolved arrays (harness figure, not a user's)",
      rPre,
      `${worldNote}; handle and arguments in arrays, no lookup per call; one round after the others`,
    ),
  );
  const ratios = handle.map((h, i) => h.opsPerSec / base[i]!.opsPerSec);
  const cpuRatios = handle.map((h, i) => h.opsPerCpuSec / base[i]!.opsPerCpuSec);
  const decideRatios = decided.map((d, i) => d.opsPerSec / base[i]!.opsPerSec);
  const ratio = median(ratios);
  const decideRatio = median(decideRatios);
  rows.push({
    section: "handles",
    size: world,
    name: "ratio reader handle / floor",
    value: `${ratio.toFixed(2)}×`,
    note: `median of the rounds' ratios (${ratios.map((x) => x.toFixed(2)).join(", ")}); per CPU-second ${median(cpuRatios).toFixed(2)}×`,
  });
  rows.push({
    section: "handles",
    size: world,
    name: "ratio decide(request, out) / floor",
    value: `${decideRatio.toFixed(2)}×`,
    note: `median of the rounds' ratios (${decideRatios.map((x) => x.toFixed(2)).join(", ")})`,
  });
  rows.push(target("peer world reader handle ≥ 2× the floor", `${ratio.toFixed(2)}×`, ratio >= 2));
  log(
    `  handles peer world: floor ${fmtOps(mid(base).opsPerSec)}, reader ${fmtOps(mid(handle).opsPerSec)}, decide ${fmtOps(mid(decided).opsPerSec)}, pre-resolved ${fmtOps(rPre.opsPerSec)}; ratios ${ratio.toFixed(2)}×, decide ${decideRatio.toFixed(2)}×`,
  );
  facts["handles.peer.ratio"] = ratio;
  facts["handles.peer.decideRatio"] = decideRatio;
  return rows;
}

function target(what: string, measured: string, met: boolean): Row {
  return { section: "handles", size: "-", name: `target: ${what}`, value: measured, note: met ? "met" : "MISSED" };
}
