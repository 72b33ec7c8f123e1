import { defineConfig } from "@playwright/test";
import { chromiumProject } from "./e2e/chromium-project";

/**
 * The single sign-on tests (e2e-sso/): a Countersign from the production build with one OpenID Connect provider
 * configured and password sign-in off, started and stopped by the global setup; the spec runs the provider itself
 * (oidc-provider). Build first (`npx next build`); scripts/test.sh runs this after the end-to-end phase.
 */
export default defineConfig({
  testDir: "e2e-sso",
  outputDir: "test-results-sso/artifacts",
  globalSetup: "./e2e-sso/global-setup.ts",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // Bounds, not waits: every step waits for the state it needs.
  timeout: 240_000,
  expect: { timeout: 20_000 },
  reporter: process.env.CI ? "line" : "list",
  use: {
    // localhost, not 127.0.0.1: Next.js presents a request to 127.0.0.1 as one to localhost, so the redirect URI
    // Auth.js sends the provider and the one its callback route computes agree only on localhost.
    baseURL: `http://localhost:${process.env.SSO_PORT ?? 3351}`,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  projects: [chromiumProject],
});
