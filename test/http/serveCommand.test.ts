// `rsop serve`: options, refusal without authentication, logs, signals, and the acceptance check that
// the RSOP route answers byte for byte what `rsop rsop` prints.
import { EventEmitter } from "node:events";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { afterAll, afterEach, describe, expect, test, vi } from "vitest";
import { type ServeOptions, serveCommand } from "../../src/adapters/cli/serveCommand.js";
import type { RunningServer } from "../../src/adapters/http/startServer.js";
import { run } from "../adapters/cliHarness.js";
import { AT, BUILDING_FILE, BUILDING_ID, TOKEN, brokenSnapshot, removeTempDirs, tempDir, writeInPlace } from "./fixtures.js";

afterAll(removeTempDirs);

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
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refusing to start without authentication: pass --token <token> or set RSOP_TOKEN");
  });

  test("a token and --insecure-no-auth contradict; a bad port is refused", async () => {
    vi.stubEnv("RSOP_TOKEN", TOKEN);
    expect((await run(["serve", "--system", BUILDING_FILE, "--insecure-no-auth"])).stderr).toContain("--insecure-no-auth contradicts");
    vi.stubEnv("RSOP_TOKEN", "");
    const r = await run(["serve", "--system", BUILDING_FILE, "--token", TOKEN, "--port", "http"]);
    expect(r).toMatchObject({ code: 1, stderr: expect.stringContaining("--port must be an integer from 0 to 65535") });
    const spaced = await run(["serve", "--system", BUILDING_FILE, "--token", "two words", "--port", "0"]);
    expect(spaced).toMatchObject({ code: 1, stderr: expect.stringContaining("the token may hold only letters, digits and -._~+/") });
  });

  test("a broken snapshot: every problem listed, exit 1", async () => {
    const file = join(tempDir(), "broken.json");
    writeInPlace(file, brokenSnapshot);
    const r = await run(["serve", "--system", file, "--token", TOKEN, "--port", "0"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("3 problems");
    for (const path of ["timezone", "holders[0].groups[0]", "rules[0].stopTime"]) expect(r.stderr).toContain(`  ${path}: `);
  });

  test("a port in use is a clear error, exit 1", async () => {
    const first = await serving({ token: TOKEN }, {});
    const port = new URL(first.server.url).port;
    const r = await run(["serve", "--system", BUILDING_FILE, "--token", TOKEN, "--port", port]);
    expect(r).toMatchObject({ code: 1, stderr: `rsop: cannot listen on 127.0.0.1:${port}: EADDRINUSE\n` });
    first.signals.emit("SIGTERM");
    expect(await first.exit).toBe(0);
  });

  test("--help lists the options", async () => {
    const r = await run(["serve", "--help"]);
    expect(r.code).toBe(0);
    for (const o of ["--system <file>", "--port <n>", "--host <address>", "--token <token>", "--insecure-no-auth", "--base-path <path>"]) expect(r.stdout).toContain(o);
  });

  test("acceptance: the RSOP routes answer exactly what `rsop rsop` prints", async () => {
    const { server, signals, exit } = await serving({}, { RSOP_TOKEN: TOKEN });
    try {
      const ids = "holder-0001,holder-0002,holder-0150";
      const http = await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=${ids}&at=${AT}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const cli = await run(["rsop", "--system", BUILDING_FILE, "--ids", ids, "--at", AT]);
      expect(cli.code).toBe(0);
      expect(http.status).toBe(200);
      expect(await http.text()).toBe(cli.stdout);

      const scoped = await fetch(`${server.url}/${BUILDING_ID}/cloud-nodes/node-london-annex/rsop/holders?ids=${ids}&at=${AT}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const cliScoped = await run(["rsop", "--system", BUILDING_FILE, "--ids", ids, "--at", AT, "--cloud-node", "node-london-annex"]);
      expect(await scoped.text()).toBe(cliScoped.stdout);
    } finally {
      signals.emit("SIGTERM");
    }
    expect(await exit).toBe(0);
  });

  test("logs a start line and one line per request; SIGINT closes the server (exit 0)", async () => {
    const { server, signals, exit, log } = await serving({ token: TOKEN, basePath: "/v2" }, {});
    const res = await fetch(`${server.url}/v2/${BUILDING_ID}/devices/door-pharmacy/access?at=${AT}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    signals.emit("SIGINT");
    expect(await exit).toBe(0);
    const lines = log().trimEnd().split("\n");
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
