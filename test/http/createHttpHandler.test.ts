// The HTTP adapter as a function: web-standard Requests in, Responses out, no network.
import { describe, expect, test, vi } from "vitest";
import { type HttpHandlerOptions, createHttpHandler } from "../../src/http.js";
import { AT, BUILDING_ID, TOKEN, building, engineA, engineB } from "./fixtures.js";

const ORIGIN = "http://rsop.test";
const auth = { authorization: `Bearer ${TOKEN}` };
const onlyToken = (token: string) => token === TOKEN;

function handler(options: Partial<HttpHandlerOptions> = {}) {
  return createHttpHandler({ getEngine: () => building, authorize: onlyToken, ...options });
}

function get(path: string, headers: Record<string, string> = auth): Request {
  return new Request(`${ORIGIN}${path}`, { headers });
}

function post(
  path: string,
  body: string | Uint8Array | ReadableStream<Uint8Array> | null,
  headers: Record<string, string> = { ...auth, "content-type": "application/json" },
): Request {
  return new Request(`${ORIGIN}${path}`, { method: "POST", headers, body, duplex: "half" } as RequestInit);
}

/** The error body, checked to have exactly the documented shape. */
async function errorOf(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  const body = (await res.json()) as {
    error: { status: number; message: string; issues: { path: string; message: string }[] };
  };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error)).toEqual(["status", "message", "issues"]);
  expect(body.error.status).toBe(status);
  expect(typeof body.error.message).toBe("string");
  for (const i of body.error.issues) expect(Object.keys(i)).toEqual(["path", "message"]);
  return body.error;
}

const rsopPath = `/${BUILDING_ID}/rsop/holders`;
const req1 = {
  deviceId: "door-ward-3",
  at: "2026-04-15T09:15:00-05:00",
  credential: { credentialNumber: 10234, facilityCode: 17 },
};
const req2 = {
  deviceId: "door-pharmacy",
  at: "2026-04-15T10:30:00-05:00",
  credential: { credentialNumber: 20417, facilityCode: 17 },
};

