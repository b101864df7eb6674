// `rsop decide --workers N`: the built CLI (with its decide-worker.js next to it) answers JSON Lines
// on N worker threads, byte for byte what one thread answers — decisions, refused lines (stdout and
// the stderr echo), line numbers across blank lines, a broken first line in auto mode — and exits
// the same; bad --workers values are usage errors; from source (no built worker) it says so.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "tsup";
import { afterAll, beforeAll, expect, test } from "vitest";
import { run, tempFiles } from "./cliHarness.js";

const ROOT = resolve(__dirname, "../..");
const BUILDING = join(ROOT, "examples/building.json");
let outDir: string;
let cli: string;

beforeAll(async () => {
  // Below node_modules so that the bundles' imports of the dependencies resolve.
  outDir = mkdtempSync(join(ROOT, "node_modules", ".rsop-decide-workers-"));
  await build({
    entry: {
      cli: join(ROOT, "src/adapters/cli/bin.ts"),
      "decide-worker": join(ROOT, "src/adapters/cli/decideWorker.ts"),
    },
    outDir,
    format: ["esm"],
    platform: "node",
    target: "node20",
    config: false,
    silent: true,
  });
  writeFileSync(join(outDir, "package.json"), '{ "type": "module" }\n'); // as the package's own
  cli = join(outDir, "cli.js");
}, 120_000);
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const { file } = tempFiles("rsop-decide-workers-");

function decide(args: readonly string[]) {
  const r = spawnSync(process.execPath, [cli, "decide", "--system", BUILDING, ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Doors and cards of the example building (and one door it does not have). */
const BUILT = JSON.parse(readFileSync(BUILDING, "utf8")) as {
  devices: { id: string; type: string }[];
  holders: { credentials?: { credentialNumber?: number }[] }[];
};
const DOORS = [...BUILT.devices.filter((d) => d.type === "primaryReader").map((d) => d.id), "no-such-door"];
const CARDS = BUILT.holders.flatMap((h) =>
  (h.credentials ?? []).flatMap((c) => (typeof c.credentialNumber === "number" ? [c.credentialNumber] : [])),
);

/** 9,000 lines: scans of the example building, some malformed, some not JSON, blank lines between. */
function requests(): string {
  const lines: string[] = [];
  for (let i = 0; i < 9000; i++) {
    const at = new Date(Date.UTC(2026, 3, 13 + (i % 7), i % 24, i % 60)).toISOString();
    if (i % 997 === 5) lines.push("{ not json");
    else if (i % 601 === 7)
      lines.push(JSON.stringify({ deviceId: "front-door", at: "yesterday", credential: { credentialNumber: 1 } }));
    else if (i % 89 === 0) lines.push("");
    else
      lines.push(
        JSON.stringify({
          deviceId: DOORS[i % DOORS.length],
          at,
          credential: { credentialNumber: CARDS[i % CARDS.length], facilityCode: 17 },
        }),
      );
  }
  return `${lines.join("\n")}\n`;
}

test("N workers answer exactly what one thread answers, in input order, with the same stderr and exit code", () => {
  const path = file("requests.jsonl", requests());
  const one = decide(["--request", path]);
  expect(one.code).toBe(1); // some lines are refused
  expect(one.stdout.split("\n").length).toBeGreaterThan(8000);
  // Every kind of answer is there: allowed with a holder and a rule, denied, unknown, refused.
  for (const kind of ['"outcome":"allowed"', '"outcome":"denied"', '"outcome":"unknown"', '"error":'])
    expect(one.stdout).toContain(kind);
  for (const n of ["2", "3"]) {
    const many = decide(["--request", path, "--workers", n]);
    expect(many.code).toBe(one.code);
    expect(many.stdout).toBe(one.stdout);
    expect(many.stderr).toBe(one.stderr);
  }
}, 120_000);

test("auto mode with workers: a broken first line, then JSON Lines; and a pretty-printed document", () => {
  const broken = file(
    "broken.jsonl",
    `{ "deviceId":\n${JSON.stringify({ deviceId: "door-main-entrance", at: "2026-04-15T12:00:00Z", credential: { credentialNumber: 1001, facilityCode: 10 } })}\n`,
  );
  expect(decide(["--request", broken, "--workers", "2"])).toEqual(decide(["--request", broken]));
  const doc = file(
    "doc.json",
    JSON.stringify(
      {
        deviceId: "door-main-entrance",
        at: "2026-04-15T12:00:00Z",
        credential: { credentialNumber: 1001, facilityCode: 10 },
      },
      null,
      2,
    ),
  );
  const answered = decide(["--request", doc, "--workers", "2"]);
  expect(answered).toEqual(decide(["--request", doc]));
  expect(answered.stdout).toMatch(/^\{"line":1,"outcome":/);
}, 60_000);

test("--workers must be 1 to 64 and needs the snapshot in a file (exit 2); from source there is no worker to start (exit 1)", async () => {
  for (const bad of ["0", "65", "two", "-1"]) {
    const r = await run(["decide", "--system", BUILDING, "--workers", bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--workers must be a whole number from 1 to 64");
  }
  const stdinSnapshot = await run(["decide", "--system", "-", "--request", BUILDING, "--workers", "2"]);
  expect(stdinSnapshot.code).toBe(2);
  expect(stdinSnapshot.stderr).toContain("--workers needs the snapshot in a file");
  const fromSource = await run(["decide", "--system", BUILDING, "--workers", "2"], "{}\n");
  expect(fromSource.code).toBe(1);
  expect(fromSource.stderr).toContain("--workers needs the built CLI");
});

test("with workers (which alone load the snapshot), a snapshot that does not load is reported as one thread reports it, once, with nothing answered, also for empty input", () => {
  const requestsFile = file(
    "few.jsonl",
    `${JSON.stringify({ deviceId: "door-main-entrance", at: "2026-04-15T12:00:00Z", credential: { credentialNumber: 1001 } })}\n`,
  );
  const empty = file("empty.jsonl", "");
  const broken = file(
    "broken-system.json",
    JSON.stringify({ ...BUILT, timezone: "Mars/Olympus", devices: [...BUILT.devices, BUILT.devices[0]] }),
  );
  const panel = join(ROOT, "examples/panel.json");
  const run1 = (system: string, request: string, workers: string[]) => {
    const r = spawnSync(process.execPath, [cli, "decide", "--system", system, "--request", request, ...workers], {
      encoding: "utf8",
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  for (const [system, code] of [
    [broken, 1],
    [join(ROOT, "no-such-system.json"), 1],
    [panel, 2],
  ] as const) {
    for (const request of [requestsFile, empty]) {
      const one = run1(system, request, []);
      expect(one.code).toBe(code);
      expect(one.stdout).toBe("");
      const many = run1(system, request, ["--workers", "2"]);
      expect(many).toEqual(one);
    }
  }
  // The snapshot's problems are listed, each once.
  const listed = run1(broken, empty, ["--workers", "3"]).stderr;
  expect(listed).toContain("Mars/Olympus");
  expect(listed.split("Mars/Olympus").length).toBe(2);
}, 60_000);
