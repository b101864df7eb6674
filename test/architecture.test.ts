import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import { expect, test } from "vitest";

// Data flows one way: model → compile → evaluate → live → legacy1 → events · reports → service → adapters. A file
// may import only from its own layer or a lower one (events and reports share a rank: neither is below the other);
// the public entries (src/index.ts, http.ts, …) may import from any layer. legacy1 (everything 1.0) sits after live
// because the 1.0 live system is built from live's parts (transition, body checks, route table), and before
// events · reports because the people report reads a 1.0 panel engine; so 1.0 can be retired by deleting legacy1
// and the few places above it that name it. node (the cloud node runtime) sits beside the service, below the
// adapters: the CLI runs it (`rsop node`); that it imports only model, compile, evaluate and live, never the
// service, is pinned by test/node/nodeLayer.test.ts.
const LAYERS = [
  ["model"],
  ["compile"],
  ["evaluate"],
  ["live"],
  ["legacy1"],
  ["events", "reports"],
  ["service"],
  ["node"],
  ["adapters"],
] as const;
const SRC = resolve(__dirname, "../src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return p.endsWith(".ts") && !p.endsWith(".test.ts") ? [p] : [];
  });
}

function layerOf(file: string): number {
  const top = relative(SRC, file).split(/[\\/]/)[0]!;
  return LAYERS.findIndex((rank) => (rank as readonly string[]).includes(top));
}

test("no module imports from a higher layer", () => {
  const upward: string[] = [];
  for (const file of files(SRC)) {
    const from = layerOf(file);
    if (from < 0) continue; // src/index.ts
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^\s*(?:import|export)[^'"]*?from\s+["'](\.[^"']+)["']/gm)) {
      const target = resolve(dirname(file), m[1]!);
      const to = layerOf(target);
      if (to > from)
        upward.push(
          `${relative(SRC, file)} imports ${m[1]} (${LAYERS[to]!.join(" · ")} is above ${LAYERS[from]!.join(" · ")})`,
        );
    }
  }
  expect(upward).toEqual([]);
});

// Type-only imports count: a cycle of types still ties two modules together (neither can be read, moved or deleted
// alone), and the layer test counts them too. Dynamic import() is left out: it loads on first use, after both modules.
test("no import cycle anywhere in src", () => {
  const graph = new Map<string, string[]>();
  for (const file of files(SRC)) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/^\s*(?:import|export)[^'"]*?from\s+["'](\.[^"']+)["']/gm)].map((m) =>
      resolve(dirname(file), m[1]!).replace(/\.js$/, ".ts"),
    );
    graph.set(file, targets);
  }
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open")
        cycles.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(SRC, f)).join(" → "));
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file);
  expect(cycles).toEqual([]);
});

test("luxon stays out of the evaluate layer's hot path", () => {
  const offenders = files(join(SRC, "evaluate")).filter(
    (f) => /from\s+["']luxon["']/.test(readFileSync(f, "utf8")) && f.endsWith("decide.ts"),
  );
  expect(offenders).toEqual([]);
});

test("better-sqlite3 is loaded only by the SQLite store and a cloud node's store, and only on first use (import(), never a static value import)", () => {
  const users = files(SRC).filter((f) => /["']better-sqlite3["']/.test(readFileSync(f, "utf8")));
  expect(users.map((f) => relative(SRC, f).split(/[\\/]/).join("/")).sort()).toEqual([
    "adapters/store/sqliteStore.ts",
    "node/nodeStore.ts",
  ]);
  for (const user of users) {
    const text = readFileSync(user, "utf8");
    expect(text).not.toMatch(/^\s*import\s+(?!type\b)[^;]*from\s+["']better-sqlite3["']/m);
    expect(text).not.toMatch(/require\(\s*["']better-sqlite3["']\s*\)/);
    expect(text).toMatch(/await import\("better-sqlite3"\)/);
  }
});

test("pg is loaded only by the PostgreSQL store, and only on first use (import(), never a static value import)", () => {
  const users = files(SRC).filter((f) => /["']pg["']/.test(readFileSync(f, "utf8")));
  expect(users.map((f) => relative(SRC, f).split(/[\\/]/).join("/"))).toEqual(["adapters/store/postgresStore.ts"]);
  const text = readFileSync(users[0]!, "utf8");
  expect(text).not.toMatch(/^\s*import\s+(?!type\b)[^;]*from\s+["']pg["']/m);
  expect(text).not.toMatch(/require\(\s*["']pg["']\s*\)/);
  expect(text).toMatch(/await import\("pg"\)/);
});
