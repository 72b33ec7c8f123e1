/**
 * The policy console in a real browser: the threshold form speaks money, the advanced editor checks the Cedar text
 * on every keystroke and refuses what does not compile or breaks a test case, and a draft is previewed against the
 * calls the agents really made.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { ADMIN, OPS_BOT, SUPPORT_BOT, callTool, expectAccessible as axeReport, personIn, ready, screenshot, unique } from "./support";

/** The shared axe check (its report saved) and, on these pages, no violation of any impact. */
async function expectAccessible(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  await axeReport(page, testInfo, name);
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]).analyze();
  expect(results.violations.map((v) => `${v.id} (${v.impact})`), `${name}: accessibility violations`).toEqual([]);
}

async function editRule(page: Page, ruleKey: string) {
  await page.goto("/admin/policy");
  await ready(page);
  const card = page.getByTestId(`rule-${ruleKey}`);
  await card.getByText(`Edit ${ruleKey}`).click();
  return card;
}

async function saveThreshold(page: Page, ruleKey: string, money: string, reason?: string) {
  const card = await editRule(page, ruleKey);
  await card.getByLabel("Threshold value").fill(money);
  if (reason !== undefined) await card.getByTestId("rule-reason").fill(reason);
  await card.getByRole("button", { name: /^Save as v\d+$/ }).click();
  await expect(card.getByTestId("rule-saved")).toContainText(new RegExp(`Saved as ${ruleKey} v\\d+`));
  return card;
}

async function openAdvanced(page: Page) {
  await page.goto("/admin/policy/advanced");
  await ready(page);
  await expect(page.getByTestId("check-state")).toHaveText("The draft compiles.");
}

test("money round trip: EUR 200.00 is saved as money, the reason follows it, and the next EUR 180 refund runs at once", async ({ browser, request }, testInfo) => {
  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  try {
    const card = await editRule(page, "refund-over-limit");
    const threshold = card.getByLabel("Threshold value");
    // A wrong amount is named with its field and why.
    await threshold.fill("EUR 200.001");
    await expect(card.getByText("at most two decimals (cents), e.g. EUR 200.50")).toBeVisible();
    await expect(threshold).toHaveAttribute("aria-invalid", "true");
    await threshold.fill("EUR 200.00");
    await expect(card.getByText(/^= EUR 200\.00\. A call in another currency always matches/)).toBeVisible();
    await expect(card.getByTestId("rule-reason")).toHaveValue("Refunds above EUR 200.00 need 1 approval from support-leads.");
    await expectAccessible(page, testInfo, "policy-money");
    await card.getByRole("button", { name: /^Save as v\d+$/ }).click();
    await expect(card.getByTestId("rule-saved")).toContainText(/Saved as refund-over-limit v\d+/);

    // Stored as money: shown again as EUR 200.00 after a reload, with the reason written from it.
    const again = await editRule(page, "refund-over-limit");
    await expect(again.getByLabel("Threshold value")).toHaveValue("EUR 200.00");
    await expect(again.getByTestId("rule-reason")).toHaveValue("Refunds above EUR 200.00 need 1 approval from support-leads.");
    await expect(again).toContainText("amount_cents > EUR 200.00");

    const out = await callTool(request, SUPPORT_BOT, "issue_refund", { order_id: "O-1145", amount: 180, reason: `money ${unique()}` });
    expect(out.resultType, JSON.stringify(out)).not.toBe("task");
    expect(out.isError).toBe(false);
    expect(out.content[0].text).toContain("EUR 180.00");
    await screenshot(page, testInfo, "policy-money");
  } finally {
    // Back to the seeded rule, words included: later specs read them.
    await saveThreshold(page, "refund-over-limit", "EUR 150.00", "Refunds above EUR 150.00 need a support lead's approval.");
    await admin.context.close();
  }
});

test("the preview counts the calls really made: a lower wire threshold would have gated them", async ({ browser, request }, testInfo) => {
  const run = unique();
  const accounts = [`acct-pv1-${run}`, `acct-pv2-${run}`];
  for (const to of accounts) {
    const out = await callTool(request, OPS_BOT, "wire_transfer", { to, amount: 100 });
    expect(out.resultType, JSON.stringify(out)).not.toBe("task");
    expect(out.isError).toBe(false);
  }
  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  const card = await editRule(page, "wire-over-25k");
  await card.getByLabel("Threshold value").fill("USD 50.00");
  await card.getByRole("button", { name: "Preview against the last 30 days" }).click();
  const sentence = card.getByTestId("impact-sentence");
  await expect(sentence).toContainText(/\d+ calls? would have needed approval/);
  const n = Number((await sentence.textContent())!.match(/(\d+) calls? would have needed approval/)![1]);
  expect(n).toBeGreaterThanOrEqual(2);
  for (const to of accounts) {
    await expect(card.getByTestId("impact-change").filter({ hasText: to })).toContainText("runs at once → needs 2 approvals from treasury");
  }
  // Nothing was saved by previewing.
  await expect(card.getByTestId("rule-saved")).toHaveCount(0);
  await expectAccessible(page, testInfo, "policy-impact");
  await screenshot(page, testInfo, "policy-impact");
  await admin.context.close();
});

