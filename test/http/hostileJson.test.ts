// Hostile JSON against `rsop serve` over 127.0.0.1: bodies nested 10,000 deep on the routes that
// answered 500 (HJ1), a custom-field regex that backtracks exponentially in a JavaScript engine
// (HJ5), and a snapshot file that is not JSON, holding PINs (HJ4). Real servers, real SQLite files.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { startServer } from "../../src/adapters/http/startServer.js";
import { formatPath } from "../../src/model/index.js";
import { run } from "../adapters/cliHarness.js";
import { building } from "../live/fixture.js";
import { dataDir, expectError, startData, unchanged } from "./dataSupport.js";
import { TOKEN, logSink, removeTempDirs, tempDir } from "./fixtures.js";
import { whileHostile } from "./hostileSupport.js";

afterAll(removeTempDirs);

const DEEP = 10_000;
const TOO_DEEP = "Nests deeper than 64 arrays and objects, the most a JSON input may have.";
const nested = (n: number): string => "[".repeat(n) + "]".repeat(n);
/** The path of the first array too deep when `n` nested arrays start at `at`, `level` levels into the body. */
const firstTooDeep = (at: (string | number)[], level: number): string =>
  formatPath([...at, ...Array<number>(65 - level).fill(0)]);

const HOLDER = {
  firstName: "Dee",
  lastName: "Park",
  email: null,
  partition: "p-east",
  enabled: true,
  activeDate: null,
  expireDate: null,
  pin: null,
  duressPin: null,
};

describe("HJ1 a JSON depth limit on every HTTP body", () => {
  test("HJ1 10,000-deep JSON in customFields, a group description, report output, a preview operation, a definition: 400 with the path, nothing stored", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, building());
    const deep = nested(DEEP);
    const cases: [string, string, string, string][] = [
      [
        "POST",
        "/holders",
        `{"firstName":"A","lastName":"B","partition":"p-east","customFields":{"note":${deep}}}`,
        firstTooDeep(["customFields", "note"], 3),
      ],
      [
        "PUT",
        "/holders/h-ann",
        `${JSON.stringify(HOLDER).slice(0, -1)},"customFields":{"note":${deep}}}`,
        firstTooDeep(["customFields", "note"], 3),
      ],
      [
        "POST",
        "/groups",
        `{"name":"Deep","partition":"p-east","description":${deep}}`,
        firstTooDeep(["description"], 2),
      ],
      [
        "PUT",
        "/groups/g-staff",
        `{"name":"Staff","partition":"p-default","description":${deep}}`,
        firstTooDeep(["description"], 2),
      ],
      ["POST", "/reports/holders/preview", `{"output":${deep}}`, firstTooDeep(["output"], 2)],
      ["POST", "/reports/holders/generate", `{"output":${deep}}`, firstTooDeep(["output"], 2)],
      [
        "POST",
        "/preview",
        `{"operations":[{"method":"POST","path":"/groups","body":{"name":"Y","description":${deep}}}]}`,
        firstTooDeep(["operations", 0, "body", "description"], 5),
      ],
      [
        "POST",
        "/partitions/p-east/custom-fields/single",
        `{"id":"f","type":"enum","values":${deep}}`,
        firstTooDeep(["values"], 2),
      ],
    ];
    for (const [method, path, body, at] of cases) {
      const r = await unchanged(server, () => call(method, path, body), `${method} ${path}`);
      expect(expectError(r, 400, `${method} ${path}`)).toEqual([{ path: at, message: TOO_DEEP }]);
      expect(r.body.error.message).toMatch(
        /^The request body is nested too deeply: line 1, column \d+: nested deeper than 64 arrays and objects\.$/,
      );
    }
  });

  test("HJ1 a body of exactly 64 levels is within the limit: the route answers for its fields, never 500", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, building());
    const r = await unchanged(
      server,
      () =>
        call(
          "POST",
          "/holders",
          `{"firstName":"A","lastName":"B","partition":"p-east","customFields":{"note":${nested(62)}}}`,
        ),
      "64 levels",
    );
    expect(expectError(r, 400, "64 levels")).toEqual([
      { path: "body.customFields.note", message: "Is not a custom field of its partition." },
    ]);
    const g = await call("POST", "/reports/holders/preview", `{"output":${nested(63)}}`);
    expect(expectError(g, 400, "report output").map((i) => i.path)).toEqual(["body.output[0]"]);
  });

  test("HJ1 half a million open brackets (1 MB) are refused after the 65th, while a concurrent GET keeps answering", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, building());
    const body = nested(500_000);
    const h = await whileHostile(call, "/holders/h-ann", () =>
      unchanged(server, () => call("POST", "/holders", body), "1 MB of brackets"),
    );
    expect(expectError(h.result, 400, "1 MB of brackets")).toEqual([
      { path: formatPath(Array<number>(64).fill(0)), message: TOO_DEEP },
    ]);
    expect(h.allOk).toBe(true);
    expect(h.p99, `p99 of ${h.samples} reads`).toBeLessThan(100);
    expect(h.rssGrowthMiB).toBeLessThan(256);
  });
});

