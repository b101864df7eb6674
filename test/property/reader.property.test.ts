// Reader handles and columnar batches (issue 19) against decide: for generated snapshots and
// requests, every request a handle method can express gives, through engine.reader(deviceId), the
// decision engine.decide gives, field for field (into a fresh object and into a stale `out`); every
// card-number request in a batch gives decide's outcome, reason and deciding rule, in row order,
// whether the batch is decided row by row (short) or grouped by device (long). A handle taken before
// a live system's changes answers as the live engine's decide after each of them.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type Engine, createEngine } from "../../src/evaluate/index.js";
import type { ReaderHandle } from "../../src/evaluate/reader.js";
import { type Operation, createLiveSystem, seededIds } from "../../src/live/index.js";
import {
  type Decision,
  OUTCOME_CODES,
  REASONS,
  type SystemSnapshot,
  parseInstant,
  requestIssues,
} from "../../src/model/index.js";
import {
  type OperationSpec,
  operationSpecArb,
  resolveOperation,
  snapshotAndRequestsArb,
} from "../arbitraries/index.js";
import { FIELDS, NUM_RUNS, REPLAY, TIMEOUT, parseOrFail, plain, staleDecision } from "./support.js";

/** The live-system property replays operations (about 20 ms a run): a quarter of the runs, at least 30. */
const LIVE_RUNS = Math.max(30, Math.ceil(NUM_RUNS / 4));

function assertSame(what: string, request: unknown, actual: Decision, expected: Decision): void {
  const a = plain(actual);
  const e = plain(expected);
  const diffs = FIELDS.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(e[k]));
  if (diffs.length > 0 || Object.keys(a).length !== Object.keys(e).length)
    throw new Error(
      `${what}: differs in ${diffs.join(", ")}\n  request: ${JSON.stringify(request)}\n  actual:   ${JSON.stringify(a)}\n  expected: ${JSON.stringify(e)}`,
    );
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A request's `at` as a handle's epoch ms (a string that is no instant becomes NaN: badRequest either way). */
function atMs(at: unknown): number {
  if (typeof at === "number") return at;
  return parseInstant(at);
}

/** A `wiegand` string as a handle's bits: a character other than 0 and 1 becomes 2 (badRequest either way). */
function bitsOf(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => (c === "0" ? 0 : c === "1" ? 1 : 2));
}

/** How a handle method decides `r`, or null when no method expresses it (offline node, a node given, an `input`, …). */
type Scan = ((h: ReaderHandle, out?: Decision) => Decision) & { method?: string };

function named(method: string, scan: Scan): Scan {
  scan.method = method;
  return scan;
}

function scanOf(r: unknown): Scan | null {
  // A row names its device by index: a request with an empty device id (malformed, badRequest) has no row.
  if (!isObject(r) || typeof r.deviceId !== "string" || r.deviceId === "") return null;
  const node = r.node;
  if (node !== undefined && node !== null && !(isObject(node) && node.online === true)) return null;
  if (typeof r.at !== "number" && typeof r.at !== "string") return null;
  const at = atMs(r.at);
  const pin = r.pin === undefined || r.pin === null ? null : r.pin;
  if (pin !== null && typeof pin !== "string") return null;
  const cred = r.credential;
  if (cred === undefined || cred === null) return pin === null ? null : named("pin", (h, out) => h.pin(pin, at, out));
  if (!isObject(cred)) return null;
  const kinds =
    (cred.wiegand !== undefined ? 1 : 0) +
    (cred.credentialNumber !== undefined ? 1 : 0) +
    (cred.mobile !== undefined ? 1 : 0);
  if (kinds !== 1) return null;
  if (cred.wiegand !== undefined) {
    if (typeof cred.wiegand !== "string" || cred.wiegand.length === 0) return null;
    const bits = bitsOf(cred.wiegand);
    return pin === null
      ? named("wiegand", (h, out) => h.wiegand(bits, at, out))
      : named("wiegandAndPin", (h, out) => h.wiegandAndPin(bits, pin, at, out));
  }
  if (cred.credentialNumber !== undefined) {
    const cn = cred.credentialNumber as number;
    const fc = cred.facilityCode === undefined ? null : (cred.facilityCode as number | null);
    return pin === null
      ? named("card", (h, out) => h.card(cn, fc, at, out))
      : named("cardAndPin", (h, out) => h.cardAndPin(cn, fc, pin, at, out));
  }
  const kind = cred.mobile as "touch" | "token";
  const id = cred.credentialId as string;
  return pin === null
    ? named("mobile", (h, out) => h.mobile(kind, id, at, out))
    : named("mobileAndPin", (h, out) => h.mobileAndPin(kind, id, pin, at, out));
}

