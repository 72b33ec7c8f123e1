/**
 * Reviewers are told in the browser that requests wait: the inbox tab's title carries the count and follows it
 * while the page is open, a request that arrives is highlighted, and a reviewer who opted in (per browser) gets a
 * desktop notification. A link to a request opened while signed out lands on that request after sign-in, and only
 * same-origin paths are followed. The profile page holds the email preference.
 */
import { expect, test, type Page } from "@playwright/test";
import { DEMO_PASSWORD } from "../lib/db/seed";
import { LENA, OPS_BOT, SASHA, expectAccessible, gatedCall, openFromInbox, personIn, ready, unique } from "./support";

/** Records every desktop notification the page shows (the real one is still created when the browser allows it). */
const RECORD_NOTIFICATIONS = () => {
  const shown: { title: string; body?: string; tag?: string }[] = [];
  (window as unknown as { __shown: typeof shown }).__shown = shown;
  const Real = window.Notification;
  function Recorded(this: unknown, title: string, opts?: NotificationOptions) {
    shown.push({ title, body: opts?.body, tag: opts?.tag });
    try {
      return new Real(title, opts);
    } catch {
      return {};
    }
  }
  Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
  (Recorded as unknown as { requestPermission: typeof Real.requestPermission }).requestPermission = (...a) => Real.requestPermission(...a);
  (window as unknown as { Notification: unknown }).Notification = Recorded;
};

const shown = (page: Page) => page.evaluate(() => (window as unknown as { __shown: { title: string; body?: string }[] }).__shown);
const waitingCount = async (page: Page) => Number(((await page.getByTestId("inbox-total").textContent()) ?? "").replace(/\D/g, ""));

async function signInHere(page: Page, email: string) {
  await ready(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

test("the inbox title counts what waits, a new request is highlighted and shown on the desktop after opting in", async ({ browser, request }, testInfo) => {
  const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL, permissions: ["notifications"] });
  await context.addInitScript(RECORD_NOTIFICATIONS);
  const page = await context.newPage();
  await page.goto("/login");
  await signInHere(page, SASHA.email);
  await expect(page).toHaveURL(/\/inbox$/);
  await ready(page);

  const before = await waitingCount(page);
  await expect(page).toHaveTitle(before > 0 ? `(${before}) Inbox · Countersign` : "Inbox · Countersign");

  // Opt in on this browser.
  await page.getByRole("button", { name: "Notify me on this desktop when a request arrives" }).click();
  await expect(page.getByTestId("desktop-notifications")).toContainText("Desktop notifications are on in this browser.");
  await expectAccessible(page, testInfo, "inbox-notifications-on");

  const service = `notify-${unique()}`;
  await gatedCall(request, OPS_BOT, "deploy_service", { service, environment: "production", version: "4.2.0" });

  // The open page follows: the count in the title, the new row highlighted, one desktop notification.
  await expect(page).toHaveTitle(`(${before + 1}) Inbox · Countersign`);
  const row = page.getByTestId("inbox-item").filter({ hasText: service });
  await expect(row).toHaveAttribute("data-new", "true");
  await expect(row).toContainText("New");
  await expect.poll(async () => (await shown(page)).filter((n) => n.body?.includes(service)).length).toBe(1);
  expect((await shown(page)).find((n) => n.body?.includes(service))?.title).toBe("Approval request waiting");
  // Rows that were there when the page opened are not highlighted.
  await expect(page.locator('[data-testid="inbox-item"][data-new="true"]')).toHaveCount(1);

  // The opt-in persists in this browser; after a reload the row is no longer new.
  await page.reload();
  await ready(page);
  await expect(page.getByTestId("desktop-notifications")).toContainText("Desktop notifications are on in this browser.");
  await expect(page.getByTestId("inbox-item").filter({ hasText: service })).not.toHaveAttribute("data-new", "true");
  await expect(page).toHaveTitle(`(${before + 1}) Inbox · Countersign`);

  // Turned off: a further arrival is still highlighted but not shown on the desktop.
  await page.getByRole("button", { name: "Turn off" }).click();
  const quiet = `quiet-${unique()}`;
  await gatedCall(request, OPS_BOT, "deploy_service", { service: quiet, environment: "production", version: "4.2.1" });
  await expect(page.getByTestId("inbox-item").filter({ hasText: quiet })).toHaveAttribute("data-new", "true");
  expect((await shown(page)).filter((n) => n.body?.includes(quiet))).toEqual([]);
  await context.close();
});

test("a link to a request opened while signed out lands on that request after sign-in", async ({ browser, request }, testInfo) => {
  const service = `deeplink-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "deploy_service", { service, environment: "production", version: "5.0.0" });
  const reviewer = await personIn(browser, testInfo, SASHA.email);
  const requestId = await openFromInbox(reviewer.page, service, taskId);
  await reviewer.context.close();

  const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL });
  const page = await context.newPage();
  await page.goto(`/requests/${requestId}`);
  await expect(page).toHaveURL(`/login?next=${encodeURIComponent(`/requests/${requestId}`)}`);
  await signInHere(page, SASHA.email);
  await expect(page).toHaveURL(new RegExp(`/requests/${requestId}$`));
  await expect(page.getByText(taskId)).toBeAttached(); // among the folded ids
  await context.close();
});

test("sign-in never follows a link to another site: an open redirect is refused and the inbox opens", async ({ browser }, testInfo) => {
  for (const next of ["https://evil.example/requests/1", "//evil.example/requests/1", "/\\evil.example"]) {
    const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL });
    const page = await context.newPage();
    await page.goto(`/login?next=${encodeURIComponent(next)}`);
    // The refused target is not even carried by the form.
    await expect(page.locator('input[name="next"]')).toHaveCount(0);
    await signInHere(page, LENA.email);
    await expect(page).toHaveURL(/\/inbox$/);
    expect(new URL(page.url()).host).toBe(new URL(testInfo.project.use.baseURL!).host);
    await context.close();
  }
});

test("a reviewer turns notification emails off and on from their profile page", async ({ browser }, testInfo) => {
  const { context, page } = await personIn(browser, testInfo, LENA.email);
  await page.getByRole("link", { name: "Profile" }).click();
  await expect(page).toHaveURL(/\/profile$/);
  await ready(page);
  await expect(page.getByRole("heading", { name: "Your profile" })).toBeVisible();
  await expect(page.getByLabel("Email me", { exact: true })).toBeChecked();
  await expectAccessible(page, testInfo, "profile");

  await page.getByLabel("Do not email me").check();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status")).toHaveText("Notification emails are off.");
  await page.reload();
  await ready(page);
  await expect(page.getByLabel("Do not email me")).toBeChecked();

  await page.getByLabel("Email me", { exact: true }).check();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status")).toHaveText("Notification emails are on.");
  await page.reload();
  await expect(page.getByLabel("Email me", { exact: true })).toBeChecked();
  await context.close();
});
