// Card numbers past 2^53−1 (docs/semantics.md CN1–CN5): 56-bit 7-byte UIDs, 64-bit cards, 128-bit
// PIV-I and 200-bit FASC-N sized frames decode exactly and match their credentials end to end
// (decide, reader handles, batches, the naive reference), written as decimal strings.
import { describe, expect, test } from "vitest";
import { accessEvent } from "../../src/events/accessEvent.js";
import { createEngine } from "../../src/index.js";
import {
  type CardFormat,
  type SystemSnapshot,
  decodeWiegand,
  encodeWiegand,
  parseSnapshot,
  requestIssues,
} from "../../src/model/index.js";
import { decideNaive } from "../reference/decideNaive.js";

/** A frame as proxmark3 prints it (hex, MSB first) to its bits, `bits` long. */
function hexBits(hex: string, bits: number): string {
  return BigInt(`0x${hex}`).toString(2).padStart(bits, "0");
}

// Proxmark3-style raw frames (`wiegand decode --raw <hex>` without a header), each read whole by a raw
// format (S17); the decimal values are BigInt(0x…) computed apart from the module under test.
const RAW_VECTORS = [
  // 56 bits: a 7-byte UID whose top byte is set (past 2^53−1), and one just past the boundary.
  { bits: 56, hex: "C8A224BA6C5E80", value: "56473273972317824" },
  { bits: 56, hex: "20000000000000", value: "9007199254740992" },
  // 56 bits: an NXP UID (manufacturer byte 04) stays below 2^53: a JSON number.
  { bits: 56, hex: "04A224BA6C5E80", value: 1304178537029248 },
  { bits: 56, hex: "1FFFFFFFFFFFFF", value: Number.MAX_SAFE_INTEGER },
  // 64 bits: an ISO 15693 UID.
  { bits: 64, hex: "E00401501C2D3E4F", value: "16142028407984438863" },
  // 128 bits: a PIV-I sized card number.
  { bits: 128, hex: "0123456789ABCDEFFEDCBA9876543210", value: "1512366075204170947332355369683137040" },
  // 200 bits: a FASC-N sized (25-byte) identifier.
  {
    bits: 200,
    hex: "D4E739DA739CED39CE739D836858210842108421381239F3C1",
    value: "1336415212668832939211334320143220959554288573880923229647809",
  },
] as const;

const RAW_FORMAT: CardFormat = {
  id: "uid-raw",
  description: null,
  min_input_bits: 56,
  max_input_bits: 512,
  facility_code: "ENFORCED",
  allowed_facility_codes: [],
  enforce_parity: true,
  layout: null,
};
const AT = "2026-04-15T12:00:00Z";