/** Checks every expressible request of `requests` through a handle of its device; returns how many it checked. */
function checkHandles(
  engine: Engine,
  requests: readonly unknown[],
  handles: Map<string, ReaderHandle | null>,
  what: string,
  seen?: Map<string, number>,
): number {
  let checked = 0;
  for (const r of requests) {
    const scan = scanOf(r);
    if (scan === null) continue;
    const req = r as Json;
    const key = `${req.deviceId as string}\u0000${String(req.input)}`;
    if (!handles.has(key))
      handles.set(
        key,
        engine.reader(req.deviceId as string, req.input === undefined ? undefined : { input: req.input as never }),
      );
    const h = handles.get(key)!;
    const expected = engine.decide(r);
    if (h === null) {
      // No handle for an unknown device: decide says so, unless the request is malformed anyway.
      if (expected.reason !== "unknownDevice" && !(expected.reason === "badRequest" && requestIssues(r).length > 0))
        throw new Error(`${what}: no handle for ${JSON.stringify(req.deviceId)} but decide says ${expected.reason}`);
      continue;
    }
    assertSame(`${what}: handle`, r, scan(h), expected);
    const key2 = `${scan.method} ${expected.outcome}`;
    seen?.set(key2, (seen.get(key2) ?? 0) + 1);
    const out = staleDecision();
    const got = scan(h, out);
    if (got !== out) throw new Error(`${what}: the handle returned another object than out for ${JSON.stringify(r)}`);
    assertSame(`${what}: handle into a stale out`, r, got, expected);
    checked++;
  }
  return checked;
}

/** A batch row for `r` (a card-number request without PIN, node online), or null. */
interface Row {
  readonly request: unknown;
  readonly device: number;
  /** A number, or (CN5) a string: a wide number, or one that is no card number at all. */
  readonly card: number | string;
  readonly facility: number;
  readonly atMs: number;
  readonly input: number;
}

const INPUT_CODE: Record<string, number> = { wiegand: 0, unencryptedOsdp: 1, encryptedOsdp: 2 };

function rowOf(engine: Engine, r: unknown): Row | null {
  // A row names its device by index: a request with an empty device id (malformed, badRequest) has no row.
  if (!isObject(r) || typeof r.deviceId !== "string" || r.deviceId === "") return null;
  const node = r.node;
  if (node !== undefined && node !== null && !(isObject(node) && node.online === true)) return null;
  if (r.pin !== undefined && r.pin !== null) return null;
  const cred = r.credential;
  if (!isObject(cred) || cred.credentialNumber === undefined || cred.wiegand !== undefined || cred.mobile !== undefined)
    return null;
  if (typeof cred.credentialNumber !== "number" && typeof cred.credentialNumber !== "string") return null;
  const fc = cred.facilityCode;
  // -1 is the batch's "none" (RH7): a request's facilityCode -1 is malformed, so it has no row.
  if (fc !== undefined && fc !== null && (typeof fc !== "number" || fc === -1)) return null;
  if (typeof r.at !== "number" && typeof r.at !== "string") return null;
  const input =
    r.input === undefined ? 0 : typeof r.input === "string" && r.input in INPUT_CODE ? INPUT_CODE[r.input]! : 3;
  const index = engine.deviceIndex(r.deviceId);
  return {
    request: r,
    device: index < 0 ? engine.snapshot.devices.length + (r.deviceId.length % 3) : index,
    card: cred.credentialNumber,
    facility: fc === undefined || fc === null ? -1 : fc,
    atMs: atMs(r.at),
    input,
  };
}

