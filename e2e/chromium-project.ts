/** The one browser every Playwright suite here runs: Debian's Chromium (CHROMIUM_PATH, else /usr/bin/chromium). */
import { devices, type Project } from "@playwright/test";

export const chromiumProject: Project = {
  name: "chromium",
  use: {
    ...devices["Desktop Chrome"],
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    },
  },
};
