// The examples of the README and of docs/*.md run as written. Every fenced `sh` or `ts` block carries
// a marker on the line before it: `<!-- runnable -->`, `<!-- runnable: continued -->` (a ts block that
// goes on from the previous ts block of the same file) or `<!-- not runnable: <reason> -->`. Runnable
// blocks run against the packed and installed package (test/support/installedPackage.ts), in a fresh
// folder that has the repository's `examples/` and that package's node_modules:
//
// - sh: bash runs the block, `npx rsop` being the installed package's `rsop` binary. Each command must
//   exit 0 (or N when a comment line after it reads `# (exit N)`); comment lines right after a
//   command are its expected output, line by line, where `…` stands for any text.
// - ts: the block is type-checked against the installed package's declarations, then run; an
//   expression statement followed by a `//=> value` comment (continued on further `//` lines) must
//   equal that value (node:assert deepStrictEqual).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { beforeAll, expect, test } from "vitest";
import { type InstalledPackage, installedPackage, repoRoot } from "./support/installedPackage.js";

const ts = createRequire(import.meta.url)("typescript") as typeof import("typescript");

interface Block {
  readonly file: string; // README.md or docs/<name>.md
  readonly lang: string;
  readonly line: number; // 1-based line of the opening fence
  readonly marker: string | null;
  readonly code: string;
}

