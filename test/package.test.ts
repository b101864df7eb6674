// The published package works as a package (STYLE §6, after date-fns' smoke test): `npm pack` on a
// fresh tree ships the build, the demo data and the license; the installed ESM and CJS entries load,
// expose the same API, share error classes and decide alike; `import "rsop-engine"` loads no Node
// built-in and none of the CLI's or server's libraries; the `rsop` binary runs.
import { execFileSync, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, expect, test } from "vitest";
import { type InstalledPackage, installedPackage, repoRoot } from "./support/installedPackage.js";

const building = JSON.parse(readFileSync(`${repoRoot}examples/building.json`, "utf8"));
const scan = {
  deviceId: "door-ward-3",
  at: "2026-04-15T09:15:00-05:00",
  credential: { credentialNumber: 10234, facilityCode: 17 },
};
const SERVER_AND_CLI_LIBRARIES = ["commander", "cli-progress", "hono", "@hono/node-server", "better-sqlite3", "pg"];

let installed: InstalledPackage;
beforeAll(() => {
  installed = installedPackage();
}, 300_000);

function node(args: readonly string[], cwd = installed.app) {
  return spawnSync(process.execPath, args, { cwd, encoding: "utf8", timeout: 60_000 });
}

test("npm pack builds dist/ (prepack) and ships it with the demo data, docs/semantics.md and the LICENSE", () => {
  expect(installed.files).toEqual(
    expect.arrayContaining([
      "LICENSE",
      "README.md",
      "package.json",
      "docs/semantics.md",
      "examples/building.json",
      "examples/requests.jsonl",
      "dist/cli.js",
      "dist/index.js",
      "dist/index.cjs",
      "dist/index.d.ts",
      "dist/index.d.cts",
      "dist/http.js",
      "dist/http.cjs",
      "dist/http.d.ts",
      "dist/http.d.cts",
      "dist/reports.js",
      "dist/reports.cjs",
      "dist/reports.d.ts",
      "dist/reports.d.cts",
      "dist/webhooks.js",
      "dist/webhooks.cjs",
      "dist/webhooks.d.ts",
      "dist/webhooks.d.cts",
      "dist/node.js",
      "dist/node.cjs",
      "dist/node.d.ts",
      "dist/node.d.cts",
    ]),
  );
  expect(installed.files.filter((f) => /^(src|test|bench)\//.test(f) || f.endsWith(".test.ts"))).toEqual([]);
  expect(readFileSync(join(installed.pkg, "LICENSE"), "utf8")).toMatch(/^MIT License/);
});

test("the installed package's `rsop demo` runs from its bundled examples", () => {
  const r = node([join(installed.pkg, "dist/cli.js"), "demo"]);
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  expect(r.stdout.split("\n")[0]).toMatch(/^Example building /);
  expect(r.stdout).toContain("→ ALLOWED (allowed)");
});

test("the rsop binary runs", () => {
  const r = node([
    join(installed.pkg, "dist/cli.js"),
    "card",
    "encode",
    "--format",
    "H10301",
    "--facility-code",
    "1",
    "--card-number",
    "1",
  ]);
  expect(r.stdout).toBe("10000000100000000000000010\n");
});

test("better-sqlite3 is an optional peer: without it, `rsop serve --data` says what to install (exit 1)", () => {
  const manifest = JSON.parse(readFileSync(join(installed.pkg, "package.json"), "utf8"));
  expect(manifest.peerDependenciesMeta).toEqual({ "better-sqlite3": { optional: true }, pg: { optional: true } });
  expect(Object.keys(manifest.dependencies)).not.toContain("better-sqlite3");
  const r = spawnSync(
    process.execPath,
    [
      join(installed.pkg, "dist/cli.js"),
      "serve",
      "--data",
      join(installed.app, "no-driver.db"),
      "--system",
      join(installed.pkg, "examples/building.json"),
      "--port",
      "0",
    ],
    {
      cwd: installed.app,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, RSOP_TOKEN: "package-test-token-0123" },
    },
  );
  expect(r.stderr).toBe(
    "rsop: --data needs the package better-sqlite3 (an optional peer dependency of rsop-engine): npm install better-sqlite3\n",
  );
  expect(r.status).toBe(1);
});

test("pg is an optional peer: without it, `rsop serve --store postgres://…` says what to install (exit 1)", () => {
  const manifest = JSON.parse(readFileSync(join(installed.pkg, "package.json"), "utf8"));
  expect(manifest.peerDependenciesMeta.pg).toEqual({ optional: true });
  expect(Object.keys(manifest.dependencies)).not.toContain("pg");
  const r = spawnSync(
    process.execPath,
    [
      join(installed.pkg, "dist/cli.js"),
      "serve",
      "--store",
      "postgres://rsop@127.0.0.1:1/nothing",
      "--system",
      join(installed.pkg, "examples/building.json"),
      "--port",
      "0",
    ],
    {
      cwd: installed.app,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, RSOP_TOKEN: "package-test-token-0123" },
    },
  );
  expect(r.stderr).toBe(
    "rsop: --store postgres://… needs the package pg (an optional peer dependency of rsop-engine): npm install pg\n",
  );
  expect(r.status).toBe(1);
});

