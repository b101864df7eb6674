// `rsop node` (N54, N57, N58, N60, N64): usage errors, a whole run over stdin against a real service
// (answers in order, events uploaded, hardware reported, exit 0 at the end of stdin), a data file of
// another node refused, and the --socket mode in a child process (connections numbered apart,
// SIGTERM ends it).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { NodeStore } from "../../src/node/nodeStore.js";
import { run, start, tempFiles } from "../adapters/cliHarness.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";
import { NODE, ROOT, SECOND, call, importSystem, nodeToken, ok, startService } from "../nodes/nodeSupport.js";
import { buildCli } from "../support/cliChild.js";

const files = tempFiles("rsop-node-cli-");
const servers: RunningServiceServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(removeTempDirs);

const NURSE = {
  deviceId: "door-ward-3",
  at: "2026-04-15T09:15:00-05:00",
  credential: { credentialNumber: 10234, facilityCode: 17 },
};

async function service(): Promise<{ server: RunningServiceServer; sys: string; token: string }> {
  const server = await startService();
  servers.push(server);
  const sys = await importSystem(server);
  return { server, sys, token: await nodeToken(server, sys) };
}

describe("usage (N64)", () => {
  const base = ["node", "--service", "http://127.0.0.1:1", "--data", join(files.dir, "u.db")];
  test.each([
    [[...base, "--node", NODE, "--token", "t"], "--system and --node are required"],
    [[...base, "--system", "s", "--node", NODE], "--token (or the environment variable RSOP_NODE_TOKEN) is required"],
    [[...base, "--system", "s", "--node", NODE, "--token", "t", "--heartbeat", "0"], "--heartbeat must be"],
    [[...base, "--system", "s", "--node", NODE, "--token", "t", "--heartbeat", "2.5"], "--heartbeat must be"],
    [[...base, "--panel", "CN-1", "--token", "t"], "--panel (a 1.0 panel as a node) is not supported yet"],
    [["node", "--service", "not a url", "--data", "x.db", "--system", "s", "--node", "n", "--token", "t"], "--service"],
  ])("%j → exit 2", async (argv, message) => {
    const saved = process.env.RSOP_NODE_TOKEN;
    delete process.env.RSOP_NODE_TOKEN;
    try {
      const r = await run(argv);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe("");
    } finally {
      if (saved !== undefined) process.env.RSOP_NODE_TOKEN = saved;
    }
  });

  test("--hardware that is not a JSON array: exit 1 naming the file", async () => {
    const hw = files.file("hw-object.json", { id: "x" });
    const r = await run(
      ["node", "--service", "http://127.0.0.1:1", "--data", join(files.dir, "h.db")].concat([
        "--system",
        "s",
        "--node",
        NODE,
        "--token",
        "t",
        "--hardware",
        hw,
      ]),
    );
    expect([r.code, r.stderr]).toEqual([1, `rsop: --hardware ${hw}: must be a JSON array\n`]);
  });
});

describe("a run over stdin against a real service (N53, N56–N58, N60)", () => {
  test("answers in order, uploads every event, reports its hardware, exits 0 when stdin ends", async () => {
    const { server, sys, token } = await service();
    const data = join(tempDir(), "node.db");
    const hardware = [{ id: "hub-1", type: "lockhub", firmwareVersion: "2.1.0" }];
    const cli = start([
      "node",
      ...["--service", server.url, "--system", sys, "--node", NODE, "--token", token, "--data", data],
      ...["--heartbeat", "1", "--hardware", files.file("hw.json", hardware)],
    ]);
    cli.stdin.write(`${JSON.stringify(NURSE)}\n`);
    const first = JSON.parse(await cli.nextLine());
    expect(first).toMatchObject({ line: 1, outcome: "allowed", reason: "allowed" });
    cli.stdin.write(`not json\n\n${JSON.stringify({ ...NURSE, node: { online: true } })}\n`);
    expect(JSON.parse(await cli.nextLine())).toEqual({ line: 2, error: { message: "invalid JSON", issues: [] } });
    expect(JSON.parse(await cli.nextLine()).error.issues[0].path).toBe("node");
    cli.stdin.end(`${JSON.stringify({ ...NURSE, deviceId: "no-such-door" })}`);
    expect(JSON.parse(await cli.nextLine())).toMatchObject({ line: 5, outcome: "denied", reason: "unknownDevice" });
    const done = await cli.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain("rsop node: online");
    // Two decided scans were events; both were uploaded before the exit (N53, N58).
    expect(done.stderr).toMatch(/uploaded 2 events|uploaded 1 events[\s\S]*uploaded 1 events/);
    const store = await NodeStore.open(data, { service: server.url, systemId: sys, nodeId: NODE });
    try {
      expect(store.pending()).toBe(0);
    } finally {
      store.close();
    }
    const reported = ok(await call(server, ROOT, "GET", `/${sys}/cloud-nodes/${NODE}/hardware`), 200, "hardware");
    expect(reported).toEqual(hardware);
  });

  test("a data file of another node is refused, naming that node (N54): exit 1", async () => {
    const { server, sys, token } = await service();
    const data = join(tempDir(), "shared.db");
    const first = start([
      "node",
      "--service",
      server.url,
      "--system",
      sys,
      "--node",
      NODE,
      "--token",
      token,
      "--data",
      data,
    ]);
    first.stdin.end();
    expect((await first.done).code).toBe(0);
    const second = await run([
      "node",
      ...["--service", server.url, "--system", sys, "--node", SECOND, "--token", token, "--data", data],
    ]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`belongs to cloud node ${NODE} of system ${sys}`);
  });
});

describe("--socket (N58)", () => {
  function lines(path: string, text: string, count: number): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const socket = connect(path);
      let got = "";
      const timer = setTimeout(() => reject(new Error(`no ${count} answers on ${path}: ${got}`)), 15_000);
      socket.on("data", (b) => {
        got += b.toString("utf8");
        const all = got.split("\n").filter((l) => l !== "");
        if (all.length >= count) {
          clearTimeout(timer);
          socket.end();
          resolve(all);
        }
      });
      socket.on("error", reject);
      socket.write(text);
    });
  }

  test("each connection is answered on itself from its own line 1; SIGTERM ends the node with 0", async () => {
    const { server, sys, token } = await service();
    const cli = await buildCli("node-socket");
    const socket = join(tempDir(), "scans.sock");
    const child: ChildProcess = spawn(
      process.execPath,
      [cli, "node", "--service", server.url, "--system", sys, "--node", NODE, "--data", join(tempDir(), "s.db")].concat(
        ["--socket", socket],
      ),
      { env: { ...process.env, RSOP_NODE_TOKEN: token }, stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    child.stderr!.on("data", (b: Buffer) => {
      log += b.toString("utf8");
    });
    try {
      const end = Date.now() + 20_000;
      // The socket listens once the node has its system and its first heartbeat's answer (N57).
      while (!log.includes("rsop node: online") || !existsSync(socket)) {
        if (Date.now() > end || child.exitCode !== null) throw new Error(`the node did not come online: ${log}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const scan = `${JSON.stringify(NURSE)}\n`;
      const [a, b] = await Promise.all([lines(socket, scan + scan, 2), lines(socket, scan, 1)]);
      expect(a.map((l) => JSON.parse(l).line)).toEqual([1, 2]);
      expect(b.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({ line: 1, outcome: "allowed" })]);
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });
});
