// `rsop bench` on a small snapshot with few requests: the shape of its output, never a duration.
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { randomRequests } from "../../src/adapters/cli/benchCommand.js";
import { parseSnapshotOrThrow } from "../../src/index.js";
import { run, tempFiles } from "./cliHarness.js";

const { dir, file } = tempFiles("rsop-bench-cli-");

const snapshot = {
  format: "rsop-system/1",
  systemId: "sys-bench",
  timezone: "America/Chicago",
  groups: [{ id: "g1", name: "Nurses" }],
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
    {
      id: "d2",
      name: "Ward 4",
      cloudNode: "n1",
      connection: "c1",
      port: 2,
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
      pin: "1234",
      credentials: [{ id: "k1", types: ["card"], credentialNumber: 100, facilityCode: 17 }],
    },
    {
      id: "h2",
      firstName: "Alan",
      lastName: "Turing",
      groups: ["g1"],
      credentials: [{ id: "k2", types: ["touch", "token"], credentialNumber: 200 }],
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
const system = file("system.json", snapshot);
const quick = ["--requests", "50", "--seconds", "0.05"];

describe("rsop bench", () => {
  test("prints the system, load times, the request mix, decisions/s and p50/p99", async () => {
    const r = await run(["bench", "--system", system, ...quick]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe("system sys-bench: 2 holders, 2 devices, 1 rules");
    expect(lines[1]).toMatch(/^load: validate [0-9.]+ ms, compile [0-9.]+ ms$/);
    expect(lines[2]).toMatch(/^requests: 50 random \(seed 1\): [0-9]+% allowed, [0-9]+% denied, [0-9]+% unknown$/);
    expect(lines[3]).toMatch(/^decide: [0-9,]+ decisions\/s \([0-9,]+ decisions in [0-9.]+ s, one thread\)$/);
    expect(lines[4]).toMatch(
      /^latency per decision: p50 [0-9.]+ (ns|µs), p99 [0-9.]+ (ns|µs), mean [0-9.]+ (ns|µs) \(percentiles of batches of 256\)$/,
    );
  });

  test("--json prints the report with every field; no progress bar when stderr is not a terminal", async () => {
    const r = await run(["bench", "--system", system, ...quick, "--json", "--seed", "7"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const report = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(report).sort()).toEqual(
      [
        "batch",
        "compileMs",
        "decisions",
        "decisionsPerSecond",
        "meanNs",
        "p50Ns",
        "p99Ns",
        "requests",
        "seconds",
        "system",
        "validateMs",
      ].sort(),
    );
    expect(report.system).toEqual({ id: "sys-bench", holders: 2, devices: 2, rules: 1 });
    const requests = report.requests as Record<string, number>;
    expect(requests.count).toBe(50);
    expect(requests.seed).toBe(7);
    expect(requests.allowed! + requests.denied! + requests.unknown!).toBe(50);
    for (const k of ["compileMs", "validateMs", "decisionsPerSecond", "meanNs", "p50Ns", "p99Ns", "seconds"])
      expect(Number.isFinite(report[k])).toBe(true);
    expect(report.decisions as number).toBeGreaterThanOrEqual(256);
    expect((report.decisions as number) % 256).toBe(0);
  });

  test("the random requests are deterministic for a seed, valid, and over the snapshot's readers", () => {
    const parsed = parseSnapshotOrThrow(snapshot);
    const a = randomRequests(parsed, 200, 3);
    expect(randomRequests(parsed, 200, 3)).toEqual(a);
    expect(randomRequests(parsed, 200, 4)).not.toEqual(a);
    for (const req of a as { deviceId: string; at: number }[]) {
      expect(["d1", "d2"]).toContain(req.deviceId);
      expect(req.at).toBeGreaterThanOrEqual(Date.UTC(2026, 0, 1));
      expect(req.at).toBeLessThan(Date.UTC(2027, 0, 1));
    }
  });

  test("a snapshot with problems lists them (exit 1); bad options are usage errors (exit 2)", async () => {
    const bad = await run(["bench", "--system", file("bad.json", { ...snapshot, timezone: "Mars/Olympus" }), ...quick]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("1 problem");
    expect(bad.stderr).toContain("  timezone: ");
    expect((await run(["bench", "--system", system, "--requests", "0"])).code).toBe(2);
    expect((await run(["bench", "--system", system, "--seconds", "soon"])).code).toBe(2);
    expect((await run(["bench", "--system", join(dir, "missing.json")])).code).toBe(1);
  });
});
