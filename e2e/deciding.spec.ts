/**
 * Deciding well on the request page, in Chromium: on a phone (375 x 740) the decision is on screen without
 * scrolling and the deciding facts come before the folded digests and ids; the first of two approvers is told one
 * more approval is needed and types nothing; the final approver is told what approving does, on the button too, and
 * types the amount, with focus moved to the error when it is missing; a reviewer whose colleague decided while they
 * were typing keeps their draft and is told who decided and when. Axe stays at zero serious violations throughout.
 */
import { expect, test, type Browser, type TestInfo } from "@playwright/test";
import {
  OPS_BOT,
  SASHA,
  TARA,
  THEO,
  expectAccessible,
  gatedCall,
  openFromInbox,
  personIn,
  ready,
  screenshot,
  signIn,
  unique,
  user,
} from "./support";

const SID = user("sid.sre@countersign.test");
/** The figure may or may not carry thousands separators: the words around it are what is asserted. */
const USD_30000 = "USD 30,?000\\.00";

/** A reviewer on a phone: 375 x 740, touch. */
async function onPhone(browser: Browser, testInfo: TestInfo, email: string) {
  const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL, viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  await signIn(page, email);
  return { context, page };
}

test("a two-approver transfer: the first approver on a phone, the final one told what the click does and typing the amount", async ({ browser, request }, testInfo) => {
  const account = `acct-decide-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 30_000 });

  // Tara, on a phone.
  const tara = await onPhone(browser, testInfo, TARA.email);
  await tara.page.goto(`/inbox?q=${account}`);
  await expect(tara.page.getByTestId("inbox-item").filter({ hasText: account }).getByTestId("inbox-facts")).toHaveText(`30 days to ${account}: nothing`);
  const requestId = await openFromInbox(tara.page, account, taskId);
  const page = tara.page;

  // The decision is reachable without scrolling: the bar at the bottom of the screen holds Approve and Deny.
  expect(await page.evaluate(() => window.scrollY)).toBe(0);
  const approve = page.getByRole("button", { name: "Approve", exact: true });
  await expect(approve).toBeInViewport();
  await expect(page.getByRole("button", { name: "Deny" })).toBeInViewport();
  // The deciding facts come before the digests and ids, which are folded.
  const facts = page.getByTestId("facts");
  await expect(facts).toContainText(`Sent to ${account} in the last 30 days`);
  const digests = page.getByTestId("digest-details");
  expect(await digests.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
  await expect(page.getByTestId("arguments-digest")).toBeHidden();
  expect((await facts.boundingBox())!.y).toBeLessThan((await digests.boundingBox())!.y);
  expect((await facts.boundingBox())!.y).toBeLessThan((await page.getByTestId("record-details").boundingBox())!.y);
  await digests.locator("summary").click();
  await expect(page.getByTestId("arguments-digest")).toHaveText(/^sha256:[0-9a-f]{64}$/);

  // The first of two: told one more is needed, and asked to type nothing.
  await expect(page.getByTestId("consequence")).toHaveText("One more approval is needed after yours; nothing runs until then.");
  await expect(page.getByLabel(/High-risk request/)).toHaveCount(0);
  await screenshot(page, testInfo, "request-375px");
  await expectAccessible(page, testInfo, "request-375px");
  await approve.click();
  await expect(page.getByTestId("decision-result")).toHaveText(/Your approval is recorded — waiting for another approver/);

  // Theo, the final approver.
  const theo = await personIn(browser, testInfo, THEO.email);
  await theo.page.goto(`/requests/${requestId}`);
  await ready(theo.page);
  await expect(theo.page.getByTestId("consequence")).toHaveText(new RegExp(`^You are the final approver: approving sends ${USD_30000} to ${account} now\\.$`));
  const send = theo.page.getByRole("button", { name: new RegExp(`^Approve and send ${USD_30000}$`) });
  await expect(send).toBeVisible();
  await expectAccessible(theo.page, testInfo, "request-final-approver");

  // Without the amount: refused, and focus lands on the error.
  await send.click();
  const error = theo.page.getByTestId("confirm-error");
  await expect(error).toHaveText(/your approval runs it: type the amount \(30000\.00\) exactly/);
  await expect(error).toBeFocused();
  await expectAccessible(theo.page, testInfo, "request-confirm-error");
  await theo.page.getByLabel("High-risk request: type the amount to approve").fill("30000");
  await send.click();
  await expect(theo.page.getByTestId("decision-result")).toHaveText(/Approved — the transfer was sent/);
  await expect(theo.page.getByTestId("request-outcome")).toContainText("Approved — the transfer was sent");
  await tara.context.close();
  await theo.context.close();
});

test("someone else decided while you were typing: your draft stays, and the page says who decided and when", async ({ browser, request }, testInfo) => {
  const service = `race-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "deploy_service", { service, environment: "production", version: "3.1.0" });
  const sasha = await personIn(browser, testInfo, SASHA.email);
  const requestId = await openFromInbox(sasha.page, service, taskId);
  // A single approver: Sasha's approval is the final one, and the button says so.
  await expect(sasha.page.getByTestId("consequence")).toHaveText(`You are the final approver: approving deploys ${service} 3.1.0 to production now.`);
  await expect(sasha.page.getByRole("button", { name: "Approve and deploy to production" })).toBeVisible();
  const draft = "Checked the change log; the migration is reversible.";
  await sasha.page.getByLabel("Comment").fill(draft);

  // Sid, in his own browser, denies it meanwhile.
  const sid = await personIn(browser, testInfo, SID.email);
  await sid.page.goto(`/requests/${requestId}`);
  await ready(sid.page);
  await sid.page.getByLabel("Comment").fill("Not during the freeze.");
  await sid.page.getByRole("button", { name: "Deny" }).click();
  await expect(sid.page.getByTestId("decision-result")).toHaveText(/Denied — the tool did not run/);

  // Sasha's page catches up by itself: who decided and when, and her words kept.
  await expect(sasha.page.getByTestId("cannot-act")).toContainText("Sid SRE denied this request.", { timeout: 30_000 });
  await expect(sasha.page.getByTestId("decided-at")).toHaveText(/^Decided \d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d UTC\.$/);
  await expect(sasha.page.getByLabel("Your comment was not sent; it is kept here to copy")).toHaveValue(draft);
  await expect(sasha.page.getByRole("button", { name: /^Approve/ })).toHaveCount(0);
  await screenshot(sasha.page, testInfo, "request-decided-meanwhile");
  await expectAccessible(sasha.page, testInfo, "request-decided-meanwhile");
  await sasha.context.close();
  await sid.context.close();
});

test("times read in the reviewer's own time zone, with how long ago; the page's text follows its own direction", async ({ browser, request }, testInfo) => {
  const account = `acct-tz-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 30_000 });
  // A reviewer in Tokyo: the server renders UTC, the browser switches to its own zone once it takes over.
  const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL, timezoneId: "Asia/Tokyo" });
  const page = await context.newPage();
  await signIn(page, TARA.email);
  await openFromInbox(page, account, taskId);
  const asked = page.locator("header time[data-local]");
  await expect(asked).toHaveText(/^\d{1,2} \w{3} \d{4}, \d\d:\d\d GMT\+9 \((just now|\d+ min ago)\)$/);
  expect(await asked.getAttribute("datetime")).toMatch(/Z$/);
  await expect(page.getByTestId("request-summary")).toHaveAttribute("dir", "auto");
  await context.close();
});
