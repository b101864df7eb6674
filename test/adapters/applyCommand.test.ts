// `rsop apply`: one answer line per input line, in order; batches all or nothing; --out writes the
// resulting snapshot, which loads and decides like the live system; --seed-ids repeats ids.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { loadEngineOrThrow } from "../../src/evaluate/index.js";
import { run, tempFiles } from "./cliHarness.js";

const BUILDING = new URL("../../examples/building.json", import.meta.url).pathname;
const { file, dir } = tempFiles("rsop-apply-");

const OPS = [
  JSON.stringify({ method: "POST", path: "/groups", body: { name: "Night porters" } }),
  JSON.stringify({
    method: "POST",
    path: "/holders",
    body: {
      firstName: "Ann",
      lastName: "Lee",
      credentials: [{ types: ["card"], credentialNumber: 555001, facilityCode: 17 }],
    },
  }),
  "",
  JSON.stringify([
    { method: "POST", path: "/groups", body: { name: "Day porters" } },
    { method: "POST", path: "/groups", body: { name: "Day porters" } },
  ]),
  JSON.stringify({ method: "GET", path: "/groups?search=porters" }),
  "{not json",
  JSON.stringify([
    { method: "POST", path: "/groups", body: { name: "Weekend porters" } },
    { method: "GET", path: "/groups?search=weekend" },
  ]),
].join("\n");

function lines(stdout: string): Record<string, unknown>[] {
  return stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("rsop apply", () => {
  test("answers every input line in order, with statuses, ids, bodies and issues; exit 1 when any was refused", async () => {
    const out = `${dir}/after.json`;
    const r = await run([
      "apply",
      "--system",
      BUILDING,
      "--ops",
      file("ops.jsonl", OPS),
      "--seed-ids",
      "7",
      "--out",
      out,
    ]);
    expect(r.code).toBe(1);
    const got = lines(r.stdout);
    expect(got.map((l) => l.line)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(got.map((l) => l.status)).toEqual([200, 201, 400, 409, 200, 400, 200]);
    expect(got[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(got[3]).toMatchObject({ index: 1, issues: [{ path: "body.name" }] });
    expect(got[4]).toMatchObject({ total: 1, body: [{ name: "Night porters" }] });
    expect(got[5]).toMatchObject({ status: 400, issues: [{ path: "", message: expect.stringContaining("column 2") }] });
    expect(JSON.stringify(got[5])).not.toContain("not json"); // the line's text is never echoed
    expect(got[6]).toMatchObject({
      results: [{ status: 200 }, { status: 200, total: 1, body: [{ name: "Weekend porters" }] }],
    });
    expect(r.stderr).toContain("3 of 7 operation lines refused");

    // The written snapshot loads, keeps the accepted writes only, and decides the new card.
    const after = JSON.parse(readFileSync(out, "utf8")) as {
      groups: { name: string }[];
      holders: { firstName: string }[];
    };
    expect(after.groups.map((g) => g.name).filter((n) => n.endsWith("porters"))).toEqual([
      "Night porters",
      "Weekend porters",
    ]);
    const engine = loadEngineOrThrow(after);
    const d = engine.decide({
      deviceId: "door-main-entrance",
      at: "2026-04-15T14:15:00Z",
      credential: { credentialNumber: 555001, facilityCode: 17 },
    });
    expect(d).toMatchObject({ outcome: "denied", reason: "noActiveRule", holderId: got[1]!.id });
  });

  test("--seed-ids makes created ids repeatable; stdin works", async () => {
    const ops = `${JSON.stringify({ method: "POST", path: "/groups", body: { name: "A" } })}\n`;
    const a = await run(["apply", "--system", BUILDING, "--seed-ids", "42"], ops);
    const b = await run(["apply", "--system", BUILDING, "--seed-ids", "42", "--ops", "-"], ops);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(lines(a.stdout)[0]).toMatchObject({ line: 1, status: 200 });
  });

  test("usage errors exit 2; a refused snapshot exits 1 with its problems", async () => {
    expect((await run(["apply", "--system", BUILDING, "--seed-ids", "x"])).code).toBe(2);
    const bad = await run(
      ["apply", "--system", file("bad.json", { format: "rsop-system/1", systemId: "s", timezone: "Mars/Olympus" })],
      "",
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("timezone");
  });
});

describe("rsop apply --panel", () => {
  const PANEL = new URL("../../examples/panel.json", import.meta.url).pathname;

  test("takes seed 002 routes; creates get the next free integer; --out writes the panel", async () => {
    const out = `${dir}/panel-after.json`;
    const ops = [
      JSON.stringify({ method: "POST", path: "/api/groups", body: { name: "Night porters" } }),
      JSON.stringify({ method: "POST", path: "/api/groups", body: { name: "Night porters" } }),
    ].join("\n");
    const r = await run(["apply", "--panel", PANEL, "--ops", file("panel-ops.jsonl", ops), "--out", out]);
    expect(r.code).toBe(1);
    const got = lines(r.stdout);
    const panel = JSON.parse(readFileSync(PANEL, "utf8")) as { groups: { id: number }[] };
    const next = Math.max(...panel.groups.map((g) => g.id)) + 1;
    expect(got[0]).toEqual({ line: 1, status: 200, id: next });
    expect(got[1]).toMatchObject({ line: 2, status: 409 });
    const after = JSON.parse(readFileSync(out, "utf8")) as { format: string; groups: { id: number; name: string }[] };
    expect(after.format).toBe("rsop-panel/1");
    expect(after.groups.find((g) => g.id === next)?.name).toBe("Night porters");
  });

  test("stdin cannot hold both the snapshot and the operations (usage, exit 2)", async () => {
    expect((await run(["apply", "--system", "-"], "{}")).code).toBe(2);
  });
});

describe("rsop apply and a slow reader", () => {
  test("reading pauses while stdout is full: what waits to be written stays within a chunk's answers", async () => {
    const { Readable, Writable, PassThrough } = await import("node:stream");
    const { applyCommand } = await import("../../src/adapters/cli/applyCommand.js");
    const op = `${JSON.stringify({ method: "GET", path: "/groups?search=porters" })}\n`;
    const chunks = Array.from({ length: 200 }, () => op.repeat(10));
    let written = 0;
    let mostWaiting = 0;
    const stdout = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        setTimeout(done, 1);
      },
    });
    const write = stdout.write.bind(stdout);
    stdout.write = ((chunk: string) => {
      const ok = write(chunk);
      mostWaiting = Math.max(mostWaiting, stdout.writableLength);
      return ok;
    }) as typeof stdout.write;
    const code = await applyCommand(
      { system: BUILDING, ops: "-" },
      { stdin: Readable.from(chunks), stdout, stderr: new PassThrough() },
    );
    await new Promise<void>((resolve) => stdout.end(resolve));
    expect(code).toBe(0);
    const answer = `${JSON.stringify({ line: 2000, status: 200, body: [], total: 0 })}\n`.length;
    expect(written).toBeGreaterThan(2000 * (answer - 4)); // every line answered
    expect(mostWaiting).toBeLessThan(1024 + 10 * answer); // the high-water mark and one chunk's answers
  }, 30_000);
});
