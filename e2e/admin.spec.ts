/**
 * The admin console end to end: a policy change (with preview and versioning) takes effect on the next call;
 * revoking an agent's token refuses its next request; the audit trail exports as CSV and JSON Lines and both
 * downloads verify as an unbroken hash chain; webhooks register with a one-time secret and log deliveries.
 */
import fs from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { GENESIS, eventHash } from "../lib/audit/append";
import {
  ADMIN,
  DISPOSITION_KEY,
  OPS_BOT,
  OTTO,
  SUPPORT_BOT,
  callTool,
  createAgentViaAdmin,
  expectAccessible,
  gatedCall,
  getTask,
  mcp,
  mcpRaw,
  personIn,
  ready,
  screenshot,
  unique,
} from "./support";

/** Saves the refund rule's threshold (money, e.g. "EUR 150.00") through the policy page; returns the version it was saved as. */
async function saveRefundThreshold(page: Page, money: string): Promise<number> {
  await page.goto("/admin/policy");
  await ready(page);
  const card = page.getByTestId("rule-refund-over-limit");
  await card.getByText("Edit refund-over-limit").click();
  await card.getByLabel("Threshold value").fill(money);
  await card.getByRole("button", { name: /^Save as v\d+$/ }).click();
  const saved = card.getByTestId("rule-saved");
  await expect(saved).toContainText(/Saved as refund-over-limit v\d+/);
  return Number((await saved.textContent())!.match(/v(\d+)/)![1]);
}

test("an admin raises the refund threshold and the next call for the same amount executes at once", async ({ browser, request }, testInfo) => {
  const run = unique();
  // EUR 155.00 from order O-4410 (EUR 520.00) is above the seeded EUR 150.00 limit: the call waits for approval.
  const before = await gatedCall(request, SUPPORT_BOT, "issue_refund", { order_id: "O-4410", amount: 155, reason: `before ${run}` });

  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  await page.goto("/admin/policy");
  await ready(page);
  const card = page.getByTestId("rule-refund-over-limit");
  const original = (await card.getByTestId("rule-current-version").textContent())!.trim();
  await card.getByText("Edit refund-over-limit").click();
  const threshold = card.getByLabel("Threshold value");
  // Money is shown as money: the seeded limit is 150.00 (minor units 15000), saved back with its currency.
  await expect(threshold).toHaveValue(/^(EUR )?150\.00$/);
  const originalValue = "EUR 150.00";

  // Validation: a threshold that is not money is refused, naming the field and why.
  await threshold.fill("lots");
  await card.getByRole("button", { name: /^Save as v\d+$/ }).click();
  await expect(card.getByRole("alert")).toContainText('Threshold value: "lots" is not an amount');
  await expect(threshold).toHaveAttribute("aria-invalid", "true");

  // Preview: for these arguments, the draft would let the call run at once; the current version would not.
  await threshold.fill("EUR 160.00");
  await expect(card.getByText(/^= EUR 160\.00\. A call in another currency always matches/)).toBeVisible();
  await card.getByLabel("Arguments for issue_refund (JSON)").fill('{"order_id":"O-4410","amount":155}');
  await card.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(card.getByTestId("draft-decision")).toHaveText(/^Runs at once/);
  await expect(card.getByTestId("rule-preview")).toContainText("Needs 1 approval from support-leads");
  await screenshot(page, testInfo, "policy-preview");
  await expectAccessible(page, testInfo, "policy");

  await card.getByRole("button", { name: /^Save as v\d+$/ }).click();
  await expect(card.getByTestId("rule-saved")).toContainText(/Saved as refund-over-limit v\d+/);
  const raisedVersion = Number((await card.getByTestId("rule-saved").textContent())!.match(/v(\d+)/)![1]);
  await expect(card.getByTestId("rule-current-version")).toHaveText(`refund-over-limit v${raisedVersion}`);

  try {
    // The earlier task keeps the version it was decided under. It is withdrawn here: while it waits, its refund
    // counts toward the order's refund total (the demo policy's per-order window), which would gate the next one.
    expect((await getTask(request, SUPPORT_BOT, before)).status).toBe("working");
    await mcp(request, SUPPORT_BOT, "tasks/cancel", { taskId: before });
    // The next call for the same amount runs at once: no task, the refund is issued.
    const after = await callTool(request, SUPPORT_BOT, "issue_refund", { order_id: "O-4410", amount: 155, reason: `after ${run}` });
    expect(after.resultType).not.toBe("task");
    expect(after.isError).toBe(false);
    expect(after.content[0].text).toContain("EUR 155.00");
    expect(after._meta?.[DISPOSITION_KEY]).toBeUndefined();

    // Previous versions stay readable.
    await page.goto("/admin/policy/refund-over-limit");
    await expect(page.getByTestId("rule-version").first()).toContainText(`v${raisedVersion}`);
    await expect(page.getByTestId("rule-version").filter({ hasText: original.replace("refund-over-limit ", "") }).first()).toContainText("retired");
    await screenshot(page, testInfo, "policy-versions");
  } finally {
    // Put the limit back (as a further version) so no other test depends on this one's change.
    await saveRefundThreshold(page, originalValue);
    await admin.context.close();
  }
});

