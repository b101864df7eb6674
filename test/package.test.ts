// The published package works as a package: the build's ESM and CJS entries load, expose the same
// API, answer a decision, and the `rsop` binary runs (STYLE §6, after date-fns' smoke test).
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, expect, test } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const building = JSON.parse(readFileSync(`${root}examples/building.json`, "utf8"));
const scan = { deviceId: "door-ward-3", at: "2026-04-15T09:15:00-05:00", credential: { credentialNumber: 10234, facilityCode: 17 } };

beforeAll(() => {
  execFileSync("npm", ["run", "-s", "build"], { cwd: root, stdio: "pipe" });
}, 120_000);

test("ESM and CJS entries load with the same exports and decide alike", async () => {
  const esm = await import(`${root}dist/index.js`);
  const cjs = createRequire(import.meta.url)(`${root}dist/index.cjs`);
  expect(Object.keys(esm).sort()).toEqual(Object.keys(cjs).sort());
  expect(Object.keys(esm)).toEqual(expect.arrayContaining(["loadEngine", "createHttpHandler", "migratePanel", "encodeWiegand"]));
  for (const lib of [esm, cjs]) expect(lib.loadEngineOrThrow(building).decide(scan)).toMatchObject({ outcome: "allowed", reason: "allowed" });
});

test("type declarations are emitted for both entries", () => {
  for (const f of ["index.d.ts", "index.d.cts"]) expect(readFileSync(`${root}dist/${f}`, "utf8")).toContain("declare class Engine");
});

test("the rsop binary runs", () => {
  const out = execFileSync(process.execPath, [`${root}dist/cli.js`, "card", "encode", "--format", "H10301", "--facility-code", "1", "--card-number", "1"], { encoding: "utf8" });
  expect(out).toBe("10000000100000000000000010\n");
});