describe("200: the answers are the engine's", () => {
  test("system-wide RSOP is exactly engine.rsop, printed as `rsop rsop` prints it", async () => {
    const res = await handler()(get(`${rsopPath}?ids=holder-0001,holder-0002&at=${AT}`));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const expected = building.rsop(["holder-0001", "holder-0002"], { at: AT });
    expect(await res.text()).toBe(`${JSON.stringify(expected, null, 2)}\n`);
  });

  test("node-scoped RSOP is engine.rsop with cloudNodeId; ids may repeat the parameter and hold spaces", async () => {
    const res = await handler()(
      get(
        `/${BUILDING_ID}/cloud-nodes/node-london-annex/rsop/holders?ids=holder-0001,%20holder-0003&ids=holder-0002&at=${AT}`,
      ),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(
      building.rsop(["holder-0001", "holder-0003", "holder-0002"], { at: AT, cloudNodeId: "node-london-annex" }),
    );
  });

  test("`at` defaults to now; digits are epoch milliseconds", async () => {
    const now = Date.parse("2026-04-15T03:00:00Z");
    const h = handler({ now: () => now });
    expect(await (await h(get(`${rsopPath}?ids=holder-0001`))).json()).toEqual(
      building.rsop(["holder-0001"], { at: now }),
    );
    expect(await (await h(get(`${rsopPath}?ids=holder-0001&at=${now + 60_000}`))).json()).toEqual(
      building.rsop(["holder-0001"], { at: now + 60_000 }),
    );
  });

  test("an offset sent as %2B is read", async () => {
    const res = await handler()(get(`${rsopPath}?ids=holder-0001&at=2026-04-15T10:00:00%2B05:00`));
    expect(await res.json()).toEqual(building.rsop(["holder-0001"], { at: "2026-04-15T10:00:00+05:00" }));
  });

  test("decisions: one request → one decision, an array → an array, each equal to engine.decide", async () => {
    const h = handler();
    const one = await h(post(`/${BUILDING_ID}/decisions`, JSON.stringify(req1)));
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(building.decide(req1));
    const many = await h(
      post(`/${BUILDING_ID}/decisions`, JSON.stringify([req1, req2, { ...req1, deviceId: "no-such-door" }])),
    );
    const body = (await many.json()) as { reason: string }[];
    expect(body).toEqual([
      building.decide(req1),
      building.decide(req2),
      building.decide({ ...req1, deviceId: "no-such-door" }),
    ]);
    expect(body.map((d) => d.reason)).toEqual(["allowed", "pinRequired", "unknownDevice"]);
    expect(await (await h(post(`/${BUILDING_ID}/decisions`, "[]"))).json()).toEqual([]);
  });

  test("decisions accept application/*+json and a charset", async () => {
    const res = await handler()(
      post(`/${BUILDING_ID}/decisions`, JSON.stringify(req1), {
        ...auth,
        "content-type": "application/vnd.rsop+json; charset=UTF-8",
      }),
    );
    expect(res.status).toBe(200);
  });

  test("device access is engine.whoCanAccess", async () => {
    const res = await handler()(get(`/${BUILDING_ID}/devices/door-pharmacy/access?at=2026-04-15T16:00:00Z`));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(building.whoCanAccess("door-pharmacy", { at: "2026-04-15T16:00:00Z" }));
  });

  test("a base path prefixes every route; `indent: 0` answers compact JSON", async () => {
    const h = handler({ basePath: "/v2/", indent: 0 });
    const res = await h(get(`/v2${rsopPath}?ids=holder-0001&at=${AT}`));
    expect(await res.text()).toBe(JSON.stringify(building.rsop(["holder-0001"], { at: AT })));
    await errorOf(await h(get(`${rsopPath}?ids=holder-0001`)), 404);
    await errorOf(await h(get(`/v2x${rsopPath}?ids=holder-0001`)), 404);
  });

  test("systemId may be given instead of taken from the snapshot", async () => {
    const h = handler({ systemId: "campus" });
    expect((await h(get(`/campus/rsop/holders?ids=holder-0001&at=${AT}`))).status).toBe(200);
    await errorOf(await h(get(`${rsopPath}?ids=holder-0001&at=${AT}`)), 404);
  });

  test("insecureNoAuth needs no Authorization header", async () => {
    const res = await handler({ insecureNoAuth: true, authorize: () => false })(
      get(`${rsopPath}?ids=holder-0001&at=${AT}`, {}),
    );
    expect(res.status).toBe(200);
  });
});

describe("400: every problem, with its path or parameter", () => {
  test("ids missing, empty or too many", async () => {
    const h = handler({ maxIds: 3 });
    expect((await errorOf(await h(get(rsopPath)), 400)).issues).toEqual([
      { path: "ids", message: "Give at least one holder id (ids=a,b,…)." },
    ]);
    expect((await errorOf(await h(get(`${rsopPath}?ids=,%20,`)), 400)).issues.map((i) => i.path)).toEqual(["ids"]);
    const tooMany = await errorOf(await h(get(`${rsopPath}?ids=a,b,c,d`)), 400);
    expect(tooMany.issues).toEqual([{ path: "ids", message: "At most 3 holder ids per request; got 4." }]);
  });

  test("a bad `at`, an unknown parameter and a repeated `at` are all listed", async () => {
    const e = await errorOf(await handler()(get(`${rsopPath}?ids=holder-0001&at=yesterday&time=now`)), 400);
    expect(e.issues.map((i) => i.path).sort()).toEqual(["at", "time"]);
    const twice = await errorOf(await handler()(get(`${rsopPath}?ids=holder-0001&at=${AT}&at=${AT}`)), 400);
    expect(twice.issues).toEqual([{ path: "at", message: "Give at most one instant." }]);
    const range = await errorOf(
      await handler()(get(`/${BUILDING_ID}/devices/door-pharmacy/access?at=2100-01-01T00:00:00Z`)),
      400,
    );
    expect(range.issues[0]!.path).toBe("at");
  });

  test('an unencoded "+" offset gets a hint', async () => {
    const e = await errorOf(await handler()(get(`${rsopPath}?ids=holder-0001&at=2026-04-15T10:00:00+05:00`)), 400);
    expect(e.issues[0]!.message).toContain("%2B");
  });

  test("invalid requests in a batch: nothing is decided, each problem has its path", async () => {
    const bad = [
      req1,
      { ...req1, credential: { wiegand: "0102" } },
      { deviceId: "door-ward-3" },
      { ...req1, pin: "12a4", node: { online: "yes" } },
    ];
    const e = await errorOf(await handler()(post(`/${BUILDING_ID}/decisions`, JSON.stringify(bad))), 400);
    expect(e.message).toBe("Invalid access requests.");
    expect(e.issues.map((i) => i.path)).toEqual([
      "[1].credential.wiegand",
      "[2].at",
      "[2]",
      "[3].pin",
      "[3].node.online",
    ]);
  });

  test("an invalid single request: paths without an index", async () => {
    const e = await errorOf(
      await handler()(post(`/${BUILDING_ID}/decisions`, JSON.stringify({ ...req1, at: "2026-04-15 09:15" }))),
      400,
    );
    expect(e.issues).toEqual([
      { path: "at", message: "Must be an ISO 8601 instant with Z or an offset, or epoch milliseconds." },
    ]);
    const notObject = await errorOf(await handler()(post(`/${BUILDING_ID}/decisions`, "42")), 400);
    expect(notObject.issues).toEqual([{ path: "(root)", message: "A request is a JSON object." }]);
  });

  test("broken JSON, an empty body, invalid UTF-8, a query on decisions", async () => {
    const h = handler();
    expect((await errorOf(await h(post(`/${BUILDING_ID}/decisions`, '{"deviceId":')), 400)).message).toBe(
      "The request body is not valid JSON: line 1, column 13: unexpected end of input.",
    );
    expect((await errorOf(await h(post(`/${BUILDING_ID}/decisions`, "")), 400)).message).toBe(
      "The request body is empty.",
    );
    expect(
      (await errorOf(await h(post(`/${BUILDING_ID}/decisions`, new Uint8Array([0x7b, 0xff, 0x7d]))), 400)).message,
    ).toBe("The request body is not valid UTF-8.");
    expect(
      (await errorOf(await h(post(`/${BUILDING_ID}/decisions?dryRun=1`, JSON.stringify(req1))), 400)).issues[0]!.path,
    ).toBe("dryRun");
  });

  test("malformed percent-encoding in the path", async () => {
    await errorOf(await handler()(get(`/${BUILDING_ID}/devices/%E0%A4%A/access`)), 400);
  });
});

describe("401 and 403 (RFC 6750)", () => {
  test("no Authorization header: 401 with a Bearer challenge", async () => {
    const res = await handler()(get(`${rsopPath}?ids=holder-0001`, {}));
    await errorOf(res, 401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="rsop"');
  });

  test("another scheme or no token: 401 invalid_request", async () => {
    for (const authorization of ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearer a b", "Token abc"]) {
      const res = await handler()(get(`${rsopPath}?ids=holder-0001`, { authorization }));
      await errorOf(res, 401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_request"');
    }
  });

  test('a token that authorize refuses: 401 with error="invalid_token"; the default authorize refuses everything', async () => {
    for (const res of [
      await handler()(get(`${rsopPath}?ids=holder-0001`, { authorization: "Bearer wrong-token" })),
      await createHttpHandler({ getEngine: () => building })(get(`${rsopPath}?ids=holder-0001`)),
    ]) {
      expect((await errorOf(res, 401)).message).toBe("Invalid token.");
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="rsop", error="invalid_token"');
    }
  });

  test('a valid token for another system: authorize answers "forbidden", 403 insufficient_scope; authorize is asked about the system in the path', async () => {
    const authorize = vi.fn((token: string, systemId: string) =>
      token === "token-of-other" ? (systemId === "other-system" ? true : "forbidden") : false,
    );
    const h = handler({ authorize });
    const res = await h(get(`${rsopPath}?ids=holder-0001`, { authorization: "Bearer token-of-other" }));
    await errorOf(res, 403);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="rsop", error="insufficient_scope"');
    expect(authorize).toHaveBeenCalledWith("token-of-other", BUILDING_ID);
  });

  test("an async authorize is awaited; the scheme is case-insensitive", async () => {
    const h = handler({ authorize: async (t) => t === TOKEN });
    expect((await h(get(`${rsopPath}?ids=holder-0001&at=${AT}`, { authorization: `bearer ${TOKEN}` }))).status).toBe(
      200,
    );
  });

  test("authentication is checked before the body is read", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(new TextEncoder().encode("{}"));
        c.close();
      },
    });
    await errorOf(
      await handler()(post(`/${BUILDING_ID}/decisions`, body, { "content-type": "application/json" })),
      401,
    );
    expect(pulled).toBeLessThanOrEqual(1); // at most the stream's own first pull, never read by the handler
  });
});

