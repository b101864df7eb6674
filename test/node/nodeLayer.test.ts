// The cloud node runtime's place among the layers: it imports only the engine's layers (model,
// compile, evaluate, live) and its own files; test/architecture.test.ts ranks it last, so nothing
// below imports it.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expect, test } from "vitest";

const SRC = resolve(__dirname, "../../src");
const ALLOWED = new Set(["model", "compile", "evaluate", "live", "node"]);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return p.endsWith(".ts") && !p.endsWith(".test.ts") ? [p] : [];
  });
}

const IMPORT = /^\s*(?:import|export)[^'"]*?from\s+["']([^"']+)["']/gm;

test("src/node imports only model, compile, evaluate, live and itself", () => {
  const outside: string[] = [];
  for (const file of files(join(SRC, "node"))) {
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = m[1]!;
      if (!spec.startsWith(".")) {
        // A package would tie the engine's decisions to a library the node does not need.
        outside.push(`${relative(SRC, file)} imports ${spec}`);
        continue;
      }
      const top = relative(SRC, resolve(dirname(file), spec)).split(/[\\/]/)[0]!;
      if (!ALLOWED.has(top)) outside.push(`${relative(SRC, file)} imports ${spec}`);
    }
  }
  expect(outside).toEqual([]);
});

test("nothing in src imports src/node", () => {
  const into: string[] = [];
  for (const file of files(SRC)) {
    if (relative(SRC, file).startsWith("node")) continue;
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = m[1]!;
      if (spec.startsWith(".") && relative(SRC, resolve(dirname(file), spec)).split(/[\\/]/)[0] === "node")
        into.push(`${relative(SRC, file)} imports ${spec}`);
    }
  }
  expect(into).toEqual([]);
});
