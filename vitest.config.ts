import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts", "src/**/*.test.ts"],
    globalSetup: ["tests/helpers/global-setup.ts"],
    // Real PostgreSQL, real SSH and real processes: generous, never a benchmark.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
    pool: "forks",
    // The last line names every skipped suite (and fails CI if any).
    reporters: ["default", "./tests/helpers/skipped-reporter.ts"],
  },
});