describe("404", () => {
  test("unknown route", async () => {
    const h = handler();
    for (const path of [
      "/",
      `/${BUILDING_ID}`,
      `/${BUILDING_ID}/rsop`,
      `/${BUILDING_ID}/rsop/holders/extra`,
      `/${BUILDING_ID}/devices//access`,
      "/api/rsop/persons",
    ])
      expect((await errorOf(await h(get(path)), 404)).message).toMatch(/^No route for GET /);
  });

  test("unknown system id (for a caller allowed to ask about it)", async () => {
    const e = await errorOf(
      await handler({ authorize: () => true })(get("/other-system/rsop/holders?ids=holder-0001")),
      404,
    );
    expect(e.issues).toEqual([{ path: "system_id", message: 'Unknown system id "other-system".' }]);
  });

  test("unknown holder ids are named, each with its position", async () => {
    const e = await errorOf(await handler()(get(`${rsopPath}?ids=holder-0001,nobody,holder-0002,ghost&at=${AT}`)), 404);
    expect(e.message).toBe("Unknown ids.");
    expect(e.issues).toEqual([
      { path: "ids[1]", message: 'Unknown holder id "nobody".' },
      { path: "ids[3]", message: 'Unknown holder id "ghost".' },
    ]);
  });

  test("unknown cloud node and unknown device are named", async () => {
    const node = await errorOf(
      await handler()(get(`/${BUILDING_ID}/cloud-nodes/node-mars/rsop/holders?ids=holder-0001&at=${AT}`)),
      404,
    );
    expect(node.issues).toEqual([{ path: "cloud_node_id", message: 'Unknown cloud node id "node-mars".' }]);
    const dev = await errorOf(await handler()(get(`/${BUILDING_ID}/devices/door%2Fnone/access?at=${AT}`)), 404);
    expect(dev.issues).toEqual([{ path: "device_id", message: 'Unknown device id "door/none".' }]);
  });
});