test("the advanced editor flags a condition on a missing argument at its line while typing, and refuses to save it", async ({ browser }, testInfo) => {
  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  await openAdvanced(page);
  await expect(page.getByTestId("form-rules-cedar")).toContainText('@id("rule:refund-over-limit")');
  const versionsBefore = await page.getByTestId("document-versions").locator("li").count();
  const area = page.getByTestId("cedar-text");
  const text = (await area.inputValue()).trimEnd();
  const probe = `@id("probe-${unique()}")\n@reason("probe")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen { context.args.no_such_argument > 1 };`;
  const next = `${text}\n\n${probe}\n`;
  const line = next.split("\n").findIndex((l) => l.includes("no_such_argument")) + 1;
  await area.fill(next);
  const problems = page.getByTestId("cedar-text-problems");
  await expect(problems).toContainText(new RegExp(`Line ${line}, column \\d+:`));
  await expect(problems).toContainText("no_such_argument");
  await expect(area).toHaveAttribute("aria-invalid", "true");
  await expect(page.locator(`[data-bad-line="${line}"]`)).toBeVisible();
  await expectAccessible(page, testInfo, "policy-advanced-problems");
  await screenshot(page, testInfo, "policy-advanced-problems");

  await page.getByRole("button", { name: /^Save as version \d+$/ }).click();
  await expect(page.getByTestId("save-refused")).toContainText("Nothing was saved.");
  await expect(page.getByTestId("save-refused")).toContainText("no_such_argument");
  await page.reload();
  await ready(page);
  await expect(page.getByTestId("document-versions").locator("li")).toHaveCount(versionsBefore);
  await expect(page.getByTestId("cedar-text")).not.toHaveValue(/no_such_argument/);
  await admin.context.close();
});

test("saving a document whose test case fails is refused, naming the test; a good edit saves a new, readable version", async ({ browser }, testInfo) => {
  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  await openAdvanced(page);
  const settings = page.getByTestId("settings-yaml");
  const yaml = await settings.inputValue();
  // The first test case ("a refund within the limit runs at once") now expects a denial the policy does not make.
  const broken = yaml.replace("expect: allow", "expect: deny");
  expect(broken).not.toBe(yaml);
  await settings.fill(broken);
  await expect(page.getByTestId("check-state")).toHaveText("The draft compiles.");
  await page.getByRole("button", { name: /^Save as version \d+$/ }).click();
  await expect(page.getByTestId("save-refused")).toContainText('the test "a refund within the limit runs at once" fails');

  // A change that keeps every test passing is saved as the next version; the old one stays readable.
  await settings.fill(yaml);
  const area = page.getByTestId("cedar-text");
  const marker = `kept-${unique()}`;
  await area.fill(`${(await area.inputValue()).trimEnd()}\n\n@id("${marker}")\n@reason("A marker policy that never holds.")\nforbid (principal, action == Action::"delete_path", resource)\nwhen { resource.path == \"${marker}-never\" };\n`);
  await expect(page.getByTestId("check-state")).toHaveText("The draft compiles.");
  const saveButton = page.getByRole("button", { name: /^Save as version \d+$/ });
  const saved = Number((await saveButton.textContent())!.match(/(\d+)/)![1]);
  await saveButton.click();
  await expect(page.getByTestId("document-saved")).toHaveText(`Saved as version ${saved}.`);
  await page.goto(`/admin/policy/advanced?version=${saved - 1}`);
  await ready(page);
  await expect(page.getByTestId("document-version")).toContainText(`Version ${saved - 1} (read-only`);
  await expect(page.getByTestId("document-version")).not.toContainText(marker);
  await expectAccessible(page, testInfo, "policy-advanced-version");
  await admin.context.close();
});

test("export -> edit -> import shows the difference and saves new versions; a broken import changes nothing", async ({ browser }, testInfo) => {
  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  await page.goto("/admin/policy/file");
  await ready(page);
  await expectAccessible(page, testInfo, "policy-file");
  const exported = await page.request.get("/api/admin/policy/file");
  expect(exported.status()).toBe(200);
  expect(exported.headers()["content-disposition"]).toContain("countersign.policy.yaml");
  const text = await exported.text();
  expect(text).toContain("key: refund-over-limit");

  // A broken file: the problem with its line; nothing changes.
  const version = async () => {
    await page.goto("/admin/policy");
    await ready(page);
    return (await page.getByTestId("rule-refund-over-limit").getByTestId("rule-current-version").textContent())!.trim();
  };
  const before = await version();
  await page.goto("/admin/policy/file");
  await ready(page);
  const area = page.getByTestId("policy-file-text");
  const broken = text.replace(/(key: refund-over-limit[\s\S]*?operator: )gt/, "$1greater");
  expect(broken).not.toBe(text);
  await area.fill(broken);
  await page.getByRole("button", { name: "Show the difference" }).click();
  await expect(page.getByTestId("policy-file-problems")).toContainText(/Line \d+, column \d+/);
  await expect(page.getByRole("button", { name: "Import as new versions" })).toHaveCount(0);
  expect(await version()).toBe(before);

  // An edited file: the difference, then the import.
  await page.goto("/admin/policy/file");
  await ready(page);
  const run = unique();
  const edited = text.replace("description: Refunds above EUR 150.00 need one support lead", `description: Refunds above EUR 150.00 need one support lead (${run})`);
  expect(edited).not.toBe(text);
  await page.getByTestId("policy-file-text").fill(edited);
  await page.getByRole("button", { name: "Show the difference" }).click();
  await expect(page.getByTestId("policy-file-diff")).toContainText("~ rule refund-over-limit (description)");
  await screenshot(page, testInfo, "policy-file-diff");
  await page.getByRole("button", { name: "Import as new versions" }).click();
  await expect(page.getByTestId("policy-file-imported")).toHaveText("Imported as new versions.");
  expect(await version()).not.toBe(before);
  await expect(page.getByTestId("rule-refund-over-limit")).toContainText(run);
  await admin.context.close();
});
