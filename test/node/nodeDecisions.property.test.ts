// The cloud node decides as the engine does (N40–N47): for generated snapshots, scans and contact
// histories (contact and loss at random instants, the clock reliable or not, the node's clock moving),
// every answer of the scan protocol is `decide` of another engine on the same snapshot, with `node`
// worked out here from the history by SPEC §14's formula, written out plainly.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type Engine, createEngine } from "../../src/evaluate/index.js";
import { loadEngineOrThrow } from "../../src/index.js";
import { type SystemSnapshotInput, parseInstant } from "../../src/model/index.js";
import { ContactState } from "../../src/node/contact.js";
import { ScanAnswerer, ScanLines } from "../../src/node/scanProtocol.js";
import { DEFAULT_KILL_TIMER, snapshotAndRequestsArb } from "../arbitraries/index.js";
import { NUM_RUNS, REPLAY, TIMEOUT, parseOrFail, plain } from "../property/support.js";

/** How long before a scan's instant: fixed, or around the kill timer of one of the snapshot's nodes. */
type Delta =
  | { readonly kind: "fixed"; readonly ms: number }
  | { readonly kind: "kill"; readonly nodePick: number; readonly offMs: number };

/** An instant relative to some scan's `at` (ref): `delta` before it (after it when negative). */
interface Relative {
  readonly ref: number;
  readonly delta: Delta;
}

type Step =
  | ({ readonly kind: "contact" } & Relative)
  | { readonly kind: "lost" }
  | { readonly kind: "reliable"; readonly value: boolean }
  | ({ readonly kind: "clock" } & Relative)
  | { readonly kind: "scan"; readonly ref: number; readonly dropAt: boolean; readonly keepNode: boolean }
  /** Contact `delta` before scan `ref`'s instant, lost, the clock at that instant, then the scan. */
  | ({ readonly kind: "episode"; readonly dropAt: boolean } & Relative);

const deltaArb: fc.Arbitrary<Delta> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(0, 60, 300, 900, 3600, 86_400), fc.constantFrom(-1000, -1, 0, 1, 999, 1000, 1001))
      .map(([sec, ms]) => ({ kind: "fixed" as const, ms: sec * 1000 + ms })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: -86_400_000, max: 400_000_000 }).map((ms) => ({ kind: "fixed" as const, ms })),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("kill" as const),
      nodePick: fc.nat(),
      offMs: fc.constantFrom(-1000, -1, 0, 1, 499, 500, 999, 1000, 1001),
    }),
  },
);

