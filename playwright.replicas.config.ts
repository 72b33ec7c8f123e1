import { defineConfig } from "@playwright/test";
import { chromiumProject } from "./e2e/chromium-project";

/**
 * The multi-replica tests (e2e-replicas/): three Countersign servers from the production build on one fresh
 * PostgreSQL database (TEST_DATABASE_URL names the server), started and stopped by the global setup. Build first
 * (`npx next build`); scripts/test.sh runs this after the end-to-end phase when TEST_DATABASE_URL is set.
 */
export default defineConfig({
  testDir: "e2e-replicas",
  outputDir: "test-results-replicas/artifacts",
  globalSetup: "./e2e-replicas/global-setup.ts",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // Bounds, not waits: every step waits for the state it needs.
  timeout: 240_000,
  expect: { timeout: 20_000 },
  reporter: process.env.CI ? "line" : "list",
  use: { trace: "retain-on-failure", screenshot: "only-on-failure" },
  projects: [chromiumProject],
});