test("an admin revokes an agent's token: its next call gets 401", async ({ browser, request }, testInfo) => {
  const name = `revoke-me-${unique()}`;
  const token = await createAgentViaAdmin(browser, testInfo, name, OTTO.email);
  const ok = await mcpRaw(request, token, "tools/list");
  expect(ok.status, ok.text).toBe(200);
  const pendingTask = await gatedCall(request, token, "wire_transfer", { to: `acct-${name}`, amount: 30_000 });

  const admin = await personIn(browser, testInfo, ADMIN.email);
  await admin.page.goto("/admin/people");
  await ready(admin.page);
  // The token was shown once, at creation; the list only ever shows its prefix.
  await expect(admin.page.getByText(token)).toHaveCount(0);
  const row = admin.page.getByTestId(`agent-${name}`);
  await expect(row).toContainText("active");
  await expect(row).toContainText(token.slice(0, 10));
  await screenshot(admin.page, testInfo, "people");
  await expectAccessible(admin.page, testInfo, "people");
  // Revoking asks first, and says what it ends: the one pending request of this agent.
  await row.getByRole("button", { name: `Revoke ${name}` }).click();
  const confirm = row.getByRole("alertdialog", { name: `Revoke ${name}?` });
  await expect(confirm).toContainText("This ends 1 pending request.");
  await expect(confirm).toBeFocused();
  await expect(row).toContainText("active");
  await confirm.getByRole("button", { name: `Revoke ${name} now` }).click();
  await expect(row).toContainText("revoked");

  const refused = await mcpRaw(request, token, "tools/list");
  expect(refused.status).toBe(401);
  const again = await mcpRaw(request, token, "tasks/get", { taskId: pendingTask });
  expect(again.status).toBe(401);
  await admin.context.close();
});