test("ESM and CJS entries load with the same exports and decide alike", async () => {
  const esm = await import(pathToFileURL(join(installed.pkg, "dist/index.js")).href);
  const cjs = createRequire(join(installed.app, "x.cjs"))("rsop-engine");
  expect(Object.keys(esm).sort()).toEqual(Object.keys(cjs).sort());
  expect(Object.keys(esm)).toEqual(
    expect.arrayContaining(["loadEngine", "migratePanel", "encodeWiegand", "SnapshotError", "QueryError"]),
  );
  for (const lib of [esm, cjs])
    expect(lib.loadEngineOrThrow(building).decide(scan)).toMatchObject({ outcome: "allowed", reason: "allowed" });
  const httpEsm = await import(pathToFileURL(join(installed.pkg, "dist/http.js")).href);
  const httpCjs = createRequire(join(installed.app, "x.cjs"))("rsop-engine/http");
  expect(Object.keys(httpEsm).sort()).toEqual(["createHttpHandler"]);
  expect(Object.keys(httpCjs).sort()).toEqual(["createHttpHandler"]);
});

test("rsop-engine/reports: ESM and CJS export the same report functions, and a report of one format's engine exports alike", async () => {
  const esm = await import(pathToFileURL(join(installed.pkg, "dist/reports.js")).href);
  const cjs = createRequire(join(installed.app, "x.cjs"))("rsop-engine/reports");
  expect(Object.keys(esm).sort()).toEqual(Object.keys(cjs).sort());
  expect(Object.keys(esm)).toEqual(
    expect.arrayContaining([
      "holderReport",
      "peopleReport",
      "rsopReport",
      "rsopReportChunks",
      "toCsv",
      "toHtml",
      "toJson",
    ]),
  );
  const engine = createRequire(join(installed.app, "x.cjs"))("rsop-engine").loadEngineOrThrow(building);
  for (const lib of [esm, cjs]) {
    const r = lib.holderReport(engine.snapshot, {
      filters: [{ type: "groups", memberOf: ["grp-nurses"] }],
      output: ["id", "lastName"],
    });
    expect(r.ok).toBe(true);
    expect(lib.toCsv(r.value, ["id", "lastName"]).split("\r\n")[0]).toBe("id,lastName");
  }
});

