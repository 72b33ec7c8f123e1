import { randomBytes } from "node:crypto";
import path from "node:path";
import { defineConfig } from "vitest/config";

// A data key per test run (workers and the processes tests spawn inherit it); never one from the repository.
process.env.COUNTERSIGN_DATA_KEYS ??= `t${Date.now().toString(36)}:${randomBytes(32).toString("base64")}`;

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["lib/**/*.test.ts", "tests/**/*.test.ts"],
    globalSetup: ["tests/support/global-setup.ts"],
    setupFiles: ["tests/support/setup.ts"],
    // One database for the run: test files take turns.
    fileParallelism: false,
    pool: "forks",
    testTimeout: 60_000,
    // Auth.js's Next.js package imports `next/server` without an extension, which only a bundler resolves.
    server: { deps: { inline: ["next-auth"] } },
    hookTimeout: 120_000,
  },
});
