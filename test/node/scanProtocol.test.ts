// The cloud node's scan protocol (N40–N52): each answer is what `rsop decide` answers for the same
// request with `node` filled in from the node's contact state, byte for byte.
import { describe, expect, test } from "vitest";
import { AnswerBuffer } from "../../src/adapters/cli/answerBuffer.js";
import { lineAnswerer } from "../../src/adapters/cli/decideCommand.js";
import { type Engine, loadEngineOrThrow } from "../../src/index.js";
import { ContactState } from "../../src/node/contact.js";
import { MAX_SCAN_LINE_BYTES, ScanAnswerer, ScanLines } from "../../src/node/scanProtocol.js";
import { type Draft, T, cardAt, pinAt, rawBuilding } from "../scenarios/fixture.js";

const KILL = 259_200;
const NOON = Date.parse(T.WED_NOON);
const enc = new TextEncoder();

function engineOf(edit?: (d: Draft) => void): Engine {
  return loadEngineOrThrow(rawBuilding(edit));
}

/** What `rsop decide` answers for `req` as input line `line` (no end of line). */
function rsopDecide(engine: Engine, req: unknown, line: number): string {
  const out = new AnswerBuffer();
  lineAnswerer({ kind: "system", engine }).value(req, line, out);
  return out.take().toString("utf8").replace(/\n$/, "");
}

/** A node at `engine` whose clock reads `clock.ms`. */
function node(engine: Engine, clock = { ms: NOON }) {
  const contact = new ContactState({ now: () => clock.ms });
  const answers: string[] = [];
  const lines = new ScanLines(new ScanAnswerer(engine, contact), (a) => answers.push(a));
  /** Feeds `input` (in chunks of `chunk` bytes), ends it, and hands back the answers. */
  const run = (input: string | Uint8Array, chunk = 1 << 16): string[] => {
    answers.length = 0;
    const bytes = typeof input === "string" ? enc.encode(input) : input;
    for (let i = 0; i < bytes.length; i += chunk) lines.push(bytes.subarray(i, i + chunk));
    lines.end();
    return [...answers];
  };
  return { contact, lines, answers, run, clock };
}

const jsonl = (...scans: unknown[]) => `${scans.map((s) => JSON.stringify(s)).join("\n")}\n`;
const reasons = (answers: readonly string[]) => answers.map((a) => (JSON.parse(a) as { reason?: string }).reason);

const ALICE = cardAt("door-front", T.WED_NOON, 17, 1001);
const BOB = cardAt("door-front", T.WED_NOON, 17, 1002);
const ECARD = cardAt("door-front", T.WED_NOON, 17, 4242);

