/**
 * Measured: how many clicks and page loads it takes a reviewer to go from the notification to a recorded decision.
 * The notification is either the email's link (it opens the request page) or the inbox (the reviewer opens it and
 * picks the request). Counted for a single-approver refund and a two-approver transfer; the target for a
 * single-approver request from the inbox is at most 2 clicks and 1 page load. The counts are printed.
 */
import { expect, test, type Locator, type Page } from "@playwright/test";
import { LENA, OPS_BOT, SUPPORT_BOT, TARA, THEO, gatedCall, personIn, ready, taskReaching, unique, user } from "./support";

type Count = { clicks: number; loads: number; typed: number };

/** Counts full page loads of `page` from now on, and the clicks and typed fields made through the returned helpers. */
function measure(page: Page) {
  const count: Count = { clicks: 0, loads: 0, typed: 0 };
  page.on("load", () => count.loads++);
  return {
    count,
    click: async (target: Locator) => {
      count.clicks++;
      await target.click();
    },
    type: async (target: Locator, text: string) => {
      count.typed++;
      await target.fill(text);
    },
  };
}

const approve = (page: Page) => page.getByRole("button", { name: /^Approve/ });
const typedConfirmation = (page: Page) => page.getByLabel(/High-risk request: type/);

function report(what: string, c: Count): string {
  const line = `measured: ${what}: ${c.clicks} click${c.clicks === 1 ? "" : "s"}, ${c.loads} page load${c.loads === 1 ? "" : "s"}${c.typed ? `, ${c.typed} typed confirmation` : ""}`;
  console.log(line);
  return line;
}

/** The request id of the newest inbox entry matching `q`, as the reviewer's inbox API lists it (the email's link names it). */
async function requestIdFor(page: Page, q: string): Promise<string> {
  let id = "";
  await expect
    .poll(async () => {
      const res = await page.request.get(`/api/inbox?q=${encodeURIComponent(q)}`);
      const body = (await res.json()) as { items?: { id: string }[] };
      return (id = body.items?.[0]?.id ?? "");
    })
    .toMatch(/^[0-9a-f-]{36}$/);
  return id;
}

test("a single-approver refund: from the inbox at most 2 clicks and 1 page load; from the email's link fewer", async ({ browser, request }, testInfo) => {
  // A refund above the EUR 150.00 limit on O-4410 (EUR 520.00); told apart from others by its cents. The second
  // refund comes after it and is small: it is held because the order's refunds then total more than EUR 150.00. (Small,
  // so that the order keeps enough for the specs after this one.)
  const fromInbox = (15_000 + Math.floor(Math.random() * 99) + 1) / 100;
  const fromEmail = (100 + Math.floor(Math.random() * 99) + 1) / 100;
  const inboxTask = await gatedCall(request, SUPPORT_BOT, "issue_refund", { order_id: "O-4410", amount: fromInbox, reason: `measured ${unique()}` });
  const lines: string[] = [];

  // From the inbox: Lena opens it (1 page load), picks the request (1 click), approves (1 click).
  const lena = await personIn(browser, testInfo, LENA.email);
  await lena.page.goto("about:blank");
  const m = measure(lena.page);
  await lena.page.goto("/inbox");
  await ready(lena.page);
  await m.click(lena.page.getByTestId("inbox-item").filter({ hasText: fromInbox.toFixed(2) }).first());
  await expect(lena.page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
  await expect(lena.page.getByText(inboxTask)).toBeAttached(); // among the folded ids
  await ready(lena.page);
  await m.click(approve(lena.page));
  await expect(lena.page.getByTestId("decision-result")).toContainText(/Approved/);
  expect((await taskReaching(request, SUPPORT_BOT, inboxTask)).status).toBe("completed");
  lines.push(report("single-approver refund, from the inbox", m.count));
  expect(m.count.clicks, "clicks from the inbox to a recorded decision").toBeLessThanOrEqual(2);
  expect(m.count.loads, "page loads from the inbox to a recorded decision").toBeLessThanOrEqual(1);
  expect(m.count.typed).toBe(0);

  // From the email's link (/requests/<id>): Sam, the other support lead, opens it (1 page load) and approves (1 click).
  const emailTask = await gatedCall(request, SUPPORT_BOT, "issue_refund", { order_id: "O-4410", amount: fromEmail, reason: `measured ${unique()}` });
  const sam = await personIn(browser, testInfo, user("sam.lead@countersign.test").email);
  const link = `/requests/${await requestIdFor(sam.page, fromEmail.toFixed(2))}`;
  await sam.page.goto("about:blank");
  const e = measure(sam.page);
  await sam.page.goto(link);
  await expect(sam.page.getByText(emailTask)).toBeAttached(); // among the folded ids
  await ready(sam.page);
  await e.click(approve(sam.page));
  await expect(sam.page.getByTestId("decision-result")).toContainText(/Approved/);
  expect((await taskReaching(request, SUPPORT_BOT, emailTask)).status).toBe("completed");
  lines.push(report("single-approver refund, from the email's link", e.count));
  expect(e.count.clicks).toBeLessThanOrEqual(1);
  expect(e.count.loads).toBeLessThanOrEqual(1);

  await testInfo.attach("measured", { body: lines.join("\n"), contentType: "text/plain" });
  await lena.context.close();
  await sam.context.close();
});

test("a two-approver transfer: each approver's clicks and page loads, from the email's link and from the inbox", async ({ browser, request }, testInfo) => {
  const account = `acct-measured-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 30_000 });
  const lines: string[] = [];

  // The first approver, Tara, from the email's link.
  const tara = await personIn(browser, testInfo, TARA.email);
  const link = `/requests/${await requestIdFor(tara.page, account)}`;
  await tara.page.goto("about:blank");
  const first = measure(tara.page);
  await tara.page.goto(link);
  await expect(tara.page.getByText(taskId)).toBeAttached(); // among the folded ids
  await ready(tara.page);
  if (await typedConfirmation(tara.page).isVisible()) await first.type(typedConfirmation(tara.page), "30000");
  await first.click(approve(tara.page));
  await expect(tara.page.getByTestId("decision-result")).toContainText(/recorded/);
  lines.push(report("two-approver transfer, first approval, from the email's link", first.count));

  // The second approver, Theo, from the inbox: his approval completes the quorum and the transfer runs.
  const theo = await personIn(browser, testInfo, THEO.email);
  await theo.page.goto("about:blank");
  const second = measure(theo.page);
  await theo.page.goto("/inbox");
  await ready(theo.page);
  await second.click(theo.page.getByTestId("inbox-item").filter({ hasText: account }).first());
  await expect(theo.page.getByText(taskId)).toBeAttached(); // among the folded ids
  await ready(theo.page);
  if (await typedConfirmation(theo.page).isVisible()) await second.type(typedConfirmation(theo.page), "30000");
  await second.click(approve(theo.page));
  await expect(theo.page.getByTestId("decision-result")).toContainText(/Approved/);
  expect((await taskReaching(request, OPS_BOT, taskId)).status).toBe("completed");
  lines.push(report("two-approver transfer, final approval, from the inbox", second.count));

  for (const c of [first.count, second.count]) {
    expect(c.clicks).toBeLessThanOrEqual(2);
    expect(c.loads).toBeLessThanOrEqual(1);
  }
  await testInfo.attach("measured", { body: lines.join("\n"), contentType: "text/plain" });
  await tara.context.close();
  await theo.context.close();
});
