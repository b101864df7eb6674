import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { expect, test } from "vitest";
import { installedPackage } from "./support/installedPackage.js";

// Every export of a public entry carries a doc comment; every value export also an @example.
test.each(["index.ts", "http.ts", "reports.ts", "webhooks.ts"])(
  "every export of src/%s is documented, values with an @example",
  (name) => {
    const entry = resolve(__dirname, "../src", name);
    const program = ts.createProgram([entry], {
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
      strict: true,
    });
    const checker = program.getTypeChecker();
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    const problems: string[] = [];
    const exports = checker.getExportsOfModule(moduleSymbol);
    expect(exports.length).toBeGreaterThan(name === "index.ts" ? 10 : 3);
    for (const exp of exports) {
      const sym = exp.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exp) : exp;
      const decl = sym.declarations?.[0];
      if (decl === undefined) {
        problems.push(`${exp.name}: no declaration`);
        continue;
      }
      const docs = ts.getJSDocCommentsAndTags(decl);
      const text = sym
        .getDocumentationComment(checker)
        .map((p) => p.text)
        .join("")
        .trim();
      if (text === "" && docs.length === 0) problems.push(`${exp.name}: no doc comment`);
      const isValue = (sym.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Class | ts.SymbolFlags.Variable)) !== 0;
      const tags = sym.getJsDocTags(checker).map((t) => t.name);
      if (isValue && !tags.includes("example")) problems.push(`${exp.name}: no @example`);
    }
    expect(problems).toEqual([]);
  },
);

// The declarations a user's editor shows speak to the user: no references to this repository's
// internal documents (the specification's sections, the API seed documents, the shared reference
// folder), no ★ marks of extensions and no maintainer CAUTION notes. Read from the packed package.
test("the shipped .d.ts files name no internal documents or maintainer notes", () => {
  const { pkg } = installedPackage();
  const dist = join(pkg, "dist");
  const offending: string[] = [];
  const declarations = readdirSync(dist).filter((f) => f.endsWith(".d.ts") || f.endsWith(".d.cts"));
  expect(declarations).toEqual(
    expect.arrayContaining(["index.d.ts", "index.d.cts", "http.d.ts", "http.d.cts", "reports.d.ts", "reports.d.cts"]),
  );
  for (const f of declarations)
    readFileSync(join(dist, f), "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/\bSPEC\b|★|\bCAUTION\b|shared\/reference|\b[Ss]eeds?\b/.test(line))
          offending.push(`${f}:${i + 1}: ${line.trim()}`);
      });
  expect(offending).toEqual([]);
}, 300_000);