describe("HJ5 linear-time custom-field regexes", () => {
  const REGEX = "^(a+)+$|^a*!$";

  test("HJ5 the definition ^(a+)+$|^a*!$ and values a×29+b, a×40+b, a×29+!, a×40+!: each write answers at once, a concurrent GET within 100 ms p99; a restart with the value stored is quick", async () => {
    const { db } = dataDir();
    const first = await startData(db, building());
    const def = await first.call("POST", "/partitions/p-east/custom-fields/single", {
      id: "code",
      type: "string",
      regex: REGEX,
      description: "a's, or a's and a bang",
    });
    expect(def.status, JSON.stringify(def.body)).toBe(200);
    const put = (value: string) =>
      first.call("PUT", "/holders/h-cy", {
        ...HOLDER,
        firstName: "Cy",
        lastName: "Annand",
        customFields: { code: value },
      });
    for (const value of [`${"a".repeat(29)}b`, `${"a".repeat(40)}b`]) {
      const h = await whileHostile(first.call, "/holders/h-ann", () =>
        unchanged(first.server, () => put(value), value),
      );
      expect(expectError(h.result, 400, value)).toEqual([
        { path: "body.customFields.code", message: `Must match ${REGEX}.` },
      ]);
      expect(h.allOk).toBe(true);
      expect(h.p99, `p99 of ${h.samples} reads`).toBeLessThan(100);
      expect(h.rssGrowthMiB).toBeLessThan(256);
    }
    // A JavaScript engine tries ^(a+)+$ exponentially long before ^a*!$ matches: RE2 matches at once.
    for (const value of [`${"a".repeat(29)}!`, `${"a".repeat(40)}!`]) {
      const h = await whileHostile(first.call, "/holders/h-ann", () => put(value));
      expect(h.result.status, JSON.stringify(h.result.body)).toBe(204);
      expect(h.allOk).toBe(true);
      expect(h.p99, `p99 of ${h.samples} reads`).toBeLessThan(100);
    }
    await first.server.close();
    // The restart checks the stored value against the definition again.
    const again = await startData(db);
    const cy = await again.call("GET", "/holders/h-cy");
    expect(cy.body.customFields).toEqual({ code: `${"a".repeat(40)}!` });
  });

  test("HJ5 a definition outside the linear-time subset (backreference, lookahead, lookbehind) is a 400 saying why; JavaScript's \\uXXXX keeps its meaning", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, building());
    for (const regex of ["^(a)\\1$", "^(?=a)a", "(?<=a)b"]) {
      const r = await unchanged(
        server,
        () =>
          call("POST", "/partitions/p-east/custom-fields/single", { id: "x", type: "string", regex, description: "d" }),
        regex,
      );
      const issues = expectError(r, 400, regex);
      expect(issues.map((i) => i.path)).toEqual(["body.regex"]);
      expect(issues[0]!.message).toMatch(
        /^Must be a regular expression of the linear-time \(RE2\) subset, which has no backreferences, lookahead or lookbehind: .+\.$/,
      );
    }
    expect(
      (
        await call("POST", "/partitions/p-east/custom-fields/single", {
          id: "initial",
          type: "string",
          regex: "^\\u0041[0-9]+$",
          description: "A and digits",
        })
      ).status,
    ).toBe(200);
    const put = (value: string) =>
      call("PUT", "/holders/h-cy", {
        ...HOLDER,
        firstName: "Cy",
        lastName: "Annand",
        customFields: { initial: value },
      });
    expect((await put("A12")).status).toBe(204);
    expect(expectError(await put("B12"), 400, "B12")).toEqual([
      { path: "body.customFields.initial", message: "Must match ^\\u0041[0-9]+$." },
    ]);
  });
});

