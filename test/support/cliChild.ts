// The built `rsop` CLI in a child process, for the tests that kill a server with SIGKILL (crash,
// migration restart, webhook restart, PostgreSQL soak): the CLI bundled once per test into
// node_modules (removed after), and `rsop serve` started with RSOP_TOKEN, resolving once it listens.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "tsup";
import { onTestFinished } from "vitest";
import { TOKEN } from "../http/fixtures.js";

const ROOT = resolve(__dirname, "../..");

/** Bundles the CLI from the sources (removed after the test); answers the file to run with node. */
export async function buildCli(name: string): Promise<string> {
  const outDir = mkdtempSync(join(ROOT, "node_modules", `.rsop-${name}-`));
  onTestFinished(() => rmSync(outDir, { recursive: true, force: true }));
  await build({
    entry: { cli: join(ROOT, "src/adapters/cli/bin.ts") },
    outDir,
    format: ["esm"],
    platform: "node",
    target: "node20",
    config: false,
    silent: true,
    outExtension: () => ({ js: ".mjs" }),
  });
  return join(outDir, "cli.mjs");
}

/** A running `rsop serve` child: the process, its url, and what it has logged so far. */
export interface ServeChild {
  readonly child: ChildProcess;
  readonly url: string;
  readonly log: () => string;
}

/**
 * Starts `node cli serve ...args` (add `--port 0`) with RSOP_TOKEN and `env`, killed with SIGKILL after
 * the test if still running; resolves once its log says where it listens.
 * @throws when it exits first or does not listen within `timeoutMs`.
 */
export function serveChild(
  cli: string,
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<ServeChild> {
  const child = spawn(process.execPath, [cli, "serve", ...args], {
    env: { ...process.env, RSOP_TOKEN: TOKEN, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let text = "";
  return new Promise((resolveUrl, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve did not start in ${timeoutMs / 1000} s: ${text}`)),
      timeoutMs,
    );
    child.stderr!.on("data", (b: Buffer) => {
      text += b.toString("utf8");
      // "… on http://127.0.0.1:P", followed by " (root organization …)" for a service database.
      const m = / on (http:\/\/127\.0\.0\.1:\d+)[\s(]/.exec(text);
      if (m !== null) {
        clearTimeout(timer);
        resolveUrl({ child, url: m[1]!, log: () => text });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening: ${text}`));
    });
  });
}
