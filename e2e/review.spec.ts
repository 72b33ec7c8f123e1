/**
 * Reviewing by keyboard alone, asking the requester a question (answered by the agent with tasks/update) and the
 * pages at phone width. Each test uses its own services and accounts.
 */
import { expect, test } from "@playwright/test";
import { DEMO_PASSWORD } from "../lib/db/seed";
import {
  DISPOSITION_KEY,
  OPS_BOT,
  SASHA,
  THEO,
  expectAccessible,
  gatedCall,
  getTask,
  mcp,
  openFromInbox,
  personIn,
  ready,
  screenshot,
  tabTo,
  taskReaching,
  unique,
} from "./support";

test("keyboard only: sign in, find the request, approve it", async ({ page, request }, testInfo) => {
  const service = `kb-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "deploy_service", { service, environment: "production", version: "2.7.1" });

  await page.goto("/login");
  await ready(page);
  await tabTo(page, page.getByLabel("Email"));
  await page.keyboard.type(SASHA.email);
  await page.keyboard.press("Tab");
  await expect(page.getByLabel("Password")).toBeFocused();
  await page.keyboard.type(DEMO_PASSWORD);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/inbox$/);
  await ready(page);

  // Search the inbox by keyboard: the filter form submits on Enter.
  await tabTo(page, page.getByLabel("Search"));
  await page.keyboard.type(service);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`q=${service}`));
  const link = page.getByTestId("inbox-item").filter({ hasText: service });
  // The filtered inbox has loaded (the item is there, and the page is interactive) before tabbing to it.
  await expect(link).toBeVisible();
  await ready(page);
  await tabTo(page, link);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
  await expect(page.getByText(taskId)).toBeAttached(); // among the folded ids
  await ready(page);

  await tabTo(page, page.getByLabel("Comment"));
  await page.keyboard.type("Change window is open; rollback plan attached.");
  await tabTo(page, page.getByRole("button", { name: "Approve" }));
  await screenshot(page, testInfo, "keyboard-focus-approve");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("decision-result")).toHaveText(/Approved — the deployment ran/);
  const done = await taskReaching(request, OPS_BOT, taskId);
  expect(done.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
});

test("ask the requester: the agent answers with tasks/update and the answer appears on the page by itself", async ({ browser, request }, testInfo) => {
  const account = `acct-ask-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 27_500 });
  const theo = await personIn(browser, testInfo, THEO.email);
  await openFromInbox(theo.page, account, taskId);

  await theo.page.getByRole("textbox", { name: "Ask the requester" }).fill("Which invoice does this pay?");
  await theo.page.getByRole("button", { name: "Send question" }).click();
  await expect(theo.page.getByTestId("ask-result")).toContainText("Your question was sent");
  await expect(theo.page.getByTestId("questions")).toContainText("Theo Treasury asked: Which invoice does this pay?");
  await expect(theo.page.getByTestId("questions")).toContainText("Waiting for the agent to answer.");

  // The agent sees the question on its next poll and answers it; untrusted text stays text.
  const waiting = await taskReaching(request, OPS_BOT, taskId, ["input_required"]);
  const [key] = Object.keys(waiting.inputRequests);
  expect(JSON.stringify(waiting.inputRequests[key])).toContain("Which invoice does this pay?");
  const answer = "INV-2026-0042 <a href='https://evil.example'>details</a>";
  await mcp(request, OPS_BOT, "tasks/update", { taskId, inputResponses: { [key]: { action: "accept", content: { answer } } } });
  expect((await getTask(request, OPS_BOT, taskId)).status).toBe("working");

  await expect(theo.page.getByTestId("answer")).toContainText(answer, { timeout: 30_000 });
  await expect(theo.page.locator('main a[href*="evil.example"]')).toHaveCount(0);
  await expect(theo.page.getByTestId("timeline")).toContainText("Theo Treasury asked the requester a question");
  await expect(theo.page.getByTestId("timeline")).toContainText("agent ops-bot answered");
  await screenshot(theo.page, testInfo, "request-question-answered");
  await theo.context.close();
});

test("the inbox and a request work at phone width (390 px)", async ({ browser, request }, testInfo) => {
  const account = `acct-phone-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 26_000 });
  const theo = await personIn(browser, testInfo, THEO.email, { width: 390 });
  await theo.page.goto(`/inbox?q=${account}`);
  await expect(theo.page.getByTestId("inbox-item").filter({ hasText: account })).toBeVisible();
  const noSideScroll = () => theo.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);
  expect(await noSideScroll()).toBe(true);
  await screenshot(theo.page, testInfo, "inbox-390px");
  await openFromInbox(theo.page, account, taskId);
  await expect(theo.page.getByRole("button", { name: "Approve" })).toBeVisible();
  expect(await noSideScroll()).toBe(true);
  await screenshot(theo.page, testInfo, "request-390px");
  await expectAccessible(theo.page, testInfo, "request-390px");
  await theo.context.close();
});
