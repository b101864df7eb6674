import { afterEach, beforeEach, vi } from "vitest";

// A test that writes to the console hides its output in CI noise; fail it instead.
const written: string[] = [];
beforeEach(() => {
  written.length = 0;
  for (const m of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      written.push(`console.${m}: ${args.map(String).join(" ")}`);
    });
  }
});
afterEach(() => {
  vi.restoreAllMocks();
  if (written.length > 0) throw new Error(`test wrote to the console:\n${written.join("\n")}`);
});
