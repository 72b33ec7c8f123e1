/**
 * Single sign-on end to end: a real OpenID Connect provider (oidc-provider, ./idp.ts) whose accounts' claims this
 * spec sets, a Countersign configured with it and with password sign-in off (./global-setup.ts), and Chromium
 * walking the authorization-code flow through the provider's own login and consent pages. Groups and role come from
 * the claims at every sign-in: a reviewer approves while the provider puts her in the mapped group, and after the
 * provider moves her out of it and she signs in again, the request she could decide is no longer hers.
 */
import { expect, test, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { DEMO_PASSWORD } from "../lib/db/seed";
import { DISPOSITION_KEY, LENA, SUPPORT_BOT, gatedCall, getTask, openFromInbox, ready, taskReaching } from "../e2e/support";
import { IDP_ISSUER, IDP_NAME, startIdp, type TestIdp } from "./idp";

let idp: TestIdp;

test.beforeAll(async ({}, testInfo) => {
  idp = await startIdp(String(testInfo.project.use.baseURL));
});
test.afterAll(async () => {
  await idp?.close();
});

/**
 * From Countersign's sign-in page through the provider's login (as `login`) and consent pages, whichever of them the
 * provider shows, back to Countersign: where it lands (/inbox when signed in, /login?error=... when refused).
 */
async function signInThroughProvider(page: Page, login: string): Promise<URL> {
  await page.goto("/login");
  await ready(page);
  await page.getByRole("button", { name: `Sign in with ${IDP_NAME}` }).click();
  // Back at Countersign: signed in (the inbox), or refused (the sign-in page with ?error=), never the page we started on.
  const back = (u: URL) => u.origin !== IDP_ISSUER && (u.pathname === "/inbox" || (u.pathname === "/login" && u.searchParams.has("error")));
  for (let step = 0; step < 4; step++) {
    await page.waitForURL((u) => back(u) || (u.origin === IDP_ISSUER && u.pathname.startsWith("/interaction/")));
    const at = page.url();
    if (back(new URL(at))) break;
    const loginField = page.locator('input[name="login"]');
    if (await loginField.isVisible()) {
      await loginField.fill(login);
      await page.locator('input[name="password"]').fill("any password: the test provider takes any");
      await page.getByRole("button", { name: "Sign-in" }).click();
    } else {
      await page.getByRole("button", { name: "Continue" }).click();
    }
    await page.waitForURL((u) => u.href !== at);
  }
  const landed = new URL(page.url());
  expect(back(landed), `landed on ${landed.href}`).toBe(true);
  await ready(page);
  return landed;
}

async function personViaProvider(browser: Browser, baseURL: string, login: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  const landed = await signInThroughProvider(page, login);
  expect(landed.pathname).toBe("/inbox");
  return { context, page };
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
}

test("with password sign-in off the form is gone and Auth.js's own credentials endpoint refuses", async ({ page, request }) => {
  await page.goto("/login");
  await ready(page);
  await expect(page.getByRole("button", { name: `Sign in with ${IDP_NAME}` })).toBeVisible();
  await expect(page.getByLabel("Password")).toHaveCount(0);
  await expect(page.getByLabel("Email")).toHaveCount(0);

  const { csrfToken } = await (await request.get("/api/auth/csrf")).json();
  const res = await request.post("/api/auth/callback/credentials", {
    form: { email: LENA.email, password: DEMO_PASSWORD, csrfToken },
    maxRedirects: 0,
  });
  expect(res.status()).toBe(302);
  expect(res.headers().location).toContain("error=CredentialsSignin");
  expect(await (await request.get("/api/auth/session")).json()).toBeNull();
});

test("groups come from the provider's claims at every sign-in: approve while in the group, refused after leaving it", async ({ browser, request }, testInfo) => {
  const baseURL = String(testInfo.project.use.baseURL);
  idp.claims.set("ivy", { email: "ivy.idp@countersign.test", email_verified: true, name: "Ivy Provider", groups: ["idp-support-leads", "not-mapped"] });
  idp.claims.set("ada", { email: "ada.idp@countersign.test", email_verified: true, name: "Ada Provider", groups: ["idp-countersign-admins"] });

  // Two refunds above the limit: each needs a support lead.
  const first = await gatedCall(request, SUPPORT_BOT, "issue_refund", { order_id: "O-2289" });
  const second = await gatedCall(request, SUPPORT_BOT, "issue_refund", { order_id: "O-1145" });

  // (1) First sign-in creates Ivy, a reviewer in support-leads (from idp-support-leads); she approves the first refund.
  const ivy = await personViaProvider(browser, baseURL, "ivy");
  await expect(ivy.page.getByTestId("signed-in-user")).toContainText("Ivy Provider");
  await expect(ivy.page.getByTestId("inbox-item").filter({ hasText: "O-1145" })).toHaveCount(1);
  const secondRequestId = await openFromInbox(ivy.page, "O-1145", second);
  await expect(ivy.page.getByRole("button", { name: "Approve" })).toBeVisible();
  await openFromInbox(ivy.page, "O-2289", first);
  await ivy.page.getByRole("button", { name: "Approve" }).click();
  // The answer says where the call stood when the decision was recorded (it may still be running on a busy
  // machine); the task is what says it ran.
  await expect(ivy.page.getByTestId("decision-result")).toHaveText(/Approved — (the refund was issued|running the tool)/);
  const done = await taskReaching(request, SUPPORT_BOT, first);
  expect(done.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
  await ivy.page.screenshot({ path: testInfo.outputPath("approved-via-sso.png"), fullPage: true });

  // (2) An admin through the same provider (idp-countersign-admins -> admin) sees where each user's groups come from.
  const ada = await personViaProvider(browser, baseURL, "ada");
  await ada.page.goto("/admin/people");
  await ready(ada.page);
  const ivyRow = ada.page.getByTestId("user-ivy.idp@countersign.test");
  await expect(ivyRow.getByTestId("groups-source")).toHaveText(`groups from ${IDP_NAME}`);
  await expect(ivyRow.getByLabel("Approver groups")).toHaveValue("support-leads");
  await expect(ada.page.getByTestId(`user-${LENA.email}`).getByTestId("groups-source")).toHaveText("groups from local");
  await expect(ada.page.getByTestId("user-ada.idp@countersign.test").getByLabel("Role")).toHaveValue("admin");

  // (3) The provider moves Ivy from support leads to treasury. She signs out and in again: the second refund is no
  // longer hers to decide, not in her inbox and not to be opened.
  idp.claims.set("ivy", { email: "ivy.idp@countersign.test", email_verified: true, name: "Ivy Provider", groups: ["idp-treasury"] });
  await signOut(ivy.page);
  expect((await signInThroughProvider(ivy.page, "ivy")).pathname).toBe("/inbox");
  await expect(ivy.page.getByTestId("signed-in-user")).toContainText("Ivy Provider");
  await expect(ivy.page.getByRole("heading", { name: /Waiting for you/ })).toBeVisible();
  await expect(ivy.page.getByTestId("inbox-item").filter({ hasText: "O-1145" })).toHaveCount(0);
  const opened = await ivy.page.goto(`/requests/${secondRequestId}`);
  expect(opened?.status()).toBe(404);
  await expect(ivy.page.getByRole("button", { name: "Approve" })).toHaveCount(0);
  expect((await getTask(request, SUPPORT_BOT, second)).status).toBe("working");
  await ada.page.reload();
  await ready(ada.page);
  await expect(ivyRow.getByLabel("Approver groups")).toHaveValue("treasury");

  // (4) With no mapped group left at the provider, her next sign-in is refused.
  idp.claims.set("ivy", { email: "ivy.idp@countersign.test", email_verified: true, name: "Ivy Provider", groups: [] });
  await signOut(ivy.page);
  expect((await signInThroughProvider(ivy.page, "ivy")).pathname).toBe("/login");
  await expect(ivy.page.getByTestId("sso-error")).toContainText("Single sign-on was refused");
  await ivy.context.close();
  await ada.context.close();
});

test("an account at the provider naming a local user's email is refused, not linked", async ({ browser }, testInfo) => {
  idp.claims.set("mallory", { email: LENA.email, email_verified: true, name: "Not Lena", groups: ["idp-support-leads"] });
  const context = await browser.newContext({ baseURL: String(testInfo.project.use.baseURL) });
  const page = await context.newPage();
  expect((await signInThroughProvider(page, "mallory")).pathname).toBe("/login");
  await expect(page.getByTestId("sso-error")).toContainText("Single sign-on was refused");
  await context.close();
});