describe("405, 413, 415", () => {
  test("a wrong method on a known route: 405 with Allow", async () => {
    const h = handler();
    const p = await h(post(rsopPath, "{}"));
    await errorOf(p, 405);
    expect(p.headers.get("allow")).toBe("GET");
    const g = await h(get(`/${BUILDING_ID}/decisions`));
    await errorOf(g, 405);
    expect(g.headers.get("allow")).toBe("POST");
    for (const method of ["PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]) {
      const res = await h(new Request(`${ORIGIN}/${BUILDING_ID}/devices/d/access`, { method, headers: auth }));
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET");
    }
  });

  test("413 from Content-Length, before anything is read", async () => {
    const res = await handler({ maxBodyBytes: 100 })(
      post(`/${BUILDING_ID}/decisions`, JSON.stringify(req1), {
        ...auth,
        "content-type": "application/json",
        "content-length": "5000",
      }),
    );
    expect((await errorOf(res, 413)).message).toBe("The request body is larger than 100 bytes.");
  });

  test("413 while counting a body sent without Content-Length; reading stops early", async () => {
    let chunks = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        chunks++;
        if (chunks > 10_000)
          c.close(); // bounded even if the handler kept reading
        else c.enqueue(new Uint8Array(64).fill(0x20));
      },
    });
    await errorOf(await handler({ maxBodyBytes: 1000 })(post(`/${BUILDING_ID}/decisions`, body)), 413);
    expect(chunks).toBeLessThan(40);
  });

  test("exactly maxBodyBytes is accepted", async () => {
    const text = JSON.stringify(req1);
    const res = await handler({ maxBodyBytes: Buffer.byteLength(text) })(post(`/${BUILDING_ID}/decisions`, text));
    expect(res.status).toBe(200);
  });

  test("415 for a body that is not declared JSON", async () => {
    const h = handler();
    await errorOf(
      await h(post(`/${BUILDING_ID}/decisions`, JSON.stringify(req1), { ...auth, "content-type": "text/plain" })),
      415,
    );
    await errorOf(
      await h(
        post(`/${BUILDING_ID}/decisions`, JSON.stringify(req1), {
          ...auth,
          "content-type": "application/x-www-form-urlencoded",
        }),
      ),
      415,
    );
    await errorOf(await h(new Request(`${ORIGIN}/${BUILDING_ID}/decisions`, { method: "POST", headers: auth })), 415);
  });
});

