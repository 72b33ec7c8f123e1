/**
 * Sign-in throttling in the browser: after repeated wrong passwords the form says how long to wait; a client
 * address that sprays guesses over many accounts is refused even the right password; others still sign in; the
 * lockouts are in the audit trail. Each run uses its own accounts and its own client address (as a reverse proxy
 * forwards it), so its failures count against no other test and no later run.
 */
import { expect, test, type Page } from "@playwright/test";
import { DEMO_PASSWORD } from "../lib/db/seed";
import { ADMIN, LENA, personIn, ready, unique } from "./support";

const WRONG = "That email and password do not match an active account.";
const WAIT = "Too many sign-in attempts; try again in 1 minute.";

/** One attempt through the form on a fresh page: returns the message the form shows. */
async function attempt(page: Page, email: string, password: string, expected: string): Promise<void> {
  await page.goto("/login");
  await ready(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator("form").getByRole("alert")).toHaveText(expected);
}

test.describe("sign-in throttling", () => {
  test("five wrong passwords lock the account; guesses spread over many accounts lock the address, even for the right password; others still sign in", async ({ browser }, testInfo) => {
    test.setTimeout(240_000); // some twenty sign-in attempts through the form
    const run = unique();
    const address = `2001:db8::${run.slice(-4)}:${Math.floor(Math.random() * 0xffff).toString(16)}`;
    const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL, extraHTTPHeaders: { "x-forwarded-for": address } });
    const page = await context.newPage();

    // One account: four wrong passwords are only wrong; the fifth locks it.
    const account = `locked-${run}@countersign.test`;
    for (let i = 1; i <= 4; i++) await attempt(page, account, `wrong-${i}`, WRONG);
    await attempt(page, account, "wrong-5", WAIT);
    await attempt(page, account, "wrong-6", WAIT);

    // The same address guessing at other accounts: at twenty failures the address is locked, for every account.
    for (let i = 6; i < 20; i++) await attempt(page, `spray-${i}-${run}@countersign.test`, DEMO_PASSWORD, WRONG);
    await attempt(page, `spray-20-${run}@countersign.test`, DEMO_PASSWORD, WAIT);
    await attempt(page, LENA.email, DEMO_PASSWORD, WAIT);
    await expect(page).toHaveURL(/\/login$/);
    await context.close();

    // Lena, from her own address, signs in normally.
    const lena = await personIn(browser, testInfo, LENA.email);
    await lena.context.close();

    const admin = await personIn(browser, testInfo, ADMIN.email);
    await admin.page.goto("/admin/audit?type=auth.throttled");
    const rows = admin.page.getByTestId("audit-row");
    await expect(rows.filter({ hasText: account }).first()).toBeVisible();
    await expect(rows.filter({ hasText: address }).first()).toBeVisible();
    await admin.context.close();
  });
});
