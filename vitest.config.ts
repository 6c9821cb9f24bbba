import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    reporters: ["default", "./test/support/SummaryReporter.ts"],
    // One migrated PGlite per run, which each file's PGlite starts from.
    globalSetup: ["test/support/pgliteTemplate.ts"],
    // Files share a worker's module cache: importing Effect and the service once per worker
    // instead of once per file makes the suite about four times faster. Files keep no
    // global state between them (each builds its own server and storage).
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
