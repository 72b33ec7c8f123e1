/**
 * Four-eyes review of high-risk calls in a real browser: a wire transfer above USD 25,000 needs two distinct
 * treasury reviewers, the second (whose approval runs it) typing the amount to confirm; the second approval executes it and the agent's tasks/get
 * shows the result. The same reviewer racing two tabs is counted once; a reviewer's own request is refused even
 * when the form is tampered with. Each test makes its own transfers to accounts no other test uses.
 */
import { expect, test } from "@playwright/test";
import {
  DISPOSITION_KEY,
  OPS_BOT,
  TARA,
  THEO,
  createAgentViaAdmin,
  expectAccessible,
  gatedCall,
  getTask,
  openFromInbox,
  personIn,
  ready,
  screenshot,
  taskReaching,
  unique,
} from "./support";

test("a wire transfer above USD 25,000 needs two treasury approvals; the second executes it and tasks/get shows the result", async ({
  browser,
  request,
}, testInfo) => {
  const account = `acct-4eyes-${unique()}`;
  const amount = 31_234.56;
  const memo = '<img src=x onerror=alert(1)> see https://evil.example/pay';
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount, memo });

  // Tara, the first treasury reviewer, in her own browser context.
  const tara = await personIn(browser, testInfo, TARA.email);
  await tara.page.goto(`/inbox?q=${account}`);
  const item = tara.page.getByTestId("inbox-item").filter({ hasText: account });
  await expect(item).toContainText("wire_transfer");
  await expect(item).toContainText("Otto Ops");
  await expect(item).toContainText("ops-bot");
  await expect(item).toContainText("0 / 2");
  await expect(item).toContainText(/left/);
  await screenshot(tara.page, testInfo, "inbox");
  await expectAccessible(tara.page, testInfo, "inbox");

  const requestId = await openFromInbox(tara.page, account, taskId);
  // The exact call: arguments as a table, canonical JSON, digest; untrusted text shown as text, never markup or links.
  await expect(tara.page.getByRole("rowheader", { name: "to" })).toBeVisible();
  await expect(tara.page.getByRole("cell", { name: account })).toBeVisible();
  await expect(tara.page.getByRole("cell", { name: memo })).toBeVisible();
  await expect(tara.page.locator("main img")).toHaveCount(0);
  await expect(tara.page.locator('main a[href*="evil.example"]')).toHaveCount(0);
  await expect(tara.page.getByTestId("canonical-json")).toContainText(`"amount":${amount}`);
  await expect(tara.page.getByTestId("arguments-digest")).toHaveText(/^sha256:[0-9a-f]{64}$/);
  await expect(tara.page.getByText("matches the arguments shown")).toBeVisible();
  await expect(tara.page.getByTestId("rule-version")).toHaveText(/^wire-over-25k v\d+$/);
  await expect(tara.page.getByRole("heading", { name: "Approvals 0 of 2" })).toBeVisible();
  await expect(tara.page.getByTestId("deadline-countdown")).toHaveText(/\d+d \d\dh \d\dm left/);
  await screenshot(tara.page, testInfo, "request");
  await expectAccessible(tara.page, testInfo, "request");

  // The first of two approvals runs nothing: no amount to type, and she is told one more is needed.
  await expect(tara.page.getByTestId("consequence")).toHaveText("One more approval is needed after yours; nothing runs until then.");
  await expect(tara.page.getByLabel(/High-risk request/)).toHaveCount(0);
  await tara.page.getByLabel("Comment").fill("Invoice INV-88 matches.");
  await tara.page.getByRole("button", { name: "Approve" }).click();
  await expect(tara.page.getByTestId("decision-result")).toHaveText(/Your approval is recorded — waiting for another approver/);
  await expect(tara.page.getByRole("heading", { name: "Approvals 1 of 2" })).toBeVisible();
  expect((await getTask(request, OPS_BOT, taskId)).status).toBe("working");

  // Theo, the second reviewer, in another context: he sees Tara's approval, approves, and the transfer runs.
  const theo = await personIn(browser, testInfo, THEO.email);
  await theo.page.goto(`/inbox?q=${account}`);
  await expect(theo.page.getByTestId("inbox-item").filter({ hasText: account })).toContainText("1 / 2");
  await theo.page.goto(`/requests/${requestId}`);
  await ready(theo.page);
  await expect(theo.page.getByTestId("reviews")).toContainText("Tara Treasury");
  await expect(theo.page.getByTestId("reviews")).toContainText("Invoice INV-88 matches.");
  // His approval runs it: high-risk, so he types the amount; a wrong amount is refused by the server action.
  await expect(theo.page.getByTestId("consequence")).toContainText(`You are the final approver: approving sends USD`);
  const confirm = theo.page.getByLabel(/High-risk request: type the amount/);
  await confirm.fill("31234.65");
  await theo.page.getByRole("button", { name: "Approve" }).click();
  await expect(theo.page.getByText(/type the amount \(31234\.56\) exactly/)).toBeVisible();
  await confirm.fill("31,234.56");
  await theo.page.getByRole("button", { name: "Approve" }).click();
  await expect(theo.page.getByTestId("decision-result")).toHaveText(/Approved — the transfer was sent/);
  // What happened next shows without a reload: outcome, result, and the timeline through claim and execution.
  await expect(theo.page.getByTestId("request-outcome")).toContainText("Approved — the transfer was sent");
  await expect(theo.page.getByTestId("task-result")).toContainText(account);
  const timeline = theo.page.getByTestId("timeline");
  for (const step of ["Approval request sent to treasury", "Tara Treasury approved", "Theo Treasury approved", "execution claimed", "Executed: the tool ran once"]) {
    await expect(timeline).toContainText(step);
  }
  await expect(theo.page.getByTestId("validity-countdown")).toHaveCount(0); // settled: no clock left running
  await screenshot(theo.page, testInfo, "request-executed");

  // Tara's page caught up by itself too.
  await expect(tara.page.getByTestId("request-outcome")).toContainText("Approved — the transfer was sent", { timeout: 30_000 });

  // The agent sees the result.
  const done = await taskReaching(request, OPS_BOT, taskId);
  expect(done.status).toBe("completed");
  expect(done.result.isError).toBe(false);
  expect(done.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
  expect(done.result.content[0].text).toContain(account);

  // History lists it as executed, under the rule version it was decided by.
  await theo.page.goto(`/history?q=${account}`);
  const row = theo.page.getByTestId("history-item").filter({ hasText: account });
  await expect(row.getByTestId("outcome")).toHaveText("executed");
  await expect(row).toContainText(/wire-over-25k v\d+/);
  await screenshot(theo.page, testInfo, "history");
  await expectAccessible(theo.page, testInfo, "history");
  await tara.context.close();
  await theo.context.close();
});

