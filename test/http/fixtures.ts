// Shared inputs of the HTTP tests: the example building, and two small snapshots A and B of the same
// system whose answers differ on every route, so that an answer shows which snapshot gave it.
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Engine, loadEngineOrThrow } from "../../src/index.js";

export const TOKEN = "test-token-0123456789";
export const BUILDING_FILE = resolve(__dirname, "../../examples/building.json");
export const BUILDING_JSON: unknown = JSON.parse(readFileSync(BUILDING_FILE, "utf8"));
export const building: Engine = loadEngineOrThrow(BUILDING_JSON);
export const BUILDING_ID = building.snapshot.systemId;

/** Wednesday 2026-04-15 10:00 in Chicago: inside A's day window, outside B's night window. */
export const AT = "2026-04-15T15:00:00Z";

/** Snapshot A: rule r1 opens d1 to group g1 ("Day staff") 07:00–19:00 on weekdays. */
export const snapshotA = {
  format: "rsop-system/1",
  systemId: "sys-ab",
  timezone: "America/Chicago",
  groups: [{ id: "g1", name: "Day staff" }],
  cloudNodes: [{ id: "n1", name: "Main" }],
  connections: [{ id: "c1", name: "Board", type: "usb", cloudNode: "n1", port: 1 }],
  devices: [
    {
      id: "d1",
      name: "Ward 3",
      cloudNode: "n1",
      connection: "c1",
      port: 1,
      type: "primaryReader",
      publicIcon: "swingingDoor",
    },
  ],
  holders: [
    {
      id: "h1",
      firstName: "Ada",
      lastName: "Byron",
      groups: ["g1"],
      credentials: [{ id: "k1", types: ["card"], credentialNumber: 100, facilityCode: 17 }],
    },
    {
      id: "h2",
      firstName: "Grace",
      lastName: "Hopper",
      groups: ["g1"],
      credentials: [{ id: "k2", types: ["card"], credentialNumber: 200, facilityCode: 17 }],
    },
  ],
  rules: [
    {
      id: "r1",
      type: "door",
      groupId: "g1",
      devices: ["d1"],
      startTime: "07:00:00",
      stopTime: "19:00:00",
      recurring: ["Mon", "Tue", "Wed", "Thu", "Fri"],
    },
  ],
};

/** Snapshot B: the same system, but the group is renamed and the rule only opens d1 at night. */
export const snapshotB = {
  ...snapshotA,
  groups: [{ id: "g1", name: "Night staff" }],
  rules: [{ ...snapshotA.rules[0]!, startTime: "20:00:00", stopTime: "23:00:00" }],
};

/** A snapshot with three problems (bad zone, unknown group, bad stopTime). */
export const brokenSnapshot = {
  ...snapshotA,
  timezone: "America/Chikago",
  holders: [{ ...snapshotA.holders[0]!, groups: ["g-missing"] }],
  rules: [{ ...snapshotA.rules[0]!, stopTime: "25:00:00" }],
};

export const engineA = loadEngineOrThrow(snapshotA);
export const engineB = loadEngineOrThrow(snapshotB);

const made: string[] = [];

/** A fresh temporary directory, removed by removeTempDirs. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "rsop-http-"));
  made.push(dir);
  return dir;
}

/** Removes every directory tempDir made (call in afterAll). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Writes JSON in place (truncate, then write), as a plain `>` redirect does. */
export function writeInPlace(path: string, value: unknown): void {
  writeFileSync(path, JSON.stringify(value, null, 2));
}

/** Writes JSON to a temporary name and renames it over `path`, as editors and deploy tools do. */
export function replaceByRename(path: string, value: unknown): void {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(tmp, JSON.stringify(value, null, 2));
  renameSync(tmp, path);
}

/** Collects log lines instead of writing to the console (a setup hook fails tests that do). */
export function logSink(): { lines: string[]; log: (line: string) => void } {
  const lines: string[] = [];
  return { lines, log: (line) => lines.push(line) };
}

/** Resolves when `predicate` holds, polling every 10 ms; rejects after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
