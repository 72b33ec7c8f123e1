/**
 * The admin console in Chromium: admins land on every group's pending requests and whom each waits on; History's
 * reviewer and date filters and the audit trail's actor filter take a name or an email, and an invalid filter says
 * so; revoking an agent and deactivating a user confirm first and say what they end; a new agent acts for nobody
 * until chosen, and its token comes with a copy button and a ready-to-paste client configuration. And the dark
 * theme, which follows the system setting.
 */
import { expect, test, type Page } from "@playwright/test";
import { ADMIN, OPS_BOT, OTTO, TARA, THEO, expectAccessible, gatedCall, mcpRaw, personIn, ready, screenshot, unique, user } from "./support";

const RITA = user("rita.requester@countersign.test");

test("admins land on every group's pending requests, with the group, the approvals still needed and who may give them", async ({ browser, request }, testInfo) => {
  const account = `acct-pending-${unique()}`;
  await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 40_000 });
  const admin = await personIn(browser, testInfo, ADMIN.email); // signing in lands on the inbox, which for an admin is this view
  const page = admin.page;
  await expect(page.getByRole("heading", { name: "Pending requests" })).toBeVisible();
  const row = page.getByTestId("pending-item").filter({ hasText: account });
  await expect(row.getByTestId("waits-on")).toContainText("treasury");
  await expect(row.getByTestId("waits-on")).toContainText("2 more approvals needed (0 of 2 given)");
  await expect(row.getByTestId("eligible")).toContainText(TARA.name);
  await expect(row.getByTestId("eligible")).toContainText(THEO.email);
  await expect(row.getByTestId("eligible")).not.toContainText("Otto");
  await expectAccessible(page, testInfo, "admin-pending");

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Pending" }).click();
  await expect(page).toHaveURL(/\/admin\/pending$/);
  await expect(page.getByTestId("pending-item").filter({ hasText: account })).toBeVisible();
  await screenshot(page, testInfo, "admin-pending");
  await admin.context.close();
});

