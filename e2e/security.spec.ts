/**
 * Cross-site requests over real HTTP. A server action is captured as the browser sends it, then replayed with the
 * reviewer's cookies: with a forged Origin (Next.js refuses before the action runs), with no Origin (Next lets it
 * through; the action's own check refuses), and — the positive control — unchanged, which works. JSON routes refuse
 * a foreign Origin and a missing one on POST. Nothing is recorded by a refused request.
 */
import { expect, test } from "@playwright/test";
import { ADMIN, OPS_BOT, THEO, gatedCall, openFromInbox, personIn, unique } from "./support";

const EVIL = "https://evil.example";

test("server actions refuse a forged Origin and a missing Origin; the same request from the page works", async ({ browser, request }, testInfo) => {
  const account = `acct-csrf-${unique()}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 28_000 });
  const theo = await personIn(browser, testInfo, THEO.email);
  const page = theo.page;
  const requestId = await openFromInbox(page, account, taskId);

  // Capture the approve action exactly as the browser sends it, without letting it reach the server.
  let captured: { url: string; headers: Record<string, string>; body: Buffer } | null = null;
  await page.route(`**/requests/${requestId}`, async (route) => {
    const req = route.request();
    if (req.method() !== "POST") return route.continue();
    captured = { url: req.url(), headers: await req.allHeaders(), body: req.postDataBuffer() ?? Buffer.alloc(0) };
    return route.abort();
  });
  // (Theo's is the first of two approvals: no amount to type.)
  await page.getByRole("button", { name: "Approve" }).click();
  await expect.poll(() => captured).not.toBeNull();
  await page.unroute(`**/requests/${requestId}`);
  const sent = captured!;
  expect(sent.headers["next-action"]).toBeTruthy();
  expect(new URL(sent.headers.origin).host).toBe(new URL(sent.url).host);

  const replay = (origin: string | null) => {
    const headers = Object.fromEntries(Object.entries(sent.headers).filter(([k]) => !k.startsWith(":") && k !== "origin" && k !== "content-length" && k !== "cookie"));
    return page.request.post(sent.url, { headers: { ...headers, ...(origin ? { origin } : {}) }, data: sent.body, failOnStatusCode: false });
  };

  // Forged Origin: Next.js aborts the action before it runs.
  const forged = await replay(EVIL);
  expect(forged.status()).toBe(500);
  // Missing Origin: Next.js lets it through, our own check inside the action refuses it.
  const missing = await replay(null);
  expect(await missing.text()).toContain("Cross-site requests are refused");
  await page.reload();
  await expect(page.getByRole("heading", { name: "Approvals 0 of 2" })).toBeVisible();

  // Positive control: the captured request with its own Origin is accepted and records the approval.
  const same = await replay(sent.headers.origin);
  expect(same.status()).toBe(200);
  expect(await same.text()).toContain("Your approval is recorded");
  await page.reload();
  await expect(page.getByRole("heading", { name: "Approvals 1 of 2" })).toBeVisible();
  await theo.context.close();
});

test("JSON routes refuse cross-site requests", async ({ browser }, testInfo) => {
  const theo = await personIn(browser, testInfo, THEO.email);
  const inbox = (headers: Record<string, string>) => theo.page.request.get("/api/inbox", { headers, failOnStatusCode: false });
  expect((await inbox({})).status()).toBe(200);
  expect((await inbox({ origin: EVIL })).status()).toBe(403);
  expect((await inbox({ "sec-fetch-site": "cross-site" })).status()).toBe(403);
  await theo.context.close();

  const admin = await personIn(browser, testInfo, ADMIN.email);
  const draft = {
    ruleKey: "refund-over-limit", tool: "issue_refund", description: "Refunds above EUR 200", field: "amount_cents", operator: "gt", value: "20000",
    effect: "requestable", approverGroup: "support-leads", approvalsRequired: 1, requestDeadlineSec: 86400, approvalValiditySec: 3600,
    requireJustification: false, reason: "Refunds above EUR 200.00 need a support lead's approval.", active: true,
  };
  const preview = (headers: Record<string, string>) =>
    admin.page.request.post("/api/admin/policy/preview", { headers, data: { draft, arguments: { order_id: "O-4410", amount: 170 } }, failOnStatusCode: false });
  const origin = new URL(testInfo.project.use.baseURL!).origin;
  expect((await preview({ origin: EVIL })).status()).toBe(403);
  expect((await preview({})).status()).toBe(403);
  const ok = await preview({ origin });
  expect(ok.status()).toBe(200);
  expect((await ok.json()).draft.decision).toBe("allow");
  const exported = await admin.page.request.get("/admin/audit/export?format=jsonl", { headers: { origin: EVIL }, failOnStatusCode: false });
  expect(exported.status()).toBe(403);
  await admin.context.close();
});
