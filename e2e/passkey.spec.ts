/**
 * Passkey-verified approvals in a real browser with Chromium's virtual authenticator: a reviewer registers a
 * passkey on the profile page; on a request whose rule requires a passkey, an approval without the passkey step is
 * refused, an assertion made for another request is refused, and the right one is accepted and executes the call.
 *
 * WebAuthn refuses an IP address as RP ID, so the browser pages run on http://localhost:<port of BASE_URL>. The
 * passkey rule is a Cedar policy this spec appends in the advanced editor for one wire amount (USD 12,345.67) that no
 * other spec uses, so what other specs see does not change.
 */
import { expect, test, type Browser, type BrowserContext, type CDPSession, type Page } from "@playwright/test";
import { ADMIN, OPS_BOT, TARA, gatedCall, openFromInbox, ready, screenshot, signIn, taskReaching, unique } from "./support";

const AMOUNT = 12_345.67;

function localhostBase(): string {
  const u = new URL(process.env.BASE_URL ?? "http://localhost:3000");
  u.hostname = "localhost";
  return u.origin;
}

async function personOnLocalhost(browser: Browser, email: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: localhostBase() });
  const page = await context.newPage();
  await signIn(page, email);
  return { context, page };
}

/** Chromium's virtual platform authenticator: resident keys, user verification that always succeeds. */
async function virtualAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
  return { cdp, authenticatorId };
}

/** The admin appends a passkey rule for the one amount this spec uses (once per server). */
async function ensurePasskeyRule(browser: Browser): Promise<void> {
  const admin = await personOnLocalhost(browser, ADMIN.email);
  const page = admin.page;
  await page.goto("/admin/policy/advanced");
  await ready(page);
  await expect(page.getByTestId("check-state")).toHaveText("The draft compiles.");
  const area = page.getByTestId("cedar-text");
  const text = await area.inputValue();
  if (!text.includes("resource.amount_cents == 1234567")) {
    await area.fill(
      `${text.trimEnd()}\n\n@id("wire-passkey-${unique()}")\n@reason("This transfer needs a treasury approval confirmed with a passkey.")\n@approvers("treasury")\n@quorum("1")\n@passkey("required")\nforbid (principal, action == Action::"wire_transfer", resource)\nwhen { resource.amount_cents == 1234567 };\n`,
    );
    await expect(page.getByTestId("check-state")).toHaveText("The draft compiles.");
    const save = page.getByRole("button", { name: /^Save as version \d+$/ });
    const version = Number((await save.textContent())!.match(/(\d+)/)![1]);
    await save.click();
    await expect(page.getByTestId("document-saved")).toHaveText(`Saved as version ${version}.`);
  }
  await admin.context.close();
}

test("an approval that needs a passkey: refused without it, refused with one made for another request, accepted with the right one", async ({ browser, request }, testInfo) => {
  await ensurePasskeyRule(browser);
  const run = unique();
  const account = `acct-pk-a-${run}`;
  const otherAccount = `acct-pk-b-${run}`;
  const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: AMOUNT });
  const otherTask = await gatedCall(request, OPS_BOT, "wire_transfer", { to: otherAccount, amount: AMOUNT });

  const tara = await personOnLocalhost(browser, TARA.email);
  const page = tara.page;
  const { cdp, authenticatorId } = await virtualAuthenticator(page);
  const approve = page.getByRole("button", { name: /^Approve/ });

  // Before registering: the request says a passkey is needed and where to register one.
  const otherId = await openFromInbox(page, otherAccount, otherTask);
  await expect(page.getByTestId("passkey-needed")).toContainText("register a passkey on your profile page first");
  await expect(approve).toBeDisabled();
  const requestId = await openFromInbox(page, account, taskId);

  // Register a passkey on the profile page.
  await page.goto("/profile");
  await ready(page);
  await expect(page.getByTestId("no-passkeys")).toBeVisible();
  await page.getByLabel("Name", { exact: true }).fill("Virtual key");
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByTestId("passkey-message")).toHaveText("Passkey added.");
  await expect(page.getByTestId("passkey-list")).toContainText("Virtual key");
  await expect(page.getByTestId("passkey-list")).toContainText("never used");
  expect((await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials).toHaveLength(1);
  await screenshot(page, testInfo, "profile-passkeys");

  await page.goto(`/requests/${requestId}`);
  await ready(page);
  await expect(page.getByTestId("passkey-needed")).toContainText("This approval needs your passkey");

  // 1. Without the passkey step (a plain submit of the form, as a tampered page would send): refused.
  await page.evaluate(() => {
    const form = document.querySelector('form[aria-label="Decide this request"]')!;
    const b = document.createElement("button");
    b.type = "submit";
    b.name = "decision";
    b.value = "approve";
    b.textContent = "Plain approve";
    form.appendChild(b);
  });
  await page.getByRole("button", { name: "Plain approve" }).click();
  await expect(page.getByTestId("decision-error")).toHaveText("This approval needs your passkey. Confirm with your passkey, then approve.");

  // 2. A passkey assertion made for the other request (the challenge is asked for the other request's id): refused.
  let swapped = false;
  await page.route(`**/requests/${requestId}`, async (route) => {
    const body = route.request().postData();
    if (!swapped && route.request().method() === "POST" && body === JSON.stringify([requestId])) {
      swapped = true;
      return route.continue({ postData: JSON.stringify([otherId]) });
    }
    return route.continue();
  });
  await approve.click();
  await expect(page.getByTestId("decision-error")).toHaveText(/not for this request/);
  expect(swapped).toBe(true);
  await page.unroute(`**/requests/${requestId}`);

  // 3. The right assertion: accepted; the transfer runs.
  await approve.click();
  await expect(page.getByTestId("decision-result")).toContainText(/Approved/);
  await page.reload();
  await ready(page);
  await expect(page.getByText("Tara Treasury approved, confirmed with a passkey")).toBeVisible();
  const done = await taskReaching(request, OPS_BOT, taskId);
  expect(done.status).toBe("completed");
  await screenshot(page, testInfo, "passkey-approved");

  // The passkey shows its last use; the other request is still pending.
  await page.goto("/profile");
  await ready(page);
  await expect(page.getByTestId("passkey-list")).toContainText("last used");
  const other = await taskReaching(request, OPS_BOT, otherTask, ["working"]);
  expect(other.status).toBe("working");

  // Removing the passkey: the profile lists none again.
  await page.getByRole("button", { name: "Remove passkey Virtual key" }).click();
  await expect(page.getByTestId("no-passkeys")).toBeVisible();
  await tara.context.close();
});
