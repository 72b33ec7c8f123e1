/**
 * The refund approval flow end to end, through real HTTP and a real browser: an agent's call that needs a support
 * lead's approval becomes a task; a lead signs in, finds it in the inbox, decides; the agent's tasks/get sees the
 * outcome and its disposition. Runs against a server with fresh demo data (scripts/start.ts seeds it).
 */
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { DISPOSITION_KEY, LENA as lead, SUPPORT_BOT, type Json, callTool as agentCall, getTask as agentGet, ready, signIn as signInForm, taskReaching } from "./support";

// This spec acts as the support-bot agent throughout.
const callTool = (request: APIRequestContext, tool: string, args: Json) => agentCall(request, SUPPORT_BOT, tool, args);
const getTask = (request: APIRequestContext, taskId: string) => agentGet(request, SUPPORT_BOT, taskId);
/** Polls tasks/get until the task leaves `working`, then returns it. */
const settledTask = (request: APIRequestContext, taskId: string) => taskReaching(request, SUPPORT_BOT, taskId, ["input_required", "completed", "failed", "cancelled"]);

/** Signed out, the app sends you to the sign-in form; signing in lands on the inbox. */
async function signIn(page: Page, email: string): Promise<void> {
  await page.goto("/");
  await expect(page).toHaveURL(/\/login$/);
  await signInForm(page, email);
}

/** Opens the newest inbox entry for `orderId` and checks it is the request of task `taskId`. */
async function openRequest(page: Page, orderId: string, taskId: string): Promise<void> {
  const item = page.getByTestId("inbox-item").filter({ hasText: orderId }).first();
  await expect(item).toBeVisible(); // the inbox polls /api/inbox, so a fresh request shows without a reload
  await item.click();
  await expect(page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
  await expect(page.getByText(taskId)).toBeAttached(); // among the folded ids
  await ready(page);
}

test("a refund above the limit waits for a support lead's approval, then runs once (approved-executed)", async ({
  page,
  request,
}, testInfo) => {
  // (1) The agent asks; policy says a support lead must approve, so the answer is a working task.
  const created = await callTool(request, "issue_refund", { order_id: "O-2289" });
  expect(created.resultType).toBe("task");
  expect(created.status).toBe("working");
  const taskId = String(created.taskId);
  expect(taskId).not.toBe("");
  expect((await getTask(request, taskId)).status).toBe("working");

  // (2) A support lead signs in, sees the request in the inbox, opens it and approves.
  await signIn(page, lead.email);
  const item = page.getByTestId("inbox-item").filter({ hasText: "O-2289" }).first();
  await expect(item).toBeVisible();
  await expect(item).toContainText("issue_refund");
  await expect(item).toContainText("Rita Requester");
  await expect(item).toContainText("support-bot");
  await expect(item).toContainText("0 / 1");
  await page.screenshot({ path: testInfo.outputPath("inbox.png"), fullPage: true });

  await openRequest(page, "O-2289", taskId);
  await expect(page.getByRole("rowheader", { name: "order_id" })).toBeVisible();
  await expect(page.getByRole("cell", { name: "O-2289" })).toBeVisible();
  await expect(page.getByTestId("canonical-json")).toHaveText('{"order_id":"O-2289"}');
  await expect(page.getByTestId("arguments-digest")).toHaveText(/^sha256:[0-9a-f]{64}$/);
  await expect(page.getByText("matches the arguments shown")).toBeVisible();
  await expect(page.getByText("Refunds above EUR 150.00 need a support lead's approval.")).toBeVisible();
  // The rule version the request was made under (an admin test may have saved newer versions meanwhile).
  await expect(page.getByTestId("rule-version")).toHaveText(/^refund-over-limit v\d+$/);
  await page.screenshot({ path: testInfo.outputPath("request.png"), fullPage: true });

  await page.getByLabel("Comment").fill("Checked the ticket: damaged on arrival.");
  await page.getByRole("button", { name: "Approve" }).click();
  // The answer says where the call stood when the decision was recorded (it may still be running on a busy
  // machine); once the task has settled, the request's page says the refund was issued.
  await expect(page.getByTestId("decision-result")).toHaveText(/Approved — (the refund was issued|running the tool)/);

  // (3) The agent's next poll sees the completed task with the refund and its disposition.
  const done = await settledTask(request, taskId);
  await page.reload();
  await ready(page);
  await expect(page.getByTestId("request-outcome")).toContainText("Approved — the refund was issued");
  await expect(page.getByTestId("reviews")).toContainText("Checked the ticket: damaged on arrival.");
  await page.screenshot({ path: testInfo.outputPath("request-approved.png"), fullPage: true });
  expect(done.status).toBe("completed");
  expect(done.result.isError).toBe(false);
  expect(done.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
  expect(done.result.content[0].text).toContain("O-2289");

  // The request has left the inbox.
  await page.goto("/inbox");
  await ready(page);
  await expect(page.getByRole("heading", { name: /Waiting for you/ })).toBeVisible();
  await expect(page.getByTestId("inbox-item").filter({ hasText: "O-2289" })).toHaveCount(0);
});

test("a refund under the limit is issued at once, without a task or an approval", async ({ request }) => {
  const result = await callTool(request, "issue_refund", { order_id: "O-1021" });
  expect(result.resultType).not.toBe("task");
  expect(result.taskId).toBeUndefined();
  expect(result.isError).toBe(false);
  expect(result.content[0].text).toContain("O-1021");
  expect(result._meta?.[DISPOSITION_KEY]).toBeUndefined();
});

test("a support lead denies a refund: the task completes with isError and denied-not-executed", async ({
  page,
  request,
}, testInfo) => {
  const created = await callTool(request, "issue_refund", { order_id: "O-1145" });
  expect(created.resultType).toBe("task");
  expect(created.status).toBe("working");
  const taskId = String(created.taskId);

  await signIn(page, lead.email);
  await openRequest(page, "O-1145", taskId);

  // A denial needs a reason.
  await page.getByRole("button", { name: "Deny" }).click();
  await expect(page.getByText("Say why you deny this request.")).toBeVisible();

  await page.getByLabel("Comment").fill("Customer already received a replacement.");
  await page.getByRole("button", { name: "Deny" }).click();
  await expect(page.getByTestId("decision-result")).toHaveText(/Denied — the tool did not run/);
  await expect(page.getByTestId("request-outcome")).toContainText("Denied — the tool did not run");
  await page.screenshot({ path: testInfo.outputPath("request-denied.png"), fullPage: true });

  const done = await settledTask(request, taskId);
  expect(done.status).toBe("completed");
  expect(done.result.isError).toBe(true);
  expect(done.result._meta[DISPOSITION_KEY]).toBe("denied-not-executed");
});