function readmeBlocks(file: string, text: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)/.exec(lines[i]!);
    if (open === null) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith("```")) end++;
    let prev = i - 1;
    while (prev >= 0 && lines[prev]!.trim() === "") prev--;
    const marker = prev >= 0 ? (/^<!--\s*((?:not )?runnable.*?)\s*-->$/.exec(lines[prev]!.trim())?.[1] ?? null) : null;
    blocks.push({ file, lang: open[1]!, line: i + 1, marker, code: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return blocks;
}

const files = [
  "README.md",
  ...readdirSync(join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];
const blocks = files.flatMap((f) => readmeBlocks(f, readFileSync(join(repoRoot, f), "utf8")));
const runnable = blocks.filter((b) => b.marker?.startsWith("runnable"));

let installed: InstalledPackage;
beforeAll(() => {
  installed = installedPackage();
}, 300_000);

/** A fresh folder with the repository's examples and the installed package's node_modules. */
function workFolder(): string {
  const dir = mkdtempSync(join(installed.app, "readme-"));
  symlinkSync(join(repoRoot, "examples"), join(dir, "examples"), "dir");
  symlinkSync(join(installed.app, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

test("every sh and ts block of the README and docs/*.md is marked runnable or says why not", () => {
  const unmarked = blocks.filter(
    (b) =>
      (b.lang === "sh" || b.lang === "ts") &&
      !(b.marker === "runnable" || b.marker === "runnable: continued" || /^not runnable: \S/.test(b.marker ?? "")),
  );
  expect(
    unmarked.map(
      (b) => `${b.file}:${b.line} (${b.lang}) ${b.marker === null ? "has no marker" : `has the marker "${b.marker}"`}`,
    ),
  ).toEqual([]);
  expect(runnable.length).toBeGreaterThan(0);
  expect(runnable.every((b) => b.lang === "sh" || b.lang === "ts")).toBe(true);
});

// ---- sh ----

interface Command {
  readonly text: string;
  readonly line: number;
  readonly expected: readonly string[];
  readonly exit: number;
}

function shCommands(b: Block): Command[] {
  const lines = b.code.split("\n");
  const commands: Command[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() === "" || lines[i]!.trimStart().startsWith("#")) continue;
    const start = i;
    while (lines[i]!.endsWith("\\") && i + 1 < lines.length) i++;
    const text = lines.slice(start, i + 1).join("\n");
    const expected: string[] = [];
    let exit = 0;
    while (i + 1 < lines.length && lines[i + 1]!.startsWith("#")) {
      const comment = lines[++i]!.replace(/^# ?/, "");
      const code = /^\(exit (\d+)\)$/.exec(comment);
      if (code !== null) exit = Number(code[1]);
      else expected.push(comment);
    }
    commands.push({ text, line: b.line + 1 + start, expected, exit });
  }
  return commands;
}

function matches(actual: string, pattern: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split("…")
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  return re.test(actual);
}

for (const b of runnable.filter((b) => b.lang === "sh")) {
  test(`${b.file}:${b.line}: the sh block runs as written`, () => {
    const dir = workFolder();
    const cli = join(installed.pkg, "dist/cli.js");
    const preamble = `set -uo pipefail\nnpx() { if [ "$1" = rsop ]; then shift; node ${JSON.stringify(cli)} "$@"; else echo "npx $1: only rsop is available here" >&2; return 127; fi; }\n`;
    const problems: string[] = [];
    for (const [n, c] of shCommands(b).entries()) {
      const out = join(dir, `out-${n}.txt`);
      const r = spawnSync("bash", ["-c", `${preamble}${c.text}\n`], { cwd: dir, encoding: "utf8", timeout: 60_000 });
      writeFileSync(out, r.stdout);
      const where = `${b.file}:${c.line}`;
      if (r.status !== c.exit)
        problems.push(`${where}: exit ${r.status} (expected ${c.exit}); stderr: ${r.stderr.slice(0, 500)}`);
      if (c.expected.length > 0) {
        const got = r.stdout.replace(/\n$/, "").split("\n");
        if (got.length !== c.expected.length || !c.expected.every((p, k) => matches(got[k]!, p)))
          problems.push(`${where}: printed\n${got.join("\n")}\nexpected\n${c.expected.join("\n")}`);
      }
    }
    expect(problems).toEqual([]);
  });
}

// ---- ts ----

/** The block with every `expr; //=> value` turned into a deepStrictEqual check. */
function withChecks(file: string, code: string, firstLine: number): string {
  const source = ts.createSourceFile("block.ts", code, ts.ScriptTarget.ES2022, true);
  const edits: { start: number; end: number; text: string }[] = [];
  for (const st of source.statements) {
    if (!ts.isExpressionStatement(st)) continue;
    const rest = code.slice(st.end);
    const first = /^[ \t]*\n?[ \t]*\/\/=>(.*)/.exec(rest);
    if (first === null) continue;
    const commentLines = rest.slice(rest.indexOf("//=>")).split("\n");
    let expected = first[1]!;
    let used = 1;
    const complete = (t: string) => {
      try {
        new Function(`return (${t});`);
        return true;
      } catch {
        return false;
      }
    };
    while (!complete(expected) && used < commentLines.length && /^\s*\/\/(?!=>)/.test(commentLines[used]!))
      expected += `\n${commentLines[used++]!.replace(/^\s*\/\//, "")}`;
    if (!complete(expected))
      throw new Error(
        `${file}:${firstLine + source.getLineAndCharacterOfPosition(st.end).line}: the //=> value does not parse`,
      );
    const line = firstLine + source.getLineAndCharacterOfPosition(st.getStart()).line;
    edits.push({
      start: st.getStart(),
      end: st.end,
      text: `__check((${st.expression.getText()}), (${expected}), ${JSON.stringify(`${file}:${line}`)});`,
    });
  }
  let out = code;
  for (const e of edits.reverse()) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

const CHECK = `import { deepStrictEqual as __deepStrictEqual } from "node:assert";
function __check(actual: unknown, expected: unknown, where: string): void {
  try {
    __deepStrictEqual(JSON.parse(JSON.stringify(actual)), expected);
  } catch (e) {
    throw new Error(where + ": " + (e as Error).message);
  }
}
`;

function tsPrograms(): { file: string; line: number; blocks: Block[] }[] {
  const programs: { file: string; line: number; blocks: Block[] }[] = [];
  for (const b of runnable.filter((b) => b.lang === "ts")) {
    const last = programs[programs.length - 1];
    if (b.marker === "runnable: continued" && last !== undefined && last.file === b.file) last.blocks.push(b);
    else programs.push({ file: b.file, line: b.line, blocks: [b] });
  }
  return programs;
}

for (const p of tsPrograms()) {
  test(`${p.file}:${p.line}: the ts example${p.blocks.length > 1 ? `s (${p.blocks.map((b) => b.line).join(", ")})` : ""} type-check and run as written`, () => {
    const dir = workFolder();
    // Imports first (the checked copy adds its own); blocks joined in order.
    const source = p.blocks.map((b) => b.code).join("\n");
    const file = join(dir, "example.mts");
    writeFileSync(file, `${source}\nexport {};\n`);
    const program = ts.createProgram([file], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"],
      typeRoots: [join(repoRoot, "node_modules/@types")],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(diagnostics).toEqual([]);
    const checked = p.blocks.map((b) => withChecks(b.file, b.code, b.line + 1)).join("\n");
    const js = ts.transpileModule(`${CHECK}${checked}\nexport {};\n`, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(join(dir, "example.mjs"), js);
    const r = spawnSync(process.execPath, ["example.mjs"], { cwd: dir, encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(checked).toContain("__check("); // the block states at least one result, and it was checked
  });
}
