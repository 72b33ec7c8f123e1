/**
 * Out of office in a real browser: Sid, who reviews for sre and treasury, delegates to Sasha (sre) on his profile
 * page; while the delegation is active Sasha finds a treasury transfer in her inbox and approves it as herself, the
 * timeline saying whom she stands in for. Sid ends the delegation from his profile. The spec gives Sid treasury
 * through the admin console first and takes it back at the end (specs run one at a time).
 */
import { expect, test, type Browser, type TestInfo } from "@playwright/test";
import { ADMIN, OPS_BOT, expectAccessible, gatedCall, getTask, personIn, ready, screenshot, unique, user } from "./support";

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
