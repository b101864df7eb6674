// `rsop serve`: options, refusal without authentication, logs, signals, and the acceptance check that
// the RSOP route answers byte for byte what `rsop rsop` prints.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { EventEmitter } from "node:events";
import { join, resolve } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { build } from "tsup";
import { afterAll, afterEach, describe, expect, onTestFinished, test, vi } from "vitest";
import { type ServeOptions, serveCommand } from "../../src/adapters/cli/serveCommand.js";
import type { RunningServer } from "../../src/adapters/http/startServer.js";
import { run } from "../adapters/cliHarness.js";
import {
  AT,
  BUILDING_FILE,
  BUILDING_ID,
  TOKEN,
  brokenSnapshot,
  building,
  removeTempDirs,
  tempDir,
  writeInPlace,
} from "./fixtures.js";

afterAll(removeTempDirs);

const ROOT = resolve(__dirname, "../..");

afterEach(() => {
  vi.unstubAllEnvs();
});

/** Starts `serveCommand` in-process with captured stderr and a fake signal source. */
async function serving(opts: Partial<ServeOptions>, env: Record<string, string | undefined>) {
  const stderr = new PassThrough();
  let log = "";
  stderr.on("data", (b: Buffer) => (log += b.toString("utf8")));
  const io = { stdin: Readable.from([]), stdout: new PassThrough(), stderr };
  const signals = new EventEmitter();
  let server: RunningServer | undefined;
  let listening!: () => void;
  const started = new Promise<void>((resolve) => (listening = resolve));
  const exit = serveCommand({ system: BUILDING_FILE, port: "0", host: "127.0.0.1", ...opts }, io, env, signals, (s) => {
    server = s;
    listening();
  });
  await Promise.race([started, exit]);
  if (server === undefined) throw new Error(`the server did not start: ${log}`);
  return { server, signals, exit, log: () => log };
}