describe("500 and engine snapshots", () => {
  test("an unexpected error: 500 with a generic message, never a stack; onError is told", async () => {
    const onError = vi.fn();
    const boom = new Error("secret internals at /srv/rsop/engine.ts:42");
    const h = createHttpHandler({
      getEngine: () => {
        throw boom;
      },
      authorize: onlyToken,
      onError,
    });
    const res = await h(get(`${rsopPath}?ids=holder-0001`));
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(JSON.parse(text)).toEqual({ error: { status: 500, message: "Internal server error.", issues: [] } });
    expect(text).not.toContain("secret");
    expect(onError).toHaveBeenCalledWith(boom, expect.any(Request));
  });

  test("a throwing authorize or onError still answers 500", async () => {
    const h = createHttpHandler({
      getEngine: () => building,
      authorize: () => {
        throw new Error("db down");
      },
      onError: () => {
        throw new Error("log down");
      },
    });
    await errorOf(await h(get(`${rsopPath}?ids=holder-0001`)), 500);
  });

  test("getEngine is called once per request, and that engine answers it even if another is swapped in meanwhile", async () => {
    let current = engineA;
    const getEngine = vi.fn(() => current);
    const h = createHttpHandler({ getEngine, authorize: onlyToken });
    const request = { deviceId: "d1", at: AT, credential: { credentialNumber: 100, facilityCode: 17 } };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        await gate; // the body arrives only after the swap
        c.enqueue(new TextEncoder().encode(JSON.stringify([request, request])));
        c.close();
      },
    });
    const pending = h(post("/sys-ab/decisions", body));
    await new Promise((r) => setTimeout(r, 20));
    current = engineB;
    release();
    const res = await pending;
    expect(await res.json()).toEqual([engineA.decide(request), engineA.decide(request)]);
    expect(engineA.decide(request).reason).toBe("allowed");
    expect(engineB.decide(request).reason).toBe("noActiveRule");
    expect(getEngine).toHaveBeenCalledTimes(1);
    // The next request sees the new engine.
    expect(await (await h(post("/sys-ab/decisions", JSON.stringify(request)))).json()).toEqual(engineB.decide(request));
  });

  test("numeric options are checked", () => {
    expect(() => handler({ maxIds: 0 })).toThrow(RangeError);
    expect(() => handler({ maxBodyBytes: 1.5 })).toThrow(RangeError);
  });
});