test("an error thrown by one format is an instance of the other format's class", async () => {
  const esm = await import(pathToFileURL(join(installed.pkg, "dist/index.js")).href);
  const cjs = createRequire(join(installed.app, "x.cjs"))("rsop-engine");
  expect(esm.SnapshotError).not.toBe(cjs.SnapshotError); // two builds, two class objects
  for (const [thrower, other] of [
    [esm, cjs],
    [cjs, esm],
  ]) {
    let snapshotError: unknown;
    try {
      thrower.loadEngineOrThrow({ format: "rsop-system/2" });
    } catch (e) {
      snapshotError = e;
    }
    expect(snapshotError).toBeInstanceOf(other.SnapshotError);
    expect(snapshotError).toBeInstanceOf(thrower.SnapshotError);
    expect(snapshotError).not.toBeInstanceOf(other.QueryError);
    expect(snapshotError).toBeInstanceOf(Error);
    expect(() => thrower.loadEngineOrThrow(building).rsop(["nobody"], { at: "2026-04-15T14:15:00Z" })).toThrow(
      other.QueryError,
    );
  }
  for (const lib of [esm, cjs]) {
    expect(new Error("x")).not.toBeInstanceOf(lib.SnapshotError);
    expect({ issues: [] }).not.toBeInstanceOf(lib.QueryError);
    expect(null).not.toBeInstanceOf(lib.SnapshotError);
    // A subclass keeps ordinary instanceof: its parent's instances are not its own.
    const Base: new (issues: readonly unknown[]) => Error = lib.SnapshotError;
    class MyError extends Base {}
    expect(new MyError([])).toBeInstanceOf(MyError);
    expect(new MyError([])).toBeInstanceOf(lib.SnapshotError);
    expect(new lib.SnapshotError([])).not.toBeInstanceOf(MyError);
  }
});

test("the HTTP handler of one format answers unknown ids of the other format's engine with 404", async () => {
  const http = await import(pathToFileURL(join(installed.pkg, "dist/http.js")).href);
  const cjs = createRequire(join(installed.app, "x.cjs"))("rsop-engine");
  const engine = cjs.loadEngineOrThrow(building);
  const handle = http.createHttpHandler({ getEngine: () => engine, insecureNoAuth: true });
  const res: Response = await handle(
    new Request(`http://localhost/${engine.snapshot.systemId}/rsop/holders?ids=nobody&at=2026-04-15T14:15:00Z`),
  );
  expect(res.status).toBe(404);
});

// Records every module a fresh process resolves while importing (ESM, through module.register hooks)
// or requiring (CJS, through Module._load) one specifier, as seen from the installed app.
function loadedBy(specifier: string, format: "esm" | "cjs"): string[] {
  const log = join(installed.app, `loaded-${format}-${specifier.replace(/\W/g, "_")}.txt`);
  writeFileSync(log, "");
  const hooks = join(installed.app, "record-hooks.mjs");
  writeFileSync(
    hooks,
    `import { appendFileSync } from "node:fs";
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(log, specifier + " " + r.url + "\\n");
  return r;
}
`,
  );
  const script =
    format === "esm"
      ? `import { register } from "node:module";
register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: ${JSON.stringify(log)} } });
await import(${JSON.stringify(specifier)});`
      : `const Module = require("node:module");
const { appendFileSync } = require("node:fs");
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const r = load.apply(this, arguments);
  appendFileSync(${JSON.stringify(log)}, request + " " + (Module.isBuiltin(request) ? request : Module._resolveFilename(request, parent, isMain)) + "\\n");
  return r;
};
require(${JSON.stringify(specifier)});`;
  const file = join(installed.app, `load-${format}.${format === "esm" ? "mjs" : "cjs"}`);
  writeFileSync(file, script);
  const r = node([file]);
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l !== "");
}