/** Decides `rows` as one batch (with or without the input column) and compares each row with decide. */
function checkBatch(engine: Engine, rows: readonly Row[], withInput: boolean, what: string): void {
  const n = rows.length;
  const columns = {
    device: Uint32Array.from(rows, (r) => r.device),
    // A string card goes in the wideCard column (CN5); its card[i] is a value that must not be read.
    card: Float64Array.from(rows, (r) => (typeof r.card === "number" ? r.card : Number.NaN)),
    ...(rows.some((r) => typeof r.card === "string")
      ? { wideCard: rows.map((r) => (typeof r.card === "string" ? r.card : (n & 1) === 0 ? null : undefined)) }
      : {}),
    facility: Float64Array.from(rows, (r) => r.facility),
    atMs: Float64Array.from(rows, (r) => r.atMs),
    ...(withInput ? { input: Uint8Array.from(rows, (r) => r.input) } : {}),
  };
  // Stale values in the outputs, and one extra row that must stay untouched.
  const out = {
    outcome: new Uint8Array(n + 1).fill(7),
    reason: new Uint8Array(n + 1).fill(99),
    rule: new Int32Array(n + 1).fill(12345),
  };
  engine.decideBatch({ ...columns, length: n }, out);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    const request =
      withInput || (r.request as Json).input === undefined ? r.request : { ...(r.request as Json), input: undefined };
    const d = engine.decide(request);
    const got = {
      outcome: engine.outcomeCodes[out.outcome[i]!],
      reason: engine.reasonCodes[out.reason[i]!],
      rule: engine.ruleId(out.rule[i]!),
    };
    const want = { outcome: d.outcome, reason: d.reason, rule: d.activeRuleId };
    if (JSON.stringify(got) !== JSON.stringify(want) || (d.activeRuleId === null) !== (out.rule[i] === -1))
      throw new Error(
        `${what}: row ${i} of ${n} ${JSON.stringify(request)} gives ${JSON.stringify(got)} (rule index ${out.rule[i]}), decide ${JSON.stringify(want)}`,
      );
    expect(out.outcome[i]).toBe(OUTCOME_CODES.indexOf(d.outcome));
    expect(out.reason[i]).toBe(REASONS.indexOf(d.reason));
  }
  expect([out.outcome[n], out.reason[n], out.rule[n]]).toEqual([7, 99, 12345]);
}

/** Rows for every card of the snapshot at every device (some), at the instants of the generated rows. */
function cardRows(engine: Engine, s: SystemSnapshot, rows: readonly Row[], pick: number): Row[] {
  const out: Row[] = [];
  const instants = [...new Set(rows.map((r) => r.atMs))].slice(0, 3);
  if (instants.length === 0) instants.push(Date.parse("2026-04-15T14:15:00Z"));
  const cards = s.holders.flatMap((h) => h.credentials.filter((c) => c.credentialNumber !== null));
  for (const d of s.devices)
    for (const [k, c] of cards.entries())
      for (const at of instants) {
        const facility = (k + pick) % 5 === 0 ? -1 : (c.facilityCode ?? -1);
        const request = {
          deviceId: d.id,
          at,
          credential: { credentialNumber: c.credentialNumber!, facilityCode: facility < 0 ? null : facility },
        };
        out.push({
          request,
          device: engine.deviceIndex(d.id),
          card: c.credentialNumber!,
          facility,
          atMs: at,
          input: 0,
        });
      }
  return out;
}

