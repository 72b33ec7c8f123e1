import { defineConfig } from "@playwright/test";
import { chromiumProject } from "./e2e/chromium-project";

/**
 * End-to-end tests against a server that is already running (scripts/test.sh starts it; no `webServer`
 * here). BASE_URL picks the server, default http://localhost:3000.
 */
export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // Bounds, not waits: every step waits for the state it needs; a loaded machine may take long to reach it.
  timeout: 180_000,
  expect: { timeout: 20_000 },
  reporter: process.env.CI ? "line" : "list",
  use: {
    baseURL: process.env.BASE_URL ?? "http://localhost:3000",
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  projects: [chromiumProject],
});