describe("rsop serve", () => {
  test("refuses to start without a token, and says how to give one", async () => {
    vi.stubEnv("RSOP_TOKEN", "");
    const r = await run(["serve", "--system", BUILDING_FILE, "--port", "0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("refusing to start without authentication: pass --token <token> or set RSOP_TOKEN");
  });

  test("a token and --insecure-no-auth contradict; a bad port is refused", async () => {
    vi.stubEnv("RSOP_TOKEN", TOKEN);
    expect((await run(["serve", "--system", BUILDING_FILE, "--insecure-no-auth"])).stderr).toContain(
      "--insecure-no-auth contradicts",
    );
    vi.stubEnv("RSOP_TOKEN", "");
    const r = await run(["serve", "--system", BUILDING_FILE, "--token", TOKEN, "--port", "http"]);
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining("--port must be an integer from 0 to 65535") });
    const spaced = await run(["serve", "--system", BUILDING_FILE, "--token", "two words", "--port", "0"]);
    expect(spaced).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("the token may hold only letters, digits and -._~+/"),
    });
  });

  test("a broken snapshot: every problem listed, exit 1", async () => {
    const file = join(tempDir(), "broken.json");
    writeInPlace(file, brokenSnapshot);
    const r = await run(["serve", "--system", file, "--token", TOKEN, "--port", "0"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("3 problems");
    for (const path of ["timezone", "holders[0].groups[0]", "rules[0].stopTime"])
      expect(r.stderr).toContain(`  ${path}: `);
  });

  test("a port in use is a clear error, exit 1", async () => {
    const first = await serving({ token: TOKEN }, {});
    const port = new URL(first.server.url).port;
    const r = await run(["serve", "--system", BUILDING_FILE, "--token", TOKEN, "--port", port]);
    // CE2: the reason in words, with what to do, not the errno code.
    expect(r).toMatchObject({
      code: 1,
      stderr: `rsop: cannot listen on 127.0.0.1:${port}: the address is already in use (another process listens there: stop it or choose another --port)\n`,
    });
    first.signals.emit("SIGTERM");
    expect(await first.exit).toBe(0);
  });

  test("--help lists the options", async () => {
    const r = await run(["serve", "--help"]);
    expect(r.code).toBe(0);
    for (const o of [
      "--system <file>",
      "--port <n>",
      "--host <address>",
      "--token <token>",
      "--insecure-no-auth",
      "--base-path <path>",
      "--max-body <size>",
      "--request-timeout <ms>",
      "--headers-timeout <ms>",
      "--max-connections <n>",
      "--allow-short-token",
    ])
      expect(r.stdout).toContain(o);
  });

  test("acceptance: the RSOP routes answer exactly what `rsop rsop` prints", async () => {
    const { server, signals, exit } = await serving({}, { RSOP_TOKEN: TOKEN });
    try {
      const ids = "holder-0001,holder-0002,holder-0150";
      const http = await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=${ids}&at=${AT}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const cli = await run(["rsop", "--system", BUILDING_FILE, "--ids", ids, "--at", AT]);
      expect(cli.code).toBe(0);
      expect(http.status).toBe(200);
      expect(await http.text()).toBe(cli.stdout);

      const scoped = await fetch(
        `${server.url}/${BUILDING_ID}/cloud-nodes/node-london-annex/rsop/holders?ids=${ids}&at=${AT}`,
        { headers: { authorization: `Bearer ${TOKEN}` } },
      );
      const cliScoped = await run([
        "rsop",
        "--system",
        BUILDING_FILE,
        "--ids",
        ids,
        "--at",
        AT,
        "--cloud-node",
        "node-london-annex",
      ]);
      expect(await scoped.text()).toBe(cliScoped.stdout);
    } finally {
      signals.emit("SIGTERM");
    }
    expect(await exit).toBe(0);
  });

  test("logs a start line and one line per request; SIGINT closes the server (exit 0)", async () => {
    const { server, signals, exit, log } = await serving({ token: TOKEN, basePath: "/v2" }, {});
    const res = await fetch(`${server.url}/v2/${BUILDING_ID}/devices/door-pharmacy/access?at=${AT}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    signals.emit("SIGINT");
    expect(await exit).toBe(0);
    const stamped = log().trimEnd().split("\n");
    for (const l of stamped) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /);
    const lines = stamped.map((l) => l.slice(25));
    expect(lines[0]).toBe(`serving system ${BUILDING_ID} from ${BUILDING_FILE} on ${server.url}`);
    expect(lines[1]).toMatch(new RegExp(`^GET /v2/${BUILDING_ID}/devices/door-pharmacy/access 200 \\d+\\.\\dms$`));
    expect(lines.slice(2)).toEqual(["SIGINT: closing (waiting for open requests)", "closed"]);
    expect(signals.listenerCount("SIGINT") + signals.listenerCount("SIGTERM")).toBe(0);
    await expect(fetch(`${server.url}/v2/${BUILDING_ID}/devices/door-pharmacy/access`)).rejects.toThrow();
  });

  test("--insecure-no-auth serves without a token", async () => {
    const { server, signals, exit } = await serving({ insecureNoAuth: true }, {});
    expect((await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001&at=${AT}`)).status).toBe(200);
    signals.emit("SIGTERM");
    expect(await exit).toBe(0);
  });
});

