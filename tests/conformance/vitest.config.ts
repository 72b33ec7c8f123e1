import path from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Black-box conformance scenarios (tests/conformance/*.conformance.ts): raw JSON-RPC over HTTP to a running
 * Countersign at COUNTERSIGN_BASE_URL, with DATABASE_URL pointing at that server's database for the reviewer's side. Run by
 * scripts/conformance.sh, not by the unit run (the file names do not end in .test.ts).
 */
export default defineConfig({
  root: path.resolve(import.meta.dirname, "..", ".."),
  resolve: { alias: { "@": path.resolve(import.meta.dirname, "..", "..") } },
  test: {
    include: ["tests/conformance/**/*.conformance.ts"],
    fileParallelism: false,
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
