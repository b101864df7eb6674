// The bundled example building (examples/building.json) that `npm start` demos: it must load, the
// generator must reproduce it byte for byte, and every demo request must be a well-formed request
// that names things the building has.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { type SystemSnapshot, formatIssues, parseSnapshot, requestIssues } from "../src/model/index.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const examples = join(root, "examples");
const buildingText = readFileSync(join(examples, "building.json"), "utf8");

let building: SystemSnapshot | undefined;
function loadBuilding(): SystemSnapshot {
  if (building !== undefined) return building;
  const r = parseSnapshot(JSON.parse(buildingText));
  if (!r.ok) throw new Error(`examples/building.json is refused:\n${formatIssues(r.issues)}`);
  building = r.value;
  return building;
}

/** Independent H10301 decode: even parity over bits 1–12 at bit 0, odd parity over bits 13–24 at bit 25. */
function decodeH10301(bits: string): { facilityCode: number; credentialNumber: number; parityOk: boolean } {
  const ones = (s: string) => [...s].filter((c) => c === "1").length;
  const parityOk = ones(bits.slice(0, 13)) % 2 === 0 && ones(bits.slice(13, 26)) % 2 === 1;
  return { facilityCode: parseInt(bits.slice(1, 9), 2), credentialNumber: parseInt(bits.slice(9, 25), 2), parityOk };
}

describe("examples/building.json", () => {
  test("passes parseSnapshot", () => {
    const r = parseSnapshot(JSON.parse(buildingText));
    expect(r.ok, r.ok ? "" : `issues:\n${formatIssues(r.issues)}`).toBe(true);
  });

  test("is what examples/generateBuilding.mjs writes, byte for byte", () => {
    const dir = mkdtempSync(join(tmpdir(), "rsop-example-"));
    try {
      const out = join(dir, "building.json");
      execFileSync(process.execPath, [join(examples, "generateBuilding.mjs"), out], { cwd: root, stdio: "pipe" });
      expect(
        readFileSync(out, "utf8") === buildingText,
        "examples/building.json is stale: run `node examples/generateBuilding.mjs`",
      ).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("has the parts the demo relies on", () => {
    const b = loadBuilding();
    const count = (type: string) => b.devices.filter((d) => d.type === type).length;
    expect(b.holders.length).toBe(300);
    expect(count("primaryReader") + count("additionalReader")).toBeGreaterThanOrEqual(20);
    expect(count("elevatorReader")).toBe(1);
    expect(count("floorRelay")).toBe(8);
    expect(b.devices.filter((d) => d.authenticationPolicy === "cardAndPin").map((d) => d.id)).toEqual([
      "door-pharmacy",
    ]);
    expect(b.rules.some((r) => !r.allow)).toBe(true);
    expect(b.rules.some((r) => !r.enabled)).toBe(true);
    // H10301 carries an 8-bit facility code and a 16-bit card number: every card fits a raw 26-bit read.
    for (const h of b.holders)
      for (const c of h.credentials)
        if (c.types.includes("card")) {
          expect(c.credentialNumber).toBeLessThanOrEqual(0xffff);
          expect(c.facilityCode).toBeLessThanOrEqual(0xff);
        }
    expect(new Set(b.holders.map((h) => h.email)).size).toBe(b.holders.length);
  });
});

describe("examples/requests.jsonl", () => {
  const lines = readFileSync(join(examples, "requests.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const expected = readFileSync(join(examples, "requests.expected.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");

  test("has one expected decision per request", () => {
    expect(expected.length).toBe(lines.length);
  });

  test.each(lines.map((l, i) => [i + 1, l] as const))(
    "line %i is a well-formed request against the building",
    (_n, line) => {
      const b = loadBuilding();
      const req = JSON.parse(line) as Record<string, unknown>;
      expect(requestIssues(req)).toEqual([]);
      expect(b.devices.map((d) => d.id)).toContain(req.deviceId);
      const cred = req.credential as Record<string, unknown> | undefined;
      const creds = b.holders.flatMap((h) => h.credentials);
      if (cred?.mobile !== undefined) expect(creds.map((c) => c.id)).toContain(cred.credentialId);
      if (typeof cred?.wiegand === "string") {
        const read = decodeH10301(cred.wiegand);
        expect(cred.wiegand.length).toBe(26);
        expect(read.parityOk).toBe(true);
        const card = creds.find((c) => c.types.includes("card") && c.credentialNumber === read.credentialNumber);
        expect(card?.facilityCode).toBe(read.facilityCode);
      }
    },
  );

  test("the expected decisions name what the building has", () => {
    const b = loadBuilding();
    const holderIds = new Set(b.holders.map((h) => h.id));
    const credIds = new Set(b.holders.flatMap((h) => h.credentials.map((c) => c.id)));
    const ruleIds = new Set(b.rules.map((r) => r.id));
    for (const line of expected) {
      const d = JSON.parse(line) as {
        holderId: string | null;
        credentialId: string | null;
        activeRuleId: string | null;
        floors: string[];
      };
      if (d.holderId !== null) expect(holderIds).toContain(d.holderId);
      if (d.credentialId !== null) expect(credIds).toContain(d.credentialId);
      if (d.activeRuleId !== null) expect(ruleIds).toContain(d.activeRuleId);
      for (const f of d.floors) expect(b.devices.find((x) => x.id === f)?.type).toBe("floorRelay");
    }
  });
});

describe("the engine answers the demo scans as documented", () => {
  test("every line of requests.jsonl decides to its line in requests.expected.jsonl", async () => {
    const { loadEngineOrThrow } = await import("../src/evaluate/index.js");
    const read = (name: string) =>
      readFileSync(new URL(`../examples/${name}`, import.meta.url), "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l));
    const engine = loadEngineOrThrow(
      JSON.parse(readFileSync(new URL("../examples/building.json", import.meta.url), "utf8")),
    );
    const requests = read("requests.jsonl");
    const expected = read("requests.expected.jsonl");
    expect(requests.length).toBe(expected.length);
    requests.forEach((req, i) =>
      expect({ line: i + 1, ...engine.decide(req) }).toStrictEqual({ line: i + 1, ...expected[i] }),
    );
  });
});
