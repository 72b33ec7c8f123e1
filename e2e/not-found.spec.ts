/**
 * Unknown and foreign ids answer alike: 404 with the same words, so a reviewer cannot tell a request of another
 * group from one that does not exist. Unknown routes get the app's own 404 page.
 */
import { expect, test, type Page } from "@playwright/test";
import { OPS_BOT, SASHA, THEO, gatedCall, openFromInbox, personIn, unique } from "./support";

const UNKNOWN = "00000000-0000-4000-8000-000000000000";

async function visit(page: Page, path: string): Promise<{ status: number; text: string }> {
  const response = await page.goto(path);
  return { status: response!.status(), text: (await page.locator("main").innerText()).trim() };
}

test.describe("not found", () => {
  test("a request or task of another group and an unknown id both answer 404 with the same words", async ({ browser, request }, testInfo) => {
    const account = `acct-404-${unique()}`;
    const taskId = await gatedCall(request, OPS_BOT, "wire_transfer", { to: account, amount: 25_500 });
    const theo = await personIn(browser, testInfo, THEO.email);
    const requestId = await openFromInbox(theo.page, account, taskId);
    await theo.context.close();

    // Sasha (sre) may not see a treasury request.
    const sasha = await personIn(browser, testInfo, SASHA.email);
    const foreign = await visit(sasha.page, `/requests/${requestId}`);
    const unknown = await visit(sasha.page, `/requests/${UNKNOWN}`);
    const malformed = await visit(sasha.page, "/requests/not-an-id");
    expect([foreign.status, unknown.status, malformed.status]).toEqual([404, 404, 404]);
    expect(foreign.text).toContain("Request not found");
    expect(unknown.text).toBe(foreign.text);
    expect(malformed.text).toBe(foreign.text);
    expect(foreign.text).not.toContain(account);

    const foreignTask = await visit(sasha.page, `/tasks/${taskId}`);
    const unknownTask = await visit(sasha.page, `/tasks/${UNKNOWN}`);
    expect([foreignTask.status, unknownTask.status]).toEqual([404, 404]);
    expect(foreignTask.text).toContain("Task not found");
    expect(unknownTask.text).toBe(foreignTask.text);
    await sasha.context.close();
  });

  test("an unknown route gets the app's styled 404 page, signed in or not", async ({ page, browser }, testInfo) => {
    const path = `/no-such-page-${unique()}`;
    const signedOut = await visit(page, path);
    expect(signedOut.status).toBe(404);
    await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
    await expect(page.getByText("This page could not be found.")).toHaveCount(0); // not the framework's default
    await expect(page.getByRole("banner").getByRole("link", { name: "Countersign" })).toBeVisible(); // the app's header
    await expect(page).toHaveTitle(/Page not found · Countersign/);

    const sasha = await personIn(browser, testInfo, SASHA.email);
    const signedIn = await visit(sasha.page, path);
    expect(signedIn.status).toBe(404);
    await expect(sasha.page.getByRole("heading", { name: "Page not found" })).toBeVisible();
    await expect(sasha.page.getByTestId("signed-in-user")).toContainText(SASHA.name);
    await sasha.context.close();
  });
});
