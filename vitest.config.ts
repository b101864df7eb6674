import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    setupFiles: ["test/setup/failOnConsole.ts"],
    env: { TZ: "UTC" },
    testTimeout: 60_000,
  },
});
