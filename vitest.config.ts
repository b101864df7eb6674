import { defineConfig } from "vitest/config";

// The hostile-load tests (test/http/hostile*.test.ts) assert what an honest client sees while a
// hostile request runs: a read's p99 latency within 100 ms. That is a claim about this server, not
// about a machine whose two cores are busy with other test files, so they run as a group of their
// own after everything else, one file at a time.
const HOSTILE = "test/http/hostile*.test.ts";

export default defineConfig({
  test: {
    setupFiles: ["test/setup/failOnConsole.ts", "test/setup/checkAnswers.ts"],
    env: { TZ: "UTC" },
    testTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "main",
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: [HOSTILE],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "hostile", include: [HOSTILE], fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
