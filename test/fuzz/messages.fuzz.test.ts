// Issue messages stay short whatever the input holds (issue 12): an echoed value is cut at about 100
// characters, a number above 2^53 is reported once, a NaN or infinite number says so, and the cache
// of time-zone answers is bounded.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { isValidZone, zoneCacheSize } from "../../src/model/parseSnapshot.js";
import { type Issue, parseSnapshot, requestIssues } from "../../src/model/index.js";

const RUNS = Number(process.env.RSOP_FUZZ_RUNS ?? 100);
/** The longest message any of these inputs may give: a sentence around at most two cut values. */
const MAX_MESSAGE = 400;

const base = { format: "rsop-system/1", systemId: "s1" };

function issuesOf(input: unknown): readonly Issue[] {
  const r = parseSnapshot(input);
  return r.ok ? [] : r.issues;
}

/** A snapshot echoing `long` wherever a message repeats a value of the input. */
function echoing(long: string): unknown {
  return {
    ...base,
    timezone: long,
    groups: [
      { id: long, name: "G1" },
      { id: long, name: "G2" },
    ],
    cloudNodes: [
      { id: "n1", name: "N", timezone: long, cardFormat: [{ id: long, min_input_bits: 26, max_input_bits: 26 }] },
    ],
    connections: [{ id: "c1", name: "C", type: "lockhub", cloudNode: long, macAddress: "00:1B:2C:4A:10:01" }],
    holders: [
      {
        id: "h1",
        firstName: "A",
        lastName: "B",
        groups: [long],
        credentials: [{ id: long, types: ["card"], holderId: long }],
      },
      { id: "h2", firstName: "A", lastName: "B", credentials: [{ id: long, types: ["card"] }] },
    ],
    devices: [
      { id: "d1", name: "D", cloudNode: long, connection: long, port: 1, type: "primaryReader", primaryReader: long },
    ],
    rules: [
      {
        id: "r1",
        type: "door",
        groupId: long,
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: ["Mon"],
        devices: [long],
        floorGroups: [long],
      },
    ],
  };
}

describe("issue messages", () => {
  test("a 5 MB time zone name is cut in its message, not repeated", () => {
    const huge = "Europe/".padEnd(5_000_000, "x");
    const issues = issuesOf({ ...base, timezone: huge });
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toEqual(["timezone"]);
    expect(issues[0]!.message).toBe(`"${huge.slice(0, 100)}…" (5000000 characters) is not an IANA time zone.`);
  });

  test("fuzz: no message repeats more than about 100 characters of a long input value", () => {
    let echoed = 0;
    fc.assert(
      fc.property(fc.string({ minLength: 101, maxLength: 1000, unit: "grapheme" }), (long) => {
        const issues = issuesOf(echoing(long));
        expect(issues.length).toBeGreaterThan(5);
        for (const i of issues) {
          expect(i.message.length).toBeLessThanOrEqual(MAX_MESSAGE);
          if (i.message.includes("…")) echoed++;
        }
      }),
      // Shrinking 1000-character strings through a whole snapshot takes minutes: report the first failure.
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(echoed).toBeGreaterThanOrEqual(RUNS * 5);
  });

  test("a cut never splits a surrogate pair", () => {
    const long = `${"a".repeat(99)}😀${"b".repeat(200)}`;
    const [issue] = issuesOf({ ...base, timezone: long });
    expect(issue!.message.startsWith(`"${"a".repeat(99)}…"`)).toBe(true);
  });

  test("a number above 2^53 is reported once, with one sentence", () => {
    for (const n of [2 ** 53, 2 ** 60, 1e300]) {
      const issues = issuesOf({
        ...base,
        holders: [
          {
            id: "h1",
            firstName: "A",
            lastName: "B",
            credentials: [{ id: "c1", types: ["card"], credentialNumber: n }],
          },
        ],
        cloudNodes: [{ id: "n1", name: "N", ecards: [n] }],
      });
      expect(issues).toEqual([
        {
          code: "tooBig",
          path: ["holders", 0, "credentials", 0, "credentialNumber"],
          message: "Must be at most 9007199254740991.",
        },
        { code: "tooBig", path: ["cloudNodes", 0, "ecards", 0], message: "Must be at most 9007199254740991." },
      ]);
    }
  });

  test("NaN and infinite numbers: Must be a finite number; a fraction: Must be an integer", () => {
    const issues = issuesOf({
      ...base,
      cloudNodes: [
        {
          id: "n1",
          name: "N",
          killTimer: Number.NaN,
          ecards: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1.5],
        },
      ],
    });
    expect(issues.map((i) => [i.path.join("."), i.message])).toEqual([
      ["cloudNodes.0.ecards.0", "Must be a finite number."],
      ["cloudNodes.0.ecards.1", "Must be a finite number."],
      ["cloudNodes.0.ecards.2", "Must be an integer."],
      ["cloudNodes.0.killTimer", "Must be a finite number."],
    ]);
  });

  test("requests: NaN and infinite numbers say so; a number above 2^53 is one problem", () => {
    const issues = requestIssues({
      deviceId: "d1",
      at: Number.NaN,
      credential: { credentialNumber: Number.POSITIVE_INFINITY, facilityCode: Number.NaN },
      node: { online: false, offlineSeconds: Number.NEGATIVE_INFINITY },
    });
    expect(issues.map((i) => [i.path.join("."), i.message])).toEqual([
      ["at", "Must be a finite number."],
      ["credential.credentialNumber", "Must be a finite number."],
      ["credential.facilityCode", "Must be a finite number."],
      ["node.offlineSeconds", "Must be a finite number."],
    ]);
    expect(
      requestIssues({ deviceId: "d1", at: 0, credential: { credentialNumber: 2 ** 60, facilityCode: 2 ** 53 } }),
    ).toEqual([
      { code: "invalid", path: ["credential", "credentialNumber"], message: "Must be a non-negative integer." },
      { code: "invalid", path: ["credential", "facilityCode"], message: "Must be a non-negative integer or null." },
    ]);
  });

  test("the cache of time-zone answers is bounded and keeps no long name", () => {
    for (let i = 0; i < 5000; i++) expect(isValidZone(`Nowhere/Zone${i}`)).toBe(false);
    expect(zoneCacheSize()).toBeLessThanOrEqual(1024);
    const before = zoneCacheSize();
    expect(isValidZone("x".repeat(1_000_000))).toBe(false);
    expect(zoneCacheSize()).toBe(before);
    expect(isValidZone("Europe/Paris")).toBe(true);
    expect(isValidZone("Europe/Paris")).toBe(true);
  });
});
