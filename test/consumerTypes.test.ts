// The shipped declarations compile in a consumer on TypeScript's strictest options: a real
// `npm pack` of this tree (shared with package.test.ts), a consumer project beside the installed
// package with `strict`, `exactOptionalPropertyTypes`, `noUncheckedIndexedAccess` and
// `skipLibCheck: false`, checked by this repo's own `tsc`. Every entry is imported from an ESM and a
// CJS file, so both `.d.ts` and `.d.cts` trees are checked in full.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { installedPackage, repoRoot } from "./support/installedPackage.js";

const CONSUMER = `
import { loadEngineOrThrow, parseSnapshot, type CustomField, type Decision, type Issue } from "rsop-engine";
import { createHttpHandler, type HttpHandler } from "rsop-engine/http";
import { holderReport, type ReportFilter } from "rsop-engine/reports";
import { verifySignature, type WebhookEvent } from "rsop-engine/webhooks";
import { CloudNode, ContactState, type CloudNodeOptions, type CloudNodeStatus } from "rsop-engine/node";

const engine = loadEngineOrThrow({});
export const decision: Decision = engine.decide({});
const parsed = parseSnapshot({});
export const issues: readonly Issue[] = parsed.ok ? [] : parsed.issues;
export const firstCode: string | undefined = issues[0]?.code;
export const handler: HttpHandler = createHttpHandler({ getEngine: () => engine });
export const report = holderReport;
export const verify = verifySignature;
export function describeField(f: CustomField): string {
  return f.description ?? f.displayName;
}
export type Consumed = [ReportFilter, WebhookEvent, CloudNodeOptions, CloudNodeStatus];
export const startNode = CloudNode.start;
export const contact = new ContactState({ now: () => 0 }).nodeStateAt(0);
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    module: "nodenext",
    moduleResolution: "nodenext",
    target: "es2022",
    skipLibCheck: false,
    noEmit: true,
    types: [],
  },
  files: ["esm.ts", "cjs.cts"],
};

test("the packed declarations type-check under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess", () => {
  const installed = installedPackage();
  // Inside the install folder, so `rsop-engine` and its runtime dependencies resolve from its node_modules.
  const dir = mkdtempSync(join(installed.app, "strict-consumer-"));
  try {
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "strict-consumer", private: true, type: "module" }),
    );
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG));
    writeFileSync(join(dir, "esm.ts"), CONSUMER);
    writeFileSync(join(dir, "cjs.cts"), CONSUMER);
    const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", dir, "--pretty", "false"], {
      cwd: dir,
      encoding: "utf8",
      timeout: 180_000,
    });
    expect(r.error).toBeUndefined();
    expect(r.stdout.split("\n").filter((l) => l !== "")).toEqual([]);
    expect(r.status).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 480_000); // a fresh `npm pack` (when no other test file has built it) plus one tsc run over zod's declarations