describe("scan protocol", () => {
  test("online: every answer is rsop decide's, node online (N44, N45)", () => {
    const engine = engineOf();
    const n = node(engine);
    n.contact.contact(NOON - 3_600_000);
    const scans = [ALICE, BOB, ECARD, pinAt("door-front", T.WED_NOON, "1234"), { deviceId: "door-front", at: NOON }];
    const got = n.run(jsonl(...scans));
    expect(got).toEqual(scans.map((s, i) => rsopDecide(engine, { ...s, node: { online: true } }, i + 1)));
    expect(reasons(got)).toEqual(["allowed", "noActiveRule", "unknownCredential", "allowed", undefined]);
    expect(JSON.parse(got[4]!)).toMatchObject({ line: 5, error: { message: "invalid request" } });
  });

  test("offline within the kill timer: decided normally, offline seconds from the last contact (N40)", () => {
    const engine = engineOf();
    const n = node(engine);
    n.contact.contact(NOON - KILL * 1000);
    n.contact.lost();
    const got = n.run(jsonl(ALICE, BOB));
    const offline = { online: false, offlineSeconds: KILL, timeKnown: true };
    expect(got).toEqual([
      rsopDecide(engine, { ...ALICE, node: offline }, 1),
      rsopDecide(engine, { ...BOB, node: offline }, 2),
    ]);
    expect(reasons(got)).toEqual(["allowed", "noActiveRule"]);
  });

  test("offline beyond the kill timer: e-cards only (N40)", () => {
    const engine = engineOf();
    const n = node(engine);
    // 1 ms past the kill timer is still KILL whole seconds; 1 s past it is beyond.
    n.contact.contact(NOON - KILL * 1000 - 999);
    n.contact.lost();
    expect(reasons(n.run(jsonl(ALICE)))).toEqual(["allowed"]);
    n.contact.contact(NOON - KILL * 1000 - 1000);
    n.contact.lost();
    const got = n.run(jsonl(ALICE, ECARD));
    const offline = { online: false, offlineSeconds: KILL + 1, timeKnown: true };
    // One stream: its lines are numbered on from the first run.
    expect(got).toEqual([
      rsopDecide(engine, { ...ALICE, node: offline }, 2),
      rsopDecide(engine, { ...ECARD, node: offline }, 3),
    ]);
    expect(reasons(got)).toEqual(["offlineEcardOnly", "ecard"]);
  });

  test.each([
    [0, ["offlineEcardOnly", "offlineEcardOnly", "ecard"]],
    [1, ["offline24x7", "offlineNot24x7", "ecard"]],
    [2, ["offlineAnySchedule", "offlineAnySchedule", "ecard"]],
  ] as const)("offlinePolicy %i with the clock unreliable (N41)", (policy, expected) => {
    const engine = engineOf((d) => {
      d.node("node-a").offlinePolicy = policy;
    });
    const n = node(engine);
    n.contact.contact(NOON - 60_000);
    n.contact.lost();
    n.contact.setTimeReliable(false);
    const got = n.run(jsonl(ALICE, BOB, ECARD));
    const offline = { online: false, offlineSeconds: 60, timeKnown: false };
    expect(got).toEqual([ALICE, BOB, ECARD].map((s, i) => rsopDecide(engine, { ...s, node: offline }, i + 1)));
    expect(reasons(got)).toEqual(expected);
  });

  test("at omitted: the node's clock is the scan's instant (N46)", () => {
    const engine = engineOf();
    const n = node(engine);
    n.contact.contact(NOON - KILL * 1000);
    n.contact.lost();
    const { at: _, ...scan } = ALICE;
    let got = n.run(jsonl(scan));
    const offline = { online: false, offlineSeconds: KILL, timeKnown: true };
    expect(got).toEqual([rsopDecide(engine, { ...scan, at: NOON, node: offline }, 1)]);
    expect(reasons(got)).toEqual(["allowed"]);
    n.clock.ms = NOON + 1000;
    got = n.run(jsonl(scan));
    expect(got).toEqual([
      rsopDecide(engine, { ...scan, at: NOON + 1000, node: { ...offline, offlineSeconds: KILL + 1 } }, 2),
    ]);
    expect(reasons(got)).toEqual(["offlineEcardOnly"]);
  });

  test("a scan that names a node state is refused, the stream goes on (N47)", () => {
    const n = node(engineOf());
    n.contact.contact(NOON);
    const got = n.run(jsonl({ ...ALICE, node: { online: true } }, { ...ALICE, node: null }, ALICE));
    expect(got.slice(0, 2).map((a) => JSON.parse(a))).toEqual(
      [1, 2].map((line) => ({
        line,
        error: {
          message: "invalid request",
          issues: [{ path: "node", message: "Must be absent: the node fills in its own state." }],
        },
      })),
    );
    expect(reasons(got.slice(2))).toEqual(["allowed"]);
  });

  test("malformed lines answer one error line each, in order; blank lines none (N49)", () => {
    const engine = engineOf();
    const n = node(engine);
    n.contact.contact(NOON);
    const input = [
      JSON.stringify(ALICE),
      "not json 1234",
      "[1]",
      JSON.stringify({ deviceId: "door-front", at: "2026-03-04T12:00:00", pin: "1234" }),
      "   ",
      '{"deviceId":"door-front","pin":"1234"',
      JSON.stringify(BOB),
    ].join("\n");
    const got = n.run(input);
    expect(got.map((a) => (JSON.parse(a) as { line: number }).line)).toEqual([1, 2, 3, 4, 6, 7]);
    expect(JSON.parse(got[1]!)).toEqual({ line: 2, error: { message: "invalid JSON", issues: [] } });
    // The input's text (a PIN here) never appears in an answer.
    expect(got[1]).not.toContain("1234");
    expect(got[4]).not.toContain("1234");
    expect(got[2]).toBe(rsopDecide(engine, [1], 3));
    expect(got[3]).toBe(rsopDecide(engine, { deviceId: "door-front", at: "2026-03-04T12:00:00", pin: "1234" }, 4));
    expect(reasons([got[0]!, got[4]!, got[5]!])).toEqual(["allowed", undefined, "noActiveRule"]);
  });

  test("a line over 64 KiB is refused as soon as it is too long, never held; the next line is answered (N50)", () => {
    const n = node(engineOf());
    n.contact.contact(NOON);
    const scan = JSON.stringify(ALICE);
    // Exactly the limit: answered.
    const full = scan + " ".repeat(MAX_SCAN_LINE_BYTES - scan.length);
    expect(reasons(n.run(`${full}\n`, 1000))).toEqual(["allowed"]);
    // One byte more, fed in 1 KiB chunks: the error line comes out before the line ends.
    n.answers.length = 0;
    const long = enc.encode(`${full} `);
    for (let i = 0; i < long.length; i += 1024) n.lines.push(long.subarray(i, i + 1024));
    expect(n.answers.map((a) => JSON.parse(a))).toEqual([
      { line: 2, error: { message: `line longer than ${MAX_SCAN_LINE_BYTES} bytes`, issues: [] } },
    ]);
    // Many more megabytes of the same line add nothing; then the next line is line 3.
    const junk = new Uint8Array(1 << 20).fill(0x20);
    for (let i = 0; i < 8; i++) n.lines.push(junk);
    n.lines.push(enc.encode(`\n${scan}\n`));
    n.lines.end();
    expect(n.answers).toHaveLength(2);
    expect(JSON.parse(n.answers[1]!)).toMatchObject({ line: 3, reason: "allowed" });
  });

  test("line ends \\n, \\r\\n and a lone \\r, split anywhere; a byte order mark at the start (N48)", () => {
    const engine = engineOf();
    const a = JSON.stringify(pinAt("door-front", T.WED_NOON, "1234"));
    const input = `\ufeff${a}\r\n${a}\r${a}\n\r\n${a}`;
    for (const chunk of [1, 2, 3, 7, 1 << 16]) {
      const n = node(engine);
      n.contact.contact(NOON);
      const got = n.run(input, chunk);
      expect(got.map((x) => JSON.parse(x) as { line: number; reason: string }).map((x) => [x.line, x.reason])).toEqual([
        [1, "allowed"],
        [2, "allowed"],
        [3, "allowed"],
        [5, "allowed"],
      ]);
    }
  });

  test("a character split across chunks is read whole (N48)", () => {
    const n = node(engineOf());
    n.contact.contact(NOON);
    const got = n.run(`${JSON.stringify({ deviceId: "dør-ø", at: T.WED_NOON, pin: "1234" })}\n`, 1);
    expect(JSON.parse(got[0]!)).toMatchObject({ line: 1, reason: "unknownDevice" });
  });
});