test("History filters by reviewer (name or email) and decision day; the audit actor filter takes a name; an invalid filter says so", async ({ browser, request }, testInfo) => {
  const account = `acct-history-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 26_000 });
  const tara = await personIn(browser, testInfo, TARA.email);
  await tara.page.goto(`/inbox?q=${account}`);
  await tara.page.getByTestId("inbox-item").filter({ hasText: account }).first().click();
  await expect(tara.page.getByText(taskId)).toBeAttached(); // among the folded ids
  await ready(tara.page);
  await tara.page.getByLabel("Comment").fill("Not an account we pay.");
  await tara.page.getByRole("button", { name: "Deny" }).click();
  await expect(tara.page.getByTestId("decision-result")).toBeVisible();
  await tara.context.close();

  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  await page.goto("/history");
  await ready(page);
  await page.getByLabel("Reviewer (name or email)").fill(TARA.email.toUpperCase());
  const today = new Date().toISOString().slice(0, 10);
  await page.getByLabel("Decided from (UTC)").fill(today);
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/reviewer=/);
  const items = page.getByTestId("history-item");
  await expect(items.filter({ hasText: account })).toHaveCount(1);
  await expect(page.getByTestId("filter-problems")).toHaveCount(0);
  await expectAccessible(page, testInfo, "history-filtered");

  // By name, in the search box: the requester's email finds their requests.
  await page.goto(`/history?q=${encodeURIComponent("otto.ops@countersign")}&reviewer=${encodeURIComponent("Tara Treasury")}`);
  await expect(items.filter({ hasText: account })).toHaveCount(1);

  // Invalid filters say so, and nothing is listed as if unfiltered.
  await page.goto(`/history?reviewer=nobody%40countersign.test&from=2026-02-30&outcome=sideways`);
  const problems = page.getByTestId("filter-problems");
  await expect(problems).toContainText("No one has the email nobody@countersign.test.");
  await expect(problems).toContainText("From must be a date like 2026-03-31, not “2026-02-30”.");
  await expect(problems).toContainText("The outcome “sideways” is not valid");
  await expect(items).toHaveCount(0);
  await expectAccessible(page, testInfo, "history-invalid");

  // The audit trail: the actor by name; an unknown one is reported.
  await page.goto("/admin/audit");
  await ready(page);
  await page.getByLabel("Actor (name, email or agent)").fill("Tara Treasury");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/actor=Tara/);
  const rows = page.getByTestId("audit-row");
  await expect(rows.first()).toBeVisible();
  await expect(rows.filter({ hasNotText: "Tara Treasury" })).toHaveCount(0);
  // Times read in the admin's own zone, with how long ago, once the browser takes over (the server renders UTC).
  await expect(rows.first().locator("time[data-local]")).toHaveText(/^\d{1,2} \w{3} \d{4}, \d\d:\d\d \S+ \(.+\)$/);
  await page.goto("/admin/audit?actor=Nobody%20Here&taskId=42");
  await expect(page.getByTestId("filter-problems")).toContainText("No one and no agent is called “Nobody Here”.");
  await expect(page.getByTestId("filter-problems")).toContainText("The task id “42” is not valid");
  await expect(rows).toHaveCount(0);
  const exported = await page.request.get("/admin/audit/export?format=csv&actor=Nobody%20Here", { failOnStatusCode: false });
  expect(exported.status()).toBe(400);
  await expectAccessible(page, testInfo, "audit-invalid");
  await admin.context.close();
});

async function createAgent(page: Page, name: string, owner: { name: string; email: string }): Promise<string> {
  await page.getByLabel("Agent name").fill(name);
  await page.getByLabel("Acts for").selectOption({ label: `${owner.name} (${owner.email})` });
  await page.getByRole("button", { name: "Create agent" }).click();
  const token = (await page.getByTestId("new-token").textContent())?.trim() ?? "";
  expect(token).toMatch(/^cs_[A-Za-z0-9_-]{32,}$/);
  return token;
}

test("a new agent acts for nobody until chosen; its token has a copy button and a ready-to-paste MCP client configuration", async ({ browser, request }, testInfo) => {
  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  await admin.context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto("/admin/people");
  await ready(page);
  await expect(page.getByLabel("Acts for")).toHaveValue("");
  // Without an owner the form is not sent: the browser asks for one.
  const name = `cfg-bot-${unique()}`;
  await page.getByLabel("Agent name").fill(name);
  await page.getByRole("button", { name: "Create agent" }).click();
  await expect(page.getByLabel("Acts for")).toHaveJSProperty("validity.valueMissing", true);
  await expect(page.getByTestId("new-token")).toHaveCount(0);

  const token = await createAgent(page, name, RITA);
  await page.getByRole("button", { name: "Copy token" }).click();
  await expect(page.getByText("Copied.")).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);

  const config = JSON.parse((await page.getByTestId("client-config").textContent()) ?? "");
  const origin = new URL(testInfo.project.use.baseURL!).origin;
  expect(config).toEqual({ mcpServers: { [`countersign-${name}`]: { type: "http", url: `${origin}/mcp`, headers: { Authorization: `Bearer ${token}` } } } });
  await page.getByRole("button", { name: "Copy configuration" }).click();
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(JSON.stringify(config, null, 2));
  // What the configuration says works: the token reaches /mcp.
  expect((await mcpRaw(request, token, "tools/list")).status).toBe(200);
  await expectAccessible(page, testInfo, "people-new-token");
  await admin.context.close();
});

test("revoking an agent and deactivating a user confirm first and say how many pending requests they end", async ({ browser, request }, testInfo) => {
  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  await page.goto("/admin/people");
  await ready(page);
  const name = `ends-bot-${unique()}`;
  const token = await createAgent(page, name, OTTO);
  for (const n of [1, 2]) await gatedCall(request, token, "wire_transfer", { to: `acct-${name}-${n}`, amount: 30_000 + n });

  await page.reload();
  await ready(page);

  // Deactivating Otto would end the pending requests of both his agents (this one's two and ops-bot's): the form
  // asks and counts them. Cancelled here (other specs act through ops-bot), it changes nothing.
  const otto = page.getByTestId(`user-${OTTO.email}`);
  await otto.getByLabel("Active").uncheck();
  await otto.getByRole("button", { name: "Save" }).click();
  const ask = otto.getByRole("alertdialog", { name: `Deactivate ${OTTO.name}?` });
  const ends = Number((await ask.textContent())?.match(/This ends (\d+) pending requests\./)?.[1]);
  expect(ends).toBeGreaterThanOrEqual(2);
  await ask.getByRole("button", { name: "Cancel" }).click();
  await expect(ask).toHaveCount(0);
  await page.reload();
  await ready(page);
  await expect(page.getByTestId(`user-${OTTO.email}`).getByLabel("Active")).toBeChecked();

  const row = page.getByTestId(`agent-${name}`);
  await row.getByRole("button", { name: `Revoke ${name}` }).click();
  const confirm = row.getByRole("alertdialog", { name: `Revoke ${name}?` });
  await expect(confirm).toContainText("This ends 2 pending requests.");
  await expect(confirm).toBeFocused();
  await expectAccessible(page, testInfo, "people-confirm-revoke");
  // Cancel changes nothing.
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(confirm).toHaveCount(0);
  expect((await mcpRaw(request, token, "tools/list")).status).toBe(200);
  await row.getByRole("button", { name: `Revoke ${name}` }).click();
  await row.getByRole("alertdialog").getByRole("button", { name: `Revoke ${name} now` }).click();
  await expect(row).toContainText("revoked");
  expect((await mcpRaw(request, token, "tools/list")).status).toBe(401);
  await admin.context.close();
});

test("the dark theme follows the system setting on every page, and passes the same accessibility checks", async ({ browser, request }, testInfo) => {
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: `acct-dark-${unique()}`, amount: 27_000 });
  const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL, colorScheme: "dark" });
  const page = await context.newPage();
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.goto("/login");
  await ready(page);
  const dark = await background();
  await expectAccessible(page, testInfo, "dark-login");
  await page.emulateMedia({ colorScheme: "light" });
  expect(await background()).not.toBe(dark);
  await page.emulateMedia({ colorScheme: "dark" });
  await context.close();

  const tara = await personIn(browser, testInfo, TARA.email);
  await tara.page.emulateMedia({ colorScheme: "dark" });
  await tara.page.goto(`/tasks/${taskId}`);
  await expect(tara.page).toHaveURL(/\/requests\//);
  expect(await tara.page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(dark);
  await screenshot(tara.page, testInfo, "request-dark");
  for (const path of ["/inbox", "/history", "/profile"]) {
    await tara.page.goto(path);
    await ready(tara.page);
    await expectAccessible(tara.page, testInfo, `dark-${path.slice(1)}`);
  }
  await tara.context.close();

  const admin = await personIn(browser, testInfo, ADMIN.email);
  await admin.page.emulateMedia({ colorScheme: "dark" });
  for (const path of ["/admin/pending", "/admin/policy", "/admin/policy/advanced", "/admin/policy/file", "/admin/people", "/admin/audit", "/admin/webhooks", "/admin/servers"]) {
    await admin.page.goto(path);
    await ready(admin.page);
    await expectAccessible(admin.page, testInfo, `dark-${path.slice(1).replace(/\//g, "-")}`);
  }
  await admin.context.close();
});