test("the same reviewer racing two tabs is counted once", async ({ browser, request }, testInfo) => {
  const account = `acct-race-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 42_000 });
  const { context, page: first } = await personIn(browser, testInfo, TARA.email);
  const requestId = await openFromInbox(first, account, taskId);
  const second = await context.newPage();
  await second.goto(`/requests/${requestId}`);
  await ready(second);
  for (const p of [first, second]) {
    await expect(p.getByRole("button", { name: "Approve" })).toBeEnabled();
  }
  // Both tabs submit at the same moment.
  await Promise.all([first.getByRole("button", { name: "Approve" }).click(), second.getByRole("button", { name: "Approve" }).click()]);
  const outcomes = await Promise.all(
    [first, second].map(async (p) => {
      const done = p.getByTestId("decision-result");
      const refused = p.getByTestId("decision-error");
      await expect(done.or(refused)).toBeVisible();
      return (await done.isVisible()) ? "recorded" : ((await refused.textContent()) ?? "");
    }),
  );
  expect(outcomes.sort()).toEqual(["You have already reviewed this request.", "recorded"]);
  await first.reload();
  await expect(first.getByRole("heading", { name: "Approvals 1 of 2" })).toBeVisible();
  await expect(first.getByTestId("reviews").getByText("Tara Treasury")).toHaveCount(1);
  await expect(first.getByTestId("cannot-act")).toHaveText("You have already reviewed this request; another approver must decide.");
  expect((await getTask(request, OPS_BOT, taskId)).status).toBe("working");
  await context.close();
});

test("a reviewer cannot approve their own request, even by tampering with the form", async ({ browser, request }, testInfo) => {
  const run = unique();
  // An admin gives Tara (a treasury reviewer) an agent of her own, through the admin console.
  const taraToken = await createAgentViaAdmin(browser, testInfo, `tara-bot-${run}`, TARA.email);
  const ownAccount = `acct-self-${run}`;
  const ownTask = await gatedCall(request, taraToken, "wire_transfer", { to: ownAccount, amount: 55_000 });
  const otherAccount = `acct-other-${run}`;
  const otherTask = await gatedCall(request, OPS_BOT, "wire_transfer", { to: otherAccount, amount: 56_000 });

  const tara = await personIn(browser, testInfo, TARA.email);
  // Her own request is not in her inbox ...
  await tara.page.goto(`/inbox?q=${ownAccount}`);
  await expect(tara.page.getByTestId("inbox-empty")).toBeVisible();
  // ... and opening it by its task id offers no buttons.
  await tara.page.goto(`/tasks/${ownTask}`);
  await expect(tara.page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
  const ownRequest = tara.page.url().split("/").pop()!;
  await expect(tara.page.getByTestId("cannot-act")).toHaveText("You asked for this call, so someone else must approve it.");
  await expect(tara.page.getByRole("button", { name: "Approve" })).toHaveCount(0);

  // Tampering: she approves a request she may decide, but the form post is rewritten to name her own request.
  const otherRequest = await openFromInbox(tara.page, otherAccount, otherTask);
  await tara.page.route(`**/requests/${otherRequest}`, async (route) => {
    const req = route.request();
    if (req.method() !== "POST") return route.continue();
    const body = (req.postDataBuffer() ?? Buffer.alloc(0)).toString("latin1").split(otherRequest).join(ownRequest);
    return route.continue({ postData: Buffer.from(body, "latin1") });
  });
  // (A first approval of two needs no typed confirmation, so the four-eyes rule is what decides.)
  await tara.page.getByRole("button", { name: "Approve" }).click();
  await expect(tara.page.getByTestId("decision-error")).toHaveText("You cannot review your own request.");
  await tara.page.unroute(`**/requests/${otherRequest}`);

  // Nothing was recorded on either request.
  const theo = await personIn(browser, testInfo, THEO.email);
  await theo.page.goto(`/requests/${ownRequest}`);
  await expect(theo.page.getByRole("heading", { name: "Approvals 0 of 2" })).toBeVisible();
  await expect(theo.page.getByText("No one has reviewed this request yet.")).toBeVisible();
  await theo.page.goto(`/requests/${otherRequest}`);
  await expect(theo.page.getByRole("heading", { name: "Approvals 0 of 2" })).toBeVisible();
  expect((await getTask(request, taraToken, ownTask)).status).toBe("working");
  await tara.context.close();
  await theo.context.close();
});