describe("contact state", () => {
  test("never in contact: offline with the time unknown, whatever the clock (N43)", () => {
    const engine = engineOf();
    const n = node(engine);
    expect(n.contact.nodeStateAt(NOON)).toEqual({ online: false, timeKnown: false });
    expect(reasons(n.run(jsonl(ALICE, ECARD)))).toEqual(["offlineEcardOnly", "ecard"]);
  });

  test("restored from its record: offline until contact, counted from the persisted last contact (N43)", () => {
    const first = new ContactState({ now: () => NOON - 7_200_000 });
    first.contact();
    first.setTimeReliable(false);
    const record = first.record();
    expect(record).toEqual({ lastContactMs: NOON - 7_200_000, timeReliable: false });
    const again = new ContactState({ now: () => NOON, record });
    expect(again.online).toBe(false);
    expect(again.nodeStateAt(NOON)).toEqual({ online: false, offlineSeconds: 7200, timeKnown: false });
    again.setTimeReliable(true);
    again.contact();
    expect(again.nodeStateAt(NOON + 5000)).toEqual({ online: true });
    again.lost();
    expect(again.lastContactMs).toBe(NOON);
    expect(again.nodeStateAt(NOON + 5999)).toEqual({ online: false, offlineSeconds: 5, timeKnown: true });
  });

  test("a scan before the last contact is 0 seconds offline; a clock set back is believed (N42)", () => {
    const c = new ContactState({ now: () => NOON });
    c.contact(NOON);
    c.lost();
    expect(c.nodeStateAt(NOON - 10_000)).toEqual({ online: false, offlineSeconds: 0, timeKnown: true });
    c.contact(NOON - 60_000);
    c.lost();
    expect(c.nodeStateAt(NOON)).toEqual({ online: false, offlineSeconds: 60, timeKnown: true });
  });
});