describe("hardening: bounded error answers, no echo of the body, repeated ids, paging", () => {
  test("a 1 MiB batch of invalid requests: the first 100 problems and their count, a small answer", async () => {
    const n = 349_525; // "[{}" + ",{}" × (n - 1) + "]" is just under 1 MiB
    const body = `[${Array.from({ length: n }, () => "{}").join(",")}]`;
    expect(body.length).toBeLessThanOrEqual(1024 * 1024);
    const res = await handler()(post(`/${BUILDING_ID}/decisions`, body));
    const text = await res.clone().text();
    const e = await errorOf(res, 400);
    expect(e.message).toBe(
      `Invalid access requests. ${n} of ${n} requests are malformed; the first 100 problems are listed.`,
    );
    expect(e.issues).toHaveLength(100);
    // Each {} lacks deviceId and at, and presents neither a credential nor a PIN: its problems, in order.
    const one = (await errorOf(await handler()(post(`/${BUILDING_ID}/decisions`, "{}")), 400)).issues;
    expect(e.issues.slice(0, one.length)).toEqual(
      one.map((i) => ({ path: `[0]${i.path === "(root)" ? "" : `.${i.path}`}`, message: i.message })),
    );
    expect(text.length).toBeLessThan(20_000);
  });

  test("the count after the cap is of malformed requests, valid ones among them not counted", async () => {
    const bad = { deviceId: "door-ward-3" }; // no at, no credential or PIN
    const batch = [...Array.from({ length: 150 }, () => bad), req1, ...Array.from({ length: 49 }, () => bad), req2];
    const e = await errorOf(await handler()(post(`/${BUILDING_ID}/decisions`, JSON.stringify(batch))), 400);
    expect(e.message).toBe(
      "Invalid access requests. 199 of 201 requests are malformed; the first 100 problems are listed.",
    );
    expect(e.issues).toHaveLength(100);
  });

  test("a batch whose last request is malformed answers only problems; valid batches are decided in order", async () => {
    const e = await errorOf(
      await handler()(post(`/${BUILDING_ID}/decisions`, JSON.stringify([req1, req2, { ...req1, pin: "x" }]))),
      400,
    );
    expect(e).toEqual({
      status: 400,
      message: "Invalid access requests.",
      issues: [{ path: "[2].pin", message: expect.any(String) }],
    });
    expect(await (await handler()(post(`/${BUILDING_ID}/decisions`, JSON.stringify([req2, req1])))).json()).toEqual([
      building.decide(req2),
      building.decide(req1),
    ]);
  });

  test("broken JSON: line and column, and never the text of the body (it may hold a PIN)", async () => {
    const body = '{\n  "deviceId": "door-ward-3",\n  "pin": "739146" "at": 5\n}';
    const res = await handler()(post(`/${BUILDING_ID}/decisions`, body));
    const text = await res.clone().text();
    expect((await errorOf(res, 400)).message).toBe(
      "The request body is not valid JSON: line 3, column 19: expected ',' or '}' after a property value.",
    );
    expect(text).not.toContain("739146");
    for (const bad of ['{"pin":"739146"x', '["739146" 1]', "739146x", '{"pin": 739146x}']) {
      const t = await (await handler()(post(`/${BUILDING_ID}/decisions`, bad))).text();
      expect(t).not.toContain("739146");
    }
  });

  test("RSOP: a repeated id is answered once, and maxIds counts distinct ids", async () => {
    const res = await handler({ maxIds: 2 })(
      get(`${rsopPath}?ids=holder-0001,holder-0002,holder-0001&ids=holder-0002&at=${AT}`),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(building.rsop(["holder-0001", "holder-0002"], { at: AT }));
  });

  test("device access pages as seed 000 §4 says: page (zero-based), per_page (default 10, at most 100), X-Total-Count, Link", async () => {
    const all = building.whoCanAccess("door-main-entrance", { at: AT });
    const total = all.holders.length;
    expect(total).toBeGreaterThan(100);
    const path = `/${BUILDING_ID}/devices/door-main-entrance/access?at=${AT}`;
    const link = (page: number, perPage: number, rel: string) =>
      `<${ORIGIN}${path}&page=${page}&per_page=${perPage}>; rel="${rel}"`;
    const last10 = Math.ceil(total / 10) - 1;

    const first = await handler()(get(path));
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ...all, holders: all.holders.slice(0, 10) });
    expect(first.headers.get("x-total-count")).toBe(String(total));
    expect(first.headers.get("link")).toBe(
      [link(0, 10, "first"), link(1, 10, "next"), link(last10, 10, "last")].join(", "),
    );

    const middle = await handler()(get(`${path}&page=1&per_page=100`));
    expect(await middle.json()).toEqual({ ...all, holders: all.holders.slice(100, 200) });
    const lastPage = Math.ceil(total / 100) - 1;
    expect(middle.headers.get("link")).toBe(
      [link(0, 100, "first"), link(0, 100, "prev"), link(2, 100, "next"), link(lastPage, 100, "last")].join(", "),
    );

    const end = await handler()(get(`${path}&page=${last10}`));
    expect(await end.json()).toEqual({ ...all, holders: all.holders.slice(last10 * 10) });
    expect(end.headers.get("link")).toBe(
      [link(0, 10, "first"), link(last10 - 1, 10, "prev"), link(last10, 10, "last")].join(", "),
    );

    const past = await handler()(get(`${path}&page=${last10 + 5}`));
    expect(((await past.json()) as { holders: unknown[] }).holders).toEqual([]);
    expect(past.headers.get("x-total-count")).toBe(String(total));

    const bad = await errorOf(await handler()(get(`${path}&page=-1&per_page=101`)), 400);
    expect(bad.issues).toEqual([
      { path: "page", message: `Must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}.` },
      { path: "per_page", message: "Must be an integer from 1 to 100." },
    ]);
    expect(
      (await errorOf(await handler()(get(`${path}&page=1&page=2&per_page=abc`)), 400)).issues.map((i) => i.path),
    ).toEqual(["page", "per_page"]);
    expect((await errorOf(await handler()(get(`${path}&ids=x`)), 400)).issues).toEqual([
      { path: "ids", message: "Unknown query parameter; this route takes at, page and per_page." },
    ]);
  });
});
