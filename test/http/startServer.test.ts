// The server over real HTTP on 127.0.0.1 (an ephemeral port; never any other address).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { type Socket, connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningServer, startServer } from "../../src/adapters/http/startServer.js";
import { SnapshotError } from "../../src/index.js";
import {
  AT,
  BUILDING_FILE,
  BUILDING_ID,
  TOKEN,
  building,
  brokenSnapshot,
  engineA,
  engineB,
  logSink,
  replaceByRename,
  snapshotA,
  snapshotB,
  removeTempDirs,
  tempDir,
  waitFor,
  writeInPlace,
} from "./fixtures.js";

afterAll(removeTempDirs);

const auth = { authorization: `Bearer ${TOKEN}` };

async function errorStatus(res: Response): Promise<number> {
  const body = (await res.json()) as { error: { status: number } };
  expect(body.error.status).toBe(res.status);
  return res.status;
}

/** A POST through node:http, body written in chunks without Content-Length (chunked encoding). */
function postChunked(url: string, chunks: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: "POST", headers: { ...auth, "content-type": "application/json" } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe("every status over HTTP", () => {
  const logs = logSink();
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      systemFile: BUILDING_FILE,
      token: TOKEN,
      maxBodyBytes: 4096,
      log: logs.log,
      watch: false,
    });
  });
  afterAll(() => server.close());

  test("listens on 127.0.0.1 only", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test("200: RSOP exactly as engine.rsop", async () => {
    const res = await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001,holder-0002&at=${AT}`, {
      headers: auth,
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(
      `${JSON.stringify(building.rsop(["holder-0001", "holder-0002"], { at: AT }), null, 2)}\n`,
    );
  });

  test("200: decisions and device access", async () => {
    const r = {
      deviceId: "door-ward-3",
      at: "2026-04-15T09:15:00-05:00",
      credential: { credentialNumber: 10234, facilityCode: 17 },
    };
    const res = await fetch(`${server.url}/${BUILDING_ID}/decisions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify([r]),
    });
    expect(await res.json()).toEqual([building.decide(r)]);
    const who = await fetch(`${server.url}/${BUILDING_ID}/devices/door-pharmacy/access?at=${AT}`, { headers: auth });
    expect(await who.json()).toEqual(building.whoCanAccess("door-pharmacy", { at: AT }));
  });

  test("400: a bad query and a bad body", async () => {
    expect(await errorStatus(await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=`, { headers: auth }))).toBe(
      400,
    );
    const res = await fetch(`${server.url}/${BUILDING_ID}/decisions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: "[{]",
    });
    expect(await errorStatus(res)).toBe(400);
  });

  test("401: no token, with WWW-Authenticate", async () => {
    const res = await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001`);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="rsop"');
    expect(await errorStatus(res)).toBe(401);
  });

  test('401: a wrong token, with WWW-Authenticate error="invalid_token" (RFC 6750 §3.1)', async () => {
    const res = await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001`, {
      headers: { authorization: `Bearer ${TOKEN}x` },
    });
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="rsop", error="invalid_token"');
    expect(await errorStatus(res)).toBe(401);
  });

  test("404: unknown route, system, holder", async () => {
    expect(await errorStatus(await fetch(`${server.url}/${BUILDING_ID}/holders`, { headers: auth }))).toBe(404);
    expect(
      await errorStatus(await fetch(`${server.url}/another-system/rsop/holders?ids=holder-0001`, { headers: auth })),
    ).toBe(404);
    const res = await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=nobody`, { headers: auth });
    expect(await res.json()).toEqual({
      error: {
        status: 404,
        message: "Unknown id.",
        issues: [{ path: "ids[0]", message: 'Unknown holder id "nobody".' }],
      },
    });
  });

  test("405: with Allow", async () => {
    const res = await fetch(`${server.url}/${BUILDING_ID}/decisions`, { headers: auth });
    expect(res.headers.get("allow")).toBe("POST");
    expect(await errorStatus(res)).toBe(405);
  });

  test("413: declared by Content-Length, and counted on a chunked body", async () => {
    const big = JSON.stringify({ padding: "x".repeat(10_000) });
    const res = await fetch(`${server.url}/${BUILDING_ID}/decisions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: big,
    });
    expect(await errorStatus(res)).toBe(413);
    const chunked = await postChunked(
      `${server.url}/${BUILDING_ID}/decisions`,
      Array.from({ length: 10 }, () => " ".repeat(1000)),
    );
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: { status: 413 } });
    // The connection and the server are fine afterwards.
    expect(
      (await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001&at=${AT}`, { headers: auth })).status,
    ).toBe(200);
  });

  test("415: not JSON", async () => {
    const res = await fetch(`${server.url}/${BUILDING_ID}/decisions`, {
      method: "POST",
      headers: { ...auth, "content-type": "text/plain" },
      body: "{}",
    });
    expect(await errorStatus(res)).toBe(415);
  });

  test("one log line per request: method, path without the query, status, duration", async () => {
    const before = logs.lines.length;
    await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001&at=${AT}`, { headers: auth });
    await fetch(`${server.url}/nope`, { headers: auth });
    const lines = logs.lines.slice(before);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^GET /${BUILDING_ID}/rsop/holders 200 \\d+\\.\\dms$`));
    expect(lines[1]).toMatch(/^GET \/nope 404 \d+\.\dms$/);
    expect(logs.lines.join("\n")).not.toContain(TOKEN);
    expect(logs.lines.join("\n")).not.toContain("holder-0001");
  });
});

describe("start, reload, close", () => {
  test("refuses to start without a way to authenticate, or with a broken snapshot", async () => {
    await expect(startServer({ systemFile: BUILDING_FILE, log: () => {} })).rejects.toThrow(
      /refusing to start without authentication/,
    );
    await expect(
      startServer({ systemFile: BUILDING_FILE, token: TOKEN, insecureNoAuth: true, log: () => {} }),
    ).rejects.toThrow(/only one of/);
    const dir = tempDir();
    const file = join(dir, "broken.json");
    writeInPlace(file, brokenSnapshot);
    const e = await startServer({ systemFile: file, token: TOKEN, log: () => {} }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SnapshotError);
    expect((e as SnapshotError).issues.map((i) => i.path.join("."))).toEqual(
      expect.arrayContaining(["timezone", "holders.0.groups.0", "rules.0.stopTime"]),
    );
    await expect(startServer({ systemFile: join(dir, "missing.json"), token: TOKEN, log: () => {} })).rejects.toThrow(
      /Cannot read the file: ENOENT/,
    );
  });

  test("a port in use is an error", async () => {
    const first = await startServer({ systemFile: BUILDING_FILE, token: TOKEN, log: () => {}, watch: false });
    const port = Number(new URL(first.url).port);
    await expect(
      startServer({ systemFile: BUILDING_FILE, token: TOKEN, port, log: () => {}, watch: false }),
    ).rejects.toMatchObject({ code: "EADDRINUSE" });
    await first.close();
  });

  test("reload(): a broken file is refused and logged, the old engine keeps serving; a good one is swapped in", async () => {
    const dir = tempDir();
    const file = join(dir, "system.json");
    writeInPlace(file, snapshotA);
    const logs = logSink();
    const server = await startServer({ systemFile: file, token: TOKEN, log: logs.log, watch: false });
    try {
      const ask = async () =>
        (await fetch(`${server.url}/sys-ab/devices/d1/access?at=${AT}`, { headers: auth })).json();
      expect(await ask()).toEqual(engineA.whoCanAccess("d1", { at: AT }));

      writeInPlace(file, brokenSnapshot);
      const refused = await server.reload();
      expect(refused.status).toBe("refused");
      expect(logs.lines).toContain(`reload refused: ${file} has 3 problems; still serving the previous snapshot`);
      for (const path of ["timezone", "holders[0].groups[0]", "rules[0].stopTime"])
        expect(logs.lines.some((l) => l.startsWith(`  ${path}: `))).toBe(true);
      expect(await ask()).toEqual(engineA.whoCanAccess("d1", { at: AT }));

      writeInPlace(file, { ...snapshotB, systemId: "another" });
      expect(await server.reload()).toMatchObject({ status: "refused", issues: [{ path: ["systemId"] }] });

      writeInPlace(file, snapshotA);
      expect(await server.reload()).toEqual({ status: "unchanged" });
      expect(logs.lines).toContain(`${file} is back to the snapshot being served`);

      writeInPlace(file, snapshotB);
      expect((await server.reload()).status).toBe("reloaded");
      expect(logs.lines.at(-1)).toBe(`reloaded ${file}: system sys-ab, 2 holders, 1 devices, 1 rules`);
      expect(await ask()).toEqual(engineB.whoCanAccess("d1", { at: AT }));
      expect(engineB.whoCanAccess("d1", { at: AT })).not.toEqual(engineA.whoCanAccess("d1", { at: AT }));
    } finally {
      await server.close();
    }
  });

  test("the watcher follows a file replaced by rename (as editors do) and one rewritten in place", async () => {
    const dir = tempDir();
    const file = join(dir, "system.json");
    writeInPlace(file, snapshotA);
    const logs = logSink();
    const server = await startServer({ systemFile: file, token: TOKEN, log: logs.log, debounceMs: 20 });
    try {
      replaceByRename(file, snapshotB);
      await waitFor(
        () => server.engine().snapshot.groups[0]!.name === "Night staff",
        5000,
        "the renamed file to be loaded",
      );
      writeInPlace(file, brokenSnapshot);
      await waitFor(
        () => logs.lines.some((l) => l.startsWith("reload refused")),
        5000,
        "the broken file to be refused",
      );
      expect(server.engine().snapshot.groups[0]!.name).toBe("Night staff");
      writeInPlace(file, snapshotA);
      await waitFor(
        () => server.engine().snapshot.groups[0]!.name === "Day staff",
        5000,
        "the rewritten file to be loaded",
      );
      // A second rename after the first still works: the watch is on the directory, not the old inode.
      replaceByRename(file, snapshotB);
      await waitFor(
        () => server.engine().snapshot.groups[0]!.name === "Night staff",
        5000,
        "the second rename to be loaded",
      );
    } finally {
      await server.close();
    }
  });

  test("close() stops the server; later connections are refused", async () => {
    const server = await startServer({ systemFile: BUILDING_FILE, token: TOKEN, log: () => {}, watch: false });
    expect(
      (await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001&at=${AT}`, { headers: auth })).status,
    ).toBe(200);
    await server.close();
    await server.close(); // idempotent
    await expect(
      fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001`, { headers: auth }),
    ).rejects.toThrow();
  });
});

/** A raw TCP connection to the server, collecting what it answers and telling when it closes. */
function rawConnection(url: string): {
  socket: Socket;
  received: () => string;
  closed: Promise<void>;
  connected: Promise<void>;
} {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (d: string) => (text += d));
  socket.on("error", () => undefined); // a reset by the server shows as `closed`
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  const connected = new Promise<void>((r) => socket.once("connect", () => r()));
  return { socket, received: () => text, closed, connected };
}

function head(method: string, path: string, extra: string[] = []): string {
  return [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1", `Authorization: Bearer ${TOKEN}`, ...extra, "", ""].join(
    "\r\n",
  );
}

describe("hardening: timeouts, connection cap, aborts, /healthz", () => {
  test("a body dribbled slower than requestTimeoutMs: 408 and the connection is closed before the body is complete", async () => {
    const logs = logSink();
    const server = await startServer({
      systemFile: BUILDING_FILE,
      token: TOKEN,
      log: logs.log,
      watch: false,
      requestTimeoutMs: 300,
      headersTimeoutMs: 300,
    });
    try {
      const c = rawConnection(server.url);
      await c.connected;
      c.socket.write(
        head("POST", `/${BUILDING_ID}/decisions`, ["Content-Type: application/json", "Content-Length: 2000"]),
      );
      // One byte every 25 ms: the whole body would take 50 s. Stop sending once the server hangs up
      // (or after 400 bytes, 10 s, so that a server without the timeout fails instead of hanging).
      let sent = 0;
      let closed = false;
      void c.closed.then(() => (closed = true));
      while (!closed && sent < 400) {
        c.socket.write(sent === 0 ? "[" : " ");
        sent++;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(closed).toBe(true);
      expect(sent).toBeLessThan(2000);
      expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
      // Not an internal error: the cut-off body is logged as an abort.
      await waitFor(() => logs.lines.some((l) => l.includes("aborted")), 5000, "the abort to be logged");
      expect(logs.lines.join("\n")).not.toMatch(/internal error| 500 /);
      // The server still answers others.
      expect(
        (await fetch(`${server.url}/${BUILDING_ID}/rsop/holders?ids=holder-0001&at=${AT}`, { headers: auth })).status,
      ).toBe(200);
    } finally {
      await server.close();
    }
  });

  test("a client that aborts mid-body: logged as an abort, not a 500 with a stack trace", async () => {
    const logs = logSink();
    const server = await startServer({ systemFile: BUILDING_FILE, token: TOKEN, log: logs.log, watch: false });
    try {
      const c = rawConnection(server.url);
      await c.connected;
      c.socket.write(
        head("POST", `/${BUILDING_ID}/decisions`, ["Content-Type: application/json", "Content-Length: 1000"]),
      );
      c.socket.write('[{"deviceId":"door-ward-3",');
      await new Promise((r) => setTimeout(r, 50));
      c.socket.destroy();
      await waitFor(
        () => logs.lines.some((l) => l.startsWith(`POST /${BUILDING_ID}/decisions `)),
        5000,
        "the request to be logged",
      );
      expect(logs.lines.find((l) => l.startsWith(`POST /${BUILDING_ID}/decisions `))).toMatch(
        new RegExp(
          `^POST /${BUILDING_ID}/decisions aborted \\(connection closed before the answer\\) after \\d+\\.\\dms$`,
        ),
      );
      expect(logs.lines.join("\n")).not.toMatch(/internal error|\n\s+at /);
    } finally {
      await server.close();
    }
  });

  test("maxConnections: a connection over the cap closes the oldest idle one and is served (idle sockets never lock clients out, HC4)", async () => {
    const server = await startServer({
      systemFile: BUILDING_FILE,
      token: TOKEN,
      log: () => {},
      watch: false,
      maxConnections: 2,
    });
    const ask = head("GET", `/${BUILDING_ID}/rsop/holders?ids=holder-0001&at=${AT}`);
    try {
      const a = rawConnection(server.url);
      const b = rawConnection(server.url);
      for (const c of [a, b]) {
        c.socket.write(ask);
        await waitFor(() => c.received().startsWith("HTTP/1.1 200 "), 5000, "a kept-alive connection to be answered");
      }
      // Both are idle (kept alive, answered): the newcomer is served and the oldest, a, is closed.
      const over = rawConnection(server.url);
      over.socket.write(ask);
      await waitFor(
        () => over.received().startsWith("HTTP/1.1 200 "),
        5000,
        "the connection over the cap to be answered",
      );
      await a.closed;
      let bOpen = true;
      void b.closed.then(() => (bOpen = false));
      await new Promise((r) => setTimeout(r, 50));
      expect(bOpen).toBe(true);
      b.socket.destroy();
      over.socket.destroy();
    } finally {
      await server.close();
    }
  });

  test("GET /healthz needs no token and names the snapshot served: system id, SHA-256 of the file, time of load", async () => {
    const dir = tempDir();
    const file = join(dir, "system.json");
    writeInPlace(file, snapshotA);
    const server = await startServer({ systemFile: file, token: TOKEN, log: () => {}, watch: false, basePath: "/v2" });
    try {
      const sha = () => createHash("sha256").update(readFileSync(file)).digest("hex");
      const res = await fetch(`${server.url}/v2/healthz`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const body = (await res.json()) as { status: string; systemId: string; sha256: string; loadedAt: string };
      expect(body).toEqual({
        status: "ok",
        systemId: "sys-ab",
        sha256: sha(),
        loadedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });

      writeInPlace(file, snapshotB);
      expect((await server.reload()).status).toBe("reloaded");
      const after = (await (await fetch(`${server.url}/v2/healthz`)).json()) as typeof body;
      expect(after.sha256).toBe(sha());
      expect(after.sha256).not.toBe(body.sha256);
      expect(Date.parse(after.loadedAt)).toBeGreaterThanOrEqual(Date.parse(body.loadedAt));

      const post = await fetch(`${server.url}/v2/healthz`, { method: "POST" });
      expect(post.status).toBe(405);
      expect(post.headers.get("allow")).toBe("GET, HEAD");
      expect((await fetch(`${server.url}/healthz`)).status).toBe(404); // below the base path only
    } finally {
      await server.close();
    }
  });
});