describe("reader handles and batches (differential against decide)", () => {
  test(
    "RH1 a handle's methods equal decide on every field, into a fresh or a stale out",
    () => {
      let checked = 0;
      const seen = new Map<string, number>();
      fc.assert(
        fc.property(snapshotAndRequestsArb(), ({ snapshot: input, requests }) => {
          const engine = createEngine(parseOrFail(input));
          checked += checkHandles(engine, requests, new Map(), "handle", seen);
        }),
        { numRuns: NUM_RUNS, ...REPLAY },
      );
      if (process.env.RSOP_PROPERTY_VERBOSE === "1")
        process.stderr.write(`reader property: ${checked} scans, ${JSON.stringify([...seen].sort())}\n`);
      expect(checked).toBeGreaterThan(NUM_RUNS);
      // Every method ran (and some scans were allowed), unless the run is tiny.
      if (NUM_RUNS >= 50) {
        for (const method of ["card", "cardAndPin", "wiegand", "wiegandAndPin", "pin", "mobile", "mobileAndPin"])
          expect([...seen].filter(([k]) => k.startsWith(`${method} `)).length, method).toBeGreaterThan(0);
        expect([...seen].filter(([k]) => k.endsWith(" allowed")).length).toBeGreaterThan(0);
      }
    },
    TIMEOUT,
  );

  test(
    "RH2 RH3 handle arguments that make the equivalent request malformed are badRequest, as decide says",
    () => {
      const odd = fc.constantFrom<unknown>(
        Number.NaN,
        Infinity,
        -Infinity,
        -1,
        1.5,
        2 ** 53,
        -0,
        "12",
        null,
        undefined,
        4_102_444_800_000,
        4_102_444_799_999,
        0,
      );
      fc.assert(
        fc.property(
          snapshotAndRequestsArb({ maxRequests: 3 }),
          odd,
          odd,
          odd,
          fc.nat(),
          ({ snapshot: input, requests }, a, b, c, pick) => {
            const engine = createEngine(parseOrFail(input));
            const s = engine.snapshot;
            if (s.devices.length === 0) return;
            const deviceId = s.devices[pick % s.devices.length]!.id;
            const h = engine.reader(deviceId)!;
            const at = typeof c === "number" ? c : Date.parse("2026-04-15T14:15:00Z");
            const cases: [unknown, Decision][] = [
              [
                { deviceId, at: c, credential: { credentialNumber: a, facilityCode: b } },
                h.card(a as number, b as number, c as number),
              ],
              [
                { deviceId, at, credential: { credentialNumber: a, facilityCode: b }, pin: "1234" },
                h.cardAndPin(a as number, b as number, "1234", at),
              ],
              [{ deviceId, at: c, pin: "" }, h.pin("", c as number)],
              [{ deviceId, at: c, pin: "12a" }, h.pin("12a", c as number)],
              [{ deviceId, at, credential: { mobile: "touch", credentialId: "" } }, h.mobile("touch", "", at)],
              [{ deviceId, at, credential: { mobile: "nfc", credentialId: "x" } }, h.mobile("nfc" as never, "x", at)],
              [{ deviceId, at, credential: { wiegand: "01" } }, h.wiegand(Uint8Array.of(0, 1), at)],
              [{ deviceId, at, credential: { wiegand: "0".repeat(513) } }, h.wiegand(new Uint8Array(513), at)],
              [
                { deviceId, at, credential: { wiegand: "000000000" } },
                h.wiegand(Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0), at),
              ],
              [
                { deviceId, at, credential: { wiegand: "000000000" }, pin: "12a" },
                h.wiegandAndPin(Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0), "12a", at),
              ],
              [
                { deviceId, at, credential: { wiegand: "01" }, pin: "1234" },
                h.wiegandAndPin(Uint8Array.of(0, 1), "1234", at),
              ],
              [
                { deviceId, at: c, credential: { wiegand: "000000000" }, pin: null },
                h.wiegandAndPin(Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0), null as never, c as number),
              ],
              [
                { deviceId, at, credential: { mobile: "token", credentialId: "x" }, pin: "" },
                h.mobileAndPin("token", "x", "", at),
              ],
              [
                { deviceId, at, credential: { mobile: "nfc", credentialId: "x" }, pin: "1234" },
                h.mobileAndPin("nfc" as never, "x", "1234", at),
              ],
              [
                { deviceId, at: c, credential: { mobile: "touch", credentialId: "x" }, pin: "1234" },
                h.mobileAndPin("touch", "x", "1234", c as number),
              ],
            ];
            for (const [request, got] of cases) assertSame("odd arguments", request, got, engine.decide(request));
            // An input that is not one: every scan is badRequest, as decide says for a request with it.
            const bad = engine.reader(deviceId, { input: "rs485" as never })!;
            assertSame(
              "unknown input",
              requests[0],
              bad.card(1, null, at),
              engine.decide({ deviceId, at, input: "rs485", credential: { credentialNumber: 1 } }),
            );
            // No handle for an unknown device.
            expect(engine.reader(`${deviceId}-nope`)).toBeNull();
          },
        ),
        { numRuns: Math.ceil(NUM_RUNS / 3), ...REPLAY },
      );
    },
    TIMEOUT,
  );

  test(
    "RH5 RH6 RH7 decideBatch writes decide's outcome, reason and rule for every row, in row order (short and grouped batches)",
    () => {
      let grouped = 0;
      fc.assert(
        fc.property(
          snapshotAndRequestsArb({ maxRequests: 16 }),
          fc.nat(),
          fc.boolean(),
          ({ snapshot: input, requests }, pick, withInput) => {
            const engine = createEngine(parseOrFail(input));
            const rows = requests.map((r) => rowOf(engine, r)).filter((r): r is Row => r !== null);
            // Odd rows decide nothing as decide would not either: NaN and fractional numbers.
            const d0 = engine.snapshot.devices.length > 0 ? 0 : 1;
            const odd: Row[] = [
              {
                request: {
                  deviceId: engine.snapshot.devices[0]?.id ?? "none",
                  at: 1.5,
                  credential: { credentialNumber: 1 },
                },
                device: d0,
                card: 1,
                facility: -1,
                atMs: 1.5,
                input: 0,
              },
              {
                request: {
                  deviceId: engine.snapshot.devices[0]?.id ?? "none",
                  at: 0,
                  credential: { credentialNumber: 1, facilityCode: -2 },
                },
                device: d0,
                card: 1,
                facility: -2,
                atMs: 0,
                input: 0,
              },
            ];
            checkBatch(engine, [...rows, ...(d0 === 0 ? odd : [])], withInput, "short batch");
            // A long batch (grouped by device): the generated rows and every card at every device, shuffled.
            const all = [...rows, ...cardRows(engine, engine.snapshot, rows, pick)];
            const long: Row[] = [];
            for (let k = 0; long.length < 300 && all.length > 0; k++) long.push(all[(k * 7919 + pick) % all.length]!);
            if (long.length >= 256 && long.length >= engine.snapshot.devices.length) grouped++;
            checkBatch(engine, long, withInput, "long batch");
          },
        ),
        { numRuns: Math.ceil(NUM_RUNS / 2), ...REPLAY },
      );
      expect(grouped).toBeGreaterThan(0);
    },
    TIMEOUT,
  );

  test(
    "RH4 a handle taken before a live system's changes answers as the live engine after each of them",
    () => {
      let compared = 0;
      let recompiles = 0;
      const stepArb = fc.array(operationSpecArb, { minLength: 1, maxLength: 3 });
      fc.assert(
        fc.property(
          snapshotAndRequestsArb({ maxRequests: 8 }),
          fc.array(stepArb, { minLength: 3, maxLength: 25 }),
          fc.nat(),
          ({ snapshot: input, requests }, steps, seed) => {
            const made = createLiveSystem(input, { newId: seededIds(seed) });
            if (!made.ok) throw new Error("generated snapshot refused");
            const live = made.value;
            // Handles of every device (and of the generated requests' devices), taken once, up front.
            const handles = new Map<string, ReaderHandle | null>();
            for (const d of live.snapshot.devices) handles.set(`${d.id}\u0000undefined`, live.engine.reader(d.id));
            compared += checkHandles(live.engine, requests, handles, "before any change");
            for (const specs of steps) {
              const ops: Operation[] = specs.map((spec: OperationSpec) => resolveOperation(live.snapshot, spec));
              const compiled = live.engine.compiled_;
              const result = ops.length > 1 ? live.apply(ops) : live.apply(ops[0]!);
              if (!result.ok) continue;
              if (live.engine.compiled_ !== compiled) recompiles++;
              const what = `after ${JSON.stringify(ops).slice(0, 300)}`;
              compared += checkHandles(live.engine, requests, handles, what);
              // Every card of the current snapshot at every device that had a handle.
              const s = live.snapshot;
              const at = Date.parse("2026-04-15T14:15:00Z");
              for (const [key, h] of handles) {
                if (h === null) continue;
                const [deviceId, input] = key.split("\u0000") as [string, string];
                for (const holder of s.holders.slice(0, 4))
                  for (const c of holder.credentials)
                    if (c.credentialNumber !== null) {
                      const request = {
                        deviceId,
                        at,
                        credential: { credentialNumber: c.credentialNumber, facilityCode: c.facilityCode },
                        ...(input === "undefined" ? {} : { input }),
                      };
                      assertSame(
                        `${what}: card at a handle taken before`,
                        request,
                        h.card(c.credentialNumber, c.facilityCode, at),
                        live.engine.decide(request),
                      );
                      compared++;
                    }
              }
            }
          },
        ),
        { numRuns: LIVE_RUNS, ...REPLAY },
      );
      expect(compared).toBeGreaterThan(LIVE_RUNS * 10);
      // Some changes recompile everything (a new compiled system): handles followed those too.
      expect(recompiles).toBeGreaterThan(0);
    },
    60_000 + LIVE_RUNS * 500,
  );
});
