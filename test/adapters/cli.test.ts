import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { run, tempFiles } from "./cliHarness.js";

const { dir, file } = tempFiles("rsop-cli-");

const good = {
  format: "rsop-system/1",
  systemId: "sys-1",
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
  ],
  holders: [
    {
      id: "h1",
      firstName: "Ada",
      lastName: "Byron",
      groups: ["g1"],
      credentials: [{ id: "k1", types: ["card"], credentialNumber: 100, facilityCode: 17 }],
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

describe("rsop validate", () => {
  test("a valid snapshot: exit 0 and a one-line summary", async () => {
    const r = await run(["validate", "--system", file("good.json", good)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      "valid: system sys-1: 1 cloud nodes, 1 devices, 1 holders, 1 credentials, 1 groups, 1 rules\n",
    );
  });

  test("five different mistakes are all listed with their paths; exit 1", async () => {
    const bad = structuredClone(good) as typeof good & Record<string, unknown>;
    bad.timezone = "America/Chikago"; // 1: invalid zone
    bad.groups[0]!.name = "N".repeat(71); // 2: name too long
    (bad.holders[0] as Record<string, unknown>).groups = ["g-missing"]; // 3: unknown reference
    bad.devices.push({ ...bad.devices[0]!, id: "d2", name: "Ward 4" }); // 4: port 1 of c1 used twice
    bad.rules[0]!.stopTime = "25:00:00"; // 5: bad stopTime
    const r = await run(["validate", "--system", file("bad.json", bad)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("5 problems");
    for (const path of ["timezone", "groups[0].name", "holders[0].groups[0]", "devices[1].port", "rules[0].stopTime"])
      expect(r.stderr).toContain(`  ${path}: `);
  });

  test("--json prints the issues as JSON", async () => {
    const r = await run(["validate", "--json", "--system", file("bad2.json", { ...good, format: "x" })]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: false, issues: [{ path: ["format"] }] });
  });

  test("a missing file or broken JSON is a clear error, exit 1", async () => {
    // CE4: the file and the reason in words, one line.
    expect(await run(["validate", "--system", join(dir, "nope.json")])).toMatchObject({
      code: 1,
      stderr: `rsop: ${join(dir, "nope.json")}: no such file\n`,
    });
    expect(await run(["validate", "--system", file("broken.json", "{")])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("is not valid JSON"),
    });
  });
});

describe("rsop decide", () => {
  const system = file("sys.json", good);
  const req = {
    deviceId: "d1",
    at: "2026-11-20T10:00:00-06:00",
    credential: { credentialNumber: 100, facilityCode: 17 },
  };

  test("one pretty-printed JSON request", async () => {
    const r = await run(["decide", "--system", system, "--request", file("one.json", JSON.stringify(req, null, 2))]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      outcome: "allowed",
      reason: "allowed",
      activeRuleId: "r1",
      holderId: "h1",
    });
  });

  test("JSON Lines on stdin, answered in order; a bad line gets an error line and exit 1", async () => {
    const lines = [req, { ...req, at: "2026-11-22T10:00:00-06:00" }, { deviceId: "d1" }, { ...req, deviceId: "zz" }];
    const r = await run(["decide", "--system", system], `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    expect(r.code).toBe(1);
    const out = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out.map((o) => o.reason ?? o.error.message)).toEqual([
      "allowed",
      "noActiveRule",
      "invalid request",
      "unknownDevice",
    ]);
    expect(out[2]).toMatchObject({
      line: 3,
      error: { message: "invalid request", issues: [{ path: "at" }, { path: "(root)" }] },
    });
    expect(r.stderr).toContain("line 3: at:");
  });

  test("100,000 requests from a JSON Lines file in one process", async () => {
    const line = JSON.stringify(req);
    const r = await run([
      "decide",
      "--system",
      system,
      "--request",
      file("many.jsonl", `${`${line}\n`.repeat(100_000)}`),
    ]);
    expect(r.code).toBe(0);
    const out = r.stdout.split("\n");
    expect(out.length).toBe(100_001); // 100,000 lines and the final newline
    expect(JSON.parse(out[99_999]!).reason).toBe("allowed");
  });
});

describe("help", () => {
  test.each([
    [[]],
    [["validate"]],
    [["decide"]],
    [["demo"]],
    [["rsop"]],
    [["who"]],
    [["windows"]],
    [["card"]],
    [["card", "encode"]],
    [["card", "decode"]],
    [["card", "formats"]],
    [["preflight"]],
    [["migrate"]],
    [["serve"]],
  ])("--help on %j", async (cmd) => {
    const r = await run([...cmd, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: rsop/);
  });

  test("an unknown command exits 2 with a hint", async () => {
    const r = await run(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command");
  });
});

describe("rsop card", () => {
  test("encode H10301 FC 1 / CN 1", async () => {
    // Even parity over bits 1–12 (one 1 in the FC) sets bit 0; bits 13–24 already hold one 1, so the odd bit 25 is 0.
    const r = await run(["card", "encode", "--format", "H10301", "--facility-code", "1", "--card-number", "1"]);
    expect(r).toMatchObject({ code: 0, stdout: "10000000100000000000000010\n" });
  });

  test("decode reports fields and parity", async () => {
    const r = await run(["card", "decode", "--format", "H10301", "--bits", "10000000100000000000000010"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ facilityCode: 1, cardNumber: 1, parityOk: true });
    const flipped = await run(["card", "decode", "--format", "H10301", "--bits", "10000000100000000000000011"]);
    expect(JSON.parse(flipped.stdout)).toEqual({ facilityCode: 1, cardNumber: 1, parityOk: false });
  });

  test("formats lists the table", async () => {
    const r = await run(["card", "formats"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^H10301 +26 bits +FC 1-8 +CN 9-24 +0:even\(1-12\) 25:odd\(13-24\)/m);
    expect(r.stdout).toContain("C1k48s");
  });

  test("bad input is a clear error: a malformed or out-of-range option value is a usage error (CE1)", async () => {
    expect(
      await run(["card", "encode", "--format", "H10301", "--facility-code", "256", "--card-number", "1"]),
    ).toMatchObject({ code: 2 });
    expect(await run(["card", "encode", "--format", "NOPE", "--card-number", "1"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown card format"),
    });
    expect(await run(["card", "encode", "--format", "H10301", "--card-number", "-3"])).toMatchObject({ code: 2 });
    expect(await run(["card", "decode", "--format", "H10301", "--bits", "0101"])).toMatchObject({ code: 2 });
  });
});

describe("rsop rsop / who / windows", () => {
  const system = file("q.json", good);

  test("rsop prints the seed RSOP JSON; unknown ids are named, exit 1", async () => {
    const r = await run(["rsop", "--system", system, "--ids", "h1", "--at", "2026-11-20T16:00:00Z"]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(r.stdout).toBe(`${JSON.stringify(json, null, 2)}\n`); // laid out as JSON.stringify lays it out
    expect(json.date).toBe("2026-11-20T16:00:00.000Z");
    expect(json.holders[0].devices[0]).toMatchObject({ id: "d1", allowed: true, activeRuleId: "r1" });
    const bad = await run(["rsop", "--system", system, "--ids", "h1,zz", "--at", "2026-11-20T16:00:00Z"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('ids[1]: Unknown holder id "zz".');
  });

  test("--at accepts epoch milliseconds", async () => {
    const r = await run([
      "rsop",
      "--system",
      system,
      "--ids",
      "h1",
      "--at",
      String(Date.parse("2026-11-20T16:00:00Z")),
    ]);
    expect(JSON.parse(r.stdout).date).toBe("2026-11-20T16:00:00.000Z");
  });

  test("who lists holders with their rule", async () => {
    const r = await run(["who", "--system", system, "--device", "d1", "--at", "2026-11-20T16:00:00Z"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).holders).toEqual([{ holderId: "h1", activeRuleId: "r1", floors: [] }]);
    expect((await run(["who", "--system", system])).code).toBe(2); // neither --device nor --floor-group: a usage error
  });

  test("windows lists the allowed intervals", async () => {
    const r = await run([
      "windows",
      "--system",
      system,
      "--holder",
      "h1",
      "--device",
      "d1",
      "--from",
      "2026-11-20T00:00:00Z",
      "--to",
      "2026-11-21T00:00:00Z",
    ]);
    expect(r.code).toBe(0);
    // The period starts Thursday 18:00 in Chicago, inside Thursday's 07:00–19:00 window, and ends
    // Friday 18:00, before Friday's window closes.
    expect(JSON.parse(r.stdout).windows).toEqual([
      {
        start: "2026-11-20T00:00:00.000Z",
        end: "2026-11-20T01:00:00.000Z",
        startLocal: "2026-11-19T18:00:00.000-06:00",
        endLocal: "2026-11-19T19:00:00.000-06:00",
        activeRuleId: "r1",
      },
      {
        start: "2026-11-20T13:00:00.000Z",
        end: "2026-11-21T00:00:00.000Z",
        startLocal: "2026-11-20T07:00:00.000-06:00",
        endLocal: "2026-11-20T18:00:00.000-06:00",
        activeRuleId: "r1",
      },
    ]);
  });
});

describe("architecture 1.0: --panel, preflight, migrate", () => {
  const panelPath = fileURLToPath(new URL("../../examples/panel.json", import.meta.url));
  const panel = JSON.parse(readFileSync(panelPath, "utf8"));

  test("validate --panel and decide --panel answer in 1.0 terms", async () => {
    expect((await run(["validate", "--panel", panelPath])).stdout).toMatch(/^valid: system panel:/);
    const r = await run(
      ["decide", "--panel", panelPath],
      `${JSON.stringify({ deviceId: panel.devices[0].id, at: 0, pin: "000000" })}\n`,
    );
    expect(JSON.parse(r.stdout)).toMatchObject({ topic: "door.request.unknown", reason: "unknownPin" });
    expect((await run(["decide", "--panel", panelPath, "--system", panelPath])).stderr).toContain(
      "exactly one of --system",
    );
  });

  test("migrate --verify compares every scan of every person at every device and every RSOP entry over a week (M3); bad options are usage errors", async () => {
    const { smallPanel } = await import("../live/panelFixture.js");
    const small = file("small-panel.json", smallPanel());
    const r = await run([
      "migrate",
      "--panel",
      small,
      "--system-id",
      "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90",
      "--verify",
      "--from",
      "2026-04-13T00:00:00Z",
      "--step-hours",
      "6",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).mappings.length).toBeGreaterThan(0);
    const summary =
      /verify: (\d+) instants over 7 days from (\S+) .*?, 2 persons, 6 devices, (\d+) scans per instant: ([\d,]+) decisions and ([\d,]+) RSOP entries compared/.exec(
        r.stderr,
      );
    expect(summary, r.stderr).not.toBeNull();
    const [instants, , scans, decisions] = [
      Number(summary![1]),
      summary![2],
      Number(summary![3]),
      Number(summary![4]!.replace(/,/g, "")),
    ];
    // Ann: her card by id and by number, with her PIN, and the PIN alone; Bob: his pending phone by id — at each of 6 devices.
    expect(scans).toBe(6 * (3 + 1 + 1));
    expect(decisions).toBe(instants * scans);
    expect(instants).toBeGreaterThanOrEqual(7 * 4);
    expect(r.stderr).toContain("verify: every decision and RSOP entry is equal through the mapping records");
    const bad = await run(["migrate", "--panel", small, "--system-id", "s", "--verify", "--step-hours", "0"]);
    expect(bad.code).toBe(2);
    expect((await run(["migrate", "--panel", small, "--system-id", "s", "--verify", "--from", "yesterday"])).code).toBe(
      2,
    );
  });

  test("rsop --panel prints the seed 002 shape; ids must be integers", async () => {
    const r = await run(["rsop", "--panel", panelPath, "--ids", "1,2", "--at", "2026-04-15T14:15:00Z"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).persons.map((p: { id: number }) => p.id)).toEqual([1, 2]);
    expect((await run(["rsop", "--panel", panelPath, "--ids", "x1"])).stderr).toContain(
      '1.0 person ids are integers: "x1"',
    );
  });

  test("preflight: exit 0 with the report when nothing blocks (warnings make ok false); exit 1 when something blocks", async () => {
    const ok = await run(["preflight", "--panel", panelPath]);
    expect(ok.code).toBe(0);
    const report = JSON.parse(ok.stdout);
    expect(report.ok).toBe(false);
    expect(report.extensions.warnings.droppedFields.length).toBeGreaterThan(0);
    expect(
      Object.values(report.errors).every((v) =>
        Array.isArray(v)
          ? v.length === 0
          : v === false || (typeof v === "object" && Object.keys(v as object).length === 0),
      ),
    ).toBe(true);
    const broken = structuredClone(panel);
    broken.devices[0].propDelay = 5;
    const bad = await run(["preflight", "--panel", file("broken-panel.json", broken)]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).errors.invalidDevice).toHaveLength(1);
    const refused = await run(["migrate", "--panel", file("broken-panel.json", broken), "--system-id", "s"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("migration refused by the preflight check");
  });

  test("migrate --out writes the snapshot and mappings; twice gives identical bytes", async () => {
    const out1 = join(dir, "mig1");
    const out2 = join(dir, "mig2");
    for (const out of [out1, out2])
      expect(
        (
          await run([
            "migrate",
            "--panel",
            panelPath,
            "--system-id",
            "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90",
            "--out",
            out,
          ])
        ).code,
      ).toBe(0);
    for (const f of ["system.json", "mappings.json", "dropped.json"])
      expect(readFileSync(join(out1, f), "utf8")).toBe(readFileSync(join(out2, f), "utf8"));
    expect((await run(["validate", "--system", join(out1, "system.json")])).code).toBe(0);
  });
});
