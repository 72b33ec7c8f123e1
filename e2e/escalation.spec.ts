/**
 * Out of office in a real browser: Sid, who reviews for sre and treasury, delegates to Sasha (sre) on his profile
 * page; while the delegation is active Sasha finds a treasury transfer in her inbox and approves it as herself, the
 * timeline saying whom she stands in for. Sid ends the delegation from his profile. The spec gives Sid treasury
 * through the admin console first and takes it back at the end (specs run one at a time). And escalation: the
 * production-deploy rule given a one-minute escalation to support-leads, a deploy nobody decides appears in Lena's
 * inbox marked "escalated to support-leads" once the sweeper escalates it, and her approval runs it.
 */
import { expect, test, type Browser, type TestInfo } from "@playwright/test";
import { ADMIN, DISPOSITION_KEY, LENA, OPS_BOT, expectAccessible, gatedCall, getTask, openFromInbox, personIn, ready, screenshot, taskReaching, unique, user } from "./support";

const SID = user("sid.sre@countersign.test");
const SASHA = user("sasha.sre@countersign.test");

async function setGroups(browser: Browser, testInfo: TestInfo, email: string, groups: string): Promise<void> {
  const { context, page } = await personIn(browser, testInfo, ADMIN.email);
  await page.goto("/admin/people");
  await ready(page);
  const form = page.getByTestId(`user-${email}`);
  await form.getByLabel("Approver groups").fill(groups);
  await form.getByRole("button", { name: "Save" }).click();
  await expect(form.getByRole("status")).toBeVisible();
  await context.close();
}

test("a reviewer delegates on the profile page; the delegate decides a request of the delegator's group as themselves", async ({ browser, request }, testInfo) => {
  await setGroups(browser, testInfo, SID.email, "sre, treasury");
  try {
    // Sid delegates to Sasha, from now for a week (the form's defaults).
    const sid = await personIn(browser, testInfo, SID.email);
    await sid.page.goto("/profile");
    await ready(sid.page);
    const away = sid.page.getByRole("region", { name: "Out of office" });
    await away.getByLabel("Delegate to").selectOption({ label: `${SASHA.name} (sre)` });
    await away.getByRole("button", { name: "Delegate" }).click();
    await expect(away.getByRole("status")).toHaveText("Your delegation is saved.");
    await expect(away.getByTestId("delegations-given")).toContainText(`Delegated to ${SASHA.name}`);
    await expectAccessible(sid.page, testInfo, "profile-delegation");
    await screenshot(sid.page, testInfo, "profile-delegation");

    // A transfer that needs two treasury approvals: Sasha (sre) now sees it and approves it as herself.
    const account = `acct-ooo-${unique()}`;
    const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 30_000 });
    const sasha = await personIn(browser, testInfo, SASHA.email);
    await sasha.page.goto("/profile");
    await expect(sasha.page.getByTestId("delegations-received")).toContainText(`You stand in for ${SID.name}`);
    await sasha.page.goto(`/inbox?q=${account}`);
    const item = sasha.page.getByTestId("inbox-item").filter({ hasText: account });
    await expect(item).toContainText("treasury");
    await item.click();
    await expect(sasha.page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
    await ready(sasha.page);
    // A typed confirmation, where the page asks for one for this approval.
    const confirm = sasha.page.getByLabel(/High-risk request: type the amount/);
    if ((await confirm.count()) > 0) await confirm.fill("30000");
    await sasha.page.getByRole("button", { name: "Approve" }).click();
    await expect(sasha.page.getByRole("heading", { name: "Approvals 1 of 2" })).toBeVisible();
    await expect(sasha.page.getByTestId("reviews")).toContainText(SASHA.name);
    await expect(sasha.page.getByTestId("timeline")).toContainText(`${SASHA.name} approved, standing in for ${SID.email}`);
    expect((await getTask(request, OPS_BOT, taskId)).status).toBe("working");
    await expectAccessible(sasha.page, testInfo, "request-delegate");
    await screenshot(sasha.page, testInfo, "request-delegate");

    // Sid ends the delegation; Sasha's profile no longer says she stands in for him.
    await sid.page.reload();
    await ready(sid.page);
    await sid.page.getByRole("button", { name: "End delegation" }).click();
    await expect(sid.page.getByTestId("delegations-given")).toHaveCount(0);
    await sasha.page.goto("/profile");
    await ready(sasha.page);
    await expect(sasha.page.getByTestId("delegations-received")).toHaveCount(0);
    await sid.context.close();
    await sasha.context.close();
  } finally {
    await setGroups(browser, testInfo, SID.email, "sre");
  }
});

/** Sets the production-deploy rule's escalation in the policy form (empty strings clear it), as an admin. */
async function setDeployEscalation(browser: Browser, testInfo: TestInfo, after: string, fallback: string): Promise<void> {
  const { context, page } = await personIn(browser, testInfo, ADMIN.email);
  await page.goto("/admin/policy");
  await ready(page);
  const card = page.getByTestId("rule-deploy-production");
  await card.getByText("Edit deploy-production").click();
  await card.getByLabel("Escalate after (seconds, optional)").fill(after);
  await card.getByLabel("Fallback group (optional)").fill(fallback);
  await card.getByRole("button", { name: /^Save as v\d+$/ }).click();
  await expect(card.getByTestId("rule-saved")).toContainText(/Saved as deploy-production v\d+/);
  await context.close();
}

test("a request still undecided at its rule's escalation time is offered to the fallback group, whose reviewer decides it", async ({ browser, request }, testInfo) => {
  // The shortest escalation a rule takes is a minute; the sweeper (every 500 ms here) escalates once it is due.
  test.setTimeout(360_000);
  await setDeployEscalation(browser, testInfo, "60", "support-leads");
  try {
    const version = `7.${Date.now() % 100_000}.${Math.floor(Math.random() * 1000)}`;
    const taskId = await gatedCall(request, OPS_BOT, "deploy_service", { service: "checkout-api", environment: "production", version });
    // Lena reviews for support-leads only. Her open inbox shows the deploy once it has escalated (it refreshes itself).
    const lena = await personIn(browser, testInfo, LENA.email);
    await lena.page.goto("/inbox");
    await ready(lena.page);
    const item = lena.page.getByTestId("inbox-item").filter({ hasText: version });
    await expect(item).toContainText("escalated to support-leads", { timeout: 240_000 });
    await expectAccessible(lena.page, testInfo, "inbox-escalated");

    await openFromInbox(lena.page, version, taskId);
    await expect(lena.page.getByTestId("timeline")).toContainText("escalated to support-leads");
    await lena.page.getByRole("button", { name: /^Approve/ }).click();
    await expect(lena.page.getByTestId("decision-result")).toContainText("Approved");
    const done = await taskReaching(request, OPS_BOT, taskId);
    expect(done.status).toBe("completed");
    expect(done.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
    await lena.context.close();
  } finally {
    await setDeployEscalation(browser, testInfo, "", "");
  }
});