const relativeArb = fc.record({ ref: fc.nat(), delta: deltaArb });
const dropAtArb = fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: relativeArb.map((r) => ({ kind: "contact" as const, ...r })) },
  { weight: 3, arbitrary: fc.constant({ kind: "lost" as const }) },
  { weight: 1, arbitrary: fc.boolean().map((value) => ({ kind: "reliable" as const, value })) },
  { weight: 2, arbitrary: relativeArb.map((r) => ({ kind: "clock" as const, ...r })) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("scan" as const),
      ref: fc.nat(),
      dropAt: dropAtArb,
      keepNode: fc.oneof({ weight: 15, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.tuple(relativeArb, dropAtArb).map(([r, dropAt]) => ({ kind: "episode" as const, ...r, dropAt })),
  },
);

/** The kill timers of the snapshot's nodes (the default for a node without one). */
function killTimers(input: unknown): number[] {
  const nodes = (input as { cloudNodes?: { killTimer?: number }[] }).cloudNodes ?? [];
  const timers = nodes.map((n) => n.killTimer ?? DEFAULT_KILL_TIMER);
  return timers.length > 0 ? timers : [DEFAULT_KILL_TIMER];
}

/** When a scan's `at` is no instant, history instants relative to it are relative to this one. */
const FALLBACK_MS = Date.parse("2026-03-04T17:00:00Z");

/** A generated request as a line of JSON would carry it (null when it has no JSON form). */
function asJson(req: unknown): unknown {
  try {
    const text = JSON.stringify(req);
    return text === undefined ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The history as SPEC §14 reads it, written out plainly, beside the node under test. */
class Run {
  online = false;
  lastContact: number | null = null;
  reliable = true;
  clock = FALLBACK_MS;
  lineNo = 0;
  readonly contact = new ContactState({ now: () => this.clock });
  readonly answers: string[] = [];
  readonly lines: ScanLines;
  readonly reference: Engine;
  readonly scans: unknown[];
  readonly timers: number[];

  constructor(input: SystemSnapshotInput, requests: readonly unknown[]) {
    this.reference = createEngine(parseOrFail(input));
    this.lines = new ScanLines(new ScanAnswerer(loadEngineOrThrow(input), this.contact), (a) => this.answers.push(a));
    this.scans = requests.map(asJson);
    this.timers = killTimers(input);
  }

  /** The instant `r` names. */
  at(r: Relative): number {
    const scan = this.scans[r.ref % this.scans.length];
    const parsed = isObject(scan) ? parseInstant(scan.at) : Number.NaN;
    const base = Number.isNaN(parsed) ? FALLBACK_MS : parsed;
    const d = r.delta;
    return base - (d.kind === "fixed" ? d.ms : this.timers[d.nodePick % this.timers.length]! * 1000 + d.offMs);
  }

  step(step: Step): void {
    if (step.kind === "contact") this.contacted(this.at(step));
    else if (step.kind === "lost") this.lost();
    else if (step.kind === "reliable") {
      this.contact.setTimeReliable(step.value);
      this.reliable = step.value;
    } else if (step.kind === "clock") this.clock = this.at(step);
    else if (step.kind === "scan") this.scan(step.ref, step.dropAt, step.keepNode);
    else {
      this.contacted(this.at(step));
      this.lost();
      this.clock = this.at({ ref: step.ref, delta: { kind: "fixed", ms: 0 } });
      this.scan(step.ref, step.dropAt, false);
    }
  }

  contacted(at: number): void {
    this.contact.contact(at);
    this.online = true;
    this.lastContact = at;
  }

  lost(): void {
    this.contact.lost();
    this.online = false;
  }

  /** SPEC §14: online; else offline since the last contact, the time known unless the clock is unreliable. */
  nodeAt(atMs: number): Record<string, unknown> {
    if (this.online) return { online: true };
    if (this.lastContact === null) return { online: false, timeKnown: false };
    const offlineSeconds = Math.max(0, Math.floor((atMs - this.lastContact) / 1000));
    return { online: false, offlineSeconds, timeKnown: this.reliable };
  }

  /** Scan `ref` through the protocol; its answer against decide of the reference engine. */
  scan(ref: number, dropAt: boolean, keepNode: boolean): void {
    const generated = this.scans[ref % this.scans.length];
    if (generated === null) return;
    let built: unknown = generated;
    if (isObject(generated)) {
      const { node, at, ...rest } = generated;
      built = { ...rest, ...(dropAt ? {} : { at }), ...(keepNode && node !== undefined ? { node } : {}) };
    }
    const text = JSON.stringify(built);
    // The scan as the line carries it (a key whose value is undefined is no key).
    const scan: unknown = JSON.parse(text);
    const line = ++this.lineNo;
    this.answers.length = 0;
    this.lines.push(new TextEncoder().encode(`${text}\n`));
    expect(this.answers).toHaveLength(1);
    const answer = JSON.parse(this.answers[0]!) as Record<string, unknown>;
    const why = `scan ${text}, answer ${this.answers[0]}`;
    const refused = { line, error: { message: "invalid request" } };
    if (isObject(scan) && Object.hasOwn(scan, "node")) {
      expect(answer, why).toMatchObject(refused);
      return;
    }
    // The request the node stands for: `at` its clock when the scan has none; `node` from the history.
    let req: unknown = scan;
    if (isObject(scan)) {
      const at = Object.hasOwn(scan, "at") ? scan.at : this.clock;
      const atMs = parseInstant(at);
      req = { ...scan, at, ...(Number.isNaN(atMs) ? {} : { node: this.nodeAt(atMs) }) };
    }
    const d = plain(this.reference.decide(req));
    if (d.reason === "badRequest") expect(answer, why).toMatchObject(refused);
    else expect(answer, why).toStrictEqual({ line, ...d });
  }
}

describe("cloud node decisions (differential against decide with the node state worked out by hand)", () => {
  test(
    "every answer is decide's on the same snapshot, node from the contact history",
    () => {
      fc.assert(
        fc.property(
          snapshotAndRequestsArb({ minRequests: 1, maxRequests: 8 }),
          fc.array(stepArb, { minLength: 1, maxLength: 30 }),
          ({ snapshot: input, requests }, steps) => {
            const run = new Run(input, requests);
            for (const step of steps) run.step(step);
          },
        ),
        { numRuns: NUM_RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );
});
