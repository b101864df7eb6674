import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import { expect, test } from "vitest";

// Data flows one way: model → compile → evaluate → legacy1 → live → adapters. A file may import only from its own
// layer or a lower one; the public entry src/index.ts may import from any layer.
const LAYERS = ["model", "compile", "evaluate", "legacy1", "live", "adapters"] as const;
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
  return LAYERS.indexOf(top as (typeof LAYERS)[number]);
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
      if (to > from) upward.push(`${relative(SRC, file)} imports ${m[1]} (${LAYERS[to]} is above ${LAYERS[from]})`);
    }
  }
  expect(upward).toEqual([]);
});

test("luxon stays out of the evaluate layer's hot path", () => {
  const offenders = files(join(SRC, "evaluate")).filter(
    (f) => /from\s+["']luxon["']/.test(readFileSync(f, "utf8")) && f.endsWith("decide.ts"),
  );
  expect(offenders).toEqual([]);
});

test("better-sqlite3 is loaded only by the SQLite store, and only on first use (import(), never a static value import)", () => {
  const users = files(SRC).filter((f) => /["']better-sqlite3["']/.test(readFileSync(f, "utf8")));
  expect(users.map((f) => relative(SRC, f).split(/[\\/]/).join("/"))).toEqual(["adapters/store/sqliteStore.ts"]);
  const text = readFileSync(users[0]!, "utf8");
  expect(text).not.toMatch(/^\s*import\s+(?!type\b)[^;]*from\s+["']better-sqlite3["']/m);
  expect(text).not.toMatch(/require\(\s*["']better-sqlite3["']\s*\)/);
  expect(text).toMatch(/await import\("better-sqlite3"\)/);
});

test("pg is loaded only by the PostgreSQL store, and only on first use (import(), never a static value import)", () => {
  const users = files(SRC).filter((f) => /["']pg["']/.test(readFileSync(f, "utf8")));
  expect(users.map((f) => relative(SRC, f).split(/[\\/]/).join("/"))).toEqual(["adapters/store/postgresStore.ts"]);
  const text = readFileSync(users[0]!, "utf8");
  expect(text).not.toMatch(/^\s*import\s+(?!type\b)[^;]*from\s+["']pg["']/m);
  expect(text).not.toMatch(/require\(\s*["']pg["']\s*\)/);
  expect(text).toMatch(/await import\("pg"\)/);
});
