// The Node servers' own path for a request (nodeRequests.ts): a body read from the IncomingMessage and
// a TextAnswer written by the server must be exactly what the web-standard path reads and answers,
// over real HTTP on 127.0.0.1; a TextAnswer read as a Response is the same answer; request log lines
// batched within a turn keep their order.
import type { Server } from "node:http";
import { connect } from "node:net";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { connectionSettings } from "../../src/adapters/http/connectionGuard.js";
import { TextAnswer, jsonAnswer } from "../../src/adapters/http/nodeRequests.js";
import { readJsonBody } from "../../src/adapters/http/readJsonBody.js";
import { closeGracefully, listenOn, serverUrl, streamLog } from "../../src/adapters/http/startServer.js";
import { HttpError, errorResponse, jsonResponse } from "../../src/service/httpError.js";

/** Sends `text` on a new connection and resolves with everything the server sent until it closed. */
function raw(url: string, text: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(text));
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => (received += d));
    socket.on("end", () => resolve(received));
    socket.on("error", reject);
  });
}

function post(path: string, body: string, extra: string[] = []): string {
  return [
    `POST ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    ...extra,
    "",
    body,
  ].join("\r\n");
}

function chunked(path: string, chunks: string[]): string {
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
  const body = chunks.map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`).join("");
  return `${head}${body}0\r\n\r\n`;
}

/** The answer without its Date header (the only line that differs between two answers). */
const withoutDate = (answer: string) => answer.replace(/^Date: .*\r\n/m, "");

describe("a request of Node's http server", () => {
  let server: Server;
  let url: string;
  const answered: string[] = [];
  beforeAll(async () => {
    // /text answers with jsonAnswer (a TextAnswer for a request of this server), /response with the
    // ordinary Response; /headers sets one more header on the answer, as a replica does.
    server = await listenOn(
      async (request) => {
        try {
          const body = await readJsonBody(request, 1000);
          const path = new URL(request.url).pathname;
          const answer =
            path === "/response" ? jsonResponse(200, { echo: body }, 2) : jsonAnswer(request, 200, { echo: body }, 2);
          if (path === "/headers") answer.headers.set("x-rsop-revision", "7");
          answered.push(answer instanceof TextAnswer ? `${path}: TextAnswer` : `${path}: Response`);
          return answer;
        } catch (e) {
          if (e instanceof HttpError) return errorResponse(e, 2);
          throw e;
        }
      },
      { port: 0, host: "127.0.0.1" },
      connectionSettings("test", {}),
    );
    url = serverUrl(server);
  });
  afterAll(() => closeGracefully(server, 1000));

  test("a TextAnswer goes out byte for byte as the Response it stands for", async () => {
    const body = JSON.stringify({ deviceId: "door-1", note: "ünïcödé ✓" });
    const text = await raw(url, post("/text", body));
    const response = await raw(url, post("/response", body));
    expect(answered.splice(0)).toEqual(["/text: TextAnswer", "/response: Response"]);
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(withoutDate(text)).toBe(withoutDate(response));
    expect(text.endsWith(`${JSON.stringify({ echo: JSON.parse(body) }, null, 2)}\n`)).toBe(true);
  });

  test("a header set on a TextAnswer goes out with it, in the Response's order", async () => {
    const answer = await raw(url, post("/headers", "[1, 2]"));
    expect(answer).toMatch(/\r\nx-rsop-revision: 7\r\n/);
    expect(withoutDate(answer)).toBe(
      withoutDate(await raw(url, post("/response", "[1, 2]"))).replace(
        "\r\ncontent-length",
        "\r\nx-rsop-revision: 7\r\ncontent-length",
      ),
    );
  });

  test("a chunked body is read from the IncomingMessage: whole, or refused once over the bound", async () => {
    const whole = await raw(url, chunked("/text", ['{"a": [', "1, 2", "]}"]));
    expect(whole).toMatch(/^HTTP\/1\.1 200 /);
    expect(whole.endsWith(`${JSON.stringify({ echo: { a: [1, 2] } }, null, 2)}\n`)).toBe(true);
    const over = await raw(url, chunked("/text", ["[", "1, ".repeat(400), "1]"]));
    expect(over).toMatch(/^HTTP\/1\.1 413 /);
    expect(over).toContain("The request body is larger than 1000 bytes.");
  });

  test("an empty, a non-UTF-8 and a malformed body are refused as on the web-standard path", async () => {
    expect(await raw(url, post("/text", ""))).toMatch(/^HTTP\/1\.1 400 [\s\S]*The request body is empty\./);
    const head = post("/text", "").replace("Content-Length: 0", "Content-Length: 3");
    const bad = await raw(url, Buffer.concat([Buffer.from(head), Buffer.from([0x22, 0xff, 0x22])]));
    expect(bad).toMatch(/^HTTP\/1\.1 400 [\s\S]*not valid UTF-8/);
    expect(await raw(url, post("/text", "{"))).toMatch(/^HTTP\/1\.1 400 [\s\S]*not valid JSON/);
  });
});

describe("a TextAnswer read as a Response", () => {
  test("is a Response with its status, the headers of every JSON answer and its text", async () => {
    const a = new TextAnswer(201, '{\n  "x": 1\n}\n') as unknown as Response;
    expect(a).toBeInstanceOf(Response);
    expect(a.status).toBe(201);
    expect(a.ok).toBe(true);
    expect(a.statusText).toBe("");
    expect([...a.headers]).toEqual([...jsonResponse(201, { x: 1 }, 2).headers]);
    expect(await a.clone().text()).toBe('{\n  "x": 1\n}\n');
    expect(await a.json()).toEqual({ x: 1 });
    expect(a.bodyUsed).toBe(true);
  });

  test("copied as a Response (a replica's answer with immutable headers is), it keeps status, headers and body", async () => {
    const a = new TextAnswer(200, "[1]") as unknown as Response;
    a.headers.set("x-rsop-revision", "3");
    const copy = new Response(a.body, a);
    expect(copy.status).toBe(200);
    expect(copy.headers.get("x-rsop-revision")).toBe("3");
    expect(await copy.text()).toBe("[1]");
  });

  test("a request no Node server registered gets the ordinary Response", () => {
    const answer = jsonAnswer(new Request("http://localhost/x"), 200, { a: 1 }, 2);
    expect(answer).not.toBeInstanceOf(TextAnswer);
    expect(answer.constructor).toBe(Response);
  });
});

test("streamLog: request lines of one turn after the first wait for its end, and every line keeps its order", async () => {
  const stream = new PassThrough();
  const writes: string[] = [];
  stream.on("data", (b: Buffer) => writes.push(b.toString("utf8")));
  const log = streamLog(stream);
  log.request("a");
  log.request("b");
  log.request("c");
  const beforeLine = writes.length;
  log("d");
  log.request("e");
  await new Promise((r) => setImmediate(r));
  const lines = writes.join("").trimEnd().split("\n");
  for (const l of lines) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /);
  expect(lines.map((l) => l.slice(25))).toEqual(["a", "b", "c", "d", "e"]);
  // "a" at once; "b" and "c" waited, and went out with "d"; "e" at the end of the turn.
  expect(beforeLine).toBe(1);
  expect(writes).toHaveLength(3);
});