describe("HJ4 a snapshot file that is not JSON: line and column only, never its text", () => {
  const PIN = "824613";
  const DURESS = "991177";
  /** A snapshot whose holder line misses a comma right after its PIN. */
  const broken = [
    "{",
    '  "format": "rsop-system/1",',
    '  "systemId": "s-1",',
    `  "holders": [{ "id": "h1", "firstName": "Ann", "lastName": "Lee", "pin": "${PIN}" "duressPin": "${DURESS}" }]`,
    "}",
  ].join("\n");
  const noSecret = (text: string, what: string) => {
    expect(text, what).not.toContain(PIN);
    expect(text, what).not.toContain(DURESS);
  };

  test("HJ4 serve --system broken.json, with and without --data, and validate: the error names line 4 and its column, no PIN", async () => {
    const dir = tempDir();
    const file = join(dir, "broken.json");
    writeFileSync(file, broken);
    const served = await run(["serve", "--system", file, "--token", TOKEN, "--port", "0"]);
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(/Not valid JSON: line 4, column \d+: expected ',' or '}' after a property value\./);
    noSecret(served.stderr + served.stdout, "serve --system");
    const data = await run([
      "serve",
      "--data",
      join(dir, "data.db"),
      "--system",
      file,
      "--token",
      TOKEN,
      "--port",
      "0",
    ]);
    expect(data.code).toBe(1);
    expect(data.stderr).toMatch(/is not valid JSON: line 4, column \d+: expected ',' or '}' after a property value/);
    noSecret(data.stderr + data.stdout, "serve --data --system");
    const validate = await run(["validate", "--system", file]);
    expect(validate.code).toBe(1);
    noSecret(validate.stderr + validate.stdout, "validate");
  });

  test("HJ4 a reload of a file turned broken: the log and the reload's issues give line and column, no PIN; a body with a PIN likewise", async () => {
    const file = join(tempDir(), "building.json");
    writeFileSync(file, JSON.stringify(building()));
    const { lines, log } = logSink();
    const server = await startServer({ systemFile: file, token: TOKEN, log, watch: false, reloadWorker: false });
    try {
      writeFileSync(file, broken);
      const r = await server.reload();
      expect(r).toMatchObject({
        status: "refused",
        issues: [
          { code: "invalidJson", path: [], message: expect.stringMatching(/^Not valid JSON: line 4, column \d+: /) },
        ],
      });
      noSecret(JSON.stringify(r), "reload result");
      expect(lines.some((l) => /line 4, column \d+/.test(l))).toBe(true);
      noSecret(lines.join("\n"), "server log");
      const deep = `${"[".repeat(70)}${"]".repeat(70)}`;
      writeFileSync(
        file,
        `{"format":"rsop-system/1","systemId":"s-1","holders":[{"id":"h1","firstName":"A","lastName":"B","pin":"${PIN}","customFields":{"x":${deep}}}]}`,
      );
      const d = await server.reload();
      expect(d).toMatchObject({
        status: "refused",
        issues: [{ code: "tooBig", path: ["holders", 0, "customFields", "x", ...Array<number>(60).fill(0)] }],
      });
      noSecret(JSON.stringify(d) + lines.join("\n"), "deep reload");
    } finally {
      await server.close();
    }
    const { db } = dataDir();
    const { call } = await startData(db, building());
    const answer = await call(
      "POST",
      "/holders",
      `{"firstName":"A","lastName":"B","pin":"${PIN}" "duressPin":"${DURESS}"}`,
    );
    // HJ4: one issue at `body` with the position in words, never the text.
    expect(expectError(answer, 400, "broken body").map((i) => i.path)).toEqual(["body"]);
    noSecret(JSON.stringify(answer.body), "answer");
  });
});