function system(credentials: Record<string, unknown>[], node: Record<string, unknown> = {}): SystemSnapshot {
  const r = parseSnapshot({
    format: "rsop-system/1",
    systemId: "sys",
    timezone: "UTC",
    cloudNodes: [{ id: "n1", name: "Node 1", cardFormat: [RAW_FORMAT], ...node }],
    connections: [{ id: "c1", name: "Conn", type: "ethernet", cloudNode: "n1", ipaddress: "10.0.0.1", port: 4000 }],
    devices: [
      {
        id: "d1",
        name: "Door",
        cloudNode: "n1",
        connection: "c1",
        port: 1,
        type: "primaryReader",
        publicIcon: "other",
      },
    ],
    groups: [{ id: "g1", name: "Staff" }],
    holders: [{ id: "h1", firstName: "Ada", lastName: "L", groups: ["g1"], credentials }],
    rules: [
      {
        id: "r1",
        type: "door",
        groupId: "g1",
        devices: ["d1"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"],
      },
    ],
  });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.value;
}

const card = (id: string, credentialNumber: number | string, facilityCode: number | null = null) => ({
  id,
  credentialNumber,
  facilityCode,
  types: ["card"],
});

describe("CN3 decodeWiegand reads every width exactly", () => {
  test.each(RAW_VECTORS.map((v) => [`${v.bits} bits ${v.hex}`, v] as const))("%s", (_name, v) => {
    const frame = hexBits(v.hex, v.bits);
    expect(decodeWiegand(RAW_FORMAT, frame)).toEqual({ facilityCode: null, cardNumber: v.value, parityOk: true });
    // And back: a string, a BigInt and (when safe) a number write the same frame.
    expect(encodeWiegand(RAW_FORMAT, { cardNumber: v.value }, v.bits)).toBe(frame);
    expect(encodeWiegand(RAW_FORMAT, { cardNumber: BigInt(`0x${v.hex}`) }, v.bits)).toBe(frame);
  });

  test("a 512-bit raw frame of ones is 2^512−1; leading zeros of a long frame do not matter", () => {
    const max = (2n ** 512n - 1n).toString();
    expect(max).toHaveLength(155);
    expect(decodeWiegand(RAW_FORMAT, "1".repeat(512)).cardNumber).toBe(max);
    expect(decodeWiegand(RAW_FORMAT, `${"0".repeat(400)}${"1".repeat(53)}`).cardNumber).toBe(Number.MAX_SAFE_INTEGER);
  });

  test("encodeWiegand refuses a non-canonical string and a value wider than the field", () => {
    expect(() => encodeWiegand(RAW_FORMAT, { cardNumber: "0123" }, 64)).toThrow(RangeError);
    expect(() => encodeWiegand(RAW_FORMAT, { cardNumber: "18446744073709551616" }, 64)).toThrow(/does not fit/);
    expect(() => encodeWiegand(RAW_FORMAT, { cardNumber: -1n }, 64)).toThrow(RangeError);
  });
});

describe("CN1 credentialNumber in a snapshot", () => {
  test("a decimal string of a safe value is the number; a wider one stays a string", () => {
    const s = system([card("a", "12345"), card("b", "9007199254740992"), card("c", 77)]);
    expect(s.holders[0]!.credentials.map((c) => c.credentialNumber)).toEqual([12345, "9007199254740992", 77]);
  });

  test("refused: leading zeros, non-digits, more than 2^512−1, a JSON number past 2^53−1 (tooBig, as before)", () => {
    const issues = (n: unknown) => {
      const r = parseSnapshot({
        format: "rsop-system/1",
        systemId: "s",
        timezone: "UTC",
        holders: [
          { id: "h", firstName: "A", lastName: "B", credentials: [{ id: "c", types: ["card"], credentialNumber: n }] },
        ],
      });
      return r.ok ? [] : r.issues.map((i) => [i.code, i.path.join("."), i.message]);
    };
    const at = "holders.0.credentials.0.credentialNumber";
    const bad = "Must be a decimal string of digits without leading zeros, at most 2^512−1 (155 digits).";
    for (const n of ["0123", "", "12a", " 1", "-5", "1e3", (2n ** 512n).toString(), "9".repeat(156)])
      expect(issues(n)).toEqual([["invalid", at, bad]]);
    expect(issues(2 ** 53)).toEqual([["tooBig", at, "Must be at most 9007199254740991."]]);
    expect(issues((2n ** 512n - 1n).toString())).toEqual([]);
    expect(issues("0")).toEqual([]);
  });

  test("two spellings of one card are one number: a duplicate", () => {
    const r = parseSnapshot({
      format: "rsop-system/1",
      systemId: "s",
      timezone: "UTC",
      holders: [
        { id: "h1", firstName: "A", lastName: "B", credentials: [card("c1", 42)] },
        { id: "h2", firstName: "C", lastName: "D", credentials: [card("c2", "42")] },
        { id: "h3", firstName: "E", lastName: "F", credentials: [card("c3", "18446744073709551615")] },
        { id: "h4", firstName: "G", lastName: "H", credentials: [card("c4", "18446744073709551615")] },
      ],
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.code)).toEqual(["duplicateCredentialNumber", "duplicateCredentialNumber"]);
  });
});

describe("CN2 credentialNumber in a request", () => {
  test("a safe integer or a canonical decimal string; anything else is one problem at its path", () => {
    const req = (credentialNumber: unknown) => ({ deviceId: "d1", at: AT, credential: { credentialNumber } });
    expect(requestIssues(req("18446744073709551615"))).toEqual([]);
    expect(requestIssues(req("7"))).toEqual([]);
    for (const n of ["007", "x", "", (2n ** 512n).toString()])
      expect(requestIssues(req(n))).toEqual([
        {
          code: "invalid",
          path: ["credential", "credentialNumber"],
          message: "Must be a decimal string of digits without leading zeros, at most 2^512−1 (155 digits).",
        },
      ]);
    expect(requestIssues(req(2 ** 60))).toHaveLength(1);
  });
});

describe("CN4 wide cards match end to end", () => {
  const wide = RAW_VECTORS.filter((v) => typeof v.value === "string");
  const creds = RAW_VECTORS.map((v, k) => card(`cr-${k}`, v.value));
  const snapshot = system(creds);
  const engine = createEngine(snapshot);

  test.each(RAW_VECTORS.map((v, k) => [`${v.bits} bits ${v.hex}`, v, k] as const))(
    "%s: frame, number, handle, batch and reference agree: allowed with its credential",
    (_name, v, k) => {
      const want = {
        outcome: "allowed",
        reason: "allowed",
        holderId: "h1",
        credentialId: `cr-${k}`,
        activeRuleId: "r1",
        facilityCode: null,
        credentialNumber: v.value,
      };
      const frame = hexBits(v.hex, v.bits);
      const byFrame = { deviceId: "d1", at: AT, credential: { wiegand: frame } };
      const byNumber = { deviceId: "d1", at: AT, credential: { credentialNumber: String(v.value) } };
      expect(engine.decide(byFrame)).toMatchObject(want);
      expect(engine.decide(byNumber)).toMatchObject(want);
      expect(decideNaive(snapshot, byFrame)).toEqual(engine.decide(byFrame));
      expect(decideNaive(snapshot, byNumber)).toEqual(engine.decide(byNumber));
      const door = engine.reader("d1")!;
      const atMs = Date.parse(AT);
      expect(
        door.wiegand(
          Uint8Array.from(frame, (c) => +c),
          atMs,
        ),
      ).toEqual(engine.decide(byFrame));
      expect(door.card(v.value, null, atMs)).toEqual(engine.decide(byNumber));
      // The access event carries the number as the decision spells it.
      expect(accessEvent(engine.decide(byFrame), byFrame, snapshot).credential).toEqual({
        id: `cr-${k}`,
        credentialNumber: v.value,
        facilityCode: null,
      });
    },
  );

  test("CN5 a batch row numbered by its wideCard string decides as decide does", () => {
    const rows = [...wide.map((v) => v.value), "18446744073709551614", "0042", null, "123"];
    const n = rows.length;
    const out = { outcome: new Uint8Array(n), reason: new Uint8Array(n), rule: new Int32Array(n) };
    engine.decideBatch(
      {
        device: new Uint32Array(n),
        card: Float64Array.from(rows, (r) => (r === null ? 1304178537029248 : Number.NaN)),
        facility: new Float64Array(n).fill(-1),
        atMs: new Float64Array(n).fill(Date.parse(AT)),
        wideCard: rows,
      },
      out,
    );
    const reasons = [...out.reason].map((r) => engine.reasonCodes[r]);
    expect(reasons).toEqual([
      ...wide.map(() => "allowed"),
      "unknownCredential",
      "badRequest",
      "allowed",
      "unknownCredential",
    ]);
  });

  test("a wide number nobody holds is unknownCredential with the number read; the numeric path is untouched", () => {
    const frame = hexBits("E00401501C2D3E4E", 64);
    const d = engine.decide({ deviceId: "d1", at: AT, credential: { wiegand: frame } });
    expect(d).toMatchObject({ reason: "unknownCredential", credentialNumber: "16142028407984438862" });
    // Low bits equal to a safe credential's number do not match it.
    const low = engine.decide({
      deviceId: "d1",
      at: AT,
      credential: { credentialNumber: (2n ** 60n + 1304178537029248n).toString() },
    });
    expect(low.reason).toBe("unknownCredential");
  });

  test("E17 wide e-cards open offline; a facility code is still ENFORCED on a wide layout", () => {
    const wideFormat = {
      id: "piv128",
      min_input_bits: 128,
      max_input_bits: 128,
      layout: {
        facilityCode: { offset: 1, length: 16 },
        cardNumber: { offset: 17, length: 110 },
        parity: [
          { position: 0, type: "even", mask: `0${"1".repeat(63)}${"0".repeat(64)}` },
          { position: 127, type: "odd", mask: `${"0".repeat(64)}${"1".repeat(63)}0` },
        ],
      },
    };
    const cn = "1298074214633706907132624082305023";
    const s = system([card("w", cn, 4242)], {
      cardFormat: [wideFormat],
      ecards: ["340282366920938463463374607431768211455"],
    });
    const e = createEngine(s);
    const frame = (fc: number) => encodeWiegand(s.cloudNodes[0]!.cardFormat[0]!, { facilityCode: fc, cardNumber: cn });
    const req = (fc: number) => ({ deviceId: "d1", at: AT, credential: { wiegand: frame(fc) } });
    expect(e.decide(req(4242))).toMatchObject({
      reason: "allowed",
      credentialId: "w",
      facilityCode: 4242,
      credentialNumber: cn,
    });
    expect(e.decide(req(4243))).toMatchObject({ reason: "facilityCodeMismatch", credentialNumber: cn });
    for (const r of [req(4242), req(4243)]) expect(decideNaive(s, r)).toEqual(e.decide(r));
    const dead = { node: { online: false, offlineSeconds: 10 ** 9 } };
    const ecard = {
      deviceId: "d1",
      at: AT,
      credential: { credentialNumber: "340282366920938463463374607431768211455" },
      ...dead,
    };
    expect(e.decide(ecard)).toMatchObject({ reason: "ecard" });
    expect(decideNaive(s, ecard)).toEqual(e.decide(ecard));
    expect(e.decide({ ...ecard, credential: { credentialNumber: cn } }).reason).toBe("offlineEcardOnly");
  });
});