test("the audit trail verifies, filters, and exports as CSV and JSON Lines that verify on their own", async ({ browser, request }, testInfo) => {
  // Make sure the trail has a decision in it.
  const account = `acct-audit-${unique()}`;
  await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 25_001 });

  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  await page.goto("/admin/audit");
  await expect(page.getByTestId("chain-status")).toContainText("The hash chain verifies");
  await screenshot(page, testInfo, "audit");
  await expectAccessible(page, testInfo, "audit");

  await page.getByLabel("Event type").selectOption("request.created");
  await page.getByRole("button", { name: "Apply" }).click();
  // The filtered page has loaded: its URL, its export links and every row say so.
  await expect(page).toHaveURL(/type=request\.created/);
  await expect(page.getByText("Export the filtered events:")).toBeVisible();
  const rows = page.getByTestId("audit-row");
  await expect(rows.first()).toBeVisible();
  await expect(rows.filter({ hasNotText: "request.created" })).toHaveCount(0);
  await ready(page);

  await page.getByRole("link", { name: "Clear" }).click();
  // Wait for the unfiltered trail before exporting: the URL, the export links, and rows of other types.
  await expect(page).toHaveURL(/\/admin\/audit$/);
  await expect(page.getByText("Export every event:")).toBeVisible();
  await expect(page.getByRole("link", { name: "JSON Lines" })).toHaveAttribute("href", "/admin/audit/export?format=jsonl");
  await expect(page.getByRole("link", { name: "CSV" })).toHaveAttribute("href", "/admin/audit/export?format=csv");
  await expect(rows.filter({ hasNotText: "request.created" }).first()).toBeVisible();

  type Row = { seq: number; at: string; type: string; actor: string; taskId: string | null; requestId: string | null; data: unknown; prevHash: string; hash: string };
  const verify = (events: Row[]) => {
    let prev = GENESIS;
    events.forEach((e, i) => {
      expect(e.prevHash, `event #${e.seq} links to the one before`).toBe(prev);
      expect(eventHash(prev, { ...e, at: new Date(e.at) }), `event #${e.seq} hash`).toBe(e.hash);
      if (i > 0) expect(e.seq).toBeGreaterThan(events[i - 1].seq);
      prev = e.hash;
    });
  };

  const [jsonl] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "JSON Lines" }).click()]);
  expect(jsonl.suggestedFilename()).toMatch(/^countersign-audit-.*\.jsonl$/);
  const lines = fs.readFileSync((await jsonl.path())!, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Row);
  expect(lines.length).toBeGreaterThan(5);
  verify(lines);
  expect(lines.some((e) => e.type === "request.created")).toBe(true);

  const [csv] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "CSV" }).click()]);
  expect(csv.suggestedFilename()).toMatch(/^countersign-audit-.*\.csv$/);
  const text = fs.readFileSync((await csv.path())!, "utf8");
  const [header, ...records] = parseCsv(text);
  expect(header).toEqual(["seq", "at", "type", "actor", "taskId", "requestId", "data", "prevHash", "hash"]);
  const fromCsv = records.map(([seq, at, type, actor, taskId, requestId, data, prevHash, hash]) => ({
    seq: Number(seq), at, type, actor, taskId: taskId || null, requestId: requestId || null, data: JSON.parse(data), prevHash, hash,
  }));
  expect(fromCsv.length).toBeGreaterThanOrEqual(lines.length);
  verify(fromCsv);
  await admin.context.close();
});

test("webhooks: register with a one-time secret, see deliveries in the log, deactivate", async ({ browser, request }, testInfo) => {
  const admin = await personIn(browser, testInfo, ADMIN.email);
  const page = admin.page;
  const url = `http://127.0.0.1:1/countersign-e2e-${unique()}`; // nothing listens on port 1: refused at once
  await page.goto("/admin/webhooks");
  await ready(page);
  await page.getByLabel("Endpoint URL").fill(url);
  await page.getByRole("button", { name: "Register endpoint" }).click();
  await expect(page.getByTestId("new-secret")).toHaveText(/^whsec_/);

  // An event after registration is queued for it and attempted by the sweeper (this endpoint never answers).
  await gatedCall(request, OPS_BOT, "wire_transfer", { to: `acct-hook-${unique()}`, amount: 25_002 });
  await expect(async () => {
    await page.reload();
    const delivery = page.getByTestId("delivery").filter({ hasText: url }).first();
    await expect(delivery).toContainText("request.created");
    await expect(delivery).toContainText("could not connect");
  }).toPass({ timeout: 30_000, intervals: [500, 1000] });
  await ready(page);
  await expect(page.getByText(/^whsec_/)).toHaveCount(0); // the secret is not shown again
  await screenshot(page, testInfo, "webhooks");
  await expectAccessible(page, testInfo, "webhooks");

  const hook = page.getByTestId("webhook").filter({ hasText: url });
  await hook.getByRole("button", { name: "Deactivate" }).click();
  await expect(hook).toContainText("inactive");
  await admin.context.close();
});

/** RFC 4180 CSV (every cell quoted by the exporter; quotes doubled). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") row.push(cell), (cell = "");
    else if (c === "\n") row.push(cell), rows.push(row), (row = []), (cell = "");
    else if (c !== "\r") cell += c;
  }
  if (cell || row.length) row.push(cell), rows.push(row);
  return rows;
}
