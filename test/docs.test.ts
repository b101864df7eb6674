import { resolve } from "node:path";
import ts from "typescript";
import { expect, test } from "vitest";

// Every export of the public entry carries a doc comment; every value export also an @example.
test("every public export is documented, values with an @example", () => {
  const entry = resolve(__dirname, "../src/index.ts");
  const program = ts.createProgram([entry], { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, target: ts.ScriptTarget.ES2022, strict: true });
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
  const problems: string[] = [];
  const exports = checker.getExportsOfModule(moduleSymbol);
  expect(exports.length).toBeGreaterThan(10);
  for (const exp of exports) {
    const sym = exp.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exp) : exp;
    const decl = sym.declarations?.[0];
    if (decl === undefined) {
      problems.push(`${exp.name}: no declaration`);
      continue;
    }
    const docs = ts.getJSDocCommentsAndTags(decl);
    const text = sym.getDocumentationComment(checker).map((p) => p.text).join("").trim();
    if (text === "" && docs.length === 0) problems.push(`${exp.name}: no doc comment`);
    const isValue = (sym.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Class | ts.SymbolFlags.Variable)) !== 0;
    const tags = sym.getJsDocTags(checker).map((t) => t.name);
    if (isValue && !tags.includes("example")) problems.push(`${exp.name}: no @example`);
  }
  expect(problems).toEqual([]);
});