describe("rsop serve: hardening", () => {
  test("usage errors exit 2: --port abc, a bad --max-body, --request-timeout or --max-connections", async () => {
    vi.stubEnv("RSOP_TOKEN", TOKEN);
    const cases: [string[], string][] = [
      [["--port", "abc"], "--port must be an integer from 0 to 65535"],
      [["--max-body", "lots"], "--max-body must be a size in bytes"],
      [["--max-body", "0"], "--max-body must be a size in bytes"],
      [["--request-timeout", "-5"], "--request-timeout must be a positive integer"],
      [["--headers-timeout", "1.5"], "--headers-timeout must be a positive integer"],
      [["--max-connections", "0"], "--max-connections must be a positive integer"],
    ];
    for (const [args, message] of cases) {
      const r = await run(["serve", "--system", BUILDING_FILE, "--port", "0", ...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });

  test("a token shorter than 16 characters: refused (exit 2) unless --allow-short-token, which warns", async () => {
    vi.stubEnv("RSOP_TOKEN", "");
    const r = await run(["serve", "--system", BUILDING_FILE, "--token", "hunter2", "--port", "0"]);
    expect(r).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("the token has 7 characters; use at least 16"),
    });
    const { server, signals, exit, log } = await serving({ token: "hunter2", allowShortToken: true }, {});
    expect(
      (
        await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001&at=${AT}`, {
          headers: { authorization: "Bearer hunter2" },
        })
      ).status,
    ).toBe(200);
    signals.emit("SIGTERM");
    expect(await exit).toBe(0);
    expect(log()).toContain("warning: the token has only 7 characters (--allow-short-token)");
  });

  test("--max-body raises the 1 MiB limit: 100,000 decisions in one POST over HTTP", async () => {
    const { server, signals, exit } = await serving({ token: TOKEN, maxBody: "32MiB" }, {});
    try {
      const requests = Array.from({ length: 100_000 }, (_, i) => ({
        deviceId: i % 2 === 0 ? "door-ward-3" : "door-pharmacy",
        at: 1_776_265_200_000 + i * 1000,
        credential: { credentialNumber: 10_000 + (i % 500), facilityCode: 17 },
      }));
      const body = JSON.stringify(requests);
      expect(body.length).toBeGreaterThan(1024 * 1024);
      const res = await fetch(`${server.url}/${BUILDING_ID}/decisions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body,
      });
      expect(res.status).toBe(200);
      const decisions = (await res.json()) as unknown[];
      expect(decisions).toHaveLength(100_000);
      for (const i of [0, 1, 4_999, 77_777, 99_999]) expect(decisions[i]).toEqual(building.decide(requests[i]));
      // Without the flag the same body is refused.
      const small = await serving({ token: TOKEN }, {});
      const refused = await fetch(`${small.server.url}/${BUILDING_ID}/decisions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body,
      });
      expect(refused.status).toBe(413);
      small.signals.emit("SIGTERM");
      expect(await small.exit).toBe(0);
    } finally {
      signals.emit("SIGTERM");
    }
    expect(await exit).toBe(0);
  });

  test("a closed stderr (the log reader gone) does not take the server down", async () => {
    // The real executable in a child process, its stderr a pipe whose reading end we close.
    // Built as `npm run build` builds it, into a folder below node_modules so that its imports of
    // the dependencies resolve.
    const outDir = mkdtempSync(join(ROOT, "node_modules", ".rsop-serve-test-"));
    onTestFinished(() => rmSync(outDir, { recursive: true, force: true }));
    await build({
      entry: { cli: join(ROOT, "src/adapters/cli/bin.ts") },
      outDir,
      format: ["esm"],
      platform: "node",
      target: "node20",
      config: false,
      silent: true,
      outExtension: () => ({ js: ".mjs" }),
    });
    const child = spawn(
      process.execPath,
      [join(outDir, "cli.mjs"), "serve", "--system", BUILDING_FILE, "--port", "0"],
      {
        env: { ...process.env, RSOP_TOKEN: TOKEN },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        let text = "";
        child.stderr!.on("data", (b: Buffer) => {
          text += b.toString("utf8");
          const m = / on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(text);
          if (m !== null) resolveUrl(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`serve exited (${code}) before listening: ${text}`)));
      });
      child.stderr!.destroy(); // from now on every log line the server writes meets EPIPE
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${url}/${BUILDING_ID}/rsop/holders?ids=holder-0001&at=${AT}`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        expect(res.status).toBe(200);
        await res.text();
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(child.exitCode).toBeNull();
    } finally {
      const exited = new Promise((r) => child.once("exit", r));
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    }
  });
});
