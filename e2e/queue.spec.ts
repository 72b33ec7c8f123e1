/**
 * Deciding a queue in a real browser: keyboard shortcuts on the inbox and a request (never while typing), "Next
 * request" after a decision, approving several single-approver requests at once after a summary (each approved on
 * its own), and the Awaiting others view, where a reviewer withdraws an approval before the quorum completes.
 */
import { expect, test, type Page } from "@playwright/test";
import { DISPOSITION_KEY, OPS_BOT, SASHA, TARA, expectAccessible, gatedCall, personIn, ready, taskReaching, unique } from "./support";

const deploy = (service: string) => ({ service, environment: "production", version: "3.2.1" });

async function inboxFor(page: Page, search: string, count: number) {
  await page.goto(`/inbox?q=${encodeURIComponent(search)}`);
  await ready(page);
  const items = page.getByTestId("inbox-item").filter({ hasText: search });
  await expect(items).toHaveCount(count);
  return items;
}

test("keyboard shortcuts: j/k move through the inbox, ? lists them, d moves to the reason, a approves, never while typing; then Next request", async ({ browser, request }, testInfo) => {
  const run = `q-kb-${unique()}`;
  for (const s of ["a", "b", "c"]) await gatedCall(request, OPS_BOT, "deploy_service", deploy(`${run}-${s}`));
  const { context, page } = await personIn(browser, testInfo, SASHA.email);
  const items = await inboxFor(page, run, 3);

  // Typing in the search field is typing, not a shortcut.
  await page.getByLabel("Search").focus();
  await page.keyboard.press("End");
  await page.keyboard.type("jk");
  await expect(page.getByLabel("Search")).toHaveValue(`${run}jk`);
  await expect(page.getByLabel("Search")).toBeFocused();
  await page.getByLabel("Search").fill(run);
  await page.getByLabel("Search").blur();

  await page.keyboard.press("j");
  await expect(items.nth(0)).toBeFocused();
  await page.keyboard.press("j");
  await expect(items.nth(1)).toBeFocused();
  await page.keyboard.press("n");
  await expect(items.nth(2)).toBeFocused();
  await page.keyboard.press("k");
  await expect(items.nth(1)).toBeFocused();
  await page.keyboard.press("p");
  await expect(items.nth(0)).toBeFocused();

  await page.keyboard.press("?");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await expect(help).toBeVisible();
  await expect(help).toContainText("Next request");
  await expectAccessible(page, testInfo, "inbox-shortcuts-help");
  await page.keyboard.press("Escape");
  await expect(help).toBeHidden();
  await expectAccessible(page, testInfo, "inbox-queue");

  // Enter opens the selected request; on it, d moves to the reason (and typing there is not a shortcut).
  await items.nth(0).focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
  const first = page.url();
  await ready(page);
  await page.keyboard.press("?");
  await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toContainText("Approve");
  await page.keyboard.press("Escape");
  await page.keyboard.press("d");
  await expect(page.getByLabel("Comment")).toBeFocused();
  await page.keyboard.type("a j k");
  await expect(page.getByLabel("Comment")).toHaveValue("a j k");
  expect(page.url()).toBe(first);
  await expect(page.getByTestId("decision-result")).toHaveCount(0);
  await page.getByLabel("Comment").fill("Rollout window is open.");
  await page.getByLabel("Comment").blur();
  await expectAccessible(page, testInfo, "request-with-shortcuts");

  // a approves, as pressing Approve does; then "Next request" goes on to another request to decide.
  await page.keyboard.press("a");
  await expect(page.getByTestId("decision-result")).toHaveText(/Approved — the deployment ran/);
  await page.getByTestId("next-request").click();
  await expect(page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
  expect(page.url()).not.toBe(first);
  const second = page.url();
  await ready(page);
  await expect(page.getByRole("button", { name: "Approve" })).toBeVisible();
  // j steps to the next one from here, without deciding this one.
  await page.keyboard.press("j");
  await expect(page).not.toHaveURL(second);
  await expect(page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
  await context.close();
});

test("bulk approval: single-approver requests are approved together after a summary, each on its own, with the result per request", async ({ browser, request }, testInfo) => {
  const run = `q-bulk-${unique()}`;
  const tasks = [await gatedCall(request, OPS_BOT, "deploy_service", deploy(`${run}-a`)), await gatedCall(request, OPS_BOT, "deploy_service", deploy(`${run}-b`))];
  const { context, page } = await personIn(browser, testInfo, SASHA.email);
  await inboxFor(page, run, 2);
  const boxes = page.getByRole("checkbox", { name: new RegExp(`Select to approve together: Deploy ${run}`) });
  await expect(boxes).toHaveCount(2);
  await boxes.nth(0).check();
  await boxes.nth(1).check();
  await page.getByRole("button", { name: "Approve 2 selected…" }).click();

  const summary = page.getByRole("dialog", { name: "Approve these 2 requests?" });
  await expect(summary).toBeVisible();
  await expect(summary).toContainText(`Deploy ${run}-a 3.2.1 to production`);
  await expect(summary).toContainText(`Deploy ${run}-b 3.2.1 to production`);
  await expect(summary).toContainText("Each one is approved on its own");
  await expectAccessible(page, testInfo, "bulk-summary");
  await summary.getByRole("button", { name: "Approve 2 requests" }).click();

  const results = page.getByTestId("bulk-results");
  await expect(results).toContainText("Approved 2 of 2.");
  await expect(results.getByTestId("bulk-result").filter({ hasText: `${run}-a` })).toContainText("Approved — the deployment ran");
  await expect(results.getByTestId("bulk-result").filter({ hasText: `${run}-b` })).toContainText("Approved — the deployment ran");
  await expect(page.getByTestId("inbox-item").filter({ hasText: run })).toHaveCount(0);
  await expectAccessible(page, testInfo, "bulk-results");
  for (const taskId of tasks) expect((await taskReaching(request, OPS_BOT, taskId)).result._meta[DISPOSITION_KEY]).toBe("approved-executed");
  await context.close();
});

test("Awaiting others: a two-approver wire approved by Tara is listed there, and she withdraws her approval before the quorum completes", async ({ browser, request }, testInfo) => {
  const account = `acct-q-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 30_000 });
  const { context, page } = await personIn(browser, testInfo, TARA.email);
  const [item] = [(await inboxFor(page, account, 1)).first()];
  // Money as people read it; a two-approver request is never offered for bulk approval.
  await expect(item).toContainText(`USD 30,000.00 wire transfer to ${account}`);
  await expect(page.getByRole("checkbox", { name: new RegExp(account) })).toHaveCount(0);

  await item.click();
  await expect(page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
  await ready(page);
  await expect(page.getByTestId("request-summary")).toHaveText(`USD 30,000.00 wire transfer to ${account}`);
  // The first of two approvals: nothing to type (only the approval that completes the quorum asks).
  await expect(page.getByLabel(/High-risk request: type/)).toHaveCount(0);
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(page.getByTestId("decision-result")).toContainText("waiting for another approver");
  await expect(page.getByTestId("next-request")).toBeVisible();

  await page.goto("/inbox");
  await ready(page);
  await page.getByRole("navigation", { name: "Inbox views" }).getByRole("link", { name: "Awaiting others" }).click();
  await expect(page).toHaveURL(/\/inbox\?view=awaiting$/);
  await ready(page);
  const mine = page.getByTestId("awaiting-item").filter({ hasText: account });
  await expect(mine).toContainText("1 of 2 approvals");
  await expectAccessible(page, testInfo, "awaiting-others");
  await mine.getByRole("button", { name: "Withdraw my approval" }).click();
  await expect(mine.getByRole("status")).toHaveText("Your approval was withdrawn. The request is back in your inbox.");

  await page.reload();
  await ready(page);
  await expect(page.getByTestId("awaiting-item").filter({ hasText: account })).toHaveCount(0);
  const back = (await inboxFor(page, account, 1)).first();
  await expect(back).toContainText("0 / 2");
  await back.click();
  await expect(page.getByTestId("timeline")).toContainText("Tara Treasury withdrew their approval");
  expect((await taskReaching(request, OPS_BOT, taskId, ["working"])).status).toBe("working");
  await context.close();
});
