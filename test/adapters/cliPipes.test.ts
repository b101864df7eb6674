// Issue 12, "Streams and the CLI": a closed stdout or stderr is a normal end. The built `rsop` runs
// as a real process with a real pipe that its reader closes early (`rsop demo | head -3`): it must
// stop quietly with exit 0 and nothing on stderr — no EPIPE stack trace. The CLI is bundled once into
// a private folder (not dist/, which test/package.test.ts rebuilds concurrently).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "rsop-cli-pipes-"));
const cli = join(dir, "dist", "cli.js");
const SYSTEM = join(root, "examples", "building.json");
const PANEL = join(root, "examples", "panel.json");
const building = JSON.parse(readFileSync(SYSTEM, "utf8")) as { holders: { id: string }[] };
const REQUEST = readFileSync(join(root, "examples", "requests.jsonl"), "utf8").split("\n")[0]!;
const IDS_300 = building.holders
  .slice(0, 300)
  .map((h) => h.id)
  .join(",");

beforeAll(async () => {
  // As the package lays it out: dist/cli.js with examples/ beside dist/, and the dependencies.
  symlinkSync(join(root, "examples"), join(dir, "examples"));
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  await build({
    entry: { cli: join(root, "src/adapters/cli/bin.ts") },
    outDir: join(dir, "dist"),
    format: ["esm"],
    target: "node20",
    silent: true,
    config: false,
  });
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function exited(child: ChildProcess): Promise<Exit> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (b: Buffer) => (stdout += b.toString()));
  child.stderr?.on("data", (b: Buffer) => (stderr += b.toString()));
  child.stdout?.on("error", () => {}); // the test closed it on purpose
  child.stderr?.on("error", () => {});
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** Runs `rsop args` with its stdout (or stderr) a pipe whose reader is gone before it writes. */
function closedEarly(
  args: string[],
  which: "stdout" | "stderr",
  stdin?: (w: NodeJS.WritableStream) => void,
): Promise<Exit> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  child[which]!.destroy();
  const done = exited(child);
  child.stdin!.on("error", () => {}); // it may stop reading before the end
  if (stdin) stdin(child.stdin!);
  else child.stdin!.end();
  return done;
}

/** Runs a shell pipeline `rsop args | reader` and answers rsop's exit code and stderr. */
function pipeline(args: string[], reader: string): Promise<{ code: number; stderr: string }> {
  const quoted = args.map((a) => `'${a}'`).join(" ");
  const script = `"${process.execPath}" "${cli}" ${quoted} 2>"${dir}/err" | ${reader} >/dev/null; echo "\${PIPESTATUS[0]}"; cat "${dir}/err"`;
  return new Promise((resolve, reject) =>
    execFile("bash", ["-c", script], { maxBuffer: 1 << 24 }, (e, out) => {
      if (e) return reject(e);
      const [code, ...err] = out.split("\n");
      resolve({ code: Number(code), stderr: err.join("\n").trim() });
    }),
  );
}

const requests = `${REQUEST}\n`.repeat(20_000);

describe("a closed stdout ends the command quietly with exit 0", () => {
  const cases: [string, string[], string][] = [
    ["rsop demo | head -3", ["demo"], "head -3"],
    ["rsop decide … | head -1", ["decide", "--system", SYSTEM, "--request", `${dir}/requests.jsonl`], "head -1"],
    [
      "rsop migrate … | head -c 300",
      ["migrate", "--panel", PANEL, "--system-id", "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90"],
      "head -c 300",
    ],
    [
      "rsop rsop --ids <300 ids> | head -1",
      ["rsop", "--system", SYSTEM, "--ids", IDS_300, "--at", "2026-04-15T14:15:00Z"],
      "head -1",
    ],
  ];

  beforeAll(async () => {
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${dir}/requests.jsonl`, requests);
  });

  test.each(cases)("%s, with a real shell pipeline", async (_, args, reader) => {
    expect(await pipeline(args, reader)).toEqual({ code: 0, stderr: "" });
  });

  test.each(cases)("%s, with the reader gone before the first write", async (_, args) => {
    expect(await closedEarly(args, "stdout")).toMatchObject({ code: 0, signal: null, stderr: "" });
  });

  /** Runs `rsop args` with stdout closed early and `line` written to its stdin for as long as it reads. */
  async function endlessStdin(args: string[], line: string): Promise<Exit> {
    let feeding = true;
    const chunk = `${line}\n`.repeat(100);
    const r = await closedEarly(args, "stdout", (w) => {
      const feed = () => {
        while (feeding && w.write(chunk));
        if (feeding) w.once("drain", feed);
      };
      w.on("error", () => (feeding = false));
      w.on("close", () => (feeding = false));
      feed();
    });
    feeding = false;
    return r;
  }

  test("decide stops reading an endless stdin once its stdout is closed", async () => {
    expect(await endlessStdin(["decide", "--system", SYSTEM], REQUEST)).toMatchObject({
      code: 0,
      signal: null,
      stderr: "",
    });
  });

  test("apply stops reading an endless stdin once its stdout is closed", async () => {
    const op = JSON.stringify({ method: "GET", path: "/groups?search=porters" });
    expect(await endlessStdin(["apply", "--system", SYSTEM, "--ops", "-"], op)).toMatchObject({
      code: 0,
      signal: null,
      stderr: "",
    });
  }, 20_000);
});

describe("a closed stderr ends the command quietly, keeping its own exit code", () => {
  test("rsop migrate --verbose (39 dropped lines on stderr)", async () => {
    const r = await closedEarly(
      ["migrate", "--verbose", "--panel", PANEL, "--system-id", "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90"],
      "stderr",
    );
    expect(r).toMatchObject({ code: 0, signal: null });
    expect(r.stdout).not.toMatch(/EPIPE|\n +at /);
  });

  test("rsop decide with refused lines (their problems go to stderr): exit 1, no stack trace", async () => {
    const r = await closedEarly(["decide", "--system", SYSTEM], "stderr", (w) =>
      w.end(`{"deviceId": 1}\n`.repeat(5000)),
    );
    expect(r).toMatchObject({ code: 1, signal: null });
    expect(r.stdout).toMatch(/^\{"line":1,"error":\{"message":"invalid request"/);
    expect(r.stdout).not.toMatch(/EPIPE|\n +at /);
  });

  test("a usage error stays exit 2, and stdout has no stack trace", async () => {
    const r = await closedEarly(["validate"], "stderr");
    expect(r).toMatchObject({ code: 2, signal: null, stdout: "" });
  });
});