for (const specifier of ["rsop-engine", "rsop-engine/http", "rsop-engine/reports"]) {
  for (const format of ["esm", "cjs"] as const) {
    test(`${format === "esm" ? "import" : "require"}("${specifier}") in a fresh process loads no Node built-in and no CLI or server library`, () => {
      const loaded = loadedBy(specifier, format);
      expect(loaded.length).toBeGreaterThan(1); // the entry and its dependencies were seen
      expect(loaded.some((l) => l.includes("/node_modules/rsop-engine/dist/"))).toBe(true);
      expect(loaded.some((l) => /\/node_modules\/(zod|luxon)\//.test(l))).toBe(true);
      const builtins = loaded.filter(
        (l) => /(^|\s)node:/.test(l) || createRequire(import.meta.url)("node:module").isBuiltin(l.split(" ")[0]!),
      );
      expect(builtins).toEqual([]);
      const libraries = loaded.filter((l) =>
        SERVER_AND_CLI_LIBRARIES.some((lib) => l.includes(`/node_modules/${lib}/`)),
      );
      expect(libraries).toEqual([]);
    });
  }
}

for (const format of ["esm", "cjs"] as const) {
  test(`${format === "esm" ? "import" : "require"}("rsop-engine/webhooks") loads node:crypto but no CLI or server library, and signs and verifies`, async () => {
    const loaded = loadedBy("rsop-engine/webhooks", format);
    expect(loaded.some((l) => l.includes("/node_modules/rsop-engine/dist/"))).toBe(true);
    expect(loaded.filter((l) => SERVER_AND_CLI_LIBRARIES.some((lib) => l.includes(`/node_modules/${lib}/`)))).toEqual(
      [],
    );
    const lib =
      format === "esm"
        ? await import(pathToFileURL(join(installed.pkg, "dist/webhooks.js")).href)
        : createRequire(join(installed.app, "x.cjs"))("rsop-engine/webhooks");
    expect(Object.keys(lib).sort()).toEqual([
      "SIGNATURE_HEADER",
      "accessEvent",
      "changeEvents",
      "filterEvent",
      "signBody",
      "threatLevelEvents",
      "verifySignature",
    ]);
    expect(lib.verifySignature("{}", lib.signBody("{}", "k"), "k")).toBe(true);
  });
}

for (const format of ["esm", "cjs"] as const) {
  test(`${format === "esm" ? "import" : "require"}("rsop-engine/node") loads no CLI or server library, nor better-sqlite3 until a node starts`, async () => {
    const loaded = loadedBy("rsop-engine/node", format);
    expect(loaded.some((l) => l.includes("/node_modules/rsop-engine/dist/"))).toBe(true);
    expect(loaded.filter((l) => SERVER_AND_CLI_LIBRARIES.some((lib) => l.includes(`/node_modules/${lib}/`)))).toEqual(
      [],
    );
    const lib =
      format === "esm"
        ? await import(pathToFileURL(join(installed.pkg, "dist/node.js")).href)
        : createRequire(join(installed.app, "x.cjs"))("rsop-engine/node");
    expect(Object.keys(lib).sort()).toEqual([
      "CloudNode",
      "ContactState",
      "LinkError",
      "MAX_SCAN_LINE_BYTES",
      "NodeStoreError",
      "REBASE_CHANGES",
      "ScanAnswerer",
      "ScanLines",
      "listenForScans",
      "serveScans",
    ]);
    const contact = new lib.ContactState({ now: () => 5000 });
    contact.contact(1000);
    contact.lost();
    expect(contact.nodeStateAt(5000)).toEqual({ online: false, offlineSeconds: 4, timeKnown: true });
  });
}

test("the root and http entries use no Node-only global (Buffer, process, __dirname, require)", () => {
  // The entry files and the chunks they import, both formats.
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(installed.pkg, "dist", file), "utf8");
    for (const m of text.matchAll(/(?:from\s*|require\()["']\.\/([^"']+)["']/g)) visit(m[1]!);
  };
  for (const entry of ["index.js", "index.cjs", "http.js", "http.cjs"]) visit(entry);
  expect([...seen].filter((f) => f.startsWith("chunk-")).length).toBeGreaterThan(0);
  const uses = [...seen].flatMap((f) => {
    const code = readFileSync(join(installed.pkg, "dist", f), "utf8").replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "");
    return [
      ...code.matchAll(
        /(?<![.\w$])(?:Buffer|process)\s*\.|\b__dirname\b|\b__filename\b|\brequire\(\s*["'](?!\.\/|zod|luxon|immer|re2js)[^"']*["']/g,
      ),
    ].map((m) => `${f}: ${m[0]}`);
  });
  expect(uses).toEqual([]);
});

test("type declarations are emitted for every entry and format", () => {
  for (const f of ["index.d.ts", "index.d.cts"])
    expect(readFileSync(join(installed.pkg, "dist", f), "utf8")).toMatch(/export \{[^}]*\bloadEngine\b/);
  for (const f of ["http.d.ts", "http.d.cts"])
    expect(readFileSync(join(installed.pkg, "dist", f), "utf8")).toMatch(/declare function createHttpHandler/);
  for (const f of ["webhooks.d.ts", "webhooks.d.cts"])
    expect(readFileSync(join(installed.pkg, "dist", f), "utf8")).toMatch(/declare function verifySignature/);
  for (const f of ["node.d.ts", "node.d.cts"])
    expect(readFileSync(join(installed.pkg, "dist", f), "utf8")).toMatch(/declare class CloudNode/);
});

test("the package.json names its entries, license and files", () => {
  const manifest = JSON.parse(readFileSync(join(installed.pkg, "package.json"), "utf8"));
  expect(manifest.license).toBe("MIT");
  expect(manifest.scripts.prepack).toBeDefined();
  expect(Object.keys(manifest.exports)).toEqual([".", "./http", "./reports", "./webhooks", "./node", "./package.json"]);
  expect(
    execFileSync(process.execPath, ["-p", "require.resolve('rsop-engine/http')"], {
      cwd: installed.app,
      encoding: "utf8",
    }).trim(),
  ).toBe(join(installed.pkg, "dist/http.cjs"));
  expect(
    execFileSync(process.execPath, ["-p", "require.resolve('rsop-engine/webhooks')"], {
      cwd: installed.app,
      encoding: "utf8",
    }).trim(),
  ).toBe(join(installed.pkg, "dist/webhooks.cjs"));
});

// Compiles a user's program against the installed package's declarations (ESM and CJS) and returns
// every diagnostic; `// @ts-expect-error` lines assert what must not compile.
function typeErrors(fileName: string, source: string, resolution: "nodenext" | "node10" = "nodenext"): string[] {
  const file = join(installed.app, fileName);
  writeFileSync(file, source);
  const ts = createRequire(import.meta.url)("typescript") as typeof import("typescript");
  const modules =
    resolution === "nodenext"
      ? { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }
      : { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, esModuleInterop: true }; // zod's declarations need the flag there
  const program = ts.createProgram([file], {
    ...modules,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    types: [],
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? `${d.file.fileName.slice(installed.app.length)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : ""}${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
    );
}

const USER_PROGRAM = `
import { loadEngineOrThrow, parseSnapshot, type AllowedReason, type Decision, type DeniedReason, type IssueCode, type UnknownReason } from "rsop-engine";
import { createHttpHandler, type HttpHandler } from "rsop-engine/http";

export function describe(d: Decision): string {
  switch (d.outcome) {
    case "allowed": {
      const reason: AllowedReason = d.reason;
      const topic: "device.request.allowed" = d.topic;
      // @ts-expect-error an allowed decision has no denied reason
      if (d.reason === "deniedByRule") return "impossible";
      return reason + topic;
    }
    case "denied": {
      const reason: DeniedReason = d.reason;
      // @ts-expect-error a denied decision has no allowed reason
      const wrong: AllowedReason = d.reason;
      return reason + String(wrong);
    }
    case "unknown": {
      const reason: UnknownReason = d.reason;
      return reason;
    }
  }
}

const engine = loadEngineOrThrow({});
const out: Decision = engine.decide({});
const again: Decision = engine.decide({ deviceId: "d", at: 0 }, out); // the same object, refilled
if (again.outcome === "denied" && again.reason === "badRequest") describe(again);

const parsed = parseSnapshot({});
if (!parsed.ok) {
  const code: IssueCode = parsed.issues[0]!.code;
  // @ts-expect-error codes are a closed set
  if (code === "noSuchCode") describe(out);
}
export const handler: HttpHandler = createHttpHandler({ getEngine: () => engine });
`;

test("the installed types: Decision narrows on outcome, Issue.code is a closed union, both formats, node10 resolution too", () => {
  expect(typeErrors("user.mts", USER_PROGRAM)).toEqual([]);
  expect(typeErrors("user.cts", USER_PROGRAM)).toEqual([]); // a .cts file resolves the "require" types
  // TypeScript's older "node" (node10) resolution ignores `exports`: typesVersions maps the subpath.
  expect(typeErrors("user-node10.ts", USER_PROGRAM, "node10")).toEqual([]);
}, 240_000); // three TypeScript programs over zod's declarations: slow on a busy machine
