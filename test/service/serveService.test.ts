// `rsop serve --data FILE.db` without a snapshot (T52): a new database starts the service with its
// root organization and no token (every request 401, the log says how to give the first admin
// access); a restart with RSOP_TOKEN makes that token the root's admin; flags that belong to one
// mode are usage errors in the other.
import { EventEmitter } from "node:events";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { afterAll, describe, expect, test } from "vitest";
import { type ServeOptions, serveCommand } from "../../src/adapters/cli/serveCommand.js";
import type { RunningServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { run } from "../adapters/cliHarness.js";
import { BUILDING_FILE, removeTempDirs, tempDir } from "../http/fixtures.js";

afterAll(removeTempDirs);

const ROOT_TOKEN = "root-admin-token-0123456789";

/** Starts `serveCommand` in-process with captured stderr and a signal source of its own. */
async function serving(opts: Partial<ServeOptions>, env: Record<string, string | undefined>) {
  const stderr = new PassThrough();
  let log = "";
  stderr.on("data", (b: Buffer) => (log += b.toString("utf8")));
  const io = { stdin: Readable.from([]), stdout: new PassThrough(), stderr };
  const signals = new EventEmitter();
  let server: RunningServiceServer | undefined;
  let listening!: () => void;
  const started = new Promise<void>((resolve) => (listening = resolve));
  const exit = serveCommand({ port: "0", host: "127.0.0.1", ...opts }, io, env, signals, undefined, undefined, (s) => {
    server = s;
    listening();
  });
  await Promise.race([started, exit]);
  if (server === undefined) throw new Error(`the service did not start: ${log}`);
  const stop = async () => {
    signals.emit("SIGTERM");
    expect(await exit).toBe(0);
  };
  return { server, log: () => log, stop };
}

describe("T52: rsop serve --data FILE.db as a service", () => {
  test("a new database starts the service without tokens; a restart with RSOP_TOKEN serves the root's admin", async () => {
    const db = join(tempDir(), "service.db");
    const first = await serving({ data: db }, {});
    const root = first.server.registry.root().id;
    expect(first.log()).toContain("no users, applications or tokens yet: every request is refused (401)");
    expect(first.log()).toContain("rsop users add --data");
    expect(first.log()).toContain(`"organizations": ["${root}"]`);
    expect((await fetch(`${first.server.url}/api/organizations/mine`)).status).toBe(401);
    expect((await fetch(`${first.server.url}/healthz`)).status).toBe(200);
    await first.stop();

    const second = await serving({ data: db }, { RSOP_TOKEN: ROOT_TOKEN });
    expect(second.server.registry.root().id).toBe(root);
    expect(second.log()).not.toContain("no users, applications or tokens yet");
    const mine = await fetch(`${second.server.url}/api/organizations/mine`, {
      headers: { authorization: `Bearer ${ROOT_TOKEN}` },
    });
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as { id: string }[]).map((o) => o.id)).toEqual([root]);
    await second.stop();
  });

  test("--insecure-no-auth is a usage error for a service; --memory-budget and --public-url for one system", async () => {
    const db = join(tempDir(), "service.db");
    const insecure = await run(["serve", "--data", db, "--insecure-no-auth", "--port", "0"]);
    expect(insecure).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--insecure-no-auth serves one system"),
    });
    const one = join(tempDir(), "one.db");
    for (const flag of [
      ["--memory-budget", "64MiB"],
      ["--public-url", "https://access.example.test"],
    ]) {
      const r = await run(["serve", "--data", one, "--system", BUILDING_FILE, "--token", ROOT_TOKEN, ...flag]);
      expect(r, flag[0]).toMatchObject({ code: 2, stderr: expect.stringContaining("are for a service database") });
    }
    const bad = await run(["serve", "--data", db, "--token", ROOT_TOKEN, "--memory-budget", "lots"]);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("--memory-budget must be a size") });
  });
});
