// The cloud node runtime's place among the layers: it imports only the engine's layers (model,
// compile, evaluate, live), its own files, Node's built-ins and the packages named here; of src, only
// the CLI (`rsop node`) and the public entries import it (N52).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expect, test } from "vitest";

const SRC = resolve(__dirname, "../../src");
const ALLOWED = new Set(["model", "compile", "evaluate", "live", "node"]);
// immer: the change feed's patches are immer's; better-sqlite3: the node's data file (loaded on start).
const PACKAGES = new Set(["immer", "better-sqlite3"]);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return p.endsWith(".ts") && !p.endsWith(".test.ts") ? [p] : [];
  });
}

const IMPORT = /^\s*(?:import|export)[^'"]*?from\s+["']([^"']+)["']/gm;

test("src/node imports only model, compile, evaluate, live, itself, Node's built-ins and its packages", () => {
  const outside: string[] = [];
  for (const file of files(join(SRC, "node"))) {
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = m[1]!;
      if (!spec.startsWith(".")) {
        // Any other package would tie the node to a library it does not need.
        if (spec.startsWith("node:") || PACKAGES.has(spec)) continue;
        outside.push(`${relative(SRC, file)} imports ${spec}`);
        continue;
      }
      const top = relative(SRC, resolve(dirname(file), spec)).split(/[\\/]/)[0]!;
      if (!ALLOWED.has(top)) outside.push(`${relative(SRC, file)} imports ${spec}`);
    }
  }
  expect(outside).toEqual([]);
});

test("of src, only the CLI and the public entries import src/node", () => {
  const into: string[] = [];
  for (const file of files(SRC)) {
    const at = relative(SRC, file);
    if (at.startsWith("node") || at.startsWith("adapters/cli") || !at.includes("/")) continue;
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = m[1]!;
      if (spec.startsWith(".") && relative(SRC, resolve(dirname(file), spec)).split(/[\\/]/)[0] === "node")
        into.push(`${relative(SRC, file)} imports ${spec}`);
    }
  }
  expect(into).toEqual([]);
});
